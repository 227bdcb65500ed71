"""ARGMIN's comparison keys, the state a reduction keeps per output slot, and how states merge.

Elements are compared as integer keys (``key_of``): an order-preserving map that makes -0.0 and +0.0 equal
and sends every NaN to the largest key, which no number reaches, so comparisons need no NaN rule and
vectorise as integer min/compare instructions. A task reduces part of the input into per-slot state (key,
index, found); slots are the output elements in row-major order. Within a task each slot sees its elements
in increasing index order, so a strict ``<`` (INCREASING) or ``<=`` (DECREASING) keeps the right one of
equal keys; merges (``argmin_drivers.merge_range``) compare indices explicitly, so tasks may cover any
parts in any order.

The element types are told apart at compile time by the type of ``kind`` (and the direction by the type
of ``order``): Numba compiles one specialisation per combination, so no comparison tests them at run time.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from .jit import jit

FLOAT = np.zeros(1, np.float32)  # passed as ``kind`` for FLOAT32 data read as int32 bits
HALF = np.zeros(1, np.uint16)  # passed as ``kind`` for FLOAT16 data read as uint16 bits (None: integers)
DECREASING = np.zeros(1, np.uint8)  # passed as ``order`` for AxisDirection DECREASING (None: INCREASING)
FLOAT_NAN_KEY = np.int32(0x7FFFFFFF)
HALF_NAN_KEY = np.int16(0x7FFF)


def key_of(v, kind):  # type: ignore[no-untyped-def]
    """An element's comparison key: integers as they are; float bits as sign-and-magnitude, NaN largest."""


@overload(key_of, jit_options={"cache": True})
def _key_of(v, kind):  # type: ignore[no-untyped-def]
    if isinstance(kind, types.NoneType):
        return lambda v, kind: v
    if kind.dtype == types.float32:
        def float_key(v, kind):  # type: ignore[no-untyped-def]
            magnitude = np.int32(v & np.int32(0x7FFFFFFF))
            key = np.int32(-magnitude) if v < 0 else magnitude
            return FLOAT_NAN_KEY if magnitude > np.int32(0x7F800000) else key
        return float_key

    def half_key(v, kind):  # type: ignore[no-untyped-def]
        magnitude = np.int16(v & np.uint16(0x7FFF))
        key = np.int16(-magnitude) if v & np.uint16(0x8000) else magnitude
        return HALF_NAN_KEY if magnitude > np.int16(0x7C00) else key
    return half_key


def found_key(key, kind):  # type: ignore[no-untyped-def]
    """Whether a reduction's best key is an element's (False: every element was NaN)."""


@overload(found_key, jit_options={"cache": True})
def _found_key(key, kind):  # type: ignore[no-untyped-def]
    if isinstance(kind, types.NoneType):
        return lambda key, kind: True
    if kind.dtype == types.float32:
        return lambda key, kind: key != FLOAT_NAN_KEY
    return lambda key, kind: key != HALF_NAN_KEY


def takes(v, best, order):  # type: ignore[no-untyped-def]
    """Whether key ``v``, met after ``best``, replaces it: strictly smaller (INCREASING) or not larger."""


@overload(takes, jit_options={"cache": True})
def _takes(v, best, order):  # type: ignore[no-untyped-def]
    if isinstance(order, types.NoneType):
        return lambda v, best, order: v < best
    return lambda v, best, order: v <= best


@jit
def replaces(key, index, best, best_index, order):  # type: ignore[no-untyped-def]
    """Whether a found (key, index) replaces a slot's (best, best_index): a smaller key, or an equal key
    at the index the direction prefers (SPEC 7).

    Scalars only: the callers store into the state arrays themselves, because a call taking arrays costs
    reference counting that LLVM does not remove, as much as reducing a short row.
    """
    return key < best or (key == best and ((index < best_index) if order is None else (index > best_index)))


@jit
def fill_missing(idx, default):  # type: ignore[no-untyped-def]
    """Slots that found nothing (every element NaN) take the default index (SPEC 8.5)."""
    for s in range(idx.size):
        if idx[s] < 0:
            idx[s] = default



# FLOAT32 (FLOAT16) bits as integers that order as the floats, in three instructions an element: a
# negative's magnitude bits are flipped (its key minus one, so -0.0 lands just under +0.0; a positive's bits
# are its key), then the flipped bits of -inf plus the sign bit are subtracted, so that -inf becomes the
# least signed integer and every NaN, of either sign, lands above +inf (the processor has no unsigned
# vector comparison). ``unflip`` turns the smallest back into a key. The block minimum (``flipped_min``)
# needs only that key; a row reduced in one pass (``lane_argmin``: each vector lane keeps its own smallest
# and the vector where it was found, strictly smaller for INCREASING, not larger for DECREASING, then the
# lanes are reduced to the smallest and, among lanes holding it, the first or last element) has its zeros
# searched again as equals when its minimum is a zero.

FLIP_SHIFT = 0x007FFFFF  # FLOAT32: -inf's flipped bits, 0x807FFFFF, plus the sign bit
FLIP = {32: (0x7FFFFFFF, FLIP_SHIFT), 16: (0x7FFF, 0x03FF)}  # magnitude mask, shift


def unflip(raw, kind):  # type: ignore[no-untyped-def]
    """A key from ``lane_argmin``'s raw key."""


@overload(unflip, jit_options={"cache": True})
def _unflip(raw, kind):  # type: ignore[no-untyped-def]
    if isinstance(kind, types.NoneType):
        return lambda raw, kind: raw
    if kind.dtype == types.float32:
        def float_key(raw, kind):  # type: ignore[no-untyped-def]
            if raw > np.int32(0x7F000001):  # above +inf: NaN
                return FLOAT_NAN_KEY
            f = np.int32(raw + np.int32(FLIP_SHIFT))
            return np.int32(f + 1) if f < 0 else f
        return float_key

    def half_key(raw, kind):  # type: ignore[no-untyped-def]
        r = np.int16(raw)  # FLOAT16 bits are read as uint16
        if r > np.int16(0x7801):
            return HALF_NAN_KEY
        f = np.int16(r + np.int16(0x03FF))
        return np.int16(f + 1) if f < 0 else f
    return half_key


def key_bits(key, kind):  # type: ignore[no-untyped-def]
    """``(mask, bits)``: the elements whose key is ``key`` are those with ``element & mask == bits``."""


@overload(key_bits, jit_options={"cache": True})
def _key_bits(key, kind):  # type: ignore[no-untyped-def]
    if isinstance(kind, types.NoneType):
        return lambda key, kind: (~type(key)(0), key)
    if kind.dtype == types.float32:
        def float_bits(key, kind):  # type: ignore[no-untyped-def]
            if key == 0:  # -0.0 and +0.0
                return np.int32(0x7FFFFFFF), np.int32(0)
            return np.int32(-1), np.int32(key if key > 0 else np.int32(-key) | np.int32(-0x80000000))
        return float_bits

    def half_bits(key, kind):  # type: ignore[no-untyped-def]
        if key == 0:
            return np.uint16(0x7FFF), np.uint16(0)
        return np.uint16(0xFFFF), np.uint16(key) if key > 0 else np.uint16(np.uint16(-key) | np.uint16(0x8000))
    return half_bits
