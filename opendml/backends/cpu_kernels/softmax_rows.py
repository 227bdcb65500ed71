"""SOFTMAX and LOG_SOFTMAX of FLOAT32 rows in Numba: docs/semantics.md 9g's steps, one row at a time, in loops the
compiler turns into vector code.

Per row: the largest element ``m`` (+0.0 above -0.0) and whether a NaN occurs; ``e_i = EXP(x_i - m)``; the exact
sum of the ``e_i`` rounded once to FLOAT32; then ``e_i / S`` (SOFTMAX) or ``(x_i - m) - LOG(S)`` (LOG_SOFTMAX),
each in FLOAT32. The same steps as the NumPy path (``softmax``), so the two give the same bits.

EXP, vectorized
---------------
Every ``d = x_i - m`` is at most 0; ``fast_functions.exp_double`` evaluates it in vector code for
``-104 <= d <= 0`` (below, the exact value is under ``2**-150`` and rounds to +0.0), within 4 ulps
(tests/test_softmax.py measures it against NumPy's, and ``benchmarks/softmax_cpu.py --verify`` checks every FLOAT32
``d`` in ``[-104, 0]`` against ``rounded.EXP_FLOAT32``). The rounding test of ``opendml.rounded.method`` runs on
each result as integer arithmetic; the few results within ``NEAR`` ulps of a midpoint are marked and evaluated
again by ``rounded.EXP_FLOAT32`` (the C library's ``exp`` and the table of hard cases), so every ``e_i`` is EXP's
correctly rounded value.

The exact sum, vectorized
-------------------------
The ``e_i`` are FLOAT32 values in [0, 1], multiples of ``2**-149``. ``S`` is summed by levels (Rump, Ogita and
Oishi's ExtractScalar): with ``2**g > n`` and ``sigma = 1.5 * 2**k``, ``q = (sigma + p) - sigma`` is ``p`` rounded to a
multiple of ``2**(k - 52)`` and ``p - q`` is exact, below ``2**(k - 53)``. A level's ``q``, ``n`` of them, are multiples
of ``2**(k - 52)`` whose every partial sum stays below ``2**(k + 1)``, so they sum exactly in float64 in any order:
``k = g`` at the first level (every ``p <= 1``), ``k - 53 + g`` at each next one (its ``p`` below ``2**(k - 53)``).
Once ``2**(k - 52)`` reaches ``2**-149`` every remainder is on the grid and the level takes it whole. Each level's
float64 sum (exact; summed with reassociation allowed, so in vector lanes) enters REDUCE's accumulator
(``sum_accumulator.add_double``), which rounds the total once (``sum_rounding.finish``). The functions are made
on first use: compiling the rounded functions takes a few seconds, which importing the kernel modules should not
cost.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import numpy as np
from numba import njit

from . import fast_functions, rounded, sum_accumulator, sum_rounding
from .rounded import _bits_float, _double_bits, _float_bits

_FLOAT32 = sum_rounding.FORMATS[np.dtype(np.float32)]
LOG_SOFTMAX = 1  # the kernels' ``log`` flag
BLOCK = 1 << 12  # elements of a row summed level by level at a time (the scratch stays in the L1 and L2 caches)
LOWEST = -104.0  # below, exp(d) < 2**-150: +0.0 in FLOAT32


def _exp_kernels() -> tuple[Any, Any]:
    """``exp_double(d)`` (``fast_functions``: the module's docstring) and ``exp_rows(d_source, m, out)``."""
    exp32 = rounded.EXP_FLOAT32
    exp_double, near = fast_functions.exp_double, fast_functions.near_float32

    @njit(nogil=True)
    def exp_rows(x, m, out):  # type: ignore[no-untyped-def]
        """out[i] = EXP(x[i] - m) correctly rounded (FLOAT32); returns how many were marked and done again."""
        n = x.shape[0]
        for i in range(n):
            d = np.float64(x[i] - m)  # the FLOAT32 difference, then exactly widened
            y = exp_double(max(d, LOWEST))
            e = np.float32(np.nan) if near(y) else np.float32(y)
            out[i] = np.float32(0.0) if d < LOWEST else e
        marked = 0
        for i in range(n):
            if out[i] != out[i]:
                out[i] = exp32(x[i] - m)
                marked += 1
        return marked

    return exp_double, exp_rows


@njit(nogil=True, fastmath={"reassoc"})
def _sum(values, n):  # type: ignore[no-untyped-def]
    """The float64 sum of ``values[:n]`` in any order (exact for every level's values: the module's docstring)."""
    s = 0.0
    for i in range(n):
        s += values[i]
    return s


@njit(nogil=True)
def _extract(p, q, n, sigma):  # type: ignore[no-untyped-def]
    """q = p rounded to sigma's grid (``(sigma + p) - sigma``: no reassociation here), p = the exact remainder;
    returns whether any remainder is nonzero."""
    rest = 0
    for i in range(n):
        t = (sigma + p[i]) - sigma
        q[i] = t
        p[i] = p[i] - t
        rest |= _double_bits(p[i]) << 1  # an integer reduction (it vectorizes); the sign shifted out
    return rest != 0


@njit(nogil=True)
def exact_sum_levels(e, acc, p, q):  # type: ignore[no-untyped-def]
    """acc += the exact sum of the FLOAT32 values ``e`` (each in [0, 1]), by levels of ExtractScalar."""
    n = e.shape[0]
    g = 1
    while (1 << g) <= n:
        g += 1
    for j0 in range(0, n, p.shape[0]):
        j1 = min(j0 + p.shape[0], n)
        count = j1 - j0
        for i in range(count):
            p[i] = np.float64(e[j0 + i])
        k = g
        while True:
            if k - 52 <= -sum_accumulator.UNIT:  # the grid is finer than the elements': the level takes them whole
                s = _sum(p, count)
                if s != 0.0:
                    sum_accumulator.add_double(acc, s, sum_accumulator.UNIT)
                break
            more = _extract(p, q, count, 1.5 * 2.0**k)
            s = _sum(q, count)
            if s != 0.0:
                sum_accumulator.add_double(acc, s, sum_accumulator.UNIT)
            if not more:
                break
            k = k - 53 + g


@njit(nogil=True)
def largest(row):  # type: ignore[no-untyped-def]
    """The row's largest element (+0.0 above -0.0) and whether it holds a NaN: the largest of integer keys
    ordered as the numbers (a float's bits, the magnitude's reversed where the sign is set: -0.0 just below
    +0.0), which vectorizes where a float maximum cannot without fast-math. The key of a NaN does not matter:
    its row is NaN throughout."""
    top = np.int32(-(1 << 31))
    nan = 0
    for i in range(row.shape[0]):
        v = row[i]
        bits = np.int32(_float_bits(v))
        key = bits ^ ((bits >> np.int32(31)) & np.int32(0x7FFFFFFF))
        top = max(top, key)
        nan |= v != v
    bits = top ^ ((top >> np.int32(31)) & np.int32(0x7FFFFFFF))
    return _bits_float(np.uint32(bits)), nan != 0


@cache
def row_kernel() -> Any:
    """``rows(x, out, log)``: each row of the 2-D FLOAT32 ``x`` (rows contiguous) normalized into ``out``."""
    exp_rows = exp_float32()
    log_ = rounded.LOG_FLOAT32
    finish = sum_rounding.finish
    words, digit_count = sum_accumulator.WORDS, sum_accumulator.DIGITS + 3
    precision, base, inf_bits, nan_bits, sign_bit = _FLOAT32

    @njit(nogil=True)
    def rows(x, out, log):  # type: ignore[no-untyped-def]
        acc = np.zeros(words, np.int64)
        digits = np.zeros(digit_count, np.int64)
        p = np.empty(BLOCK, np.float64)
        q = np.empty(BLOCK, np.float64)
        n = x.shape[1]
        for r in range(x.shape[0]):
            row = x[r]
            o = out[r]
            m, nan = largest(row)
            if nan or math.isinf(m) or n == 0:
                for i in range(n):
                    o[i] = np.float32(np.nan)
                continue
            exp_rows(row, m, o)
            acc[:] = 0
            acc[sum_accumulator.NONNEG] = 1  # the largest element's e is 1: the sum is positive
            exact_sum_levels(o, acc, p, q)
            s = _bits_float(np.uint32(finish(acc, n, False, precision, base, inf_bits, nan_bits, sign_bit, digits)))
            if log == LOG_SOFTMAX:
                ls = log_(s)
                for i in range(n):
                    o[i] = (row[i] - m) - ls
            else:
                for i in range(n):
                    o[i] = o[i] / s

    return rows


@cache
def exp_double() -> Any:
    """The vectorizable double ``exp`` (for tests and the verification tool)."""
    return _exp_kernels()[0]


@cache
def exp_float32() -> Any:
    """``out[i] = EXP(x[i] - m)`` correctly rounded, the rows' way (for tests and the verification tool)."""
    return _exp_kernels()[1]
