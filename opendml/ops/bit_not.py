"""ELEMENT_WISE_BIT_NOT: ``f(x) = ~x``, every bit of the element inverted (0b00101010 -> 0b11010101)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import INTEGERS_32, INTEGERS_64
from ..dtypes import DataType as T
from ..feature_levels import FeatureLevel as L
from .unary import UnaryDesc, unary, unary_row


@dataclass(frozen=True)
class ElementWiseBitNotDesc(UnaryDesc):
    """DML_ELEMENT_WISE_BIT_NOT_OPERATOR_DESC (the float types of DirectML's 4_1 row, inverted in their encoding,
    are not taken here)."""


BIT_NOT = unary(
    "ELEMENT_WISE_BIT_NOT", ElementWiseBitNotDesc, L.FL_3_0, (
        unary_row(L.FL_4_1, (1, 8), INTEGERS_32 | INTEGERS_64),
        unary_row(L.FL_3_0, (1, 8), frozenset({T.UINT32, T.UINT16, T.UINT8}))),
    element=lambda v, p, c: ex.BitNot(v),
    reference=lambda v, p: np.invert(v),
    python="bit_not")
