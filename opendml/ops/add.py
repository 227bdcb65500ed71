"""ELEMENT_WISE_ADD: ``f(a, b) = a + b``; floats rounded once (in float32, FLOAT16 rounded again on store),
integers wrapping as two's complement does (SPEC 11.3)."""

from __future__ import annotations

from dataclasses import dataclass

from .. import expr as ex
from ..dtypes import FLOATS, INTEGERS_32, INTEGERS_64
from ..feature_levels import FeatureLevel as L
from .binary import BinaryDesc, arithmetic, arithmetic_reference, arithmetic_rows, binary


@dataclass(frozen=True)
class ElementWiseAddDesc(BinaryDesc):
    """DML_ELEMENT_WISE_ADD_OPERATOR_DESC."""


ADD = binary(
    "ELEMENT_WISE_ADD", ElementWiseAddDesc, L.FL_1_0, arithmetic_rows(L.FL_5_1, FLOATS | INTEGERS_32 | INTEGERS_64),
    element=arithmetic(lambda a, b, p, c: ex.Add(a, b), "+"), reference=arithmetic_reference("+"), python="add")
