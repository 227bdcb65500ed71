"""ELEMENT_WISE_BIT_OR: ``f(a, b) = a | b``, the bitwise OR of the two elements' encodings (0b0110 | 0b0011)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..feature_levels import FeatureLevel as L
from .binary import BinaryDesc, binary
from .bitwise import logical, logical_rows


@dataclass(frozen=True)
class ElementWiseBitOrDesc(BinaryDesc):
    """DML_ELEMENT_WISE_BIT_OR_OPERATOR_DESC (the float types of DirectML's 4_1 row are not taken here)."""


BIT_OR = binary(
    "ELEMENT_WISE_BIT_OR", ElementWiseBitOrDesc, L.FL_3_0, logical_rows(),
    element=logical("|"), reference=lambda a, b, p: np.bitwise_or(a, b), python="bit_or")
