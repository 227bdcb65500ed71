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

A driver is compiled only for work that runs again and again. Compiling one costs 1.3-1.6 s (Numba
optimises the kernel again inside it), more than compiling the kernel itself, and the first call of an
operator must stay under 2 s. So ``ready`` says whether a launch would run without compiling: the
driver is already compiled for these argument types in this process, or its compiled code is in the kernel
cache (loaded then, in milliseconds). Otherwise the caller shares the work out to Python threads
(``threads.run_tasks``, the same kernel over the same shares), and from the ``PROMOTE_AFTER``-th such call of
one driver and argument types on, the driver is compiled: a kernel run that often is in a loop, where
starting the threads from native code pays (about 300 us a call on 16 cores), and the cache keeps it for
every later process.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from numba import njit, types
from numba._dispatcher import compute_fingerprint
from numba.core import cgutils
from numba.core.compiler_lock import global_compiler_lock
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


PROMOTE_AFTER = 4  # threaded calls of one driver and argument types on Python threads before it is compiled

_READY = -1
_calls: dict[tuple[Any, ...], int] = {}  # (driver, argument types) -> threaded calls so far, or _READY


def ready(driver: Callable[..., None], args: tuple[Any, ...]) -> bool:
    """Whether ``launch(driver, args, ...)`` may run now: it compiles nothing, or the driver has earned its
    compile (the module docstring). False where launches may not run at all (``usable``)."""
    if not usable():
        return False
    key = (driver, *map(_type_key, args))
    calls = _calls.get(key)
    if calls == _READY:
        return True
    if calls is None and _load_compiled(driver, args):
        _calls[key] = _READY
        return True
    calls = (calls or 0) + 1
    if len(_calls) > 4096:
        _calls.clear()
    _calls[key] = _READY if calls >= PROMOTE_AFTER else calls
    return calls >= PROMOTE_AFTER


def _type_key(value: Any) -> Any:
    """What Numba types ``value`` by, cheaply (the fingerprint its dispatchers use, else its type)."""
    try:
        return compute_fingerprint(value)
    except (NotImplementedError, ValueError, TypeError):
        return type(value), getattr(value, "dtype", None)


def _load_compiled(driver: Any, args: tuple[Any, ...]) -> bool:
    """Whether ``driver`` is compiled for ``args`` (and the counter and worker count), after loading it from
    the kernel cache if it is there; never compiles. Numba's own ``compile`` does the same before it
    compiles: this is that step alone (internal attributes: any surprise counts as not compiled)."""
    try:
        signature = tuple(driver.typeof_pyval(a) for a in (*args, np.zeros(1, np.int64), 1))
        with global_compiler_lock:
            if signature in driver.overloads:
                return True
            compiled = driver._cache.load_overload(signature, driver.targetctx)
            if compiled is None:
                return False
            driver.targetctx.insert_user_function(compiled.entry_point, compiled.fndesc, [compiled.library])
            driver.add_overload(compiled)
            return True
    except Exception:  # a Numba without these internals compiles the driver on promotion instead
        return False


def launch(driver: Callable[..., None], args: tuple[Any, ...], workers: int) -> None:
    """``driver(*args, counter, workers)`` on ``workers`` of Numba's threads (at most NUMBA_NUM_THREADS).

    Python threads running operators at once (a Dask worker's tasks, a threaded scheduler's) launch at
    once where Numba's threading layer allows it (OpenMP, TBB: each caller gets its own team). Numba's
    ``workqueue`` threads (its fallback where neither is installed) end the process if two Python threads
    start parallel loops at once, so there launches take turns; so does every launch until the first has
    chosen the layer. The thread count is Numba's per-thread setting: concurrent launches keep their own.
    """
    workers = max(1, min(workers, numba.config.NUMBA_NUM_THREADS))
    if _concurrent_launches():
        _run(driver, args, workers)
    else:
        with _lock:
            _run(driver, args, workers)


def _run(driver: Callable[..., None], args: tuple[Any, ...], workers: int) -> None:
    before = numba.get_num_threads()  # this thread's setting, which the caller's own Numba code may use
    numba.set_num_threads(workers)
    try:
        driver(*args, np.zeros(1, np.int64), workers)
    finally:
        numba.set_num_threads(before)


_SAFE_LAYERS = frozenset({"omp", "tbb"})  # Numba's threading layers that take parallel loops from many threads


def _concurrent_launches() -> bool:
    """Whether parallel loops may start from several Python threads at once: the layer Numba chose (at the
    first launch, which therefore runs alone) is thread-safe."""
    try:
        return numba.threading_layer() in _SAFE_LAYERS
    except ValueError:  # no parallel loop has run yet: the layer is not chosen
        return False


def bounds_of(pieces: list[tuple[int, int]]) -> np.ndarray:
    """Contiguous ``[start, stop)`` pieces as the drivers' ``bounds``."""
    return np.array([a for a, _ in pieces] + [pieces[-1][1]], np.int64)
