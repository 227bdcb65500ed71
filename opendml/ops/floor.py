"""ELEMENT_WISE_FLOOR: ``f(x) = floor(x * scale + bias)``, the largest integer not above it (-0.0 stays -0.0)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dtypes import FLOATS
from ..feature_levels import FeatureLevel as L
from .unary import SCALE_BIAS, ScaleBiasDesc, floor, unary, unary_row


@dataclass(frozen=True)
class ElementWiseFloorDesc(ScaleBiasDesc):
    """DML_ELEMENT_WISE_FLOOR_OPERATOR_DESC."""


FLOOR = unary(
    "ELEMENT_WISE_FLOOR", ElementWiseFloorDesc, L.FL_1_0,
    (unary_row(L.FL_3_0, (1, 8), FLOATS), unary_row(L.FL_1_0, (4, 4), FLOATS)),
    element=lambda v, p, c: floor(v, c),
    reference=lambda v, p: np.floor(v),
    python="floor", fields=(SCALE_BIAS,))
