"""ACTIVATION_SCALED_ELU: ``f(x) = Gamma * x if x > 0 else Gamma * (Alpha * exp(x) - Alpha)``, the composition
``Gamma * (x if x > 0 else Alpha * EXPM1(x))`` (EXPM1 correctly rounded to FLOAT32, float32 multiplies): -0.0
gives -0.0 (``Alpha * exp(x) - Alpha`` would give +0.0), NaN stays NaN. The defaults are SELU's constants (the
page's typical 1.6732 and 1.0507, to float32)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS
from ..feature_levels import FeatureLevel as L
from .rounded_activation import f32, mul, rounded
from .unary import UnaryDesc, activation_rows, float_parameter, unary

ALPHA, GAMMA = 1.67326319217681884765625, 1.05070102214813232421875  # float32 values


@dataclass(frozen=True)
class ActivationScaledEluDesc(UnaryDesc):
    """DML_ACTIVATION_SCALED_ELU_OPERATOR_DESC."""

    alpha: float
    gamma: float


SCALED_ELU = unary(
    "ACTIVATION_SCALED_ELU", ActivationScaledEluDesc, L.FL_1_0, activation_rows(FLOATS),
    element=lambda v, p, c: ex.Multiply(c(p["Gamma"]), ex.Select(
        ex.Less(c(0), v), v, ex.Multiply(c(p["Alpha"]), rounded(v, "EXPM1")))),
    reference=lambda v, p: mul(p["Gamma"], np.where(v > 0, v, mul(p["Alpha"], f32("EXPM1", v)))),
    python="scaled_elu", fields=(float_parameter("Alpha", ALPHA), float_parameter("Gamma", GAMMA)))
