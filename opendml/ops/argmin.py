"""ARGMIN: the index of the smallest element over the reduced axes, rank kept."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import DataType as T
from ..enums import AxisDirection
from ..errors import invalid
from ..feature_levels import FeatureLevel as L
from ..kernels.spec import KernelSpec, NanRule, Reduction, ReductionKind
from ..schema import OperatorSchema, SupportRow, TensorField
from ..tensor import TensorDesc, sequence_items
from .clip import FLOATS, INTEGERS_32, INTEGERS_64
from .definition import OperatorDefinition

_INDEX_TYPES = frozenset({T.INT64, T.INT32, T.UINT64, T.UINT32})

ARGMIN_SCHEMA = OperatorSchema(
    name="ARGMIN",
    introduced=L.FL_3_0,
    tensors=(TensorField("InputTensor", "input"), TensorField("OutputTensor", "output")),
    rows=(
        SupportRow(L.FL_4_1, (1, 8), {"InputTensor": FLOATS | INTEGERS_32 | INTEGERS_64,
                                      "OutputTensor": _INDEX_TYPES}),
        SupportRow(L.FL_3_0, (1, 8), {"InputTensor": FLOATS | INTEGERS_32, "OutputTensor": _INDEX_TYPES}),
    ),
)


@dataclass(frozen=True)
class ArgMinDesc:
    """DML_ARGMIN_OPERATOR_DESC; AxisCount is ``len(axes)``."""

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    axes: Sequence[int]
    axis_direction: AxisDirection | str = AxisDirection.INCREASING


@dataclass(frozen=True)
class ArgMinParams:
    axes: tuple[int, ...]  # sorted increasingly: the flattened index runs over them in this order
    axis_direction: AxisDirection
    output_type: T


def _check_axes(axes: object, rank: int) -> tuple[int, ...]:
    owner = ARGMIN_SCHEMA.name
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


def prepare_argmin(desc: ArgMinDesc) -> ArgMinParams:
    owner = ARGMIN_SCHEMA.name
    x, out = desc.input_tensor, desc.output_tensor
    axes = _check_axes(desc.axes, x.dimension_count)
    direction = AxisDirection.parse(desc.axis_direction, owner=owner)
    if out.dimension_count != x.dimension_count:
        raise invalid(owner, "OutputTensor.DimensionCount",
                      f"must equal InputTensor.DimensionCount ({x.dimension_count})", out.dimension_count)
    for k, (n_in, n_out) in enumerate(zip(x.sizes, out.sizes)):
        wanted = 1 if k in axes else n_in
        if n_out != wanted:
            why = "a reduced axis" if k in axes else f"InputTensor.Sizes[{k}]"
            raise invalid(owner, f"OutputTensor.Sizes[{k}]", f"must be {wanted} ({why})", n_out)
    reduced = math.prod(x.sizes[a] for a in axes)
    if out.data_type.is_integer and reduced - 1 > out.data_type.integer_range[1]:
        raise invalid(owner, "OutputTensor.DataType",
                      f"must hold every index of a reduction over {reduced} elements", out.data_type.name)
    return ArgMinParams(axes, direction, out.data_type)


def argmin_reference(inputs: Sequence[np.ndarray | None], params: ArgMinParams) -> np.ndarray:
    """Rows of the reduced axes, NaN ignored, ties broken by AxisDirection (SPEC 7 and 8.5)."""
    (x,) = inputs
    assert x is not None  # InputTensor is required: execute never binds None for it
    kept = [k for k in range(x.ndim) if k not in params.axes]
    rows = np.transpose(x, kept + list(params.axes)).reshape(*(x.shape[k] for k in kept), -1)
    if rows.dtype.kind == "f":
        valid = ~np.isnan(rows)
        smallest = np.where(valid, rows, np.inf).min(axis=-1, keepdims=True)
    else:
        valid = np.ones(rows.shape, dtype=bool)
        smallest = rows.min(axis=-1, keepdims=True)
    is_min = valid & (rows == smallest)  # -0.0 == +0.0: a tie
    # A row with no valid element has no True: argmax gives 0, and the reversed search gives the last.
    if params.axis_direction == AxisDirection.INCREASING:
        index = np.argmax(is_min, axis=-1)
    else:
        index = is_min.shape[-1] - 1 - np.argmax(is_min[..., ::-1], axis=-1)
    out_shape = tuple(1 if k in params.axes else n for k, n in enumerate(x.shape))
    return index.reshape(out_shape).astype(params.output_type.numpy)


def argmin_kernel(params: ArgMinParams, tensors: Mapping[str, TensorDesc | None]) -> KernelSpec:
    """The index of the smallest element over ``axes``: the values compared are the elements themselves."""
    x = tensors["InputTensor"]
    assert x is not None
    reduction = Reduction(ReductionKind.ARGMIN, params.axes, params.axis_direction, NanRule.IGNORE,
                          params.output_type)
    return KernelSpec(ARGMIN_SCHEMA.name, (x.data_type,), params.output_type, ex.Load(0, x.data_type),
                      reduction=reduction)


ARGMIN = OperatorDefinition(ARGMIN_SCHEMA, ArgMinDesc, prepare_argmin, argmin_reference, argmin_kernel)
