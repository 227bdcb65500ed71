"""ELEMENT_WISE_RECIP: ``f(x) = 1 / (x * scale + bias)``, one IEEE division (+-inf of +-0.0)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS
from ..feature_levels import FeatureLevel as L
from .unary import SCALE_BIAS, ScaleBiasDesc, unary, unary_row


@dataclass(frozen=True)
class ElementWiseRecipDesc(ScaleBiasDesc):
    """DML_ELEMENT_WISE_RECIP_OPERATOR_DESC."""


RECIP = unary(
    "ELEMENT_WISE_RECIP", ElementWiseRecipDesc, L.FL_1_0,
    (unary_row(L.FL_3_0, (1, 8), FLOATS), unary_row(L.FL_1_0, (4, 4), FLOATS)),
    element=lambda v, p, c: ex.Divide(c(1), v),
    reference=lambda v, p: np.divide(np.float32(1), v, dtype=np.float32),
    python="recip", fields=(SCALE_BIAS,))
