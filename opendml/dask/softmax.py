"""``opendml.softmax``, ``log_softmax`` and ``hardmax`` of a Dask array: one array's bits whatever the chunking.

Over axes of one chunk each, every block holds whole rows: one functional call per block. Over a chunked axis,
SOFTMAX and LOG_SOFTMAX run docs/semantics.md 9g's steps across the blocks, each step exact or rounded once, so
the grouping never shows:

1. ``m``, each row's largest element: ``opendml.reduce``'s MAX of the Dask array (exact, +0.0 above -0.0; NaN
   where the row holds a NaN, whose row is NaN anyway);
2. ``d = x - m``, one FLOAT32 subtraction per element (FLOAT16 converted exactly first), in each block;
3. ``e = EXP(d)``, correctly rounded (``opendml.exp``: one answer);
4. ``S``, the exact sum of the ``e`` rounded once: ``opendml.reduce``'s SUM of the Dask array, whose blocks give
   REDUCE's accumulator words, added exactly across the blocks (``sums``);
5. each block again: ``e / S`` (SOFTMAX: ``d`` and ``e`` computed again from the block and ``m``, not kept
   between the two passes) or ``d - LOG(S)`` (LOG_SOFTMAX), NaN throughout a row whose ``m`` is NaN or infinite,
   and FLOAT16 rounded once at the end.

HARDMAX is 1 at ARGMAX's index: ``opendml.argmax``'s Dask reduction (the same index whatever the chunking), then
each block compares its elements' flattened indices over the axes with it.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from dask.array.utils import meta_from_array

from ..device import Device
from ..dtypes import from_numpy
from ..errors import invalid
from ..functional.declared import FUNCTIONS
from ..functional.devices import _as_array, _resolve_device
from ..functional.placement import _leading_ones
from ..functional.reduce import reduce as reduce_array
from ..functional.reductions import _normalize_axes, argmax
from ..functional.softmax import NORMALIZATIONS, _chosen, hardmax, log_softmax, softmax
from ..tensor import UINT32_MAX, TensorDesc
from .checks import known_shape, refuse_out, validation_device

_EAGER = {"softmax": softmax, "log_softmax": log_softmax, "hardmax": hardmax}


def normalized(python: str, x: Any, axis: object, out: Any, device: Any) -> Any:
    """``opendml.softmax`` (``log_softmax``, ``hardmax``: ``python``) of a Dask array ``x``, lazily."""
    newer, _ = NORMALIZATIONS[python]
    owner, name = f"opendml.{python}", newer.schema.name
    refuse_out(owner, out)
    shape = known_shape(name, "InputTensor", x)
    if not shape:
        raise invalid(owner, "x", "must have at least one dimension (the normalization runs along an axis)",
                      "a 0-d array")
    axes = _normalize_axes(axis, len(shape), name)
    _check_whole(python, device, shape, tuple(max(c, default=1) for c in x.chunks), axes, x.dtype)
    meta = meta_from_array(x._meta, ndim=x.ndim, dtype=x.dtype)
    if all(len(x.chunks[a]) == 1 for a in axes) or x.size == 0:
        call = functools.partial(_whole_rows, _EAGER[python], axes, device)
        return x.map_blocks(call, dtype=x.dtype, meta=meta)
    if python == "hardmax":
        index = argmax(x, axes, device=device)
        sizes = tuple(shape[a] for a in axes)
        return x.map_blocks(functools.partial(_one_hot, axes, sizes), index, dtype=x.dtype, meta=meta)
    m = reduce_array(x, "MAX", axes, device=device)
    e = x.map_blocks(functools.partial(_exponentials, device), m, dtype=np.float32,
                     meta=meta_from_array(x._meta, ndim=x.ndim, dtype=np.float32))
    s = reduce_array(e, "SUM", axes, device=device)
    return x.map_blocks(functools.partial(_finish, python, device), m, s, dtype=x.dtype, meta=meta)


def _whole_rows(function: Any, axes: tuple[int, ...], device: Any, block: Any) -> Any:
    """One functional call on a block holding whole rows (an empty block stays empty)."""
    if block.size == 0:
        return block.copy()
    return function(block, axes, device=device)


def _differences(block: Any, m: Any) -> Any:
    """Step 2: ``x - m`` in FLOAT32 (a row of NaN, +inf or only -inf gives NaN here, made NaN throughout later)."""
    with np.errstate(invalid="ignore"):
        return block.astype(np.float32) - m.astype(np.float32)


def _exponentials(device: Any, block: Any, m: Any) -> Any:
    """Step 3: the correctly rounded EXP of the block's differences."""
    if block.size == 0:
        return block.astype(np.float32)
    return FUNCTIONS["ELEMENT_WISE_EXP"](_differences(block, m), device=device)


def _finish(python: str, device: Any, block: Any, m: Any, s: Any) -> Any:
    """Step 5 on a block: SOFTMAX ``e / S`` or LOG_SOFTMAX ``d - LOG(S)``, NaN rows, the block's own type."""
    if block.size == 0:
        return block.copy()
    d = _differences(block, m)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if python == "softmax":
            y = FUNCTIONS["ELEMENT_WISE_EXP"](d, device=device) / s
        else:
            y = d - FUNCTIONS["ELEMENT_WISE_LOG"](s, device=device)
        bad = np.isnan(m) | np.isinf(m)
        y = np.where(bad, np.float32(np.nan), y)
        return y.astype(block.dtype)  # FLOAT16: the FLOAT32 result rounded once


def _one_hot(axes: tuple[int, ...], sizes: tuple[int, ...], block: Any, index: Any, block_info: Any = None) -> Any:
    """HARDMAX on a block: 1 where the element's index flattened over the axes (row-major, in increasing axis
    order, global coordinates) is ARGMAX's ``index`` of its row, 0 elsewhere."""
    location = block_info[0]["array-location"] if block_info else [(0, n) for n in block.shape]
    flat = np.zeros((1,) * block.ndim, np.int64, like=index)
    for axis, size in zip(axes, sizes):
        start = location[axis][0]
        place = np.arange(start, start + block.shape[axis], like=index).reshape(
            [-1 if d == axis else 1 for d in range(block.ndim)])
        flat = flat * size + place
    return (flat == index).astype(block.dtype)


def _check_whole(python: str, device: Any, shape: tuple[int, ...], blocks_shape: tuple[int, ...],
                 axes: tuple[int, ...], dtype: Any) -> None:
    """The operator's rules on the whole array's description, on the client (one array's call's errors and
    operator choice); an array too large for one description is described by its largest block off the axes."""
    newer, older = NORMALIZATIONS[python]
    checker = validation_device(device)
    if not isinstance(checker, Device):
        checker = _resolve_device(checker, None, newer.schema.name)  # refused with the usual message
    in_type = from_numpy(_as_array(checker, np.empty(0, dtype), newer.schema.name, "InputTensor").dtype)
    described = shape if math.prod(shape) <= UINT32_MAX else tuple(
        n if d in axes else b for d, (n, b) in enumerate(zip(shape, blocks_shape)))
    op = _chosen(newer, older, checker.feature_level, described, axes)
    pad = _leading_ones(op.schema, checker, len(shape))
    desc = TensorDesc(in_type, (1,) * pad + described)
    checker.create_operator(op.desc_type(desc, desc) if op is older else op.desc_type(desc, desc,
                                                                                       [a + pad for a in axes]))
