"""Shared fixtures: every operator test runs on every backend this machine has."""

from __future__ import annotations

import os
from typing import Any

import pytest
from fuzz import report as fuzz_report  # tests/fuzz/: its end-of-session report, hooked below
from hypothesis import HealthCheck, settings

import opendml as dml
from opendml import settings as opendml_settings

# The default run's examples per property: few, as each example of many properties compiles a kernel of its
# own (about a second, cold) and CI runs the suite on two cores; the same ones every run (derandomized), so a
# warm kernel cache serves them and a failure repeats; no example database (nothing written in the checkout).
# ``thorough`` draws new examples each run, many more (docs/testing.md). The fuzz suite draws new ones always.
settings.register_profile("ci", max_examples=20, deadline=None, derandomize=True, database=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(opendml_settings.HYPOTHESIS_PROFILE.get())

# Kernels compiled at the compile step, as before tiered execution (docs/cpu-backend.md): a test then knows
# which kernel ran and when the compile happened, and no compile thread competes with the next test for the
# two cores. tests/test_cpu_tiers.py turns it on; OPENDML_TIERED=1 runs the whole suite tiered.
os.environ.setdefault(opendml_settings.TIERED.name, "0")


def _cuda_missing() -> str | None:
    """Why the CUDA backend cannot run here, or None when it can."""
    try:
        dml.Device("cuda")
    except dml.OpenDMLError as error:
        return str(error)
    return None


CUDA_MISSING = _cuda_missing()


def pytest_configure(config: pytest.Config) -> None:
    """A CPU kernel shared out to threads runs on Numba's threads from its first call here: the tests reach
    each threaded path a few times, so without this most would run on Python threads only (a program runs
    its drivers once a kernel has run ``PROMOTE_AFTER`` times: tests/test_driver_promotion.py checks that).
    Python threads are tested where drivers are made unusable (tests/test_cpu_fast.py)."""
    from opendml.backends import cpu_kernels

    if cpu_kernels.numba_available():
        from opendml.backends.cpu_kernels import drivers

        drivers.PROMOTE_AFTER = 1


def pytest_sessionfinish(session: pytest.Session) -> None:
    fuzz_report.session_finish(session)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    fuzz_report.terminal_summary(terminalreporter)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: a worker finished (or crashed, with no output)
def pytest_testnodedown(node: Any, error: object) -> None:
    fuzz_report.merge(getattr(node, "workeroutput", None))


BACKENDS = [
    pytest.param("cpu", id="cpu"),
    pytest.param("cuda", id="cuda", marks=pytest.mark.skipif(
        CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")),
]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def device(backend: str) -> dml.Device:
    """A device at the newest feature level on each available backend."""
    return dml.Device(backend)


# Spies of the functional fast-path tests: they count the calls that reach each path.


def _spy(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    from opendml.functional import declared

    calls: list[int] = []
    original = getattr(declared, name)

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(declared, name, spy)
    return calls


@pytest.fixture
def numpy_kernels_unless_slow(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CPU's NumPy kernels (as OPENDML_CPU_KERNELS=numpy chooses them), which compile nothing, unless the slow
    tests run (``--slow``): for tests of what comes before the kernels (descriptions, strides, a front end's mapping)
    whose cases would each compile kernels of their own. Every type of every operator's compiled kernel is checked
    against the NumPy lowering, bit for bit, in tests/test_kernel_specs.py; the engines and REDUCE's kernels in
    their own tests."""
    from opendml.backends import cpu_kernels
    from tests.suite import slow_tests_wanted

    if not slow_tests_wanted(request.config):
        monkeypatch.setattr(cpu_kernels, "_chosen", cpu_kernels.load("numpy"))


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Calls that reached the layout-keyed path (``_direct``): a repeat on the same arrays never does."""
    return _spy(monkeypatch, "_direct")


@pytest.fixture
def full_path(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Calls that took the ordinary path (described, bound, executed)."""
    return _spy(monkeypatch, "_call")
