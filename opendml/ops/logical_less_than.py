"""ELEMENT_WISE_LOGICAL_LESS_THAN: ``f(a, b) = (a < b)``, 1 for true and 0 for false, into UINT8 or
UINT32; a NaN operand gives 0, -0.0 and +0.0 are equal (docs/semantics.md 9b)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dtypes import DataType as T
from ..feature_levels import FeatureLevel as L
from .binary import BinaryDesc, binary
from .comparison import compare_reference, comparison_rows, less


@dataclass(frozen=True)
class ElementWiseLogicalLessThanDesc(BinaryDesc):
    """DML_ELEMENT_WISE_LOGICAL_LESS_THAN_OPERATOR_DESC."""


LOGICAL_LESS_THAN = binary(
    "ELEMENT_WISE_LOGICAL_LESS_THAN", ElementWiseLogicalLessThanDesc, L.FL_1_0,
    comparison_rows(L.FL_1_0), element=less, reference=compare_reference(np.less), python="less",
    in_place=False, output=T.UINT8)
