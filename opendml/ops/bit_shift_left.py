"""ELEMENT_WISE_BIT_SHIFT_LEFT: ``f(a, b) = a << b``, the bits of a moved b places toward the most significant,
zeros shifted in; a count b of the width or more gives 0 (docs/semantics.md 9b)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..feature_levels import FeatureLevel as L
from .binary import BinaryDesc, binary
from .bitwise import shift, shift_reference, shift_rows


@dataclass(frozen=True)
class ElementWiseBitShiftLeftDesc(BinaryDesc):
    """DML_ELEMENT_WISE_BIT_SHIFT_LEFT_OPERATOR_DESC."""


BIT_SHIFT_LEFT = binary(
    "ELEMENT_WISE_BIT_SHIFT_LEFT", ElementWiseBitShiftLeftDesc, L.FL_2_1, shift_rows(),
    element=shift("<<"), reference=shift_reference(np.left_shift), python="bit_shift_left")
