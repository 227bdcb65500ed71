"""ELEMENT_WISE_ABS: ``f(x) = |x * scale + bias|``; +0.0 for -0.0, and ``|INT_MIN|`` is INT_MIN (wrapping)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS, SIGNED_32
from ..dtypes import DataType as T
from ..feature_levels import FeatureLevel as L
from .unary import SCALE_BIAS, ScaleBiasDesc, unary, unary_row


@dataclass(frozen=True)
class ElementWiseAbsDesc(ScaleBiasDesc):
    """DML_ELEMENT_WISE_ABS_OPERATOR_DESC."""


ABS = unary(
    "ELEMENT_WISE_ABS", ElementWiseAbsDesc, L.FL_1_0, (
        unary_row(L.FL_4_1, (1, 8), FLOATS | SIGNED_32 | {T.INT64}),
        unary_row(L.FL_3_0, (1, 8), FLOATS | SIGNED_32),
        unary_row(L.FL_2_1, (4, 4), FLOATS | SIGNED_32),
        unary_row(L.FL_1_0, (4, 4), FLOATS)),
    # A float's other side adds +0.0: -0.0 + 0.0 is +0.0, every other value stays.
    element=lambda v, p, c: ex.Select(ex.Less(v, c(0)), ex.Negate(v), ex.Add(v, c(0)) if p.data_type.is_float else v),
    reference=lambda v, p: np.abs(v),
    python="abs", fields=(SCALE_BIAS,))
