"""``opendml dispatch`` on hostile input: never a traceback, no partial or misplaced output, bounded memory
and time, and clear messages. Most tests run the real command in process (``opendml.cli.main``); a few
run it as ``python -m opendml`` to see exit statuses and stderr exactly."""

from __future__ import annotations

import json
import math
import os
import stat
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from dispatch_helpers import run_dispatch, write_model

from opendml.backends import cpu_kernels
from opendml.cli import main
from opendml.dispatch import Runner, load_model, make_device
from opendml.dispatch.errors import ModelError
from opendml.dispatch.outputs import StagedFiles
from opendml.dispatch.reader import MAX_DEPTH, parse_json
from opendml.dispatch.resources import Resource

PREFIX = "opendml dispatch: error: "
F32_9 = {"DataType": "FLOAT32", "Sizes": [9]}
CLIP = {"clip": {"type": "ELEMENT_WISE_CLIP", "desc": {"InputTensor": F32_9, "OutputTensor": F32_9, "Min": -1, "Max": 1}}}
A = {"initialValuesDataType": "FLOAT32", "initialValues": [-4, -3, -2, -1, 0, 1, 2, 3, 4]}


def _model(commands: list, resources: dict | None = None, dispatchables: dict | None = None) -> dict:
    return {"resources": resources or {"A": A}, "dispatchables": CLIP if dispatchables is None else dispatchables,
            "commands": commands}


def _write(name: str, resource: str = "A") -> dict:
    return {"type": "writeFile", "resource": resource, "targetPath": name}


def _fails(capsys: pytest.CaptureFixture[str], *args: str | Path) -> str:
    """Run ``opendml dispatch ARGS`` in process; it must fail with one line and status 2: that line's message."""
    status = main(["dispatch", "--backend", "cpu", *map(str, args)])
    err = capsys.readouterr().err
    assert status == 2, err
    assert err.count("\n") == 1 and err.startswith(PREFIX), err
    return err[len(PREFIX):-1]


def _runs(capsys: pytest.CaptureFixture[str], *args: str | Path) -> str:
    status = main(["dispatch", "--backend", "cpu", *map(str, args)])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return captured.out


def _usage_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """A command-line mistake: exit status 2 and exactly one line on stderr."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert err.count("\n") == 1, err
    return err


# ---- no traceback, ever --------------------------------------------------------------------------------

def test_deep_nesting_is_refused_before_the_parser_recurses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"resources": {"a": {"initialValues": ' + "[" * 100_000 + "]" * 100_000 + "}}}")
    message = _fails(capsys, path)
    column = len('{"resources": {"a": {"initialValues": ') + MAX_DEPTH - 2  # 3 braces, then the 254th bracket
    assert message == (f"{path}:1:{column}: invalid JSON: arrays and objects must nest at most 256 levels deep; "
                       f"got level 257 here.")


def test_nesting_up_to_the_limit_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """256 levels parse: the model is then refused for what the values are, not for their depth."""
    inner = MAX_DEPTH - 4  # the model, resources, the resource and the array around the values take 4
    path = tmp_path / "m.json"
    path.write_text('{"resources": {"a": {"initialValuesDataType": "FLOAT32", "initialValues": ['
                    + "[" * inner + "]" * inner + "]}}, \"dispatchables\": {}, \"commands\": []}")
    assert _fails(capsys, path).startswith("resources.a.initialValues[0]: must be a number")


def test_nul_bytes_in_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = write_model(tmp_path / "m.json", _model([], {"A": {"initialValues": {"sourcePath": "x\u0000.npy"}}}))
    assert _fails(capsys, source) == (
        'resources.A.initialValues.sourcePath: must not contain a NUL character; got "x\\u0000.npy".')
    target = write_model(tmp_path / "t.json", _model([_write("y\u0000.npy")]))
    assert _fails(capsys, target, "--output-path", tmp_path).startswith(
        "commands[0].targetPath: must not contain a NUL character; got ")
    assert _fails(capsys, tmp_path / "m\u0000.json") == (
        f'model: must not contain a NUL character; got "{tmp_path}/m\\u0000.json".')
    err = _usage_error(capsys, ["dispatch", "--example", "clip", "--output-path", "out\u0000"])
    assert err == f'{PREFIX}argument --output-path/--output_path: must not contain a NUL character; got "out\\u0000".\n'


def test_npz_named_npy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    np.savez(tmp_path / "x.npz", x=np.zeros(9, np.float32))
    (tmp_path / "x.npz").rename(tmp_path / "x.npy")
    path = write_model(tmp_path / "m.json", _model([], {"A": {"initialValues": {"sourcePath": "x.npy"}}}))
    assert _fails(capsys, path) == (f"resources.A.initialValues.sourcePath: must name a .npy file; got "
                                    f"{tmp_path / 'x.npy'}, an .npz archive (a zip file).")


def test_npy_files_that_are_not(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Not a .npy file, a truncated one, one of an unsupported type, a pipe: each one line."""
    (tmp_path / "text.npy").write_text("hello")
    np.save(tmp_path / "short.npy", np.zeros(100, np.float32))
    with open(tmp_path / "short.npy", "r+b") as file:
        file.truncate(200)
    np.save(tmp_path / "complex.npy", np.zeros(3, np.complex64))
    os.mkfifo(tmp_path / "pipe.npy")
    expected = {
        "text.npy": f"must name a .npy file; got {tmp_path / 'text.npy'}, which does not start as one.",
        "short.npy": f"must name a complete .npy file (400 bytes of values for shape (100,)); got 72 bytes in "
                     f"{tmp_path / 'short.npy'}.",
        "complex.npy": "must name a .npy file of a DirectML data type; got dtype complex64.",
        "pipe.npy": f"must name a regular file; got {tmp_path / 'pipe.npy'}, a named pipe.",
    }
    for name, message in expected.items():
        path = write_model(tmp_path / "m.json", _model([], {"A": {"initialValues": {"sourcePath": name}}}))
        assert _fails(capsys, path) == f"resources.A.initialValues.sourcePath: {message}"


