"""ARGMIN (and ARGMAX: ``keys``) when the last dimension is reduced: each run of it reduced to one
(key, position), folded into its slot's state.

A contiguous run of at most ROW_BLOCK elements is reduced in one pass of vector lanes (``lanes``);
a longer one block by block (the smallest key of each block, then one search of the block holding it),
or in one pass as floats where that is exact; a strided run element by element.
"""

from __future__ import annotations

import numpy as np
from numba.extending import overload

from ...jit import jit
from ...rows import inline
from ...vectors import VECTOR_BYTES
from ..keys import (
    HALF_NAN_FIRST,
    HALF_NAN_KEY,
    found_key,
    is_float,
    is_half,
    is_largest,
    key_of,
    key_range,
    marker,
    nan_key_of,
    propagates,
    raw_key,
    replaces,
    searched_again,
    takes,
    unflip,
)
from .lanes import float_lanes, floats_compare_exactly, lane_argmin


@jit
def scan(x, xb, n, sx, kind, order):  # type: ignore[no-untyped-def]
    """The best (key, position) of a run of ``n`` elements ``sx`` apart."""
    best = key_of(x[xb], kind)
    pos = 0
    for k in range(1, n):
        v = key_of(x[xb + k * sx], kind)
        if takes(v, best, order):
            best = v
            pos = k
    return best, pos


ROW_BLOCK = 256  # elements of a contiguous run reduced at once: the block is searched again from L1


@jit
def keyed_min(xs, kind):  # type: ignore[no-untyped-def]
    """The smallest key of a block: an integer min reduction, which vectorises."""
    m = key_of(xs[0], kind)
    for k in range(xs.size):  # from 0, not 1: whole vectors, no remainder loop on power-of-two blocks
        m = min(m, key_of(xs[k], kind))
    return m



@jit
def flipped_min(xs, kind):  # type: ignore[no-untyped-def]
    """``keyed_min`` of FLOAT32 bits as raw keys (``keys.raw_key``: five instructions an element
    instead of seven)."""
    m = raw_key(xs[0], kind)
    for k in range(xs.size):
        m = min(m, raw_key(xs[k], kind))
    return unflip(m, kind)


def block_min(xs, kind):  # type: ignore[no-untyped-def]
    """The smallest key of a block."""


@overload(block_min, jit_options={"cache": True})
def _block_min(xs, kind):  # type: ignore[no-untyped-def]
    if is_float(kind):
        return lambda xs, kind: flipped_min(xs, kind)
    if is_half(kind) and is_largest(kind):
        return lambda xs, kind: mirrored_min(xs, kind)
    return lambda xs, kind: keyed_min(xs, kind)


def mirrored_min(xs, kind):  # type: ignore[no-untyped-def]
    """``keyed_min`` of FLOAT16 ARGMAX keys at ARGMIN's cost: minus the largest ARGMIN key of the other NaN
    policy (an ARGMAX key is minus the ARGMIN key, NaN's aside, which must stay at the same end). In
    memory, 9.5 ms against 11.2 for the keys themselves (ARGMIN's: 10.5) over 2^26 halves. Integers keep
    ``keyed_min`` (the complement, then the minimum): the complement of the largest element ran 15% slower
    from memory, though the same from cache."""


@overload(mirrored_min, jit_options={"cache": True})
def _mirrored_min(xs, kind):  # type: ignore[no-untyped-def]
    if not (is_half(kind) and is_largest(kind)):
        return None
    mirror = marker(np.float16, False, not propagates(kind))
    mirror_nan, nan = HALF_NAN_KEY if propagates(kind) else HALF_NAN_FIRST, nan_key_of(kind)

    def half_min(xs, kind):  # type: ignore[no-untyped-def]
        m = key_of(xs[0], mirror)
        for k in range(xs.size):
            m = max(m, key_of(xs[k], mirror))
        return nan if m == mirror_nan else np.int16(-m)
    return half_min


@jit
def block_find(xs, key, kind, order):  # type: ignore[no-untyped-def]
    """The first (INCREASING) or last position of ``key`` in a block (at most ROW_BLOCK elements), as a
    branch-free int32 min or max reduction so that it vectorises at the elements' width."""
    mask, low, high = key_range(key, kind)
    n = np.int32(xs.size)
    if order is None:
        pos = n
        for k in range(n):
            pos = min(pos, np.int32(k) if (xs[k] & mask >= low) & (xs[k] & mask <= high) else n)
        return pos
    pos = np.int32(-1)
    for k in range(n):
        pos = max(pos, np.int32(k) if (xs[k] & mask >= low) & (xs[k] & mask <= high) else np.int32(-1))
    return pos


@jit
def best_block(x, xb, n, kind, order):  # type: ignore[no-untyped-def]
    """The smallest block key of a contiguous run and where its block starts."""
    best = block_min(x[xb:xb + min(n, ROW_BLOCK)], kind)
    where = 0
    for b in range(ROW_BLOCK, n, ROW_BLOCK):
        m = block_min(x[xb + b:xb + min(n, b + ROW_BLOCK)], kind)
        if takes(m, best, order):
            best = m
            where = b
    return best, where


