"""ELEMENT_WISE_IS_INFINITY: ``f(x) = 1`` for the infinities InfinityMode names (either, +inf, -inf), else 0."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS
from ..dtypes import DataType as T
from ..enums import IsInfinityMode as M
from ..feature_levels import FeatureLevel as L
from ..schema import SupportRow
from .unary import Constants, UnaryDesc, UnaryParams, enum_parameter, unary


@dataclass(frozen=True)
class ElementWiseIsInfinityDesc(UnaryDesc):
    """DML_ELEMENT_WISE_IS_INFINITY_OPERATOR_DESC."""

    infinity_mode: M | str | int


def _is_infinity(v: ex.Expr, p: UnaryParams, c: Constants) -> ex.Expr:
    mode, largest = p["InfinityMode"], float(np.finfo(np.float32).max)
    positive, negative = c.out(int(mode is not M.NEGATIVE)), c.out(int(mode is not M.POSITIVE))
    return ex.Select(ex.Less(c(largest), v), positive, ex.Select(ex.Less(v, c(-largest)), negative, c.out(0)))


def _reference(v: np.ndarray, p: UnaryParams) -> np.ndarray:
    mode = p["InfinityMode"]
    return np.isinf(v) & ((v > 0) if mode is M.POSITIVE else (v < 0) if mode is M.NEGATIVE else True)


_TYPES = {"InputTensor": FLOATS, "OutputTensor": frozenset({T.UINT8})}

IS_INFINITY = unary(
    "ELEMENT_WISE_IS_INFINITY", ElementWiseIsInfinityDesc, L.FL_2_1,
    (SupportRow(L.FL_3_0, (1, 8), _TYPES), SupportRow(L.FL_2_1, (4, 4), _TYPES)),
    element=_is_infinity, reference=_reference, python="is_infinity", output=T.UINT8,
    fields=(enum_parameter("InfinityMode", M, "DML_IS_INFINITY_MODE_", M.EITHER),))
