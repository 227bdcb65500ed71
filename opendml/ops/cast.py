"""DML_OPERATOR_CAST: each element converted to the OutputTensor's data type (docs/semantics.md 9d).

The page gives no rounding or saturation rule; opendml's, built from nodes every backend lowers alike: a float to
a float rounds to nearest even, once (FLOAT32 to FLOAT16, FLOAT64 to FLOAT32, FLOAT64 to FLOAT16 straight from the
double; FLOAT16 to FLOAT32 and either to FLOAT64 are exact); a float to an integer is
truncated toward zero and saturated at the type's limits, NaN giving 0 (``Saturate``); an integer to an integer
wraps, keeping the low bits (``Wrap``: two's complement truncation, or extension by the source's sign); an integer
to a float rounds to nearest even, once (an integer beyond 2**24, the first FLOAT32 cannot hold, is beyond FLOAT16's
range too, so FLOAT16 results round once as well; to FLOAT64, 64-bit integers beyond 2**53 round).

>>> from opendml.ops import BY_NAME
>>> [t.name for t in BY_NAME["CAST"].schema.tensors]
['InputTensor', 'OutputTensor']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import INTEGERS_32, INTEGERS_64, DataType
from ..dtypes import DataType as T
from ..feature_levels import FeatureLevel as L
from ..kernels.spec import KernelSpec
from ..schema import OperatorSchema, SupportRow
from ..tensor import TensorDesc
from ..validate import check_same_sizes
from .definition import OperatorDefinition
from .unary import UNARY_TENSORS


def _row(level: L, dimensions: tuple[int, int], types: frozenset[DataType]) -> SupportRow:
    return SupportRow(level, dimensions, {"InputTensor": types, "OutputTensor": types})


_EVERY = frozenset({T.FLOAT32, T.FLOAT16}) | INTEGERS_32 | INTEGERS_64
_FIRST = frozenset({T.FLOAT32, T.FLOAT16, T.INT16, T.INT8, T.UINT16, T.UINT8})

# The page's table: FLOAT64 with every other type in 1-8 dimensions from 4_1; the others in 1-8 from 3_1, in 4 from
# 3_0; FLOAT32, FLOAT16, INT16, INT8, UINT16, UINT8 in 4 from 1_0 (the page lists no 32-bit integer there).
CAST_SCHEMA = OperatorSchema("CAST", L.FL_1_0, UNARY_TENSORS, (
    _row(L.FL_4_1, (1, 8), _EVERY | {T.FLOAT64}), _row(L.FL_3_1, (1, 8), _EVERY), _row(L.FL_3_0, (4, 4), _EVERY),
    _row(L.FL_1_0, (4, 4), _FIRST)), in_place=False)


@dataclass(frozen=True)
class CastDesc:
    """DML_CAST_OPERATOR_DESC."""

    input_tensor: TensorDesc
    output_tensor: TensorDesc


@dataclass(frozen=True)
class CastParams:
    input_type: DataType
    output_type: DataType


def _prepare(desc: CastDesc) -> CastParams:
    check_same_sizes("CAST", "InputTensor", desc.input_tensor, "OutputTensor", desc.output_tensor)
    return CastParams(desc.input_tensor.data_type, desc.output_tensor.data_type)


def cast_value(value: ex.Expr, source: DataType, target: DataType) -> ex.Expr:
    """A value of ``source`` (loaded: FLOAT16 already read as float32) as ``target``'s compute value (FLOAT16's,
    and a FLOAT64 one's as FLOAT32, rounded once by the Store that follows)."""
    if target is T.FLOAT64:
        return ex.ToFloat64(value)  # exact of a float, nearest even of an integer
    if target.is_float:
        return value if source.is_float else ex.ToFloat32(value)
    return ex.Saturate(value, target) if source.is_float else ex.Wrap(value, target)


def _kernel(params: CastParams, tensors: Mapping[str, TensorDesc | None]) -> KernelSpec:
    source, target = params.input_type, params.output_type
    value: ex.Expr = ex.Load(0, source)
    if source is T.FLOAT16:
        value = ex.ToFloat32(value)
    if source is not target:
        value = cast_value(value, source, target)
    return KernelSpec("CAST", (source,), target, ex.Store(value, target), ())


def cast_reference(x: np.ndarray, source: DataType, target: DataType) -> np.ndarray:
    """The rules in NumPy, with no warning: floats converted as NumPy does (each conversion rounded once, float64 to
    float16 too), truncated and clipped in float64 (exact for float32 values) before an integer conversion of
    values in range."""
    if not (source.is_float and target.is_integer):
        return np.asarray(x).astype(target.numpy)  # float rounding, integer wrapping, integer to float: C's casts
    low, high = target.integer_range
    whole = np.trunc(np.asarray(x, np.float64))
    over, under, nan = whole >= float(high + 1), whole < float(low), np.isnan(whole)
    inside = np.where(over | under | nan, 0.0, whole).astype(target.numpy)
    return np.where(over, target.numpy.type(high), np.where(under, target.numpy.type(low), inside))


def _reference(inputs: Sequence[np.ndarray | None], params: CastParams) -> np.ndarray:
    (x,) = inputs
    assert x is not None  # InputTensor is required
    with np.errstate(all="ignore"):  # overflow to infinity is the defined result
        return cast_reference(x, params.input_type, params.output_type)


CAST = OperatorDefinition(CAST_SCHEMA, CastDesc, _prepare, _reference, _kernel)
