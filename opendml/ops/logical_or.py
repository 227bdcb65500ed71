"""ELEMENT_WISE_LOGICAL_OR: ``f(a, b) = a || b``, any nonzero element true, 1 for true and 0 for false, over
UINT8 or UINT32 tensors of one type."""

from __future__ import annotations

from dataclasses import dataclass

from ..feature_levels import FeatureLevel as L
from .binary import BinaryDesc, binary
from .comparison import logical, logical_reference, logical_rows


@dataclass(frozen=True)
class ElementWiseLogicalOrDesc(BinaryDesc):
    """DML_ELEMENT_WISE_LOGICAL_OR_OPERATOR_DESC."""


LOGICAL_OR = binary(
    "ELEMENT_WISE_LOGICAL_OR", ElementWiseLogicalOrDesc, L.FL_1_0, logical_rows(),
    element=logical("or"), reference=logical_reference("or"), python="logical_or")
