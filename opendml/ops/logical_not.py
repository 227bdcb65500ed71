"""ELEMENT_WISE_LOGICAL_NOT: ``f(x) = !x``, 1 for a zero element and 0 for any other."""

from __future__ import annotations

from dataclasses import dataclass

from .. import expr as ex
from ..dtypes import DataType as T
from ..feature_levels import FeatureLevel as L
from .unary import UnaryDesc, unary, unary_row


@dataclass(frozen=True)
class ElementWiseLogicalNotDesc(UnaryDesc):
    """DML_ELEMENT_WISE_LOGICAL_NOT_OPERATOR_DESC."""


_BOTH = frozenset({T.UINT32, T.UINT8})

LOGICAL_NOT = unary(
    "ELEMENT_WISE_LOGICAL_NOT", ElementWiseLogicalNotDesc, L.FL_1_0, (
        unary_row(L.FL_3_0, (1, 8), _BOTH), unary_row(L.FL_2_0, (4, 4), _BOTH),
        unary_row(L.FL_1_0, (4, 4), frozenset({T.UINT32}))),
    element=lambda v, p, c: ex.Select(ex.Less(c(0), v), c(0), c(1)),
    reference=lambda v, p: v == 0,
    python="logical_not")
