"""Several Python threads running operators at once (Dask's threaded scheduler, a worker's task threads) and
a Dask worker's share of the cores.

Inputs are large enough to take the threaded paths (shares on Numba's threads); results are checked against
NumPy and, element by element on a sample, against the independent oracle.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from elementwise_oracle import arg_of, clamp_element, float_field_bound
from helpers import same_values
from limits import HANG_SECONDS

import opendml as dml
from opendml import thread_count
from opendml.backends import cpu_kernels
from opendml.backends.cpu_kernels import threads, views

NO_NUMBA = pytest.mark.skipif(not cpu_kernels.numba_available(),
                              reason="Numba is not installed (the opendml[fast] extra)")
CALLERS = 4
LOW, HIGH = -20.0, 30.0
ROWS, COLUMNS = 256, 1024  # one input of PARALLEL_MIN elements: several shares on two threads


def _input(seed: int) -> np.ndarray:
    """FLOAT32 values with ties (small integers) and a few NaN."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-60, 60, (ROWS, COLUMNS)).astype(np.float32)
    x[rng.random(x.shape) < 0.01] = np.nan
    return x


def _check(x: np.ndarray, clipped: np.ndarray, rows: np.ndarray, columns: np.ndarray, seed: int) -> list[str]:
    """What is wrong with the three results of ``x`` (nothing: an empty list). NaN is ignored by ARGMIN: as
    +inf it changes no finite minimum's first index (no row or column here is NaN only)."""
    wrong = []
    if not same_values(clipped, np.minimum(np.maximum(x, np.float32(LOW)), np.float32(HIGH))):
        wrong.append(f"CLIP of input {seed}")
    finite = np.where(np.isnan(x), np.inf, x)
    if rows.reshape(-1).tolist() != np.argmin(finite, axis=1).tolist():
        wrong.append(f"ARGMIN axis 1 of input {seed}")
    if columns.reshape(-1).tolist() != np.argmin(finite, axis=0).tolist():
        wrong.append(f"ARGMIN axis 0 of input {seed}")
    rng = np.random.default_rng(seed + 1000)
    low, high = float_field_bound(LOW, "FLOAT32"), float_field_bound(HIGH, "FLOAT32")
    for i, j in zip(rng.integers(0, ROWS, 64), rng.integers(0, COLUMNS, 64)):  # the oracle, element by element
        want = np.float32(clamp_element(float(x[i, j]), "FLOAT32", None, low, high))
        if not same_values(clipped[i:i + 1, j], np.array([want])):
            wrong.append(f"CLIP of input {seed} at {(i, j)} (oracle)")
    for i in rng.integers(0, ROWS, 4):
        if rows[i, 0] != arg_of([float(v) for v in x[i]], "INCREASING"):
            wrong.append(f"ARGMIN axis 1 of input {seed} row {i} (oracle)")
    return wrong


def run_at_once(device_threads: int, rounds: int = 2) -> list[str]:
    """CLIP, ARGMIN over axis 1 and over axis 0 from ``CALLERS`` Python threads at once, each on inputs of its
    own, on one device of ``device_threads`` threads; what went wrong (nothing: an empty list)."""
    device = dml.Device("cpu", threads=device_threads)
    start = threading.Barrier(CALLERS)
    wrong: list[str] = []

    def caller(k: int) -> None:
        try:
            start.wait()
            for r in range(rounds):
                seed = k * rounds + r
                x = _input(seed)
                clipped = dml.clip(x, LOW, HIGH, device=device)
                rows = dml.argmin(x, axes=[1], device=device)
                columns = dml.argmin(x, axes=[0], device=device)
                wrong.extend(_check(x, clipped, rows, columns, seed))
        except Exception as error:  # reported by the test, not lost in a thread
            wrong.append(f"caller {k}: {error!r}")

    callers = [threading.Thread(target=caller, args=(k,)) for k in range(CALLERS)]
    for t in callers:
        t.start()
    for t in callers:
        t.join()
    return wrong


