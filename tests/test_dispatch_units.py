"""Pieces of ``opendml dispatch`` in process: the operator table, JSON reading, printing, timing."""

from __future__ import annotations

import dataclasses
import io
import math
from types import SimpleNamespace

import numpy as np
import pytest

import opendml as dml
from opendml.dispatch import dispatchables, operators, timing
from opendml.dispatch import progress as progress_module
from opendml.dispatch.errors import ModelError, locate
from opendml.dispatch.formatting import format_values
from opendml.dispatch.progress import Progress
from opendml.dispatch.reader import parse_json
from opendml.dispatch.resources import parse_resource
from opendml.dispatch.timing import Stats, TimingOptions, measure, split_cold_hot
from opendml.ops import OPERATORS


def test_every_operator_is_translated() -> None:
    assert sorted(op.name for op in operators.OPERATORS) == sorted(op.schema.name for op in OPERATORS)


def test_every_operator_is_a_directml_operator_type() -> None:
    """opendml's operators are named as DirectML's DML_OPERATOR_TYPE names them (the list DxDispatch reads)."""
    from opendml.dispatch.directml_operators import DIRECTML_OPERATOR_TYPES

    assert {op.name for op in operators.OPERATORS} <= DIRECTML_OPERATOR_TYPES
    assert {"ELEMENT_WISE_ADD1", "ACTIVATION_ELU", "GEMM", "MULTIHEAD_ATTENTION1"} <= DIRECTML_OPERATOR_TYPES


@pytest.mark.parametrize(("name", "message"), [
    ("gemm", r"^type: must be a DirectML operator opendml implements \(DML_OPERATOR_GEMM "
             r"is DirectML's but not opendml's; .*got 'gemm'\.$"),
    ("ELEMENT_WISE_ADD2", r"^type: must be one of DML_OPERATOR_ELEMENT_WISE_CLIP, .*got 'ELEMENT_WISE_ADD2'\.$"),
])
def test_an_unknown_operator_type_says_whether_directml_has_it(name: str, message: str) -> None:
    with pytest.raises(ModelError, match=message):
        dispatchables.parse_operator_type(name, "type")


@pytest.mark.parametrize("spec", operators.OPERATORS, ids=lambda spec: spec.name)
def test_operator_fields_match_the_descriptions(spec: operators.OperatorSpec) -> None:
    """Every attribute of the opendml description is filled, and the tensors bind in DirectML's order."""
    attributes = {f.attribute for f in spec.fields if f.attribute is not None}
    assert attributes == {f.name for f in dataclasses.fields(spec.desc_type)}
    schema = next(op.schema for op in OPERATORS if op.schema.name == spec.name)
    assert [(f.name, f.kind) for f in spec.tensors] == [(t.name, t.kind) for t in schema.tensors]
    assert [f.optional for f in spec.tensors] == [t.optional for t in schema.tensors]


def _desc(text: str) -> dispatchables.Dispatchable:
    return dispatchables.parse_dispatchable("d", parse_json(text, "m.json"), "dispatchables.d")


def test_tensor_desc_defaults_and_long_form() -> None:
    short = _desc('{"type": "ARGMIN", "desc": {"InputTensor": {"DataType": "FLOAT16", "Sizes": [2, 3]},'
                  ' "OutputTensor": {"Type": "DML_TENSOR_TYPE_BUFFER", "Desc": {"DataType": "UINT32",'
                  ' "Sizes": [2, 1], "DimensionCount": 2, "TotalTensorSizeInBytes": 0}},'
                  ' "Axes": [1], "AxisDirection": "DML_AXIS_DIRECTION_DECREASING"}}')
    inline = _desc('{"type": "ELEMENT_WISE_THRESHOLD", "desc": {"InputTensor": {"Type": "BUFFER", "DataType": "INT8",'
                   ' "Sizes": [4], "Flags": ["NONE"]}, "OutputTensor": {"DataType": "INT8", "Sizes": [4],'
                   ' "Strides": [2], "GuaranteedBaseOffsetAlignment": 16}, "Min": 0}}')
    assert inline.desc.input_tensor == dml.TensorDesc("INT8", [4])
    assert inline.desc.output_tensor == dml.TensorDesc("INT8", [4], [2], guaranteed_base_offset_alignment=16)
    assert short.desc.input_tensor == dml.TensorDesc("FLOAT16", [2, 3])
    assert short.desc.output_tensor == dml.TensorDesc("UINT32", [2, 1])
    assert list(short.desc.axes) == [1] and short.desc.axis_direction == "DML_AXIS_DIRECTION_DECREASING"


def test_scalar_union_forms() -> None:
    """CLIP1's Min and Max: a number, or DxDispatch's object naming the member (FLOAT16 by its bits)."""
    d = _desc('{"type": "DML_OPERATOR_ELEMENT_WISE_CLIP1", "executionFlags": ["ALLOW_HALF_PRECISION_COMPUTATION"],'
              ' "desc": {"InputTensor": {"DataType": "FLOAT16", "Sizes": [1]},'
              ' "OutputTensor": {"DataType": "FLOAT16", "Sizes": [1]}, "MinMaxDataType": "FLOAT16",'
              ' "Min": {"UInt16": 15360}, "Max": "inf"}}')
    assert d.desc.min == 1.0 and d.desc.max == math.inf  # 0x3C00 is 1.0 in half precision
    assert d.execution_flags == dml.ExecutionFlags.ALLOW_HALF_PRECISION_COMPUTATION


