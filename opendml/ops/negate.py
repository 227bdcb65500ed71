"""ELEMENT_WISE_NEGATE: ``f(x) = -x``; the sign flipped for floats, and -INT_MIN is INT_MIN (wrapping)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS, SIGNED_32
from ..dtypes import DataType as T
from ..feature_levels import FeatureLevel as L
from .unary import UnaryDesc, unary, unary_row


@dataclass(frozen=True)
class ElementWiseNegateDesc(UnaryDesc):
    """DML_ELEMENT_WISE_NEGATE_OPERATOR_DESC."""


NEGATE = unary(
    "ELEMENT_WISE_NEGATE", ElementWiseNegateDesc, L.FL_5_0,
    (unary_row(L.FL_5_0, (1, 8), FLOATS | SIGNED_32 | {T.INT64}),),
    element=lambda v, p, c: ex.Negate(v),
    reference=lambda v, p: np.negative(v),
    python="negate")
