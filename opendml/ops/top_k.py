"""TOP_K and TOP_K1: the K largest (or, TOP_K1 INCREASING, smallest) elements of each sequence along one
axis, their values and their indices.

A sequence's elements are ranked by (value, index): values decreasing (TOP_K, TOP_K1 DECREASING) or
increasing (TOP_K1 INCREASING), equal values by ascending index whatever the direction (DirectML's pages),
NaN after every number in both directions (NaN of any sign and payload equal), -0.0 equal to +0.0. The K
first of that order are the result, in that order: of tied elements at the K boundary the lowest indices
survive, so K = 1 answers ARGMAX's (ARGMIN's) index with NaN ignored, and its value (docs/semantics.md,
**TOP_K**). The reference below ranks by a stable sort; the CPU kernels (``backends/cpu_kernels/selection.py``)
select by partition, and are tested against an oracle of their own (tests/test_top_k.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import DataType as T
from ..enums import AxisDirection
from ..errors import invalid
from ..feature_levels import FeatureLevel as L
from ..kernels.spec import KernelSpec, Selection
from ..schema import OperatorSchema, SupportRow, TensorField
from ..tensor import TensorDesc
from ..validate import check_same_data_type
from .definition import OperatorDefinition

TENSORS = (TensorField("InputTensor", "input"), TensorField("OutputValueTensor", "output"),
           TensorField("OutputIndexTensor", "output"))
_SMALL = frozenset({T.FLOAT32, T.FLOAT16, T.INT32, T.INT16, T.INT8, T.UINT32, T.UINT16, T.UINT8})
_ALL = _SMALL | {T.INT64, T.UINT64}


def _row(level: L, dims: tuple[int, int], values: frozenset[T], indices: frozenset[T]) -> SupportRow:
    return SupportRow(level, dims, {"InputTensor": values, "OutputValueTensor": values,
                                    "OutputIndexTensor": indices})


# DirectML's tables (both pages give the same rows from 2_1 on; TOP_K's 2_0 row is floats only), newest first.
_ROWS = (
    _row(L.FL_5_0, (1, 8), _ALL, frozenset({T.UINT64, T.UINT32})),
    _row(L.FL_3_1, (1, 8), _SMALL, frozenset({T.UINT32})),
    _row(L.FL_2_1, (4, 4), _SMALL, frozenset({T.UINT32})),
)
TOP_K_SCHEMA = OperatorSchema(name="TOP_K", introduced=L.FL_2_0, tensors=TENSORS,
                              rows=(*_ROWS, _row(L.FL_2_0, (4, 4), frozenset({T.FLOAT32, T.FLOAT16}),
                                                 frozenset({T.UINT32}))))
TOP_K1_SCHEMA = OperatorSchema(name="TOP_K1", introduced=L.FL_2_1, tensors=TENSORS, rows=_ROWS)


@dataclass(frozen=True)
class TopKDesc:
    """DML_TOP_K_OPERATOR_DESC, its fields in DirectML's order: the K largest along Axis."""

    input_tensor: TensorDesc
    output_value_tensor: TensorDesc
    output_index_tensor: TensorDesc
    axis: int
    k: int


@dataclass(frozen=True)
class TopK1Desc:
    """DML_TOP_K1_OPERATOR_DESC: DECREASING selects the K largest (TOP_K), INCREASING the K smallest."""

    input_tensor: TensorDesc
    output_value_tensor: TensorDesc
    output_index_tensor: TensorDesc
    axis: int
    k: int
    axis_direction: AxisDirection | str | int


@dataclass(frozen=True)
class TopKParams:
    axis: int
    k: int
    largest: bool
    index_type: T


