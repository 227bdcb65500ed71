"""ELEMENT_WISE_SIGN: ``f(x) = -1 if x < 0, 1 if x > 0, else 0`` (+0.0 for -0.0 and, as written, for NaN)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS, INTEGERS_32, INTEGERS_64
from ..feature_levels import FeatureLevel as L
from .unary import Constants, UnaryDesc, UnaryParams, unary, unary_row


@dataclass(frozen=True)
class ElementWiseSignDesc(UnaryDesc):
    """DML_ELEMENT_WISE_SIGN_OPERATOR_DESC."""


def _sign(v: ex.Expr, p: UnaryParams, c: Constants) -> ex.Expr:
    negative = ex.Select(ex.Less(v, c(0)), c(-1), c(0)) if p.data_type.is_signed else c(0)
    return ex.Select(ex.Less(c(0), v), c(1), negative)  # NaN: neither comparison holds


def _reference(v: np.ndarray, p: UnaryParams) -> np.ndarray:
    one, zero = v.dtype.type(1), v.dtype.type(0)
    negative = np.where(v < 0, v.dtype.type(-1), zero) if p.data_type.is_signed else zero
    return np.where(v > 0, one, negative)


SIGN = unary(
    "ELEMENT_WISE_SIGN", ElementWiseSignDesc, L.FL_2_0, (
        unary_row(L.FL_4_1, (1, 8), FLOATS | INTEGERS_32 | INTEGERS_64),
        unary_row(L.FL_3_0, (1, 8), FLOATS | INTEGERS_32),
        unary_row(L.FL_2_1, (4, 4), FLOATS | INTEGERS_32),
        unary_row(L.FL_2_0, (4, 4), FLOATS)),
    element=_sign, reference=_reference, python="sign")
