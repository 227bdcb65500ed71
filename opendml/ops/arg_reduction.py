"""ARGMIN and ARGMAX: one set of fields, rules, support table, reference and kernel record, two directions.

The two operators differ only in which element wins (the smallest or the largest): ``ReductionKind``. Their
schemas share one support table; ``prepare`` checks the same rules under each operator's name; the NumPy
reference and the ``KernelSpec`` take the kind as data, and the backends run both on one engine.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS, INTEGERS_32, INTEGERS_64
from ..dtypes import DataType as T
from ..enums import AxisDirection, NanPolicy
from ..errors import invalid
from ..feature_levels import FeatureLevel as L
from ..kernels.spec import KernelSpec, Reduction, ReductionKind
from ..schema import OperatorSchema, SupportRow, TensorField
from ..tensor import TensorDesc, sequence_items
from .arg_order import ArgOrder

INDEX_TYPES = frozenset({T.INT64, T.INT32, T.UINT64, T.UINT32})


def arg_reduction_schema(kind: ReductionKind) -> OperatorSchema:
    """ARGMIN's or ARGMAX's schema: both pages give the same tensors, levels and table."""
    return OperatorSchema(
        name=kind.value,
        introduced=L.FL_3_0,
        tensors=(TensorField("InputTensor", "input"), TensorField("OutputTensor", "output")),
        rows=(
            SupportRow(L.FL_4_1, (1, 8), {"InputTensor": FLOATS | INTEGERS_32 | INTEGERS_64,
                                          "OutputTensor": INDEX_TYPES}),
            SupportRow(L.FL_3_0, (1, 8), {"InputTensor": FLOATS | INTEGERS_32, "OutputTensor": INDEX_TYPES}),
        ),
    )


@dataclass(frozen=True)
class ArgReductionParams:
    axes: tuple[int, ...]  # sorted increasingly: the flattened index runs over them in this order
    axis_direction: AxisDirection
    output_type: T
    kind: ReductionKind
    nan_policy: NanPolicy


def check_axes(owner: str, axes: object, rank: int) -> tuple[int, ...]:
    """The description's Axes (AxisCount of them), each in ``[0, rank)`` and none repeated, sorted."""
    items = sequence_items(axes, owner, "Axes", "axes")
    if not items:
        raise invalid(owner, "Axes", "must be a non-empty sequence of axes (AxisCount >= 1)", "[]")
    checked: list[int] = []
    for k, axis in enumerate(items):
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not 0 <= axis < rank:
            raise invalid(owner, f"Axes[{k}]", f"must be an integer in [0, {rank - 1}]", repr(axis))
        checked.append(int(axis))
    if len(set(checked)) != len(checked):
        raise invalid(owner, "Axes", "must not repeat an axis", checked)
    return tuple(sorted(checked))


def check_reduced_sizes(owner: str, x: TensorDesc, out: TensorDesc, axes: tuple[int, ...]) -> None:
    """The output keeps the input's rank: size 1 along each reduced axis, the input's size along the others."""
    if out.dimension_count != x.dimension_count:
        raise invalid(owner, "OutputTensor.DimensionCount",
                      f"must equal InputTensor.DimensionCount ({x.dimension_count})", out.dimension_count)
    for k, (n_in, n_out) in enumerate(zip(x.sizes, out.sizes)):
        wanted = 1 if k in axes else n_in
        if n_out != wanted:
            why = "a reduced axis" if k in axes else f"InputTensor.Sizes[{k}]"
            raise invalid(owner, f"OutputTensor.Sizes[{k}]", f"must be {wanted} ({why})", n_out)


