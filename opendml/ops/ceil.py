"""ELEMENT_WISE_CEIL: ``f(x) = ceil(x * scale + bias)``, the smallest integer not below it (-0.0 for (-1, 0))."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS
from ..feature_levels import FeatureLevel as L
from .unary import SCALE_BIAS, ScaleBiasDesc, floor, unary, unary_row


@dataclass(frozen=True)
class ElementWiseCeilDesc(ScaleBiasDesc):
    """DML_ELEMENT_WISE_CEIL_OPERATOR_DESC."""


CEIL = unary(
    "ELEMENT_WISE_CEIL", ElementWiseCeilDesc, L.FL_1_0,
    (unary_row(L.FL_3_0, (1, 8), FLOATS), unary_row(L.FL_1_0, (4, 4), FLOATS)),
    element=lambda v, p, c: ex.Negate(floor(ex.Negate(v), c)),  # ceil(x) = -floor(-x), signs of zero included
    reference=lambda v, p: np.ceil(v),
    python="ceil", fields=(SCALE_BIAS,))
