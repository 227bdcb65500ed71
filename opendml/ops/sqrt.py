"""ELEMENT_WISE_SQRT: ``f(x) = sqrt(x * scale + bias)``, correctly rounded (-0.0 for -0.0, NaN below zero)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS
from ..feature_levels import FeatureLevel as L
from .unary import SCALE_BIAS, ScaleBiasDesc, unary, unary_row


@dataclass(frozen=True)
class ElementWiseSqrtDesc(ScaleBiasDesc):
    """DML_ELEMENT_WISE_SQRT_OPERATOR_DESC."""


SQRT = unary(
    "ELEMENT_WISE_SQRT", ElementWiseSqrtDesc, L.FL_1_0,
    (unary_row(L.FL_3_0, (1, 8), FLOATS), unary_row(L.FL_1_0, (4, 4), FLOATS)),
    element=lambda v, p, c: ex.Sqrt(v),
    reference=lambda v, p: np.sqrt(v, dtype=np.float32),
    python="sqrt", fields=(SCALE_BIAS,))
