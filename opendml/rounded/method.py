"""The rounding test and the rounding of a float64 to a narrower format, written once as integer arithmetic on
the double's bits: ``midpoint_distance`` and ``round_to`` are plain Python on scalars, which Numba compiles as
they are; ``midpoint_distances`` and ``rounds_to`` are the same steps over NumPy arrays, and the CUDA C in
``opendml.backends.cuda.rounded_c`` spells them once more (tests/test_rounded.py holds the three to the same
answers).

A finite nonzero double ``y`` is ``s * 2**(e - 1075)`` with ``s`` its 53-bit significand (the implicit bit set
where the exponent field ``e`` is nonzero) and ``e`` taken as 1 for subnormal doubles. A format of ``p``
significant bits whose lowest normal exponent field (as a double's) is ``lowest`` has, at ``y``, the grid of
multiples of ``2**(e - 1075 + k)`` with ``k = (53 - p) + max(0, lowest - e)`` (wider below the format's normal
range, where its ulp stops shrinking). Rounding ``y`` to the format keeps ``s >> k`` and decides by the ``k``
bits below; the nearest midpoint is ``|low - 2**(k - 1)|`` ulps of ``y`` away. ``k`` is capped at 60: there
``y`` is below a quarter of the format's smallest subnormal, rounds to zero and is far from every midpoint.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

# The scalar functions Numba compiles as they are written (these steps, the catalog's formulas, the binary
# functions' double-double steps): registered with Numba by ``register_for_numba`` when a Numba kernel first needs
# them, so that ``import opendml`` imports only NumPy (Numba is the fast extra).
JITABLE: list[Any] = []
_registered: set[int] = set()


def _jitable(function: Any) -> Any:
    JITABLE.append(function)
    return function


def register_for_numba() -> None:
    """Make every function of JITABLE callable from Numba-compiled code (idempotent)."""
    from numba.extending import register_jitable

    for function in JITABLE:
        if id(function) not in _registered:
            register_jitable(function)
            _registered.add(id(function))


NEAR = 32  # a double within this many ulps of a midpoint is looked up in the hard cases
BUILD = 256  # the tables hold every input whose evaluation by the builder fell within this many ulps

_FRACTION = (1 << 52) - 1
_MAGNITUDE = (1 << 63) - 1
_CAP = 60


@dataclass(frozen=True)
class Precision:
    """A format's rounding grid on doubles: ``base`` = 53 - its significant bits, ``lowest`` = the exponent
    field, as a double's, of its smallest normal value, ``top`` = the power of two its values stay below (a
    value rounded to it or beyond is an infinity)."""

    name: str
    base: int
    lowest: int
    top: float


FLOAT32 = Precision("FLOAT32", 53 - 24, 1023 - 126, 2.0**128)
FLOAT16 = Precision("FLOAT16", 53 - 11, 1023 - 14, 2.0**16)
PRECISIONS = {p.name: p for p in (FLOAT32, FLOAT16)}


@_jitable
def _parts(bits: int, base: int, lowest: int) -> tuple[int, int, int]:
    """A double's significand, the exponent field it scales by (1 for subnormals) and the grid's shift ``k``."""
    magnitude = bits & _MAGNITUDE
    field = magnitude >> 52
    significand = magnitude & _FRACTION
    if field == 0:
        field = 1
    else:
        significand |= 1 << 52
    return significand, field, min(base + max(0, lowest - field), _CAP)


FAR = 1 << 62  # the distance of a value no midpoint decides


@_jitable
def midpoint_distance(bits: int, base: int, lowest: int, top: float) -> int:
    """How many ulps of the finite double with these bits (an int64) lie between it and the nearest midpoint of
    the format (``Precision.base``, ``lowest``, ``top``); FAR at ``top`` and beyond, which round to infinity
    whatever their low bits (the last midpoint, between the largest value and ``top``, lies below it)."""
    significand, field, k = _parts(bits, base, lowest)
    if math.ldexp(float(significand), field - 1075) >= top:
        return FAR
    return abs((significand & ((1 << k) - 1)) - (1 << (k - 1)))


@_jitable
def round_to(y: float, bits: int, base: int, lowest: int, top: float) -> float:
    """The finite double ``y`` (whose bits are ``bits``) rounded once, to nearest with ties to even, to the
    format's grid, as a double: an infinity where it rounds to ``top`` or beyond."""
    significand, field, k = _parts(bits, base, lowest)
    kept = significand >> k
    low = significand & ((1 << k) - 1)
    half = 1 << (k - 1)
    if low > half or (low == half and (kept & 1) == 1):
        kept += 1
    magnitude = math.ldexp(float(kept), field - 1075 + k)
    if magnitude >= top:
        magnitude = math.inf
    return -magnitude if bits < 0 else magnitude


def _parts_of(bits: np.ndarray, precision: Precision) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    magnitude = bits & np.int64(_MAGNITUDE)
    field = magnitude >> np.int64(52)
    significand = magnitude & np.int64(_FRACTION)
    significand = np.where(field == 0, significand, significand | np.int64(1 << 52))
    field = np.maximum(field, 1)
    k = np.minimum(precision.base + np.maximum(0, precision.lowest - field), _CAP)
    return significand, field, k


def midpoint_distances(y: np.ndarray, precision: Precision) -> np.ndarray:
    """``midpoint_distance`` of each finite double of ``y`` (int64 ulps)."""
    significand, _, k = _parts_of(y.view(np.int64), precision)
    distance = np.abs((significand & ((np.int64(1) << k) - 1)) - (np.int64(1) << (k - 1)))
    return np.where(np.abs(y) >= precision.top, np.int64(FAR), distance)


def rounds_to(y: np.ndarray, precision: Precision) -> np.ndarray:
    """``round_to`` of each finite double of ``y`` (doubles)."""
    bits = y.view(np.int64)
    significand, field, k = _parts_of(bits, precision)
    kept = significand >> k
    low = significand & ((np.int64(1) << k) - 1)
    half = np.int64(1) << (k - 1)
    kept = kept + ((low > half) | ((low == half) & ((kept & 1) == 1)))
    magnitude = np.ldexp(kept.astype(np.float64), (field - 1075 + k).astype(np.int32))
    magnitude = np.where(magnitude >= precision.top, np.inf, magnitude)
    return np.where(bits < 0, -magnitude, magnitude)
