"""Which tests run, and on how many processes: what the root ``conftest.py``'s hooks do (docs/testing.md).

Tests marked ``slow``, and the cases a ``thin`` marker leaves out of a parameter grid, run only when asked
(``--slow``, ``OPENDML_SLOW_TESTS=1``, ``-m slow``, or a test named by its id). The whole suite runs on a
pytest-xdist worker per core where pytest-xdist is installed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from opendml import settings

SLOW_ENV = settings.SLOW_TESTS.name
LEFT_OUT = pytest.StashKey[int]()  # how many slow tests this run left out
LEFT_OUT_KEY = "opendml_slow_left_out"  # a pytest-xdist worker's count, sent to the controller


def slow_tests_wanted(config: pytest.Config) -> bool:
    return bool(config.getoption("slow") or settings.SLOW_TESTS.get()
                or re.search(r"\bslow\b", config.getoption("markexpr") or ""))


def select(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the cases that ``thin`` leaves out as slow, then, unless slow tests are wanted, deselect the slow
    tests (but for those named on the command line by their id)."""
    grids: dict[tuple[str, str], list[pytest.Item]] = {}
    for item in items:
        if item.get_closest_marker("thin") is not None and hasattr(item, "callspec"):
            grids.setdefault((str(item.path), item.originalname), []).append(item)  # type: ignore[attr-defined]
    for cases in grids.values():
        runnable = [item for item in cases if not skipped(item)]  # on this machine: skipped ones show nothing
        kept = thinned(runnable, cases[0].get_closest_marker("thin").args)  # type: ignore[union-attr]
        for item in runnable:
            if item not in kept:
                item.add_marker(pytest.mark.slow)
    if slow_tests_wanted(config):
        return
    named = [arg.split("::", 1)[1] for arg in config.args if "::" in arg]  # a test, or one case, by its id
    left_out = [item for item in items if item.get_closest_marker("slow") is not None
                and not any(names(item, test) for test in named)]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        chosen = set(map(id, left_out))
        items[:] = [item for item in items if id(item) not in chosen]
        config.stash[LEFT_OUT] = len(left_out)


def names(item: pytest.Item, test: str) -> bool:
    """Whether ``test`` (what follows the file in an id given on the command line) names this case."""
    own = item.nodeid.split("::", 1)[-1]
    return own == test or own.startswith(test + "[")


def skipped(item: pytest.Item) -> bool:
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


def choose_workers(config: pytest.Config) -> None:
    """The whole suite (no path given, or directories) runs on a worker per core through pytest-xdist where
    it is installed (the test extra): ``-n auto``, each worker starting on its own half of the files (so a
    kernel is rarely compiled by both) and taking tests from the other's when its own run out. ``-n N``
    chooses, ``-n 0`` runs in this process, as do runs of named files or tests, where starting workers would
    cost more than it saves."""
    if not config.pluginmanager.hasplugin("xdist") or config.getoption("numprocesses", None) is not None:
        return
    if hasattr(config, "workerinput") or os.environ.get("PYTEST_XDIST_WORKER"):
        return  # a worker itself (pytest-xdist calls this hook there too): it never starts workers of its own
    if config.getoption("usepdb") or config.getoption("collectonly"):
        return
    if config.args_source is pytest.Config.ArgsSource.ARGS and not all(Path(a).is_dir() for a in config.args):
        return
    config.option.numprocesses = "auto"
    if config.option.dist == "no":
        config.option.dist = "worksteal"


def cores() -> int | None:
    """``-n auto``'s count: the cores this process may run on (pytest-xdist's own count can be the host's,
    in a container); None leaves it to pytest-xdist (which reads PYTEST_XDIST_AUTO_NUM_WORKERS)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") or not hasattr(os, "sched_getaffinity"):
        return None
    return len(os.sched_getaffinity(0))
