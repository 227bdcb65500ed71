"""ACTIVATION_SCALED_TANH: ``f(x) = Alpha * tanh(Beta * x)``, the composition of a float32 multiply, TANH
correctly rounded to FLOAT32 and a float32 multiply."""

from __future__ import annotations

from dataclasses import dataclass

from .. import expr as ex
from ..dtypes import FLOATS
from ..feature_levels import FeatureLevel as L
from .rounded_activation import f32, mul, rounded
from .unary import UnaryDesc, activation_rows, float_parameter, unary


@dataclass(frozen=True)
class ActivationScaledTanhDesc(UnaryDesc):
    """DML_ACTIVATION_SCALED_TANH_OPERATOR_DESC."""

    alpha: float
    beta: float


SCALED_TANH = unary(
    "ACTIVATION_SCALED_TANH", ActivationScaledTanhDesc, L.FL_1_0, activation_rows(FLOATS),
    element=lambda v, p, c: ex.Multiply(c(p["Alpha"]), rounded(ex.Multiply(c(p["Beta"]), v), "TANH")),
    reference=lambda v, p: mul(p["Alpha"], f32("TANH", mul(p["Beta"], v))),
    python="scaled_tanh", fields=(float_parameter("Alpha", 1.0), float_parameter("Beta", 0.5)))
