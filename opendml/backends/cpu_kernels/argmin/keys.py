"""ARGMIN's and ARGMAX's comparison keys, the state a reduction keeps per output slot, and how states merge.

Elements are compared as integer keys (``key_of``): an order-preserving map that makes -0.0 and +0.0 equal
and sends every NaN to one key (the largest, which no number reaches, under NanPolicy IGNORE; the smallest
under PROPAGATE), so comparisons need no NaN rule and vectorise as integer min/compare instructions. ARGMAX
is ARGMIN of order-reversed elements (``flip_order``: a float's sign bit flipped, which is its exact
negation, NaN staying NaN and the zeros a tie; an integer's bits complemented, which reverses the order of
signed and unsigned integers alike), so one engine, smallest key first, serves both operators; the hot
loops compute ARGMAX's keys in as many instructions as ARGMIN's (``key_of``, ``raw_constant``,
``fold_value``, ``lanes``). A task reduces part of the input into per-slot state (key, index,
found); slots are the output elements in row-major order. Within a task each slot sees its elements in
increasing index order, so a strict ``<`` (INCREASING) or ``<=`` (DECREASING) keeps the right one of equal
keys; merges (``drivers.merge_range``) compare indices explicitly, so tasks may cover any parts in
any order.

Element types and comparisons are told apart at compile time by the type of ``kind`` (and the direction by
the type of ``order``): Numba compiles one specialisation per combination, so no comparison tests them at
run time, and ARGMIN's code is what it was before ARGMAX (``kind_of``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import types
from numba.extending import overload

from ....enums import AxisDirection
from ....ops.arg_order import LARGER_WINS, LATER_WINS, NAN_WINS, tie_winner
from ....ops.arg_reduction import ArgReductionParams
from ..jit import jit

DECREASING = np.zeros(1, np.uint8)  # passed as ``order`` for AxisDirection DECREASING (None: INCREASING)

# ``kind`` is None (ARGMIN of integers) or a marker array whose Numba type says, at compile time, what is
# compared: its dtype the element (float32: FLOAT32 data read as int32 bits; uint16: FLOAT16 data read as
# uint16 bits; int64: integers, read as they are), its number of dimensions the comparison:
# 1 + LARGEST (ARGMAX: elements order-reversed) + PROPAGATE (NanPolicy PROPAGATE: NaN the smallest key).
LARGEST, PROPAGATE = 1, 2
_FLOATS = {np.dtype(np.float32): np.float32, np.dtype(np.float16): np.uint16}


def marker(element: Any, largest: bool = False, propagate: bool = False) -> np.ndarray | None:
    """The ``kind`` of elements of NumPy type ``element`` compared for ARGMAX (``largest``) or ARGMIN, with
    NaN ignored or (``propagate``) winning. Integers hold no NaN: their kind ignores ``propagate``, so they
    compile two specialisations, not four."""
    dtype = np.dtype(element)
    floating = dtype in _FLOATS
    ndim = 1 + (LARGEST if largest else 0) + (PROPAGATE if propagate and floating else 0)
    if not floating and ndim == 1:
        return None
    return _MARKERS.setdefault((_FLOATS.get(dtype, np.int64), ndim),
                               np.zeros((1,) * ndim, _FLOATS.get(dtype, np.int64)))


_MARKERS: dict[tuple[Any, int], np.ndarray] = {}
FLOAT = marker(np.float32)  # ARGMIN of FLOAT32, NaN ignored
HALF = marker(np.float16)


def kind_of(element: Any, params: ArgReductionParams) -> np.ndarray | None:
    """The ``kind`` of a reduction of elements of NumPy type ``element`` (``marker``): the order's value part
    (``ops.arg_order``: the larger value ahead, NaN winning), which the keys lower."""
    return marker(element, LARGER_WINS[params.kind], NAN_WINS[params.nan_policy])


def order_of(params: ArgReductionParams) -> np.ndarray | None:
    """The ``order`` of a reduction: DECREASING's marker where a tie goes to the later index
    (``ops.arg_order.LATER_WINS``), or None."""
    return DECREASING if LATER_WINS[params.axis_direction] else None


def missing_index(order: np.ndarray | None, length: int) -> int:
    """The index a slot that found nothing answers (every element NaN, ignored: SPEC 8.5): the winner among
    its ``length`` tied NaN under the direction ``order`` lowers (``ops.arg_order.tie_winner``)."""
    return tie_winner(AxisDirection.DECREASING if order is DECREASING else AxisDirection.INCREASING, length)


# Typing-time questions about a ``kind`` (a Numba type), for the overloads and intrinsics.

def is_float(kind: Any) -> bool:
    return not isinstance(kind, types.NoneType) and kind.dtype == types.float32


def is_half(kind: Any) -> bool:
    return not isinstance(kind, types.NoneType) and kind.dtype == types.uint16


def is_largest(kind: Any) -> bool:
    return not isinstance(kind, types.NoneType) and bool((kind.ndim - 1) & LARGEST)


def propagates(kind: Any) -> bool:
    return not isinstance(kind, types.NoneType) and bool((kind.ndim - 1) & PROPAGATE)


FLOAT_NAN_KEY = np.int32(0x7FFFFFFF)  # NaN's key under IGNORE: above +inf's, 0x7F800000
HALF_NAN_KEY = np.int16(0x7FFF)
FLOAT_NAN_FIRST = np.int32(-0x80000000)  # under PROPAGATE: below -inf's, -0x7F800000
HALF_NAN_FIRST = np.int16(-0x8000)


def nan_key_of(kind: Any) -> Any:
    """The key every NaN gets under a (float) ``kind``."""
    if is_float(kind):
        return FLOAT_NAN_FIRST if propagates(kind) else FLOAT_NAN_KEY
    return HALF_NAN_FIRST if propagates(kind) else HALF_NAN_KEY


def flip_order(v, kind):  # type: ignore[no-untyped-def]
    """An element's bits order-reversed for ARGMAX (as they are for ARGMIN): float bits with the sign
    flipped (the negation: exact, NaN stays NaN), integers complemented (an order-reversing bijection of
    signed and unsigned types alike). Its own inverse."""


@overload(flip_order, jit_options={"cache": True})
def _flip_order(v, kind):  # type: ignore[no-untyped-def]
    if not is_largest(kind):
        return lambda v, kind: v
    if is_float(kind):
        return lambda v, kind: np.int32(v ^ np.int32(-0x80000000))
    if is_half(kind):
        return lambda v, kind: np.uint16(v ^ np.uint16(0x8000))
    cast = getattr(np, v.name)  # ``~`` widens small integers: the key keeps the element's type

    return lambda v, kind: cast(~v)


def key_of(v, kind):  # type: ignore[no-untyped-def]
    """An element's comparison key: integers as they are (ARGMAX: complemented); float bits (ARGMAX:
    negated) as sign-and-magnitude, every NaN one key (``nan_key_of``)."""


@overload(key_of, jit_options={"cache": True})
def _key_of(v, kind):  # type: ignore[no-untyped-def]
    if not (is_float(kind) or is_half(kind)):
        return lambda v, kind: flip_order(v, kind)
    nan = nan_key_of(kind)
    # ARGMAX's key, that of the negated element, is minus the ARGMIN key: with the sign as a mask s (0 or
    # -1), s - (magnitude ^ s), as few instructions as ARGMIN's, rather than a sign flip first.
    if is_float(kind):
        if is_largest(kind):
            def float_key_largest(v, kind):  # type: ignore[no-untyped-def]
                magnitude = np.int32(v & np.int32(0x7FFFFFFF))
                s = np.int32(v >> 31)
                key = np.int32(s - (magnitude ^ s))
                return nan if magnitude > np.int32(0x7F800000) else key
            return float_key_largest

        def float_key(v, kind):  # type: ignore[no-untyped-def]
            magnitude = np.int32(v & np.int32(0x7FFFFFFF))
            key = np.int32(-magnitude) if v < 0 else magnitude
            return nan if magnitude > np.int32(0x7F800000) else key
        return float_key
    if is_largest(kind):
        def half_key_largest(v, kind):  # type: ignore[no-untyped-def]
            magnitude = np.int16(v & np.uint16(0x7FFF))
            s = np.int16(np.int16(v) >> 15)
            key = np.int16(s - (magnitude ^ s))
            return nan if magnitude > np.int16(0x7C00) else key
        return half_key_largest

    def half_key(v, kind):  # type: ignore[no-untyped-def]
        magnitude = np.int16(v & np.uint16(0x7FFF))
        key = np.int16(-magnitude) if v & np.uint16(0x8000) else magnitude
        return nan if magnitude > np.int16(0x7C00) else key
    return half_key


def found_key(key, kind):  # type: ignore[no-untyped-def]
    """Whether a reduction's best key is an element's (False: every element was NaN, and NaN is ignored)."""


@overload(found_key, jit_options={"cache": True})
def _found_key(key, kind):  # type: ignore[no-untyped-def]
    if not (is_float(kind) or is_half(kind)) or propagates(kind):
        return lambda key, kind: True
    nan = nan_key_of(kind)
    return lambda key, kind: key != nan


# The column fold (``argmin_columns``) keeps, per column, a value whose comparisons cost least: the key,
# except for integer ARGMAX, which keeps the element itself and compares it the other way round (its key,
# the complement, costs an instruction an element), turned into the key once per column (``fold_result``).

def fold_value(v, kind):  # type: ignore[no-untyped-def]
    """What the column fold keeps of element ``v``."""


@overload(fold_value, jit_options={"cache": True})
def _fold_value(v, kind):  # type: ignore[no-untyped-def]
    if _integer_largest(kind):
        return lambda v, kind: v
    return lambda v, kind: key_of(v, kind)


def fold_takes(v, best, kind, order):  # type: ignore[no-untyped-def]
    """``takes`` of fold values."""


@overload(fold_takes, jit_options={"cache": True})
def _fold_takes(v, best, kind, order):  # type: ignore[no-untyped-def]
    if not _integer_largest(kind):
        return lambda v, best, kind, order: takes(v, best, order)
    if isinstance(order, types.NoneType):
        return lambda v, best, kind, order: v > best
    return lambda v, best, kind, order: v >= best


def fold_result(m, kind):  # type: ignore[no-untyped-def]
    """The key of a fold value."""


@overload(fold_result, jit_options={"cache": True})
def _fold_result(m, kind):  # type: ignore[no-untyped-def]
    if _integer_largest(kind):
        return lambda m, kind: flip_order(m, kind)
    return lambda m, kind: m


def _integer_largest(kind: Any) -> bool:
    return is_largest(kind) and not (is_float(kind) or is_half(kind))


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
# are its key), then a bias is subtracted: under IGNORE, -inf's flipped bits plus the sign bit, so that
# -inf becomes the least signed integer and every NaN, of either sign, lands above +inf; under PROPAGATE,
# minus that, which rotates the NaN (their flipped bits lie just above +inf's and just below -inf's) to the
# bottom, below -inf (the processor has no unsigned vector comparison). ARGMAX's raw key is that of the
# negated element, a constant minus the flipped bits (``raw_constant``): the same instruction count.
# ``unflip`` turns the smallest back into a key. The block minimum (``flipped_min``) needs only that key;
# a row reduced in one pass (``lane_argmin``: each
# vector lane keeps its own smallest and the vector where it was found, strictly smaller for INCREASING,
# not larger for DECREASING, then the lanes are reduced to the smallest and, among lanes holding it, the
# first or last element) has its zeros searched again as equals when its minimum is a zero, and its NaN
# when it is a NaN (PROPAGATE: NaN of other payloads are other raw keys, but every NaN ties).

FLIP_SHIFT = 0x007FFFFF  # FLOAT32: -inf's flipped bits, 0x807FFFFF, plus the sign bit
FLIP = {32: (0x7FFFFFFF, FLIP_SHIFT), 16: (0x7FFF, 0x03FF)}  # magnitude mask, shift


def flip_bias(bits: int, nan_first: bool) -> int:
    """The bias subtracted from flipped bits of ``bits`` width: IGNORE's shift, or PROPAGATE's (minus it)."""
    shift = FLIP[bits][1]
    return -shift if nan_first else shift


def _raw_limit(bits: int, nan_first: bool) -> int:
    """The raw key of +inf (IGNORE: every NaN's is larger) or of -inf (PROPAGATE: every NaN's is smaller)."""
    mask, shift = FLIP[bits]
    infinity = mask - shift  # +inf's bits, 0x7F800000 (0x7C00)
    return -(1 << (bits - 1)) + 2 * shift if nan_first else infinity - shift


def raw_key(v, kind):  # type: ignore[no-untyped-def]
    """A FLOAT32 element's raw key (``lane_argmin``'s, scalar): its flipped bits less the bias."""


def raw_constant(bits: int, kind: Any) -> int:
    """ARGMAX's raw key is this constant minus the element's flipped bits: the flipped bits of the negated
    element are the complement of the element's (``~f``, that is ``-1 - f``), less the bias. One
    subtraction, as ARGMIN's, rather than a sign flip first."""
    return -1 - flip_bias(bits, propagates(kind))


