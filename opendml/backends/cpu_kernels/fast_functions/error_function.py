"""The error function.

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
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numpy as np

from .checks import inline
from .trigonometric import _HALF_PI

DEGREE = 9  # the Taylor polynomial's degree (the module's docstring)
ERF_HIGH = 4.0  # from it (in magnitude) the evaluation is +-1


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


_TABLE = _erf_table()
(_D0, _D1, _D2, _D3, _D4, _D5, _D6, _D7, _D8, _D9) = (np.ascontiguousarray(_TABLE[:, n]) for n in range(DEGREE + 1))


@inline
def ERF(v):  # type: ignore[no-untyped-def]
    """ERF's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = abs(d) < np.inf  # False for NaN and the infinities
    a = min(abs(d), ERF_HIGH) if inside else 0.5
    j = np.int64(a * 32.0 + 0.5)
    h = a - np.float64(j) * 0.03125
    p = _D9[j]  # written out: a loop would keep the kernel's loop from vectorizing
    p = _D8[j] + h * p
    p = _D7[j] + h * p
    p = _D6[j] + h * p
    p = _D5[j] + h * p
    p = _D4[j] + h * p
    p = _D3[j] + h * p
    p = _D2[j] + h * p
    p = _D1[j] + h * p
    y = _D0[j] + h * p if a < ERF_HIGH else 1.0
    return math.copysign(y, d), inside
