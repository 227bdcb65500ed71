"""The correctly rounded functions: each one's name and its double-precision evaluation on each backend (NumPy's
function, the C library's through Numba's ``math``, CUDA's) and in the table builder's reference (mpmath).

The activations correctly rounded as a whole (SIGMOID, SOFTPLUS, SOFTSIGN, GELU) are formulas over the libraries'
functions, written once per backend (NumPy over arrays; a scalar function Numba compiles as written; a CUDA
device function) with the same steps, each with a proven bound on its double result's error. ``E`` is the
largest error, in ulps, of a library function used (1 for CUDA's and glibc's ``exp``, ``log1p``; up to 4 for
NumPy's SIMD ``exp``; 5 for ``erfc``); ``u = 2**-53``; a relative error ``k * u`` is less than ``2k`` ulps of the
result. Each bound stays below ``NEAR`` (32 ulps), which is all ``opendml.rounded``'s argument needs.

- SIGMOID ``1 / (1 + exp(-x))``: ``t = exp(-x)`` is within ``2E u`` (relative); ``1 + t`` carries at most
  ``t / (1 + t) <= 1`` of it and one rounding; the division one more: at most ``(2E + 2) u``, under ``4E + 4``
  ulps (20 with NumPy's ``exp``). Infinite ``-x`` gives ``1 / inf = 0``, the limit.
- SOFTPLUS ``max(x, 0) + log1p(exp(-|x|))``: ``log1p``'s condition number ``t / ((1 + t) log1p(t))`` is at most
  1 on ``t = exp(-|x|)`` in ``(0, 1]``, so the logarithm is within ``(2E + 2E) u``; adding the nonnegative
  ``max(x, 0)`` keeps that relative bound and rounds once: under ``8E + 2`` ulps (10 with glibc's functions). No
  step overflows: ``exp`` only sees ``-|x| <= 0``.
- SOFTSIGN ``x / (1 + |x|)``: two roundings, under 4 ulps; the infinities give ``+-1``, the limit (``inf / inf``
  would be NaN). Its exact value can be a midpoint (``x = 4095``: ``4095 / 4096``, a FLOAT16 tie): the table
  holds those, resolved ties to even.
- GELU ``x / 2 * erfc(-x / sqrt(2))``: ``erfc``'s condition number at ``w = -x / sqrt(2)`` is about ``2 w**2``
  for negative ``x`` (200 at ``x = -14``, where GELU leaves FLOAT32's range), so the argument is carried as a
  double-double ``s + ds = x / sqrt(2)``: ``1 / sqrt(2)`` split into ``C1`` (28 bits: ``x * C1`` is exact, ``x``
  having 24) and ``C2`` (the next 53), ``s = x * C1 + x * C2`` rounded and ``ds`` its exact remainder (Fast2Sum),
  within ``2**-80 |s|`` of ``x / sqrt(2)``. The first-order term corrects the argument:
  ``erfc(-(s + ds)) = erfc(-s) + (2 / sqrt(pi)) exp(-s * s) ds + r``; the term is at most ``2 w**2 u``
  relative (``|ds| <= u |s|``, ``erfc'/erfc ~ 2 |w|``), so its own error (``exp`` of a rounded square: relative
  ``w**2 u``) and the remainder ``r`` (relative ``2 w**4 u**2``) are below ``2**-30 u`` wherever the result is
  a normal double. With ``erfc``'s ``2E u``, the sum's and the product's roundings (``x / 2`` is exact): under
  ``4E + 5`` ulps (25 with ``erfc``'s 5). The infinities give ``+inf`` and ``-0.0`` (the limits; the
  double-double of an infinity would be NaN). Every backend spells each product and sum as its own rounded
  operation (CUDA's ``__dmul_rn``/``__dadd_rn``: never contracted into a fused multiply-add).

Tails below a double's precision. Where a function is its leading term plus a tail of known sign smaller than
``2**-54`` of it, the double formula gives the leading term exactly, and that can be a midpoint itself (every
FLOAT32 ``x`` that is a FLOAT16 midpoint, for ``softplus(x) = x + log1p(exp(-x))`` with ``x >= 40`` and ``gelu(x)
= x - x / 2 * erfc(x / sqrt(2))`` with ``x >= 10``; every odd FLOAT32 subnormal ``x`` for ``gelu(x) = x / 2 +
x**2 / sqrt(2 pi) + ...`` with ``0 < |x| <= 2**-60``): millions of ties no table should hold. There each backend
returns the leading term moved ``NUDGE`` = 1024 ulps (``_nudged``: exact, the same everywhere) toward the
tail's side. The exact value lies strictly between the leading term and the moved value, and no other midpoint of
FLOAT32 or FLOAT16 lies within 1024 ulps of a double (the nearest is ``2**28`` ulps away), so both round alike;
and the moved value is 1024 ulps off a midpoint the leading term was on, more than the table builder's BUILD, so
it is neither looked up nor tabulated. Elsewhere every backend's nudged value is the builder's, exactly.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .method import _jitable


@dataclass(frozen=True)
class RoundedFunction:
    """``name`` (DirectML's, as in ELEMENT_WISE_EXP: ``EXP``), ``numpy`` (float64 array to float64 array),
    ``scalar`` (Python's ``math`` function, which Numba compiles to the C library's), ``c`` (the CUDA double
    function's name), ``mp`` (mpmath's function's name, or a function of an mpf at the working precision);
    ``c_source``: the CUDA device function ``c`` names, where it is a formula of the module's own."""

    name: str
    numpy: Callable[[np.ndarray], np.ndarray]
    scalar: Callable[[float], float]
    c: str
    mp: str | Callable[[Any], Any]
    c_source: str = ""


def _erf(x: np.ndarray) -> np.ndarray:
    """NumPy has no erf: the C library's, element by element (NumPy's lowering is the slow tier)."""
    return np.frompyfunc(math.erf, 1, 1)(x).astype(np.float64)


def _entry(name: str, numpy: Callable[[np.ndarray], np.ndarray], scalar: Callable[[float], float], c: str,
           mp: str | None = None) -> RoundedFunction:
    return RoundedFunction(name, numpy, scalar, c, mp or c)


FUNCTIONS: dict[str, RoundedFunction] = {f.name: f for f in (
    _entry("EXP", np.exp, math.exp, "exp"),
    _entry("LOG", np.log, math.log, "log", "ln"),
    _entry("SIN", np.sin, math.sin, "sin"),
    _entry("COS", np.cos, math.cos, "cos"),
    _entry("TAN", np.tan, math.tan, "tan"),
    _entry("ASIN", np.arcsin, math.asin, "asin"),
    _entry("ACOS", np.arccos, math.acos, "acos"),
    _entry("ATAN", np.arctan, math.atan, "atan"),
    _entry("SINH", np.sinh, math.sinh, "sinh"),
    _entry("COSH", np.cosh, math.cosh, "cosh"),
    _entry("TANH", np.tanh, math.tanh, "tanh"),
    _entry("ASINH", np.arcsinh, math.asinh, "asinh"),
    _entry("ACOSH", np.arccosh, math.acosh, "acosh"),
    _entry("ATANH", np.arctanh, math.atanh, "atanh"),
    _entry("ERF", _erf, math.erf, "erf"),
)}


# --- the activations correctly rounded as a whole (the module's docstring proves each bound) -------------------

_C1 = float.fromhex("0x1.6a09e66p-1")  # 1 / sqrt(2) to 28 bits: x * _C1 is exact for every FLOAT32 x
_C2 = float.fromhex("0x1.fcef32422cbecp-31")  # the next 53 bits of 1 / sqrt(2)
_TWO_OVER_ROOT_PI = float.fromhex("0x1.20dd750429b6dp+0")  # 2 / sqrt(pi), the slope of erfc at 0
_C_GUARD = "#ifndef ROUNDED_{0}_FORMULA\n#define ROUNDED_{0}_FORMULA\n{1}#endif\n"


NUDGE = 1024  # ulps a leading term is moved toward its tail's side (the module's docstring): more than BUILD
_SOFTPLUS_LARGE = 40.0  # softplus(x) = x + tail, 0 < tail < 2**-54 x
_GELU_LARGE = 10.0  # gelu(x) = x - tail, 0 < tail < 2**-54 x
_GELU_TINY = 2.0**-60  # gelu(x) = x / 2 + tail, 0 < tail < 2**-54 |x / 2|


@_jitable
def _nudged(y: float, up: bool) -> float:
    """The nonzero finite double ``y`` moved NUDGE of its ulps up (``up``) or down: exact (a multiple of its own
    ulp, within a binade or crossing into the next)."""
    _, exponent = math.frexp(y)
    step = math.ldexp(float(NUDGE), exponent - 53)
    return y + step if up else y - step


def _nudged_array(y: np.ndarray, up: bool) -> np.ndarray:
    _, exponent = np.frexp(y)
    step = np.ldexp(float(NUDGE), exponent - 53)
    return y + step if up else y - step


@_jitable
def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _sigmoid_array(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _sigmoid_mp(x: Any) -> Any:
    import mpmath  # type: ignore[import-untyped]
    return 1 / (1 + mpmath.exp(-x))


@_jitable
def _softplus(x: float) -> float:
    if _SOFTPLUS_LARGE <= x < math.inf:
        return _nudged(x, True)
    positive = x if x > 0.0 else 0.0  # NaN: 0, and the logarithm's NaN follows
    return positive + math.log1p(math.exp(-abs(x)))


def _softplus_array(x: np.ndarray) -> np.ndarray:
    y = np.where(x > 0.0, x, 0.0) + np.log1p(np.exp(-np.abs(x)))
    large = (x >= _SOFTPLUS_LARGE) & (x < np.inf)
    return np.where(large, _nudged_array(np.where(large, x, 1.0), True), y)


def _beside(x: Any, tail: Any) -> Any:
    """``x + tail`` exactly, for a float32 ``x`` and a ``tail`` of its sign's opposite or its own whose size
    may be far below the working precision (softplus(x) = x + log1p(exp(-x)) for large x): a tail below
    ``2**-(prec + 8) |x|`` is raised to that size, which moves the sum past no midpoint (the nearest other
    than ``x`` itself lies ``2**-25 |x|`` away) but keeps it off ``x`` where ``x`` is itself a midpoint (217.0625
    in FLOAT16: a rounding at 320 bits would see the tie, and round to even)."""
    import mpmath  # type: ignore[import-untyped]
    floor = abs(x) * mpmath.mpf(2) ** -(mpmath.mp.prec + 8)
    if abs(tail) < floor:
        tail = mpmath.sign(tail) * floor
    return mpmath.fadd(x, tail, exact=True)


def _softplus_mp(x: Any) -> Any:
    import mpmath  # type: ignore[import-untyped]
    if x > 0:  # x + log1p(exp(-x)): the tail beside x, kept exactly
        return _beside(x, mpmath.log1p(mpmath.exp(-x)))
    return mpmath.log1p(mpmath.exp(x))


@_jitable
def _softsign(x: float) -> float:
    if math.isinf(x):
        return math.copysign(1.0, x)
    return x / (1.0 + abs(x))


def _softsign_array(x: np.ndarray) -> np.ndarray:
    return np.where(np.isinf(x), np.sign(x), x / (1.0 + np.abs(x)))


def _softsign_mp(x: Any) -> Any:
    return x / (1 + abs(x))


@_jitable
def _gelu(x: float) -> float:
    if math.isinf(x):
        return x if x > 0.0 else -0.0
    if x >= _GELU_LARGE:
        return _nudged(x, False)
    if 0.0 < abs(x) <= _GELU_TINY:
        return _nudged(x * 0.5, True)
    a = x * _C1  # exact
    b = x * _C2
    s = a + b
    ds = b - (s - a)  # s + ds = a + b exactly (|a| >= |b|)
    return (x * 0.5) * (math.erfc(-s) + _TWO_OVER_ROOT_PI * math.exp(-(s * s)) * ds)


def _gelu_array(x: np.ndarray) -> np.ndarray:
    a = x * _C1
    b = x * _C2
    s = a + b
    ds = b - (s - a)
    erfc = np.asarray(np.frompyfunc(math.erfc, 1, 1)(-s), np.float64)  # NumPy has no erfc: the C library's
    y = (x * 0.5) * (erfc + _TWO_OVER_ROOT_PI * np.exp(-(s * s)) * ds)
    large = (x >= _GELU_LARGE) & (x < np.inf)
    tiny = (np.abs(x) <= _GELU_TINY) & (x != 0)
    y = np.where(large, _nudged_array(np.where(large, x, 1.0), False), y)
    y = np.where(tiny, _nudged_array(np.where(tiny, x * 0.5, 1.0), True), y)
    return np.where(np.isinf(x), np.where(x > 0, x, -0.0), y)


def _gelu_mp(x: Any) -> Any:
    import mpmath  # type: ignore[import-untyped]
    if x > 0:  # x - x / 2 * erfc(x / sqrt(2)): the tail beside x, kept exactly
        return _beside(x, -x / 2 * mpmath.erfc(x / mpmath.sqrt(2)))
    return x / 2 * mpmath.erfc(-x / mpmath.sqrt(2))


_SIGMOID_C = _C_GUARD.format("SIGMOID", """__device__ __forceinline__ double opendml_sigmoid(double x) {
    return __ddiv_rn(1.0, __dadd_rn(1.0, exp(-x)));
}
""")
_NUDGED_C = _C_GUARD.format("NUDGED", f"""__device__ __forceinline__ double opendml_nudged(double y, bool up) {{
    int exponent;
    frexp(y, &exponent);
    const double step = ldexp({float(NUDGE)!r}, exponent - 53);
    return up ? __dadd_rn(y, step) : __dsub_rn(y, step);
}}
""")
_SOFTPLUS_C = _NUDGED_C + _C_GUARD.format("SOFTPLUS", f"""__device__ __forceinline__ double opendml_softplus(
        double x) {{
    if (x >= {_SOFTPLUS_LARGE!r} && !isinf(x)) return opendml_nudged(x, true);
    const double positive = x > 0.0 ? x : 0.0;
    return __dadd_rn(positive, log1p(exp(-fabs(x))));
}}
""")
_SOFTSIGN_C = _C_GUARD.format("SOFTSIGN", """__device__ __forceinline__ double opendml_softsign(double x) {
    if (isinf(x)) return copysign(1.0, x);
    return __ddiv_rn(x, __dadd_rn(1.0, fabs(x)));
}
""")
_GELU_C = _NUDGED_C + _C_GUARD.format("GELU", f"""__device__ __forceinline__ double opendml_gelu(double x) {{
    if (isinf(x)) return x > 0.0 ? x : -0.0;
    if (x >= {_GELU_LARGE!r}) return opendml_nudged(x, false);
    if (x != 0.0 && fabs(x) <= {_GELU_TINY.hex()}) return opendml_nudged(__dmul_rn(x, 0.5), true);
    const double a = __dmul_rn(x, {_C1.hex()});
    const double b = __dmul_rn(x, {_C2.hex()});
    const double s = __dadd_rn(a, b);
    const double ds = __dsub_rn(b, __dsub_rn(s, a));
    const double slope = __dmul_rn({_TWO_OVER_ROOT_PI.hex()}, exp(-__dmul_rn(s, s)));
    return __dmul_rn(__dmul_rn(x, 0.5), __dadd_rn(erfc(-s), __dmul_rn(slope, ds)));
}}
""")

FUNCTIONS.update({f.name: f for f in (
    _entry("EXPM1", np.expm1, math.expm1, "expm1"),
    RoundedFunction("SIGMOID", _sigmoid_array, _sigmoid, "opendml_sigmoid", _sigmoid_mp, _SIGMOID_C),
    RoundedFunction("SOFTPLUS", _softplus_array, _softplus, "opendml_softplus", _softplus_mp, _SOFTPLUS_C),
    RoundedFunction("SOFTSIGN", _softsign_array, _softsign, "opendml_softsign", _softsign_mp, _SOFTSIGN_C),
    RoundedFunction("GELU", _gelu_array, _gelu, "opendml_gelu", _gelu_mp, _GELU_C),
)})