def test_npy_files_are_read_as_numpy_saves_them(tmp_path: Path) -> None:
    """Big-endian and Fortran-ordered .npy files give the row-major little-endian bytes DirectML sees."""
    matrix = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    np.save(tmp_path / "big.npy", matrix.astype(">f4"))
    np.save(tmp_path / "fortran.npy", np.asfortranarray(matrix))
    resources = {"b": {"initialValues": {"sourcePath": "big.npy"}}, "f": {"initialValues": {"sourcePath": "fortran.npy"}}}
    model = load_model(write_model(tmp_path / "m.json", _model([], resources, {})), tmp_path)
    for name in ("b", "f"):
        assert model.resources[name].initial_values().tolist() == [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5]


def test_over_long_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    long_name = "x" * 300 + ".npy"
    path = write_model(tmp_path / "m.json", _model([], {"A": {"initialValues": {"sourcePath": long_name}}}))
    assert _fails(capsys, path) == ("resources.A.initialValues.sourcePath: must not hold a name longer than 255 "
                                    "bytes; got a name of 304 bytes.")
    path = write_model(tmp_path / "t.json", _model([_write("a/" * 2100 + "y.npy")]))
    assert _fails(capsys, path, "--output-path", tmp_path) == (
        "commands[0].targetPath: must be shorter than 4096 bytes; got 4205 bytes.")
    assert _fails(capsys, tmp_path / long_name).startswith("model: must not hold a name longer than 255 bytes")


def test_an_error_from_the_system_is_one_line_naming_the_resource(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """What no check prevents (memory running out here) is still one line with the JSON path."""
    def out_of_memory(self: Resource) -> np.ndarray:
        raise MemoryError

    monkeypatch.setattr(Resource, "initial_bytes", out_of_memory)
    path = write_model(tmp_path / "m.json", _model([{"type": "print", "resource": "A"}]))
    assert _fails(capsys, path) == "resources.A: needs more memory than this machine can give."


def test_an_internal_error_is_one_line_with_status_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    def broken(self: Runner) -> None:
        raise KeyError("surprise")

    monkeypatch.setattr(Runner, "run", broken)
    status = main(["dispatch", "--backend", "cpu", str(write_model(tmp_path / "m.json", _model([])))])
    assert status == 1
    assert capsys.readouterr().err == f"{PREFIX}internal error: KeyError: 'surprise'\n"


def test_subprocess_sees_one_line_and_status_2(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 5000 + "]" * 5000)
    result = run_dispatch(path, "--backend", "cpu")
    assert result.returncode == 2
    assert result.stderr == f"{PREFIX}{path}:1:257: invalid JSON: arrays and objects must nest at most 256 levels " \
                            f"deep; got level 257 here.\n"


# ---- command-line mistakes: one line --------------------------------------------------------------------

def test_bad_options_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert _usage_error(capsys, ["dispatch", "--bogus"]) == f"{PREFIX}unrecognized arguments: --bogus\n"
    assert _usage_error(capsys, ["dispatch", "-i", "x"]) == (
        f"{PREFIX}argument -i/--dispatch-iterations/--dispatch_iterations: must be an integer; got 'x'\n")
    assert _usage_error(capsys, ["dispatch", "--max-resource-bytes", "lots"]).startswith(
        f"{PREFIX}argument --max-resource-bytes: must be a number of bytes")
    assert _usage_error(capsys, []) == "opendml: error: the following arguments are required: COMMAND\n"


def test_bad_option_through_the_real_command() -> None:
    result = run_dispatch("--example", "clip", "--frobnicate")
    assert result.returncode == 2
    assert result.stderr == f"{PREFIX}unrecognized arguments: --frobnicate\n"


# ---- outputs --------------------------------------------------------------------------------------------

def _failing(commands_before: list) -> dict:
    """A model whose last command fails when it runs (its binding is too small), after ``commands_before``."""
    resources = {"A": A, "small": {"initialValuesDataType": "FLOAT32", "initialValues": [0, 0]}}
    dispatch = {"type": "dispatch", "dispatchable": "clip", "bindings": {"InputTensor": "A", "OutputTensor": "small"}}
    return _model([*commands_before, dispatch], resources)


def test_a_failed_run_leaves_no_file_and_no_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    (out / "kept").mkdir(parents=True)
    (out / "kept" / "old.npy").write_bytes(b"previous content")
    path = write_model(tmp_path / "m.json", _failing([_write("new/deeper/a.npy"), _write("kept/old.npy"),
                                                      _write("raw.bin")]))
    message = _fails(capsys, path, "--output-path", out)
    assert message.startswith("commands[3].bindings.OutputTensor: ")
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == ["kept", "kept/old.npy"]
    assert (out / "kept" / "old.npy").read_bytes() == b"previous content"


def test_files_appear_with_the_usual_permissions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_model(tmp_path / "m.json", _model([_write("a.npy"), _write("b.bin")]))
    old = os.umask(0o022)
    try:
        out = _runs(capsys, path, "--output-path", tmp_path / "out")
    finally:
        os.umask(old)
    for name in ("a.npy", "b.bin"):
        assert stat.S_IMODE((tmp_path / "out" / name).stat().st_mode) == 0o644
        assert f"Resource 'A' written to '{tmp_path / 'out' / name}'" in out
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "a.npy"), np.arange(-4, 5, dtype=np.float32))
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.npy", "b.bin"]  # no temporary left


