"""The correctly rounded functions of two FLOAT32 values, POW (``pow(x, e)``) and ATAN_YX (``atan2(a, b)``): the
same bits on every backend, without a table (2**64 pairs have none).

The route
---------
Each backend evaluates the double function of its library (``pow``, ``atan2``: NumPy's, the C library's through
Numba, CUDA's; error at most ``E = 8`` double ulps, as ``opendml.rounded``'s unary functions) and applies the
same rounding test (``method.midpoint_distance``): a double farther than ``NEAR`` ulps from the format's nearest
midpoint is rounded as it is, and is the correctly rounded result. The rare flagged pairs (about 1 in 10**7 for
FLOAT32) are decided by ``exact_pow`` and ``exact_atan2`` below: a double-double evaluation of the project's own
(about 100 bits), written once in plain Python (the NumPy lowering runs it on the flagged elements, Numba
compiles it as it is) and once in CUDA C (``opendml.backends.cuda.rounded_binary_c``), with only IEEE additions,
multiplications, divisions and square roots (never contracted), so every backend gives the same double-double
and the same decision (``round_double_double``):

- the exact value ``v`` lies on the side of the nearest midpoint ``m`` that ``hi - m + lo`` says, where that
  exceeds ``TIE = 2**-93 |m|``: the evaluation's error is below ``2**-95 |v|`` (``exp`` of a logarithm whose
  absolute error, scaled by the exponent, is at most about ``2**-96.3``; ``atan2`` about ``2**-100``);
- within ``TIE`` of a midpoint, ``v`` is taken as the midpoint itself, rounded to even. The pairs whose value *is*
  a midpoint land there: ``pow`` with an integral exponent whose power has one bit more than the format (``(1 +
  2**-12)**2``), ``x**0.5`` of such a square, ``x**(n / 2**k)`` of a ``2**k``-th power; ``atan2`` of two nonzero
  finite values is transcendental, never a midpoint. A value that is not a midpoint but lies within ``TIE`` of one
  would be rounded as a tie; heuristically (distances to the nearest midpoint spread evenly) the expected count
  of such pairs among all 2**64 FLOAT32 pairs is about 2**62 * 2**-93 * 2**25 = 2**-6, and none is known:
  ``benchmarks/rounding.py --pairs`` checks random pairs and the known hard cases against mpmath.

Special inputs (zeros, infinities, NaN, a negative base with a non-integral exponent) are the double function's,
which C99's Annex F fixes for every library alike (``pow(x, 0) = 1``, ``pow(1, y) = 1`` even for NaN, ``pow(-1,
+-inf) = 1``, ``atan2(+-0, -0) = +-pi``...); their results are never near a midpoint, so the double is rounded.

The double-double steps (``hi + lo`` with ``|lo| <= ulp(hi) / 2``): Knuth's TwoSum, Dekker's product with
Veltkamp's split (no fused multiply-add: the split's constant ``2**27 + 1``), and the usual sum, product and
quotient built on them (each within a few ``2**-106`` relative). ``log`` reduces ``x = 2**q m`` with ``m`` in
``[sqrt(1/2), sqrt(2))`` and sums ``2 atanh(s)``, ``s = (m - 1) / (m + 1)`` (``|s| <= 0.172``: 22 terms of
``s**(2n) / (2n + 1)``); ``exp`` reduces ``t = k ln 2 + r`` (``ln 2`` in three parts, the first of 40 bits, so
``k L1`` is exact) and sums 24 Taylor terms of ``exp(r)``, ``|r| <= 0.35``; ``atan`` of ``z`` in ``(0, 1]`` halves
the angle three times (``z / (1 + sqrt(1 + z**2))``) and sums 18 terms of its series at ``|z| <= 0.0985``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .method import _jitable

TIE = 2.0**-93  # within this relative distance of a midpoint, the exact value is taken as the midpoint

_SPLIT = 134217729.0  # 2**27 + 1, Veltkamp's constant
_LN2_HI = float.fromhex("0x1.62e42fefa39efp-1")  # ln 2 as a double-double
_LN2_LO = float.fromhex("0x1.abc9e3b39803fp-56")
_LN2_1 = float.fromhex("0x1.62e42fefa2p-1")  # ln 2 in three parts, the first of 40 bits (k * _LN2_1 exact)
_LN2_2 = float.fromhex("0x1.9ef35793c7673p-41")
_LN2_3 = float.fromhex("0x1.f97b57a079a19p-103")
_INV_LN2 = float.fromhex("0x1.71547652b82fep+0")
_PI_HI = float.fromhex("0x1.921fb54442d18p+1")  # pi as a double-double
_PI_LO = float.fromhex("0x1.1a62633145c07p-53")
_SQRT_HALF = float.fromhex("0x1.6a09e667f3bcdp-1")
_LOG_TERMS = 22
_EXP_TERMS = 24
_ATAN_TERMS = 18


@_jitable
def _two_sum(a: float, b: float) -> tuple[float, float]:
    s = a + b
    v = s - a
    return s, (a - (s - v)) + (b - v)


@_jitable
def _fast_two_sum(a: float, b: float) -> tuple[float, float]:
    """``a + b`` and its rounding error, for ``|a| >= |b|`` (or ``a`` zero)."""
    s = a + b
    return s, b - (s - a)


@_jitable
def _split(a: float) -> tuple[float, float]:
    c = _SPLIT * a
    high = c - (c - a)
    return high, a - high


@_jitable
def _two_product(a: float, b: float) -> tuple[float, float]:
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


@_jitable
def _add(ah: float, al: float, bh: float, bl: float) -> tuple[float, float]:
    s, e = _two_sum(ah, bh)
    t, f = _two_sum(al, bl)
    s, e = _fast_two_sum(s, e + t)
    return _fast_two_sum(s, e + f)


@_jitable
def _multiply(ah: float, al: float, bh: float, bl: float) -> tuple[float, float]:
    p, e = _two_product(ah, bh)
    return _fast_two_sum(p, e + (ah * bl + al * bh))


@_jitable
def _divide(ah: float, al: float, bh: float, bl: float) -> tuple[float, float]:
    """``a / b`` by three quotient digits, each the remainder's leading part over ``bh``."""
    q1 = ah / bh
    ph, pl = _multiply(bh, bl, q1, 0.0)
    rh, rl = _add(ah, al, -ph, -pl)
    q2 = rh / bh
    ph, pl = _multiply(bh, bl, q2, 0.0)
    rh, rl = _add(rh, rl, -ph, -pl)
    q3 = rh / bh
    qh, ql = _fast_two_sum(q1, q2)
    return _add(qh, ql, q3, 0.0)


