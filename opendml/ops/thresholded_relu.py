"""ACTIVATION_THRESHOLDED_RELU: ``f(x) = x if x > Alpha else 0``; as written, a NaN element gives 0."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS
from ..feature_levels import FeatureLevel as L
from .unary import UnaryDesc, activation_rows, float_parameter, unary


@dataclass(frozen=True)
class ActivationThresholdedReluDesc(UnaryDesc):
    """DML_ACTIVATION_THRESHOLDED_RELU_OPERATOR_DESC."""

    alpha: float


THRESHOLDED_RELU = unary(
    "ACTIVATION_THRESHOLDED_RELU", ActivationThresholdedReluDesc, L.FL_1_0, activation_rows(FLOATS),
    element=lambda v, p, c: ex.Select(ex.Less(c(p["Alpha"]), v), v, c(0)),
    reference=lambda v, p: np.where(v > p["Alpha"], v, np.float32(0)),
    python="thresholded_relu", fields=(float_parameter("Alpha", 1.0),))
