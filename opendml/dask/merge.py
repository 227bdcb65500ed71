"""The partial results of argmin and argmax across chunks, and their merge.

A partial holds, per output element, the winning value of some chunks and its index in the whole array.
Two partials merge by (value, index), never by position, as ``ops.arg_order`` orders them: a total
order on the candidates (indices are distinct), so the merge is associative and commutative and the result
does not depend on the chunking or on the shape of Dask's tree (all-NaN chunks included).

The functions take NumPy or CuPy arrays alike (NumPy's functions dispatch to CuPy's through its array
protocols; ``transfer`` says how GPU partials move between workers); ``combine`` and ``aggregate`` take
Dask's ``computing_meta=True`` (query planning) and then run nothing.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from dask.sizeof import sizeof

from ..enums import AxisDirection, NanPolicy
from ..kernels.spec import ReductionKind
from ..ops.arg_order import ArgOrder
from . import transfer


@dataclass(frozen=True)
class Partial:
    """The winning values of some chunks and their indices in the whole array (INT64, or the output type
    once aggregated), both of the output's shape. A partial of GPU arrays carries the event that follows their
    kernels (``ready``), and travels between workers through host memory (``transfer``); ``on_gpu`` says its
    arrays belong on the GPU, also while they are held on the host after a move. A partial of no candidates
    (``none``: a block of a zero-length chunk along a reduced axis, valid in Dask) loses every merge."""

    values: Any
    indices: Any
    ready: Any = field(default=None, compare=False, repr=False)
    on_gpu: bool = False
    empty: bool = False

    @classmethod
    def made(cls, values: Any, indices: Any, on_gpu: bool = False) -> Partial:
        """A partial of arrays just computed (an event recorded after them if they are on a GPU)."""
        return cls(values, indices, transfer.ready_event(values), on_gpu or transfer.is_gpu_array(values))

    @classmethod
    def none(cls, like: Any, shape: tuple[int, ...], value_type: Any) -> Partial:
        """A partial of no candidates, of the output's ``shape`` (zeros of the blocks' kind of array, ``like``:
        never read, but of the right shape and types should every partial of an empty output be one)."""
        values = np.zeros(shape, value_type, like=like)
        return cls(values, np.zeros(shape, np.int64, like=like), None, transfer.is_gpu_array(values), True)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (to another worker) through host memory, waiting for its own kernels alone."""
        values, indices = (transfer.to_host(a, self.ready) for a in (self.values, self.indices))
        return (Partial, (values, indices, None, self.on_gpu, self.empty))

    def placed(self, on_gpu: bool) -> Partial:
        """This partial with its arrays on the GPU (``on_gpu``) or where they are, ready for work queued on the
        current stream: a GPU partial made on another stream (another thread's) is waited for there first."""
        if not on_gpu or transfer.is_gpu_array(self.values):
            transfer.wait_for(self.ready)
            return self
        return Partial(transfer.to_device(self.values), transfer.to_device(self.indices), None, True, self.empty)


@sizeof.register(Partial)
def _sizeof_partial(part: Partial) -> int:
    """A partial's bytes, for the workers' memory accounting (Dask would count the object alone)."""
    return int(sizeof(part.values)) + int(sizeof(part.indices))


def merge_two(kind: ReductionKind, policy: NanPolicy, direction: AxisDirection, a: Partial, b: Partial) -> Partial:
    """The winner of two partials, element by element: on the GPU where either is there already, else where
    they are (two partials moved from other workers merge on the host). A partial of no candidates loses."""
    if a.empty or b.empty:
        return a if b.empty else b
    on_gpu = transfer.is_gpu_array(a.values) or transfer.is_gpu_array(b.values)
    a, b = a.placed(on_gpu), b.placed(on_gpu)
    take_a = ArgOrder(kind, policy, direction).better(a.values, a.indices, b.values, b.indices)
    return Partial.made(np.where(take_a, a.values, b.values), np.where(take_a, a.indices, b.indices),
                        a.on_gpu or b.on_gpu)


def _leaves(parts: Any) -> list[Partial]:
    """The partials of Dask's nested lists (one level per reduced axis), or a single one."""
    if isinstance(parts, Partial):
        return [parts]
    return [leaf for part in parts for leaf in _leaves(part)]


def identity(part: Any, axis: Any = None, keepdims: Any = None, computing_meta: bool = False) -> Any:
    """The chunk step of Dask's reduction: the partials are made before it (they need each block's place)."""
    return part


def combine(kind: ReductionKind, policy: NanPolicy, direction: AxisDirection, parts: Any, axis: Any = None,
            keepdims: Any = None, computing_meta: bool = False) -> Any:
    """The winner of several partials (with ``computing_meta``, the meta it is given: nothing runs)."""
    if computing_meta:
        return parts
    return functools.reduce(functools.partial(merge_two, kind, policy, direction), _leaves(parts))


def aggregate(kind: ReductionKind, policy: NanPolicy, direction: AxisDirection, index_type: np.dtype, parts: Any,
              axis: Any = None, keepdims: Any = None, computing_meta: bool = False) -> Any:
    """The final winner, its indices in the output type (checked on the client to hold them). No parameter
    is named ``dtype``: Dask's reduction would pass its own."""
    if computing_meta:
        return parts
    best = combine(kind, policy, direction, parts)
    best = best.placed(best.on_gpu)  # the result is of the blocks' kind: back on the GPU if it came from there
    return Partial.made(best.values, best.indices.astype(index_type, copy=False))


def indices_of(part: Partial) -> Any:
    transfer.wait_for(part.ready)  # read on this task's stream, maybe not the one that made them
    return part.indices


def values_of(part: Partial) -> Any:
    transfer.wait_for(part.ready)
    return part.values


def zero_d(block: Any) -> Any:
    """The one element of a block of shape (1,), as a 0-d array: the result for a 0-d input."""
    return block.reshape(())
