"""Powers: POW (ELEMENT_WISE_POW's and ELEMENT_WISE_CONSTANT_POW's ``BinaryFunction``).

POW
---
For a finite nonzero base ``x`` and a finite exponent ``y`` (else redo: zeros, infinities and NaN are C99's special
values on the exact path), a positive base, or a negative one with an integral ``y`` (``|x| ** y``, negated for an
odd ``y``: a FLOAT32 of magnitude ``2**24`` or more is even; a non-integral ``y`` gives NaN on the exact path):
``|x| ** y = exp(y log|x|)``.

``log|x| = hi + lo`` within ``2**-57`` relatively (``exponential.log_double_double``). ``y`` has 24 significant bits
and ``hi`` splits into two parts of 26 and 27 (Veltkamp's split), so ``y * hi`` is the exact sum of two exact
products, added by TwoSum; ``y * lo`` and the sum's error join them in the low part, and Fast2Sum gives ``t = th +
tl`` with ``y log|x| - t`` below ``2**-100 |t|``. So ``t`` is within ``2**-57 |t|`` of ``y log|x|``: where ``th`` is
in EXP's range (``-103 < th < 88``; else redo: overflow, and results near the bottom of FLOAT32, are the exact
path's), under ``2**-50.3`` absolutely, ``2**-50.3`` relatively in the power, about 3.2 ulps. ``exp(th)``
(``exponential.exp_double``) within 4 ulps, times ``1 + tl`` (``exp(tl)`` to below ``2**-90``: ``|tl| <= 2**-46``)
within half an ulp more: within 8 ulps.

The pairs whose power is a rounding midpoint (``(1 + 2**-12) ** 2``) lie within those ulps of it and are marked;
the exact path decides them (``opendml.rounded.binary``).
"""

from __future__ import annotations

import numpy as np

from .checks import fast_two_sum, inline, split, two_sum
from .exponential import EXP_HIGH, EXP_LOW, exp_double, log_double_double

_ODD_BELOW = 16777216.0  # 2**24: from it, every FLOAT32 is an even integer


@inline
def POW(v, w):  # type: ignore[no-untyped-def]
    """POW's evaluation of two FLOAT32 values (base, exponent), and whether the pair is inside its range."""
    x = np.float64(v)
    y = np.float64(w)
    magnitude = abs(x)
    small = abs(y) < _ODD_BELOW
    integral = np.floor(y) == y
    negative = (x < 0.0) & small & ((np.int64(y if small else 0.0) & 1) == 1)  # a negative base, an odd y
    inside = (magnitude > 0.0) & (magnitude < np.inf) & (abs(y) < np.inf) & ((x > 0.0) | integral)
    hi, lo = log_double_double(magnitude if inside else 1.0)
    e = y if inside else 0.0
    top, rest = split(hi)
    s, error = two_sum(e * top, e * rest)  # each product exact: 24 and 26 (27) significant bits
    th, tl = fast_two_sum(s, error + e * lo)  # |s| >= the rest, or s = 0
    inside = inside & (th > EXP_LOW) & (th < EXP_HIGH)
    r = exp_double(th if inside else 0.0)
    r = r + r * tl
    return (-r if negative else r), inside
