"""ELEMENT_WISE_MULTIPLY: ``f(a, b) = a * b``; floats rounded once (in float32, FLOAT16 rounded again on
store)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS, INTEGER_TYPES, INTEGERS_32, INTEGERS_64
from ..feature_levels import FeatureLevel as L
from .binary import BinaryDesc, arithmetic_rows, binary, without


@dataclass(frozen=True)
class ElementWiseMultiplyDesc(BinaryDesc):
    """DML_ELEMENT_WISE_MULTIPLY_OPERATOR_DESC."""


# The integer types wait for a wrapping integer product: the nodes multiply only FLOAT32.
MULTIPLY = binary(
    "ELEMENT_WISE_MULTIPLY", ElementWiseMultiplyDesc, L.FL_1_0,
    without(arithmetic_rows(L.FL_5_1, FLOATS | INTEGERS_32 | INTEGERS_64), INTEGER_TYPES),
    element=lambda a, b, p, c: ex.Multiply(a, b),
    reference=lambda a, b, p: np.multiply(a, b, dtype=np.float32), python="multiply")
