"""ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL: ``f(a, b) = (a >= b)``, 1 for true and 0 for false, into UINT8 or
UINT32; a NaN operand gives 0, -0.0 and +0.0 are equal (docs/semantics.md 9b)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dtypes import DataType as T
from ..feature_levels import FeatureLevel as L
from .binary import BinaryDesc, binary
from .comparison import compare_reference, comparison_rows, less_or_equal, swapped


@dataclass(frozen=True)
class ElementWiseLogicalGreaterThanOrEqualDesc(BinaryDesc):
    """DML_ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL_OPERATOR_DESC."""


LOGICAL_GREATER_THAN_OR_EQUAL = binary(
    "ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL", ElementWiseLogicalGreaterThanOrEqualDesc, L.FL_3_0,
    comparison_rows(L.FL_3_0), element=swapped(less_or_equal), reference=compare_reference(np.greater_equal),
    python="greater_equal", in_place=False, output=T.UINT8)
