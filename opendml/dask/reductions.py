"""argmin and argmax over any axes of a Dask array, and unravel_index of Dask indices.

The reduction is checked on the client as one description of the whole array (the usual messages, the output
type's capacity on the global count). Each block then gives a partial from ONE opendml reduction with
``return_values=True`` (``blocks.arg_partial``), and Dask's tree reduction merges the partials by (value,
index) (``merge``). The result keeps the rank, as DirectML's; its blocks are those of the kept axes.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import dask
import dask.array as da
import numpy as np
from dask.array.utils import meta_from_array

from ..device import Device
from ..dtypes import DataType
from ..enums import AxisDirection, NanPolicy
from ..functional.devices import _as_array, _resolve_device
from ..functional.placement import _leading_ones
from ..functional.reductions import ARG_REDUCTIONS, _normalize_axes
from ..functional.reductions import unravel_index as _unravel_index
from ..kernels.spec import ReductionKind
from ..ops.arg_reduction import check_index_capacity
from ..tensor import UINT32_MAX, TensorDesc
from . import blocks, merge
from .checks import known_shape, refuse_out, validation_device


def arg_reduction(kind: ReductionKind, x: Any, axes: object, axis_direction: object, output_type: object,
                  out: Any, device: Any, nan_policy: object, return_values: bool, keepdims: bool = True) -> Any:
    """argmin (argmax) of a Dask array: a Dask array of indices, and one of values with ``return_values``;
    ``keepdims=False`` drops the reduced axes, as the functional API's."""
    schema, _ = ARG_REDUCTIONS[kind]
    owner = schema.name
    refuse_out(f"opendml.{kind.value.lower()}", out)
    shape = known_shape(owner, "InputTensor", x)
    rank = max(len(shape), 1)
    reduced = _normalize_axes(axes, rank, owner)
    direction = AxisDirection.parse(axis_direction, owner=owner)
    policy = NanPolicy.parse(nan_policy, owner=owner)
    out_type = DataType.parse(output_type, owner=owner, field="OutputTensor.DataType")
    checker = validation_device(device)
    if not isinstance(checker, Device):
        checker = _resolve_device(checker, None, owner)  # refused with the usual message
    in_type = DataType.parse(_as_array(checker, np.empty(0, x.dtype), owner, "InputTensor").dtype)
    blocks_shape = tuple(max(c, default=1) for c in x.chunks) or (1,)
    _check_whole(checker, kind, shape or (1,), blocks_shape, reduced, direction, policy, in_type, out_type)
    scalar = x.ndim == 0
    if scalar:
        x = x[None]  # read as one element of one dimension, as the functional API reads a 0-d array
    sizes = tuple(x.shape[a] for a in reduced)
    partials = x.map_blocks(
        functools.partial(blocks.arg_partial, kind, reduced, direction, policy, device, sizes),
        chunks=tuple((1,) * len(c) if k in reduced else c for k, c in enumerate(x.chunks)),
        dtype=np.int64, meta=meta_from_array(x._meta, ndim=x.ndim, dtype=np.int64))
    indices, values = merged(partials, kind, policy, direction, reduced, out_type.numpy, x.dtype, x._meta, x.chunks)
    if scalar:
        indices, values = (a.map_blocks(merge.zero_d, drop_axis=0, meta=meta_from_array(a._meta, ndim=0))
                           for a in (indices, values))
    elif not keepdims:
        indices, values = indices.squeeze(axis=reduced), values.squeeze(axis=reduced)
    return (indices, values) if return_values else indices


def merged(partials: Any, kind: ReductionKind, policy: NanPolicy, direction: AxisDirection, reduced: tuple[int, ...],
           index_type: np.dtype, value_type: np.dtype, like: Any, chunks: tuple[tuple[int, ...], ...]
           ) -> tuple[Any, Any]:
    """The indices (of ``index_type``) and values of the winners among a Dask array of partials (one
    ``merge.Partial`` per block, of size 1 along the ``reduced`` axes), by Dask's tree reduction (``fan_in``
    partials a merge, unless Dask's ``split_every`` setting says otherwise); ``like``: a meta of the blocks'
    kind of array (NumPy, CuPy); ``chunks``: the reduced input's."""
    index_meta = meta_from_array(like, ndim=partials.ndim, dtype=index_type)
    steps = (kind, policy, direction)
    tree = da.reduction(partials, merge.identity, functools.partial(merge.aggregate, *steps, index_type),
                        combine=functools.partial(merge.combine, *steps), axis=reduced, keepdims=True,
                        dtype=index_type, concatenate=False, meta=index_meta, name=f"opendml-{kind.value.lower()}",
                        split_every=dask.config.get("split_every", None)
                        or fan_in(chunks, reduced, value_type))
    indices = tree.map_blocks(merge.indices_of, dtype=index_type, meta=index_meta)
    values = tree.map_blocks(merge.values_of, dtype=value_type,
                             meta=meta_from_array(like, ndim=partials.ndim, dtype=value_type))
    return indices, values


