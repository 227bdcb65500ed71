"""Tiered execution on the CPU: a kernel not compiled yet runs on the NumPy path while Numba compiles it.

Compiling a Numba kernel takes 0.5 to 2 s on its first use (a load from the kernel cache, tens of
milliseconds after importing Numba). With ``OPENDML_TIERED`` on (the default) and the Numba kernels in force,
``CpuKernel`` builds the NumPy path's kernel of its KernelSpec at the compile step (``cpu_kernels.blocked``,
which evaluates the same expression and gives the same bits; what it refuses is refused there, at once) and
hands the Numba build to ``compile_later``: one daemon thread, which compiles the queued kernels one after
another, in order, inside the compile step's notice (``opendml.compile`` logs the same INFO line, named by the
operator). When a build ends, the kernel's call is replaced by the compiled one; calls made meanwhile ran on
NumPy. A build that fails leaves the NumPy path in place for good, logged as a WARNING: the results are the
same, only slower.

Why a thread, not a process: the compiled code must end up in this process, and LLVM, which takes most of a
compile, runs in llvmlite's foreign calls with the GIL released; Numba's typing holds it in slices that
Python's switch interval shares with the caller (``benchmarks/first_call.py`` measures the caller). Why a
daemon: a program that ends while a compile runs must not wait for it. Nothing half-written is ever read:
the generated module is written whole by ``os.replace`` (``kernels.cache.write_text``), Numba writes its
index and data files the same way, and an index entry whose data file never came is a miss (compiled again).

A kernel whose build already ended in this process, every kernel where ``OPENDML_TIERED`` is off, and
every kernel compiled inside ``compiled_now`` (``opendml cache warm``) is built at the compile step as
before. ``wait`` blocks until every queued build has ended (tests); a call over ``WAIT_MIN_ELEMENTS`` or
more elements waits for its own kernel (``CpuKernel``). A fork waits for the build in progress, and the
child queues the parent's pending builds on a compile thread of its own (``_before_fork``).
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from .. import settings
from ..kernels import notices
from . import cpu_kernels

LOGGER = notices.LOGGER

# A call over this many elements or more, made while its kernel compiles, waits for the compiled kernel. The
# NumPy path is 10 to 40 times slower than the compiled kernels over large arrays (2 cores: CLIP FLOAT32 of
# 2^24 elements 102 ms against 11 ms, ARGMAX over rows of 256 120 ms against 3 ms) and a compile takes 0.5 to
# 2 s, so one call pays for waiting only from about 2^28 elements (a GiB of FLOAT32) on; smaller calls in a
# loop switch to the compiled kernel within the loop.
WAIT_MIN_ELEMENTS = 1 << 28


_local = threading.local()


def enabled() -> bool:
    """Whether a new CPU kernel is tiered: OPENDML_TIERED is on, this thread is not inside ``compiled_now``,
    and the Numba kernels are in force (never imports Numba: the NumPy path needs none)."""
    return settings.TIERED.get() and not getattr(_local, "now", False) and cpu_kernels.choice() == "numba"


@contextmanager
def compiled_now() -> Iterator[None]:
    """Inside, this thread's compile steps compile their kernels before they return, tiering or not: what
    compiles ahead of time (``opendml cache warm``) must have compiled when it ends."""
    before = getattr(_local, "now", False)
    _local.now = True
    try:
        yield
    finally:
        _local.now = before


@dataclass(eq=False)  # each build is itself (a set holds the pending ones)
class Build:
    """One queued compile: ``build()`` makes the compiled call, ``done(call)`` installs it."""

    key: Callable[[], Hashable]  # computed when the build has ended (``CpuKernel``: it may need the module built)
    label: str
    build: Callable[[], Any]
    done: Callable[[Any], None]
    failed: Callable[[], None]
    finished: threading.Event = field(default_factory=threading.Event)


_queue: queue.SimpleQueue[Build] = queue.SimpleQueue()
_lock = threading.Lock()
_worker: threading.Thread | None = None
_pending: set[Build] = set()
_idle = threading.Condition(_lock)
# Held by the compile thread for each whole build, and by a fork while it copies the process: a child never
# starts with a build half done (Numba's compiler lock held by a thread it does not have, a module half
# imported: its builds failed or hung), so a fork waits for the build in progress to end.
_building = threading.Lock()
_forking = threading.local()
_built: set[Hashable] = set()  # the keys whose build ended in this process: built at once from then on
_BUILT_LIMIT = 4096  # then forgotten (a kernel built again in the background is only briefly on NumPy)


def built(key: Callable[[], Hashable]) -> bool:
    """Whether a kernel of ``key()`` was compiled in this process already (its build is then quick)."""
    return bool(_built) and key() in _built


def compile_later(key: Callable[[], Hashable], label: str, build: Callable[[], Any], done: Callable[[Any], None],
                  failed: Callable[[], None]) -> Build:
    """Queue ``build`` on the compile thread (started on first use): ``done(result)`` when it ends,
    ``failed()`` after logging a WARNING when it raises."""
    global _worker
    job = Build(key, label, build, done, failed)
    with _lock:
        _pending.add(job)
        if _worker is None or not _worker.is_alive():  # none yet, or a forked child's copy of the parent's
            _worker = threading.Thread(target=_work, name="opendml-compile", daemon=True)
            _worker.start()
    _queue.put(job)
    return job


def _work() -> None:
    while True:
        job = _queue.get()
        try:
            with _building:
                _run(job)
        finally:
            job.finished.set()
            with _lock:
                _pending.discard(job)
                _idle.notify_all()


def _run(job: Build) -> None:
    """One build; whatever it raises is logged and leaves the NumPy path in place (the thread goes on with the
    next build)."""
    started = time.perf_counter()
    try:
        with notices.compiling(job.label):
            result = job.build()
        key = job.key()
    except Exception as error:  # the NumPy path stays: same bits, slower
        LOGGER.warning("could not compile kernels for %s; its calls stay on the NumPy path: %s", job.label, error)
        job.failed()
        return
    if len(_built) >= _BUILT_LIMIT:
        _built.clear()
    _built.add(key)
    job.done(result)
    LOGGER.debug("kernels for %s ready after %.1f s in the background", job.label, time.perf_counter() - started)


def wait(timeout: float | None = None) -> bool:
    """Block until every queued build has ended (False if ``timeout`` seconds passed first)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    with _lock:
        while _pending:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            _idle.wait(left)
    return True


