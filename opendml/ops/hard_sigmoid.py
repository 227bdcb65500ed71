"""ACTIVATION_HARD_SIGMOID: ``f(x) = max(0, min(Alpha * x + Beta, 1))``; NaN stays NaN."""

from __future__ import annotations

from dataclasses import dataclass

from ..dtypes import FLOATS
from ..feature_levels import FeatureLevel as L
from .unary import UnaryDesc, activation_rows, float_parameter, hard_sigmoid, hard_sigmoid_reference, unary


@dataclass(frozen=True)
class ActivationHardSigmoidDesc(UnaryDesc):
    """DML_ACTIVATION_HARD_SIGMOID_OPERATOR_DESC."""

    alpha: float
    beta: float


HARD_SIGMOID = unary(
    "ACTIVATION_HARD_SIGMOID", ActivationHardSigmoidDesc, L.FL_1_0, activation_rows(FLOATS),
    element=hard_sigmoid,
    reference=hard_sigmoid_reference,
    python="hard_sigmoid", fields=(float_parameter("Alpha", 0.2), float_parameter("Beta", 0.5)))
