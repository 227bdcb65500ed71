"""A Dask worker's share of the cores: the default thread count of a device made in a ``distributed`` worker.

A worker runs several tasks at once, one per thread, and a host often runs several worker processes. Dask's
nanny limits OpenMP, MKL and OpenBLAS to one thread per worker process, but it does not limit Numba's
threads (dask/distributed#9075) or opendml's. If every task used every core, 2 workers of 1 thread on 2
cores would run 4 threads on 2 cores. So a device made without ``threads=`` (and without
OPENDML_NUM_THREADS) in a worker uses

    max(1, cores // (worker threads in this process * worker processes started beside it))

where the worker processes started beside it are those its parent started with the same command line (a
LocalCluster's or ``dask worker --nworkers N``'s workers, numbers in the command line aside). Worker
processes started separately on one host are not seen: there, set OPENDML_NUM_THREADS for the workers
(``distributed.nanny.pre-spawn-environ``) or pass ``threads=``. The rule uses only what this process knows,
so a device gets the same count whichever thread makes it (devices sent to a worker are unpickled on its
event loop, where asking the scheduler would block the loop that has to carry the answer).

In a process that runs a scheduler as well (an in-process cluster, ``LocalCluster(processes=False)``), the
process is the client's too: only a device made inside a task takes the share, and no other process is
counted. ``distributed`` is never imported here: without it in ``sys.modules`` there is no worker.
"""

from __future__ import annotations

import re
import sys
from typing import Any

_FINISHED = frozenset({"stopping", "stopped", "closing", "closed", "failed"})


def worker_share(cores: int) -> int | None:
    """The thread count of a device made now in a Dask worker, or None outside any worker."""
    module = sys.modules.get("distributed.worker")
    if module is None:
        return None
    in_task = _current_worker(module)
    workers = [w for w in list(module.Worker._instances) if _alive(w)]
    with_scheduler = _runs_scheduler()
    if in_task is None and (not workers or with_scheduler):
        return None
    threads = sum(_threads(w) for w in workers) if workers else _threads(in_task)
    processes = 1 if with_scheduler else _worker_processes()
    return max(1, cores // max(1, threads * processes))


def _current_worker(module: Any) -> Any:
    try:
        return module.get_worker()
    except ValueError:  # not inside a task
        return None


def _alive(worker: Any) -> bool:
    return getattr(getattr(worker, "status", None), "name", "closed") not in _FINISHED


def _threads(worker: Any) -> int:
    try:
        return max(1, int(worker.state.nthreads))
    except (AttributeError, TypeError, ValueError):
        return 1


def _runs_scheduler() -> bool:
    module = sys.modules.get("distributed.scheduler")
    return module is not None and any(_alive(s) for s in list(module.Scheduler._instances))


def _worker_processes() -> int:
    """This process and its siblings of the same command line (numbers aside: a spawned child's names the
    pipes it was handed); 1 where that cannot be told."""
    try:
        import psutil  # a dependency of distributed, which is imported whenever this runs

        me = psutil.Process()
        parent = me.parent()
        if parent is None:
            return 1
        mine = _shape(me.cmdline())
        return max(1, sum(1 for child in parent.children() if _shape(_cmdline(child)) == mine))
    except Exception:  # psutil missing, or a process list the platform does not give
        return 1


def _cmdline(process: Any) -> list[str] | None:
    try:
        return list(process.cmdline())
    except Exception:  # a sibling that ended, or one this user may not inspect
        return None


def _shape(cmdline: list[str] | None) -> str | None:
    return None if cmdline is None else re.sub(r"\d+", "#", "\0".join(cmdline))
