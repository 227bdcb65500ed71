"""ACTIVATION_SHRINK: ``f(x) = x - Bias if x > Threshold, x + Bias if x < -Threshold, else 0``; NaN gives 0."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS, INTEGERS_32
from ..feature_levels import FeatureLevel as L
from .unary import Constants, UnaryDesc, UnaryParams, float_parameter, integer_field, unary, unary_row, wrapped

NAME = "ACTIVATION_SHRINK"


@dataclass(frozen=True)
class ActivationShrinkDesc(UnaryDesc):
    """DML_ACTIVATION_SHRINK_OPERATOR_DESC."""

    bias: float
    threshold: float


def _shrink(v: ex.Expr, p: UnaryParams, c: Constants) -> ex.Expr:
    t = p.data_type
    minus: ex.Expr
    plus: ex.Expr
    if t.is_float:  # x - Bias as x + (-Bias): the same one rounding
        high, low = c(p["Threshold"]), c(-p["Threshold"])
        minus, plus = ex.Add(v, c(-p["Bias"])), ex.Add(v, c(p["Bias"]))
    else:  # the fields as the type's values (-Threshold negated before its cast); x -+ Bias exact, then wrapped
        high, low = (c(integer_field(p, "Threshold", NAME, sign)) for sign in (1, -1))
        wide = ex.difference_type(t)
        x, b = ex.Widen(v, wide), ex.Widen(c(integer_field(p, "Bias", NAME)), wide)
        minus, plus = wrapped(ex.Subtract(x, b), t, c), wrapped(ex.Add(x, b), t, c)
    return ex.Select(ex.Less(high, v), minus, ex.Select(ex.Less(v, low), plus, c(0)))


def _reference(v: np.ndarray, p: UnaryParams) -> np.ndarray:
    if p.data_type.is_float:
        high, low, bias = p["Threshold"], -p["Threshold"], p["Bias"]
        minus, plus = np.subtract(v, bias, dtype=np.float32), np.add(v, bias, dtype=np.float32)
    else:  # exact in INT64, wrapped by the final cast to the type
        high, low = (integer_field(p, "Threshold", NAME, sign) for sign in (1, -1))
        bias = integer_field(p, "Bias", NAME)
        minus, plus = v.astype(np.int64) - bias, v.astype(np.int64) + bias
    return np.where(v > high, minus, np.where(v < low, plus, 0))


SHRINK = unary(
    NAME, ActivationShrinkDesc, L.FL_2_0, (
        unary_row(L.FL_5_1, (1, 8), FLOATS | INTEGERS_32), unary_row(L.FL_3_0, (1, 8), FLOATS),
        unary_row(L.FL_2_0, (4, 5), FLOATS)),
    element=_shrink, reference=_reference,
    python="shrink", fields=(float_parameter("Bias", 0.0), float_parameter("Threshold", 0.5)))
