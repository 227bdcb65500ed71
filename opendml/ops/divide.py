"""ELEMENT_WISE_DIVIDE: ``f(a, b) = a / b``; floats as IEEE division rounded once (in float32, FLOAT16 rounded
again on store: x / 0 is an infinity of x's sign times 0's, 0 / 0 NaN); integers truncated toward zero (the
page: "for integer divisions, the result is truncated"), x / 0 giving 0 and the smallest signed integer / -1
itself (docs/semantics.md 9b)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS, INTEGERS_32, INTEGERS_64
from ..dtypes import DataType as T
from ..feature_levels import FeatureLevel as L
from ..kernels import numpy_lowering
from .binary import BinaryDesc, binary, binary_row
from .unary import UnaryParams


@dataclass(frozen=True)
class ElementWiseDivideDesc(BinaryDesc):
    """DML_ELEMENT_WISE_DIVIDE_OPERATOR_DESC."""


_WIDE = FLOATS | {T.INT32, T.UINT32}
_ROWS = (binary_row(L.FL_6_0, (1, 8), FLOATS | INTEGERS_32 | INTEGERS_64),
         binary_row(L.FL_5_1, (1, 8), FLOATS | INTEGERS_32), binary_row(L.FL_3_0, (1, 8), _WIDE),
         binary_row(L.FL_2_1, (4, 5), _WIDE), binary_row(L.FL_1_0, (4, 5), FLOATS))


def _reference(a: np.ndarray, b: np.ndarray, p: UnaryParams) -> np.ndarray:
    if p.data_type.is_float:
        return np.divide(a, b, dtype=np.float32)
    return numpy_lowering.integer_quotient(a, b)


DIVIDE = binary(
    "ELEMENT_WISE_DIVIDE", ElementWiseDivideDesc, L.FL_1_0, _ROWS,
    element=lambda a, b, p, c: ex.Divide(a, b), reference=_reference, python="divide")
