"""How many threads a device's operators may use: the Device's ``threads=``, else OPENDML_NUM_THREADS, else in a
Dask worker its share of the cores (``worker_share``), else every core this process may run on.

A setting of the device (``Device(threads=...)``, carried by its pickles), read here where the device is made;
the CPU backend's pool (``backends.cpu_kernels.threads``) only runs what a device's count allows.
"""

from __future__ import annotations

import os

from . import settings
from .errors import invalid
from .worker_share import worker_share

ENV_THREADS = settings.NUM_THREADS.name


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity where the platform reports it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _positive(value: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise invalid("Device", field, "must be a positive integer", repr(value))
    return value


def resolve_threads(threads: int | None) -> int:
    """The thread count of a device: ``threads`` if given, else OPENDML_NUM_THREADS, else in a Dask worker
    its share of the cores (``worker_share``), else every core."""
    if threads is not None:
        return _positive(threads, "threads")
    from_env = settings.NUM_THREADS.get()
    if from_env is not None:
        return from_env
    cores = available_cores()
    share = worker_share(cores)
    return cores if share is None else share
