"""``opendml support``: the support tables as printed, checked against SPEC's tables written out here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from opendml.cli import main

FLOATS = ["FLOAT32", "FLOAT16"]
INT32S = ["INT32", "INT16", "INT8", "UINT32", "UINT16", "UINT8"]
ALL_BUT_64 = ["FLOAT32", "FLOAT16", "INT32", "INT16", "INT8", "UINT32", "UINT16", "UINT8"]
ALL = ["FLOAT32", "FLOAT16", "INT64", "INT32", "INT16", "INT8", "UINT64", "UINT32", "UINT16", "UINT8"]
INDEXES = ["INT64", "INT32", "UINT64", "UINT32"]


def unary(types: list[str]) -> dict[str, list[str]]:
    return {"InputTensor": types, "OutputTensor": types}


def dequantize(inputs: list[str], floats: list[str]) -> dict[str, list[str]]:
    return {"InputTensor": inputs, "ScaleTensor": floats, "ZeroPointTensor": inputs, "OutputTensor": floats}


# SPEC sections 4-7: operator -> (introduced, [(from level, (min dims, max dims), tensor -> data types)]).
SPEC = {
    "ELEMENT_WISE_CLIP": ("1_0", [("5_0", (1, 8), unary(ALL)), ("3_0", (1, 8), unary(ALL_BUT_64)),
                                  ("2_1", (4, 4), unary(ALL_BUT_64)), ("1_0", (4, 4), unary(FLOATS))]),
    "ELEMENT_WISE_CLIP1": ("5_0", [("5_0", (1, 8), unary(ALL))]),
    "ELEMENT_WISE_THRESHOLD": ("1_0", [("3_0", (1, 8), unary(ALL_BUT_64)), ("2_1", (4, 4), unary(ALL_BUT_64)),
                                       ("1_0", (4, 4), unary(FLOATS))]),
    "ELEMENT_WISE_DEQUANTIZE_LINEAR": ("1_0", [
        ("6_2", (1, 8), dequantize(INT32S, FLOATS)), ("6_0", (1, 8), dequantize(INT32S, FLOATS)),
        ("3_0", (1, 8), dequantize(INT32S, ["FLOAT32"])), ("2_1", (4, 4), dequantize(INT32S, ["FLOAT32"])),
        ("1_0", (4, 4), dequantize(["UINT8"], ["FLOAT32"]))]),
    "ARGMIN": ("3_0", [("4_1", (1, 8), {"InputTensor": ALL, "OutputTensor": INDEXES}),
                       ("3_0", (1, 8), {"InputTensor": ALL_BUT_64, "OutputTensor": INDEXES})]),
}


def support(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["support", *args])
    out, err = capsys.readouterr()
    return status, out, err


def support_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    status, out, err = support(capsys, *args, "--json")
    assert status == 0 and err == ""
    return json.loads(out)


def table(entry: dict) -> list[tuple[str, tuple[int, int], dict[str, list[str]]]]:
    return [(row["from"], (row["dimensions"]["min"], row["dimensions"]["max"]),
             {t["name"]: t["data_types"] for t in row["tensors"]}) for row in entry["rows"]]


def test_every_operator_table_matches_the_spec(capsys: pytest.CaptureFixture[str]) -> None:
    report = support_json(capsys)
    entries = {entry["name"]: entry for entry in report["operators"]}
    assert report["feature_level"] is None and set(SPEC) <= set(entries)
    for name, (introduced, rows) in SPEC.items():
        assert entries[name]["introduced"] == introduced, name
        assert table(entries[name]) == rows, name


def test_dequantize_linear_at_3_0_takes_float32_scales_only(capsys: pytest.CaptureFixture[str]) -> None:
    (entry,) = support_json(capsys, "ELEMENT_WISE_DEQUANTIZE_LINEAR", "--feature-level", "3_0")["operators"]
    assert entry["available"] is True
    assert table(entry) == [("3_0", (1, 8), dequantize(INT32S, ["FLOAT32"]))]
    status, out, _ = support(capsys, "ELEMENT_WISE_DEQUANTIZE_LINEAR", "--feature-level", "3_0")
    assert status == 0
    assert "ELEMENT_WISE_DEQUANTIZE_LINEAR (introduced at 1_0), at feature level 3_0: the row from 3_0" in out
    assert [line.split()[-1] for line in out.splitlines() if "ScaleTensor" in line] == ["FLOAT32"]


def test_zero_point_is_optional_from_6_2_only(capsys: pytest.CaptureFixture[str]) -> None:
    def zero_point(level: str) -> dict:
        (entry,) = support_json(capsys, "ELEMENT_WISE_DEQUANTIZE_LINEAR", "--feature-level", level)["operators"]
        return next(t for t in entry["rows"][0]["tensors"] if t["name"] == "ZeroPointTensor")
    assert zero_point("6_4")["presence"] == "optional" and zero_point("6_1")["presence"] == "required"
    _, out, _ = support(capsys, "ELEMENT_WISE_DEQUANTIZE_LINEAR", "--feature-level", "6_2")
    assert "ZeroPointTensor  INT32, INT16, INT8, UINT32, UINT16, UINT8 (optional)" in out


def test_argmin_at_4_1_takes_64_bit_inputs(capsys: pytest.CaptureFixture[str]) -> None:
    (entry,) = support_json(capsys, "ARGMIN", "--feature-level", "4_1")["operators"]
    assert table(entry) == [("4_1", (1, 8), {"InputTensor": ALL, "OutputTensor": INDEXES})]
    _, out, _ = support(capsys, "argmin", "--feature-level", "4_1")
    assert "InputTensor   FLOAT32, FLOAT16, INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16, UINT8" in out


@pytest.mark.parametrize("level", ["1_0", "2_1", "2.1"])
def test_argmin_is_not_available_below_3_0(capsys: pytest.CaptureFixture[str], level: str) -> None:
    status, out, err = support(capsys, "ARGMIN", "--feature-level", level)
    assert status == 0 and err == ""
    assert out.strip() == f"ARGMIN (introduced at 3_0): not available at feature level {level.replace('.', '_')}."
    (entry,) = support_json(capsys, "ARGMIN", "--feature-level", level)["operators"]
    assert entry["available"] is False and entry["rows"] == []


def test_clip_at_2_1_takes_four_dimensions(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = support(capsys, "ELEMENT_WISE_CLIP", "--feature-level", "2_1")
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == "ELEMENT_WISE_CLIP (introduced at 1_0), at feature level 2_1: the row from 2_1"
    assert lines[2].split(None, 3) == ["2_1", "4", "InputTensor", "FLOAT32, FLOAT16, INT32, INT16, INT8, UINT32, "
                                                                  "UINT16, UINT8"]
    (entry,) = support_json(capsys, "ELEMENT_WISE_CLIP", "--feature-level", "2_1")["operators"]
    assert entry["rows"][0]["dimensions"] == {"min": 4, "max": 4}


def test_a_level_between_rows_shows_the_row_in_force(capsys: pytest.CaptureFixture[str]) -> None:
    (entry,) = support_json(capsys, "ELEMENT_WISE_CLIP", "--feature-level", "4_1")["operators"]
    assert table(entry) == [("3_0", (1, 8), unary(ALL_BUT_64))]  # the 3_0 row is in force until 5_0


def test_every_row_printed_as_text(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = support(capsys, "ELEMENT_WISE_THRESHOLD")
    assert status == 0
    rows = [line.split(None, 3) for line in out.splitlines()[2:] if line.split()[0][0].isdigit()]
    assert rows == [["3_0", "1-8", "InputTensor", ", ".join(ALL_BUT_64)], ["2_1", "4", "InputTensor", ", ".join(ALL_BUT_64)],
                    ["1_0", "4", "InputTensor", "FLOAT32, FLOAT16"]]


@pytest.mark.parametrize("spelling", ["ELEMENT_WISE_CLIP", "DML_OPERATOR_ELEMENT_WISE_CLIP", "element_wise_clip",
                                      "Dml_Operator_Element_Wise_Clip", "clip"])
def test_operator_spellings(capsys: pytest.CaptureFixture[str], spelling: str) -> None:
    (entry,) = support_json(capsys, spelling)["operators"]
    assert entry["name"] == "ELEMENT_WISE_CLIP"


@pytest.mark.parametrize(("args", "error"), [
    (["GEMM"], "OPERATOR must be one of ELEMENT_WISE_CLIP, "),
    (["ELEMENT_WISE_CLIP2"], "OPERATOR must be one of "),
    (["ARGMIN", "--feature-level", "4_2"], "--feature-level must be one of 1_0, 2_0, 2_1, "),
    (["--feature-level", "latest"], "--feature-level must be one of "),
    (["--feature-level"], "argument --feature-level/--feature_level: expected one argument"),
    (["--bogus"], "unrecognized arguments: --bogus"),
    (["ARGMIN", "CLIP"], "unrecognized arguments: CLIP"),
])
def test_bad_arguments_are_one_line_and_status_2(capsys: pytest.CaptureFixture[str], args: list[str],
                                                 error: str) -> None:
    try:
        status = main(["support", *args])
    except SystemExit as exit_:  # argparse's own errors leave through SystemExit
        status = exit_.code
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert err.startswith(f"opendml support: error: {error}") and err.count("\n") == 1, err


def test_python_dash_m(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-m", "opendml", "support", "DML_OPERATOR_ARGMIN", "--feature-level", "3_0"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, check=False)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.splitlines()[0] == "ARGMIN (introduced at 3_0), at feature level 3_0: the row from 3_0"
    failed = subprocess.run([sys.executable, "-m", "opendml", "support", "NOPE"], capture_output=True, text=True,
                            env=env, cwd=tmp_path, check=False)
    assert failed.returncode == 2 and failed.stdout == "" and len(failed.stderr.splitlines()) == 1
