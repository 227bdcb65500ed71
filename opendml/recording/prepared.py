"""Prepared dispatches: what a recorded dispatch replays, everything that can be resolved resolved once.

A prepared dispatch is a tuple of calls taking no arguments, run in order: one per kernel, each made by the
kernel's ``prepare`` (the CPU's views and layout walk, CUDA's launch arguments and partial-result buffers)
or, for a kernel without one, its ``execute`` over the checked bindings. No binding is checked and nothing
is allocated when it runs.

It also says which persistent resources it writes (an operator initializer's outputs: a graph's constants)
and which it needs written (a graph dispatched with a persistent resource reads its constants there):
``CommandQueue.execute_command_lists`` checks the second against the first before it runs anything.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..binding import BoundTensor
from ..operator import Kernel

if TYPE_CHECKING:
    from ..buffer import Buffer
    from ..graphs.compiled import CompiledGraph

Run = Callable[[], None]


@dataclass(frozen=True)
class PersistentKey:
    """A graph's constants in a persistent resource: the graph, the buffer and the offset there."""

    graph: CompiledGraph
    buffer: Buffer
    offset: int


@dataclass(frozen=True)
class PreparedDispatch:
    """The calls a recorded dispatch replays, in order, and the persistent resources it writes and reads."""

    runs: tuple[Run, ...]
    writes: tuple[PersistentKey, ...] = ()
    needs: tuple[PersistentKey, ...] = ()


def prepare_kernel(kernel: Kernel, inputs: Sequence[BoundTensor | None], outputs: Sequence[BoundTensor]) -> Run:
    """One kernel over checked bindings as a call taking no arguments."""
    prepare = getattr(kernel, "prepare", None)
    if prepare is not None:
        return prepare(inputs, outputs)  # type: ignore[no-any-return]
    return functools.partial(kernel.execute, list(inputs), list(outputs))


class Locked:
    """Runs holding a lock: a compiled graph's steps over its own intermediates' arena, which ``execute`` on
    another thread uses too."""

    def __init__(self, lock: threading.Lock, runs: tuple[Run, ...]) -> None:
        self._lock = lock
        self._runs = runs

    def __call__(self) -> None:
        with self._lock:
            for run in self._runs:
                run()


# Persistent resources an operator initializer has written a graph's constants into, by graph then buffer:
# the offsets there. Weak, so that neither graphs nor buffers are kept alive by having been initialized.
_written: weakref.WeakKeyDictionary[CompiledGraph, weakref.WeakKeyDictionary[Buffer, set[int]]] = \
    weakref.WeakKeyDictionary()


def written(key: PersistentKey) -> bool:
    """Whether an executed initializer dispatch wrote ``key.graph``'s constants at ``key``."""
    buffers = _written.get(key.graph)
    return buffers is not None and key.offset in buffers.get(key.buffer, set())


def mark_written(keys: Sequence[PersistentKey]) -> None:
    for key in keys:
        _written.setdefault(key.graph, weakref.WeakKeyDictionary()).setdefault(key.buffer, set()).add(key.offset)
