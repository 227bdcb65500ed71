"""Activations of a few IEEE operations.

SOFTSIGN
--------
For finite ``d`` (else redo: the infinities give +-1 and NaN NaN on the exact path), ``d / (1 + |d|)``: two
roundings, within 2 ulps; a zero keeps its sign.
"""

from __future__ import annotations

import numpy as np

from ..arithmetic import divide
from .checks import inline


@inline
def SOFTSIGN(v):  # type: ignore[no-untyped-def]
    """SOFTSIGN's evaluation of a FLOAT32 value, and whether the value is inside its range."""
    d = np.float64(v)
    inside = abs(d) < np.inf  # False for NaN and the infinities
    x = d if inside else 0.5
    return divide(x, 1.0 + abs(x)), inside
