"""Doctest collection, which tests run, and on how many processes (docs/testing.md).

Doctest collection: modules that import an optional package are only collected where it is installed.

CuPy: the CUDA backend's modules. onnx (the ``onnx`` extra): the ONNX front end's modules and
tests/onnx_models.py (tests/test_onnx*.py then skip, saying so). Dask (the ``dask`` extra): the modules of
opendml/dask that import it and docs/dask.md (tests/test_dask.py then skips, saying so).

Tests marked ``slow``, and the cases a ``thin`` marker leaves out of a parameter grid, run only when asked
(``--slow``, ``OPENDML_SLOW_TESTS=1``, ``-m slow``); the whole suite runs on a pytest-xdist worker per core.
"""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path
from typing import Any

import pytest

collect_ignore = [] if importlib.util.find_spec("cupy") else [
    "opendml/backends/cuda/backend.py",
    "opendml/backends/cuda/compiler.py",
    "opendml/backends/cuda/graphs.py",
    "opendml/backends/cuda/launch.py",
]

_NEED_ONNX = ["opendml/onnx/*.py", "opendml/onnx/ops/*.py", "tests/onnx_models.py"]

_NEED_DASK = ["opendml/dask/api.py", "opendml/dask/blocks.py", "opendml/dask/elementwise.py", "opendml/dask/merge.py",
              "opendml/dask/reductions.py", "docs/dask.md"]

collect_ignore_glob = ([] if importlib.util.find_spec("onnx") else _NEED_ONNX) + \
    ([] if importlib.util.find_spec("dask") else _NEED_DASK)


# --- which tests run, and on how many processes (docs/testing.md) ------------------------------------------

SLOW_ENV = "OPENDML_SLOW_TESTS"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true", default=False,
                     help="run the slow tests too: the whole of each thinned grid and every test marked slow "
                          f"(also {SLOW_ENV}=1; -m slow runs only them)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: left out unless --slow, OPENDML_SLOW_TESTS=1 or -m slow asks for it")
    config.addinivalue_line("markers", "thin(*groups): the default run keeps a few of this test's parameter cases, "
                                       "every value of each named parameter (each combination, for a tuple of "
                                       "names) in at least one; the others are slow")


