"""A one-line notice, on the ``opendml.compile`` logger, whenever a kernel is compiled rather than loaded.

Compiling a kernel (Numba on the CPU, NVRTC on CUDA) takes seconds the first time a kernel is used, and
nothing else would tell the user why a call is slow. ``compiling(label)`` wraps the compile step of an operator
or fused graph kernel; the first compile that no cache serves inside it logs one INFO record naming the
operator, the data type and the sizes ("compiling kernels for ELEMENT_WISE_CLIP FLOAT32 [4, 64]: first use,
cached afterwards"), and the end of the step one DEBUG record with the count and the time. A step served by
the caches logs nothing. Compiles outside any step (a new layout met by a functional call) log their own
INFO record, named by the kernel.

How a compile is seen: Numba's ``numba:compile`` event, which Numba fires only after its disk cache missed
(``watch_numba``, for opendml's own kernels only); for CUDA, whose compiler CuPy hides behind its own disk
cache, a compile still running after ``SLOW_SECONDS`` (``slow``). Logging only, never ``warnings``: the
library's users decide where records go; ``opendml onnx -v`` and ``opendml dispatch -v`` print them
(``shown_on_stderr``).
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LOGGER = logging.getLogger("opendml.compile")
SLOW_SECONDS = 1.0
NOTICE = "compiling kernels for %s: first use, cached afterwards"


@dataclass
class Step:
    """One compile step: what it compiles, and what it has compiled so far."""

    label: str
    started: float = field(default_factory=time.perf_counter)
    compiled: int = 0
    noticed: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def compile_started(self) -> None:
        with self.lock:  # a CUDA timer may call this from its own thread
            self.compiled += 1
            first, self.noticed = not self.noticed, True
        if first:
            LOGGER.info(NOTICE, self.label)


_local = threading.local()


def current() -> Step | None:
    """The compile step this thread is in, if any."""
    return getattr(_local, "step", None)


@contextmanager
def compiling(label: str | Callable[[], str]) -> Iterator[Step]:
    """A compile step named ``label`` (or its value, computed only where a step begins: nested steps, a
    graph's operators, belong to the outermost)."""
    outer = current()
    if outer is not None:
        yield outer
        return
    step = _local.step = Step(label if isinstance(label, str) else label())
    try:
        yield step
    finally:
        _local.step = None
        if step.compiled:
            LOGGER.debug("compiled %d kernels for %s in %.1f s", step.compiled, step.label,
                         time.perf_counter() - step.started)


def compile_started(kernel: str) -> None:
    """A kernel no cache serves is being compiled: the step's notice, or one of its own outside a step."""
    step = current()
    if step is not None:
        step.compile_started()
    else:
        LOGGER.info(NOTICE, kernel)


@contextmanager
def slow(kernel: str, seconds: float = SLOW_SECONDS) -> Iterator[None]:
    """A compile that may be served by a cache opendml cannot see into: noticed only if still running after
    ``seconds`` (a disk cache hit takes milliseconds)."""
    step = current()
    notice = step.compile_started if step is not None else lambda: LOGGER.info(NOTICE, kernel)
    timer = threading.Timer(seconds, notice)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def describe(name: str, desc: Any) -> str:
    """How a step is named: the operator, then its first tensor's data type and sizes."""
    if desc is None:
        return name
    return f"{name} {desc.data_type.name} {list(desc.sizes)}"


# --- Numba --------------------------------------------------------------------------------------------------

_watching = False


def watch_numba(ours: Callable[[Path], bool]) -> None:
    """Notice every Numba compile of a function whose source file ``ours`` accepts (opendml's kernels, not
    other Numba users'). Numba fires ``numba:compile`` only when its disk cache has no code for the
    signature, so a cache hit stays silent."""
    global _watching
    if _watching:
        return
    from numba.core import event

    class Notice(event.Listener):  # type: ignore[misc]
        def on_start(self, ev: Any) -> None:
            function = getattr(ev.data.get("dispatcher"), "py_func", None)
            code = getattr(function, "__code__", None)
            if code is not None and ours(Path(code.co_filename)):
                compile_started(getattr(function, "__qualname__", "a kernel"))

        def on_end(self, ev: Any) -> None:
            pass

    event.register("numba:compile", Notice())
    _watching = True


# --- the command line ---------------------------------------------------------------------------------------


class _Stderr(logging.Handler):
    """One line per record on the ``sys.stderr`` of the moment (a test's capture, if any)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            print(f"opendml: {record.getMessage()}", file=sys.stderr, flush=True)
        except Exception:  # a closed stream: logging's own report, never an exception in the caller
            self.handleError(record)


@contextmanager
def shown_on_stderr(enabled: bool = True) -> Iterator[None]:
    """While inside, opendml's INFO records (the compile notices) are printed on stderr as they happen, one
    line each: what the command-line tools' ``-v`` asks for. The logger is as before afterwards."""
    if not enabled:
        yield
        return
    logger = logging.getLogger("opendml")
    handler, level = _Stderr(logging.INFO), logger.level
    logger.addHandler(handler)
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
