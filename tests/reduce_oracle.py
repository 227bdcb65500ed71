"""REDUCE's oracle: exact sums by fractions.Fraction, rounded to the output type by comparing the neighbours
of a guess (never opendml's accumulator or its rounding)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np


def bits(value: np.generic) -> int:
    return int(np.asarray(value).view(f"u{np.asarray(value).itemsize}"))


def rounded(exact: Fraction, dtype: type) -> np.generic:
    """``exact`` rounded to nearest, ties to even, in ``dtype`` (overflow to inf at the midpoint past max)."""
    biggest = np.finfo(dtype).max
    top = Fraction(float(biggest)) + Fraction(2) ** np.finfo(dtype).maxexp / 2 - Fraction(float(biggest)) / 2
    if abs(exact) >= top:
        return dtype(math.copysign(math.inf, exact))
    guess = dtype(float(exact)) if abs(exact) < Fraction(float(biggest)) else biggest * (1 if exact > 0 else -1)
    with np.errstate(over="ignore"):
        candidates = [np.nextafter(guess, dtype(-np.inf)), guess, np.nextafter(guess, dtype(np.inf))]
    candidates = [c for c in candidates if np.isfinite(c)]
    best = min(candidates, key=lambda c: (abs(Fraction(float(c)) - exact), bits(c) & 1))
    if best == 0:
        return dtype(math.copysign(0.0, exact))
    return best


def oracle_sum(values: np.ndarray, dtype: type, divide: bool = False, absolute: bool = False) -> np.generic:
    """The exact sum (AVERAGE: quotient) rounded once, with IEEE's NaN and infinity rules; all -0.0: -0.0."""
    items = [abs(float(v)) if absolute else float(v) for v in values.ravel()]
    if any(math.isnan(v) for v in items) or (math.inf in items and -math.inf in items):
        return dtype(np.nan)
    if math.inf in items or -math.inf in items:
        return dtype(math.inf if math.inf in items else -math.inf)
    exact = sum((Fraction(v) for v in items), Fraction(0))
    if exact == 0:
        negative = all(v == 0 and math.copysign(1, v) < 0 for v in items)
        return dtype(-0.0 if negative else 0.0)
    if divide:
        exact /= len(items)
    return rounded(exact, dtype)
