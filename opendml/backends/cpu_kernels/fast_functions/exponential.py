"""Exponentials and logarithms.

EXP
---
For ``-103 < d < 88`` (else redo: beyond, the result is an infinity, 0 or a subnormal near the bottom, which
the exact path gives): ``k`` = the integer nearest ``d * 64 / ln 2`` (``|k| < 2**14``), ``r = (d - k * L1) - k *
L2`` with ``L1 + L2 = ln 2 / 64`` (``L1`` of 38 significant bits, so ``k * L1`` is exact and ``d - k * L1`` is
exact by Sterbenz's lemma), ``|r| <= ln 2 / 128``; ``exp(r) - 1`` by its Taylor polynomial to ``r**6 / 720`` (the
first term left out is below ``2**-60``), times ``2**(j / 64)`` from a table (each entry the double nearest, from
a 60-digit decimal), times ``2**(k >> 6)`` (exact). The steps are fused multiply-adds (``checks.fma``: one
rounding each where the written-out form has two; one core, in cache, 0.72 -> 0.48 ns an element). Within 4 ulps
(tests: against NumPy's double ``exp``; ``benchmarks/rounding.py --against-exact``: every FLOAT32 input).

LOG
---
For ``0 < d < inf`` (else redo): ``d = 2**e * m`` (a FLOAT32's value is a normal double), ``m`` in [1, 2) with 24
significant bits; ``m >= 1.5`` is halved (``e + 1``), so ``m`` is in [0.75, 1.5) and no result near 0 comes from
cancelling terms. ``j`` = the top 7 bits of ``d``'s fraction; ``c_j`` = the reciprocal of the middle of ``m``'s
interval rounded to 29 significant bits, 1 exactly for the two intervals beside 1; ``r = m * c_j - 1`` is exact
(24 + 29 significant bits, and Sterbenz's lemma), ``|r| < 2**-7``; ``log1p(r)`` by its Taylor polynomial to
``r**9 / 9`` (the first term left out below ``2**-66 |r|``); ``log(d) = (e * LN2_HI + T_j) + (log1p(r) + (e * LN2_LO
+ U_j))`` with ``LN2_HI`` of 44 significant bits (``e * LN2_HI`` exact), ``T_j + U_j = -log(c_j)`` to 106 bits. Where
``e`` and ``j`` are not both 0's, ``|log(d)| >= 0.0039`` and each term is below 3 times it. Within 4 ulps (tests:
against NumPy's double ``log``).

Of any positive normal double (the inverse hyperbolic functions' arguments), ``m = high + low`` with ``high``
its first 24 significant bits: ``r = (high * c_j - 1) + low * c_j``, the first term exact as above, ``|low| <
2**-23``, so ``r`` is rounded once, relatively (for a FLOAT32's ``d``, ``low`` is 0 and ``r`` the same bits):
within 5 ulps.

LOG AS A DOUBLE-DOUBLE (``log_double_double``, POW's): the same ``e``, ``j`` and exact ``r``, the sum kept as
``hi + lo``: ``e * LN2_HI + T_j`` (Fast2Sum: ``|e * LN2_HI| >= |T_j|`` or ``e = 0``) and ``r`` (TwoSum) exactly,
the rest (``q = log1p(r) - r`` by the same polynomial, ``e * LN2_LO + U_j``, the two sums' errors) in ``lo``. ``|q|
<= r**2 / 2 (1 + 2**-6) < 2**-15``, computed within 3 of its ulps: an absolute error below ``2**-66``, the rest's
roundings below ``2**-68``. Where ``e`` and ``j`` are not both 0's (nor ``j`` the other interval beside 1),
``|log(d)| >= 0.0039``: within ``2**-57`` relatively; where they are, ``log(d) = r + q`` with ``|q| <= 2**-8 |r|``:
within ``2**-59``.

LOG1P (``log1p_double``, for ``w >= 0``): ``u = 1 + w`` rounded and the part lost, ``lost = 1 + w - u`` exactly
(Fast2Sum, the larger term first); ``log(1 + w) = log(u) + log(1 + lost / u)``, and ``|lost / u| <= 2**-53``,
so ``log(u) + lost / u`` leaves out less than ``2**-107``. ``log(u)`` (``log_any``) within 5 ulps; where ``u >
1``, ``log(u) >= 2**-52 >= 2 |lost / u|``, so the sum cancels by at most a factor 2: within 11 ulps (where ``u =
1``, ``log(u)`` is 0 exactly and the result ``lost``, ``w`` itself).
"""