@pytest.mark.parametrize("kind", ["named pipe", "symbolic link", "folder"])
def test_only_a_regular_file_is_replaced(tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str) -> None:
    out = tmp_path / "out"
    out.mkdir()
    target = out / "y.npy"
    if kind == "named pipe":
        os.mkfifo(target)
    elif kind == "symbolic link":
        (out / "real.npy").write_bytes(b"real")
        target.symlink_to("real.npy")
    else:
        target.mkdir()
    before = os.lstat(target)
    path = write_model(tmp_path / "m.json", _model([_write("y.npy")]))
    words = {"named pipe": "a named pipe", "symbolic link": "a symbolic link", "folder": "a folder"}[kind]
    assert _fails(capsys, path, "--output-path", out) == (
        f"commands[0].targetPath: must name a regular file or a new one; got {target}, {words}.")
    after = os.lstat(target)
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)


def test_the_target_is_checked_again_when_files_are_put_in_place(tmp_path: Path) -> None:
    """A target that became something else while the model ran is refused, not replaced."""
    files = StagedFiles()
    files.stage(tmp_path / "a.npy", "commands[0].targetPath", "A", lambda f: f.write(b"a"))
    os.mkfifo(tmp_path / "a.npy")
    with pytest.raises(ModelError, match=r"^commands\[0\]\.targetPath: must name a regular file or a new one"):
        files.commit()
    files.discard()
    assert stat.S_ISFIFO(os.lstat(tmp_path / "a.npy").st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["a.npy"]


def test_a_failed_commit_restores_what_it_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.npy").write_bytes(b"old a")
    files = StagedFiles()
    files.stage(tmp_path / "a.npy", "commands[0].targetPath", "A", lambda f: f.write(b"new a"))
    files.stage(tmp_path / "b.npy", "commands[1].targetPath", "B", lambda f: f.write(b"new b"))
    real_replace = os.replace

    def replace(source: os.PathLike[str], target: os.PathLike[str]) -> None:
        if Path(target).name == "b.npy":
            raise PermissionError(13, "Permission denied")
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(ModelError) as caught:
        files.commit()
    monkeypatch.undo()
    files.discard()
    assert str(caught.value) == (f"commands[1].targetPath: must name a file that can be written; got "
                                 f"{tmp_path / 'b.npy'} (Permission denied).")
    assert [p.name for p in tmp_path.iterdir()] == ["a.npy"]
    assert (tmp_path / "a.npy").read_bytes() == b"old a"


def test_outputs_stay_inside_the_output_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, outside = tmp_path / "out", tmp_path / "outside"
    out.mkdir()
    outside.mkdir()
    (out / "link").symlink_to(outside)
    absolute = str(outside / "abs.npy")
    cases = {
        absolute: f'must be relative to the output folder (an absolute path needs --allow-outside-output-path); '
                  f'got "{absolute}".',
        "../up.npy": f'must stay inside the output folder {out} (--allow-outside-output-path allows it); got '
                     f'"../up.npy", which leads to {tmp_path / "up.npy"}.',
        "link/x.npy": f'must stay inside the output folder {out} (--allow-outside-output-path allows it); got '
                      f'"link/x.npy", which leads to {outside / "x.npy"}.',
    }
    for target, message in cases.items():
        path = write_model(tmp_path / "m.json", _model([_write(target)]))
        assert _fails(capsys, path, "--output-path", out) == f"commands[0].targetPath: {message}"
    assert not list(outside.iterdir()) and not (tmp_path / "up.npy").exists()
    path = write_model(tmp_path / "m.json", _model([_write(t) for t in cases]))
    _runs(capsys, path, "--output-path", out, "--allow-outside-output-path")
    assert sorted(p.name for p in outside.iterdir()) == ["abs.npy", "x.npy"]
    assert (tmp_path / "up.npy").exists()


def test_write_errors_name_the_target_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file.txt").write_text("not a folder")
    path = write_model(tmp_path / "m.json", _model([{"type": "print", "resource": "A"}, _write("file.txt/y.npy")]))
    assert _fails(capsys, path, "--output-path", tmp_path) == (
        f"commands[1].targetPath: must name a file that can be written; got {tmp_path / 'file.txt' / 'y.npy'} "
        f"(Not a directory).")


# ---- memory ---------------------------------------------------------------------------------------------

MB20 = 20_000_000


def _peak(action: Callable[[], object]) -> int:
    """The most memory Python and NumPy held at once while ``action`` ran, beyond what they held before."""
    tracemalloc.start()
    try:
        action()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_resource_is_checked_against_the_limit_before_allocation(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    huge = {"initialValuesDataType": "FLOAT64", "initialValues": {"valueCount": 4294967295, "value": 0}}
    path = write_model(tmp_path / "m.json", _model([], {"huge": huge}, {}))
    assert _fails(capsys, path) == ("resources.huge.initialValues.valueCount: must make a resource of at most "
                                    "4294967296 bytes (--max-resource-bytes raises the limit); got 34359738360 bytes.")
    sized = {"initialValuesDataType": "UINT8", "initialValues": [1], "sizeInBytes": 3 * 2**20}
    path = write_model(tmp_path / "m.json", _model([{"type": "print", "resource": "r"}], {"r": sized}, {}))
    assert _fails(capsys, path, "--max-resource-bytes", "2MiB").startswith(
        "resources.r.sizeInBytes: must make a resource of at most 2097152 bytes")
    assert "Resource 'r': 1\n" in _runs(capsys, path, "--max-resource-bytes", "3MiB")


@pytest.mark.parametrize("form", ["npy", "raw", "constant", "sequence"])
def test_loading_a_resource_costs_its_own_size(tmp_path: Path, form: str) -> None:
    count = MB20 // 4
    np.save(tmp_path / "x.npy", np.ones(count, np.float32))
    np.ones(count, np.float32).tofile(tmp_path / "x.bin")
    values = {"npy": {"sourcePath": "x.npy"}, "raw": {"sourcePath": "x.bin"},
              "constant": {"valueCount": count, "value": 1}, "sequence": {"valueCount": count, "valueStart": 1,
                                                                          "valueDelta": 0}}[form]
    path = write_model(tmp_path / "m.json", _model([], {"x": {"initialValuesDataType": "FLOAT32",
                                                              "initialValues": values}}, {}))
    models = []
    assert _peak(lambda: models.append(load_model(path, tmp_path))) < 2**20  # reading the model makes no values
    runner = Runner(models[0], make_device("cpu", "6_4"))
    assert _peak(runner.create_buffers) < 1.1 * MB20
    data = runner.buffers["x"].to_numpy().view(np.float32)
    assert data.shape == (count,) and data.min() == data.max() == 1


def test_print_streams_its_values(tmp_path: Path) -> None:
    count = MB20 // 8
    resources = {"r": {"initialValuesDataType": "FLOAT64", "initialValues": {"valueCount": count, "value": 0.25}}}
    model = load_model(write_model(tmp_path / "m.json", _model([{"type": "print", "resource": "r"}], resources, {})),
                       tmp_path)
    with open(tmp_path / "printed.txt", "w") as out:
        runner = Runner(model, make_device("cpu", "6_4"), out=out)
        runner.create_buffers()
        assert _peak(lambda: runner.run_command(model.commands[0])) < 0.5 * MB20
    text = (tmp_path / "printed.txt").read_text()
    assert text == "Resource 'r': " + ", ".join(["0.25"] * count) + "\n"


def test_model_errors_come_before_large_allocations(tmp_path: Path) -> None:
    """A description the device refuses is reported before a 200 MB resource is made."""
    big = {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 50_000_000, "value": 0}}
    model = load_model(write_model(tmp_path / "m.json", _model([], {"big": big})), tmp_path)
    runner = Runner(model, make_device("cpu", "2_1"))  # CLIP at 2_1 takes 4 dimensions only

    def run() -> None:
        with pytest.raises(ModelError, match=r"^dispatchables\.clip\.desc\.InputTensor: "):
            runner.run()

    assert _peak(run) < 2**20
    assert runner.buffers == {}


# ---- time -----------------------------------------------------------------------------------------------

def _reading_seconds(text: str, runs: int) -> float:
    """The fastest of ``runs`` readings of ``text``, each refused as invalid JSON."""
    best = math.inf
    for _ in range(runs):
        start = time.perf_counter()
        with pytest.raises(ModelError, match=r"^m\.json:\d+:\d+: invalid JSON: "):
            parse_json(text, "m.json")
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize(("head", "unit", "count", "tail"), [
    ('{"a": "', '\\"', 40_000, ""),  # an unterminated string full of escaped quotes
    ('{"a": [', "/*", 40_000, ""),  # unterminated comments
    ('{"a": [', "1, ", 26_000, "/* */ ,, ]"),  # a long array of commas with a comment near its end
    ('{"a": ', '"x", // y\n', 8_000, ""),
])
def test_reading_is_linear_in_the_size(head: str, unit: str, count: int, tail: str) -> None:
    """Under 0.1 s here (a quadratic scan of 78,000 characters takes seconds). Where one reading takes longer
    (a slow or busy machine), the growth decides, not the clock: four times the text takes about four times
    as long when reading is linear, sixteen times when it is quadratic."""
    text = head + unit * count + tail
    assert len(text) >= 78_000
    if _reading_seconds(text, 1) < 0.5:
        return
    quarter = head + unit * (count // 4) + tail
    assert _reading_seconds(text, 5) < 8 * _reading_seconds(quarter, 5) + 0.05


def test_relaxed_json_keeps_strings_and_positions() -> None:
    text = '{"a": [1, 2, /* c, ] */ ], // x\n "b": "//,]", "c": {"d": "\\"/*",},}'
    assert parse_json(text, "m.json") == {"a": [1, 2], "b": "//,]", "c": {"d": '"/*'}}
    with pytest.raises(ModelError) as caught:
        parse_json('{"a": 1, // comment\n "b": ,}', "m.json")
    assert str(caught.value) == "m.json:2:8: invalid JSON: Expecting value."  # the comma before "}" was blanked


# ---- messages -------------------------------------------------------------------------------------------

def test_json_messages_end_in_no_dangling_word(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.json"
    path.write_text('{"resources": {"a": "unterminated')
    assert _fails(capsys, path) == f"{path}:1:21: invalid JSON: Unterminated string starting here."
    path.write_text('{"resources": "tab\there"}')
    assert _fails(capsys, path) == f"{path}:1:19: invalid JSON: Invalid control character here."


def test_a_binding_error_names_the_resource(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_model(tmp_path / "m.json", _failing([]))
    assert _fails(capsys, path) == (
        "commands[0].bindings.OutputTensor: resource 'small' (8 bytes) from byte 0: ELEMENT_WISE_CLIP: "
        "OutputTensor.SizeInBytes must be at least TotalTensorSizeInBytes (36); got 8.")
    bindings = {"InputTensor": {"name": "A", "elementOffset": 9}, "OutputTensor": "A"}
    path = write_model(tmp_path / "m.json", _model([{"type": "dispatch", "dispatchable": "clip",
                                                      "bindings": bindings}]))
    assert _fails(capsys, path) == ("commands[0].bindings.InputTensor.elementOffset: must start the binding inside "
                                    "resource 'A' (36 bytes); got byte 36.")


# ---- the device is real -----------------------------------------------------------------------------------

def test_in_place_runs_unchanged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The hardened runner still runs a model end to end (CLIP in place, printed and written)."""
    dispatch = {"type": "dispatch", "dispatchable": "clip", "bindings": {"InputTensor": "A", "OutputTensor": "A"}}
    path = write_model(tmp_path / "m.json", _model([dispatch, {"type": "print", "resource": "A"}, _write("a.npy")]))
    out = _runs(capsys, path, "--output-path", tmp_path)
    assert "Resource 'A': -1, -1, -1, -1, 0, 1, 1, 1, 1\n" in out
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), np.clip(np.arange(-4, 5), -1, 1).astype(np.float32))


def test_schema_option_prints_a_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dispatch", "--schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert main(["dispatch", "--schema", "--example", "clip"]) == 2
    assert capsys.readouterr().err == f"{PREFIX}--schema takes no model or --example.\n"


# ---- the JSON schema ------------------------------------------------------------------------------------

def _rich_model() -> dict:
    """A model using every field and form the reader accepts (test_the_rich_model_uses_every_field keeps it so)."""
    f16 = {"DataType": "FLOAT16", "Sizes": [2, 2]}
    u8, f32 = {"DataType": "UINT8", "Sizes": [2, 2]}, {"DataType": "FLOAT32", "Sizes": [2, 2], "Strides": [0, 0]}
    long_form = {"Type": "DML_TENSOR_TYPE_BUFFER", "Desc": {
        "DataType": "DML_TENSOR_DATA_TYPE_FLOAT16", "Flags": "DML_TENSOR_FLAG_NONE", "DimensionCount": 2,
        "Sizes": [2, 2], "Strides": [2, 1], "TotalTensorSizeInBytes": 8, "GuaranteedBaseOffsetAlignment": 16}}
    return {
        "$schema": "./schema.json", "$comment": "every form",
        "resources": {
            "h": {"type": "buffer", "initialValuesDataType": "FLOAT16", "initialValues": [1, -2.5, "nan", "-INF"],
                  "initialValuesOffsetInBytes": 0, "sizeInBytes": 16},
            "c": {"initialValuesDataType": "DML_TENSOR_DATA_TYPE_FLOAT16", "initialValues": {"valueCount": 4, "value": 0}},
            "s": {"initialValuesDataType": "UINT8", "initialValues": {"valueCount": 4, "valueStart": 250, "valueDelta": 3}},
            "z": {"initialValuesDataType": "UINT8", "initialValues": [1]},
            "z4": {"initialValuesDataType": "UINT8", "initialValues": [0, 0, 0, 0]},
            "f": {"initialValues": {"sourcePath": "x.npy"}},
            "raw": {"initialValuesDataType": "FLOAT32", "initialValues": {"sourcePath": "x.bin"}},
            "i": {"initialValuesDataType": "INT64", "initialValues": {"valueCount": 2, "value": 0}},
            "f8": {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 8, "value": 0}},
        },
        "dispatchables": {
            "clip": {"type": "DML_OPERATOR_ELEMENT_WISE_CLIP", "executionFlags": ["ALLOW_HALF_PRECISION_COMPUTATION",
                                                                                  "DML_EXECUTION_FLAG_NONE"],
                     "dmlCompileType": "DmlCompileOp", "bindings": {},
                     "desc": {"InputTensor": {"Type": "BUFFER", **f16, "Flags": ["NONE"]}, "OutputTensor": long_form,
                              "ScaleBias": {"Scale": 2, "Bias": "nan"}, "Min": -1, "Max": "inf"}},
            "clip1": {"type": "ELEMENT_WISE_CLIP1", "executionFlags": "NONE", "Desc": {
                "InputTensor": f16, "OutputTensor": f16, "MinMaxDataType": "FLOAT16", "Min": {"UInt16": 15360},
                "Max": 2}},
            "threshold": {"type": "ELEMENT_WISE_THRESHOLD", "desc": {"InputTensor": f16, "OutputTensor": f16, "Min": 0}},
            "hard_sigmoid": {"type": "ACTIVATION_HARD_SIGMOID", "desc": {
                "InputTensor": f16, "OutputTensor": f16, "Alpha": 1, "Beta": 0}},
            "add": {"type": "ELEMENT_WISE_ADD", "desc": {"ATensor": f16, "BTensor": f16, "OutputTensor": f16}},
            "if": {"type": "ELEMENT_WISE_IF", "desc": {"ConditionTensor": {"DataType": "UINT8", "Sizes": [2, 2]},
                                                      "ATensor": f16, "BTensor": f16, "OutputTensor": f16}},
            "add1": {"type": "ELEMENT_WISE_ADD1", "desc": {"ATensor": f16, "BTensor": f16, "OutputTensor": f16,
                                                          "FusedActivation": {"Type": "ACTIVATION_LEAKY_RELU",
                                                                              "Alpha": 0.5}}},
            "qladd": {"type": "ELEMENT_WISE_QUANTIZED_LINEAR_ADD", "desc": {
                "ATensor": u8, "AScaleTensor": f32, "AZeroPointTensor": u8, "BTensor": u8, "BScaleTensor": f32,
                "BZeroPointTensor": u8, "OutputScaleTensor": f32, "OutputZeroPointTensor": u8, "OutputTensor": u8}},
            "prelu": {"type": "ACTIVATION_PARAMETERIZED_RELU", "desc": {
                "InputTensor": f16, "SlopeTensor": f16, "OutputTensor": f16}},
            "relu_grad": {"type": "ACTIVATION_RELU_GRAD", "desc": {
                "InputTensor": f16, "InputGradientTensor": f16, "OutputGradientTensor": f16}},
            "clip_grad": {"type": "ELEMENT_WISE_CLIP_GRAD", "desc": {
                "InputTensor": f16, "InputGradientTensor": f16, "OutputGradientTensor": f16, "Min": -1, "Max": 1}},
            "clip_grad1": {"type": "ELEMENT_WISE_CLIP_GRAD1", "desc": {
                "InputTensor": f16, "InputGradientTensor": f16, "OutputGradientTensor": f16,
                "MinMaxDataType": "FLOAT16", "Min": -1, "Max": 1}},
            "shrink": {"type": "ACTIVATION_SHRINK", "desc": {
                "InputTensor": f16, "OutputTensor": f16, "Bias": 0, "Threshold": 0}},
            "round": {"type": "DML_OPERATOR_ELEMENT_WISE_ROUND", "desc": {
                "InputTensor": f16, "OutputTensor": f16, "RoundingMode": "DML_ROUNDING_MODE_TOWARD_INFINITY"}},
            "is_infinity": {"type": "ELEMENT_WISE_IS_INFINITY", "desc": {
                "InputTensor": f16, "OutputTensor": {"DataType": "UINT8", "Sizes": [2, 2]}, "InfinityMode": 2}},
            "dequantize": {"type": "DML_OPERATOR_ELEMENT_WISE_DEQUANTIZE_LINEAR", "desc": {
                "InputTensor": {"DataType": "UINT8", "Sizes": [4]}, "ScaleTensor": {"DataType": "FLOAT32", "Sizes": [4]},
                "ZeroPointTensor": {"DataType": "UINT8", "Sizes": [4], "Strides": [0]},
                "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4]}}},
            "argmin": {"type": "ARGMIN", "desc": {"InputTensor": f16, "OutputTensor": {"DataType": "INT64", "Sizes": [2, 1]},
                                                  "AxisCount": 1, "Axes": [1], "AxisDirection": 1}},
            "argmax": {"type": "DML_OPERATOR_ARGMAX", "desc": {
                "InputTensor": f16, "OutputTensor": {"DataType": "INT64", "Sizes": [2, 1]}, "Axes": [1],
                "AxisDirection": "INCREASING", "NanPolicy": "NAN_POLICY_PROPAGATE"}},
            "dequantize4": {"type": "DML_OPERATOR_DEQUANTIZE", "desc": {
                "InputTensor": {"DataType": "UINT4", "Sizes": [8]}, "QuantizationType": "SCALE_ZERO_POINT",
                "QuantizationTensorCount": 2, "QuantizationTensors": [
                    {"DataType": "FLOAT32", "Sizes": [2]}, {"DataType": "UINT4", "Sizes": [2]}],
                "OutputTensor": {"DataType": "FLOAT32", "Sizes": [8]}}},
            "reduce": {"type": "DML_OPERATOR_REDUCE", "desc": {
                "Function": "DML_REDUCE_FUNCTION_SUM", "InputTensor": f16,
                "OutputTensor": {"DataType": "FLOAT16", "Sizes": [2, 1]}, "AxisCount": 1, "Axes": [1]}},
            "top_k1": {"type": "DML_OPERATOR_TOP_K1", "desc": {
                "InputTensor": f16, "OutputValueTensor": {"DataType": "FLOAT16", "Sizes": [2, 1]},
                "OutputIndexTensor": {"DataType": "UINT64", "Sizes": [2, 1]}, "Axis": 1, "K": 1,
                "AxisDirection": "DML_AXIS_DIRECTION_INCREASING"}},
            "softplus": {"type": "ACTIVATION_SOFTPLUS", "desc": {"InputTensor": f16, "OutputTensor": f16,
                                                              "Steepness": 2}},
            "swish": {"type": "ACTIVATION_SWISH", "desc": {"InputTensor": f16, "OutputTensor": f16,
                                                        "SigmoidInputScale": 1.5}},
            "scaled_elu": {"type": "ACTIVATION_SCALED_ELU", "desc": {"InputTensor": f16, "OutputTensor": f16,
                                                                  "Alpha": 1, "Gamma": 2}},
            "constant_pow": {"type": "ELEMENT_WISE_CONSTANT_POW", "desc": {"InputTensor": f16, "OutputTensor": f16,
                                                                        "Exponent": 2}},
            "pow": {"type": "ELEMENT_WISE_POW", "desc": {"InputTensor": f16, "ExponentTensor": f16,
                                                      "OutputTensor": f16}},
            "quantize": {"type": "ELEMENT_WISE_QUANTIZE_LINEAR", "desc": {
                "InputTensor": {"DataType": "FLOAT32", "Sizes": [4]},
                "ScaleTensor": {"DataType": "FLOAT32", "Sizes": [4], "Strides": [0]},
                "OutputTensor": {"DataType": "UINT8", "Sizes": [4]}}},
        },
        "commands": [
            {"type": "dispatch", "dispatchable": "clip", "bindings": {"InputTensor": "h", "OutputTensor": ["c"]},
             "threadGroupCount": [1, 1, 1]},
            {"type": "dispatch", "dispatchable": "clip1", "bindings": {
                "InputTensor": {"name": "c", "elementOffset": 0, "elementSizeInBytes": 2, "elementCount": 4},
                "OutputTensor": [{"name": "h"}]}},
            {"type": "dispatch", "dispatchable": "threshold", "bindings": {"InputTensor": "h", "OutputTensor": "h"}},
            {"type": "dispatch", "dispatchable": "hard_sigmoid", "bindings": {"InputTensor": "h", "OutputTensor": "h"}},
            {"type": "dispatch", "dispatchable": "round", "bindings": {"InputTensor": "h", "OutputTensor": "h"}},
            {"type": "dispatch", "dispatchable": "is_infinity", "bindings": {"InputTensor": "h", "OutputTensor": "z4"}},
            {"type": "dispatch", "dispatchable": "dequantize", "bindings": {
                "InputTensor": "s", "ScaleTensor": "raw", "ZeroPointTensor": "z", "OutputTensor": "f"}},
            {"type": "dispatch", "dispatchable": "argmin", "bindings": {"InputTensor": "h", "OutputTensor": "i"}},
            {"type": "print", "resource": "h", "verbose": True},
            {"type": "writeFile", "resource": "i", "targetPath": "i.npy", "dimensions": [2, 1]},
            {"type": "dispatch", "dispatchable": "argmax", "bindings": {"InputTensor": "h", "OutputTensor": "i"}},
            {"type": "dispatch", "dispatchable": "reduce", "bindings": {"InputTensor": "h", "OutputTensor": "c"}},
            {"type": "dispatch", "dispatchable": "top_k1", "bindings": {
                "InputTensor": "h", "OutputValueTensor": "c", "OutputIndexTensor": "i"}},
            {"type": "dispatch", "dispatchable": "quantize", "bindings": {
                "InputTensor": "f", "ScaleTensor": "raw", "OutputTensor": "s"}},
            {"type": "dispatch", "dispatchable": "dequantize4", "bindings": {
                "InputTensor": "s", "QuantizationTensors": ["raw", {"name": "z4"}], "OutputTensor": "f8"}},
            {"type": "dispatch", "dispatchable": "shrink", "bindings": {"InputTensor": "h", "OutputTensor": "h"}},
            {"type": "dispatch", "dispatchable": "add", "bindings": {"ATensor": "h", "BTensor": "h", "OutputTensor": "h"}},
            {"type": "dispatch", "dispatchable": "if", "bindings": {
                "ConditionTensor": "z4", "ATensor": "h", "BTensor": "c", "OutputTensor": "h"}},
        ],
    }


def _read_rich_model(tmp_path: Path) -> Path:
    np.save(tmp_path / "x.npy", np.zeros(4, np.float32))
    np.full(4, 0.5, np.float32).tofile(tmp_path / "x.bin")
    return write_model(tmp_path / "rich.json", _rich_model())


def _example_models() -> list[Path]:
    """The bundled examples, and DirectML's own DxDispatch models for opendml's operators."""
    from dispatch_helpers import DATA

    from opendml.dispatch.catalog import examples_dir

    return sorted(examples_dir().glob("*.json")) + sorted((DATA / "dxdispatch").glob("*.json"))


def test_the_rich_model_is_read_and_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # Its operators run on the NumPy lowering: what is tested is the reading (every field of the model); a
    # Numba kernel of each (QUANTIZED_LINEAR_ADD's alone compiles for 30 s cold) runs in each operator's tests.
    monkeypatch.setattr(cpu_kernels, "_chosen", cpu_kernels.load("numpy"))
    out = _runs(capsys, _read_rich_model(tmp_path), "--output-path", tmp_path)
    assert "Resource 'h':\n" in out
    assert np.load(tmp_path / "i.npy").shape == (2, 1)


def _fields_used(value: object, found: set[str]) -> None:
    if isinstance(value, dict):
        found.update(value)
        for item in value.values():
            _fields_used(item, found)
    elif isinstance(value, list):
        for item in value:
            _fields_used(item, found)


def test_the_rich_model_uses_every_field() -> None:
    """Every field of the reader's tables appears in the rich model, so the schema tests below see it."""
    from opendml.dispatch import commands, descriptions, dispatchables, model, operators, resources

    tables = [model.MODEL_FIELDS, resources.RESOURCE_FIELDS, resources.CONSTANT_FIELDS, resources.SEQUENCE_FIELDS,
              resources.FILE_FIELDS, dispatchables.DISPATCHABLE_FIELDS, descriptions.TENSOR_FIELDS, commands.BINDING_FIELDS,
              *(fields for fields, _ in commands.COMMAND_FIELDS.values()),
              *([f.name for f in op.fields] for op in operators.OPERATORS)]
    used: set[str] = set()
    _fields_used(_rich_model(), used)
    assert {field for table in tables for field in table} - used == set()


def _resolve(schema: dict, root: dict) -> dict:
    while "$ref" in schema:
        schema = root["$defs"][schema["$ref"].removeprefix("#/$defs/")]
    return schema


def _branches(schema: dict, root: dict) -> list[dict]:
    """The schema and every schema it combines (anyOf, oneOf, allOf, then, else), references resolved."""
    schema = _resolve(schema, root)
    found = [schema]
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key, []):
            found += _branches(sub, root)
    for key in ("then", "else"):
        if isinstance(schema.get(key), dict):
            found += _branches(schema[key], root)
    return found


def _unknown_keys(value: object, schema: dict, root: dict, at: str) -> list[str]:
    """Keys of ``value`` that no branch of ``schema`` lists as a property (a walk without a validator)."""
    branches = _branches(schema, root)
    problems = []
    if isinstance(value, dict):
        for key, item in value.items():
            subs = [b["properties"][key] for b in branches if key in b.get("properties", {})]
            subs += [b["additionalProperties"] for b in branches if isinstance(b.get("additionalProperties"), dict)]
            if any(key.startswith("$") for b in branches if "patternProperties" in b):
                continue
            problems += _fewest(item, subs, root, f"{at}.{key}") if subs else [f"{at}.{key}"]
    elif isinstance(value, list):
        items = [b["items"] for b in branches if isinstance(b.get("items"), dict)]
        for k, item in enumerate(value):
            problems += _fewest(item, items, root, f"{at}[{k}]")
    return problems


def _fewest(value: object, candidates: list[dict], root: dict, at: str) -> list[str]:
    """The problems of the candidate schema that fits ``value`` best (none if one fits)."""
    return min((_unknown_keys(value, sub, root, at) for sub in candidates), key=len, default=[])


@pytest.mark.parametrize("path", [*_example_models(), "rich"], ids=lambda p: getattr(p, "name", p))
def test_every_field_of_the_models_is_in_the_schema(tmp_path: Path, path: Path | str) -> None:
    from opendml.dispatch.schema import model_schema

    document = _rich_model() if path == "rich" else json.loads(Path(path).read_text())
    schema = model_schema()
    assert _unknown_keys(document, schema, schema, "") == []


def test_the_walk_finds_a_field_the_schema_lacks() -> None:
    from opendml.dispatch.schema import model_schema

    schema = model_schema()
    del schema["$defs"]["bufferTensorDesc"]["properties"]["Strides"]
    assert _unknown_keys(_rich_model(), schema, schema, "") == [
        ".dispatchables.clip.desc.OutputTensor.Desc.Strides"]


@pytest.fixture
def validator() -> object:
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema validates the schema and models against it")
    from opendml.dispatch.schema import model_schema

    schema = model_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("path", [*_example_models(), "rich"], ids=lambda p: getattr(p, "name", p))
def test_the_models_validate_against_the_schema(validator: object, path: Path | str) -> None:
    document = _rich_model() if path == "rich" else json.loads(Path(path).read_text())
    assert [error.message for error in validator.iter_errors(document)] == []  # type: ignore[attr-defined]


@pytest.mark.parametrize(("where", "change"), [
    ("model", lambda m: m.update(resource={})),
    ("resource", lambda m: m["resources"]["h"].update(initialValue=1)),
    ("no data type", lambda m: m["resources"]["c"].pop("initialValuesDataType")),
    ("raw file", lambda m: m["resources"]["raw"].pop("initialValuesDataType")),
    ("operator", lambda m: m["dispatchables"]["clip"].update(type="DML_OPERATOR_GEMM")),
    ("desc field", lambda m: m["dispatchables"]["threshold"]["desc"].update(Max=1)),
    ("missing desc field", lambda m: m["dispatchables"]["threshold"]["desc"].pop("Min")),
    ("desc and Desc", lambda m: m["dispatchables"]["threshold"].update(Desc={})),
    ("tensor field", lambda m: m["dispatchables"]["threshold"]["desc"]["InputTensor"].update(Stride=[1])),
    ("beside Desc", lambda m: m["dispatchables"]["clip"]["desc"]["OutputTensor"].update(DataType="FLOAT16")),
    ("data type", lambda m: m["dispatchables"]["threshold"]["desc"]["InputTensor"].update(DataType="FLOAT8")),
    ("axis direction", lambda m: m["dispatchables"]["argmin"]["desc"].update(AxisDirection="UP")),
    ("nan policy", lambda m: m["dispatchables"]["argmax"]["desc"].update(NanPolicy="SOMETIMES")),
    ("quantize field", lambda m: m["dispatchables"]["quantize"]["desc"].update(Axis=0)),
    ("scalar member", lambda m: m["dispatchables"]["clip1"]["Desc"].update(Max={"Int32": 1, "Int8": 2})),
    ("command", lambda m: m["commands"].append({"type": "show", "resource": "h"})),
    ("command field", lambda m: m["commands"][5].update(targetPath="x")),
    ("binding field", lambda m: m["commands"][1]["bindings"]["InputTensor"].update(offset=0)),
    ("two bindings", lambda m: m["commands"][0]["bindings"].update(InputTensor=["h", "c"])),
])
def test_what_the_reader_refuses_the_schema_refuses(tmp_path: Path, validator: object, where: str,
                                                     change: Callable[[dict], None]) -> None:
    document = _rich_model()
    change(document)
    assert list(validator.iter_errors(document)), where  # type: ignore[attr-defined]
    _read_rich_model(tmp_path)
    with pytest.raises(ModelError):
        from opendml.dispatch.model import parse_model

        parse_model(parse_json(json.dumps(document), "m.json"), tmp_path, tmp_path)


def test_every_name_the_schema_lists_is_read() -> None:
    """Enum spellings in the schema are those opendml's parsers take, and every member is listed."""
    from opendml.dispatch.dispatchables import parse_operator_type
    from opendml.dispatch.schema import model_schema

    defs = model_schema()["$defs"]
    parsers = {"dataType": dml_parse("DataType"), "tensorFlag": dml_parse("TensorFlags"),
               "executionFlag": dml_parse("ExecutionFlags"), "axisDirection": dml_parse("AxisDirection"),
               "nanPolicy": dml_parse("NanPolicy"),
               "operatorType": lambda name: parse_operator_type(name, "type").name}
    for name, parse in parsers.items():
        spelled = defs[name]["enum"] if "enum" in defs[name] else defs[name]["anyOf"][0]["enum"]
        members = {str(parse(spelling)) for spelling in spelled}
        assert len(spelled) == 2 * len(members)  # each member with and without its prefix
    import opendml

    assert {str(opendml.DataType.parse(s)) for s in defs["dataType"]["enum"]} == {
        str(t) for t in opendml.DataType if t is not opendml.DataType.UNKNOWN}


def dml_parse(enum_name: str) -> Callable[[str], object]:
    import opendml

    return getattr(opendml, enum_name).parse
