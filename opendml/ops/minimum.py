"""ELEMENT_WISE_MIN: ``f(a, b) = min(a, b)``. Floats as IEEE 754-2019's minimumNumber: a NaN operand gives the
other (HLSL's ``min``; NaN only when both are), and -0.0 is less than +0.0; the result is one operand's bits."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..feature_levels import FeatureLevel as L
from .binary import BinaryDesc, binary, by_kind, min_max_rows, reference_by_kind


@dataclass(frozen=True)
class ElementWiseMinDesc(BinaryDesc):
    """DML_ELEMENT_WISE_MIN_OPERATOR_DESC."""


def pick(a: ex.Expr, b: ex.Expr, smaller: bool) -> ex.Expr:
    """The smaller (or larger) of two FLOAT32 values: the strictly ordered one; else, of two numbers that compare
    equal, the one whose sign bit says -0.0 (+0.0 for the larger); else the operand that is a number (b if none)."""
    b_wins, a_wins = (ex.Less(b, a), ex.Less(a, b)) if smaller else (ex.Less(a, b), ex.Less(b, a))
    tie = ex.Select(ex.SignBit(a), a, b) if smaller else ex.Select(ex.SignBit(a), b, a)
    numbers = ex.Select(ex.IsNumber(a), ex.Select(ex.IsNumber(b), tie, a), b)
    return ex.Select(b_wins, b, ex.Select(a_wins, a, numbers))


def pick_reference(a: np.ndarray, b: np.ndarray, smaller: bool) -> np.ndarray:
    """``pick`` over arrays."""
    a, b = np.broadcast_arrays(a, b)
    ordered = (b < a) if smaller else (a < b)
    tie = np.where(np.signbit(a) == smaller, a, b)
    either = np.where(np.isnan(a), b, np.where(np.isnan(b), a, tie))
    return np.where(ordered, b, np.where((a < b) if smaller else (b < a), a, either))


MIN = binary(
    "ELEMENT_WISE_MIN", ElementWiseMinDesc, L.FL_1_0, min_max_rows(),
    element=by_kind(lambda a, b, p, c: pick(a, b, True), lambda a, b, p, c: ex.Select(ex.Less(b, a), b, a)),
    reference=reference_by_kind(lambda a, b, p: pick_reference(a, b, True), lambda a, b, p: np.minimum(a, b)),
    python="minimum")
