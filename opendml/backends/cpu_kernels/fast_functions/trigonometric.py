"""Trigonometric functions and their inverses.

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

ATAN
----
For finite ``d`` (else redo: the infinities give +-pi/2 rounded and NaN NaN on the exact path), on ``a = |d|`` (the
sign put back: odd, a zero keeps its sign): above 1, ``atan(a) = pi / 2 - atan(1 / a)`` (``1 / a`` rounded once; the
result at least ``pi / 4``, so no cancellation; ``pi / 2`` as two doubles). For ``b <= 1`` (``a`` or ``1 / a``),
``c = j / 64`` with ``j`` the integer nearest ``64 b``, ``t = (b - c) / (1 + b c)`` (``b - c`` and ``1 + b c``
exact for a FLOAT32 ``b``: few significant bits; the quotient rounded once; ``|t| <= 2**-7``), and ``atan(b) =
atan(c) + atan(t)``: ``atan(c)`` from a table (the double nearest a 60-digit value), ``atan(t)`` by its Taylor
polynomial to ``t**13 / 13`` (the first term left out below ``2**-98`` of ``t``). For ``j >= 1`` the two terms
cancel by at most a factor 2 (``|atan(t)| <= 2**-7 <= atan(c) / 2``): within 4 ulps; from ``1 / a``, 5. Of any
double ``a`` (``atan_double``, ASIN's and ACOS's arguments), ``b c`` and ``1 + b c`` round once each (``b c <= 1``:
``1 + b c`` within ``1.5u``), the quotient within ``2u``, ``atan(t)`` within ``2u |t|`` plus its polynomial's:
within 6 ulps. At ``a = inf``, ``1 / a`` is 0 and the result ``pi / 2``.

ATAN_YX
-------
``atan2(a, b)`` of two finite nonzero values (else redo: the zeros and infinities are C99's special values, and NaN
NaN, on the exact path): ``theta = atan(|a| / |b|)`` (``atan_double`` of the quotient rounded once, whose relative
error carries over at most once: within 7 ulps), and ``pi - theta`` for a negative ``b`` (``pi`` as two doubles;
``pi - theta >= pi / 2 >= theta``, so the difference cancels by at most a factor 2: within 15 ulps), the sign
``a``'s.

ASIN, ACOS
----------
Each an arctangent (``atan_double``, whose condition number ``t / ((1 + t**2) atan(t))`` is at most 1: a relative
error of its argument carries over at most once), no cancellation. ASIN, for ``|d| < 1`` (else redo: +-1 give
+-pi/2 rounded, the rest NaN, on the exact path): ``asin(a) = atan(a / sqrt(1 - a**2))`` on ``a = |d|`` (the
sign put back: odd, a zero keeps its sign), ``1 - a**2`` exact from ``a >= 0.5`` as ``(1 - a) (1 + a)`` (24 and 25
significant bits), below it rounded once (``a**2`` exact, ``1 - a**2 >= 0.75``); the root and the quotient one
rounding each: the argument within ``1.5u``, the result within 8 ulps. ACOS, for ``-1 < d <= 1`` (else redo: -1
gives pi rounded): ``acos(d) = 2 atan(sqrt((1 - d) / (1 + d)))``, ``1 - d`` and ``1 + d`` exact from ``|d| >=
2**-29``, else rounded once each; the quotient and the root one rounding each: the argument within ``2u``, the
result within 8 ulps (``acos(1)`` is +0.0).
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numpy as np

from ..arithmetic import divide
from ..rounded import _double_bits
from .checks import MAGIC, MAGIC_BITS, inline


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
    t = d * _TWO_OVER_PI + MAGIC
    k = _double_bits(t) - MAGIC_BITS
    kd = t - MAGIC
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


def _atan_constants() -> tuple[np.ndarray, float, float]:
    """``atan(j / 64)`` for ``j = 0 .. 64``, and ``pi / 2`` as a high and a low double, from 75-digit values."""
    with localcontext() as context:
        context.prec = 75
        table = np.array([float(_atan_decimal(Decimal(j) / 64)) for j in range(65)], np.float64)
        high = float(_HALF_PI)
        return table, high, float(_HALF_PI - Decimal(high))


_ATAN_TABLE, _HALF_PI_HI, _HALF_PI_LO = _atan_constants()
_PI_HI, _PI_LO = 2.0 * _HALF_PI_HI, 2.0 * _HALF_PI_LO  # pi as two doubles (doubling is exact)
(_A1, _A2, _A3, _A4, _A5, _A6) = ((-1) ** n / (2 * n + 1) for n in range(1, 7))


@inline
def atan_double(a):  # type: ignore[no-untyped-def]
    """atan(a) for a double ``0 <= a <= inf``: within 5 ulps for a FLOAT32's ``a``, 6 for any (the module's
    docstring)."""
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
    return (_HALF_PI_HI - small) + _HALF_PI_LO if large else small


@inline
def ATAN(v):  # type: ignore[no-untyped-def]
    """ATAN's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = abs(d) < np.inf  # False for NaN and the infinities
    return math.copysign(atan_double(abs(d) if inside else 0.5), d), inside


@inline
def ASIN(v):  # type: ignore[no-untyped-def]
    """ASIN's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = abs(d) < 1.0  # False for NaN, the infinities and +-1
    a = abs(d) if inside else 0.5
    q = (1.0 - a) * (1.0 + a) if a >= 0.5 else 1.0 - a * a
    return math.copysign(atan_double(divide(a, math.sqrt(q))), d), inside


@inline
def ACOS(v):  # type: ignore[no-untyped-def]
    """ACOS's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = (d > -1.0) & (d <= 1.0)  # False for NaN, the infinities and -1
    x = d if inside else 0.5
    return 2.0 * atan_double(math.sqrt(divide(1.0 - x, 1.0 + x))), inside


@inline
def ATAN_YX(v, w):  # type: ignore[no-untyped-def]
    """ATAN_YX's evaluation of two FLOAT32 values (``atan2(v, w)``), and whether the pair is inside its range."""
    a = np.float64(v)
    b = np.float64(w)
    inside = (abs(a) > 0.0) & (abs(a) < np.inf) & (abs(b) > 0.0) & (abs(b) < np.inf)
    theta = atan_double(divide(abs(a), abs(b)) if inside else 0.5)
    angle = (_PI_HI - theta) + _PI_LO if b < 0.0 else theta
    return math.copysign(angle, a), inside
