"""An independent model of the correctly rounded functions (EXP, LOG, SIN, ... ERF, EXPM1, and the activations
SIGMOID, SOFTPLUS, SOFTSIGN, GELU from their formulas): mpmath's value at 200 bits, and the format's value nearest to it found by comparing exact distances to the neighbours of a first
guess (never a second rounding). It shares no code with opendml.

>>> correctly_rounded("EXP", 1.0, "FLOAT32"), correctly_rounded("LOG", 0.0, "FLOAT16")
(2.7182817459106445, -inf)
>>> correctly_rounded("SIN", -0.0, "FLOAT32"), math.isnan(correctly_rounded("ACOSH", 0.5, "FLOAT32"))
(-0.0, True)
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

# Each function: mpmath's name, and its value at the special inputs (C99 Annex F), where mpmath's is complex,
# absent, or a limit: the input's value to the result, None for NaN.
MPMATH = {"EXP": "exp", "LOG": "ln", "SIN": "sin", "COS": "cos", "TAN": "tan", "ASIN": "asin", "ACOS": "acos",
          "ATAN": "atan", "SINH": "sinh", "COSH": "cosh", "TANH": "tanh", "ASINH": "asinh", "ACOSH": "acosh",
          "ATANH": "atanh", "ERF": "erf"}
# The functions of activations (SIGMOID, SOFTPLUS, SOFTSIGN, GELU) and EXPM1: their formulas in mpmath.


def _plus_tail(x: mpmath.mpf, tail: mpmath.mpf) -> mpmath.mpf:
    """x + tail exactly, a tail too small for the working precision kept at 2**-180 |x| (still far below any
    rounding step beside x, but off x where x is itself a midpoint, and seen by the 200-bit comparisons of
    ``_nearest``: softplus(217.0625) is just above a FLOAT16 midpoint)."""
    if abs(tail) < abs(x) * mpmath.mpf(2) ** -180:
        tail = mpmath.sign(tail) * abs(x) * mpmath.mpf(2) ** -180
    return mpmath.fadd(x, tail, exact=True)


MPMATH.update({"EXPM1": "expm1", "SIGMOID": lambda x: 1 / (1 + mpmath.exp(-x)),
               "SOFTPLUS": lambda x: _plus_tail(x, mpmath.log1p(mpmath.exp(-x))) if x > 0 else
               mpmath.log1p(mpmath.exp(x)), "SOFTSIGN": lambda x: x / (1 + abs(x)),
               "GELU": lambda x: _plus_tail(x, -x / 2 * mpmath.erfc(x / mpmath.sqrt(2))) if x > 0 else
               x / 2 * mpmath.erfc(-x / mpmath.sqrt(2))})  # erfc, not 1 + erf(...): no cancellation
_FORMAT = {"FLOAT32": np.float32, "FLOAT16": np.float16}


def _special(name: str, v: float) -> float | None:
    """The result where ``v`` is NaN, infinite, zero, or outside the function's real domain; else None."""
    if math.isnan(v):
        return math.nan
    inf = math.inf
    if math.isinf(v):
        positive = v > 0
        return {"EXP": inf if positive else 0.0, "LOG": inf if positive else math.nan,
                "SINH": v, "COSH": inf, "TANH": 1.0 if positive else -1.0, "ASINH": v,
                "ACOSH": inf if positive else math.nan, "ATAN": None,  # +-pi/2, rounded below
                "ERF": 1.0 if positive else -1.0,
                "EXPM1": inf if positive else -1.0, "SIGMOID": 1.0 if positive else 0.0,
                "SOFTPLUS": inf if positive else 0.0, "SOFTSIGN": 1.0 if positive else -1.0,
                "GELU": inf if positive else -0.0}.get(name, math.nan)
    if v == 0:  # odd functions keep the zero's sign
        return {"EXP": 1.0, "LOG": -inf, "COS": 1.0, "COSH": 1.0, "ACOS": None, "ACOSH": math.nan,
                "SIGMOID": 0.5, "SOFTPLUS": None}.get(name, v)
    if (name == "LOG" and v < 0) or (name in ("ASIN", "ACOS") and abs(v) > 1) or (name == "ACOSH" and v < 1) or (
            name == "ATANH" and abs(v) > 1):
        return math.nan
    if name == "ATANH" and abs(v) == 1:
        return math.copysign(inf, v)
    return None


def correctly_rounded(name: str, v: float, precision: str) -> float:
    """``name``'s function of the float ``v``, rounded once to nearest (ties to even) in ``precision``."""
    special = _special(name, v)
    fmt = _FORMAT[precision]
    if special is not None:
        return float(fmt(special))
    with mpmath.workprec(200):
        function = MPMATH[name]
        function = getattr(mpmath, function) if isinstance(function, str) else function
        exact = function(mpmath.mpf(v))  # atan(+-inf) and acos(0): +-pi/2 itself
        return _nearest(exact, fmt)