def prepare_arg_reduction(kind: ReductionKind, desc: object) -> ArgReductionParams:
    """The rules of ARGMIN's and ARGMAX's descriptions (SPEC 7, 8.7 and 9), under ``kind``'s name."""
    owner = kind.value
    x: TensorDesc = desc.input_tensor  # type: ignore[attr-defined]
    out: TensorDesc = desc.output_tensor  # type: ignore[attr-defined]
    axes = check_axes(owner, desc.axes, x.dimension_count)  # type: ignore[attr-defined]
    direction = AxisDirection.parse(desc.axis_direction, owner=owner)  # type: ignore[attr-defined]
    nan_policy = NanPolicy.parse(desc.nan_policy, owner=owner)  # type: ignore[attr-defined]
    check_reduced_sizes(owner, x, out, axes)
    check_index_capacity(owner, out.data_type, math.prod(x.sizes[a] for a in axes))
    return ArgReductionParams(axes, direction, out.data_type, kind, nan_policy)


def check_index_capacity(owner: str, output_type: T, count: int) -> None:
    """The output type must hold every index of a reduction over ``count`` elements (SPEC 8.7): one rule
    for one description and for a reduction over many (the chunks of a Dask array, whose count no single
    tensor may hold)."""
    if output_type.is_integer and count - 1 > output_type.integer_range[1]:
        raise invalid(owner, "OutputTensor.DataType",
                      f"must hold every index of a reduction over {count} elements", output_type.name)


def arg_reduction_reference(inputs: Sequence[np.ndarray | None], params: ArgReductionParams) -> np.ndarray:
    """Rows of the reduced axes, each reduced to the index of its winning element under the operator's order
    (``arg_order``: the smallest or largest value, NaN ignored or winning by ``nan_policy``, ties broken by
    AxisDirection; SPEC 7, 8.5 and 9): candidates merged pairwise by ``ArgOrder.better``, halving each row
    until one candidate is left."""
    (x,) = inputs
    assert x is not None  # InputTensor is required
    kept = [k for k in range(x.ndim) if k not in params.axes]
    values = np.transpose(x, kept + list(params.axes)).reshape(*(x.shape[k] for k in kept), -1)
    order = ArgOrder(params.kind, params.nan_policy, params.axis_direction)
    index_type = np.int32 if values.shape[-1] <= 1 << 31 else np.int64  # 4 bytes a candidate where they hold it
    indices = np.broadcast_to(np.arange(values.shape[-1], dtype=index_type), values.shape)
    while values.shape[-1] > 1:
        values, indices = _halved(order, values, indices)
    out_shape = tuple(1 if k in params.axes else n for k, n in enumerate(x.shape))
    return indices.reshape(out_shape).astype(params.output_type.numpy)


def _halved(order: ArgOrder, values: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The winners of each row's first half against its second half (an odd row's middle candidate kept)."""
    n = values.shape[-1]
    half, rest = n // 2, n - n // 2
    a_values, b_values = values[..., :half], values[..., rest:]
    a_indices, b_indices = indices[..., :half], indices[..., rest:]
    a_wins = order.better(a_values, a_indices, b_values, b_indices)
    won = _select(a_wins, a_values, b_values), _select(a_wins, a_indices, b_indices)
    if half == rest:
        return won
    return (np.concatenate([won[0], values[..., half:rest]], axis=-1),
            np.concatenate([won[1], indices[..., half:rest]], axis=-1))


_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _select(take: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a`` where ``take``, else ``b``, by their bits and a mask: ``np.where`` branches per element, which
    costs 5x the whole comparison where the winners are random."""
    unsigned = _UNSIGNED[a.dtype.itemsize]
    mask = take.astype(unsigned)
    np.negative(mask, out=mask)  # 1 -> all bits set
    a_bits, b_bits = a.view(unsigned), b.view(unsigned)
    selected = a_bits ^ b_bits
    selected &= mask
    selected ^= b_bits
    return selected.view(a.dtype)


def arg_reduction_kernel(params: ArgReductionParams, tensors: Mapping[str, TensorDesc | None]) -> KernelSpec:
    """The index of the smallest or largest element over ``axes``: the values compared are the elements."""
    x = tensors["InputTensor"]
    assert x is not None
    reduction = Reduction(params.kind, params.axes, params.axis_direction, params.nan_policy, params.output_type)
    return KernelSpec(params.kind.value, (x.data_type,), params.output_type, ex.Load(0, x.data_type),
                      reduction=reduction)
