"""ELEMENT_WISE_BIT_XOR: ``f(a, b) = a ^ b``, the bitwise exclusive OR of the two elements' encodings
(0b0110 ^ 0b0011)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..feature_levels import FeatureLevel as L
from .binary import BinaryDesc, binary
from .bitwise import logical, logical_rows


@dataclass(frozen=True)
class ElementWiseBitXorDesc(BinaryDesc):
    """DML_ELEMENT_WISE_BIT_XOR_OPERATOR_DESC (the float types of DirectML's 4_1 row are not taken here)."""


BIT_XOR = binary(
    "ELEMENT_WISE_BIT_XOR", ElementWiseBitXorDesc, L.FL_3_0, logical_rows(),
    element=logical("^"), reference=lambda a, b, p: np.bitwise_xor(a, b), python="bit_xor")
