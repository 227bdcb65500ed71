"""A correctly rounded function over NumPy arrays (the NumPy lowering's, and the reference's): each value's
double evaluation rounded to the precision, the few near a midpoint looked up among the hard cases."""

from __future__ import annotations

import numpy as np

from .catalog import FUNCTIONS
from .method import NEAR, PRECISIONS, midpoint_distances, rounds_to
from .tables import hard_cases, look_up


def evaluate(name: str, v: np.ndarray, precision: str) -> np.ndarray:
    """``name``'s function of the FLOAT32 values ``v``, correctly rounded to ``precision`` (``FLOAT32`` or
    ``FLOAT16``), as FLOAT32 values (a FLOAT16 result held exactly)."""
    v = np.asarray(v, np.float32)
    with np.errstate(all="ignore"):  # overflow, division by zero and invalid inputs give the defined results
        y = np.asarray(FUNCTIONS[name].numpy(v.astype(np.float64)), np.float64)
        finite = np.isfinite(y)
        grid = PRECISIONS[precision]
        safe = np.where(finite, y, 0.0)
        rounded = (y if precision == "FLOAT32" else np.where(finite, rounds_to(safe, grid), y)).astype(np.float32)
        near = finite & (midpoint_distances(safe, grid) <= NEAR)
    if near.any():
        flat = rounded.reshape(-1)
        where = np.flatnonzero(near)
        fixed = look_up(hard_cases(name, precision), v.reshape(-1)[where].view(np.uint32),
                        flat[where].view(np.uint32))
        flat[where] = fixed.view(np.float32)
    return rounded
