"""ELEMENT_WISE_IDENTITY: ``f(x) = x * scale + bias`` (a copy without ScaleBias; a layout change by strides).

FLOAT64 (the page's 4_1 row) is copied bit for bit; a ScaleBias on it is refused by name, as opendml has no
FLOAT64 arithmetic (docs/semantics.md 9d)."""

from __future__ import annotations

from dataclasses import dataclass

from ..dtypes import FLOATS, INTEGERS_32, INTEGERS_64, DataType
from ..feature_levels import FeatureLevel as L
from .unary import SCALE_BIAS, ScaleBiasDesc, unary, unary_row


@dataclass(frozen=True)
class ElementWiseIdentityDesc(ScaleBiasDesc):
    """DML_ELEMENT_WISE_IDENTITY_OPERATOR_DESC."""


IDENTITY = unary(
    "ELEMENT_WISE_IDENTITY", ElementWiseIdentityDesc, L.FL_1_0, (
        unary_row(L.FL_4_1, (1, 8), FLOATS | {DataType.FLOAT64} | INTEGERS_32 | INTEGERS_64),
        unary_row(L.FL_3_0, (1, 8), FLOATS | INTEGERS_32),
        unary_row(L.FL_2_1, (4, 4), FLOATS | INTEGERS_32),
        unary_row(L.FL_1_0, (4, 4), FLOATS)),
    element=lambda v, p, c: v,
    reference=lambda v, p: v,
    python="identity", fields=(SCALE_BIAS,))
