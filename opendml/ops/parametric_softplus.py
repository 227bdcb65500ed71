"""ACTIVATION_PARAMETRIC_SOFTPLUS: ``f(x) = Alpha * ln(1 + exp(Beta * x))``, the composition
``Alpha * SOFTPLUS(Beta * x)``: a float32 multiply, SOFTPLUS correctly rounded to FLOAT32, a float32 multiply."""

from __future__ import annotations

from dataclasses import dataclass

from .. import expr as ex
from ..dtypes import FLOATS
from ..feature_levels import FeatureLevel as L
from .rounded_activation import f32, mul, rounded
from .unary import UnaryDesc, activation_rows, float_parameter, unary


@dataclass(frozen=True)
class ActivationParametricSoftplusDesc(UnaryDesc):
    """DML_ACTIVATION_PARAMETRIC_SOFTPLUS_OPERATOR_DESC."""

    alpha: float
    beta: float


PARAMETRIC_SOFTPLUS = unary(
    "ACTIVATION_PARAMETRIC_SOFTPLUS", ActivationParametricSoftplusDesc, L.FL_1_0, activation_rows(FLOATS),
    element=lambda v, p, c: ex.Multiply(c(p["Alpha"]), rounded(ex.Multiply(v, c(p["Beta"])), "SOFTPLUS")),
    reference=lambda v, p: mul(p["Alpha"], f32("SOFTPLUS", mul(v, p["Beta"]))),
    python="parametric_softplus", fields=(float_parameter("Alpha"), float_parameter("Beta")))
