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


def _finite_items(values: np.ndarray) -> list[float] | None:
    """The elements as floats, or None where a NaN or an infinity decides the result."""
    items = [float(v) for v in values.ravel()]
    return None if any(not math.isfinite(v) for v in items) else items


def oracle_sum_square(values: np.ndarray, dtype: type) -> np.generic:
    """SUM_SQUARE: the exact sum of the exact squares rounded once (NaN where one is NaN, else +inf where an element
    is infinite; a zero sum +0.0)."""
    items = _finite_items(values)
    if items is None:
        return dtype(np.nan if np.isnan(values).any() else np.inf)
    exact = sum((Fraction(v) ** 2 for v in items), Fraction(0))
    return dtype(0.0) if exact == 0 else rounded(exact, dtype)


def oracle_l2(values: np.ndarray, dtype: type) -> np.generic:
    """L2: the square root of the exact sum of squares, correctly rounded: the candidate whose neighbours' midpoints
    bracket the root (compared by their squares, as fractions), ties to even."""
    items = _finite_items(values)
    if items is None:
        return dtype(np.nan if np.isnan(values).any() else np.inf)
    exact = sum((Fraction(v) ** 2 for v in items), Fraction(0))
    if exact == 0:
        return dtype(0.0)
    biggest = Fraction(float(np.finfo(dtype).max))
    past = Fraction(2) ** int(np.finfo(dtype).maxexp)
    if exact >= ((biggest + past) / 2) ** 2:  # the midpoint past the largest finite value rounds up (to even)
        return dtype(np.inf)
    with np.errstate(over="ignore"):
        guess = dtype(min(math.sqrt(float(exact)), float(np.finfo(dtype).max)))
    grid = [dtype(0.0)] if guess == 0 else []
    grid += [np.nextafter(guess, dtype(0)), guess, np.nextafter(guess, dtype(np.inf))]
    grid = sorted({float(c) for c in grid if np.isfinite(c)})
    points = [Fraction(c) for c in grid]
    for k, c in enumerate(points):
        low = (points[k - 1] + c) / 2 if k else None
        high = (c + points[k + 1]) / 2 if k + 1 < len(points) else None
        even = bits(dtype(grid[k])) & 1 == 0
        if (low is None or exact > low ** 2 or (exact == low ** 2 and even)) and \
                (high is None or exact < high ** 2 or (exact == high ** 2 and even)):
            return dtype(grid[k])
    raise AssertionError("no candidate brackets the root")


def log_rounded(exact: Fraction, addend: float, dtype: type) -> float:
    """``addend + ln(exact)`` (``exact > 0``) rounded once to ``dtype``: mpmath at 400 bits, the nearest value of
    the type to it (``rounding_oracle``'s comparison of exact distances)."""
    import mpmath

    from tests.rounding_oracle import _nearest

    with mpmath.workprec(400):
        value = mpmath.mpf(addend) + mpmath.log(mpmath.mpf(exact.numerator) / exact.denominator)
        return _nearest(value, dtype)


def oracle_log_sum(values: np.ndarray, dtype: type) -> np.generic:
    """LOG_SUM as documented: ``ln`` of the exact sum, correctly rounded to the type; log(0) is -inf, of a negative
    sum (or of -inf) NaN."""
    items = [float(v) for v in values.ravel()]
    if any(math.isnan(v) for v in items) or -math.inf in items:
        return dtype(np.nan)
    if math.inf in items:
        return dtype(np.inf)
    total = sum((Fraction(v) for v in items), Fraction(0))
    if total <= 0:
        return dtype(-np.inf if total == 0 else np.nan)
    return dtype(log_rounded(total, 0.0, dtype))


def oracle_log_sum_exp(values: np.ndarray, dtype: type) -> np.generic:
    """LOG_SUM_EXP as docs/semantics.md defines it: NaN if an element is NaN; the largest element m where it is
    infinite; else m + ln(S) correctly rounded, S the exact sum of EXP(x - m) (the FLOAT32 difference, EXP correctly
    rounded to FLOAT32: SOFTMAX's steps, by mpmath and fractions)."""
    from tests.rounding_oracle import correctly_rounded
    from tests.softmax_oracle import _largest, _subtract

    items = [float(v) for v in np.asarray(values, np.float32).ravel()]
    if any(math.isnan(v) for v in items):
        return dtype(np.nan)
    m = _largest(items)
    if math.isinf(m):
        return dtype(m)
    terms = [correctly_rounded("EXP", _subtract(v, m), "FLOAT32") for v in items]
    return dtype(log_rounded(sum((Fraction(t) for t in terms), Fraction(0)), m, dtype))


def oracle_product(values: np.ndarray, dtype: type) -> np.generic:
    """MULTIPLY of floats as documented: the pairwise tree over the flattened index (node i of a level the product
    of nodes i and i + ceil(width / 2) below, an odd level's middle node carried up), each product one IEEE double
    multiplication (Python's floats), the root rounded once to the type."""
    level = [float(v) for v in values.ravel()]
    while len(level) > 1:
        half, rest = len(level) // 2, len(level) - len(level) // 2
        level = [level[i] * level[i + rest] for i in range(half)] + level[half:rest]
    with np.errstate(over="ignore"):
        return dtype(level[0])


def oracle_order(values: np.ndarray, largest: bool) -> float:
    """MAX (MIN) as documented: NaN where an element is NaN, else the largest (smallest) with -0.0 below +0.0."""
    items = [float(v) for v in values.ravel()]
    if any(math.isnan(v) for v in items):
        return math.nan
    key = (lambda v: (v, math.copysign(1.0, v)))  # noqa: E731 - the order, -0.0 below +0.0
    return max(items, key=key) if largest else min(items, key=key)
