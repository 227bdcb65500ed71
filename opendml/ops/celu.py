"""ACTIVATION_CELU: ``f(x) = max(0, x) + min(0, Alpha * (exp(x / Alpha) - 1))``, the composition with
``Alpha * EXPM1(x / Alpha)`` (a float32 divide, EXPM1 correctly rounded to FLOAT32, a float32 multiply), then
max, min (a bound replaces the value only where the comparison holds: NaN stays NaN) and a float32 add."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS
from ..feature_levels import FeatureLevel as L
from .rounded_activation import add, div, f32, mul, rounded
from .unary import Constants, UnaryDesc, UnaryParams, float_parameter, unary, unary_row


@dataclass(frozen=True)
class ActivationCeluDesc(UnaryDesc):
    """DML_ACTIVATION_CELU_OPERATOR_DESC."""

    alpha: float


def _element(v: ex.Expr, p: UnaryParams, c: Constants) -> ex.Expr:
    alpha = c(p["Alpha"])
    t = ex.Multiply(alpha, rounded(ex.Divide(v, alpha), "EXPM1"))
    return ex.Add(ex.Select(ex.Less(v, c(0)), c(0), v), ex.Select(ex.Less(c(0), t), c(0), t))


def _reference(v: np.ndarray, p: UnaryParams) -> np.ndarray:
    zero = np.float32(0)
    t = mul(p["Alpha"], f32("EXPM1", div(v, p["Alpha"])))
    return add(np.where(v < 0, zero, v), np.where(t > 0, zero, t))


CELU = unary("ACTIVATION_CELU", ActivationCeluDesc, L.FL_3_0, (unary_row(L.FL_3_0, (1, 8), FLOATS),),
             element=_element, reference=_reference, python="celu", fields=(float_parameter("Alpha", 1.0),))
