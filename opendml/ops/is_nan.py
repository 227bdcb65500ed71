"""ELEMENT_WISE_IS_NAN: ``f(x) = 1 if x is NaN else 0``, into UINT8 or UINT32."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS
from ..dtypes import DataType as T
from ..feature_levels import FeatureLevel as L
from ..schema import SupportRow
from .unary import UnaryDesc, unary


@dataclass(frozen=True)
class ElementWiseIsNanDesc(UnaryDesc):
    """DML_ELEMENT_WISE_IS_NAN_OPERATOR_DESC."""


_TYPES = {"InputTensor": FLOATS, "OutputTensor": frozenset({T.UINT32, T.UINT8})}

IS_NAN = unary(
    "ELEMENT_WISE_IS_NAN", ElementWiseIsNanDesc, L.FL_2_0,
    (SupportRow(L.FL_3_0, (1, 8), _TYPES), SupportRow(L.FL_2_0, (4, 4), _TYPES)),
    element=lambda v, p, c: ex.Select(ex.IsNumber(v), c.out(0), c.out(1)),
    reference=lambda v, p: np.isnan(v),
    python="is_nan", output=T.UINT8)