from __future__ import annotations

from decimal import Decimal, localcontext

import numpy as np

from ..arithmetic import divide
from ..rounded import _bits_double, _double_bits
from .checks import FRACTION, MAGIC, MAGIC_BITS, fast_two_sum, fma, inline, two_sum


def _exp_constants() -> tuple[np.ndarray, float, float, float]:
    """The table of ``2**(j / 64)``, ``64 / ln 2``, and ``L1``, ``L2`` (the module's docstring), each the double
    nearest a 60-digit decimal value (``float`` of a Decimal rounds once, to nearest)."""
    with localcontext() as context:
        context.prec = 60
        ln2 = Decimal(2).ln()
        table = np.array([float(Decimal(2) ** (Decimal(j) / 64)) for j in range(64)], np.float64)
        step = ln2 / 64
        l1 = float(Decimal(round(step * 2**44)) / Decimal(2**44))  # 38 significant bits
        l2 = float(step - Decimal(l1))
        return table, float(64 / ln2), l1, l2


_EXP_TABLE, _INVERSE, _L1, _L2 = _exp_constants()
_C2, _C3, _C4, _C5, _C6 = 1 / 2, 1 / 6, 1 / 24, 1 / 120, 1 / 720
EXP_LOW, EXP_HIGH = -103.0, 88.0  # the range of ``EXP``'s evaluation (open)


@inline
def exp_double(d):  # type: ignore[no-untyped-def]
    """exp(d) within 4 ulps, for ``-708 <= d <= 88`` (the module's docstring; down to -708 the scale
    ``2**(k >> 6)`` is a normal double)."""
    t = fma(d, _INVERSE, MAGIC)
    k = _double_bits(t) - MAGIC_BITS
    kd = t - MAGIC
    r = fma(-kd, _L2, fma(-kd, _L1, d))  # the inner one exact, as the module's docstring says of d - k * L1
    q = fma(r, fma(r, fma(r, fma(r, _C6, _C5), _C4), _C3), _C2)
    v = _EXP_TABLE[k & 63]
    scale = _bits_double(((k >> 6) + 1023) << 52)
    return fma(v, fma(r * r, q, r), v) * scale


