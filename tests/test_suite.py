"""The suite's own selection (tests/suite.py): thinned grids, slow tests, and when pytest-xdist's workers start."""

from __future__ import annotations

import itertools
from types import SimpleNamespace
from typing import Any

import pytest

from tests import suite


def case(nodeid: str, **params: object) -> Any:
    return SimpleNamespace(nodeid=nodeid, callspec=SimpleNamespace(params=params), iter_markers=lambda name: [])


def grid(**values: list[object]) -> list[Any]:
    names = list(values)
    return [case(f"t.py::test[{'-'.join(map(str, combo))}]", **dict(zip(names, combo)))
            for combo in itertools.product(*values.values())]


def test_a_thinned_grid_shows_every_value_of_each_parameter_in_few_cases_spread_over_them() -> None:
    cases = grid(path=list(range(14)), chain=list(range(5)))
    kept = suite.thinned(cases, ("path", "chain"))
    assert {c.callspec.params["path"] for c in kept} == set(range(14)) and len(kept) == 14
    chains = [c.callspec.params["chain"] for c in kept]
    assert set(chains) == set(range(5)) and max(map(chains.count, range(5))) == 3  # spread, not 10 of chain 0


def test_a_tuple_of_parameters_keeps_every_combination_of_theirs() -> None:
    cases = grid(kernels=["numba", "streaming", "numpy"], data_type=["FLOAT32", "INT8"], direction=["INC", "DEC"])
    kept = suite.thinned(cases, ("kernels", ("data_type", "direction")))
    pairs = {(c.callspec.params["data_type"], c.callspec.params["direction"]) for c in kept}
    assert len(pairs) == 4 and len(kept) == 4
    assert {c.callspec.params["kernels"] for c in kept} == {"numba", "streaming", "numpy"}


def test_a_test_named_by_its_id_runs_though_slow() -> None:
    item = case("tests/test_x.py::test_grid[a-1]")
    assert suite.names(item, "test_grid[a-1]") and suite.names(item, "test_grid")
    assert not suite.names(item, "test_grid[a-2]") and not suite.names(item, "test_gri")


class Options(SimpleNamespace):
    numprocesses: object = None
    dist: str = "no"


def config(args: list[str], source: object, **extra: object) -> Any:
    options = Options()
    values = {"numprocesses": None, "usepdb": False, "collectonly": False}
    return SimpleNamespace(pluginmanager=SimpleNamespace(hasplugin=lambda name: True), option=options,
                           getoption=lambda name, default=None: values.get(name, default), args=args,
                           args_source=source, **extra)


def test_the_whole_suite_starts_a_worker_per_core_and_a_named_file_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    whole = config(["tests", "opendml"], pytest.Config.ArgsSource.TESTPATHS)
    suite.choose_workers(whole)
    assert (whole.option.numprocesses, whole.option.dist) == ("auto", "worksteal")
    one_file = config(["tests/test_suite.py"], pytest.Config.ArgsSource.ARGS)
    suite.choose_workers(one_file)
    assert one_file.option.numprocesses is None


def test_a_worker_never_starts_workers_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest-xdist calls pytest_cmdline_main in each worker too, with no -n: starting workers there would
    start workers without end."""
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    worker = config(["tests"], pytest.Config.ArgsSource.TESTPATHS, workerinput={"workerid": "gw0"})
    suite.choose_workers(worker)
    assert worker.option.numprocesses is None
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    worker = config(["tests"], pytest.Config.ArgsSource.TESTPATHS)
    suite.choose_workers(worker)
    assert worker.option.numprocesses is None


def test_auto_counts_the_cores_this_process_may_use(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    monkeypatch.setattr(suite.os, "sched_getaffinity", lambda pid: {0, 3}, raising=False)
    assert suite.cores() == 2
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "5")
    assert suite.cores() is None  # pytest-xdist's own rule reads the variable