def test_locate_follows_the_json_as_far_as_it_goes() -> None:
    error = dml.InvalidArgumentError("ARGMIN: OutputTensor.Sizes[3] must be 1 (a reduced axis); got 2.")
    desc = {"OutputTensor": {"Sizes": [1, 2]}}
    assert locate(error, "dispatchables.a.desc", desc).path == "dispatchables.a.desc.OutputTensor.Sizes"
    assert locate(error, "x", []).path == "x"


def test_reader_rejects_duplicate_keys() -> None:
    with pytest.raises(ModelError) as caught:
        parse_resource("a", parse_json('{"initialValues": [1], "initialValues": [2]}', "m"), "resources.a", None)
    assert caught.value.path == "resources.a.initialValues"


def test_float64_values_keep_double_precision() -> None:
    resource = parse_resource("a", parse_json('{"initialValuesDataType": "FLOAT64", "initialValues": [0.1]}', "m"),
                              "resources.a", None)
    assert resource.initial_values().tolist() == [0.1]


def test_sequence_wraps_in_integer_types() -> None:
    resource = parse_resource("a", parse_json(
        '{"initialValuesDataType": "UINT8", "initialValues": {"valueCount": 5, "valueStart": 250, "valueDelta": 3}}',
        "m"), "resources.a", None)
    assert resource.initial_values().tolist() == [250, 253, 0, 3, 6]
    assert resource.size_in_bytes == 8  # rounded up to 4 bytes


def test_printing_matches_cpp_streams() -> None:
    """C++ ``cout << value``: 6 significant digits, exponent past 1e6 or under 1e-4, "nan"/"inf"."""
    values = np.array([0.1, 1234567, 1e-5, 100000, -0.0, np.nan, -np.inf, 2.5e-45], dtype=np.float32)
    assert format_values(values, dml.DataType.FLOAT32) == "0.1, 1.23457e+06, 1e-05, 100000, -0, nan, -inf, 2.8026e-45"
    assert format_values(np.array([0.1], np.float16), dml.DataType.FLOAT16) == "0.0999756"
    assert format_values(np.array([-128, 255], np.int16), dml.DataType.INT16) == "-128, 255"
    assert format_values(np.array([2**64 - 1], np.uint64), dml.DataType.UINT64) == "18446744073709551615"


def test_cold_and_hot_samples() -> None:
    assert split_cold_hot([5.0, 1.0, 2.0, 3.0], 2) == ([5.0, 1.0], [2.0, 3.0])
    assert split_cold_hot([5.0, 1.0], 4) == ([5.0], [1.0])  # at least one hot sample
    assert Stats.of([3.0, 1.0, 2.0]) == Stats(3, 2.0, 1.0, 2.0, 3.0)


def test_measure_times_one_list_per_iteration_and_shows_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    """An iteration executes one list of ``repeat`` dispatches: a sample is its time over ``repeat``."""
    clock = [0.0]
    monkeypatch.setattr(timing, "time", SimpleNamespace(perf_counter=lambda: clock[0]))  # the timer's clock only
    runs = []

    def iteration() -> None:  # a list of 3 dispatches taking 6 ms in all
        runs.append(1)
        clock[0] += 0.006

    monkeypatch.setattr(progress_module, "_tqdm", lambda: None)  # the bar of its own (tqdm's: the test below)
    stream = io.StringIO()
    samples = measure(iteration, TimingOptions(iterations=4, repeat=3), use_cuda=False,
                      progress=Progress("Dispatch 'x'", stream, enabled=True, delay=0.0))
    assert len(runs) == 4 and samples.gpu == []
    assert samples.cpu == pytest.approx([2.0] * 4)  # milliseconds per dispatch
    drawn = stream.getvalue()
    assert "Dispatch 'x' [" in drawn and drawn.endswith("\r\033[K")  # drawn, then erased


def test_progress_is_drawn_by_tqdm_where_installed() -> None:
    pytest.importorskip("tqdm")
    stream = io.StringIO()
    progress = Progress("Dispatch 'x'", stream, enabled=True, delay=0.0, interval=0.0)
    progress.update(0.5, "2 iterations")
    drawn = stream.getvalue()
    assert "Dispatch 'x'" in drawn and " 50%, 2 iterations [" in drawn  # label, percentage, text, times
    progress.close()
    erased = stream.getvalue()[len(drawn):]
    assert erased.startswith("\r") and not erased.strip()  # the line blanked (leave=False)


@pytest.mark.parametrize("tqdm_installed", [True, False])
def test_progress_is_silent_off_a_terminal_and_before_its_delay(tqdm_installed: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if tqdm_installed:
        pytest.importorskip("tqdm")
    else:
        monkeypatch.setattr(progress_module, "_tqdm", lambda: None)
    stream = io.StringIO()  # not a terminal
    progress = Progress("Dispatch 'x'", stream, delay=0.0)
    progress.update(0.5, "1 iterations")
    progress.close()
    assert stream.getvalue() == ""
    stream = io.StringIO()
    progress = Progress("Dispatch 'x'", stream, enabled=True, delay=60.0)  # a loop shorter than the delay
    progress.update(1.0, "1 iterations")
    progress.close()
    assert stream.getvalue() == ""
