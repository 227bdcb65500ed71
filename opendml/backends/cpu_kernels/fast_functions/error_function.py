"""The error function, and GELU on the scaled complementary error function.

ERF
---
For ``|d| < 4`` on ``a = |d|`` (the sign put back: odd, a zero keeps its sign): ``c = j / 32`` with ``j`` the
integer nearest ``32 a``, ``h = a - c`` (exact: Sterbenz's lemma for ``j >= 1``; ``|h| <= 2**-6``), and ``erf(a)``
by its Taylor polynomial at ``c`` to ``h**9``: ``erf(c) + sum d_n h**n`` with ``d_n = erf^(n)(c) / n! =
2 / sqrt(pi) (-1)**(n - 1) H_(n-1)(c) exp(-c**2) / n!`` (``H`` the Hermite polynomials), each coefficient the double
nearest a 40-digit value (``erf(c)`` by its series in Decimal). Over every center and ``|h| <= 2**-6`` the first
term left out is below ``2**-65`` of the result (checked with mpmath when the polynomial's degree was chosen). The
table's ``erf(c)`` and the sum of the rest (Horner, its first term ``d_1 h``, the others below ``2**-4`` of it)
cancel by at most a factor 2 (at ``j = 1``, ``h = -2**-6``; for ``j = 0`` the table's term is 0): within 5 ulps.

From ``|d| >= 4`` (finite) the evaluation is +-1 itself: the exact value lies within ``erfc(4) < 1.6e-8`` of it,
nearer than the midpoint below 1 of FLOAT32 (``2**-25`` away) and of FLOAT16 (``2**-12``), so it rounds to +-1 in
both, and the double +-1 is far from every midpoint (no redo). NaN and the infinities are left to the exact path.

GELU
----
``gelu(d) = d / 2 * erfc(w)`` with ``w = -d / sqrt(2)``, whose relative accuracy for ``d < 0`` needs ``erfc`` with
relative accuracy where it is tiny (``erf`` gives it only to an absolute ulp). As the exact path does
(``opendml.rounded.catalog``), ``d / sqrt(2)`` is carried as ``s + ds``: ``d * C1`` exact (``C1`` of 28 bits),
``d * C2`` (the next 53 bits) added by Fast2Sum, so ``s + ds`` is ``d / sqrt(2)`` within ``2**-80`` relatively.
With ``a = |s|`` and ``erfc(v) = exp(-v**2) erfcx(v)`` (``erfcx``, the scaled complementary error function, smooth
and between ``0.05`` and 1 on ``[0, 10.25]``), to first order in ``ds`` (the second-order term is below
``2 a**2 ds**2``: under ``2**-90`` relatively) ``erfc(w) = T`` where ``s < 0`` and ``2 - T`` where not, with ``T
= exp(-a**2) (erfcx(a) + 2 / sqrt(pi) dd)`` and ``dd = ds`` (``s < 0``) or ``-ds``.

``erfcx(a)`` by its Taylor polynomial to ``h**9`` at ``c = j / 32`` (``j`` nearest ``32 a``, ``h = a - c`` exact,
``|h| <= 2**-6``): ``e_n = erfcx^(n)(c) / n!``, from ``erfcx' = 2 v erfcx - 2 / sqrt(pi)`` (``_erfcx_table``: 420-bit
fixed point, each coefficient then rounded once to a double). The first term left out is below ``2**-66`` of
the result on every center (checked with mpmath when the degree was chosen); ``|e_1 h| <= 0.018 e_0``, so the
Horner sum does not cancel: within 2 ulps, and adding the ``dd`` term (below ``2**-46`` of it) within 3.
``exp(-a**2)``: ``a**2 = q + r`` exactly (Veltkamp's split of ``a``: ``|r| <= 2**-53 q < 2**-46``),
``exp(-q)`` (``exponential.exp_double``: within 4 ulps down to -708, where its scale stays a normal double)
times ``1 - r`` (``exp(-r)`` to below ``2**-92``): within 5 ulps and a half. ``T`` within 9 ulps; ``d / 2`` is
exact, and where ``s >= 0``, ``T <= 1 <= 2 - T``: the result within 10 ulps.

Below ``GELU_LOW`` (-14.41: ``|gelu(d)| < 2**-151`` there, so the result rounds to -0.0 in FLOAT32 and FLOAT16)
the evaluation is ``-2**-200`` (far from every midpoint: no redo). Past the table's end (``a > 10.25``: ``d >
14.49``, as ``d > GELU_LOW`` keeps ``a < 10.19``) ``erfc(w)`` is ``2 - T`` with ``T < 2**-150``, so ``a`` clamped
there gives the same double. NaN and the infinities are left to the exact path.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numpy as np

from .checks import fast_two_sum, inline, split
from .exponential import exp_double
from .trigonometric import _HALF_PI

DEGREE = 9  # the Taylor polynomials' degree (the module's docstring)
ERF_HIGH = 4.0  # from it (in magnitude) the evaluation is +-1
GELU_LOW = -14.41  # at or below it, GELU's evaluation is -2**-200 (the result rounds to -0.0)
_ERFCX_CENTERS = 330  # erfcx's centers j / 32: a clamped to 10.25 stays inside
_C1 = float.fromhex("0x1.6a09e66p-1")  # 1 / sqrt(2) to 28 bits: d * _C1 is exact for every FLOAT32 d
_C2 = float.fromhex("0x1.fcef32422cbecp-31")  # the next 53 bits of 1 / sqrt(2)


def _erf_sum(c: Decimal) -> Decimal:
    """``sum 2**n c**(2n+1) / (1 3 ... (2n+1))`` for ``0 <= c <= 4``: erf(c) is ``2 / sqrt(pi) exp(-c**2)`` times it
    (every term positive: no cancellation, so the context's precision is the sum's)."""
    term, total, n = c, Decimal(0), 0
    while term > Decimal(10) ** -50:
        total += term
        n += 1
        term = term * 2 * c * c / (2 * n + 1)
    return total


def _erf_table() -> np.ndarray:
    """``d_n(j / 32)`` for the 129 centers (rows) and ``n = 0 .. DEGREE`` (columns): the module's docstring."""
    table = np.zeros((129, DEGREE + 1), np.float64)
    with localcontext() as context:
        context.prec = 45  # each coefficient the double nearest a value good to 40 digits and more
        slope = 2 / (2 * _HALF_PI).sqrt()
        for j in range(129):
            c = Decimal(j) / 32
            hermite = [Decimal(1), 2 * c]  # H_0, H_1, ...
            for k in range(1, DEGREE):
                hermite.append(2 * c * hermite[k] - 2 * k * hermite[k - 1])
            scale = slope * (-c * c).exp()  # erf'(c)
            table[j, 0] = float(scale * _erf_sum(c))
            for n in range(1, DEGREE + 1):
                table[j, n] = float(scale * (-1) ** (n - 1) * hermite[n - 1] / math.factorial(n))
    return table


