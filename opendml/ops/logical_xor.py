"""ELEMENT_WISE_LOGICAL_XOR: ``f(a, b) = (!!a) != (!!b)``, any nonzero element true, 1 for true and 0 for false, over
UINT8 or UINT32 tensors of one type."""

from __future__ import annotations

from dataclasses import dataclass

from ..feature_levels import FeatureLevel as L
from .binary import BinaryDesc, binary
from .comparison import logical, logical_reference, logical_rows


@dataclass(frozen=True)
class ElementWiseLogicalXorDesc(BinaryDesc):
    """DML_ELEMENT_WISE_LOGICAL_XOR_OPERATOR_DESC."""


LOGICAL_XOR = binary(
    "ELEMENT_WISE_LOGICAL_XOR", ElementWiseLogicalXorDesc, L.FL_1_0, logical_rows(),
    element=logical("xor"), reference=logical_reference("xor"), python="logical_xor")
