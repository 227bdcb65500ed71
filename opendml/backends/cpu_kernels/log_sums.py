"""REDUCE's LOG_SUM and LOG_SUM_EXP finish in Numba: ``addend + ln S`` of an exact sum ``S`` held in an
accumulator (``sum_accumulator``'s digits and flags), correctly rounded once: ``opendml.rounded.log_sum``'s steps
(its docstring) on the accumulator's carried digits instead of a Python integer, so both give the same bits.

LOG_SUM first tries a double (``_quick_log``): ``S``'s leading 53 bits, truncated (``d = S (1 - delta)``, ``0 <=
delta < 2**-52``), and ELEMENT_WISE_LOG's ``exponential.log_any`` (within 5 ulps). Where ``d >= 3`` or ``d <= 0.36``,
``|ln S| > 1``, so ``|ln d - ln S| < 1.0001 * 2**-52`` is at most an ulp of the result, and the double lies within 11
ulps of ``ln S`` (an ulp of either binade). Unless it lies within ``NEAR`` (32) ulps of a midpoint of the output
format (ELEMENT_WISE_LOG's test), ``ln S`` is on its side, and the double rounded is the correctly rounded result:
the value the double-double route gives (which is correct wherever ``ln S`` is farther than ``2**-93`` from a
midpoint), so which route a sum takes never shows. Otherwise the double-double route decides.
"""

from __future__ import annotations

import math

import numpy as np

from ...rounded.binary import _add, log_scaled, round_double_double
from ...rounded.log_sum import SQRT2_LEAD
from ...rounded.method import register_for_numba
from .fast_functions.checks import _near
from .fast_functions.exponential import log_any
from .jit import jit
from .sum_accumulator import FLAGS, UNIT, _carry, bit_length
from .sum_rounding import _bits, _magnitude

register_for_numba()  # the double-double steps, compiled where they are called


@jit
def _top(digits):  # type: ignore[no-untyped-def]
    """The position of the highest set bit of the carried digits, -1 for zero."""
    for k in range(digits.shape[0] - 1, -1, -1):
        if digits[k] != 0:
            return 32 * k + bit_length(digits[k]) - 1
    return -1


@jit
def _wide(digits, lo, width):  # type: ignore[no-untyped-def]
    """Bits [lo, lo + width) of the carried digits (width <= 53), the bits below 0 taken as zeros."""
    below = max(-lo, 0)
    lo += below
    width -= below
    if width <= 0:
        return 0
    if width <= 32:
        return _bits(digits, lo, width) << below
    return (_bits(digits, lo, 32) | (_bits(digits, lo + 32, width - 32) << 32)) << below


@jit
def scaled_parts(digits, scratch):  # type: ignore[no-untyped-def]
    """``V > 0`` (carried digits) as ``2**q (1 + t)``: ``q`` and the double-double ``t`` (``log_sum.scaled_parts``)."""
    n = digits.shape[0]
    top = _top(digits)
    q = top if _wide(digits, top - 52, 53) <= SQRT2_LEAD else top + 1
    negative = q != top
    for k in range(n):
        scratch[k] = -digits[k] if negative else digits[k]
    if negative:  # 2**q - V
        scratch[q >> 5] += 1 << (q & 31)
    else:  # V - 2**q: V without its top bit
        scratch[q >> 5] -= 1 << (q & 31)
    _carry(scratch)
    top = _top(scratch)
    if top < 0:
        return q, 0.0, 0.0
    shift = top + 1 - 53
    high = _wide(scratch, shift, 53)
    low_shift = max(shift - 53, 0)
    rest = _wide(scratch, low_shift, shift - low_shift) if shift > 0 else 0
    th = math.ldexp(np.float64(high), shift - q)
    tl = math.ldexp(np.float64(rest), low_shift - q)
    return (q, -th, -tl) if negative else (q, th, tl)


@jit
def log_of_digits(digits, scratch, unit, addend, base, lowest, top):  # type: ignore[no-untyped-def]
    """``addend + ln(V * 2**-unit)`` of carried digits ``V > 0``, rounded once (``log_sum.log_of_integer``)."""
    q, th, tl = scaled_parts(digits, scratch)
    lh, ll = log_scaled(np.float64(q - unit), th, tl)
    h, low = _add(addend, 0.0, lh, ll)
    return round_double_double(h, low, base, lowest, top)


@jit
def _quick_log(digits, top_bit, base, lowest, top):  # type: ignore[no-untyped-def]
    """``ln(V * 2**-UNIT)`` of carried digits ``V > 0`` (top bit ``top_bit``) rounded once from a double, where the
    module's docstring shows that correct; else NaN (the double-double route decides)."""
    d = math.ldexp(np.float64(_wide(digits, top_bit - 52, 53)), top_bit - 52 - UNIT)
    if 0.36 < d < 3.0:
        return np.nan
    y = log_any(d)
    if _near(y, base, lowest):
        return np.nan
    return round_double_double(y, 0.0, base, lowest, top)


@jit
def log_of_sum(acc, digits, scratch, addend, base, lowest, top):  # type: ignore[no-untyped-def]
    """``addend + ln S`` of an accumulator's exact sum ``S`` rounded once, with LOG_SUM's specials: NaN where an
    element is NaN or both infinities occur, or the sum is negative (or -inf); +inf for +inf; -inf for an exact
    zero (``addend`` is 0 or finite)."""
    f = acc.shape[0] - FLAGS
    if acc[f + 0] or acc[f + 2]:
        return np.nan
    if acc[f + 1]:
        return np.inf
    if _magnitude(acc, digits):
        return np.nan
    top_bit = _top(digits)
    if top_bit < 0:
        return -np.inf
    if addend == 0.0:  # LOG_SUM
        quick = _quick_log(digits, top_bit, base, lowest, top)
        if quick == quick:
            return quick
    return log_of_digits(digits, scratch, UNIT, addend, base, lowest, top)


@jit
def _log_rows(accs, base, lowest, top, out):  # type: ignore[no-untyped-def]
    digits = np.zeros(accs.shape[1] - FLAGS + 3, np.int64)
    scratch = np.zeros(accs.shape[1] - FLAGS + 3, np.int64)
    for r in range(accs.shape[0]):
        out[r] = log_of_sum(accs[r], digits, scratch, 0.0, base, lowest, top)


def log_sums(accs: np.ndarray, base: int, lowest: int, top: float, threads: int = 1) -> np.ndarray:
    """LOG_SUM of each accumulator (a row of ``accs``), rounded once to the format (``Precision``'s fields), as
    float64 values that convert to it exactly; the rows shared among up to ``threads`` threads (a logarithm takes
    about half a microsecond)."""
    from .threads import run_tasks

    rows = accs.shape[0]
    out = np.empty(rows, np.float64)
    step = max(-(-rows // max(1, threads)), 256)
    run_tasks(_log_rows, [(accs[r:r + step], base, lowest, top, out[r:r + step]) for r in range(0, rows, step)],
              threads)
    return out
