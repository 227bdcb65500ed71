"""Bad models through the real command: one line naming the JSON path, exit status 2, no traceback,
and no output file at all (writeFile output appears only when the whole model has run)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from dispatch_helpers import run_dispatch, write_model

F32_9 = {"DataType": "FLOAT32", "Sizes": [9]}
GOOD = {
    "$schema": "./_schema.json",
    "resources": {
        "A": {"initialValuesDataType": "FLOAT32", "initialValues": [-4, -3, -2, -1, 0, 1, 2, 3, 4]},
        "B": {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 9, "value": 0}},
    },
    "dispatchables": {
        "clip": {"type": "DML_OPERATOR_ELEMENT_WISE_CLIP",
                 "desc": {"InputTensor": F32_9, "OutputTensor": F32_9, "Min": -2.5, "Max": 2.5}},
    },
    "commands": [
        {"type": "writeFile", "resource": "A", "targetPath": "before.npy"},
        {"type": "dispatch", "dispatchable": "clip", "bindings": {"InputTensor": "A", "OutputTensor": "B"}},
        {"type": "writeFile", "resource": "B", "targetPath": "after.npy"},
        {"type": "print", "resource": "B"},
    ],
}


def _set(path: str, value: object) -> Callable[[dict], None]:
    """A change to GOOD: set the value at a dotted path ("dispatchables.clip.desc.Min")."""
    def change(model: dict) -> None:
        *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
        node = model
        for key in parents:
            node = node[key]
        node[last] = value
    return change


def _delete(path: str) -> Callable[[dict], None]:
    def change(model: dict) -> None:
        *parents, last = path.split(".")
        node = model
        for key in parents:
            node = node[int(key) if key.isdigit() else key]
        del node[last]
    return change


DESC = "dispatchables.clip.desc"
CASES = {
    # unknown operator, field or resource
    "unknown operator": (_set("dispatchables.clip.type", "DML_OPERATOR_GEMM"), "dispatchables.clip.type"),
    "unknown desc field": (_set(f"{DESC}.Mn", 0), f"{DESC}.Mn"),
    "unknown tensor field": (_set(f"{DESC}.InputTensor", {**F32_9, "Stride": [1]}), f"{DESC}.InputTensor.Stride"),
    "unknown resource field": (_set("resources.A.initialValue", 1), "resources.A.initialValue"),
    "unknown model field": (_set("resource", {}), "resource"),
    "unknown resource": (_set("commands.1.bindings.InputTensor", "C"), "commands[1].bindings.InputTensor"),
    "unknown printed resource": (_set("commands.3.resource", "C"), "commands[3].resource"),
    "unknown dispatchable": (_set("commands.1.dispatchable", "clop"), "commands[1].dispatchable"),
    "unknown binding": (_set("commands.1.bindings.ScaleTensor", "A"), "commands[1].bindings.ScaleTensor"),
    "unknown command": (_set("commands.3.type", "show"), "commands[3].type"),
    # missing pieces
    "missing field": (_delete(f"{DESC}.Max"), f"{DESC}.Max"),
    "missing binding": (_delete("commands.1.bindings.OutputTensor"), "commands[1].bindings.OutputTensor"),
    # wrong JSON type
    "sizes not an array": (_set(f"{DESC}.InputTensor.Sizes", "9"), f"{DESC}.InputTensor.Sizes"),
    "size not an integer": (_set(f"{DESC}.InputTensor.Sizes", [9.0]), f"{DESC}.InputTensor.Sizes[0]"),
    "min not a number": (_set(f"{DESC}.Min", "low"), f"{DESC}.Min"),
    "commands not an array": (_set("commands", {}), "commands"),
    "value not a number": (_set("resources.A.initialValues", [1, "two"]), "resources.A.initialValues[1]"),
    # a value out of range
    "size zero": (_set(f"{DESC}.InputTensor.Sizes", [3, 0]), f"{DESC}.InputTensor.Sizes[1]"),
    "size beyond UINT32": (_set(f"{DESC}.InputTensor.Sizes", [2**32]), f"{DESC}.InputTensor.Sizes[0]"),
    "UINT8 value 300": (_set("resources.A", {"initialValuesDataType": "UINT8", "initialValues": [1, 300]}),
                        "resources.A.initialValues[1]"),
    "FLOAT16 overflow": (_set("resources.A", {"initialValuesDataType": "FLOAT16", "initialValues": [1e6]}),
                         "resources.A.initialValues[0]"),
    "sizeInBytes too small": (_set("resources.A.sizeInBytes", 8), "resources.A.sizeInBytes"),
    "unknown data type": (_set("resources.A.initialValuesDataType", "FLOAT8"), "resources.A.initialValuesDataType"),
    # an invalid description (opendml's own validation, prefixed with the path)
    "sizes differ": (_set(f"{DESC}.OutputTensor", {"DataType": "FLOAT32", "Sizes": [3, 3]}),
                     f"{DESC}.OutputTensor"),
    "types differ": (_set(f"{DESC}.OutputTensor", {"DataType": "FLOAT16", "Sizes": [9]}),
                     f"{DESC}.OutputTensor.DataType"),
    "scale bias on integers": (_set(DESC, {"InputTensor": {"DataType": "INT32", "Sizes": [9]},
                                           "OutputTensor": {"DataType": "INT32", "Sizes": [9]},
                                           "ScaleBias": {"Scale": 2, "Bias": 0}, "Min": 0, "Max": 1}),
                               f"{DESC}.ScaleBias"),
    "total size too small": (_set(f"{DESC}.InputTensor.TotalTensorSizeInBytes", 8),
                             f"{DESC}.InputTensor.TotalTensorSizeInBytes"),
    "owned by DML": (_set(f"{DESC}.InputTensor.Flags", "DML_TENSOR_FLAG_OWNED_BY_DML"), f"{DESC}.InputTensor.Flags"),
    # a binding too small, or misplaced
    "binding too small": (_set("resources.B.initialValues.valueCount", 4), "commands[1].bindings.OutputTensor"),
    "binding offset misaligned": (_set("commands.1.bindings.InputTensor", {"name": "A", "elementOffset": 1}),
                                  "commands[1].bindings.InputTensor"),
}


def _run_bad(tmp_path: Path, model: dict, *options: str) -> str:
    """Run a bad model; check the failure's shape and return the message after "error: "."""
    out = tmp_path / "out"
    result = run_dispatch(write_model(tmp_path / "bad.json", model), "--backend", "cpu", "--output-path", out,
                          *options)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("opendml dispatch: error: ")
    assert not out.exists() or not any(out.iterdir()), "an output file was written"
    return lines[0].removeprefix("opendml dispatch: error: ")


