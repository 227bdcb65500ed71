"""``opendml.top_k`` of a Dask array: the same values and indices as one call on the whole array, whatever the
chunking.

Along an axis of one chunk, each block is one functional call (blockwise). Along a chunked axis, each block gives
its own K first (fewer where the block is shorter), their indices made global by the block's offset along the
axis; the candidates are then put side by side along the axis, block after block, and one more call selects the K
first of them, whose positions pick the global indices. That is exact: a row's K first are among its blocks' K
first, and the candidates of equal values (NaN among NaN, -0.0 beside +0.0) stand in the order of their global
indices (blocks in order, each block's ties by ascending index), so the tie rule (the lowest indices first and at
the K boundary) picks the same elements as on the whole row.
"""

from __future__ import annotations

import functools
import math
import operator
from typing import Any

import numpy as np
from dask.array.utils import meta_from_array

from ..device import Device
from ..dtypes import from_numpy
from ..enums import AxisDirection
from ..functional.devices import _as_array, _resolve_device
from ..functional.placement import _leading_ones
from ..functional.top_k import _index_type, checked_axis_and_k
from ..functional.top_k import top_k as top_k_array
from ..ops.top_k import TOP_K1_SCHEMA, TopK1Desc
from ..tensor import UINT32_MAX, TensorDesc
from .checks import known_shape, validation_device


def top_k(x: Any, k: object, axis: object, direction: AxisDirection, index_type: object, device: Any
          ) -> tuple[Any, Any]:
    """``opendml.top_k`` of a Dask array ``x``, lazily: (values, indices) as Dask arrays, K along ``axis``."""
    name = TOP_K1_SCHEMA.name
    shape = known_shape(name, "InputTensor", x)
    axis, k = checked_axis_and_k(shape, axis, k)
    indices_type = _index_type(index_type, shape[axis], name)
    _check_whole(device, shape, tuple(max(c, default=1) for c in x.chunks), axis, k, x.dtype, direction,
                 indices_type)
    call = functools.partial(_block_top_k, axis=axis, k=k, direction=direction, device=device)
    chunks = tuple((k,) if d == axis else c for d, c in enumerate(x.chunks))
    if len(x.chunks[axis]) == 1:
        values, indices = _parts(x, functools.partial(_offset, call, ()), chunks, x.dtype)
    else:
        starts = tuple(int(s) for s in np.cumsum((0, *x.chunks[axis][:-1])))
        found = tuple(min(k, n) for n in x.chunks[axis])
        candidate_chunks = tuple(found if d == axis else c for d, c in enumerate(x.chunks))
        values, indices = _parts(x, functools.partial(_offset, call, starts), candidate_chunks, x.dtype)
        values, indices = values.rechunk({axis: -1}), indices.rechunk({axis: -1})
        merge = functools.partial(_merge, call, axis)
        picked = values.map_blocks(merge, indices, chunks=chunks, dtype=object,
                                   meta=np.empty((0,) * x.ndim, object))
        values = picked.map_blocks(operator.itemgetter(0), dtype=x.dtype,
                                   meta=meta_from_array(x._meta, ndim=x.ndim, dtype=x.dtype))
        indices = picked.map_blocks(operator.itemgetter(1), dtype=np.int64,
                                    meta=meta_from_array(x._meta, ndim=x.ndim, dtype=np.int64))
    return values, indices.astype(indices_type.numpy)


def _block_top_k(block: Any, axis: int, k: int, direction: AxisDirection, device: Any) -> tuple[Any, Any]:
    """One functional call on a block (at most its length along the axis), its indices as INT64; a block of no
    elements (a chunk of size 0, which Dask allows) gives no candidates."""
    count = min(k, block.shape[axis])
    if block.size == 0:
        shape = tuple(count if d == axis else n for d, n in enumerate(block.shape))
        return np.empty(shape, block.dtype, like=block), np.empty(shape, np.int64, like=block)
    values, indices = top_k_array(block, count, axis, axis_direction=direction, index_type="UINT64",
                                       device=device)
    return values, indices.astype(np.int64)


def _offset(call: Any, starts: tuple[int, ...], block: Any, block_info: Any = None) -> tuple[Any, Any]:
    """A block's K first, their indices offset by the block's start along the axis (``starts``, per block
    along it; none: the axis is one chunk)."""
    values, indices = call(block)
    if starts and block_info is not None:
        axis = call.keywords["axis"]
        indices = indices + starts[block_info[0]["chunk-location"][axis]]
    return values, indices


def _parts(x: Any, function: Any, chunks: tuple[tuple[int, ...], ...], dtype: Any) -> tuple[Any, Any]:
    """Each block's (values, indices) from one call: a Dask array of pairs, then one of each."""
    pairs = x.map_blocks(function, chunks=chunks, dtype=object, meta=np.empty((0,) * x.ndim, object))
    values = pairs.map_blocks(operator.itemgetter(0), dtype=dtype, meta=meta_from_array(x._meta, ndim=x.ndim,
                                                                                      dtype=dtype))
    indices = pairs.map_blocks(operator.itemgetter(1), dtype=np.int64,
                               meta=meta_from_array(x._meta, ndim=x.ndim, dtype=np.int64))
    return values, indices


def _merge(call: Any, axis: int, values: Any, indices: Any) -> tuple[Any, Any]:
    """The K first of the candidates side by side (block after block), their global indices picked by position."""
    chosen_values, positions = call(values)
    return chosen_values, np.take_along_axis(indices, positions, axis=axis)


def _check_whole(device: Any, shape: tuple[int, ...], blocks_shape: tuple[int, ...], axis: int, k: int,
                 dtype: Any, direction: AxisDirection, index_type: Any) -> None:
    """TOP_K1's rules on the whole array's description, on the client (the errors of one array's call); an array
    too large for one description is described by its largest block across the axis, the axis whole."""
    checker = validation_device(device)
    if not isinstance(checker, Device):
        checker = _resolve_device(checker, None, TOP_K1_SCHEMA.name)  # refused with the usual message
    in_type = from_numpy(_as_array(checker, np.empty(0, dtype), TOP_K1_SCHEMA.name, "InputTensor").dtype)
    described = shape if math.prod(shape) <= UINT32_MAX else tuple(
        n if d == axis else b for d, (n, b) in enumerate(zip(shape, blocks_shape)))
    pad = (1,) * _leading_ones(TOP_K1_SCHEMA, checker, len(shape))
    out = tuple(k if d == axis else n for d, n in enumerate(described))
    checker.create_operator(TopK1Desc(TensorDesc(in_type, pad + described), TensorDesc(in_type, pad + out),
                                      TensorDesc(index_type, pad + out), axis + len(pad), k, direction))
