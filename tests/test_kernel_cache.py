"""The kernel cache directory: where it is, what its name fingerprints, Numba's cache of the kernels inside
it, concurrent writers, the silent fallback, and ``opendml cache info`` / ``opendml cache clear``."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from opendml import cli
from opendml.backends import cpu_kernels
from opendml.kernels import cache
from tests.limits import HANG_SECONDS

NUMBA = pytest.mark.skipif(not cpu_kernels.numba_available(), reason="Numba is not installed (the opendml[fast] extra)")
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def cache_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """OPENDML_CACHE_DIR set to a new directory for this test."""
    root = tmp_path / "cache root"
    monkeypatch.setenv(cache.ENV_CACHE_DIR, str(root))
    return root


def test_the_root_is_the_setting_else_the_users_cache_directory(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cache.ENV_CACHE_DIR, str(tmp_path / "mine"))
    assert cache.root() == tmp_path / "mine"
    monkeypatch.delenv(cache.ENV_CACHE_DIR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.root() == tmp_path / "xdg" / "opendml"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.root() == tmp_path / "home" / ".cache" / "opendml"


def test_the_users_cache_directory_is_the_platforms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where platformdirs is installed (a dependency), the root is its user cache directory for opendml: on macOS
    ~/Library/Caches/opendml, on Windows %LOCALAPPDATA%\\opendml\\Cache (the XDG rule of the test above on Linux)."""
    platformdirs = pytest.importorskip("platformdirs")
    monkeypatch.delenv(cache.ENV_CACHE_DIR, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)  # recent platformdirs honour it on macOS too
    # Each platform's rules, whichever this machine is; Windows's only run on Windows (they call its API).
    expected = {"macos.MacOS": tmp_path / "home" / "Library" / "Caches" / "opendml",
                "unix.Unix": tmp_path / "home" / ".cache" / "opendml"}
    if sys.platform == "win32":
        expected["windows.Windows"] = Path(os.environ["LOCALAPPDATA"]) / "opendml" / "Cache"
    for name, path in expected.items():
        module, rules = name.split(".")
        monkeypatch.setattr(platformdirs, "PlatformDirs", getattr(importlib.import_module(f"platformdirs.{module}"),
                                                                  rules))
        assert cache.root() == path, name