@_jitable
def _sqrt(ah: float, al: float) -> tuple[float, float]:
    """The square root of a positive double-double: the double's, corrected by one Newton step."""
    s = math.sqrt(ah)
    p, e = _two_product(s, s)
    return _fast_two_sum(s, (((ah - p) - e) + al) / (s + s))


# The atanh series' coefficients 1 / (2n + 1) as double-doubles, each the quotient ``_divide`` gives (so a table
# changes no bit of the evaluation that divided at each step), for n = 0 .. _LOG_TERMS.
_LOG_HI = np.array([_divide(1.0, 0.0, float(2 * n + 1), 0.0)[0] for n in range(_LOG_TERMS + 1)])
_LOG_LO = np.array([_divide(1.0, 0.0, float(2 * n + 1), 0.0)[1] for n in range(_LOG_TERMS + 1)])


@_jitable
def log_scaled(q: float, th: float, tl: float) -> tuple[float, float]:
    """``ln(2**q (1 + t))`` as a double-double, for an integral ``q`` and a double-double ``t = th + tl`` with
    ``1 + t`` in about ``[sqrt(1/2), sqrt(2)]``: ``q ln 2 + 2 atanh(s)``, ``s = t / (2 + t)`` (``|s| <= 0.172``).
    ``s`` is relative to ``t``, so a ``1 + t`` near 1 loses nothing to cancellation."""
    dh, dl = _add(2.0, 0.0, th, tl)
    sh, sl = _divide(th, tl, dh, dl)
    s2h, s2l = _multiply(sh, sl, sh, sl)
    ah, al = _LOG_HI[_LOG_TERMS], _LOG_LO[_LOG_TERMS]
    for n in range(_LOG_TERMS - 1, -1, -1):
        ah, al = _multiply(ah, al, s2h, s2l)
        ah, al = _add(ah, al, _LOG_HI[n], _LOG_LO[n])
    lh, ll = _multiply(sh, sl, ah, al)
    kh, kl = _two_product(q, _LN2_HI)
    return _add(kh, kl + q * _LN2_LO, lh + lh, ll + ll)