def _count(owner: str, field: str, value: object, low: int, high: int) -> int:
    """A UINT field in ``[low, high]``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
        raise invalid(owner, field, f"must be an integer in [{low}, {high}]", repr(value))
    return int(value)


def prepare_selection(owner: str, desc: TopKDesc | TopK1Desc, largest: bool) -> TopKParams:
    """The rules of both pages' descriptions (their tensor constraints and fields), under ``owner``'s name."""
    x, values, indices = desc.input_tensor, desc.output_value_tensor, desc.output_index_tensor
    axis = _count(owner, "Axis", desc.axis, 0, x.dimension_count - 1)
    k = _count(owner, "K", desc.k, 1, x.sizes[axis])
    check_same_data_type(owner, "InputTensor", x, "OutputValueTensor", values)
    for name, out in (("OutputValueTensor", values), ("OutputIndexTensor", indices)):
        if out.dimension_count != x.dimension_count:
            raise invalid(owner, f"{name}.DimensionCount",
                          f"must equal InputTensor.DimensionCount ({x.dimension_count})", out.dimension_count)
        for d, (n_in, n_out) in enumerate(zip(x.sizes, out.sizes)):
            wanted = k if d == axis else n_in
            if n_out != wanted:
                why = f"K along Axis {axis}" if d == axis else f"InputTensor.Sizes[{d}]"
                raise invalid(owner, f"{name}.Sizes[{d}]", f"must be {wanted} ({why})", n_out)
    if not indices.data_type.is_integer:
        raise invalid(owner, "OutputIndexTensor.DataType", "must be an integer type (UINT32 or UINT64)",
                      indices.data_type.name)
    if x.sizes[axis] - 1 > indices.data_type.integer_range[1]:
        raise invalid(owner, "OutputIndexTensor.DataType",
                      f"must hold every index of a sequence of {x.sizes[axis]} elements", indices.data_type.name)
    return TopKParams(axis, k, largest, indices.data_type)


def prepare_top_k(desc: TopKDesc) -> TopKParams:
    return prepare_selection("TOP_K", desc, largest=True)


def prepare_top_k1(desc: TopK1Desc) -> TopKParams:
    direction = AxisDirection.parse(desc.axis_direction, owner="TOP_K1")
    return prepare_selection("TOP_K1", desc, largest=direction is AxisDirection.DECREASING)


def rank_keys(values: np.ndarray, largest: bool) -> tuple[np.ndarray, np.ndarray]:
    """Two keys whose lexicographic order (then the index) is the ranking: NaN last, then the value
    (decreasing where ``largest``) as a number NumPy orders exactly (-0.0 as +0.0)."""
    nan = np.isnan(values) if values.dtype.kind == "f" else np.zeros(values.shape, bool)
    if values.dtype.kind == "f":
        key = np.where(nan, 0, values.astype(np.float64)) + 0.0  # -0.0 + 0.0 is +0.0
        return nan, -key if largest else key
    key = values.astype(np.int64) if values.dtype != np.uint64 else values
    return nan, np.invert(key) if largest else key  # reverses the order of any integer type, no overflow


def top_k_reference(inputs: Sequence[np.ndarray | None], params: TopKParams) -> tuple[np.ndarray, np.ndarray]:
    """The K first elements of each sequence along the axis in the ranking's order: (values, indices)."""
    (x,) = inputs
    assert x is not None
    rows = np.moveaxis(x, params.axis, -1)
    nan, key = rank_keys(rows, params.largest)
    index = np.broadcast_to(np.arange(rows.shape[-1]), rows.shape)
    order = np.lexsort((index, key, nan), axis=-1)[..., :params.k]
    values = np.take_along_axis(rows, order, axis=-1)
    return (np.moveaxis(values, -1, params.axis).copy(),
            np.moveaxis(order, -1, params.axis).astype(params.index_type.numpy))


def top_k_kernel(params: TopKParams, tensors: Mapping[str, TensorDesc | None]) -> KernelSpec:
    """A selection record over the input's own elements; the output the values, the indices a second one."""
    x = tensors["InputTensor"]
    assert x is not None
    selection = Selection(params.axis, params.k, params.largest, params.index_type)
    return KernelSpec(TOP_K_SCHEMA.name, (x.data_type,), x.data_type, ex.Load(0, x.data_type),
                      selection=selection)


TOP_K = OperatorDefinition(TOP_K_SCHEMA, TopKDesc, prepare_top_k, top_k_reference,  # type: ignore[arg-type]
                           top_k_kernel)
TOP_K1 = OperatorDefinition(TOP_K1_SCHEMA, TopK1Desc, prepare_top_k1, top_k_reference,  # type: ignore[arg-type]
                            top_k_kernel)
