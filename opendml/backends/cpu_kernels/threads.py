"""The shared worker pool of the CPU backend (how many threads a device uses: ``opendml.thread_count``).

NumPy ufuncs and the JIT kernels release the GIL, so plain Python threads run them on every core.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_pool_lock = threading.Lock()


def _forget_pool_in_child() -> None:
    """A forked child has none of the parent's worker threads: it starts a pool of its own when needed."""
    global _pool, _pool_size, _pool_lock
    _pool, _pool_size, _pool_lock = None, 0, threading.Lock()


os.register_at_fork(after_in_child=_forget_pool_in_child)


def _executor(workers: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size < workers:
            # A larger pool replaces the old one, which finishes what it holds (never shut down under a caller).
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="opendml-cpu")
            _pool_size = workers
        return _pool


def run_tasks(task: Callable[..., Any], arguments: Sequence[tuple[Any, ...]], threads: int) -> list[Any]:
    """``task(*a)`` for each ``a``, on up to ``threads`` threads (the calling one included); results in order.

    One task, or one thread, runs in the calling thread: small work pays no threading cost. Otherwise each
    thread takes the next task not yet started until none is left, so a thread slowed by other work on its
    core (a shared machine) does fewer tasks instead of holding up the rest; the calling thread works too,
    instead of only waiting. No more than ``threads`` tasks run at once whatever the pool's size.
    """
    if threads <= 1 or len(arguments) <= 1:
        return [task(*a) for a in arguments]
    workers = min(threads, len(arguments))
    results: list[Any] = [None] * len(arguments)
    order = itertools.count()  # next() on a count is atomic under the GIL

    def work() -> None:
        for k in iter(order.__next__, None):
            if k >= len(arguments):
                return
            results[k] = task(*arguments[k])

    pool = _executor(workers - 1)
    futures = [pool.submit(work) for _ in range(workers - 1)]
    try:
        work()
    finally:
        for f in futures:
            # One not started yet would find no task left: the caller need not wait for the pool's threads
            # to come free from other callers' work (tasks of a Dask worker running operators at once).
            if not f.cancel():
                f.result()
    return results
