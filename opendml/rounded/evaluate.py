"""A correctly rounded function over NumPy arrays (the NumPy lowering's, and the reference's): each value's
double evaluation rounded to the precision, the few near a midpoint looked up among the hard cases."""

from __future__ import annotations

import numpy as np

from .binary import BINARY_FUNCTIONS
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


def evaluate_binary(name: str, a: np.ndarray, b: np.ndarray, precision: str) -> np.ndarray:
    """``name``'s function (POW, ATAN_YX: ``opendml.rounded.binary``) of the FLOAT32 values ``a`` and ``b``
    (broadcast together), correctly rounded to ``precision``, as FLOAT32 values: NumPy's double function
    rounded, the few pairs near a midpoint decided by the double-double evaluation (plain Python, as Numba
    compiles it)."""
    a, b = np.broadcast_arrays(np.asarray(a, np.float32), np.asarray(b, np.float32))
    function, grid = BINARY_FUNCTIONS[name], PRECISIONS[precision]
    with np.errstate(all="ignore"):  # overflow, division by zero and invalid inputs give the defined results
        y = np.asarray(function.numpy(a.astype(np.float64), b.astype(np.float64)), np.float64)
        finite = np.isfinite(y)
        safe = np.where(finite, y, 0.0)
        rounded = (y if precision == "FLOAT32" else np.where(finite, rounds_to(safe, grid), y)).astype(np.float32)
        near = finite & (midpoint_distances(safe, grid) <= NEAR)
    rounded = np.array(rounded, np.float32).reshape(a.shape)
    for at in zip(*np.nonzero(near)):
        rounded[at] = function.decided(float(a[at]), float(b[at]), grid.base, grid.lowest, grid.top)
    return rounded
