"""ELEMENT_WISE_LOGICAL_EQUALS: ``f(a, b) = (a == b)``, 1 for true and 0 for false, into UINT8 or
UINT32; a NaN operand gives 0, -0.0 and +0.0 are equal (docs/semantics.md 9b)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dtypes import DataType as T
from ..feature_levels import FeatureLevel as L
from .binary import BinaryDesc, binary
from .comparison import compare_reference, comparison_rows, equal


@dataclass(frozen=True)
class ElementWiseLogicalEqualsDesc(BinaryDesc):
    """DML_ELEMENT_WISE_LOGICAL_EQUALS_OPERATOR_DESC."""


LOGICAL_EQUALS = binary(
    "ELEMENT_WISE_LOGICAL_EQUALS", ElementWiseLogicalEqualsDesc, L.FL_1_0,
    comparison_rows(L.FL_1_0), element=equal, reference=compare_reference(np.equal), python="equal",
    in_place=False, output=T.UINT8)