class _Launches:
    """``drivers.launch`` counted (the shares run on Numba's threads)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from opendml.backends.cpu_kernels import drivers

        self.drivers: list[str] = []  # appended from several threads at once: list.append is atomic
        launch = drivers.launch

        def counted(driver: Any, *args: Any) -> None:
            self.drivers.append(driver.__name__)
            launch(driver, *args)

        monkeypatch.setattr(drivers, "launch", counted)

    @property
    def count(self) -> int:
        return len(self.drivers)


@NO_NUMBA
def test_four_threads_running_threaded_operators_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ROWS * COLUMNS >= views.PARALLEL_MIN
    launches = _Launches(monkeypatch)
    assert run_at_once(device_threads=2) == []
    assert launches.count >= CALLERS * 2 * 3  # every operator of every call shared out on Numba's threads


@NO_NUMBA
def test_one_thread_devices_never_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    """A device of one thread (a Dask worker's share on a small machine) runs each operator in the calling
    thread: nothing is launched, so nothing takes the launch lock and callers never wait for each other."""
    launches = _Launches(monkeypatch)
    assert run_at_once(device_threads=1, rounds=1) == []
    assert launches.count == 0


@NO_NUMBA
def test_the_workqueue_layer_never_aborts() -> None:
    """Numba's workqueue layer ends the process when two threads start parallel loops at once: there the
    launches take turns (in a child process, which such an end would not take the tests down with)."""
    tests = Path(__file__).parent
    env = {**os.environ, "NUMBA_THREADING_LAYER": "workqueue",
           "PYTHONPATH": os.pathsep.join([str(tests.parent), str(tests)])}
    script = ("import numba, test_worker_threads as t\n"
              "from opendml.backends.cpu_kernels import drivers\n"
              "drivers.PROMOTE_AFTER = 1\n"
              "print(t.run_at_once(2), numba.threading_layer())\n")
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=tests, capture_output=True, text=True,
                          timeout=HANG_SECONDS)
    assert (done.returncode, done.stdout.strip()) == (0, "[] workqueue"), done.stderr[-2000:]


@NO_NUMBA
def test_thread_safe_layers_launch_without_taking_turns() -> None:
    """Under OpenMP or TBB a launch does not wait for another: one runs while the turn lock is held."""
    import numba

    from opendml.backends.cpu_kernels import drivers

    device = dml.Device("cpu", threads=2)
    x = _input(99)
    dml.clip(x, LOW, HIGH, device=device)  # a first launch, which chooses the layer
    if numba.threading_layer() not in ("omp", "tbb"):
        pytest.skip(f"Numba's {numba.threading_layer()} layer takes launches one at a time")
    done: list[np.ndarray] = []
    with drivers._lock:
        worker = threading.Thread(target=lambda: done.append(dml.clip(x, LOW, HIGH, device=device)))
        worker.start()
        worker.join(timeout=HANG_SECONDS)
    assert len(done) == 1 and same_values(done[0], np.minimum(np.maximum(x, np.float32(LOW)), np.float32(HIGH)))


def test_a_caller_does_not_wait_for_pool_threads_busy_elsewhere() -> None:
    """Two callers share the pool: one whose tasks are all done returns at once, though the pool's thread is
    still busy with the other's task (before, it waited for that thread to pick up its own helper)."""
    release = threading.Event()
    running = threading.Semaphore(0)

    def slow(k: int) -> int:
        running.release()
        release.wait()  # set only once the second caller has returned (or has been given up on)
        return k

    blocked = threading.Thread(target=threads.run_tasks, args=(slow, [(0,), (1,)], 2))
    blocked.start()
    try:
        for _ in range(2):  # both of its tasks now hold a thread: the calling one and the pool's
            assert running.acquire(timeout=HANG_SECONDS)
        got: list[list[int]] = []
        caller = threading.Thread(target=lambda: got.append(threads.run_tasks(lambda k: k * 10, [(1,), (2,), (3,)], 2)))
        caller.start()
        caller.join(timeout=HANG_SECONDS)  # a caller waiting for the pool's thread would wait for ``release``
        assert got == [[10, 20, 30]]
    finally:
        release.set()
        blocked.join()


# --- a Dask worker's share of the cores ------------------------------------------------------------------------

def test_outside_dask_a_device_takes_every_core(monkeypatch: pytest.MonkeyPatch) -> None:
    from opendml import worker_share

    monkeypatch.delenv(thread_count.ENV_THREADS, raising=False)
    monkeypatch.setattr(thread_count, "available_cores", lambda: 12)
    assert worker_share.worker_share(12) is None
    assert dml.Device("cpu").threads == 12


def _device_threads(**kwargs: Any) -> tuple[int, int]:
    """Run in a task: the thread count of a device made here, and the thread it ran on."""
    return dml.Device("cpu", "6_0", **kwargs).threads, threading.get_ident()


def test_a_device_made_in_a_task_takes_the_workers_share(monkeypatch: pytest.MonkeyPatch) -> None:
    """An in-process cluster (workers of 1 and 2 threads beside a scheduler, in this process): a device made
    in a task takes cores // 3 threads; one made outside the tasks, every core; ``threads=`` and
    OPENDML_NUM_THREADS still win in a task."""
    pytest.importorskip("distributed", reason="distributed (the opendml[dask] extra) is not installed")
    from distributed.utils_test import gen_cluster

    monkeypatch.delenv(thread_count.ENV_THREADS, raising=False)
    monkeypatch.setattr(thread_count, "available_cores", lambda: 12)
    found: dict[str, int] = {}

    @gen_cluster(client=True, nthreads=[("127.0.0.1", 1), ("127.0.0.1", 2)])
    async def cluster(c: Any, s: Any, a: Any, b: Any) -> None:
        found["task"], ident = await c.submit(_device_threads, pure=False)
        assert ident != threading.get_ident()  # it ran on a worker's thread
        found["outside"] = dml.Device("cpu", "6_0").threads
        found["explicit"], _ = await c.submit(_device_threads, threads=5, pure=False)
        monkeypatch.setenv(thread_count.ENV_THREADS, "7")
        found["environment"], _ = await c.submit(_device_threads, pure=False)

    cluster()
    assert found == {"task": 4, "outside": 12, "explicit": 5, "environment": 7}