def slow_tests_wanted(config: pytest.Config) -> bool:
    return bool(config.getoption("slow") or os.environ.get(SLOW_ENV, "") not in ("", "0")
                or re.search(r"\bslow\b", config.getoption("markexpr") or ""))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the cases that ``thin`` leaves out as slow, then, unless slow tests are wanted, deselect the slow
    tests (but for those named on the command line by their full id)."""
    grids: dict[tuple[str, str], list[pytest.Item]] = {}
    for item in items:
        if item.get_closest_marker("thin") is not None and hasattr(item, "callspec"):
            grids.setdefault((str(item.path), item.originalname), []).append(item)  # type: ignore[attr-defined]
    for cases in grids.values():
        runnable = [item for item in cases if not _skipped(item)]  # on this machine: skipped ones show nothing
        kept = thinned(runnable, cases[0].get_closest_marker("thin").args)  # type: ignore[union-attr]
        for item in runnable:
            if item not in kept:
                item.add_marker(pytest.mark.slow)
    if slow_tests_wanted(config):
        return
    named = [arg.split("::", 1)[1] for arg in config.args if "::" in arg]  # a test, or one case, by its id
    left_out = [item for item in items if item.get_closest_marker("slow") is not None
                and not any(_names(item, test) for test in named)]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        chosen = set(map(id, left_out))
        items[:] = [item for item in items if id(item) not in chosen]
        config.stash[_LEFT_OUT] = len(left_out)


def _names(item: pytest.Item, test: str) -> bool:
    """Whether ``test`` (what follows the file in an id given on the command line) names this case."""
    own = item.nodeid.split("::", 1)[-1]
    return own == test or own.startswith(test + "[")


def _skipped(item: pytest.Item) -> bool:
    """Whether a skipif marker with a plain condition skips the item here (a CUDA case without a GPU)."""
    return any(mark.args and mark.args[0] is True for mark in item.iter_markers("skipif"))


def thinned(cases: list[pytest.Item], groups: tuple[str | tuple[str, ...], ...]) -> list[pytest.Item]:
    """Few cases in which every value of each parameter of ``groups`` appears, or every combination of the
    values of a tuple of parameters: chosen greedily, each time the case showing the most values not yet shown,
    of those the one whose other values were shown least (so that values spread over the cases), the first
    such in collection order."""
    def shown(item: pytest.Item) -> set[tuple[int, object]]:
        params = item.callspec.params  # type: ignore[attr-defined]
        return {(k, tuple(repr(params[name]) for name in ((group,) if isinstance(group, str) else group)))
                for k, group in enumerate(groups)}

    values = {id(item): shown(item) for item in cases}
    wanted = set().union(*values.values())
    uses: dict[tuple[int, object], int] = {}
    kept: list[pytest.Item] = []
    while wanted:
        best = max(cases, key=lambda item: (len(values[id(item)] & wanted),
                                            -sum(uses.get(value, 0) for value in values[id(item)])))
        kept.append(best)
        wanted -= values[id(best)]
        for value in values[id(best)]:
            uses[value] = uses.get(value, 0) + 1
    return kept


_LEFT_OUT = pytest.StashKey[int]()
_LEFT_OUT_KEY = "opendml_slow_left_out"  # a pytest-xdist worker's count, sent to the controller


def pytest_report_header(config: pytest.Config) -> str | None:
    return "slow tests: included" if slow_tests_wanted(config) else None


def pytest_sessionfinish(session: pytest.Session) -> None:
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput[_LEFT_OUT_KEY] = session.config.stash.get(_LEFT_OUT, 0)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's: every worker collected the same tests, and left out as many
def pytest_testnodedown(node: Any, error: object) -> None:
    left_out = getattr(node, "workeroutput", {}).get(_LEFT_OUT_KEY, 0)
    node.config.stash[_LEFT_OUT] = max(left_out, node.config.stash.get(_LEFT_OUT, 0))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    left_out = terminalreporter.config.stash.get(_LEFT_OUT, 0)
    if left_out and not hasattr(terminalreporter.config, "workerinput"):
        terminalreporter.write_line(f"{left_out} slow tests left out (deselected): --slow or {SLOW_ENV}=1 runs "
                                    "them too, -m slow only them (docs/testing.md)")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own, which turns -n auto into a number of workers
def pytest_cmdline_main(config: pytest.Config) -> None:
    """The whole suite (no path given, or directories) runs on a worker per core through pytest-xdist where
    it is installed (the test extra): ``-n auto``. ``-n N`` chooses, ``-n 0`` runs in this process, as do runs
    of named files or tests, where starting workers would cost more than it saves."""
    if not config.pluginmanager.hasplugin("xdist") or config.getoption("numprocesses", None) is not None:
        return
    if hasattr(config, "workerinput") or os.environ.get("PYTEST_XDIST_WORKER"):
        return  # a worker itself: never starts workers of its own (that recursion exhausts the machine)
    if config.getoption("usepdb") or config.getoption("collectonly"):
        return
    if config.args_source is pytest.Config.ArgsSource.ARGS and not all(Path(a).is_dir() for a in config.args):
        return
    config.option.numprocesses = "auto"
    if config.option.dist == "no":  # each worker starts on its own half of the files (fewer kernels compiled twice)
        config.option.dist = "worksteal"  # and takes tests from the other's when its own run out


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """The cores this process may run on (pytest-xdist's own count can be the host's, in a container)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") or not hasattr(os, "sched_getaffinity"):
        return None  # pytest-xdist's own rule reads the variable
    return len(os.sched_getaffinity(0))