def _nearest(exact: mpmath.mpf, fmt: type) -> float:
    """The value of ``fmt`` nearest ``exact`` (mpmath, at the working precision), ties to an even significand."""
    with mpmath.workprec(200):
        with np.errstate(over="ignore"):
            guess = fmt(float(exact))
        largest = float(np.finfo(fmt).max)
        if math.isinf(guess):
            # beyond the largest finite value: infinity unless nearer to it than half its ulp
            half_ulp = (mpmath.mpf(largest) - mpmath.mpf(float(np.nextafter(fmt(largest), fmt(0))))) / 2
            return float(guess) if abs(exact) >= largest + half_ulp else math.copysign(largest, float(exact))
        with np.errstate(over="ignore"):  # the largest value's neighbour: infinity, never the nearest
            candidates = {guess, np.nextafter(guess, fmt(math.inf)), np.nextafter(guess, fmt(-math.inf))}
        best = min((c for c in candidates if not math.isinf(c)), key=lambda c: (abs(mpmath.mpf(float(c)) - exact),
                                              int(np.array(c, fmt).view(f"u{np.dtype(fmt).itemsize}")) & 1))
    return float(best) if best != 0 else math.copysign(0.0, float(exact))


# --- POW and ATAN_YX: C99's special values (Annex F.10.4.4, F.10.1.4), mpmath's value elsewhere ----------------

def _odd_integer(y: float) -> bool:
    return math.isfinite(y) and y == math.floor(y) and math.fmod(y, 2.0) != 0.0


def _pow_special(x: float, y: float) -> float | None:
    """pow's C99 value where an input is NaN, zero or infinite, or a negative base meets a non-integral
    exponent; else None."""
    if y == 0 or x == 1:
        return 1.0
    if math.isnan(x) or math.isnan(y):
        return math.nan
    if math.isinf(y):
        if x == -1:
            return 1.0
        return (0.0 if abs(x) < 1 else math.inf) if y > 0 else (math.inf if abs(x) < 1 else 0.0)
    if x == 0:
        magnitude = 0.0 if y > 0 else math.inf
        return math.copysign(magnitude, x) if _odd_integer(y) else magnitude
    if math.isinf(x):
        magnitude = math.inf if y > 0 else 0.0
        return -magnitude if x < 0 and _odd_integer(y) else magnitude
    if x < 0 and y != math.floor(y):
        return math.nan
    return None


def _atan2_special(a: float, b: float) -> mpmath.mpf | float | None:
    """atan2's C99 value where an input is NaN, zero or infinite; else None (``a`` the y, ``b`` the x)."""
    if math.isnan(a) or math.isnan(b):
        return math.nan
    negative = math.copysign(1.0, a) < 0
    sign = -1 if negative else 1
    if a == 0:
        return sign * mpmath.pi if math.copysign(1.0, b) < 0 else math.copysign(0.0, a)
    if math.isinf(a):
        if math.isinf(b):
            return sign * mpmath.pi * (mpmath.mpf(3) / 4 if b < 0 else mpmath.mpf(1) / 4)
        return sign * mpmath.pi / 2
    if b == 0:
        return sign * mpmath.pi / 2
    if math.isinf(b):
        return sign * mpmath.pi if b < 0 else math.copysign(0.0, a)
    return None


def _snapped(exact: mpmath.mpf, fmt: type) -> mpmath.mpf:
    """``exact`` (mpmath's pow at 300 bits) replaced by the format's midpoint it lies within 2**-250 of (an exact
    midpoint such as (1 + 2**-12)**2, which mpmath's evaluation may miss by an ulp of its own)."""
    if exact == 0 or mpmath.isinf(exact):
        return exact
    bits = {np.float32: 24, np.float16: 11}[fmt]
    lowest = {np.float32: -126, np.float16: -14}[fmt]
    exponent = max(int(mpmath.floor(mpmath.log(abs(exact), 2))), lowest)
    step = mpmath.mpf(2) ** (exponent - bits + 1)
    midpoint = (mpmath.floor(abs(exact) / step) + mpmath.mpf(1) / 2) * step
    if abs(abs(exact) - midpoint) <= abs(exact) * mpmath.mpf(2) ** -250:
        return mpmath.sign(exact) * midpoint
    return exact


def correctly_rounded_pair(name: str, a: float, b: float, precision: str) -> float:
    """POW (``a ** b``) or ATAN_YX (``atan2(a, b)``) of two floats, rounded once to nearest (ties to even) in
    ``precision``."""
    fmt = _FORMAT[precision]
    special: mpmath.mpf | float | None = _pow_special(a, b) if name == "POW" else _atan2_special(a, b)
    with mpmath.workprec(300):
        if special is None:
            if name == "POW":
                magnitude = mpmath.power(mpmath.mpf(abs(a)), mpmath.mpf(b))
                exact = -magnitude if a < 0 and _odd_integer(b) else magnitude
            else:
                exact = mpmath.atan2(mpmath.mpf(a), mpmath.mpf(b))
            return _nearest(_snapped(exact, fmt), fmt)
        if isinstance(special, float):
            return float(fmt(special))
        return _nearest(special, fmt)
