"""ACTIVATION_SWISH: ``f(x) = x * Sigmoid(SigmoidInputScale * x)``, the composition of a float32 multiply, SIGMOID
correctly rounded to FLOAT32 and a float32 multiply (so -inf gives -inf * 0 = NaN, as the formula's steps do)."""

from __future__ import annotations

from dataclasses import dataclass

from .. import expr as ex
from ..dtypes import FLOATS
from ..feature_levels import FeatureLevel as L
from .rounded_activation import f32, mul, rounded
from .unary import UnaryDesc, float_parameter, unary, unary_row


@dataclass(frozen=True)
class ActivationSwishDesc(UnaryDesc):
    """DML_ACTIVATION_SWISH_OPERATOR_DESC."""

    sigmoid_input_scale: float


SWISH = unary(
    "ACTIVATION_SWISH", ActivationSwishDesc, L.FL_6_2, (unary_row(L.FL_6_2, (1, 8), FLOATS),),
    element=lambda v, p, c: ex.Multiply(v, rounded(ex.Multiply(c(p["SigmoidInputScale"]), v), "SIGMOID")),
    reference=lambda v, p: mul(v, f32("SIGMOID", mul(p["SigmoidInputScale"], v))),
    python="swish", fields=(float_parameter("SigmoidInputScale", 1.0),))