def test_without_platformdirs_the_root_follows_the_xdg_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "platformdirs", None)  # an install without it: importing it fails
    monkeypatch.delenv(cache.ENV_CACHE_DIR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.root() == tmp_path / "xdg" / "opendml"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.root() == tmp_path / "home" / ".cache" / "opendml"


def test_the_fingerprint_covers_every_helper_module() -> None:
    names = {p.relative_to(cache.KERNEL_PACKAGE.parent.parent).as_posix() for p in cache.helper_sources()}
    for module in ("backends/cpu_kernels/jit.py", "backends/cpu_kernels/drivers.py", "backends/cpu_kernels/halves.py",
                   "backends/cpu_kernels/codegen.py", "backends/cpu_kernels/vectors.py", "expr.py",
                   "kernels/cache.py", "kernels/spec.py"):
        assert module in names


def test_the_fingerprint_changes_when_a_helper_module_changes(tmp_path: Path) -> None:
    copies = []
    for k, source in enumerate(cache.helper_sources()):
        copy = tmp_path / str(k) / source.name
        copy.parent.mkdir()
        shutil.copyfile(source, copy)
        copies.append(copy)
    assert cache.fingerprint(copies) == cache.current_fingerprint()  # the copies stand for the real modules
    tables = [copy for copy in copies if copy.suffix == ".npz"]  # the hard cases frozen into compiled functions
    assert tables
    for copy in (copies[0], copies[-1], tables[0]):
        original = copy.read_bytes()
        copy.write_bytes(original + b"\n# an edit\n")
        changed = cache.fingerprint(copies)
        assert changed != cache.current_fingerprint() and len(changed) == 16
        copy.write_bytes(original)
    assert cache.fingerprint(copies) == cache.current_fingerprint()


def test_the_directory_is_named_by_the_fingerprint_under_the_root(cache_root: Path) -> None:
    directory = cache.directory()
    assert directory == cache_root / f"kernels-{cache.current_fingerprint()}" and directory.is_dir()


def test_an_unwritable_root_falls_back_to_a_temporary_directory_silently(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a file"
    blocker.write_text("not a directory")
    monkeypatch.setenv(cache.ENV_CACHE_DIR, str(blocker / "cache"))  # cannot be made, even by root
    directory = cache.directory()  # warnings are errors in the tests: there must be none
    assert directory.name == f"kernels-{cache.current_fingerprint()}"
    assert not directory.is_relative_to(blocker) and directory.is_dir()


def test_writers_of_one_file_at_once_leave_it_whole(tmp_path: Path) -> None:
    target = tmp_path / "generated" / "module.py"
    text = "x = 1\n" * 100_000
    errors: list[BaseException] = []

    def write() -> None:
        try:
            for _ in range(5):
                cache.write_text(target, text)
                assert target.read_text() == text
        except BaseException as error:  # reported below, in the test's thread
            errors.append(error)

    workers = [threading.Thread(target=write) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert not errors and target.read_text() == text
    assert [p.name for p in target.parent.iterdir()] == ["module.py"]  # no temporary file left behind


def _run(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], env={**os.environ, **env, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=HANG_SECONDS)


@NUMBA
def test_processes_generating_one_kernel_at_once_all_run_it(cache_root: Path) -> None:
    code = ("import numpy as np, opendml as dml\n"
            "x = np.arange(-50, 50, dtype=np.int32)\n"
            "assert (np.asarray(dml.clip(x, -7, 9)) == np.clip(x, -7, 9)).all()\n")
    env = {cache.ENV_CACHE_DIR: str(cache_root), "OPENDML_CPU_KERNELS": "numba"}
    runs = [subprocess.Popen([sys.executable, "-c", code], env={**os.environ, **env, "PYTHONPATH": str(ROOT)},
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    for run in runs:
        _, err = run.communicate(timeout=HANG_SECONDS)
        assert run.returncode == 0, err
    generated = list(cache_root.glob("kernels-*/generated/elementwise_*.py"))
    assert len(generated) == 1


@NUMBA
def test_processes_saving_two_specialisations_of_one_kernel_at_once_never_swap_their_code(tmp_path: Path) -> None:
    """Numba's index of a function's specialisations is read, given an entry and written back, and then the
    entry's data file is written. Two processes (pytest-xdist's workers) that both read the index before
    either wrote it: each files its own code under a data file name of its own, so whatever the index says
    afterwards, no signature is given the other's code."""
    from numba.core import caching

    cache.use_for_numba()
    folder = tmp_path / f"kernels-{'0' * 16}" / "numba" / "generated"
    folder.mkdir(parents=True)
    first, second = (caching.IndexDataCacheFile(str(folder), "kernel-12.py311", "stamp") for _ in range(2))
    stale = second._load_index()  # the second process read the index before the first wrote its entry
    save_data = first._save_data

    def first_writes_its_data_last(name: str, data: object) -> None:
        second._load_index = lambda: dict(stale)  # type: ignore[method-assign]
        second.save("(array(float16, 1d, C),)", "FLOAT16 code")
        save_data(name, data)

    first._save_data = first_writes_its_data_last  # type: ignore[method-assign]
    first.save("(array(float32, 1d, C),)", "FLOAT32 code")
    reader = caching.IndexDataCacheFile(str(folder), "kernel-12.py311", "stamp")
    found = {key: reader.load(key) for key in ("(array(float32, 1d, C),)", "(array(float16, 1d, C),)")}
    assert found["(array(float16, 1d, C),)"] in (None, "FLOAT16 code")  # an entry may be lost, never swapped
    assert found["(array(float32, 1d, C),)"] in (None, "FLOAT32 code")
    assert set(found.values()) != {None}



_CALLS = ("import math, sys, numpy as np, opendml as dml\n"
          "x = np.array([-1.0, -0.25, 0.5, 2.0], np.float32)\n"
          "functions = {'elu': lambda v: v if v > 0 else math.expm1(v), 'exp': math.exp, 'cos': math.cos}\n"
          "for name in sys.argv[1:]:\n"
          "    got = np.asarray(getattr(dml, name)(x)).tolist()\n"
          "    expected = [float(np.float32(functions[name](float(v)))) for v in x]\n"
          "    assert got == expected, (name, got, expected)\n")


@NUMBA
@pytest.mark.parametrize("first, then", [(["elu"], ["exp", "elu"]), (["exp"], ["cos", "exp"])])
def test_a_kernel_cached_by_one_process_calls_its_own_function_in_another(cache_root: Path, first: list[str],
                                                                          then: list[str]) -> None:
    """A cached kernel carries the machine code of the correctly rounded function it calls, under the name
    Numba gave that function in the process that compiled it. The second process compiles another function
    first, which Numba numbers as the first process numbered the cached kernel's: the names must differ
    (once ELU loaded from the cache ran EXP, and EXP ran COS)."""
    env = {cache.ENV_CACHE_DIR: str(cache_root), "OPENDML_CPU_KERNELS": "numba", "OPENDML_TIERED": "0"}
    for names in (first, then):
        done = subprocess.run([sys.executable, "-c", _CALLS, *names], env={**os.environ, **env, "PYTHONPATH": str(ROOT)},
                              capture_output=True, text=True, timeout=HANG_SECONDS)
        assert done.returncode == 0, done.stderr

@NUMBA
def test_numba_caches_the_kernels_in_the_fingerprint_directory_only(cache_root: Path, tmp_path: Path) -> None:
    """The hand-written kernels (an ARGMIN, a FLOAT16 conversion) and the generated ones are cached under
    the fingerprint directory, not beside their source; a Numba function of another package keeps Numba's
    own choice (its ``__pycache__``)."""
    other = tmp_path / "other"
    other.mkdir()
    (other / "theirs.py").write_text("from numba import njit\n\n@njit(cache=True)\ndef twice(v):\n    return 2 * v\n")
    code = ("import sys, numpy as np, opendml as dml\n"
            "x = np.linspace(-2, 2, 300, dtype=np.float32).reshape(10, 30)\n"
            "dml.argmin(x, 1)\n"
            "dml.clip(x.astype(np.float16), -1.0, 1.0)\n"
            f"sys.path.insert(0, {str(other)!r})\n"
            "import theirs\n"
            "assert theirs.twice(21) == 42\n")
    package_cache = cache.KERNEL_PACKAGE / "__pycache__"
    before = {p: p.stat().st_mtime_ns for p in package_cache.glob("*.nb*")}
    done = _run(code, {cache.ENV_CACHE_DIR: str(cache_root), "OPENDML_CPU_KERNELS": "numba"})
    assert done.returncode == 0, done.stderr
    (directory,) = cache_root.glob("kernels-*")
    assert list((directory / "numba" / "cpu_kernels" / "argmin" / "engines").glob("rows.argmin_short_rows-*.nbi"))
    assert list((directory / "numba" / "generated").glob("elementwise_*.kernel-*.nbi"))
    assert {p: p.stat().st_mtime_ns for p in package_cache.glob("*.nb*")} == before  # nothing beside the source
    assert list((other / "__pycache__").glob("theirs.twice-*.nbi"))


def test_cache_info_and_clear(cache_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = cache_root / "kernels-0123456789abcdef"
    (old / "generated").mkdir(parents=True)
    (old / "generated" / "elementwise_x.py").write_text("x = 1\n")
    others = [cache_root / "notes.txt", cache_root / "kernels-not-a-fingerprint" / "keep.txt"]
    for path in others:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("not opendml's\n")
    assert cli.main(["cache", "info"]) == 0
    lines = capsys.readouterr().out.splitlines()
    current = cache.directory()
    assert lines[0] == f"root: {cache_root}"
    assert lines[1] == f"this version: {current}"
    assert "  kernels-0123456789abcdef: 1 files, 6 bytes" in lines
    assert f"  {current.name}: 0 files, 0 bytes  (this version)" in lines
    assert lines[-1] == "total: 2 directories, 1 files, 6 bytes"
    assert cli.main(["cache", "clear"]) == 0
    assert capsys.readouterr().out == f"removed 2 directories, 1 files, 6 bytes from {cache_root}\n"
    assert not old.exists() and not current.exists()
    assert all(path.read_text() == "not opendml's\n" for path in others)


def test_cache_without_an_action_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        cli.main(["cache"])
    assert stopped.value.code == 2
    assert "opendml cache: error: the following arguments are required: ACTION" in capsys.readouterr().err
