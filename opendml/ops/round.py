"""ELEMENT_WISE_ROUND: ``f(x)`` an integer by RoundingMode, exactly: ties to even, truncation, or ties away from
zero (the sign kept: -0.0 for (-0.5, 0))."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS
from ..enums import RoundingMode as M
from ..feature_levels import FeatureLevel as L
from .unary import Constants, UnaryDesc, UnaryParams, enum_parameter, floor, unary, unary_row


@dataclass(frozen=True)
class ElementWiseRoundDesc(UnaryDesc):
    """DML_ELEMENT_WISE_ROUND_OPERATOR_DESC."""

    rounding_mode: M | str | int


def _round(v: ex.Expr, p: UnaryParams, c: Constants) -> ex.Expr:
    if p["RoundingMode"] is M.HALVES_TO_NEAREST_EVEN:
        return ex.Round(v)
    negative = ex.Less(v, c(0))
    if p["RoundingMode"] is M.TOWARD_ZERO:  # ceil (-floor(-x)) below zero, floor above
        return ex.Select(negative, ex.Negate(floor(ex.Negate(v), c)), floor(v, c))
    size = ex.Select(negative, ex.Negate(v), v)  # |v| (-0.0 kept: its floor is -0.0 too)
    whole = floor(size, c)
    fraction = ex.Add(size, ex.Negate(whole))  # exact: whole <= size < whole + 1
    rounded = ex.Select(ex.Less(fraction, c(0.5)), whole, ex.Add(whole, c(1)))
    return ex.Select(negative, ex.Negate(rounded), rounded)


def _reference(v: np.ndarray, p: UnaryParams) -> np.ndarray:
    if p["RoundingMode"] is M.HALVES_TO_NEAREST_EVEN:
        return np.rint(v)
    if p["RoundingMode"] is M.TOWARD_ZERO:
        return np.trunc(v)
    away = np.floor(np.abs(v).astype(np.float64) + 0.5).astype(np.float32)  # exact in double
    return np.copysign(away, v)


ROUND = unary(
    "ELEMENT_WISE_ROUND", ElementWiseRoundDesc, L.FL_2_1,
    (unary_row(L.FL_3_0, (1, 8), FLOATS), unary_row(L.FL_2_1, (4, 4), FLOATS)),
    element=_round, reference=_reference, python="round",
    fields=(enum_parameter("RoundingMode", M, "DML_ROUNDING_MODE_", M.HALVES_TO_NEAREST_EVEN),))