@_jitable
def _log(x: float) -> tuple[float, float]:
    """``ln x`` of a positive finite FLOAT32 value (a normal double), as a double-double."""
    m, q = math.frexp(x)
    if m < _SQRT_HALF:
        m = m + m
        q -= 1
    # m - 1 is exact, and so is 2 + (m - 1) = m + 1: m has at most 24 significant bits and lies in [0.70, 1.42)
    return log_scaled(float(q), m - 1.0, 0.0)


@_jitable
def _exp(th: float, tl: float) -> tuple[float, float]:
    """``exp(t)`` of a double-double ``|t| < 745``, as a double-double (the power of two applied last)."""
    k = float(math.floor(th * _INV_LN2 + 0.5))
    ph, pl = _two_product(k, _LN2_2)
    rh, rl = _add(th - k * _LN2_1, 0.0, -ph, -pl)  # th - k * _LN2_1: exact (Sterbenz)
    rh, rl = _add(rh, rl, tl, -(k * _LN2_3))
    ah, al = 1.0, 0.0
    for n in range(_EXP_TERMS, 0, -1):  # 1 + r (1 + r / 2 (1 + r / 3 (...)))
        ah, al = _multiply(ah, al, rh, rl)
        ah, al = _divide(ah, al, float(n), 0.0)
        ah, al = _add(1.0, 0.0, ah, al)
    return math.ldexp(ah, int(k)), math.ldexp(al, int(k))


@_jitable
def exact_pow(x: float, e: float) -> tuple[float, float]:
    """``pow(x, e)`` as a double-double, for finite nonzero FLOAT32 values ``x`` and ``e`` (``x < 0`` only with
    an integral ``e``) whose power is a finite nonzero double."""
    lh, ll = _log(abs(x))
    th, tl = _multiply(lh, ll, e, 0.0)
    rh, rl = _exp(th, tl)
    if x < 0.0 and 0.5 * e != math.floor(0.5 * e):  # a negative base to an odd power (e integral)
        return -rh, -rl
    return rh, rl


@_jitable
def _atan(zh: float, zl: float) -> tuple[float, float]:
    """``atan(z)`` of a double-double ``z`` in ``(0, 1]``."""
    for _ in range(3):  # atan(z) = 2 atan(z / (1 + sqrt(1 + z**2)))
        wh, wl = _multiply(zh, zl, zh, zl)
        wh, wl = _add(1.0, 0.0, wh, wl)
        wh, wl = _sqrt(wh, wl)
        wh, wl = _add(1.0, 0.0, wh, wl)
        zh, zl = _divide(zh, zl, wh, wl)
    z2h, z2l = _multiply(zh, zl, zh, zl)
    ah, al = _divide(1.0, 0.0, float(2 * _ATAN_TERMS + 1), 0.0)
    for n in range(_ATAN_TERMS - 1, -1, -1):  # 1 - z**2 / 3 + z**4 / 5 - ...
        ah, al = _multiply(ah, al, -z2h, -z2l)
        ch, cl = _divide(1.0, 0.0, float(2 * n + 1), 0.0)
        ah, al = _add(ah, al, ch, cl)
    ah, al = _multiply(ah, al, zh, zl)
    return 8.0 * ah, 8.0 * al


