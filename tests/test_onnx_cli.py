"""``opendml onnx MODEL.onnx --input NAME=FILE.npy ...``: called as a function and as a module."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnx", reason="the ONNX front end needs the onnx extra (pip install 'opendml[onnx]')")

import onnx
from onnx import helper
from onnx_models import model, reference

import opendml as dml
from opendml.onnx.cli import main, register

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """A two-output model (DequantizeLinear then ArgMin), an input for it, and the expected outputs."""
    nodes = [helper.make_node("DequantizeLinear", ["x", "scale"], ["values"]),
             helper.make_node("ArgMin", ["values"], ["out/index:0"], axis=1)]
    built = model(nodes, {"x": np.zeros((2, 5), np.int8)}, ["values", "out/index:0"], 21,
                  {"scale": np.float32(0.5)})
    x = np.array([[3, -7, 2, -7, 0], [100, 50, -128, 127, 1]], np.int8)
    paths = {"model": tmp_path / "model.onnx", "x": tmp_path / "x.npy", "out": tmp_path / "out"}
    onnx.save(built, paths["model"])
    np.save(paths["x"], x)
    expected = reference(built, {"x": x})
    np.save(tmp_path / "expected_values.npy", expected["values"])
    np.save(tmp_path / "expected_index.npy", expected["out/index:0"])
    return paths


def test_outputs_saved_to_a_folder(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    status = main([str(files["model"]), "--input", f"x={files['x']}", "--output-dir", str(files["out"])])
    assert status == 0
    folder = files["model"].parent
    np.testing.assert_array_equal(np.load(files["out"] / "values.npy"), np.load(folder / "expected_values.npy"))
    np.testing.assert_array_equal(np.load(files["out"] / "out_index_0.npy"), np.load(folder / "expected_index.npy"))
    out = capsys.readouterr().out
    assert f"out/index:0: int64 [2, 1] -> {files['out'] / 'out_index_0.npy'}" in out


def test_outputs_printed_and_progress_reported(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(files["model"]), "-i", f"x={files['x']}", "--verbose", "--feature-level", "6_2"]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0] == "values: float32 [2, 5]"
    assert "out/index:0: int64 [2, 1]\n[[1]\n [2]]" in captured.out
    assert captured.err.splitlines() == ["[1/2] DequantizeLinear node #0", "[2/2] ArgMin node #1"]


@pytest.mark.parametrize(("arguments", "message"), [
    (["{model}"], "ONNX model: inputs must give every graph input without an initializer; got none for x."),
    (["{model}", "--input", "x"], "argument --input: must be NAME=FILE.npy; got 'x'"),
    (["{model}", "--input", "x={folder}/nothing.npy"], "argument --input: '{folder}/nothing.npy' must be a "
                                                       "readable .npy file; got "),
    (["{folder}/nothing.onnx", "--input", "x={x}"], "ONNX model: Path must name a readable ONNX file; got "),
    (["{model}", "--input", "x={x}", "--backend", "tpu"], "argument --backend: invalid choice: 'tpu'"),
    (["{model}", "--input", "x={x}", "--feature-level", "9_9"], "Device: feature_level must be one of "),
    (["{model}", "--input", "y={x}"], "ONNX model: inputs must name graph inputs (x); got y."),
    (["{model}", "--bogus"], "unrecognized arguments: --bogus"),
])
def test_errors_are_one_line_with_status_2(files: dict[str, Path], capsys: pytest.CaptureFixture[str],
                                          arguments: list[str], message: str) -> None:
    names = {"model": files["model"], "x": files["x"], "folder": files["model"].parent}
    status = main([a.format(**names) for a in arguments])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1 and err.startswith("opendml onnx: error: ")
    assert message.format(**names) in err


def test_unsupported_model_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nodes = [helper.make_node("LpNormalization", ["x"], ["s"]), helper.make_node("Clip", ["x", "s"], ["y"])]
    path = tmp_path / "bad.onnx"
    onnx.save(model(nodes, {"x": np.zeros(3, np.float32)}, ["y"], 13), path)
    np.save(tmp_path / "x.npy", np.zeros(3, np.float32))
    assert main([str(path), "--input", f"x={tmp_path / 'x.npy'}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("opendml onnx: error: ONNX model: every node must map onto opendml's operators; "
                          "got 3 problems: LpNormalization node #0: Operator must be one of ")
    assert err.count("\n") == 1


def test_cuda_backend(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """Runs where a CUDA GPU is usable; elsewhere the one-line error says why not."""
    try:
        dml.Device("cuda")
    except dml.OpenDMLError as error:
        assert main([str(files["model"]), "--input", f"x={files['x']}", "--backend", "cuda"]) == 2
        assert capsys.readouterr().err == f"opendml onnx: error: {error}\n"
        return
    status = main([str(files["model"]), "--input", f"x={files['x']}", "--backend", "cuda", "-o", str(files["out"])])
    assert status == 0
    np.testing.assert_array_equal(np.load(files["out"] / "out_index_0.npy"),
                                  np.load(files["model"].parent / "expected_index.npy"))


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "--input NAME=FILE.npy" in capsys.readouterr().out


def test_as_a_module(files: dict[str, Path]) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "opendml.onnx.cli", str(files["model"]), "--input",
                           f"x={files['x']}", "-o", str(files["out"])], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    np.testing.assert_array_equal(np.load(files["out"] / "values.npy"),
                                  np.load(files["model"].parent / "expected_values.npy"))
    failed = subprocess.run([sys.executable, "-m", "opendml.onnx.cli", str(files["model"])],
                            capture_output=True, text=True, env=env)
    assert failed.returncode == 2
    assert failed.stderr.startswith("python -m opendml.onnx.cli: error: ONNX model: inputs must give")
    assert "Traceback" not in failed.stderr


def test_as_a_subcommand_of_the_opendml_command(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="opendml")
    register(parser.add_subparsers(required=True))
    args = parser.parse_args(["onnx", str(files["model"]), "--input", f"x={files['x']}", "-o", str(files["out"])])
    assert args.handler(args) == 0
    assert (files["out"] / "values.npy").exists()
    args = parser.parse_args(["onnx", str(files["model"]), "--input", "x"])
    assert args.handler(args) == 2
    assert capsys.readouterr().err == "opendml onnx: error: argument --input: must be NAME=FILE.npy; got 'x'\n"
    with pytest.raises(SystemExit) as exited:
        parser.parse_args(["onnx", "--bogus"])
    assert exited.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        "opendml onnx: error: the following arguments are required: MODEL.onnx"]


@pytest.mark.parametrize(("name", "contents", "read_as"), [
    ("model.json", b'{"a": 1}', "json (from its extension '.json'): ParseError: "),
    ("model.textproto", b"garbage\n", "textproto (from its extension '.textproto'): ParseError: "),
    ("model.onnxtxt", b"not a model <", "onnxtxt (from its extension '.onnxtxt'): ParseError: "),
    ("model.onnx", b"junk\n", "protobuf: DecodeError: "),
], ids=["json", "textproto", "onnxtxt", "onnx"])
def test_an_unreadable_model_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str,
                                              contents: bytes, read_as: str) -> None:
    path = tmp_path / name
    path.write_bytes(contents)
    assert main([str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"opendml onnx: error: ONNX model: Path must name a readable ONNX file; got {str(path)!r} "
                          f"read as {read_as}")
    assert err.count("\n") == 1


@pytest.mark.parametrize("name", ["model.json", "model.textproto"])
def test_the_opendml_command_on_an_unreadable_model(tmp_path: Path, name: str) -> None:
    """``opendml onnx model.json`` in a process of its own: exit status 2, one line, no traceback."""
    path = tmp_path / name
    path.write_text('{"graph": 3}' if name.endswith(".json") else "graph: 3\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "opendml", "onnx", str(path)], capture_output=True, text=True,
                          env=env)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"opendml onnx: error: ONNX model: Path must name a readable ONNX file; got "
                                  f"{str(path)!r} read as {path.suffix[1:]} (from its extension '{path.suffix}'): "
                                  "ParseError: ")
