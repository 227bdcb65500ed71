"""Activations on their own: SOFTSIGN (a few IEEE operations) and SOFTPLUS.

SOFTSIGN
--------
For finite ``d`` (else redo: the infinities give +-1 and NaN NaN on the exact path), ``d / (1 + |d|)``: two
roundings, within 2 ulps; a zero keeps its sign.

SOFTPLUS
--------
For ``-100 < d < inf`` (else redo: below, the result is within a few ulps of ``exp(d)`` near the bottom of the
format, and NaN and +inf give themselves, on the exact path): ``max(d, 0) + log1p(exp(-|d|))`` (``exponential``:
``exp(-min(|d|, 100))`` within 4 ulps (at ``|d| >= 100`` the second term is below ``2**-143``, far below an ulp of
``d``), and ``log1p`` of it within 11 more, its condition number at most 1); two positive terms: within 16 ulps.
"""

from __future__ import annotations

import numpy as np

from ..arithmetic import divide
from .checks import inline
from .exponential import exp_double, log1p_double


@inline
def SOFTSIGN(v):  # type: ignore[no-untyped-def]
    """SOFTSIGN's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = abs(d) < np.inf  # False for NaN and the infinities
    x = d if inside else 0.5
    return divide(x, 1.0 + abs(x)), inside


SOFTPLUS_LOW = -100.0  # the range of SOFTPLUS's evaluation (open, from below)


@inline
def SOFTPLUS(v):  # type: ignore[no-untyped-def]
    """SOFTPLUS's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = (d > SOFTPLUS_LOW) & (d < np.inf)  # False for NaN
    x = d if inside else 0.0
    return max(x, 0.0) + log1p_double(exp_double(-min(abs(x), 100.0))), inside