@inline
def rest_best(x, xb, done, n, key, pos, kind, order):  # type: ignore[no-untyped-def]
    """The best ``(key, position)`` after the elements ``done..n`` of a run (the few after its whole
    vectors) are compared one by one with the best of the first ``done``."""
    for k in range(done, n):
        v = key_of(x[xb + k], kind)
        if takes(v, key, order):
            key, pos = v, k
    return key, pos


@jit
def run_best(x, xb, n, kind, order, floats):  # type: ignore[no-untyped-def]
    """``scan`` of a contiguous run. Where ``floats``, FLOAT32 in one pass compared as floats (a minimum and
    position per vector lane, as short rows: in cache 23 against 40 ns per 256 elements for the blocks);
    otherwise, or if its best is +inf (not certain then), the smallest key of each block, then one search
    of the block holding it, with integer keys."""
    if floats:
        key, pos, certain, done = float_lanes(x, xb, n, kind, order)
        if certain:
            return rest_best(x, xb, done, n, key, pos, kind, order)
    best, where = best_block(x, xb, n, kind, order)
    pos = where + block_find(x[xb + where:xb + min(n, where + ROW_BLOCK)], best, kind, order)
    return best, pos


@jit
def row_start(row, sizes, xs, red, w, where, digits):  # type: ignore[no-untyped-def]
    """Set ``where`` (element offset, slot, index; from the task's origin) and ``digits`` to row ``row``."""
    for d in range(sizes.size - 2, -1, -1):
        i = row % sizes[d]
        row //= sizes[d]
        digits[d] = i
        where[0] += i * xs[d]
        where[2 if red[d] else 1] += i * w[d]


@jit
def next_rows(sizes, xs, red, w, where, digits, count, offsets, slots, indices):  # type: ignore[no-untyped-def]
    """The offset, slot and index of ``count`` rows from ``where``, stepping ``where`` and ``digits`` past
    them as an odometer (no division per row); one dimension before the run steps without one."""
    nd = sizes.size
    if nd <= 2:
        step_x = xs[0] if nd == 2 else 0
        step_slot = w[0] if nd == 2 and not red[0] else 0
        step_index = w[0] if nd == 2 and red[0] else 0
        offset, slot, index = where[0], where[1], where[2]
        for j in range(count):
            offsets[j], slots[j], indices[j] = offset, slot, index
            offset += step_x
            slot += step_slot
            index += step_index
        where[0], where[1], where[2] = offset, slot, index
        return
    for j in range(count):
        offsets[j], slots[j], indices[j] = where[0], where[1], where[2]
        for d in range(nd - 2, -1, -1):
            field = 2 if red[d] else 1
            if digits[d] + 1 < sizes[d]:
                digits[d] += 1
                where[0] += xs[d]
                where[field] += w[d]
                break
            where[0] -= xs[d] * (sizes[d] - 1)
            where[field] -= w[d] * (sizes[d] - 1)
            digits[d] = 0


@inline
def short_best(x, xb, n, kind, order, floats):  # type: ignore[no-untyped-def]
    """``scan`` of a contiguous run of at most ROW_BLOCK elements: its whole vectors in one pass (as
    floats where ``floats`` and certain, else with integer keys), then the few elements after them."""
    per = VECTOR_BYTES // x.itemsize
    vectors = n // per
    if vectors == 0:
        return scan(x, xb, n, 1, kind, order)
    certain, done = False, 0
    if floats:
        key, pos, certain, done = float_lanes(x, xb, n, kind, order)
    if not certain:
        done = vectors * per
        raw, pos = lane_argmin(x, xb, vectors, kind, order)
        key = unflip(raw, kind)
        if searched_again(key, kind):  # -0.0 flipped is just under +0.0: find the zeros as equals (NaN too)
            pos = block_find(x[xb:xb + done], key, kind, order)
    return rest_best(x, xb, done, n, key, pos, kind, order)


def short_rows(sizes: np.ndarray | list[int], strides: np.ndarray | list[int]) -> bool:
    """Whether ``argmin_short_rows`` takes a layout whose last dimension is reduced: at most two dimensions
    (the usual layout after merging: rows one stride apart), the last contiguous and at most ROW_BLOCK long."""
    return len(sizes) <= 2 and strides[-1] == 1 and sizes[-1] <= ROW_BLOCK


def long_rows(sizes: np.ndarray | list[int], strides: np.ndarray | list[int]) -> bool:
    """Whether ``argmin_long_rows`` takes such a layout: as ``short_rows``, but rows longer than ROW_BLOCK."""
    return len(sizes) <= 2 and strides[-1] == 1 and sizes[-1] > ROW_BLOCK