def pending() -> int:
    """How many builds are queued or running."""
    with _lock:
        return len(_pending)


def label_now(default: Callable[[], str]) -> str:
    """The name of the compile step this thread is in (the operator, its type and sizes), else ``default()``:
    what the background compile's notice says."""
    step = notices.current()
    return step.label if step is not None else default()


def _before_fork() -> None:
    """Wait for the build in progress, and start none until the fork is done (not from the compile thread
    itself, which holds the lock already)."""
    if threading.current_thread() is _worker:
        _forking.held = False
        return
    if not _building.acquire(blocking=False):
        LOGGER.info("a fork waits for the kernel compile in progress to end")
        _building.acquire()
    _forking.held = True


def _after_fork_in_parent() -> None:
    if getattr(_forking, "held", False):
        _forking.held = False
        _building.release()


def _after_fork_in_child() -> None:
    """A forked child has no compile thread (only the forking thread survives), and no build was under way
    at the fork (``_before_fork``): the builds queued in the parent are queued again on a thread of the
    child's own."""
    global _queue, _lock, _idle, _worker, _pending, _building
    jobs = list(_pending)
    _queue, _lock, _building = queue.SimpleQueue(), threading.Lock(), threading.Lock()
    _idle, _worker, _pending = threading.Condition(_lock), None, set()
    _forking.held = False
    for job in jobs:
        compile_later(job.key, job.label, job.build, job.done, job.failed)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)