def _fixed_pi(bits: int) -> int:
    """pi times ``2**bits``, to within a few units (Machin's formula in integers)."""
    def arctan_inverse(n: int) -> int:  # atan(1 / n) times 2**(bits + 16)
        one = 1 << (bits + 16)
        term, total, k = one // n, 0, 0
        while term:
            total += term // (2 * k + 1) if k % 2 == 0 else -(term // (2 * k + 1))
            term //= n * n
            k += 1
        return total
    return (16 * arctan_inverse(5) - 4 * arctan_inverse(239)) >> 16


def _erfcx_table() -> np.ndarray:
    """``e_n(j / 32)`` for the centers (rows) and ``n = 0 .. DEGREE`` (columns), in 420-bit fixed point: from
    ``erfcx(0) = 1``, each center's coefficients by the recurrence ``e_(n+1) = (2 c e_n + 2 e_(n-1)) / (n + 1)``
    (``e_1 = 2 c e_0 - 2 / sqrt(pi)``), and the next center's ``erfcx`` by the whole series at ``h = 1 / 32``. The
    step multiplies an error by ``exp(c**2)``'s growth, at most ``2**156`` over the table: the coefficients keep
    far more than a double's 53 bits."""
    bits = 420
    one = 1 << bits
    slope = (2 << (2 * bits)) // math.isqrt(_fixed_pi(bits) << bits)  # 2 / sqrt(pi)
    table = np.zeros((_ERFCX_CENTERS, DEGREE + 1), np.float64)
    value = one  # erfcx(0)
    for j in range(_ERFCX_CENTERS):
        e = [value, (j * value >> 4) - slope]  # 2 c = j / 16
        n = 1
        while n <= DEGREE or abs(e[n]) >> 5 * n or abs(e[n - 1]) >> 5 * n - 5:  # to the series' last term
            e.append(((j * e[n] >> 4) + 2 * e[n - 1]) // (n + 1))
            n += 1
        table[j] = [e[k] / one for k in range(DEGREE + 1)]  # int / int: rounded once, to nearest
        value = sum(term >> 5 * k for k, term in enumerate(e))  # erfcx(c + 1 / 32)
    return table


_TABLE = _erf_table()
(_D0, _D1, _D2, _D3, _D4, _D5, _D6, _D7, _D8, _D9) = (np.ascontiguousarray(_TABLE[:, n]) for n in range(DEGREE + 1))
_ERFCX = _erfcx_table()
(_E0, _E1, _E2, _E3, _E4, _E5, _E6, _E7, _E8, _E9) = (np.ascontiguousarray(_ERFCX[:, n]) for n in range(DEGREE + 1))
_A_END = 10.25  # where a is clamped: past GELU_LOW's 10.19, and 32 * 10.25 rounds to a center of the table
_TWO_OVER_ROOT_PI = float.fromhex("0x1.20dd750429b6dp+0")  # 2 / sqrt(pi)
_UNDER = -(2.0**-200)  # GELU's evaluation at or below GELU_LOW


@inline
def _taylor(j, h, c0, c1, c2, c3, c4, c5, c6, c7, c8, c9):  # type: ignore[no-untyped-def]
    """``sum c_n[j] h**n`` by Horner's rule (written out: a loop would keep the kernel's loop from vectorizing)."""
    p = c9[j]
    p = c8[j] + h * p
    p = c7[j] + h * p
    p = c6[j] + h * p
    p = c5[j] + h * p
    p = c4[j] + h * p
    p = c3[j] + h * p
    p = c2[j] + h * p
    p = c1[j] + h * p
    return c0[j] + h * p


@inline
def ERF(v):  # type: ignore[no-untyped-def]
    """ERF's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = abs(d) < np.inf  # False for NaN and the infinities
    a = min(abs(d), ERF_HIGH) if inside else 0.5
    j = np.int64(a * 32.0 + 0.5)
    h = a - np.float64(j) * 0.03125
    taylor = _taylor(j, h, _D0, _D1, _D2, _D3, _D4, _D5, _D6, _D7, _D8, _D9)
    y = taylor if a < ERF_HIGH else 1.0
    return math.copysign(y, d), inside


@inline
def GELU(v):  # type: ignore[no-untyped-def]
    """GELU's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = abs(d) < np.inf  # False for NaN and the infinities
    x = d if inside else 0.5
    s, ds = fast_two_sum(x * _C1, x * _C2)  # the first product exact: s + ds = d / sqrt(2) within 2**-80
    a = min(abs(s), _A_END)
    j = np.int64(a * 32.0 + 0.5)
    h = a - np.float64(j) * 0.03125
    p = _taylor(j, h, _E0, _E1, _E2, _E3, _E4, _E5, _E6, _E7, _E8, _E9)
    p = p + _TWO_OVER_ROOT_PI * (ds if s < 0.0 else -ds)
    top, rest = split(a)
    q = a * a
    r = ((top * top - q) + 2.0 * top * rest) + rest * rest  # a**2 - q, exactly
    t = (exp_double(-q) * (1.0 - r)) * p
    y = (x * 0.5) * (t if s < 0.0 else 2.0 - t)
    return (y if x > GELU_LOW else _UNDER), inside