@jit
def argmin_short_rows(x, x0, sizes, xs, red, w, slot0, index0, start, stop, cur, idx, kind, order, floats):  # type: ignore
    """``argmin_rows`` of a ``short_rows`` layout: rows one stride apart, no odometer (one dimension: a
    single row). Its own kernel, so that the calls of such layouts compile only this path."""
    n, wn = sizes[-1], w[-1]
    floats = floats and floats_compare_exactly()
    step_slot, step_index = (0, w[0]) if red[0] else (w[0], 0)
    for r in range(start, stop):
        key, pos = short_best(x, x0 + r * xs[0], n, kind, order, floats)
        slot, index = slot0 + r * step_slot, index0 + r * step_index + pos * wn
        if found_key(key, kind) and (idx[slot] < 0 or replaces(key, index, cur[slot], idx[slot], order)):
            cur[slot], idx[slot] = key, index


@jit
def argmin_long_rows(x, x0, sizes, xs, red, w, slot0, index0, start, stop, cur, idx, kind, order, floats):  # type: ignore
    """``argmin_rows`` of a ``long_rows`` layout (logits: [batch, vocabulary]): each row by ``run_best``,
    no odometer and no short-row or strided path, so that such calls compile only this one."""
    n, wn = sizes[-1], w[-1]
    floats = floats and floats_compare_exactly()
    step_slot, step_index = (0, w[0]) if red[0] else (w[0], 0)
    for r in range(start, stop):
        key, pos = run_best(x, x0 + r * xs[0], n, kind, order, floats)
        slot, index = slot0 + r * step_slot, index0 + r * step_index + pos * wn
        if found_key(key, kind) and (idx[slot] < 0 or replaces(key, index, cur[slot], idx[slot], order)):
            cur[slot], idx[slot] = key, index


ROW_BATCH = 16  # rows whose offsets, slots and indices are found at once


@jit
def argmin_rows(x, x0, sizes, xs, red, w, slot0, index0, start, stop, cur, idx, kind, order, floats):  # type: ignore
    """The last dimension is reduced: reduce each run of it (rows ``start``..``stop`` of the others), any
    layout (the engine gives ``short_rows`` layouts to ``argmin_short_rows``, which compiles in half the
    time). FLOAT32 is compared as floats where ``floats`` and this thread's comparisons are exact.

    Rows are handed to the reductions as ``x`` and an offset, never as slices: a call that takes a slice
    costs reference counting that LLVM does not remove, as much as a fifth of reducing a short row (the
    batches of 16 once did that).
    """
    n, sx, wn = sizes[-1], xs[-1], w[-1]
    short = sx == 1 and n <= ROW_BLOCK
    floats = floats and floats_compare_exactly()
    where = np.array([x0, slot0, index0], np.int64)
    digits = np.zeros(max(sizes.size - 1, 1), np.int64)
    row_start(start, sizes, xs, red, w, where, digits)
    offsets = np.empty(ROW_BATCH, np.int64)
    slots = np.empty(ROW_BATCH, np.int64)
    indices = np.empty(ROW_BATCH, np.int64)
    for first in range(start, stop, ROW_BATCH):
        count = min(ROW_BATCH, stop - first)
        next_rows(sizes, xs, red, w, where, digits, count, offsets, slots, indices)
        for j in range(count):
            xb = offsets[j]
            if short:
                key, pos = short_best(x, xb, n, kind, order, floats)
            elif sx == 1:
                key, pos = run_best(x, xb, n, kind, order, floats)
            else:
                key, pos = scan(x, xb, n, sx, kind, order)
            slot, index = slots[j], indices[j] + pos * wn
            if found_key(key, kind) and (idx[slot] < 0 or replaces(key, index, cur[slot], idx[slot], order)):
                cur[slot], idx[slot] = key, index


# Small reductions of rows on one thread, written straight into the output: the functional call on a new
# small array (greedy decoding's logits on the CPU) is what costs, so ``call`` runs them as one
# compiled call, with no per-slot state, no task table and no pass filling missing indices.


@jit
def short_rows_into(x, rows, n, xs, out, default, kind, order, floats):  # type: ignore[no-untyped-def]
    """``argmin_short_rows`` of ``rows`` rows of ``n`` contiguous elements ``xs`` apart, row ``r``'s index
    (``default`` where every element was NaN) written to ``out[r]``."""
    floats = floats and floats_compare_exactly()
    for r in range(rows):
        key, pos = short_best(x, r * xs, n, kind, order, floats)
        out[r] = pos if found_key(key, kind) else default


@jit
def long_rows_into(x, rows, n, xs, out, default, kind, order, floats):  # type: ignore[no-untyped-def]
    """``short_rows_into`` of rows longer than ROW_BLOCK (``argmin_long_rows``' reduction)."""
    floats = floats and floats_compare_exactly()
    for r in range(rows):
        key, pos = run_best(x, r * xs, n, kind, order, floats)
        out[r] = pos if found_key(key, kind) else default