@overload(raw_key, jit_options={"cache": True})
def _raw_key(v, kind):  # type: ignore[no-untyped-def]
    if not is_float(kind):
        return None
    if is_largest(kind):
        c = raw_constant(32, kind)
        return lambda v, kind: np.int32(c - (v ^ ((v >> 31) & 0x7FFFFFFF)))
    bias = flip_bias(32, propagates(kind))
    return lambda v, kind: np.int32((v ^ ((v >> 31) & 0x7FFFFFFF)) - bias)


def unflip(raw, kind):  # type: ignore[no-untyped-def]
    """A key from ``lane_argmin``'s raw key."""


@overload(unflip, jit_options={"cache": True})
def _unflip(raw, kind):  # type: ignore[no-untyped-def]
    if not (is_float(kind) or is_half(kind)):  # integer lanes keep the elements (ARGMAX: the largest)
        return lambda raw, kind: flip_order(raw, kind)
    first = propagates(kind)
    nan, bias = nan_key_of(kind), flip_bias(32 if is_float(kind) else 16, first)
    if is_float(kind):
        limit = np.int32(_raw_limit(32, first))

        def float_key(raw, kind):  # type: ignore[no-untyped-def]
            if (raw < limit) if first else (raw > limit):  # beyond -inf (+inf): NaN
                return nan
            f = np.int32(raw + np.int32(bias))
            return np.int32(f + 1) if f < 0 else f
        return float_key
    half_limit = np.int16(_raw_limit(16, first))

    def half_key(raw, kind):  # type: ignore[no-untyped-def]
        r = np.int16(raw)  # FLOAT16 bits are read as uint16
        if (r < half_limit) if first else (r > half_limit):
            return nan
        f = np.int16(r + np.int16(bias))
        return np.int16(f + 1) if f < 0 else f
    return half_key


