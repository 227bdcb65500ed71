"""ELEMENT_WISE_MEAN: ``f(a, b) = (a + b) / 2`` (DirectML's MEAN is binary). Floats: the sum rounded once in
float32, then halved (exact unless the half is subnormal; a FLOAT32 sum beyond the range is an infinity, as
ADD's). Integers: the exact sum (in INT64: no overflow) divided by 2 truncated toward zero, as DIVIDE's."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS
from ..dtypes import DataType as T
from ..feature_levels import FeatureLevel as L
from .binary import BinaryDesc, binary, binary_row, by_kind, reference_by_kind
from .unary import Constants, UnaryParams


@dataclass(frozen=True)
class ElementWiseMeanDesc(BinaryDesc):
    """DML_ELEMENT_WISE_MEAN_OPERATOR_DESC."""


_WIDE = FLOATS | {T.INT32, T.UINT32}
_ROWS = (binary_row(L.FL_3_0, (1, 8), _WIDE), binary_row(L.FL_2_1, (4, 4), _WIDE), binary_row(L.FL_1_0, (4, 4), FLOATS))


def _integer_mean(a: ex.Expr, b: ex.Expr, p: UnaryParams, c: Constants) -> ex.Expr:
    total = ex.Add(ex.Widen(a, T.INT64), ex.Widen(b, T.INT64))  # two 32-bit values: exact
    return ex.Saturate(ex.Divide(total, c.typed(2, T.INT64)), p.data_type)  # the mean lies in the type: exact


def _integer_reference(a: np.ndarray, b: np.ndarray, p: UnaryParams) -> np.ndarray:
    total = a.astype(np.int64) + b.astype(np.int64)
    return np.sign(total) * (np.abs(total) // 2)  # truncated toward zero


MEAN = binary(
    "ELEMENT_WISE_MEAN", ElementWiseMeanDesc, L.FL_1_0, _ROWS,
    element=by_kind(lambda a, b, p, c: ex.Multiply(ex.Add(a, b), c(0.5)), _integer_mean),
    reference=reference_by_kind(lambda a, b, p: np.multiply(np.add(a, b, dtype=np.float32), np.float32(0.5)),
                                _integer_reference),
    python="mean")
