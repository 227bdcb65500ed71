"""The JIT kernels run over their shares on Numba's own threads (``parallel=True``), not Python's.

Each Python worker thread had to take the GIL to start its first share, one after another: on 16 cores
waking them cost about 300 us a call even for no work, a third of an INT8 CLIP of 2^26 elements, and the
last threads started that much later. A Numba parallel loop starts its threads from native code in a few
microseconds. Each thread runs one iteration of ``prange(workers)`` and in it takes the next share not yet
started (an atomic counter), as ``threads.run_tasks`` does: a thread slowed by other work on its core does
fewer shares instead of holding up the rest.

Every driver (these, and each generated element-wise module's ``driver``) takes its kernel's arguments with
``start, stop`` replaced by the shares (``bounds``: share
``k`` is ``bounds[k]..bounds[k + 1]``; ARGMIN: one row of ``tasks`` per share), then the counter and the
worker count. ``launch`` runs one; ``usable`` says whether it may (``fast`` falls back to Python threads).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from ...kernels.cache import use_for_numba

use_for_numba()  # before the decorators: Numba picks each function's cache directory then

parallel = njit(nogil=True, cache=True, parallel=True)


@intrinsic
def next_share(typingctx, counter):  # type: ignore[no-untyped-def]
    """``counter[0]``, incremented atomically: the share this thread takes next."""
    if not isinstance(counter, types.Array) or counter.dtype != types.int64:
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [context.get_constant(types.intp, 0)])
        # Monotonic is enough: the shares' data is disjoint, and the loop's end orders everything after it.
        return builder.atomic_rmw("add", ptr, context.get_constant(types.int64, 1), "monotonic")

    return types.int64(counter), codegen


_lock = threading.Lock()
_forked_from_omp = False


def usable() -> bool:
    """Whether launches may run here: not in a child forked from a process whose threads are GNU OpenMP's
    (Numba would end the child: that runtime does not survive a fork)."""
    return not _forked_from_omp


def _after_fork_in_child() -> None:
    global _lock, _forked_from_omp
    _lock = threading.Lock()  # a parent thread may have held it at the fork
    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel loop ran in the parent: the child starts its own threads
        return
    _forked_from_omp = layer == "omp"


os.register_at_fork(after_in_child=_after_fork_in_child)


def launch(driver: Callable[..., None], args: tuple[Any, ...], workers: int) -> None:
    """``driver(*args, counter, workers)`` on ``workers`` of Numba's threads (at most NUMBA_NUM_THREADS).

    One launch at a time in the process: Numba's ``workqueue`` threads (its fallback where neither TBB nor
    OpenMP is installed) end the process if two Python threads start parallel loops at once. Each launch
    already uses the threads it was given, so waiting costs nothing in throughput.
    """
    workers = max(1, min(workers, numba.config.NUMBA_NUM_THREADS))
    with _lock:
        before = numba.get_num_threads()  # this thread's setting, which the caller's own Numba code may use
        numba.set_num_threads(workers)
        try:
            driver(*args, np.zeros(1, np.int64), workers)
        finally:
            numba.set_num_threads(before)


def bounds_of(pieces: list[tuple[int, int]]) -> np.ndarray:
    """Contiguous ``[start, stop)`` pieces as the drivers' ``bounds``."""
    return np.array([a for a, _ in pieces] + [pieces[-1][1]], np.int64)