def searched_again(key, kind):  # type: ignore[no-untyped-def]
    """Whether ``lane_argmin``'s position of a best ``key`` may be wrong, so that the run is searched again
    for it (``key_range``): a zero (-0.0 is a raw key of its own, just under +0.0's) or, under PROPAGATE,
    a NaN (each payload is a raw key of its own). Never for integers, whose raw keys are their keys."""


@overload(searched_again, jit_options={"cache": True})
def _searched_again(key, kind):  # type: ignore[no-untyped-def]
    if not (is_float(kind) or is_half(kind)):
        return lambda key, kind: False
    if not propagates(kind):
        return lambda key, kind: key == 0
    nan = nan_key_of(kind)
    return lambda key, kind: key == 0 or key == nan


def key_range(key, kind):  # type: ignore[no-untyped-def]
    """``(mask, low, high)``: the elements whose key is ``key`` are those with ``low <= element & mask <=
    high`` (a range only for NaN: every NaN has one key)."""


@overload(key_range, jit_options={"cache": True})
def _key_range(key, kind):  # type: ignore[no-untyped-def]
    if not (is_float(kind) or is_half(kind)):
        return lambda key, kind: (~type(key)(0), flip_order(key, kind), flip_order(key, kind))
    nan = nan_key_of(kind)
    if is_float(kind):
        def float_range(key, kind):  # type: ignore[no-untyped-def]
            if key == nan:  # every NaN, of either sign
                return np.int32(0x7FFFFFFF), np.int32(0x7F800001), np.int32(0x7FFFFFFF)
            if key == 0:  # -0.0 and +0.0
                return np.int32(0x7FFFFFFF), np.int32(0), np.int32(0)
            bits = flip_order(np.int32(key if key > 0 else np.int32(-key) | np.int32(-0x80000000)), kind)
            return np.int32(-1), bits, bits
        return float_range

    def half_range(key, kind):  # type: ignore[no-untyped-def]
        if key == nan:
            return np.uint16(0x7FFF), np.uint16(0x7C01), np.uint16(0x7FFF)
        if key == 0:
            return np.uint16(0x7FFF), np.uint16(0), np.uint16(0)
        bits = flip_order(np.uint16(key) if key > 0 else np.uint16(np.uint16(-key) | np.uint16(0x8000)), kind)
        return np.uint16(0xFFFF), bits, bits
    return half_range
