"""A pytest plugin that records the seconds each test spends in Numba's compiler (docs/testing.md).

``python -m pytest -p tests.compile_times`` writes, per process, a JSON file of every test's compile seconds
and the functions it compiled (or, on an empty kernel cache, the ones it was first to need): the
``OPENDML_COMPILE_TIMES`` path, else ``opendml-compile-times.json`` in the system's temporary folder; a
pytest-xdist worker adds its name (``...-gw0.json``). The session's end prints the tests that compiled
longest. What a test compiles depends on what ran before it in its process, and on the cache: profile a
run on an empty ``OPENDML_CACHE_DIR``.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from opendml import settings

ENV = settings.COMPILE_TIMES.name

_current = ["(outside tests)"]
_seconds: dict[str, float] = defaultdict(float)
_functions: dict[str, list[str]] = defaultdict(list)


def _listener() -> Any:
    """A Numba event listener: the time of each outermost compilation (callees compile inside it)."""
    from numba.core import event

    class Compiles(event.Listener):  # type: ignore[misc]
        def __init__(self) -> None:
            self.depth = 0
            self.started = 0.0

        def on_start(self, ev: Any) -> None:
            if self.depth == 0:
                self.started = time.perf_counter()
            self.depth += 1

        def on_end(self, ev: Any) -> None:
            self.depth -= 1
            if self.depth == 0:
                _seconds[_current[0]] += time.perf_counter() - self.started
                dispatcher = ev.data.get("dispatcher")
                name = getattr(getattr(dispatcher, "py_func", None), "__qualname__", "?")
                _functions[_current[0]].append(f"{name}{ev.data.get('args', '')}")

    return Compiles()


def pytest_configure(config: pytest.Config) -> None:
    try:
        from numba.core import event
    except ImportError:
        return
    event.register("numba:compile", _listener())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    _current[0] = item.nodeid
    yield
    _current[0] = "(outside tests)"


def _path(config: pytest.Config) -> Path:
    path = settings.COMPILE_TIMES.get() or Path(tempfile.gettempdir()) / "opendml-compile-times.json"
    worker = getattr(config, "workerinput", {}).get("workerid")
    return path.with_name(f"{path.stem}-{worker}{path.suffix}") if worker else path


def pytest_sessionfinish(session: pytest.Session) -> None:
    report = {test: {"seconds": round(_seconds[test], 3), "functions": _functions[test]}
              for test in sorted(_seconds, key=lambda t: -_seconds[t])}
    _path(session.config).write_text(json.dumps(report, indent=1) + "\n")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    total = sum(_seconds.values())
    if not total:
        return  # nothing compiled here (or, under pytest-xdist, at the controller: see the workers' files)
    terminalreporter.section("Numba compile time")
    terminalreporter.write_line(f"{total:.1f} s in all, written to {_path(terminalreporter.config)}")
    for test in sorted(_seconds, key=lambda t: -_seconds[t])[:15]:
        terminalreporter.write_line(f"{_seconds[test]:7.1f} s  {len(_functions[test]):3d} functions  {test}")