@_jitable
def exact_atan2(a: float, b: float) -> tuple[float, float]:
    """``atan2(a, b)`` as a double-double, for finite nonzero FLOAT32 values ``a`` (y) and ``b`` (x)."""
    ya, xb = abs(a), abs(b)
    steep = ya > xb
    num, den = (xb, ya) if steep else (ya, xb)
    qh, ql = _divide(num, 0.0, den, 0.0)
    rh, rl = _atan(qh, ql)
    if steep:  # pi / 2 - atan(|b / a|)
        rh, rl = _add(0.5 * _PI_HI, 0.5 * _PI_LO, -rh, -rl)
    if b < 0.0:  # pi - the angle of (|b|, |a|)
        rh, rl = _add(_PI_HI, _PI_LO, -rh, -rl)
    return (-rh, -rl) if a < 0.0 else (rh, rl)


@_jitable
def round_double_double(hi: float, lo: float, base: int, lowest: int, top: float) -> float:
    """The finite double-double ``hi + lo`` (within ``2**-95`` relative of the exact value) rounded once to the
    format (``Precision.base``, ``lowest``, ``top``) as a double: by the side of the nearest midpoint its
    excess says; within ``TIE`` of the midpoint, the midpoint rounded to even; an infinity at ``top`` or
    beyond. Only ``frexp``, ``ldexp``, ``floor`` and exact arithmetic: every backend spells it alike."""
    magnitude = abs(hi)
    tail = lo if hi > 0.0 else -lo
    _, exponent = math.frexp(magnitude)
    # the format's grid at |hi|: 2**step, the double's own ulp times 2**(base + the subnormal widening)
    step = exponent - 53 + base + max(0, lowest - 1022 - exponent)
    cell = float(math.floor(math.ldexp(magnitude, -step)))
    midpoint = math.ldexp(2.0 * cell + 1.0, step - 1)
    excess = (magnitude - midpoint) + tail  # magnitude - midpoint is exact: both lie in one cell of the grid
    if abs(excess) <= TIE * midpoint:
        kept = cell + (cell - 2.0 * math.floor(0.5 * cell))  # a tie: to the even neighbour
    elif excess > 0.0:
        kept = cell + 1.0
    else:
        kept = cell
    result = math.ldexp(kept, step)
    if result >= top:
        result = math.inf
    return -result if hi < 0.0 else result


@_jitable
def pow_decided(x: float, e: float, base: int, lowest: int, top: float) -> float:
    """POW of a flagged pair rounded to the format: its double-double decided."""
    hi, lo = exact_pow(x, e)
    return round_double_double(hi, lo, base, lowest, top)


@_jitable
def atan2_decided(a: float, b: float, base: int, lowest: int, top: float) -> float:
    """ATAN_YX of a flagged pair rounded to the format: its double-double decided."""
    hi, lo = exact_atan2(a, b)
    return round_double_double(hi, lo, base, lowest, top)


def _pow_array(x: np.ndarray, e: np.ndarray) -> np.ndarray:
    return np.power(x, e)


@dataclass(frozen=True)
class BinaryFunction:
    """``name`` (DirectML's: ``POW``, ``ATAN_YX``), ``numpy`` (two float64 arrays to one), ``scalar`` (Python's
    ``math`` function, which Numba compiles to the C library's), ``c`` (the CUDA double function's name),
    ``decided`` (the flagged pairs' rounding, ``pow_decided``), ``c_decided`` (its CUDA twin's name) and ``mp``
    (mpmath's function's name, for the table-free tools)."""

    name: str
    numpy: Callable[[np.ndarray, np.ndarray], np.ndarray]
    scalar: Callable[[float, float], float]
    c: str
    decided: Callable[[float, float, int, int, float], float]
    c_decided: str
    mp: str


BINARY_FUNCTIONS: dict[str, BinaryFunction] = {f.name: f for f in (
    BinaryFunction("POW", _pow_array, math.pow, "pow", pow_decided, "opendml_pow_decided", "power"),
    BinaryFunction("ATAN_YX", np.arctan2, math.atan2, "atan2", atan2_decided, "opendml_atan2_decided", "atan2"),
)}
