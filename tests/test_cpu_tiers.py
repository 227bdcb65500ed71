"""Tiered execution on the CPU (``opendml.backends.tiers``): while a kernel's Numba build is pending its calls run
on the NumPy path, the build replaces it when it ends, and both tiers give the oracle's bits.

The suite runs with OPENDML_TIERED=0 (``conftest``); these tests turn it on. Most hold the builds back
(``held``: ``tiers.compile_later`` replaced by a list) so that each tier is forced, then run them on the test's
thread; the rest use the real compile thread and wait for it.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendml as dml
from opendml import graph as g
from opendml import settings as opendml_settings
from opendml.backends import cpu, cpu_kernels, tiers
from opendml.backends.cpu import CpuKernel
from opendml.settings import SettingError
from tests import elementwise_oracle as oracle
from tests.limits import HANG_SECONDS

pytestmark = pytest.mark.skipif(not cpu_kernels.numba_available(),
                                reason="Numba is not installed (the opendml[fast] extra): nothing is tiered")
ROOT = Path(__file__).resolve().parent.parent


class Held:
    """The builds queued while held, run on demand."""

    def __init__(self) -> None:
        self.jobs: list[tiers.Build] = []

    def compile_later(self, key: Any, label: str, build: Any, done: Any, failed: Any) -> tiers.Build:
        job = tiers.Build(key, label, build, done, failed)
        self.jobs.append(job)
        return job

    def release(self) -> None:
        jobs, self.jobs = self.jobs, []
        for job in jobs:
            tiers._run(job)


@pytest.fixture
def tiered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(opendml_settings.TIERED.name, "1")
    monkeypatch.setenv(opendml_settings.CPU_KERNELS.name, "numba")
    monkeypatch.setattr(tiers, "_built", set())  # every kernel new to this process
    yield


@pytest.fixture
def held(tiered: None, monkeypatch: pytest.MonkeyPatch) -> Held:
    holder = Held()
    monkeypatch.setattr(tiers, "compile_later", holder.compile_later)
    return holder


def kernel_of(compiled: Any) -> CpuKernel:
    kernel = compiled.kernel
    assert isinstance(kernel, CpuKernel)
    return kernel


# --- the oracle's expectations -----------------------------------------------------------------------------

X = np.array([[-3.5, -0.0, 0.0, 0.25], [1.0, 2.75, np.nan, -np.inf], [np.inf, 0.5, -1.25, 7.0]], np.float32)


def clip_expected(x: np.ndarray, low: float, high: float) -> np.ndarray:
    return np.array([oracle.clamp_element(float(v), "FLOAT32", None, low, high) for v in x.reshape(-1)],
                    np.float32).reshape(x.shape)


def argmax_expected(x: np.ndarray) -> np.ndarray:
    return np.array([[oracle.arg_of([float(v) for v in row], "INCREASING", largest=True)] for row in x])


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


# --- each tier gives the oracle's bits, and the compiled one replaces the NumPy one -------------------------

def test_an_operator_runs_on_numpy_while_held_then_on_its_compiled_kernel(held: Held) -> None:
    device = dml.Device("cpu")
    desc = dml.TensorDesc("FLOAT32", list(X.shape))
    compiled = device.compile_operator(device.create_operator(dml.ElementWiseClipDesc(desc, desc, -1.0, 2.0)))
    kernel = kernel_of(compiled)
    assert kernel.pending and len(held.jobs) == 1
    expected = clip_expected(X, -1.0, 2.0)

    def run() -> np.ndarray:
        out = device.create_buffer(X.nbytes)
        compiled.execute([dml.BufferBinding(device.buffer_from(X))], [dml.BufferBinding(out)])
        return out.to_numpy().view(np.float32).reshape(X.shape)

    assert same_bits(run(), expected)  # the NumPy tier
    held.release()
    assert not kernel.pending and kernel.wait_compiled(0)
    assert same_bits(run(), expected)  # the compiled kernel


def test_a_functional_call_is_remembered_only_once_its_kernel_is_compiled(held: Held) -> None:
    device = dml.Device("cpu")
    first = dml.argmax(X, 1, device=device)
    second = dml.argmax(X, 1, device=device)  # not remembered by the fast path: the ordinary path again
    assert same_bits(first, argmax_expected(X).astype(first.dtype)) and same_bits(second, first)
    assert len(held.jobs) == 1  # one operator, compiled once however often it is called
    held.release()
    for _ in range(3):  # the ordinary path, then the fast path's remembered compiled call
        assert same_bits(dml.argmax(X, 1, device=device), first)
    clipped = dml.clip(X, -1.0, 2.0, device=device)
    held.release()
    out = np.empty_like(X)
    for _ in range(3):
        assert dml.clip(X, -1.0, 2.0, out=out, device=device) is out
        assert same_bits(out, clipped) and same_bits(out, clip_expected(X, -1.0, 2.0))


def test_a_binary_operator_on_each_tier(held: Held) -> None:
    device = dml.Device("cpu")
    a = np.array([1.5, -2.0, 3.25e38, np.nan, 0.1], np.float32)
    b = np.array([2.25, 2.0, 3.25e38, 1.0, 0.2], np.float32)
    with np.errstate(over="ignore"):
        expected = a + b  # NumPy's float32 sum: each rounded once (3.25e38 twice: +inf)
    assert same_bits(dml.add(a, b, device=device), expected)
    held.release()
    assert same_bits(dml.add(a, b, device=device), expected)


def test_a_fused_graph_step_on_each_tier_and_a_repeated_execute(held: Held) -> None:
    device = dml.Device("cpu")
    graph = dml.Graph(device)
    desc = dml.TensorDesc("FLOAT32", list(X.shape))
    x = graph.input(0, desc)
    clipped = g.clip(x, -1.0, 2.0)
    compiled = graph.compile([g.argmax(clipped, [1]), clipped])  # one reduction step writing the clip too
    indices = device.create_buffer(X.shape[0] * 8)
    values = device.create_buffer(X.nbytes)
    source = device.buffer_from(X)

    def run() -> tuple[np.ndarray, np.ndarray]:
        compiled.execute([source], [indices, values])
        found = indices.to_numpy().view(np.int64)  # the builder's default output type, INT64
        return found.reshape(-1, 1), values.to_numpy().view(np.float32).reshape(X.shape)

    assert held.jobs
    clip = clip_expected(X, -1.0, 2.0)
    want = argmax_expected(clip)
    for release in (False, False, True, False):  # the second execute of each tier replays a prepared call
        if release:
            held.release()
        got_indices, got_values = run()
        assert (got_indices == want).all() and same_bits(got_values, clip)


# --- the real compile thread ---------------------------------------------------------------------------------

def test_the_compile_thread_replaces_the_kernel_and_logs_that_it_is_ready(tiered: None,
                                                                           caplog: pytest.LogCaptureFixture) -> None:
    device = dml.Device("cpu")
    x = np.linspace(-3, 3, 7, dtype=np.float32)
    desc = dml.TensorDesc("FLOAT32", [7])
    with caplog.at_level(logging.DEBUG, logger="opendml.compile"):
        compiled = device.compile_operator(device.create_operator(dml.ElementWiseThresholdDesc(desc, desc, 0.5)))
        assert tiers.wait(HANG_SECONDS)
    kernel = kernel_of(compiled)
    assert not kernel.pending and kernel._run is not getattr(kernel, "_numpy", None)
    assert any("ELEMENT_WISE_THRESHOLD FLOAT32 [7]" in r.getMessage() and "ready" in r.getMessage()
               for r in caplog.records)
    assert same_bits(dml.threshold(x, 0.5, device=device), np.maximum(x, np.float32(0.5)))


def test_calls_on_several_threads_across_the_switch_agree(tiered: None) -> None:
    device = dml.Device("cpu")
    x = np.linspace(-5, 5, 4096, dtype=np.float32).reshape(64, 64)
    expected = np.clip(x, np.float32(-1.5), np.float32(2.5))
    failures: list[str] = []

    def calls() -> None:
        for _ in range(200):
            if not same_bits(dml.clip(x, -1.5, 2.5, device=device), expected):
                failures.append("differs")
                return

    threads = [threading.Thread(target=calls) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(HANG_SECONDS)
    assert tiers.wait(HANG_SECONDS) and not failures
    assert same_bits(dml.clip(x, -1.5, 2.5, device=device), expected)


def test_a_failed_build_leaves_the_numpy_path_and_says_so(held: Held, caplog: pytest.LogCaptureFixture) -> None:
    device = dml.Device("cpu")
    dml.clip(X, 0.0, 1.0, device=device)

    def broken() -> None:
        raise RuntimeError("no compiler here")

    held.jobs[0].build = broken
    with caplog.at_level(logging.WARNING, logger="opendml.compile"):
        held.release()
    assert any("stay on the NumPy path" in r.getMessage() and "no compiler here" in r.getMessage()
               for r in caplog.records)
    for _ in range(3):
        assert same_bits(dml.clip(X, 0.0, 1.0, device=device), clip_expected(X, 0.0, 1.0))


def test_a_large_call_waits_for_its_compiled_kernel(held: Held, monkeypatch: pytest.MonkeyPatch,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(tiers, "WAIT_MIN_ELEMENTS", X.size)
    device = dml.Device("cpu")
    desc = dml.TensorDesc("FLOAT32", list(X.shape))
    compiled = device.compile_operator(device.create_operator(dml.ElementWiseClipDesc(desc, desc, -1.0, 2.0)))
    kernel = kernel_of(compiled)
    event = kernel._compiled
    waiting = event.wait
    releaser = threading.Thread(target=held.release)

    def wait(timeout: float | None = None) -> bool:  # the build is released once the call waits for it
        releaser.start()
        return waiting(timeout)

    monkeypatch.setattr(event, "wait", wait)
    out = device.create_buffer(X.nbytes)
    with caplog.at_level(logging.INFO, logger="opendml.compile"):
        compiled.execute([dml.BufferBinding(device.buffer_from(X))], [dml.BufferBinding(out)])
    releaser.join(HANG_SECONDS)
    assert not kernel.pending  # the call waited for the build rather than running on NumPy
    assert [r.getMessage() for r in caplog.records if r.getMessage().startswith("waiting")] == [
        f"waiting for the kernels of ELEMENT_WISE_CLIP FLOAT32 [3, 4] to compile: a call of {X.size} elements runs "
        "faster on them than on the NumPy path"]
    assert same_bits(out.to_numpy().view(np.float32).reshape(X.shape), clip_expected(X, -1.0, 2.0))


def test_off_compiles_at_the_compile_step(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(opendml_settings.TIERED.name, "0")
    device = dml.Device("cpu")
    desc = dml.TensorDesc("FLOAT32", [3])
    kernel = kernel_of(device.compile_operator(device.create_operator(dml.ElementWiseClipDesc(desc, desc, 0, 1))))
    assert not kernel.pending and kernel.wait_compiled(0)


def test_the_setting_refuses_a_word_it_does_not_know(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(opendml_settings.TIERED.name, "maybe")
    with pytest.raises(SettingError, match="OPENDML_TIERED"):
        tiers.enabled()


def test_both_kernel_modules_state_the_same_capabilities() -> None:
    fast, blocked = cpu_kernels.load("numba"), cpu_kernels.load("numpy")
    for name in ("REDUCTION_PROLOGUES", "FUSED_OUTPUTS"):
        assert getattr(fast, name) == getattr(blocked, name)


# --- a program that ends while a compile runs ----------------------------------------------------------------

EXITING = """
import threading
import numpy as np, opendml as dml
from opendml.backends import tiers
started, run = threading.Event(), tiers._run
def started_run(job):
    started.set()
    run(job)
