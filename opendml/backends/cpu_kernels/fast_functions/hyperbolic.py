"""Hyperbolic functions, their inverses and the logistic function.

TANH
----
For finite ``d`` (else redo: the infinities give +-1 and NaN NaN on the exact path), on ``a = |d|`` (the sign put
back, so the function stays odd; a zero is redone, for its sign): below 0.35, the Taylor series to ``a**27``
(coefficients from the Bernoulli numbers; each term a factor ``(2a / pi)**2 < 0.0497`` of the last, the first left
out below ``2**-60`` of the sum); from 0.35, ``1 - q`` with ``q = 2 / (e + 1)``, ``e = exp(2a)``: ``e`` within 4
ulps (``8u`` relative, ``u = 2**-53``), ``e + 1`` carries ``e / (e + 1) <= 1`` of it (at most ``0.67`` at ``a =
0.35``, where the bound below is worst; 1 in general) and one rounding, the division one more: ``q`` within ``7.4u``
at ``a = 0.35`` (``10u`` in general, where ``q`` is smaller). ``1 - q`` carries ``q / (1 - q)`` of that (at most
``1.98``, at ``a = 0.35``; below 1 from ``a = 0.55``) and one rounding: within ``15.6u`` (``11u`` from 0.55): 16
ulps. ``2a`` is clamped to 700 (``exponential.exp_double``'s range); from ``a = 44`` on, ``q < 2**-125`` and
``1 - q`` is 1 itself, as the exact value rounds in FLOAT32 and FLOAT16, far from every midpoint.

SIGMOID
-------
For finite ``d`` (else redo: the infinities give 0 and 1, NaN NaN, on the exact path), ``1 / (1 + exp(-d))``
with ``-d`` clamped to ``[-700, 700]`` (``exponential.exp_double``'s range, its results normal doubles): ``exp``
within ``8u``, ``1 + t`` carries at most ``t / (1 + t) <= 1`` of it and one rounding, the division one more:
within ``10u``, 10 ulps, for ``|d| <= 700``. Past it the clamped evaluation is ``1 / (1 + exp(700))``, about
``1e-304`` (below -700), or 1 (above 700), and so is the exact value to far within half an ulp of FLOAT32 or FLOAT16:
each rounds to +0.0 or 1, far from every midpoint (no redo: saturated logits stay in vector code).

SINH, COSH, EXPM1
-----------------
For ``|d| < 88`` (EXPM1: ``-103 < d < 88``; else redo), with ``e = exp(|d|)`` (``exp(d)`` for EXPM1) within
``8u``: COSH ``(e + 1 / e) / 2`` within ``10u``. SINH below 1 its odd Taylor series to ``d**19 / 19!`` (the
first term left out below ``2**-65`` of the sum), from 1 ``(e - 1 / e) / 2`` with the sign of ``d``: the terms
cancel by at most ``coth(1) = 1.31``, within ``12u``. EXPM1 below 1 in magnitude its Taylor series to ``d**18 /
18!`` (alternating for negative ``d``: the sum of the terms' magnitudes at most ``2.8`` times the result, within
``4u``), from 1 ``e - 1`` (at ``d >= 1``, ``e / (e - 1) <= 1.6``: within ``14u``; at ``d <= -1`` no cancellation).
Odd series keep a zero's sign.
ASINH, ACOSH, ATANH
-------------------
Each a ``log1p`` (``exponential.log1p_double``, within 11 ulps, whose condition number ``w / ((1 + w) log1p(w))``
is at most 1: a relative error of its argument carries over at most once) of an argument rounded a few times, on
``a = |d|`` (ASINH and ATANH odd: the sign put back; a zero keeps its sign). ASINH, for finite ``d``: ``w = a +
a**2 / (1 + sqrt(1 + a**2))`` (``a**2`` exact, below ``2**256``; the quotient within ``3u`` of its value, which
is at most ``a / 2``, so ``w`` within ``2u``): within 13 ulps. ACOSH, for ``1 <= d < inf``: ``t = d - 1`` (exact
below ``2**53``), ``w = t + sqrt(t (d + 1))`` (the product exact below ``2**24``: 24 and 25 significant bits,
else rounded once; the root and the sum one rounding each, no cancellation: ``w`` within ``2u``); ``w >=
2**-11``, where ``log1p_double`` is within 5 ulps: within 7 ulps.
ATANH, for ``|d| < 1``: ``0.5 log1p(2a / (1 - a))`` (``1 - a`` exact from ``2**-29`` up, else rounded once: the
quotient within ``1.5u``): within 13 ulps.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..arithmetic import divide
from .checks import inline
from .exponential import EXP_HIGH, EXP_LOW, exp_double, log1p_double


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
TANH_SERIES = 0.35  # below, the series; from it, the exponential (1 - q >= q / 1.98)
TANH_CLAMP = 350.0  # |x| clamped to it in exp(2|x|): exp_double's range
SIGMOID_CLAMP = 700.0  # |-d| clamped to it: exp_double's range, its results normal doubles


@inline
def tanh_double(x):  # type: ignore[no-untyped-def]
    """tanh(x) within 11 ulps for a finite ``x`` (the module's docstring)."""
    a = abs(x)
    s = a * a
    p = _T13  # written out: a loop would keep the kernel's loop from vectorizing
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
    q = divide(2.0, exp_double(2.0 * min(a, TANH_CLAMP)) + 1.0)
    y = series if a < TANH_SERIES else 1.0 - q
    return -y if x < 0.0 else y


@inline
def TANH(v):  # type: ignore[no-untyped-def]
    """TANH's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = abs(d) < np.inf  # False for NaN and the infinities
    y = tanh_double(d if inside else 0.5)
    inside = inside & (y != 0.0)  # a zero (its sign): the exact path
    return y, inside


@inline
def sigmoid_double(x):  # type: ignore[no-untyped-def]
    """1 / (1 + exp(-x)) within 10 ulps for ``|x| <= SIGMOID_CLAMP``, rounding as the exact value beyond (the
    module's docstring)."""
    return divide(1.0, 1.0 + exp_double(min(max(-x, -SIGMOID_CLAMP), SIGMOID_CLAMP)))


@inline
def SIGMOID(v):  # type: ignore[no-untyped-def]
    """SIGMOID's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = abs(d) < np.inf  # False for NaN and the infinities
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


@inline
def ASINH(v):  # type: ignore[no-untyped-def]
    """ASINH's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = abs(d) < np.inf  # False for NaN and the infinities
    a = abs(d) if inside else 0.5
    s = a * a
    w = a + divide(s, 1.0 + math.sqrt(1.0 + s))
    return math.copysign(log1p_double(w), d), inside


@inline
def ACOSH(v):  # type: ignore[no-untyped-def]
    """ACOSH's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = (d >= 1.0) & (d < np.inf)  # False for NaN
    x = d if inside else 2.0
    t = x - 1.0
    return log1p_double(t + math.sqrt(t * (x + 1.0))), inside


@inline
def ATANH(v):  # type: ignore[no-untyped-def]
    """ATANH's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = abs(d) < 1.0  # False for NaN, the infinities and +-1
    a = abs(d) if inside else 0.5
    return math.copysign(0.5 * log1p_double(divide(2.0 * a, 1.0 - a)), d), inside
