"""ACTIVATION_LEAKY_RELU: ``f(x) = x if x >= 0 else Alpha * x``; NaN stays NaN, -0.0 stays -0.0."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS
from ..feature_levels import FeatureLevel as L
from .unary import UnaryDesc, activation_rows, float_parameter, unary


@dataclass(frozen=True)
class ActivationLeakyReluDesc(UnaryDesc):
    """DML_ACTIVATION_LEAKY_RELU_OPERATOR_DESC."""

    alpha: float


LEAKY_RELU = unary(
    "ACTIVATION_LEAKY_RELU", ActivationLeakyReluDesc, L.FL_1_0, activation_rows(FLOATS),
    element=lambda v, p, c: ex.Select(ex.Less(v, c(0)), ex.Multiply(v, c(p["Alpha"])), v),
    reference=lambda v, p: np.where(v < 0, np.multiply(v, p["Alpha"], dtype=np.float32), v),
    python="leaky_relu", fields=(float_parameter("Alpha", 0.01),))
