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
from typing import Any

import pytest

from tests import suite

collect_ignore = [] if importlib.util.find_spec("cupy") else [
    "opendml/backends/cuda/argmin_kernel.py",
    "opendml/backends/cuda/backend.py",
    "opendml/backends/cuda/compiler.py",
    "opendml/backends/cuda/graphs.py",
    "opendml/backends/cuda/launch.py",
    "opendml/backends/cuda/reduce_kernel.py",
    "opendml/backends/cuda/top_k_kernel.py",
]

_NEED_ONNX = ["opendml/onnx/*.py", "opendml/onnx/ops/*.py", "tests/onnx_models.py"]

_NEED_DASK = ["opendml/dask/api.py", "opendml/dask/blocked.py", "opendml/dask/blocks.py", "opendml/dask/elementwise.py",
              "opendml/dask/merge.py",
              "opendml/dask/reductions.py", "docs/dask.md"]

collect_ignore_glob = ([] if importlib.util.find_spec("onnx") else _NEED_ONNX) + \
    ([] if importlib.util.find_spec("dask") else _NEED_DASK) + \
    ([] if importlib.util.find_spec("sphinx") else ["docs/_ext/*.py"])  # Sphinx's extensions: the docs extra


# --- which tests run, and on how many processes: tests/suite.py (docs/testing.md) ----------------------------

def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true", default=False,
                     help="run the slow tests too: the whole of each thinned grid and every test marked slow "
                          f"(also {suite.SLOW_ENV}=1; -m slow runs only them)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: left out unless --slow, OPENDML_SLOW_TESTS=1 or -m slow asks for it")
    config.addinivalue_line("markers", "thin(*groups): the default run keeps a few of this test's parameter cases, "
                                       "every value of each named parameter (each combination, for a tuple of "
                                       "names) in at least one; the others are slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    suite.select(config, items)


def pytest_report_header(config: pytest.Config) -> str | None:
    return "slow tests: included" if suite.slow_tests_wanted(config) else None


def pytest_sessionfinish(session: pytest.Session) -> None:
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput[suite.LEFT_OUT_KEY] = session.config.stash.get(suite.LEFT_OUT, 0)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's: every worker collected the same tests, and left out as many
def pytest_testnodedown(node: Any, error: object) -> None:
    left_out = getattr(node, "workeroutput", {}).get(suite.LEFT_OUT_KEY, 0)
    node.config.stash[suite.LEFT_OUT] = max(left_out, node.config.stash.get(suite.LEFT_OUT, 0))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    left_out = terminalreporter.config.stash.get(suite.LEFT_OUT, 0)
    if left_out and not hasattr(terminalreporter.config, "workerinput"):
        terminalreporter.write_line(f"{left_out} slow tests left out (deselected): --slow or {suite.SLOW_ENV}=1 "
                                    "runs them too, -m slow only them (docs/testing.md)")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own, which turns -n auto into a number of workers
def pytest_cmdline_main(config: pytest.Config) -> None:
    suite.choose_workers(config)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    return suite.cores()
