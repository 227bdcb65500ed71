"""ELEMENT_WISE_SUBTRACT: ``f(a, b) = a - b``; floats as ``a + (-b)`` rounded once (negation is exact, so this is
IEEE subtraction), integers wrapping as two's complement does (SPEC 11.3)."""

from __future__ import annotations

from dataclasses import dataclass

from .. import expr as ex
from ..dtypes import FLOATS, INTEGERS_32, INTEGERS_64
from ..feature_levels import FeatureLevel as L
from .binary import BinaryDesc, arithmetic, arithmetic_reference, arithmetic_rows, binary


@dataclass(frozen=True)
class ElementWiseSubtractDesc(BinaryDesc):
    """DML_ELEMENT_WISE_SUBTRACT_OPERATOR_DESC."""


SUBTRACT = binary(
    "ELEMENT_WISE_SUBTRACT", ElementWiseSubtractDesc, L.FL_1_0,
    arithmetic_rows(L.FL_5_1, FLOATS | INTEGERS_32 | INTEGERS_64),
    element=arithmetic(lambda a, b, p, c: ex.Add(a, ex.Negate(b)), "-"), reference=arithmetic_reference("-"),
    python="subtract")
