"""Vectorizable double evaluations of correctly rounded functions, and their checked roundings (FLOAT32, FLOAT16).

``opendml.rounded``'s method rounds a double evaluation once and trusts it wherever the double lies farther than
``NEAR`` (32) ulps from a rounding midpoint; any evaluation within ``E < NEAR`` ulps of the exact value rounds
the same there (the exact value is on the same side of every midpoint). The C library's functions meet the
bound but are scalar calls, which keep a loop from becoming vector code; the evaluations here are
straight-line double arithmetic, integer operations on bits and a table lookup, which LLVM turns into vector
code, each within a few ulps (the bound of each is below, and tests/test_fast_functions.py measures it).

``NAME(v)`` (``EXP``...) gives a FLOAT32 value's double evaluation and whether the value is inside the
evaluation's range (infinities, NaN, overflow and underflow are left to the exact path); ``to_float32(y, inside)``
and ``to_float16(y, inside)`` give its rounding (FLOAT16's held as a float32) and whether it cannot be trusted:
outside the range, or a double within ``NEAR`` ulps of a midpoint. A generated kernel (``codegen``) runs a block
of elements with these, and evaluates the elements marked ``redo`` again with the exact scalar path
(``rounded.NAME_FLOAT32``: the C library's function and the table of hard cases), so its results are the exact
path's bits on every input.

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

TANH
----
For ``|d| < 44`` (else redo: the result is +-1 or NaN, which the exact path gives), on ``a = |d|`` (the sign put
back, so the function stays odd; a zero is redone, for its sign): below 0.55, the Taylor series to ``a**39``
(coefficients from the Bernoulli numbers; each term a factor ``(2a / pi)**2 < 0.123`` of the last, the first left
out below ``2**-60`` of the sum); from 0.55, ``1 - q`` with ``q = 2 / (exp(2a) + 1)``: ``exp`` within 4 ulps
(``8u`` relative, ``u = 2**-53``), ``q`` within ``10u``, and ``q <= 1 - q`` there, so ``1 - q`` within ``11u``: 11
ulps.

SIGMOID
-------
For ``-88 < d < 103`` (else redo), ``1 / (1 + exp(-d))``: ``exp`` within ``8u``, ``1 + t`` carries at most
``t / (1 + t) <= 1`` of it and one rounding, the division one more: within ``10u``, 10 ulps.

SINH, COSH, EXPM1
-----------------
For ``|d| < 88`` (EXPM1: ``-103 < d < 88``; else redo), with ``e = exp(|d|)`` (``exp(d)`` for EXPM1) within
``8u``: COSH ``(e + 1 / e) / 2`` within ``10u``. SINH below 1 its odd Taylor series to ``d**19 / 19!`` (the
first term left out below ``2**-65`` of the sum), from 1 ``(e - 1 / e) / 2`` with the sign of ``d``: the terms
cancel by at most ``coth(1) = 1.31``, within ``12u``. EXPM1 below 1 in magnitude its Taylor series to ``d**18 /
18!`` (alternating for negative ``d``: the sum of the terms' magnitudes at most ``2.8`` times the result, within
``4u``), from 1 ``e - 1`` (at ``d >= 1``, ``e / (e - 1) <= 1.6``: within ``14u``; at ``d <= -1`` no cancellation).
Odd series keep a zero's sign.

SIN, COS, TAN
-------------
For ``|d| < 2**17`` (else redo: larger arguments need more of pi than three parts hold, and NaN and the
infinities give NaN on the exact path): ``k`` = the integer nearest ``d * 2 / pi`` (``|k| < 2**17``), ``r = ((d -
k * P1) - k * P2) - k * P3`` with ``P1``, ``P2`` of 33 significant bits (``k * P1`` and ``k * P2`` exact) and ``P3``
of 53, ``P1 + P2 + P3`` within ``2**-119`` of ``pi / 2``: ``d - k * P1`` is exact (Sterbenz's lemma for ``k != 0``),
the next two subtractions each round once, relatively (``k * P3`` is below ``2**-48``, and no FLOAT32 below
``2**17`` comes within ``2**-40`` of a multiple of ``pi / 2``), so ``r`` is within ``2u`` of ``d - k pi / 2``
relatively, ``|r| <= pi / 4 + 2**-30``. ``sin(r)`` by its Taylor polynomial to ``r**17 / 17!`` and ``cos(r)`` to
``r**18 / 18!`` (the first terms left out below ``2**-62`` of each), within ``4u`` and ``5u`` (r's error
included: ``2u r cot(r) <= 2u``, ``2u r tan(r) <= 1.6u``); the quadrant ``k mod 4`` picks and signs them, TAN is
their quotient (``sin / cos``, or ``-cos / sin`` in odd quadrants): within ``10u``. A zero keeps its sign.

SOFTSIGN
--------
For finite ``d`` (else redo: the infinities give +-1 and NaN NaN on the exact path), ``d / (1 + |d|)``: two
roundings, within 2 ulps; a zero keeps its sign.

ATAN
----
For finite ``d`` (else redo: the infinities give +-pi/2 rounded and NaN NaN on the exact path), on ``a = |d|`` (the
sign put back: odd, a zero keeps its sign): above 1, ``atan(a) = pi / 2 - atan(1 / a)`` (``1 / a`` rounded once; the
result at least ``pi / 4``, so no cancellation; ``pi / 2`` as two doubles). For ``b <= 1`` (``a`` or ``1 / a``),
``c = j / 64`` with ``j`` the integer nearest ``64 b``, ``t = (b - c) / (1 + b c)`` (``b - c`` and ``1 + b c``
exact for a FLOAT32 ``b``: few significant bits; the quotient rounded once; ``|t| <= 2**-7``), and ``atan(b) =
atan(c) + atan(t)``: ``atan(c)`` from a table (the double nearest a 60-digit value), ``atan(t)`` by its Taylor
polynomial to ``t**13 / 13`` (the first term left out below ``2**-98`` of ``t``). For ``j >= 1`` the two terms
cancel by at most a factor 2 (``|atan(t)| <= 2**-7 <= atan(c) / 2``): within 4 ulps; from ``1 / a``, 5.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
from numba import njit

from ...kernels.cache import use_for_numba
from ...rounded import NEAR, PRECISIONS
from .arithmetic import divide
from .halves import round_double_to_half
from .rounded import _bits_double, _double_bits

use_for_numba()  # before the decorators: Numba picks each function's cache directory then
# The evaluations are inlined by Numba, not left to LLVM, whose inliner finds the larger ones too costly and
# leaves a call in the kernel's loop, which then cannot vectorize. Inlined, they take the caller's error model,
# whose float division checks the divisor (a branch raising ZeroDivisionError, which also keeps a loop from
# vectorizing): they divide with ``arithmetic.divide``, IEEE's division alone (their divisors are never zero).
inline = njit(nogil=True, cache=True, inline="always")

_FLOAT32 = PRECISIONS["FLOAT32"]
_BASE, _LOWEST = _FLOAT32.base, _FLOAT32.lowest
_BASE16, _LOWEST16 = PRECISIONS["FLOAT16"].base, PRECISIONS["FLOAT16"].lowest
_FRACTION = (1 << 52) - 1

# The functions with an evaluation here (to FLOAT32 and to FLOAT16).
FAST = ("EXP", "LOG", "TANH", "SIGMOID", "SINH", "COSH", "EXPM1", "SIN", "COS", "TAN", "SOFTSIGN", "ATAN")


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
_MAGIC = 1.5 * 2.0**52  # adding it rounds to an integer kept in the low bits
_MAGIC_BITS = int(np.float64(_MAGIC).view(np.int64))
_C2, _C3, _C4, _C5, _C6 = 1 / 2, 1 / 6, 1 / 24, 1 / 120, 1 / 720
EXP_LOW, EXP_HIGH = -103.0, 88.0  # the range of ``EXP``'s evaluation (open)


@inline
def exp_double(d):  # type: ignore[no-untyped-def]
    """exp(d) within 4 ulps, for ``-104 <= d <= 88`` (the module's docstring)."""
    t = d * _INVERSE + _MAGIC
    k = _double_bits(t) - _MAGIC_BITS
    kd = t - _MAGIC
    r = (d - kd * _L1) - kd * _L2
    p = r + r * r * (_C2 + r * (_C3 + r * (_C4 + r * (_C5 + r * _C6))))
    v = _EXP_TABLE[k & 63]
    scale = _bits_double(((k >> 6) + 1023) << 52)
    return (v + v * p) * scale


@inline
def _near(y, base, lowest):  # type: ignore[no-untyped-def]
    """Whether the double ``y`` (finite, nonzero) lies within NEAR ulps of a midpoint of the grid ``base``,
    ``lowest`` (``opendml.rounded.method.Precision``): ``opendml.rounded.method``'s test, without branches."""
    bits = _double_bits(y)
    field = (bits >> 52) & 2047
    significand = (bits & _FRACTION) | (1 << 52)
    shift = min(base + max(0, lowest - field), 60)
    return abs((significand & ((1 << shift) - 1)) - (1 << (shift - 1))) <= NEAR


@inline
def near_float32(y):  # type: ignore[no-untyped-def]
    """Whether the double ``y`` (finite, nonzero, below 2**128) lies within NEAR ulps of a FLOAT32 midpoint."""
    return _near(y, _BASE, _LOWEST)


@inline
def to_float32(y, inside):  # type: ignore[no-untyped-def]
    """The evaluation ``y`` rounded to FLOAT32, and whether to redo it (outside the range, or near a midpoint)."""
    return np.float32(y), near_float32(y) | (not inside)


@inline
def to_float16(y, inside):  # type: ignore[no-untyped-def]
    """The evaluation ``y`` rounded once to FLOAT16 and held as a float32 (at or past FLOAT16's top, an infinity:
    such a double is past the last midpoint or near it), and whether to redo it."""
    return round_double_to_half(y), _near(y, _BASE16, _LOWEST16) | (not inside)


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
    m = _bits_double((bits & _FRACTION) | (_HALF_BITS if up else _ONE_BITS))
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


def _tanh_coefficients(count: int) -> tuple[float, ...]:
    """The Taylor coefficients of ``tanh`` (``x``, ``x**3``, ...), from the Bernoulli numbers, each the double
    nearest the exact fraction: ``2**(2n) (2**(2n) - 1) B_2n / (2n)!``."""
    bernoulli = [Fraction(0)] * (2 * count + 1)
    numbers = []
    for m in range(2 * count + 1):  # Akiyama and Tanigawa's algorithm (B_1 = +1/2; only the even ones are used)
        bernoulli[m] = Fraction(1, m + 1)
        for j in range(m, 0, -1):
            bernoulli[j - 1] = j * (bernoulli[j - 1] - bernoulli[j])
        numbers.append(bernoulli[0])
    return tuple(float(Fraction(4**n * (4**n - 1)) * numbers[2 * n] / math.factorial(2 * n))
                 for n in range(1, count + 1))


(_T0, _T1, _T2, _T3, _T4, _T5, _T6, _T7, _T8, _T9, _T10, _T11, _T12, _T13, _T14, _T15, _T16, _T17, _T18,
 _T19) = _tanh_coefficients(20)
TANH_SERIES = 0.55  # below, the series; from it, the exponential (no cancellation: 1 - q >= q)
TANH_HIGH = 44.0  # from it exp(2|x|) is past the evaluation's range (the exact path: +-1)
SIGMOID_LOW, SIGMOID_HIGH = -88.0, 103.0


@inline
def tanh_double(x):  # type: ignore[no-untyped-def]
    """tanh(x) within 11 ulps for ``|x| < TANH_HIGH`` (the module's docstring)."""
    a = abs(x)
    s = a * a
    p = _T19  # written out: a loop would keep the kernel's loop from vectorizing
    p = _T18 + s * p
    p = _T17 + s * p
    p = _T16 + s * p
    p = _T15 + s * p
    p = _T14 + s * p
    p = _T13 + s * p
    p = _T12 + s * p
    p = _T11 + s * p
    p = _T10 + s * p
    p = _T9 + s * p
    p = _T8 + s * p
    p = _T7 + s * p
    p = _T6 + s * p
    p = _T5 + s * p
    p = _T4 + s * p
    p = _T3 + s * p
    p = _T2 + s * p
    p = _T1 + s * p
    p = _T0 + s * p
    series = a * p
    q = divide(2.0, exp_double(2.0 * a) + 1.0)
    y = series if a < TANH_SERIES else 1.0 - q
    return -y if x < 0.0 else y


@inline
def TANH(v):  # type: ignore[no-untyped-def]
    """TANH's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = abs(d) < TANH_HIGH  # False for NaN and the infinities
    y = tanh_double(d if inside else 0.5)
    inside = inside & (y != 0.0)  # a zero (its sign): the exact path
    return y, inside


@inline
def sigmoid_double(x):  # type: ignore[no-untyped-def]
    """1 / (1 + exp(-x)) within 11 ulps for ``SIGMOID_LOW < x < SIGMOID_HIGH``."""
    return divide(1.0, 1.0 + exp_double(-x))


@inline
def SIGMOID(v):  # type: ignore[no-untyped-def]
    """SIGMOID's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = (d > SIGMOID_LOW) & (d < SIGMOID_HIGH)
    y = sigmoid_double(d if inside else 0.0)
    return y, inside


SERIES_END = 1.0  # SINH's and EXPM1's series below it in magnitude, their exponentials from it
HYPERBOLIC_HIGH = 88.0
(_F2, _F3, _F4, _F5, _F6, _F7, _F8, _F9, _F10, _F11, _F12, _F13, _F14, _F15, _F16, _F17, _F18, _F19) = (
    1 / math.factorial(n) for n in range(2, 20))


@inline
def COSH(v):  # type: ignore[no-untyped-def]
    """COSH's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = abs(d) < HYPERBOLIC_HIGH  # False for NaN and the infinities
    e = exp_double(abs(d) if inside else 0.0)
    y = 0.5 * (e + divide(1.0, e))
    return y, inside


@inline
def SINH(v):  # type: ignore[no-untyped-def]
    """SINH's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = abs(d) < HYPERBOLIC_HIGH
    x = d if inside else 0.5
    s = x * x
    p = _F19  # written out: a loop would keep the kernel's loop from vectorizing
    p = _F17 + s * p
    p = _F15 + s * p
    p = _F13 + s * p
    p = _F11 + s * p
    p = _F9 + s * p
    p = _F7 + s * p
    p = _F5 + s * p
    p = _F3 + s * p
    series = x + x * (s * p)  # odd: a zero keeps its sign
    e = exp_double(abs(x))
    large = math.copysign(0.5 * (e - divide(1.0, e)), x)
    return series if abs(x) < SERIES_END else large, inside


@inline
def EXPM1(v):  # type: ignore[no-untyped-def]
    """EXPM1's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = (d > EXP_LOW) & (d < EXP_HIGH)
    x = d if inside else 0.5
    p = _F18  # written out: a loop would keep the kernel's loop from vectorizing
    p = _F17 + x * p
    p = _F16 + x * p
    p = _F15 + x * p
    p = _F14 + x * p
    p = _F13 + x * p
    p = _F12 + x * p
    p = _F11 + x * p
    p = _F10 + x * p
    p = _F9 + x * p
    p = _F8 + x * p
    p = _F7 + x * p
    p = _F6 + x * p
    p = _F5 + x * p
    p = _F4 + x * p
    p = _F3 + x * p
    p = _F2 + x * p
    series = x * (1.0 + x * p)  # a zero keeps its sign (x + x * (x * p) would make -0.0 +0.0)
    large = exp_double(x) - 1.0
    return series if abs(x) < SERIES_END else large, inside


def _atan_decimal(x: Decimal) -> Decimal:
    """atan(x) for ``0 <= x <= 1`` in the context's precision: the angle halved three times (``x / (1 + sqrt(1 +
    x**2))``, below ``tan(pi / 32)``), then its Taylor series."""
    for _ in range(3):
        x = x / (1 + (1 + x * x).sqrt())
    total, power, n = Decimal(0), x, 0
    while abs(power) > Decimal(10) ** -70:
        total += power / (2 * n + 1) * (-1 if n % 2 else 1)
        power *= x * x
        n += 1
    return 8 * total


def _half_pi() -> Decimal:
    """``pi / 2`` to 75 digits (``2 atan(1)``): SIN's, COS's and TAN's reduction and ATAN's large arguments."""
    with localcontext() as context:
        context.prec = 75
        return 2 * _atan_decimal(Decimal(1))


_HALF_PI = _half_pi()


def _pi_parts() -> tuple[float, float, float, float]:
    """``2 / pi``, and ``P1``, ``P2`` (33 significant bits each) and ``P3`` (the double nearest the rest) of
    ``pi / 2`` (the module's docstring)."""
    with localcontext() as context:
        context.prec = 75
        p1 = Decimal(round(_HALF_PI * 2**32)) / Decimal(2**32)  # 33 significant bits: pi / 2 is in [1, 2)
        p2 = Decimal(round((_HALF_PI - p1) * 2**65)) / Decimal(2**65)  # the rest is below 2**-33: 33 more bits
        return float(1 / _HALF_PI), float(p1), float(p2), float(_HALF_PI - p1 - p2)


_TWO_OVER_PI, _P1, _P2, _P3 = _pi_parts()
TRIG_HIGH = 131072.0  # 2**17: the range of SIN's, COS's and TAN's evaluation (open, in magnitude)
(_S1, _S2, _S3, _S4, _S5, _S6, _S7, _S8) = ((-1) ** n / math.factorial(2 * n + 1) for n in range(1, 9))
(_K1, _K2, _K3, _K4, _K5, _K6, _K7, _K8, _K9) = ((-1) ** n / math.factorial(2 * n) for n in range(1, 10))


@inline
def _quadrant(d):  # type: ignore[no-untyped-def]
    """``d`` reduced by the integer ``k`` nearest ``d * 2 / pi``: ``k mod 4``, ``sin(r)`` and ``cos(r)``."""
    t = d * _TWO_OVER_PI + _MAGIC
    k = _double_bits(t) - _MAGIC_BITS
    kd = t - _MAGIC
    r = ((d - kd * _P1) - kd * _P2) - kd * _P3
    s = r * r
    p = _S8  # written out: a loop would keep the kernel's loop from vectorizing
    p = _S7 + s * p
    p = _S6 + s * p
    p = _S5 + s * p
    p = _S4 + s * p
    p = _S3 + s * p
    p = _S2 + s * p
    p = _S1 + s * p
    sine = r + r * (s * p) if r != 0.0 else r  # a zero keeps its sign (p < 0: -0.0 + +0.0 would be +0.0)
    c = _K9
    c = _K8 + s * c
    c = _K7 + s * c
    c = _K6 + s * c
    c = _K5 + s * c
    c = _K4 + s * c
    c = _K3 + s * c
    c = _K2 + s * c
    c = _K1 + s * c
    return k & 3, sine, 1.0 + s * c


@inline
def SIN(v):  # type: ignore[no-untyped-def]
    """SIN's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = abs(d) < TRIG_HIGH  # False for NaN and the infinities
    q, sine, cosine = _quadrant(d if inside else 0.5)
    y = cosine if q & 1 else sine
    return -y if q & 2 else y, inside


@inline
def COS(v):  # type: ignore[no-untyped-def]
    """COS's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = abs(d) < TRIG_HIGH
    q, sine, cosine = _quadrant(d if inside else 0.5)
    y = sine if q & 1 else cosine
    return -y if (q + 1) & 2 else y, inside


@inline
def TAN(v):  # type: ignore[no-untyped-def]
    """TAN's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = abs(d) < TRIG_HIGH
    q, sine, cosine = _quadrant(d if inside else 0.5)
    return divide(-cosine, sine) if q & 1 else divide(sine, cosine), inside


@inline
def SOFTSIGN(v):  # type: ignore[no-untyped-def]
    """SOFTSIGN's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = abs(d) < np.inf  # False for NaN and the infinities
    x = d if inside else 0.5
    return divide(x, 1.0 + abs(x)), inside


def _atan_constants() -> tuple[np.ndarray, float, float]:
    """``atan(j / 64)`` for ``j = 0 .. 64``, and ``pi / 2`` as a high and a low double, from 75-digit values."""
    with localcontext() as context:
        context.prec = 75
        table = np.array([float(_atan_decimal(Decimal(j) / 64)) for j in range(65)], np.float64)
        high = float(_HALF_PI)
        return table, high, float(_HALF_PI - Decimal(high))


_ATAN_TABLE, _HALF_PI_HI, _HALF_PI_LO = _atan_constants()
(_A1, _A2, _A3, _A4, _A5, _A6) = ((-1) ** n / (2 * n + 1) for n in range(1, 7))


@inline
def ATAN(v):  # type: ignore[no-untyped-def]
    """ATAN's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = abs(d) < np.inf  # False for NaN and the infinities
    a = abs(d) if inside else 0.5
    large = a > 1.0
    b = divide(1.0, a) if large else a
    j = np.int64(b * 64.0 + 0.5)  # b in [0, 1]: the nearest j / 64 (a tie either way)
    c = np.float64(j) * 0.015625
    t = divide(b - c, 1.0 + b * c)
    s = t * t
    p = _A6  # written out: a loop would keep the kernel's loop from vectorizing
    p = _A5 + s * p
    p = _A4 + s * p
    p = _A3 + s * p
    p = _A2 + s * p
    p = _A1 + s * p
    small = _ATAN_TABLE[j] + (t + t * (s * p))
    y = (_HALF_PI_HI - small) + _HALF_PI_LO if large else small
    return math.copysign(y, d), inside
