"""The exact sums' rounding: an accumulator of ``sum_accumulator`` (its digits and specials' flags) rounded once to
FLOAT32 or FLOAT16 bits (``finish``, ``FORMATS``).

The rounding
------------
``finish`` carries the digits, takes ``V``'s sign and magnitude, and rounds ``|V| * 2**-149`` once, to nearest
with ties to even, to a format of ``P`` significant bits whose smallest ulp is ``2**-149 * 2**base`` (FLOAT32:
``P = 24, base = 0``; FLOAT16: ``P = 11, base = 125``): below ``2**(base + P)`` the format's bits are ``|V|``
shifted right by ``base`` (subnormals and the first binade share one ulp); above, the top ``P`` bits shifted
by ``s`` are placed at exponent field ``s - base + 1``: ``bits = ((s - base) << (P - 1)) + q``, so a rounding
carry steps into the next binade, and past the largest finite value into infinity. AVERAGE divides the
digits (scaled by ``2**64`` first, so that the quotient keeps 64 bits below the smallest ulp) by the count,
and a nonzero remainder joins the sticky bit: the exact quotient rounded once.

Specials: NaN where any element is NaN or both infinities occur (the canonical quiet NaN); else an infinity
where one occurs; else the rounded sum. An exact zero is +0.0 unless every element was -0.0 (as IEEE
addition in round-to-nearest gives: ``-0.0 + -0.0 = -0.0``, ``x + -x = +0.0``); a nonzero sum too small for the
format rounds to a zero of its sign.

The accumulator, and why its blocks' float64 sums are exact, is in ``sum_accumulator``; the sums that fill it in
``sums`` (rows), ``sum_columns`` and ``sum_halves`` (FLOAT16 rows).
"""

from __future__ import annotations

import numpy as np

from .jit import jit
from .sum_accumulator import FLAGS, UNIT, _carry, bit_length


@jit
def _magnitude(acc, digits):  # type: ignore[no-untyped-def]
    """``|V|`` carried into ``digits`` (each in [0, 2**32)); returns V's sign (1: negative)."""
    n = digits.shape[0]
    m = acc.shape[0] - FLAGS
    for k in range(n):
        digits[k] = acc[k] if k < m else 0
    _carry(digits)
    negative = 0
    if digits[n - 1] < 0:
        negative = 1
        for k in range(n):
            digits[k] = -digits[k]
        _carry(digits)
    return negative


@jit
def _bits(digits, lo, width):  # type: ignore[no-untyped-def]
    """Bits [lo, lo + width) of the carried digits (each in [0, 2**32); width <= 32)."""
    k = lo >> 5
    r = lo & 31
    n = digits.shape[0]
    out = digits[k] >> r if k < n else 0
    if r and k + 1 < n:
        out |= (digits[k + 1] & ((1 << r) - 1)) << (32 - r)
    return out & ((1 << width) - 1)


@jit
def _any_below(digits, p):  # type: ignore[no-untyped-def]
    """Whether a bit below position ``p`` is set."""
    k = p >> 5
    for j in range(min(k, digits.shape[0])):
        if digits[j] != 0:
            return True
    return k < digits.shape[0] and (digits[k] & ((1 << (p & 31)) - 1)) != 0


@jit
def _round(digits, sticky, precision, base):  # type: ignore[no-untyped-def]
    """The format's bits (sign apart) of ``|V|`` (carried digits, units 2**-149 * 2**-... see ``finish``)
    rounded to nearest even; ``sticky``: nonzero bits below the digits."""
    top = -1
    for k in range(digits.shape[0] - 1, -1, -1):
        if digits[k] != 0:
            top = 32 * k + bit_length(digits[k]) - 1
            break
    if top < 0:
        return 0, sticky
    s = max(top - (precision - 1), base)
    q = _bits(digits, s, min(precision, 32))
    half = _bits(digits, s - 1, 1) if s >= 1 else 0
    rest = sticky or (s >= 1 and _any_below(digits, s - 1))
    if half and (rest or (q & 1)):
        q += 1
    return ((s - base) << (precision - 1)) + q, True


@jit
def finish(acc, count, average, precision, base, inf_bits, nan_bits, sign_bit, digits):  # type: ignore[no-untyped-def]
    """The format's bits of the accumulated sum (``average``: divided by ``count``), rounded once
    (``digits``: scratch of the accumulator's digits and 3 more int64; ``base`` counted in its unit)."""
    f = acc.shape[0] - FLAGS  # the flags' words follow the digits
    if acc[f + 0] or (acc[f + 1] and acc[f + 2]):
        return nan_bits
    if acc[f + 1]:
        return inf_bits
    if acc[f + 2]:
        return inf_bits | sign_bit
    negative = _magnitude(acc, digits)
    sticky = False
    b = base
    top = digits.shape[0] - 1
    if average:  # |V| * 2**64 // count, the remainder sticky: units 2**-(unit + 64)
        for k in range(top, 1, -1):
            digits[k] = digits[k - 2]
        digits[0] = 0
        digits[1] = 0
        r = 0
        high = top
        while high > 0 and digits[high] == 0:  # zero digits above the highest: zero quotient digits, no remainder
            high -= 1
        for k in range(high, -1, -1):
            cur = (r << 32) | digits[k]
            digits[k] = cur // count
            r = cur - digits[k] * count
        sticky = r != 0
        b = base + 64
    bits, nonzero = _round(digits, sticky, precision, b)
    if bits >= inf_bits:
        bits = inf_bits
    if negative or (not nonzero and not acc[f + 3]):  # a negative sum, or every element -0.0
        bits |= sign_bit
    return bits


FORMATS = {  # output numpy dtype: precision, base, inf bits, NaN bits, sign bit
    np.dtype(np.float32): (24, 0, 0x7F800000, 0x7FC00000, 0x80000000),
    np.dtype(np.float16): (11, 125, 0x7C00, 0x7E00, 0x8000),
}


@jit
def _finish_rows(accs, out, count, average, precision, base, inf_bits, nan_bits, sign_bit):  # type: ignore[no-untyped-def]
    digits = np.zeros(accs.shape[1] - FLAGS + 3, np.int64)
    for r in range(accs.shape[0]):
        out[r] = finish(accs[r], count, average, precision, base, inf_bits, nan_bits, sign_bit, digits)


FINISH_SHARE = 256  # accumulators a thread rounds at least (about 0.1 microsecond each)


def _finished(accs: np.ndarray, count: int, average: bool, out_dtype: np.dtype, unit: int = UNIT,
              threads: int = 1) -> np.ndarray:
    """The accumulators ``accs`` (units ``2**-unit``) rounded once to ``out_dtype``, shared among up to ``threads``
    threads in shares of at least ``FINISH_SHARE``."""
    from .threads import run_tasks

    precision, base, inf_bits, nan_bits, sign_bit = FORMATS[np.dtype(out_dtype)]
    rows = accs.shape[0]
    bits = np.zeros(rows, np.int64)
    step = max(-(-rows // max(1, threads)), FINISH_SHARE)
    run_tasks(_finish_rows, [(accs[r:r + step], bits[r:r + step], count, average, precision, base + unit - UNIT,
                              inf_bits, nan_bits, sign_bit) for r in range(0, rows, step)], threads)
    unsigned = np.uint32 if np.dtype(out_dtype).itemsize == 4 else np.uint16
    return bits.astype(unsigned).view(out_dtype)
