"""Exact sums of FLOAT32 columns (REDUCE's SUM, AVERAGE and L1 when the reduced axis is not the innermost):
tiles of columns summed side by side into ``sum_accumulator``'s accumulators, rounded once by ``sum_rounding``.

Rows are summed in ``sums``, FLOAT16 rows in ``sum_halves``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .jit import jit
from .sum_accumulator import ABS, BINS, NONNEG, UNIT, WORDS, add_double, add_wide_block, merge
from .sum_rounding import _finished

TILE = 4096  # columns summed side by side: rows read in runs of 16 KiB (their sums and bounds, 64 KiB, in L2)
# Rows of a column block: each column's float64 sum of its COLUMN_BLOCK elements is exact where their span is at most
# COLUMN_SPAN binades (24 + COLUMN_SPAN + 10 <= 53, as a row block's); a larger block adds to the accumulators less
# often.
COLUMN_BLOCK = 1 << 10
COLUMN_SPAN = 29 - 10


@njit(nogil=True, cache=True, fastmath={"reassoc"})
def _columns_block(x, xb, r0, r1, c0, c1, absolute, s, his, los):  # type: ignore[no-untyped-def]
    """``s[c - c0]`` = the float64 sum of rows ``r0:r1`` of each column ``c0:c1`` of ``x`` (exact where the column's
    span allows, as ``sum_accumulator._fast_block``'s: each column sums at most ``COLUMN_BLOCK`` elements), and
    ``his[c - c0]``, ``los[c - c0]`` the column's largest and smallest ``(bits << 1) - 1``. Eight rows at a time, their
    bounds and their sum in one loop along the columns (any order of the additions is exact where the bounds
    allow): each element is read from memory once, in runs as long as the tile's rows."""
    one = np.uint32(1)
    n = c1 - c0
    s[:n] = 0.0
    his[:n] = 0
    los[:n] = 0xFFFFFFFF
    r = r0
    while r + 8 <= r1:
        b0, b1, b2, b3 = xb[r, c0:c1], xb[r + 1, c0:c1], xb[r + 2, c0:c1], xb[r + 3, c0:c1]
        b4, b5, b6, b7 = xb[r + 4, c0:c1], xb[r + 5, c0:c1], xb[r + 6, c0:c1], xb[r + 7, c0:c1]
        p0, p1, p2, p3 = x[r, c0:c1], x[r + 1, c0:c1], x[r + 2, c0:c1], x[r + 3, c0:c1]
        p4, p5, p6, p7 = x[r + 4, c0:c1], x[r + 5, c0:c1], x[r + 6, c0:c1], x[r + 7, c0:c1]
        if absolute:
            for c in range(n):
                _bounds8(his, los, c, b0[c], b1[c], b2[c], b3[c], b4[c], b5[c], b6[c], b7[c])
                s[c] += ((abs(np.float64(p0[c])) + abs(np.float64(p1[c])))
                         + (abs(np.float64(p2[c])) + abs(np.float64(p3[c])))) \
                    + ((abs(np.float64(p4[c])) + abs(np.float64(p5[c])))
                       + (abs(np.float64(p6[c])) + abs(np.float64(p7[c]))))
        else:
            for c in range(n):
                _bounds8(his, los, c, b0[c], b1[c], b2[c], b3[c], b4[c], b5[c], b6[c], b7[c])
                s[c] += ((np.float64(p0[c]) + np.float64(p1[c])) + (np.float64(p2[c]) + np.float64(p3[c]))) \
                    + ((np.float64(p4[c]) + np.float64(p5[c])) + (np.float64(p6[c]) + np.float64(p7[c])))
        r += 8
    while r < r1:
        bits = xb[r, c0:c1]
        p = x[r, c0:c1]
        for c in range(n):
            a = np.uint32(bits[c] << one)
            his[c] = max(his[c], a)
            los[c] = min(los[c], np.uint32(a - one))
            s[c] += abs(np.float64(p[c])) if absolute else np.float64(p[c])
        r += 1


@njit(inline="always")
def _bounds8(his, los, c, b0, b1, b2, b3, b4, b5, b6, b7):  # type: ignore[no-untyped-def]
    """Column ``c``'s bounds (``his``, ``los``) joined by eight more elements' bits."""
    one = np.uint32(1)
    a0, a1 = np.uint32(b0 << one), np.uint32(b1 << one)
    a2, a3 = np.uint32(b2 << one), np.uint32(b3 << one)
    a4, a5 = np.uint32(b4 << one), np.uint32(b5 << one)
    a6, a7 = np.uint32(b6 << one), np.uint32(b7 << one)
    his[c] = max(his[c], _max8(a0, a1, a2, a3, a4, a5, a6, a7))
    los[c] = min(los[c], _min8(a0, a1, a2, a3, a4, a5, a6, a7))


@njit(inline="always")
def _max8(a0, a1, a2, a3, a4, a5, a6, a7):  # type: ignore[no-untyped-def]
    return max(max(max(a0, a1), max(a2, a3)), max(max(a4, a5), max(a6, a7)))


@njit(inline="always")
def _min8(a0, a1, a2, a3, a4, a5, a6, a7):  # type: ignore[no-untyped-def]
    """The smallest ``a - 1`` of eight uint32, wrapped to 32 bits (that of a zero is the largest)."""
    one = np.uint32(1)
    return min(min(min(np.uint32(a0 - one), np.uint32(a1 - one)), min(np.uint32(a2 - one), np.uint32(a3 - one))),
               min(min(np.uint32(a4 - one), np.uint32(a5 - one)), min(np.uint32(a6 - one), np.uint32(a7 - one))))


@jit
def _fits(hi, lo, span):  # type: ignore[no-untyped-def]
    """Whether elements with these bounds have an exact float64 sum (no NaN or infinity; a span of at most
    ``span`` binades; or zeros only)."""
    emax = hi >> 24
    return hi == 0 or (emax != 255 and emax - max((lo + 1) >> 24, 1) <= span)


@jit
def _columns_task(x, r0, r1, c0, c1, function, accs):  # type: ignore[no-untyped-def]
    """Rows ``r0:r1`` of columns ``c0:c1`` of ``x`` (2-D, rows contiguous) into ``accs[c - c0]``."""
    xb = x.view(np.uint32)
    bins = np.zeros(BINS, np.float64)
    s = np.zeros(c1 - c0, np.float64)
    his = np.zeros(c1 - c0, np.uint32)
    los = np.zeros(c1 - c0, np.uint32)
    absolute = function == ABS
    for j0 in range(r0, r1, COLUMN_BLOCK):
        j1 = min(j0 + COLUMN_BLOCK, r1)
        _columns_block(x, xb, j0, j1, c0, c1, absolute, s, his, los)
        for c in range(c0, c1):
            acc = accs[c - c0]
            hi, lo = his[c - c0], los[c - c0]
            if not _fits(hi, lo, COLUMN_SPAN):  # a column block is no longer than a row block: the same groups
                add_wide_block(x[j0:j1, c], xb[j0:j1, c], 0, j1 - j0, function, acc, bins, hi >> 24,
                               max((lo + 1) >> 24, 1))
                continue
            if s[c - c0] != 0.0:
                acc[NONNEG] = 1
                add_double(acc, s[c - c0], UNIT)
            elif not acc[NONNEG]:  # an exact zero: -0.0 only if every element of the column is
                for r in range(j0, j1):
                    if xb[r, c] != 0x80000000 or absolute:
                        acc[NONNEG] = 1
                        break


def sum_columns(x: np.ndarray, function: int, average: bool, out_dtype: np.dtype, threads: int) -> np.ndarray:
    """Each column of ``x`` (2-D FLOAT32, rows contiguous: the reduced axis is the first) summed exactly and
    rounded once, as ``sums.sum_rows`` does each row."""
    return _finished(column_accumulators(x, function, threads), x.shape[0], average, out_dtype, threads=threads)


def column_accumulators(x: np.ndarray, function: int, threads: int) -> np.ndarray:
    """``sum_columns``' accumulators (columns, ``WORDS``): tiles of up to ``TILE`` columns side by side, shared among
    the threads; with fewer tiles than threads, the rows are split too and the partial sums merged (exactly)."""
    from .threads import run_tasks

    n, cols = x.shape
    width = min(TILE, cols)
    tiles = [(c0, min(cols, c0 + width)) for c0 in range(0, cols, width)]
    parts = 1 if len(tiles) >= threads else max(1, min(threads, n // COLUMN_BLOCK))
    step = -(-n // parts)
    step = -(-step // COLUMN_BLOCK) * COLUMN_BLOCK
    partial = np.zeros((parts, cols, WORDS), np.int64)
    tasks = [(x, p * step, min(n, (p + 1) * step), c0, c1, function, partial[p, c0:c1])
             for p in range(parts) for c0, c1 in tiles if p * step < n]
    run_tasks(_columns_task, tasks, threads)
    if parts > 1:
        share = -(-cols // threads)
        run_tasks(_merge_parts, [(partial, c, min(cols, c + share)) for c in range(0, cols, share)], threads)
    return partial[0]


@jit
def _merge_parts(partial, c0, c1):  # type: ignore[no-untyped-def]
    """``partial[0, c] += partial[p, c]`` for every part ``p`` and column ``c0 <= c < c1`` (exactly)."""
    for c in range(c0, c1):
        for p in range(1, partial.shape[0]):
            merge(partial[0, c], partial[p, c])
