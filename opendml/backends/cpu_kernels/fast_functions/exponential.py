"""Exponentials and logarithms.

EXP
---
For ``-103 < d < 88`` (else redo: beyond, the result is an infinity, 0 or a subnormal near the bottom, which
the exact path gives): ``k`` = the integer nearest ``d * 64 / ln 2`` (``|k| < 2**14``), ``r = (d - k * L1) - k *
L2`` with ``L1 + L2 = ln 2 / 64`` (``L1`` of 38 significant bits, so ``k * L1`` is exact and ``d - k * L1`` is
exact by Sterbenz's lemma), ``|r| <= ln 2 / 128``; ``exp(r) - 1`` by its Taylor polynomial to ``r**6 / 720`` (the
first term left out is below ``2**-60``), times ``2**(j / 64)`` from a table (each entry the double nearest, from
a 60-digit decimal), times ``2**(k >> 6)`` (exact). Within 4 ulps (tests: against NumPy's double ``exp``).

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
"""

from __future__ import annotations

from decimal import Decimal, localcontext

import numpy as np

from ..rounded import _bits_double, _double_bits
from .checks import FRACTION, MAGIC, MAGIC_BITS, inline


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
    """exp(d) within 4 ulps, for ``-104 <= d <= 88`` (the module's docstring)."""
    t = d * _INVERSE + MAGIC
    k = _double_bits(t) - MAGIC_BITS
    kd = t - MAGIC
    r = (d - kd * _L1) - kd * _L2
    p = r + r * r * (_C2 + r * (_C3 + r * (_C4 + r * (_C5 + r * _C6))))
    v = _EXP_TABLE[k & 63]
    scale = _bits_double(((k >> 6) + 1023) << 52)
    return (v + v * p) * scale



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


@inline
def log_double(d):  # type: ignore[no-untyped-def]
    """log(d) within 4 ulps, for a positive finite ``d`` that a FLOAT32 holds (the module's docstring)."""
    bits = _double_bits(d)
    j = (bits >> 45) & 127
    up = j >= 64
    e = ((bits >> 52) & 2047) - 1023 + (1 if up else 0)
    m = _bits_double((bits & FRACTION) | (_HALF_BITS if up else _ONE_BITS))
    r = m * _LOG_C[j] - 1.0
    p = r + r * r * (_D2 + r * (_D3 + r * (_D4 + r * (_D5 + r * (_D6 + r * (_D7 + r * (_D8 + r * _D9)))))))
    ed = np.float64(e)
    return (ed * _LN2_HI + _LOG_T[j]) + (p + (ed * _LN2_LO + _LOG_U[j]))


@inline
def LOG(v):  # type: ignore[no-untyped-def]
    """LOG's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = (d > 0.0) & (d < np.inf)  # False for NaN
    y = log_double(d if inside else 1.0)
    return y, inside
