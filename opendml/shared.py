"""One object per process for each pickled recipe: what devices, compiled operators, compiled graphs and
compiled functions rebuild themselves from when they are unpickled (sent to Dask workers, for example).

Each of them pickles as the few values it is made from, not as its compiled kernels (which are native code
of one process) or its buffers. On arrival it is looked up here under a key of those values and built only
when the process has none yet, so every task a worker runs shares one device and one compile cache instead
of compiling again per task. The process that pickled an object records it here under its key too: there
(and in a Dask scheduler running in that process, which unpickles every task it relays) it unpickles to
itself.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    """Objects by key, each made once (under a lock, so tasks unpickling it on several threads at once
    share one); the oldest are dropped past ``limit`` so a long-lived worker does not hold every graph it
    was ever sent."""

    def __init__(self, limit: int | None = None) -> None:
        self._objects: dict[Hashable, T] = {}
        self._limit = limit
        self._lock = threading.RLock()  # re-entrant: making one object may unpickle or make another

    def get(self, key: Hashable, make: Callable[[], T]) -> T:
        """The object under ``key``, made by ``make()`` if there is none yet."""
        found = self._objects.get(key)
        if found is not None:
            return found
        with self._lock:
            found = self._objects.get(key)
            if found is None:
                found = make()
                self._store(key, found)
            return found

    def remember(self, key: Hashable, value: T) -> None:
        """Record ``value`` under ``key`` unless the key already has an object (the first one stays)."""
        if key not in self._objects:
            with self._lock:
                if key not in self._objects:
                    self._store(key, value)

    def _store(self, key: Hashable, value: T) -> None:
        if self._limit is not None and len(self._objects) >= self._limit:
            del self._objects[next(iter(self._objects))]  # dicts keep insertion order: the oldest goes
        self._objects[key] = value


def new_token() -> str:
    """A name for one object that has no natural key (a compiled graph, a compiled function): every copy
    pickled from it carries the name, so a process rebuilds it once however many tasks carry it."""
    return uuid.uuid4().hex