@inline
def EXP(v):  # type: ignore[no-untyped-def]
    """EXP's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = (d > EXP_LOW) & (d < EXP_HIGH)  # False for NaN
    y = exp_double(d if inside else 0.0)
    return y, inside


def _log_constants() -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    """``c_j``, ``T_j``, ``U_j`` for the 128 intervals, and ``LN2_HI``, ``LN2_LO`` (the module's docstring)."""
    with localcontext() as context:
        context.prec = 60
        c, t, u = np.ones(128), np.zeros(128), np.zeros(128)
        for j in range(1, 127):
            middle = (1 + (Decimal(j) + Decimal("0.5")) / 128) / (2 if j >= 64 else 1)
            scale = 2 ** (28 - int(np.floor(np.log2(float(1 / middle)))))
            c[j] = float(Decimal(round(1 / middle * scale)) / scale)  # 29 significant bits
            minus_log = -Decimal(c[j]).ln()
            t[j] = float(minus_log)
            u[j] = float(minus_log - Decimal(t[j]))
        ln2 = Decimal(2).ln()
        hi = float(Decimal(round(ln2 * 2**44)) / Decimal(2**44))
        return c, t, u, hi, float(ln2 - Decimal(hi))


_LOG_C, _LOG_T, _LOG_U, _LN2_HI, _LN2_LO = _log_constants()
_ONE_BITS = 1023 << 52  # the exponent fields of 1.0 and of 0.5
_HALF_BITS = 1022 << 52
_D2, _D3, _D4, _D5, _D6, _D7, _D8, _D9 = -1 / 2, 1 / 3, -1 / 4, 1 / 5, -1 / 6, 1 / 7, -1 / 8, 1 / 9


_HIGH_BITS = -(1 << 29)  # a double's sign, exponent and first 23 fraction bits: 24 significant bits


@inline
def _log_parts(d):  # type: ignore[no-untyped-def]
    """``d``'s ``e``, ``j`` and ``m``'s bits (the module's docstring)."""
    bits = _double_bits(d)
    j = (bits >> 45) & 127
    up = j >= 64
    e = ((bits >> 52) & 2047) - 1023 + (1 if up else 0)
    return e, j, (bits & FRACTION) | (_HALF_BITS if up else _ONE_BITS)


@inline
def _log_sum(e, j, r):  # type: ignore[no-untyped-def]
    """``log(2**e / c_j) + log1p(r)``."""
    q = fma(r, fma(r, fma(r, fma(r, fma(r, fma(r, fma(r, _D9, _D8), _D7), _D6), _D5), _D4), _D3), _D2)
    ed = np.float64(e)  # e * LN2_HI is exact: its fused step rounds as the written-out sum did
    return fma(ed, _LN2_HI, _LOG_T[j]) + (fma(r * r, q, r) + fma(ed, _LN2_LO, _LOG_U[j]))


@inline
def log_double_double(d):  # type: ignore[no-untyped-def]
    """log(d) as ``hi + lo`` (``|lo| <= ulp(hi) / 2``) within ``2**-57`` relatively, for a positive finite ``d`` that
    a FLOAT32 holds (the module's docstring, LOG AS A DOUBLE-DOUBLE)."""
    e, j, m_bits = _log_parts(d)
    r = _bits_double(m_bits) * _LOG_C[j] - 1.0  # exact
    q = r * r * (_D2 + r * (_D3 + r * (_D4 + r * (_D5 + r * (_D6 + r * (_D7 + r * (_D8 + r * _D9)))))))
    ed = np.float64(e)
    a = ed * _LN2_HI  # exact
    h1, e1 = fast_two_sum(a, _LOG_T[j])  # |a| >= |T_j|, or a = 0
    h2, e2 = two_sum(h1, r)
    return fast_two_sum(h2, ((q + (ed * _LN2_LO + _LOG_U[j])) + e1) + e2)  # |h2| >= the rest


@inline
def log_double(d):  # type: ignore[no-untyped-def]
    """log(d) within 4 ulps, for a positive finite ``d`` that a FLOAT32 holds (the module's docstring)."""
    e, j, m_bits = _log_parts(d)
    return _log_sum(e, j, _bits_double(m_bits) * _LOG_C[j] - 1.0)


@inline
def log_any(d):  # type: ignore[no-untyped-def]
    """log(d) within 5 ulps, for any positive finite normal double ``d`` (the module's docstring)."""
    e, j, m_bits = _log_parts(d)
    m = _bits_double(m_bits)
    high = _bits_double(m_bits & _HIGH_BITS)
    c = _LOG_C[j]
    return _log_sum(e, j, (high * c - 1.0) + (m - high) * c)


@inline
def LOG(v):  # type: ignore[no-untyped-def]
    """LOG's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = (d > 0.0) & (d < np.inf)  # False for NaN
    y = log_double(d if inside else 1.0)
    return y, inside


@inline
def log1p_double(w):  # type: ignore[no-untyped-def]
    """log(1 + w) within 11 ulps for a finite ``w >= 0`` (the module's docstring)."""
    u = 1.0 + w
    lost = (w - (u - 1.0)) if w <= 1.0 else (1.0 - (u - w))  # Fast2Sum: 1 + w = u + lost exactly
    return log_any(u) + divide(lost, u)
