"""What runs on the workers, one block at a time: the functional API itself.

Every function here is a module-level function, given its parameters through ``functools.partial``, so
that a task pickles with plain pickle. ``device`` is the caller's ``device=``: None runs a block on the
worker's default device for the block's kind of array (NumPy: the CPU, CuPy: CUDA).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..enums import AxisDirection, NanPolicy
from ..functional.reductions import argmax, argmin, unravel_index
from ..kernels.spec import ReductionKind
from .merge import Partial

BLOCK = "block"  # a layout entry: the next block of the call's Dask operands
WHOLE = "whole"  # a layout entry: a small array argument, passed whole to every task and sliced for the block
# NumPy array arguments up to this size go to the tasks whole: one graph key, sent to each worker once and
# sliced there for each block. As a task per block (``from_array``), the scheduler placed each apart from the
# block's data and fetched it across workers: 2 workers x 1 thread on 2 cores, DEQUANTIZE_LINEAR -> CLIP with
# a per-column scale and zero point, 38 -> 28 ms a block.
WHOLE_OPERAND_BYTES = 16 << 20


def goes_whole(value: Any, read: Sequence[Any]) -> bool:
    """Whether an array argument that is not a Dask array goes to the tasks whole: it is small, and it does
    not grow the shape of the arrays ``read`` block by block (the blocks and their number are theirs)."""
    import dask.array as da

    if getattr(da, "array_expr_enabled", lambda: False)():
        return False  # under Dask's array query planning, map_blocks drops a Delayed argument's graph
    shapes = [tuple(a.shape) for a in read]
    if value.nbytes > WHOLE_OPERAND_BYTES or not shapes or any(n != n for shape in shapes for n in shape):
        return False  # too large, or a block-read array of unknown sizes
    shape = np.broadcast_shapes(*shapes)
    shift = len(shape) - value.ndim
    return shift >= 0 and all(n == 1 or n == shape[shift + k] for k, n in enumerate(value.shape))


def whole_part(array: Any, location: Sequence[tuple[int, int]]) -> Any:
    """A whole array argument's part that lines up with the block at ``location`` (dimensions aligned from the
    last, NumPy's broadcasting: a dimension of size 1 is kept whole)."""
    shift = len(location) - array.ndim
    return array[tuple(slice(None) if n == 1 else slice(*location[shift + k]) for k, n in enumerate(array.shape))]


def arguments(layout: Sequence[Any], blocks: Sequence[Any], block_info: Any) -> list[Any]:
    """Each positional argument of one block's call: BLOCK (the next of ``blocks``), WHOLE (the next of
    ``blocks``, the block's part of it) or a ``(value,)`` passed as it is (a number, a 0-d array)."""
    location = block_info[None]["array-location"] if WHOLE in layout else ()
    pending = iter(blocks)
    return [next(pending) if entry == BLOCK else whole_part(next(pending), location) if entry == WHOLE
            else entry[0] for entry in layout]


def elementwise_block(function: Callable[..., Any], layout: Sequence[Any], kwargs: dict[str, Any],
                      *blocks: Any, block_info: Any = None) -> Any:
    """``function`` over one block of each Dask operand (``arguments``)."""
    return function(*arguments(layout, blocks, block_info), **kwargs)


def arg_partial(kind: ReductionKind, axes: tuple[int, ...], direction: AxisDirection, policy: NanPolicy,
                device: Any, sizes: tuple[int, ...], block: Any, block_info: Any = None) -> Partial:
    """One block's partial result: ONE opendml reduction over the block's part of ``axes`` giving the winner's
    value and its index in the block, turned into its index in the whole array (flattened row-major over
    ``axes``, whose whole sizes are ``sizes``). A block of a zero-length chunk along ``axes`` (valid in Dask)
    holds no candidate: its partial loses every merge (no reduction runs: a description has no size 0)."""
    if any(block.shape[a] == 0 for a in axes):
        kept = tuple(1 if k in axes else n for k, n in enumerate(block.shape))
        return Partial.none(block, kept, block.dtype)
    function = argmax if kind is ReductionKind.ARGMAX else argmin
    local, values = function(block, axes, axis_direction=direction, output_type="INT64", device=device,
                             nan_policy=policy, return_values=True)
    location = block_info[0]["array-location"]
    starts = tuple(location[a][0] for a in axes)
    return Partial.made(values, global_indices(local, tuple(block.shape), axes, starts, sizes))


def global_indices(local: Any, block_shape: tuple[int, ...], axes: tuple[int, ...], starts: tuple[int, ...],
                   sizes: tuple[int, ...]) -> Any:
    """Indices flattened over a block's part of ``axes`` (INT64), as indices flattened over the whole array's:
    each axis's index moved by the block's start along it (int64 arithmetic, right past 2^32 elements)."""
    if not any(starts) and all(block_shape[a] == n for a, n in zip(axes, sizes)):
        return local  # the block spans the reduced axes: its flattening is the array's
    flat: Any = 0
    stride = 1
    remaining = local
    for axis, start, size in reversed(tuple(zip(axes, starts, sizes))):  # the last axis varies fastest
        count = block_shape[axis]
        flat = flat + (remaining % count + start) * stride
        remaining = remaining // count
        stride *= size
    return flat


def unravel_block(part: int, shape: tuple[int, ...], axes: Any, block: Any) -> Any:
    """The ``part``-th index array ``unravel_index`` gives for one block of indices."""
    return unravel_index(block, shape, axes)[part]