tiers._run = started_run
x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
assert (dml.clip(x, -1, 2) == np.clip(x, np.float32(-1), np.float32(2))).all()
assert (dml.argmax(x, 1) == np.argmax(x, 1)[:, None]).all()
started.wait()  # a build has begun: the program ends in the middle of it
print("ended")
"""


def test_a_program_ends_while_its_kernels_compile_and_the_next_one_reads_a_sound_cache(tmp_path: Path) -> None:
    env = {**os.environ, "OPENDML_CACHE_DIR": str(tmp_path), "OPENDML_TIERED": "1", "OPENDML_CPU_KERNELS": "numba",
           "PYTHONPATH": str(ROOT)}
    for _ in range(2):  # the second starts on what the first left: whole files, or none
        done = subprocess.run([sys.executable, "-c", EXITING], env=env, capture_output=True, text=True,
                              timeout=HANG_SECONDS)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "ended" and "Traceback" not in done.stderr


# --- ahead of time: `opendml cache warm` compiles, whatever OPENDML_TIERED says -------------------------------

CLIP_NOTICES = """
import logging
import numpy as np, opendml as dml
records = []
handler = logging.Handler()
handler.emit = records.append
logging.getLogger("opendml").addHandler(handler)
logging.getLogger("opendml").setLevel(logging.INFO)
dml.clip(np.ones((4, 16), np.float32), 0, 1)
from opendml.backends import tiers
tiers.wait()
print(len([r for r in records if "compiling kernels" in r.getMessage()]))
"""


def test_a_tiered_compile_gives_its_notice_from_the_compile_thread(tmp_path: Path) -> None:
    env = {**os.environ, "OPENDML_CACHE_DIR": str(tmp_path), "OPENDML_TIERED": "1", "OPENDML_CPU_KERNELS": "numba",
           "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", CLIP_NOTICES], env=env, capture_output=True, text=True,
                          timeout=HANG_SECONDS)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"  # an empty cache: one notice, as untiered


def test_cache_warm_compiles_before_it_ends_with_tiering_on(tmp_path: Path) -> None:
    env = {**os.environ, "OPENDML_CACHE_DIR": str(tmp_path), "OPENDML_TIERED": "1", "OPENDML_CPU_KERNELS": "numba",
           "PYTHONPATH": str(ROOT)}
    warmed = subprocess.run([sys.executable, "-m", "opendml", "cache", "warm", "ELEMENT_WISE_CLIP:FLOAT32"], env=env,
                            capture_output=True, text=True, timeout=HANG_SECONDS)
    assert warmed.returncode == 0, warmed.stderr
    later = subprocess.run([sys.executable, "-c", CLIP_NOTICES], env=env, capture_output=True, text=True,
                           timeout=HANG_SECONDS)
    assert later.returncode == 0, later.stderr
    assert later.stdout.strip() == "0"  # loaded from the cache the warm-up filled: nothing compiled


# --- a property: both tiers of one kernel agree with the oracle on drawn values ------------------------------

FLOATS = st.floats(width=32, allow_nan=True, allow_infinity=True)


@settings(max_examples=15, deadline=None)
@given(values=st.lists(FLOATS, min_size=1, max_size=24), low=st.floats(-4, 4, width=32),
       width=st.floats(0, 8, width=32), half=st.booleans())
def test_each_tier_clips_as_the_oracle(values: list[float], low: float, width: float, half: bool) -> None:
    type_name = "FLOAT16" if half else "FLOAT32"
    with np.errstate(over="ignore"):  # a float beyond FLOAT16's range becomes an infinity
        x = np.array(values, np.float32).astype(np.float16 if half else np.float32)
    high = float(np.float32(low + width))
    expected = np.array([oracle.clamp_element(float(v), type_name, None, low, high) for v in x], x.dtype)
    device = dml.Device("cpu")
    desc = dml.TensorDesc(type_name, [x.size])
    operator = device.create_operator(dml.ElementWiseClipDesc(desc, desc, low, high))
    spec, (inputs, output) = operator.kernel_spec, operator.kernel_tensors
    for module in ("numpy", "numba"):
        run = cpu._built(cpu_kernels.load(module), spec, tuple(inputs), output, (), 1)
        out = np.empty_like(x)
        run(x, out, 1)
        assert same_bits(out, expected), module


@settings(max_examples=15, deadline=None)
@given(rows=st.lists(st.lists(FLOATS, min_size=5, max_size=5), min_size=1, max_size=4))
def test_each_tier_finds_the_oracles_argmax(rows: list[list[float]]) -> None:
    x = np.array(rows, np.float32)
    expected = argmax_expected(x)
    device = dml.Device("cpu")
    operator = device.create_operator(dml.ArgMaxDesc(dml.TensorDesc("FLOAT32", list(x.shape)),
                                                     dml.TensorDesc("INT64", [x.shape[0], 1]), [1]))
    spec, (inputs, output) = operator.kernel_spec, operator.kernel_tensors
    for module in ("numpy", "numba"):
        run = cpu._built(cpu_kernels.load(module), spec, tuple(inputs), output, (), 1)
        out = np.empty((x.shape[0], 1), np.int64)
        run(x, out, 1)
        assert (out == expected).all(), module


# --- a fork while a kernel compiles ------------------------------------------------------------------------

FORKING = """
import os, threading, time
import numpy as np, opendml as dml
from opendml.backends import tiers
started, run = threading.Event(), tiers._run
def started_run(job):
    started.set()
    run(job)
