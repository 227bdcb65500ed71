"""ELEMENT_WISE_BIT_COUNT: ``f(x)`` = the number of bits set in the element's encoding (0b0001111011 -> 6)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import INTEGERS_32, INTEGERS_64
from ..dtypes import DataType as T
from ..feature_levels import FeatureLevel as L
from ..schema import SupportRow
from .unary import UnaryDesc, unary


@dataclass(frozen=True)
class ElementWiseBitCountDesc(UnaryDesc):
    """DML_ELEMENT_WISE_BIT_COUNT_OPERATOR_DESC (the float types of DirectML's 4_1 row, counted in their encoding,
    are not taken here)."""


def _reference(v: np.ndarray, p: object) -> np.ndarray:
    bits = v.view(f"u{v.itemsize}")  # the encoding, whatever the sign
    one = bits.dtype.type(1)
    return np.asarray(np.sum([(bits >> bits.dtype.type(k)) & one for k in range(8 * v.itemsize)], axis=0,
                             dtype=np.uint8))


_OUT = frozenset({T.UINT32, T.UINT8})

BIT_COUNT = unary(
    "ELEMENT_WISE_BIT_COUNT", ElementWiseBitCountDesc, L.FL_3_0, (
        SupportRow(L.FL_4_1, (1, 8), {"InputTensor": INTEGERS_32 | INTEGERS_64, "OutputTensor": _OUT}),
        SupportRow(L.FL_3_0, (1, 8), {"InputTensor": frozenset({T.UINT32, T.UINT16, T.UINT8}), "OutputTensor": _OUT})),
    element=lambda v, p, c: ex.Widen(ex.BitCount(v), p.output),
    reference=_reference,
    python="bit_count", output=T.UINT8)
