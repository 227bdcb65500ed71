"""ACTIVATION_HARD_SWISH: ``f(x) = x * HardSigmoid(x, Alpha, Beta)``, each step rounded in float32; NaN stays NaN."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS
from ..feature_levels import FeatureLevel as L
from .unary import UnaryDesc, float_parameter, hard_sigmoid, hard_sigmoid_reference, unary, unary_row


@dataclass(frozen=True)
class ActivationHardSwishDesc(UnaryDesc):
    """DML_ACTIVATION_HARD_SWISH_OPERATOR_DESC."""

    alpha: float
    beta: float


HARD_SWISH = unary(
    "ACTIVATION_HARD_SWISH", ActivationHardSwishDesc, L.FL_6_2, (unary_row(L.FL_6_2, (1, 8), FLOATS),),
    element=lambda v, p, c: ex.Multiply(v, hard_sigmoid(v, p, c)),
    reference=lambda v, p: np.multiply(v, hard_sigmoid_reference(v, p), dtype=np.float32),
    python="hard_swish", fields=(float_parameter("Alpha", 1 / 6), float_parameter("Beta", 0.5)))
