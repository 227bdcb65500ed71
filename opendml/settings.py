"""Every ``OPENDML_*`` environment variable, in one table: its values, default, meaning and where it acts.

Each variable is a ``Setting`` with one parser of its kind (a switch, an integer in a range, a choice, a
path). ``Setting.get()`` reads the environment when called, at the point of use, as each module did before
(so a variable set late, or by a test's monkeypatch, is seen); a value the parser refuses raises
``SettingError`` naming the variable, the accepted values and what was given. An unset or blank variable
means the default. ``opendml settings`` prints the table with the current values; the README's table is
``markdown_table()`` (a test checks it).

The ``tests`` settings are read by the test suite only (``tests/``); they are listed here so that one
table holds every variable and each is parsed the same way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar, cast

from .errors import InvalidArgumentError, message

T = TypeVar("T")

OWNER = "Environment"
TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")
REPOSITORY = "https://github.com/opendml/opendml/blob/main/"


class SettingError(InvalidArgumentError):
    """An ``OPENDML_*`` variable holds a value its setting does not accept."""


def refuse(name: str, accepted: str, text: str) -> SettingError:
    return SettingError(message(OWNER, name, f"must be {accepted}", repr(text)))


# --- one parser per kind of value ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Switch:
    """On or off: 1/true/yes/on or 0/false/no/off, in any case."""

    kind: str = "switch"

    @property
    def accepted(self) -> str:
        return f"one of {', '.join(TRUE)} (on) or {', '.join(FALSE)} (off)"

    def values(self) -> str:
        return "`0` or `1` (also `true`/`false`, `yes`/`no`, `on`/`off`)"

    def parse(self, name: str, text: str) -> bool:
        word = text.lower()
        if word in TRUE or word in FALSE:
            return word in TRUE
        raise refuse(name, self.accepted, text)


@dataclass(frozen=True)
class Integer:
    """A whole number from ``minimum`` to ``maximum`` (None: no bound above)."""

    minimum: int = 1
    maximum: int | None = None
    kind: str = "integer"

    @property
    def accepted(self) -> str:
        if self.maximum is not None:
            return f"an integer from {self.minimum} to {self.maximum}"
        return "a positive integer" if self.minimum == 1 else f"an integer of at least {self.minimum}"

    def values(self) -> str:
        return f"an integer ≥ {self.minimum}" + ("" if self.maximum is None else f" and ≤ {self.maximum}")

    def parse(self, name: str, text: str) -> int:
        try:
            number = int(text)
        except ValueError:
            raise refuse(name, self.accepted, text) from None
        if number < self.minimum or (self.maximum is not None and number > self.maximum):
            raise refuse(name, self.accepted, text)
        return number


@dataclass(frozen=True)
class Choice:
    """One word of ``choices``, in any case (returned in lower case)."""

    choices: tuple[str, ...]
    kind: str = "choice"

    @property
    def accepted(self) -> str:
        return f"one of {', '.join(self.choices)}"

    def values(self) -> str:
        return ", ".join(f"`{c}`" for c in self.choices)

    def parse(self, name: str, text: str) -> str:
        word = text.lower()
        if word not in self.choices:
            raise refuse(name, self.accepted, text)
        return word


@dataclass(frozen=True)
class PathValue:
    """A file or directory path (``~`` expanded); a NUL byte, which no file system takes, is refused."""

    kind: str = "path"

    @property
    def accepted(self) -> str:
        return "a path"

    def values(self) -> str:
        return "a path"

    def parse(self, name: str, text: str) -> Path:
        if "\0" in text:
            raise refuse(name, "a path without NUL bytes", text)
        return Path(text).expanduser()


Parser = Switch | Integer | Choice | PathValue


# --- the table ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Setting(Generic[T]):
    """One ``OPENDML_*`` variable. ``default`` is the value when unset (None: worked out where it acts, as
    ``default_text`` says); ``where`` names the module that reads it; ``doc`` the page that tells more."""

    name: str
    parser: Parser
    default: T
    default_text: str
    meaning: str
    where: str
    doc: str = ""
    scope: str = "runtime"  # or "tests": read by the test suite only

    def text(self) -> str:
        """The variable's raw value, stripped ("" when unset)."""
        return os.environ.get(self.name, "").strip()

    def get(self) -> T:
        """The variable's value now, parsed; the default where it is unset or blank."""
        text = self.text()
        if not text:
            return self.default
        return cast(T, self.parser.parse(self.name, text))


def _switch(name: str, default: bool, meaning: str, where: str, doc: str = "", scope: str = "runtime") -> Setting[bool]:
    return Setting(name, Switch(), default, "`1`" if default else "`0`", meaning, where, doc, scope)


NUM_THREADS: Setting[int | None] = Setting(
    "OPENDML_NUM_THREADS", Integer(1), None, "a Dask worker's share of the cores, else every core",
    "CPU threads per operator for devices made without `threads=`", "opendml/thread_count.py",
    "docs/cpu-backend.md")
CPU_KERNELS: Setting[str] = Setting(
    "OPENDML_CPU_KERNELS", Choice(("auto", "numba", "numpy")), "auto", "`auto`: Numba where installed",
    "which CPU kernels run (read once per process); `numba` needs the `fast` extra",
    "opendml/backends/cpu_kernels/__init__.py", "docs/cpu-backend.md")
CACHE_DIR: Setting[Path | None] = Setting(
    "OPENDML_CACHE_DIR", PathValue(), None,
    "the user's cache directory: `$XDG_CACHE_HOME/opendml`, else `~/.cache/opendml` (Linux); "
    "`~/Library/Caches/opendml` (macOS); `%LOCALAPPDATA%\\opendml\\Cache` (Windows)",
    "where compiled CPU kernels are kept, one `kernels-<fingerprint>` directory per version of the kernel "
    "helpers; an unwritable one is replaced, silently, by `opendml-<user>` in the temporary directory "
    "(`opendml cache info` shows it, `opendml cache clear` empties it)", "opendml/kernels/cache.py",
    "docs/kernels.md")