@pytest.mark.parametrize("case", CASES)
def test_bad_model(tmp_path: Path, case: str) -> None:
    change, path = CASES[case]
    model = copy.deepcopy(GOOD)
    change(model)
    message = _run_bad(tmp_path, model)
    assert message.startswith(f"{path}: "), message


def test_the_good_model_is_good(tmp_path: Path) -> None:
    """The model the bad ones are made from runs, and writes both files."""
    out = tmp_path / "out"
    result = run_dispatch(write_model(tmp_path / "good.json", GOOD), "--backend", "cpu", "--output-path", out)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["after.npy", "before.npy"]


def test_messages_say_what_is_wrong(tmp_path: Path) -> None:
    model = copy.deepcopy(GOOD)
    model["dispatchables"]["clip"]["desc"]["InputTensor"]["Sizes"] = [3, 0]
    assert _run_bad(tmp_path, model) == (
        "dispatchables.clip.desc.InputTensor.Sizes[1]: DML_BUFFER_TENSOR_DESC: Sizes[1] must be in "
        "[1, 4294967295]; got 0.")
    model = copy.deepcopy(GOOD)
    model["resources"]["B"]["initialValues"]["valueCount"] = 4
    message = _run_bad(tmp_path, model)
    assert "SizeInBytes must be at least TotalTensorSizeInBytes (36); got 16." in message


def test_feature_level_too_low(tmp_path: Path) -> None:
    message = _run_bad(tmp_path, GOOD, "--feature-level", "2_1")
    assert message.startswith(f"{DESC}.InputTensor: ELEMENT_WISE_CLIP: InputTensor.DimensionCount must be 4"), message
    assert "lowest feature level that accepts this description is 3_0" in message


def test_json_syntax_error_names_line_and_column(tmp_path: Path) -> None:
    text = json.dumps(GOOD, indent=1).replace('"Min": -2.5', '"Min": -2.5 2')
    (tmp_path / "bad.json").write_text(text)
    result = run_dispatch(tmp_path / "bad.json", "--backend", "cpu")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    line = next(k for k, row in enumerate(text.splitlines(), 1) if '"Min"' in row)
    assert result.stderr.startswith(f"opendml dispatch: error: {tmp_path / 'bad.json'}:{line}:"), result.stderr


def test_missing_model_file(tmp_path: Path) -> None:
    result = run_dispatch(tmp_path / "none.json")
    assert result.returncode == 2
    assert result.stderr == f"opendml dispatch: error: {tmp_path / 'none.json'}: no such model file.\n"


def test_unknown_example() -> None:
    result = run_dispatch("--example", "gemm")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("opendml dispatch: error: --example: must be one of argmax, argmin, clip, ")


def test_comments_and_trailing_commas_are_allowed(tmp_path: Path) -> None:
    """DxDispatch reads its JSON with comments and trailing commas; so does opendml."""
    text = json.dumps(GOOD, indent=1).replace('"Max": 2.5', '"Max": 2.5, // upper bound\n /* more */')
    (tmp_path / "m.json").write_text(text)
    result = run_dispatch(tmp_path / "m.json", "--backend", "cpu", "--output-path", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Resource 'B': -2.5, -2.5, -2, -1, 0, 1, 2, 2.5, 2.5" in result.stdout


def _cuda_usable() -> bool:
    import opendml

    try:
        opendml.Device("cuda")
    except opendml.OpenDMLError:
        return False
    return True


@pytest.mark.skipif(_cuda_usable(), reason="a usable CUDA GPU is present, so --backend cuda cannot fail here")
def test_cuda_backend_missing_is_a_clean_error() -> None:
    result = run_dispatch("--example", "clip", "--backend", "cuda")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("opendml dispatch: error: Device: backend 'cuda'"), result.stderr


def test_model_and_example_together(tmp_path: Path) -> None:
    result = run_dispatch(tmp_path / "m.json", "--example", "clip")
    assert result.returncode == 2
    assert result.stderr == "opendml dispatch: error: give a model or --example NAME, not both.\n"
