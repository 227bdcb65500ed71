"""ELEMENT_WISE_BIT_SHIFT_RIGHT: ``f(a, b) = a >> b``, the bits of a moved b places toward the least significant,
zeros shifted in (a logical shift, as the page says); a count b of the width or more gives 0 (docs/semantics.md
9b)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..feature_levels import FeatureLevel as L
from .binary import BinaryDesc, binary
from .bitwise import shift, shift_reference, shift_rows


@dataclass(frozen=True)
class ElementWiseBitShiftRightDesc(BinaryDesc):
    """DML_ELEMENT_WISE_BIT_SHIFT_RIGHT_OPERATOR_DESC."""


BIT_SHIFT_RIGHT = binary(
    "ELEMENT_WISE_BIT_SHIFT_RIGHT", ElementWiseBitShiftRightDesc, L.FL_2_1, shift_rows(),
    element=shift(">>"), reference=shift_reference(np.right_shift), python="bit_shift_right")
