"""ELEMENT_WISE_ADD: ``f(a, b) = a + b``; floats rounded once (in float32, FLOAT16 rounded again on store),
integers wrapping as two's complement does (SPEC 11.3)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS, INTEGERS_32, INTEGERS_64
from ..feature_levels import FeatureLevel as L
from .binary import BinaryDesc, arithmetic_rows, binary, without, wrapping
from .unary import Constants, UnaryParams


@dataclass(frozen=True)
class ElementWiseAddDesc(BinaryDesc):
    """DML_ELEMENT_WISE_ADD_OPERATOR_DESC."""


def _add(a: ex.Expr, b: ex.Expr, p: UnaryParams, c: Constants) -> ex.Expr:
    return ex.Add(a, b) if p.data_type.is_float else wrapping(ex.Add)(a, b, p, c)


def _reference(a: np.ndarray, b: np.ndarray, p: UnaryParams) -> np.ndarray:
    if p.data_type.is_float:
        return np.add(a, b, dtype=np.float32)
    return a.astype(np.int64) + b.astype(np.int64)  # exact; the cast to the type wraps it


# INT64 and UINT64 (the 5_1 and 4_1 rows) wait for a wrapping 64-bit sum: the nodes have no wider type.
ADD = binary(
    "ELEMENT_WISE_ADD", ElementWiseAddDesc, L.FL_1_0,
    without(arithmetic_rows(L.FL_5_1, FLOATS | INTEGERS_32 | INTEGERS_64), INTEGERS_64),
    element=_add, reference=_reference, python="add")
