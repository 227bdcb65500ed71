"""ACTIVATION_LINEAR: ``f(x) = Alpha * x + Beta``, a rounded multiply then a rounded add (never fused)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS
from ..feature_levels import FeatureLevel as L
from .unary import UnaryDesc, activation_rows, float_parameter, unary


@dataclass(frozen=True)
class ActivationLinearDesc(UnaryDesc):
    """DML_ACTIVATION_LINEAR_OPERATOR_DESC."""

    alpha: float
    beta: float


LINEAR = unary(
    "ACTIVATION_LINEAR", ActivationLinearDesc, L.FL_1_0, activation_rows(FLOATS),
    element=lambda v, p, c: ex.Add(ex.Multiply(v, c(p["Alpha"])), c(p["Beta"])),
    reference=lambda v, p: np.add(np.multiply(v, p["Alpha"], dtype=np.float32), p["Beta"], dtype=np.float32),
    python="linear", fields=(float_parameter("Alpha"), float_parameter("Beta")))
