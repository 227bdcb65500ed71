"""What runs on the workers, one block at a time: the functional API itself.

Every function here is a module-level function, given its parameters through ``functools.partial``, so
that a task pickles with plain pickle. ``device`` is the caller's ``device=``: None runs a block on the
worker's default device for the block's kind of array (NumPy: the CPU, CuPy: CUDA).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..enums import AxisDirection, NanPolicy
from ..functional.reductions import argmax, argmin, unravel_index
from ..kernels.spec import ReductionKind
from .merge import Partial

BLOCK = "block"  # a layout entry: the next block of the call's Dask operands


def elementwise_block(function: Callable[..., Any], layout: Sequence[Any], kwargs: dict[str, Any],
                      *blocks: Any) -> Any:
    """``function`` over one block of each Dask operand; ``layout`` gives each positional argument: BLOCK
    (the next of ``blocks``) or a ``(value,)`` passed as it is (a number, a 0-d array)."""
    pending = iter(blocks)
    args = [next(pending) if entry == BLOCK else entry[0] for entry in layout]
    return function(*args, **kwargs)


def arg_partial(kind: ReductionKind, axes: tuple[int, ...], direction: AxisDirection, policy: NanPolicy,
                device: Any, sizes: tuple[int, ...], block: Any, block_info: Any = None) -> Partial:
    """One block's partial result: ONE opendml reduction over the block's part of ``axes`` giving the winner's
    value and its index in the block, turned into its index in the whole array (flattened row-major over
    ``axes``, whose whole sizes are ``sizes``)."""
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
