"""ARGMAX, ELEMENT_WISE_QUANTIZE_LINEAR and the NanPolicy extension in ``opendml dispatch`` models, in process."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from dispatch_helpers import printed, write_model

import opendml as dml
from opendml.cli import main
from opendml.dispatch import dispatchables
from opendml.dispatch.reader import parse_json

PREFIX = "opendml dispatch: error: "
F32 = {"DataType": "FLOAT32", "Sizes": [2, 3]}
ROWS = {"DataType": "INT64", "Sizes": [2, 1]}


def _desc(text: str) -> dispatchables.Dispatchable:
    return dispatchables.parse_dispatchable("d", parse_json(text, "m.json"), "dispatchables.d")


def _arg(op: str, **fields: object) -> dict:
    return {"type": op, "desc": {"InputTensor": F32, "OutputTensor": ROWS, "Axes": [1],
                                 "AxisDirection": "INCREASING", **fields}}


def _model(dispatchable: dict, bindings: dict[str, str]) -> dict:
    return {
        "resources": {
            "x": {"initialValuesDataType": "FLOAT32", "initialValues": [1, "nan", 4, -2, -0.0, 0]},
            "scale": {"initialValuesDataType": "FLOAT32", "initialValues": [0.5]},
            "zp": {"initialValuesDataType": "INT8", "initialValues": [-1]},
            "i": {"initialValuesDataType": "INT64", "initialValues": {"valueCount": 2, "value": 9}},
            "q": {"initialValuesDataType": "INT8", "initialValues": {"valueCount": 6, "value": 0}},
        },
        "dispatchables": {"op": dispatchable},
        "commands": [{"type": "dispatch", "dispatchable": "op", "bindings": bindings},
                     {"type": "print", "resource": "q" if "q" in bindings.values() else "i"}],
    }


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], model: dict) -> str:
    status = main(["dispatch", "--backend", "cpu", str(write_model(tmp_path / "m.json", model))])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return captured.out


def _fails(tmp_path: Path, capsys: pytest.CaptureFixture[str], model: dict) -> str:
    status = main(["dispatch", "--backend", "cpu", str(write_model(tmp_path / "m.json", model))])
    captured = capsys.readouterr()
    assert status == 2, captured.out
    assert captured.err.count("\n") == 1 and captured.err.startswith(PREFIX), captured.err
    return captured.err[len(PREFIX):].rstrip("\n")


def test_argmax_fields_and_nan_policy_spellings() -> None:
    plain = _desc('{"type": "DML_OPERATOR_ARGMAX", "desc": {"InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3]},'
                  ' "OutputTensor": {"DataType": "UINT32", "Sizes": [1, 3]}, "AxisCount": 1, "Axes": [0],'
                  ' "AxisDirection": "DML_AXIS_DIRECTION_DECREASING"}}')
    assert isinstance(plain.desc, dml.ArgMaxDesc) and list(plain.desc.axes) == [0]
    assert plain.desc.nan_policy is dml.NanPolicy.IGNORE  # left out: DirectML's behaviour
    assert plain.tensor_names == ("InputTensor", "OutputTensor")
    for op in ("ARGMIN", "ARGMAX"):
        for spelling, policy in (("PROPAGATE", "PROPAGATE"), ("nan_policy_propagate", "PROPAGATE"),
                                 ("NAN_POLICY_IGNORE", "IGNORE"), (1, "PROPAGATE"), (0, "IGNORE")):
            text = ('{"type": "%s", "desc": {"InputTensor": {"DataType": "FLOAT32", "Sizes": [3]}, "OutputTensor": '
                    '{"DataType": "INT64", "Sizes": [1]}, "Axes": [0], "AxisDirection": 0, "NanPolicy": %s}}')
            d = _desc(text % (op, f'"{spelling}"' if isinstance(spelling, str) else spelling))
            assert dml.NanPolicy.parse(d.desc.nan_policy) is dml.NanPolicy[policy], (op, spelling)


def test_quantize_linear_fields() -> None:
    d = _desc('{"type": "ELEMENT_WISE_QUANTIZE_LINEAR", "desc": {"InputTensor": {"DataType": "INT32", "Sizes": [4]},'
              ' "ScaleTensor": {"DataType": "FLOAT32", "Sizes": [4], "Strides": [0]},'
              ' "OutputTensor": {"DataType": "UINT8", "Sizes": [4]}}}')
    assert isinstance(d.desc, dml.ElementWiseQuantizeLinearDesc) and d.desc.zero_point_tensor is None
    assert d.desc.scale_tensor == dml.TensorDesc("FLOAT32", [4], [0])
    assert d.tensor_names == ("InputTensor", "ScaleTensor", "OutputTensor")
    assert d.input_names == ("InputTensor", "ScaleTensor", None)  # the absent zero point binds as none


def test_argmax_and_nan_policy_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bindings = {"InputTensor": "x", "OutputTensor": "i"}
    # rows [1, nan, 4] and [-2, -0.0, 0] (a tie of -0.0 and 0.0)
    assert printed(_run(tmp_path, capsys, _model(_arg("ARGMAX"), bindings)), "i").tolist() == [2, 1]
    last = _arg("DML_OPERATOR_ARGMAX", AxisDirection="DECREASING")
    assert printed(_run(tmp_path, capsys, _model(last, bindings)), "i").tolist() == [2, 2]
    nan_first = _arg("ARGMAX", NanPolicy="PROPAGATE")
    assert printed(_run(tmp_path, capsys, _model(nan_first, bindings)), "i").tolist() == [1, 1]
    argmin = _arg("ARGMIN", NanPolicy="NAN_POLICY_PROPAGATE")
    assert printed(_run(tmp_path, capsys, _model(argmin, bindings)), "i").tolist() == [1, 0]


def test_quantize_linear_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    full = {"DataType": "INT8", "Sizes": [2, 3], "Strides": [0, 0]}
    quantize = {"type": "DML_OPERATOR_ELEMENT_WISE_QUANTIZE_LINEAR", "desc": {
        "InputTensor": F32, "ScaleTensor": {**F32, "Strides": [0, 0]}, "ZeroPointTensor": full,
        "OutputTensor": {"DataType": "INT8", "Sizes": [2, 3]}}}
    bindings = {"InputTensor": "x", "ScaleTensor": "scale", "ZeroPointTensor": "zp", "OutputTensor": "q"}
    # x / 0.5: 2, nan, 8, -4, -0, 0; plus -1 (NaN: the zero point)
    assert printed(_run(tmp_path, capsys, _model(quantize, bindings)), "q").tolist() == [1, -1, 7, -5, -1, -1]
    del quantize["desc"]["ZeroPointTensor"], bindings["ZeroPointTensor"]  # optional from 6_2: a zero point of 0
    assert printed(_run(tmp_path, capsys, _model(quantize, bindings)), "q").tolist() == [2, 0, 8, -4, 0, 0]


BAD = {
    "NanPolicy unknown": (_arg("ARGMAX", NanPolicy="SOMETIMES"), "dispatchables.op.desc.NanPolicy: must be one of "
                          "IGNORE, PROPAGATE (with or without NAN_POLICY_), or 0, 1; got \"SOMETIMES\"."),
    "NanPolicy number": (_arg("ARGMIN", NanPolicy=2), "dispatchables.op.desc.NanPolicy: must be one of IGNORE, "
                         "PROPAGATE (with or without NAN_POLICY_), or 0, 1; got 2."),
    "NanPolicy DirectML's prefix": (_arg("ARGMAX", NanPolicy="DML_NAN_POLICY_IGNORE"), "dispatchables.op.desc."
                                    "NanPolicy: must be one of IGNORE, PROPAGATE"),
    "ARGMAX axis out of range": (_arg("ARGMAX", Axes=[2]), "dispatchables.op.desc.Axes[0]: ARGMAX: Axes[0] must be "
                                 "an integer in [0, 1]; got 2."),
    "ARGMAX output type": (_arg("ARGMAX", OutputTensor={"DataType": "INT16", "Sizes": [2, 1]}),
                           "dispatchables.op.desc.OutputTensor.DataType: ARGMAX: OutputTensor.DataType must be one of"),
    "ARGMAX AxisCount": (_arg("ARGMAX", AxisCount=2), "dispatchables.op.desc.AxisCount: must equal the number of "
                         "Axes (1); got 2."),
    "ARGMAX without AxisDirection": ({"type": "ARGMAX", "desc": {"InputTensor": F32, "OutputTensor": ROWS,
                                                                 "Axes": [1]}},
                                     "dispatchables.op.desc.AxisDirection: is required"),
    "QUANTIZE scale type": ({"type": "ELEMENT_WISE_QUANTIZE_LINEAR", "desc": {
        "InputTensor": F32, "ScaleTensor": {"DataType": "FLOAT16", "Sizes": [2, 3]},
        "OutputTensor": {"DataType": "UINT8", "Sizes": [2, 3]}}},
        "dispatchables.op.desc.ScaleTensor.DataType: ELEMENT_WISE_QUANTIZE_LINEAR: ScaleTensor.DataType must be "
        "FLOAT32 (InputTensor.DataType); got FLOAT16."),
    "QUANTIZE zero point type": ({"type": "ELEMENT_WISE_QUANTIZE_LINEAR", "desc": {
        "InputTensor": F32, "ScaleTensor": F32, "ZeroPointTensor": {"DataType": "UINT8", "Sizes": [2, 3]},
        "OutputTensor": {"DataType": "INT8", "Sizes": [2, 3]}}},
        "ELEMENT_WISE_QUANTIZE_LINEAR: ZeroPointTensor.DataType must equal OutputTensor.DataType"),
    "QUANTIZE output type": ({"type": "ELEMENT_WISE_QUANTIZE_LINEAR", "desc": {
        "InputTensor": F32, "ScaleTensor": F32, "OutputTensor": {"DataType": "INT16", "Sizes": [2, 3]}}},
        "ELEMENT_WISE_QUANTIZE_LINEAR: OutputTensor.DataType must be one of INT8, UINT8"),
    "QUANTIZE unknown field": ({"type": "ELEMENT_WISE_QUANTIZE_LINEAR", "desc": {
        "InputTensor": F32, "ScaleTensor": F32, "OutputTensor": F32, "Axis": 1}},
        "dispatchables.op.desc.Axis: "),
    "QUANTIZE without ScaleTensor": ({"type": "ELEMENT_WISE_QUANTIZE_LINEAR", "desc": {
        "InputTensor": F32, "OutputTensor": {"DataType": "UINT8", "Sizes": [2, 3]}}},
        "dispatchables.op.desc.ScaleTensor: is required"),
}


@pytest.mark.parametrize("case", BAD)
def test_bad_descriptions_name_their_json_path(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    dispatchable, expected = BAD[case]
    bindings = {"InputTensor": "x", "OutputTensor": "i"}
    if "ScaleTensor" in dispatchable["desc"]:
        bindings = {"InputTensor": "x", "ScaleTensor": "scale", "OutputTensor": "q"}
    if "ZeroPointTensor" in dispatchable["desc"]:
        bindings["ZeroPointTensor"] = "zp"
    model = _model(copy.deepcopy(dispatchable), bindings)
    message = _fails(tmp_path, capsys, model)
    assert expected in message, message


def test_quantize_linear_needs_its_bindings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    quantize = {"type": "ELEMENT_WISE_QUANTIZE_LINEAR", "desc": {
        "InputTensor": F32, "ScaleTensor": F32, "OutputTensor": {"DataType": "INT8", "Sizes": [2, 3]}}}
    message = _fails(tmp_path, capsys, _model(quantize, {"InputTensor": "x", "OutputTensor": "q"}))
    assert message.startswith("commands[0].bindings.ScaleTensor: "), message
    at_6_0 = main(["dispatch", "--backend", "cpu", "--feature-level", "6_0",
                   str(write_model(tmp_path / "m.json", _model(quantize, {"InputTensor": "x", "ScaleTensor": "scale",
                                                                          "OutputTensor": "q"})))])
    err = capsys.readouterr().err
    assert at_6_0 == 2 and "ZeroPointTensor" in err and "6_2" in err, err
