"""opendml.settings: every OPENDML_* variable parsed by one table, bad values refused by name, the README's
table the module's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import opendml as dml
from opendml import settings
from opendml.backends import cpu_kernels
from opendml.graphs import fusion
from opendml.kernels import cache, debug

ROOT = Path(__file__).resolve().parent.parent
VARIABLE = re.compile(r"OPENDML_[A-Z0-9_]*[A-Z0-9]")


def mentioned(*folders: str, suffix: str = ".py") -> set[str]:
    """Every OPENDML_* name written in the files under ``folders``."""
    names: set[str] = set()
    for folder in folders:
        for path in (ROOT / folder).rglob(f"*{suffix}"):
            names |= set(VARIABLE.findall(path.read_text(encoding="utf-8")))
    return names


def known(name: str) -> bool:
    return name in settings.BY_NAME or name.startswith(settings.FAMILY_PREFIX)


# --- the parsers ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["1", "true", "TRUE", "Yes", "on", " 1 "])
def test_a_switch_takes_the_usual_words_for_on(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setenv("OPENDML_FUSION", "0")
    assert settings.FUSION.get() is False
    monkeypatch.setenv("OPENDML_FUSION", text)
    assert settings.FUSION.get() is True and fusion.enabled() is True


@pytest.mark.parametrize("text", ["0", "false", "No", "OFF"])
def test_a_switch_takes_the_usual_words_for_off(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setenv("OPENDML_PRINT_KERNELS", text)
    assert debug.print_kernels_enabled() is False


def test_an_unset_or_blank_variable_is_its_default(monkeypatch: pytest.MonkeyPatch) -> None:
    for setting in settings.TABLE:
        monkeypatch.delenv(setting.name, raising=False)
        assert setting.get() == setting.default
        monkeypatch.setenv(setting.name, "  ")
        assert setting.get() == setting.default
    assert settings.FUSION.get() is True and settings.CUDA_GRAPHS.get() is True
    assert settings.PRINT_KERNELS.get() is False and settings.CPU_KERNELS.get() == "auto"


@pytest.mark.parametrize(("name", "text", "accepted"), [
    ("OPENDML_FUSION", "maybe", "one of 1, true, yes, on (on) or 0, false, no, off (off)"),
    ("OPENDML_CUDA_GRAPHS", "2", "one of 1, true, yes, on (on) or 0, false, no, off (off)"),
    ("OPENDML_PRINT_KERNELS", "verbose", "one of 1, true, yes, on (on) or 0, false, no, off (off)"),
    ("OPENDML_NUM_THREADS", "0", "a positive integer"),
    ("OPENDML_NUM_THREADS", "1.5", "a positive integer"),
    ("OPENDML_CPU_KERNELS", "cuda", "one of auto, numba, numpy"),
    ("OPENDML_HYPOTHESIS_PROFILE", "fast", "one of ci, thorough"),
    ("OPENDML_FUZZ_EXAMPLES", "-3", "a positive integer"),
])
def test_a_bad_value_names_the_variable_what_it_accepts_and_what_it_got(
        monkeypatch: pytest.MonkeyPatch, name: str, text: str, accepted: str) -> None:
    monkeypatch.setenv(name, text)
    with pytest.raises(settings.SettingError) as caught:
        settings.BY_NAME[name].get()
    assert str(caught.value) == f"Environment: {name} must be {accepted}; got {text!r}."
    assert isinstance(caught.value, dml.InvalidArgumentError) and isinstance(caught.value, ValueError)


def test_print_kernels_maybe_is_refused_where_it_was_taken_as_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENDML_PRINT_KERNELS", "maybe")
    with pytest.raises(dml.OpenDMLError, match="OPENDML_PRINT_KERNELS must be one of"):
        debug.print_source("Numba", "CLIP", "def kernel(): pass")


def test_each_reader_goes_through_the_table(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENDML_NUM_THREADS", "3")
    assert dml.Device("cpu").threads == 3
    monkeypatch.setenv("OPENDML_NUM_THREADS", "three")
    with pytest.raises(settings.SettingError, match=r"^Environment: OPENDML_NUM_THREADS must be a positive integer"):
        dml.Device("cpu")
    monkeypatch.setenv("OPENDML_CACHE_DIR", f" {tmp_path} ")
    assert cache.root() == tmp_path
    monkeypatch.setenv("OPENDML_CACHE_DIR", "~/kernels")
    assert cache.root() == Path.home() / "kernels"
    monkeypatch.setattr(cpu_kernels, "_chosen", None)  # as in a fresh process: the choice is made once
    monkeypatch.setenv("OPENDML_CPU_KERNELS", "NumPy")
    assert cpu_kernels.kernels().__name__.endswith(".blocked")
    monkeypatch.setattr(cpu_kernels, "_chosen", None)
    monkeypatch.setenv("OPENDML_CPU_KERNELS", "fastest")
    with pytest.raises(settings.SettingError, match=r"OPENDML_CPU_KERNELS must be one of auto, numba, numpy; "
                                                    r"got 'fastest'\.$"):
        cpu_kernels.kernels()


def test_a_fuzz_family_setting_wins_and_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENDML_FUZZ_EXAMPLES", "40")
    monkeypatch.delenv("OPENDML_FUZZ_EXAMPLES_ONNX", raising=False)
    assert settings.fuzz_examples("onnx") == 40
    monkeypatch.setenv("OPENDML_FUZZ_EXAMPLES_ONNX", "7")
    assert settings.fuzz_examples("onnx") == 7
    monkeypatch.setenv("OPENDML_FUZZ_EXAMPLES_ONNX", "many")
    with pytest.raises(settings.SettingError, match="OPENDML_FUZZ_EXAMPLES_ONNX must be a positive integer"):
        settings.fuzz_examples("onnx")


# --- one table for every variable -----------------------------------------------------------------------------


def test_every_variable_the_code_reads_is_in_the_table() -> None:
    in_code = mentioned("opendml")
    assert in_code <= set(settings.BY_NAME), sorted(in_code - set(settings.BY_NAME))
    runtime = {s.name for s in settings.TABLE if s.scope == "runtime"}
    assert runtime <= in_code  # each is read somewhere
    assert {s.where for s in settings.TABLE} <= {str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py")}


def test_every_variable_the_tests_read_is_in_the_table() -> None:
    in_tests = mentioned("tests") | mentioned("benchmarks") | mentioned("examples")
    in_tests |= set(VARIABLE.findall((ROOT / "conftest.py").read_text(encoding="utf-8")))
    assert sorted(name for name in in_tests if not known(name)) == []


def test_every_documented_variable_is_in_the_table() -> None:
    documented = mentioned("docs", suffix=".md") | set(VARIABLE.findall((ROOT / "README.md").read_text("utf-8")))
    assert sorted(name for name in documented if not known(name)) == []


def test_the_readme_table_is_the_modules() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert settings.markdown_table() in readme, "regenerate it: opendml settings --markdown"


# --- opendml settings -----------------------------------------------------------------------------------------


def test_the_command_lists_each_variable_with_its_value(monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from opendml.cli import main

    monkeypatch.setenv("OPENDML_NUM_THREADS", "2")
    monkeypatch.delenv("OPENDML_FUSION", raising=False)
    assert main(["settings"]) == 0
    out = capsys.readouterr().out
    assert "OPENDML_NUM_THREADS = '2'\n" in out and "OPENDML_FUSION = (unset)\n" in out
    assert "OPENDML_FUZZ_REPORT" not in out  # tests only, under --tests
    monkeypatch.setenv("OPENDML_FUSION", "maybe")
    assert main(["settings", "--tests"]) == 1  # an invalid value is shown, and the status says so
    out = capsys.readouterr().out
    assert "OPENDML_FUSION = 'maybe': invalid (Environment: OPENDML_FUSION must be one of" in out
    assert "OPENDML_FUZZ_REPORT = (unset)" in out
    assert main(["settings", "--markdown"]) == 0
    assert capsys.readouterr().out == settings.markdown_table()
