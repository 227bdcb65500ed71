"""ACTIVATION_SHRINK: ``f(x) = x - Bias if x > Threshold, x + Bias if x < -Threshold, else 0``; NaN gives 0."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS, INTEGERS_32
from ..feature_levels import FeatureLevel as L
from .unary import Constants, UnaryDesc, UnaryParams, float_parameter, unary, unary_row, wrapped

NAME = "ACTIVATION_SHRINK"


@dataclass(frozen=True)
class ActivationShrinkDesc(UnaryDesc):
    """DML_ACTIVATION_SHRINK_OPERATOR_DESC."""

    bias: float
    threshold: float


def _integer_fields(p: UnaryParams) -> tuple[int, int, int]:
    """An integer tensor's exact comparisons x > Threshold and x < -Threshold as x > high and x < low (floor(Threshold)
    and -floor(Threshold), each clamped to one past the type's range, where it is always or never true), and Bias
    truncated toward zero (an infinity: the type's limit), reduced into the type as the sums it makes wrap."""
    t, threshold, bias = p.data_type, float(p["Threshold"]), float(p["Bias"])  # NaN is refused by the family
    low, high = t.integer_range
    if math.isfinite(threshold):
        whole = math.floor(threshold)
        above, below = min(max(whole, low - 1), high), min(max(-whole, low), high + 1)
    else:  # +inf: neither ever holds; -inf: both always do (the first wins)
        above, below = (high, low) if threshold > 0 else (low - 1, high + 1)
    b = math.trunc(bias) if math.isfinite(bias) else (high if bias > 0 else low)
    return above, below, (b - low) % (high - low + 1) + low


def _shrink(v: ex.Expr, p: UnaryParams, c: Constants) -> ex.Expr:
    t = p.data_type
    if t.is_float:  # x - Bias as x + (-Bias): the same one rounding
        above, below = ex.Less(c(p["Threshold"]), v), ex.Less(v, c(-p["Threshold"]))
        return ex.Select(above, ex.Add(v, c(-p["Bias"])), ex.Select(below, ex.Add(v, c(p["Bias"])), c(0)))
    high, low, bias = _integer_fields(p)
    wide = ex.difference_type(t)  # holds every sum and difference, and the bounds one past the range
    x, b = ex.Widen(v, wide), ex.Widen(c(bias), wide)
    minus, plus = wrapped(ex.Subtract(x, b), t, c), wrapped(ex.Add(x, b), t, c)
    return ex.Select(ex.Less(c.typed(high, wide), x), minus, ex.Select(ex.Less(x, c.typed(low, wide)), plus, c(0)))


def _reference(v: np.ndarray, p: UnaryParams) -> np.ndarray:
    if p.data_type.is_float:
        high, low, bias = p["Threshold"], -p["Threshold"], p["Bias"]
        minus, plus = np.subtract(v, bias, dtype=np.float32), np.add(v, bias, dtype=np.float32)
    else:  # exact in INT64, wrapped by the final cast to the type
        high, low, bias = _integer_fields(p)
        v = v.astype(np.int64)
        minus, plus = v - bias, v + bias
    return np.where(v > high, minus, np.where(v < low, plus, 0))


SHRINK = unary(
    NAME, ActivationShrinkDesc, L.FL_2_0, (
        unary_row(L.FL_5_1, (1, 8), FLOATS | INTEGERS_32), unary_row(L.FL_3_0, (1, 8), FLOATS),
        unary_row(L.FL_2_0, (4, 5), FLOATS)),
    element=_shrink, reference=_reference,
    python="shrink", fields=(float_parameter("Bias", 0.0), float_parameter("Threshold", 0.5)))