TIERED = _switch("OPENDML_TIERED", True, "`1`: while Numba compiles a CPU kernel in the background, its calls run on "
                 "the NumPy path (the same bits); `0`: the compile step compiles it and waits",
                 "opendml/backends/tiers.py", "docs/cpu-backend.md")
FUSION = _switch("OPENDML_FUSION", True, "`1` fuses chains of element-wise nodes of a compiled graph into one "
                 "kernel; `0` runs every node as its own step", "opendml/graphs/fusion.py", "docs/graphs.md")
CUDA_GRAPHS = _switch("OPENDML_CUDA_GRAPHS", True, "`1` captures each CUDA command list once and replays it as "
                      "one CUDA graph; `0` launches its kernels one by one", "opendml/backends/cuda/graphs.py",
                      "docs/recording.md")
PRINT_KERNELS = _switch("OPENDML_PRINT_KERNELS", False, "`1` prints each generated kernel's source (CUDA C, and "
                        "the CPU's generated Numba source) once, to stderr, headed by its operator",
                        "opendml/kernels/debug.py", "docs/kernels.md")

SLOW_TESTS = _switch("OPENDML_SLOW_TESTS", False, "`1` runs the slow tests too (as `--slow` does)",
                     "tests/suite.py", "docs/testing.md", "tests")
HYPOTHESIS_PROFILE: Setting[str] = Setting(
    "OPENDML_HYPOTHESIS_PROFILE", Choice(("ci", "thorough")), "ci",
    "`ci` (20 examples per property, the same each run)",
    "hypothesis' profile: `thorough` runs 1000 examples per property", "tests/conftest.py", "docs/testing.md",
    "tests")
FUZZ_EXAMPLES: Setting[int | None] = Setting(
    "OPENDML_FUZZ_EXAMPLES", Integer(1), None, "4 to 30, by family",
    "examples per fuzz property; `OPENDML_FUZZ_EXAMPLES_<FAMILY>` sets one family's", "tests/fuzz/settings.py",
    "docs/testing.md", "tests")
FUZZ_KEEP_GOING = _switch("OPENDML_FUZZ_KEEP_GOING", False, "`1` lists every kind of fuzz failure at the end "
                          "instead of stopping at the first", "tests/fuzz/settings.py", "docs/testing.md", "tests")
FUZZ_REPORT: Setting[Path | None] = Setting(
    "OPENDML_FUZZ_REPORT", PathValue(), None, "`opendml-fuzz-counts.json` in the temporary directory",
    "where the fuzz failure counts are written as JSON", "tests/fuzz/report.py", "docs/testing.md", "tests")
SKIP_NVCC = _switch("OPENDML_SKIP_NVCC", False, "`1` skips the tests that compile every CUDA kernel with `nvcc`",
                    "tests/test_cuda_lowering.py", "docs/testing.md", "tests")
COMPILE_TIMES: Setting[Path | None] = Setting(
    "OPENDML_COMPILE_TIMES", PathValue(), None, "`opendml-compile-times.json` in the temporary directory",
    "where `-p tests.compile_times` writes each test's compile time", "tests/compile_times.py",
    "docs/testing.md", "tests")

TABLE: tuple[Setting[Any], ...] = (
    NUM_THREADS, CPU_KERNELS, CACHE_DIR, TIERED, FUSION, CUDA_GRAPHS, PRINT_KERNELS,
    SLOW_TESTS, HYPOTHESIS_PROFILE, FUZZ_EXAMPLES, FUZZ_KEEP_GOING, FUZZ_REPORT, COMPILE_TIMES, SKIP_NVCC,
)
BY_NAME: dict[str, Setting[Any]] = {s.name: s for s in TABLE}
FAMILY_PREFIX = "OPENDML_FUZZ_EXAMPLES_"  # OPENDML_FUZZ_EXAMPLES_<FAMILY>, parsed as FUZZ_EXAMPLES


def fuzz_examples(family: str) -> int | None:
    """Examples per property of one fuzz family: ``OPENDML_FUZZ_EXAMPLES_<FAMILY>``, else
    ``OPENDML_FUZZ_EXAMPLES``, else None (the family's own default)."""
    name = FAMILY_PREFIX + family.upper()
    text = os.environ.get(name, "").strip()
    if text:
        return cast(int, FUZZ_EXAMPLES.parser.parse(name, text))
    return FUZZ_EXAMPLES.get()


# --- the table as text ----------------------------------------------------------------------------------------


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown_table(scope: str | None = None) -> str:
    """The settings as a Markdown table (the README's), those of ``scope`` only where given."""
    lines = ["| environment variable | values | default | effect |", "|---|---|---|---|"]
    for s in TABLE:
        if scope is not None and s.scope != scope:
            continue
        effect = ("tests only: " if s.scope == "tests" else "") + s.meaning
        if s.doc:
            effect += f" ([{s.doc}]({REPOSITORY}{s.doc}))"
        lines.append(f"| `{s.name}` | {s.parser.values()} | {s.default_text} | {_cell(effect)} |")
    return "\n".join(lines) + "\n"


def current(setting: Setting[Any]) -> str:
    """What the variable holds now: its raw value, ``(unset)``, or the error its value raises."""
    text = setting.text()
    if not text:
        return "(unset)"
    try:
        setting.get()
    except SettingError as error:
        return f"{text!r}: invalid ({error})"
    return repr(text)
