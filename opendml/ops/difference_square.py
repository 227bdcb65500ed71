"""ELEMENT_WISE_DIFFERENCE_SQUARE: ``f(a, b) = (a - b) * (a - b)``. Floats: the difference rounded once in
float32 (SUBTRACT's), then its square rounded once; integers: both wrapping as two's complement does (SPEC 11.3)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS
from ..dtypes import DataType as T
from ..feature_levels import FeatureLevel as L
from .binary import BinaryDesc, binary, binary_row, by_kind, reference_by_kind


@dataclass(frozen=True)
class ElementWiseDifferenceSquareDesc(BinaryDesc):
    """DML_ELEMENT_WISE_DIFFERENCE_SQUARE_OPERATOR_DESC."""


def _float(a: ex.Expr, b: ex.Expr) -> ex.Expr:
    difference = ex.Add(a, ex.Negate(b))
    return ex.Multiply(difference, difference)


def _integer(a: ex.Expr, b: ex.Expr) -> ex.Expr:
    difference = ex.Wrapping(a, b, "-")
    return ex.Wrapping(difference, difference, "*")


def _reference(a: np.ndarray, b: np.ndarray, t: type | np.dtype) -> np.ndarray:
    difference = np.subtract(a, b, dtype=t)
    return np.multiply(difference, difference, dtype=t)


DIFFERENCE_SQUARE = binary(
    "ELEMENT_WISE_DIFFERENCE_SQUARE", ElementWiseDifferenceSquareDesc, L.FL_3_1,
    (binary_row(L.FL_3_1, (1, 8), FLOATS | {T.INT32, T.UINT32}),),
    element=by_kind(lambda a, b, p, c: _float(a, b), lambda a, b, p, c: _integer(a, b)),
    reference=reference_by_kind(lambda a, b, p: _reference(a, b, np.float32),
                                lambda a, b, p: _reference(a, b, p.data_type.numpy)),
    python="difference_square")
