"""REDUCE LOG_SUM_EXP of FLOAT32 (FLOAT16 through its exact FLOAT32 copy): the reference's definition, compiled.

The definition (docs/semantics.md, REDUCE): a row holding a NaN gives NaN; else with ``m`` its largest element, an
infinite ``m`` is the answer (+inf, or -inf where every element is -inf); else ``m + log(S)``, where ``S`` is the
float64 nearest the exact sum of the float64 values ``exp(x - m)`` (``x - m`` and ``exp`` in float64, the
platform's ``exp`` and ``log``), rounded once more to the output type.

The same bits here: ``x - m`` is the same float64 subtraction, and ``math.exp``/``math.log`` compile to calls of
the C library's ``exp``/``log``, the functions Python's ``math`` calls (the loop that calls ``exp`` also scatters
into the accumulator, so it is never vectorised into another library's approximation). The sum is exact: every
float64 is an integer multiple of ``2**-1074``, and each ``exp(x - m)`` is at most 1 (``x <= m``), so a row's sum
is an integer below ``2**(1074 + 35)`` in units of ``2**-1074`` for rows below ``2**35`` elements, kept in
``DIGITS`` int64 digits of base ``2**32`` (``sum_accumulator``'s layout, its flags' words unused). A digit gains
less than ``2**34`` per addition; the digits are carried every ``CARRY`` elements, far below the ``2**29``
additions a digit holds. ``S >= 1`` (the largest element's term is ``exp(0) = 1``), so its float64 is normal:
the digits' top 53 bits, rounded to nearest with ties to even on the bits below, as ``math.fsum`` rounds the
exact sum.
"""

from __future__ import annotations

import math

import numpy as np

from .jit import jit
from .sum_accumulator import FLAGS, _carry, double_bits
from .sum_rounding import _any_below, _bit_length, _bits, _magnitude

UNIT = 1074  # the accumulator's unit: 2**-1074, float64's smallest subnormal
DIGITS = 37  # 1184 bits: 2**-1074 .. 1 (bits 0 .. 1074), 2**35 terms and headroom for carries
WORDS = DIGITS + FLAGS
CARRY = 1 << 24  # elements between two carries of the digits
MASK = (1 << 32) - 1


@jit
def _add(acc, s):  # type: ignore[no-untyped-def]
    """acc += s, exactly: ``s`` a positive float64 at most 1 (subnormal or normal)."""
    b = double_bits(s)
    e = b >> 52
    m = b & ((1 << 52) - 1)
    if e:
        m |= 1 << 52
    sh = max(e, 1) - 1  # s = m * 2**(max(e, 1) - 1075) = m << sh units of 2**-1074
    k = sh >> 5
    r = sh & 31
    t0 = (m & MASK) << r  # < 2**63
    t1 = (m >> 32) << r  # < 2**52
    acc[k] += t0 & MASK
    acc[k + 1] += (t0 >> 32) + (t1 & MASK)
    acc[k + 2] += t1 >> 32


@jit
def _nearest(acc, digits):  # type: ignore[no-untyped-def]
    """The float64 nearest the accumulated sum (at least 1: a normal float64), ties to even."""
    _magnitude(acc, digits)
    top = -1
    for k in range(digits.shape[0] - 1, -1, -1):
        if digits[k] != 0:
            top = 32 * k + _bit_length(digits[k]) - 1
            break
    s = top - 52  # the lowest bit kept: 53 significant bits (top >= 1074)
    q = _bits(digits, s, 32) | (_bits(digits, s + 32, 21) << 32)
    if _bits(digits, s - 1, 1) and ((q & 1) or _any_below(digits, s - 1)):
        q += 1  # a carry to 2**53 is still exact
    return math.ldexp(np.float64(q), s - UNIT)


@jit
def _row(x, acc, digits):  # type: ignore[no-untyped-def]
    """LOG_SUM_EXP of one row, in float64 (the output type rounds it once more)."""
    m = -np.inf
    for i in range(x.shape[0]):
        v = np.float64(x[i])
        if v != v:
            return np.nan
        m = max(m, v)
    if math.isinf(m):
        return m
    acc[:] = 0
    n = x.shape[0]
    for i0 in range(0, n, CARRY):
        for i in range(i0, min(n, i0 + CARRY)):
            t = math.exp(np.float64(x[i]) - m)
            if t != 0.0:
                _add(acc, t)
        _carry(acc[:DIGITS])
    return m + math.log(_nearest(acc, digits))


@jit
def _rows_task(x, r0, r1, out):  # type: ignore[no-untyped-def]
    acc = np.zeros(WORDS, np.int64)
    digits = np.zeros(DIGITS + 3, np.int64)
    for r in range(r0, r1):
        out[r] = _row(x[r], acc, digits)


def log_sum_exp_rows(x: np.ndarray, threads: int) -> np.ndarray:
    """LOG_SUM_EXP of each row of ``x`` (2-D FLOAT32, rows contiguous, each of at least one element and below
    ``2**35``) in float64, the rows shared among up to ``threads`` threads."""
    from .threads import run_tasks

    rows = x.shape[0]
    out = np.empty(rows, np.float64)
    step = -(-rows // max(1, min(threads, rows)))
    run_tasks(_rows_task, [(x, r0, min(rows, r0 + step), out) for r0 in range(0, rows, step)], threads)
    return out
