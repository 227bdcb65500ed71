"""Every operator reaches every front end; a declared one (``ops.DECLARED``) through nothing but its declaration.

Each declared operator runs once through each front end (the functional API on NumPy and Dask arrays,
``opendml.compile``, the graph builder, ``opendml dispatch`` from JSON, ``opendml support``) on edge values,
against the independent oracle (tests/elementwise_oracle.py, through test_kernel_specs' EXPECTED). All the
operators run one FLOAT32 [2, 8] tensor, so the Numba kernels are one per operator.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import pickle
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import opendml as dml
from opendml import graph as g
from opendml.cli import main
from opendml.dispatch import operators as dispatch_operators
from opendml.ops import BY_NAME, DECLARED, OPERATORS
from opendml.ops.definition import REQUIRED, Field, OperatorDefinition
from opendml.support import find_schema
from tests import elementwise_oracle as oracle
from tests.helpers import edge_values
from tests.test_kernel_specs import DESCRIPTIONS, EXPECTED, UNARY_FIELDS

# The operators without front ends derived from a declaration, and their functions (CLIP1 is what clip runs on
# integers, by CLIP's adapter).
WRITTEN = {"ELEMENT_WISE_CLIP1": "clip", "ELEMENT_WISE_DEQUANTIZE_LINEAR": "dequantize_linear",
           "ELEMENT_WISE_QUANTIZE_LINEAR": "quantize_linear", "ARGMIN": "argmin", "ARGMAX": "argmax",
           "QUANTIZE": "quantize", "DEQUANTIZE": "dequantize",
           "REDUCE": "reduce", "CAST": "cast", "TOP_K": "top_k", "TOP_K1": "top_k",
           "ELEMENT_WISE_CLIP_GRAD1": "clip_grad", "ELEMENT_WISE_QUANTIZED_LINEAR_ADD": "quantized_linear_add",
           "ACTIVATION_SOFTMAX": "softmax", "ACTIVATION_SOFTMAX1": "softmax", "ACTIVATION_LOG_SOFTMAX": "log_softmax",
           "ACTIVATION_LOG_SOFTMAX1": "log_softmax", "ACTIVATION_HARDMAX": "hardmax", "ACTIVATION_HARDMAX1": "hardmax"}
SHAPE = (2, 8)


def test_every_operator_is_declared_or_written_out_and_reaches_every_front_end() -> None:
    for op in OPERATORS:
        name = op.schema.name
        assert (op.api is None) == (name in WRITTEN), name
        python = WRITTEN[name] if op.api is None else op.api.python
        assert callable(getattr(dml, python)) and python in dml.__all__, name
        assert callable(getattr(dml.functional, python)), name
        assert name in dispatch_operators.BY_NAME and find_schema(name) is op.schema, name
        if op.api is not None:
            assert callable(getattr(g, python)) and python in g.__all__, name
    assert len({op.api.python for op in DECLARED if op.api is not None}) == len(DECLARED)  # no name twice


@pytest.mark.parametrize("op", DECLARED, ids=lambda op: op.schema.name)
def test_dispatch_reads_every_field_of_a_declared_operator_in_directml_order(op: OperatorDefinition) -> None:
    spec = dispatch_operators.BY_NAME[op.schema.name]
    assert op.api is not None
    tensors = [*op.api.tensors, _output_name(op)]  # InputTensor; ATensor, BTensor; InputGradientTensor
    assert [f.name for f in spec.fields] == [*tensors, *(f.name for f in op.fields)]
    assert spec.desc_type is op.desc_type


def _case(op: OperatorDefinition) -> tuple[list[np.ndarray], dict[str, Any], np.ndarray]:
    """Edge values for each input tensor, the keyword arguments of test_kernel_specs' description, and the
    oracle's answer."""
    assert op.api is not None
    xs = [edge_values(_input(op), int(np.prod(SHAPE)), np.random.default_rng(7 + k)).reshape(SHAPE)
          for k in range(len(op.api.tensors))]
    tensors = _tensors(op, SHAPE)
    desc = DESCRIPTIONS[op.schema.name](tensors)
    kwargs = {f.python: getattr(desc, f.attribute) for f in op.api.keywords}
    expected = EXPECTED[op.schema.name](desc, tensors, xs)
    return xs, kwargs, np.array(expected, _output(op).numpy).reshape(SHAPE)


def _input(op: OperatorDefinition) -> dml.DataType:
    """FLOAT32 where the operator takes it (then the kernels are few), else its newest row's first type."""
    assert op.api is not None
    types = max(op.schema.rows, key=lambda row: row.level).types[op.api.tensors[0]]
    return dml.DataType.FLOAT32 if dml.DataType.FLOAT32 in types else min(types, key=lambda t: t.value)