tiers._run = started_run
x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
dml.clip(x, -1, 2)
started.wait()
time.sleep(0.2)  # inside the build (importing Numba, or compiling)
pid = os.fork()
if pid == 0:
    y = np.linspace(-3, 3, 15, dtype=np.float32).reshape(3, 5)
    same = (dml.clip(y, -1, 2) == np.clip(y, np.float32(-1), np.float32(2))).all()
    desc = dml.TensorDesc("FLOAT32", [3, 5])
    kernel = dml.Device("cpu").compiled(dml.ElementWiseClipDesc(desc, desc, -1, 2)).kernel
    compiled = tiers.wait(600) and kernel.wait_compiled(600) and not kernel.pending and kernel._run is not getattr(kernel, "_numpy", None)
    os._exit(0 if same and compiled else 3)
_, status = os.waitpid(pid, 0)
print("child", os.waitstatus_to_exitcode(status))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_child_forked_while_a_kernel_compiles_compiles_its_own(tmp_path: Path) -> None:
    env = {**os.environ, "OPENDML_CACHE_DIR": str(tmp_path), "OPENDML_TIERED": "1", "OPENDML_CPU_KERNELS": "numba",
           "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", FORKING], env=env, capture_output=True, text=True,
                          timeout=HANG_SECONDS)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "child 0", done.stderr  # no build failed or hung in the child
    assert "could not compile" not in done.stderr


def test_a_new_layout_of_a_compiled_element_wise_kernel_is_not_tiered_again(held: Held) -> None:
    device = dml.Device("cpu")

    def clip_kernel(shape: list[int]) -> CpuKernel:
        desc = dml.TensorDesc("FLOAT32", shape)
        return kernel_of(device.compiled(dml.ElementWiseClipDesc(desc, desc, -1.0, 2.0)))

    assert clip_kernel([3, 4]).pending
    held.release()
    assert not clip_kernel([5, 7]).pending and not held.jobs  # the same kernels serve it: built at once
    x = np.linspace(-4, 4, 35, dtype=np.float32).reshape(5, 7)
    assert same_bits(dml.clip(x, -1.0, 2.0, device=device), clip_expected(x, -1.0, 2.0))
    columns = dml.TensorDesc("FLOAT32", [5, 7])
    argmax = device.compiled(dml.ArgMaxDesc(columns, dml.TensorDesc("INT64", [5, 1]), [1]))
    held.release()
    rows = device.compiled(dml.ArgMaxDesc(columns, dml.TensorDesc("INT64", [1, 7]), [0]))
    assert not kernel_of(argmax).pending and kernel_of(rows).pending  # a reduction's layout picks its engines
