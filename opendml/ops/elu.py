"""ACTIVATION_ELU: ``f(x) = x if x >= 0 else Alpha * (exp(x) - 1)``, the composition ``Alpha * EXPM1(x)`` below
0 (EXPM1 correctly rounded to FLOAT32, a float32 multiply); NaN stays NaN, -0.0 stays -0.0."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS
from ..feature_levels import FeatureLevel as L
from .rounded_activation import f32, mul, rounded
from .unary import UnaryDesc, activation_rows, float_parameter, unary


@dataclass(frozen=True)
class ActivationEluDesc(UnaryDesc):
    """DML_ACTIVATION_ELU_OPERATOR_DESC."""

    alpha: float


ELU = unary(
    "ACTIVATION_ELU", ActivationEluDesc, L.FL_1_0, activation_rows(FLOATS),
    element=lambda v, p, c: ex.Select(ex.Less(v, c(0)), ex.Multiply(c(p["Alpha"]), rounded(v, "EXPM1")), v),
    reference=lambda v, p: np.where(v < 0, mul(p["Alpha"], f32("EXPM1", v)), v),
    python="elu", fields=(float_parameter("Alpha", 1.0),))