def _output(op: OperatorDefinition) -> dml.DataType:
    assert op.api is not None
    return op.api.output or _input(op)


def _output_name(op: OperatorDefinition) -> str:
    """The output tensor's DirectML name: OutputTensor, or the gradient operators' OutputGradientTensor."""
    (name,) = [t.name for t in op.schema.tensors if t.kind == "output"]
    return name


def _tensors(op: OperatorDefinition, shape: tuple[int, ...]) -> dict[str, dml.TensorDesc | None]:
    """Each input as ``_input``; out the same, or the type the front ends give the output."""
    assert op.api is not None
    inputs: dict[str, dml.TensorDesc | None] = {name: dml.TensorDesc(_input(op), shape) for name in op.api.tensors}
    return {**inputs, _output_name(op): dml.TensorDesc(_output(op), shape)}


def _same(got: Any, expected: np.ndarray) -> None:
    got = np.asarray(got)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert all(oracle.same_value(float(a), float(b)) for a, b in zip(got.reshape(-1), expected.reshape(-1)))


def _functional(op: OperatorDefinition, xs: list[Any], kwargs: dict[str, Any]) -> Any:
    assert op.api is not None
    return getattr(dml, op.api.python)(*xs, **kwargs)


def _compiled(op: OperatorDefinition, xs: list[np.ndarray], kwargs: dict[str, Any]) -> Any:
    return dml.compile(lambda *arrays: _functional(op, list(arrays), kwargs))(*xs)


def _dask(op: OperatorDefinition, xs: list[np.ndarray], kwargs: dict[str, Any]) -> Any:
    import dask.array as da

    return _functional(op, [da.from_array(x, chunks=(1, 5)) for x in xs], kwargs).compute(scheduler="sync")


def _builder(op: OperatorDefinition, xs: list[np.ndarray], kwargs: dict[str, Any]) -> Any:
    assert op.api is not None
    device = dml.Device()
    graph = dml.Graph(device)
    inputs = [graph.input(k, dml.TensorDesc(_input(op), SHAPE)) for k in range(len(xs))]
    node = getattr(g, op.api.python)(*inputs, **kwargs)
    out_type = _output(op).numpy
    size = xs[0].size
    out = device.create_buffer(max(4, size * out_type.itemsize))
    graph.compile([node]).execute([device.buffer_from(x) for x in xs], [out])
    return out.to_numpy()[:size * out_type.itemsize].view(out_type).reshape(SHAPE)


FRONT_ENDS: dict[str, Callable[[OperatorDefinition, list[np.ndarray], dict[str, Any]], Any]] = {
    "functional": _functional, "compile": _compiled, "dask": _dask, "builder": _builder}


@pytest.mark.parametrize("front_end", FRONT_ENDS)
@pytest.mark.parametrize("op", DECLARED, ids=lambda op: op.schema.name)
def test_every_declared_operator_runs_through_every_front_end(op: OperatorDefinition, front_end: str) -> None:
    xs, kwargs, expected = _case(op)
    _same(FRONT_ENDS[front_end](op, xs, kwargs), expected)


def _json_field(value: Any) -> Any:
    if isinstance(value, dml.ScaleBias):
        return {"Scale": value.scale, "Bias": value.bias}
    if dataclasses.is_dataclass(value):  # a fused activation: DxDispatch's {"Type": ..., its fields}
        from opendml.ops import BY_DESC_TYPE

        op = BY_DESC_TYPE[type(value)]
        return {"Type": op.schema.name, **{f.name: _json_field(getattr(value, f.attribute)) for f in op.fields}}
    return getattr(value, "name", value)  # an enum by its name


