"""ACTIVATION_RELU: ``f(x) = max(0, x)``; NaN stays NaN and -0.0 stays -0.0 (a tie keeps the element)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS, SIGNED_32
from ..feature_levels import FeatureLevel as L
from .unary import UnaryDesc, activation_rows, unary, unary_row


@dataclass(frozen=True)
class ActivationReluDesc(UnaryDesc):
    """DML_ACTIVATION_RELU_OPERATOR_DESC."""


RELU = unary(
    "ACTIVATION_RELU", ActivationReluDesc, L.FL_1_0,
    (unary_row(L.FL_5_1, (1, 8), FLOATS | SIGNED_32), *activation_rows(FLOATS)),
    element=lambda v, p, c: ex.Select(ex.Less(v, c(0)), c(0), v),
    reference=lambda v, p: np.where(v < 0, v.dtype.type(0), v),
    python="relu")
