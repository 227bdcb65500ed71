"""ELEMENT_WISE_MODULUS_FLOOR: Python's modulus, ``f(a, b) = a - (b * floor(a / b))``, the sign of the divisor.
Floats as Python's float ``%`` (and NumPy's ``remainder``): C's ``fmod``, plus the divisor where the two signs
differ (that sum rounded once), a zero result signed as the divisor; x % 0 NaN. Integers: C's ``%`` moved the same
way; x % 0 gives 0 (docs/semantics.md 9b)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..feature_levels import FeatureLevel as L
from .binary import BinaryDesc, binary, modulus_rows
from .unary import Constants, UnaryParams


@dataclass(frozen=True)
class ElementWiseModulusFloorDesc(BinaryDesc):
    """DML_ELEMENT_WISE_MODULUS_FLOOR_OPERATOR_DESC."""


def _floored(a: ex.Expr, b: ex.Expr, p: UnaryParams, c: Constants) -> ex.Expr:
    """The truncated remainder r, plus b where r is nonzero and its sign is not b's; a float zero (or NaN) r is
    replaced by a zero of b's sign (or kept as NaN)."""
    r = ex.Remainder(a, b)
    if not p.data_type.is_signed and not p.data_type.is_float:
        return r  # unsigned: the signs never differ
    zero = c(0)
    moved = ex.Add(r, b) if p.data_type.is_float else ex.Wrapping(r, b, "+")  # |r| < |b|, signs apart: exact
    rest: ex.Expr = r
    if p.data_type.is_float:
        rest = ex.Select(ex.IsNumber(r), ex.Select(ex.SignBit(b), ex.Negate(zero), zero), r)
    return ex.Select(ex.Less(r, zero), ex.Select(ex.Less(zero, b), moved, r),
                     ex.Select(ex.Less(zero, r), ex.Select(ex.Less(b, zero), moved, r), rest))


def _reference(a: np.ndarray, b: np.ndarray, p: UnaryParams) -> np.ndarray:
    if p.data_type.is_float:
        return np.remainder(a, b, dtype=np.float32)  # NumPy's is Python's (npy_divmod)
    zero = b == 0
    return np.where(zero, b.dtype.type(0), np.remainder(a, np.where(zero, b.dtype.type(1), b)))


MODULUS_FLOOR = binary(
    "ELEMENT_WISE_MODULUS_FLOOR", ElementWiseModulusFloorDesc, L.FL_2_1, modulus_rows(),
    element=_floored, reference=_reference, python="modulus_floor")