@pytest.mark.parametrize("op", DECLARED, ids=lambda op: op.schema.name)
def test_every_declared_operator_runs_under_opendml_dispatch(op: OperatorDefinition, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert op.api is not None
    x = np.array([[-2.5, -0.5, 0.0, 0.25], [0.75, 1.0, 3.0, 7.0]], np.float32)
    if _input(op).is_integer:
        x = np.array([[0, 1, 2, 0], [3, 0, 7, 9]], _input(op).numpy)
    xs = [x if k == 0 else x[::-1, ::-1].copy() for k in range(len(op.api.tensors))]  # a second operand: reversed
    tensors = _tensors(op, x.shape)
    desc = DESCRIPTIONS[op.schema.name](tensors)
    fields = {f.name: _json_field(getattr(desc, f.attribute)) for f in op.fields if getattr(desc, f.attribute) is not None}
    out = _output(op).name
    model = {
        "resources": {**{f"In{k}": {"initialValuesDataType": _input(op).name, "initialValues": v.reshape(-1).tolist()}
                         for k, v in enumerate(xs)},
                      "Out": {"initialValuesDataType": out, "initialValues": {"valueCount": 8, "value": 0}}},
        "dispatchables": {"op": {"type": f"DML_OPERATOR_{op.schema.name}", "desc": {
            **{name: {"DataType": _input(op).name, "Sizes": list(x.shape)} for name in op.api.tensors},
            _output_name(op): {"DataType": out, "Sizes": list(x.shape)}, **fields}}},
        "commands": [{"type": "dispatch", "dispatchable": "op",
                      "bindings": {**{name: f"In{k}" for k, name in enumerate(op.api.tensors)},
                                   _output_name(op): "Out"}},
                     {"type": "print", "resource": "Out"}],
    }
    path = tmp_path / "model.json"
    path.write_text(json.dumps(model))
    assert main(["dispatch", str(path)]) == 0
    (line,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("Resource 'Out': ")]
    printed = np.array([float(v) for v in line.split(": ")[1].split(", ")])
    expected = EXPECTED[op.schema.name](desc, tensors, xs)
    np.testing.assert_allclose(printed, np.array(expected, np.float64), rtol=5e-6, atol=0)


def test_the_declared_names_are_directml_s() -> None:
    assert set(UNARY_FIELDS) <= set(BY_NAME)
    for op in DECLARED:
        assert op.desc_type.__doc__.startswith(f"DML_{op.schema.name}_OPERATOR_DESC")  # type: ignore[union-attr]


def _parameters(function: Callable[..., Any]) -> list[tuple[str, str, Any]]:
    return [(p.name, p.kind.name, p.default) for p in inspect.signature(function).parameters.values()]


def test_clip_and_threshold_keep_their_signatures() -> None:
    empty, none = inspect.Parameter.empty, None
    # An absent bound bounds nothing (NumPy's clip(x, min=0)); the builder's CLIP takes both, as DirectML's.
    assert _parameters(dml.clip) == [("x", "POSITIONAL_OR_KEYWORD", empty), ("min", "POSITIONAL_OR_KEYWORD", none),
                                     ("max", "POSITIONAL_OR_KEYWORD", none), ("scale_bias", "KEYWORD_ONLY", none),
                                     ("out", "KEYWORD_ONLY", none), ("device", "KEYWORD_ONLY", none)]
    assert _parameters(dml.threshold) == [("x", "POSITIONAL_OR_KEYWORD", empty),
                                          ("min", "POSITIONAL_OR_KEYWORD", empty),
                                          ("scale_bias", "KEYWORD_ONLY", none), ("out", "KEYWORD_ONLY", none),
                                          ("device", "KEYWORD_ONLY", none)]
    assert _parameters(g.clip) == [("x", "POSITIONAL_OR_KEYWORD", empty), ("min", "POSITIONAL_OR_KEYWORD", empty),
                                   ("max", "POSITIONAL_OR_KEYWORD", empty), ("scale_bias", "POSITIONAL_OR_KEYWORD", none)]
    with pytest.raises(TypeError, match="missing 2 required positional arguments: 'min' and 'max'"):
        g.clip(None)  # type: ignore[call-arg]  # Python binds the call before its body runs
    with pytest.raises(TypeError, match="positional"):
        dml.clip(np.zeros(2, np.float32), 0.0, 1.0, (2.0, 0.0))  # ScaleBias by keyword only


def _fields(keywords: Sequence[Field]) -> list[tuple[str, str, Any]]:
    return [(f.python, "POSITIONAL_OR_KEYWORD" if f.positional else "KEYWORD_ONLY",
             inspect.Parameter.empty if f.default is REQUIRED else f.default) for f in keywords]


@pytest.mark.parametrize("op", DECLARED, ids=lambda op: op.schema.name)
def test_each_function_takes_its_declarations_fields_and_pickles_by_reference(op: OperatorDefinition) -> None:
    """A FLOAT field by position or keyword, any other by keyword (every field by position in the builder), its
    default where it has one; the function pickles as a reference to itself (a Dask task carries it)."""
    assert op.api is not None
    functional, builder = getattr(dml, op.api.python), getattr(g, op.api.python)
    arrays = [(name, "POSITIONAL_OR_KEYWORD", inspect.Parameter.empty) for name in op.api.arrays]
    assert _parameters(functional) == [*arrays, *_fields(op.api.functional_keywords), ("out", "KEYWORD_ONLY", None),
                                       ("device", "KEYWORD_ONLY", None)]
    fields = _fields(op.api.keywords)
    assert _parameters(builder) == [*arrays, *((name, "POSITIONAL_OR_KEYWORD", default) for name, _, default in fields)]
    assert pickle.loads(pickle.dumps(functional)) is functional and pickle.loads(pickle.dumps(builder)) is builder