MERGE_FAN_IN = 32  # the most partials one merge task takes


def fan_in(chunks: tuple[tuple[int, ...], ...], reduced: tuple[int, ...], value_type: np.dtype) -> dict[int, int]:
    """Dask's ``split_every`` for the merge of the partials of an input of these ``chunks`` (and
    ``value_type``): how many partials one merge task takes along each reduced axis.

    Dask's default takes 4 a task, spread evenly over the reduced axes: 2 along each of two, so 64 blocks
    along one of them make a tree of 63 tasks six levels deep, each level a round trip through the scheduler
    (a few milliseconds on a busy cluster). A partial is small beside its block (a value and an INT64 index
    per output element), so a task takes up to ``MERGE_FAN_IN`` of them, but no more partials' bytes than one
    input block, so that a merge holds about what a block's task holds. The fan-in goes first to the axes of
    fewest blocks (each gets its share of what is left, so an axis of few blocks leaves more to the others).
    """
    # A block's bytes over its partial's: the block's extent along the reduced axes, times a value's bytes
    # over a value's and an index's.
    reduced_extent = math.prod(max(chunks[a], default=1) for a in reduced)
    per_block = reduced_extent * value_type.itemsize // (value_type.itemsize + np.dtype(np.int64).itemsize)
    budget = max(2, min(MERGE_FAN_IN, per_block))
    split = dict.fromkeys(reduced, 2)  # an axis of one block: nothing to merge (Dask wants a number >= 2)
    cut = sorted((a for a in reduced if len(chunks[a]) > 1), key=lambda a: len(chunks[a]))
    for k, axis in enumerate(cut):
        share = max(2, int(round(budget ** (1 / (len(cut) - k)), 9)))
        split[axis] = max(2, min(len(chunks[axis]), share))
        budget = max(1, budget // split[axis])
    return split


def _check_whole(device: Device, kind: ReductionKind, shape: tuple[int, ...], blocks_shape: tuple[int, ...],
                 reduced: tuple[int, ...], direction: AxisDirection, policy: NanPolicy, in_type: DataType,
                 out_type: DataType) -> None:
    """Every rule of the reduction, as the description of the whole array states them. An array too large
    for one tensor description (its blocks are each one) is described by its largest block instead, and the
    output type's capacity checked on the whole count. An empty result is checked as the functional API
    checks one (sizes of 1 standing in)."""
    schema, desc_type = ARG_REDUCTIONS[kind]
    out_shape = tuple(1 if k in reduced else n for k, n in enumerate(shape))
    if math.prod(out_shape) == 0:
        described = (1,) * len(shape)
    elif math.prod(shape) <= UINT32_MAX:
        described = shape
    else:
        described = blocks_shape
    pad = (1,) * _leading_ones(schema, device, len(shape))
    reduced_shape = tuple(1 if k in reduced else n for k, n in enumerate(described))
    desc = desc_type(TensorDesc(in_type, pad + described), TensorDesc(out_type, pad + reduced_shape),
                     tuple(a + len(pad) for a in reduced), direction, policy)
    device.create_operator(desc)
    check_index_capacity(schema.name, out_type, math.prod(shape[a] for a in reduced))


def unravel_index(indices: Any, shape: Any, axes: Any) -> tuple[Any, ...]:
    """unravel_index of Dask indices: one Dask array per reduced axis, each block unravelled where it is
    (the indices' range is checked there, at compute time). The arguments are checked on the client."""
    parts = unravel_index_checked(indices, shape, axes)
    meta = meta_from_array(indices._meta, ndim=indices.ndim)
    return tuple(indices.map_blocks(functools.partial(blocks.unravel_block, k, shape, axes), dtype=indices.dtype,
                                    meta=meta) for k in range(parts))


def unravel_index_checked(indices: Any, shape: Any, axes: Any) -> int:
    """How many index arrays unravel_index gives, its arguments checked on an empty stand-in (the indices
    themselves are unravelled block by block: their chunks may be of unknown sizes)."""
    return len(_unravel_index(np.empty((0,), indices.dtype), shape, axes))
