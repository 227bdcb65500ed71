"""ARGMIN (and ARGMAX) when the last dimension is kept: a running best key and row per column, row after row."""

from __future__ import annotations

import numpy as np

from ...jit import jit
from ..keys import fold_result, fold_takes, fold_value, found_key, replaces

COLUMN_TILE = 8192  # columns whose running state (key and row, 16 bytes each) stays in the L2 cache
ROW_GROUP = 8  # rows folded into the state per pass over a tile: 8 reads of input per state load and store
# Tile widths (columns) folded one row at a time instead: eight rows of 0.5 to 2 KiB read side by side are
# eight streams too short for the hardware prefetchers, where one row after the other is a single stream.
ROW_BY_ROW = (96, 1024)


@jit
def fold(v, m, p, row, kind, order):  # type: ignore[no-untyped-def]
    """One element (fold value ``v`` of row ``row``, ``keys.fold_value``) folded into a column's
    (value ``m``, row ``p``)."""
    return (v, row) if fold_takes(v, m, kind, order) else (m, p)


@jit
def fold_row(best, pos, xr, row, kind, order):  # type: ignore[no-untyped-def]
    for c in range(best.size):
        best[c], pos[c] = fold(fold_value(xr[c], kind), best[c], pos[c], row, kind, order)


@jit
def fold_rows(best, pos, x, rb, sr, row, kind, order):  # type: ignore[no-untyped-def]
    """Rows ``row``..``row + 7`` of a contiguous tile (``sr`` apart), in order, folded into the state at once:
    the state is loaded and stored once per eight input rows."""
    w = best.size
    x0, x1 = x[rb:rb + w], x[rb + sr:rb + sr + w]
    x2, x3 = x[rb + 2 * sr:rb + 2 * sr + w], x[rb + 3 * sr:rb + 3 * sr + w]
    x4, x5 = x[rb + 4 * sr:rb + 4 * sr + w], x[rb + 5 * sr:rb + 5 * sr + w]
    x6, x7 = x[rb + 6 * sr:rb + 6 * sr + w], x[rb + 7 * sr:rb + 7 * sr + w]
    r0, r1, r2, r3 = row, np.int32(row + 1), np.int32(row + 2), np.int32(row + 3)
    r4, r5, r6, r7 = np.int32(row + 4), np.int32(row + 5), np.int32(row + 6), np.int32(row + 7)
    for c in range(w):
        m, p = fold(fold_value(x0[c], kind), best[c], pos[c], r0, kind, order)
        m, p = fold(fold_value(x1[c], kind), m, p, r1, kind, order)
        m, p = fold(fold_value(x2[c], kind), m, p, r2, kind, order)
        m, p = fold(fold_value(x3[c], kind), m, p, r3, kind, order)
        m, p = fold(fold_value(x4[c], kind), m, p, r4, kind, order)
        m, p = fold(fold_value(x5[c], kind), m, p, r5, kind, order)
        m, p = fold(fold_value(x6[c], kind), m, p, r6, kind, order)
        m, p = fold(fold_value(x7[c], kind), m, p, r7, kind, order)
        best[c], pos[c] = m, p


ROW_CHUNK = 1 << 20  # rows reduced into one tile state before it is merged: row numbers stay int32, as wide as the keys


@jit
def argmin_columns(x, x0, sizes, xs, red, w, slot0, index0, start, stop, cur, idx, kind, order, floats):  # type: ignore
    """The last dimension is kept: a running minimum key and row per column, updated row after row.

    The reduced dimension just before the last one gives the rows (one row when there is none); every
    dimension before those walks outer positions ``start``..``stop``. Columns go in tiles whose running
    state stays in cache; contiguous tiles fold eight rows per pass, branch-free, so that it vectorises.
    ``floats`` is unused: the branch-free column update compares integer keys.
    """
    nd = sizes.size
    ncols, sc, wc = sizes[-1], xs[-1], w[-1]
    has_rows = nd >= 2 and red[nd - 2] == 1
    nrows = sizes[nd - 2] if has_rows else 1
    sr = xs[nd - 2] if has_rows else 0
    wr = w[nd - 2] if has_rows else 0
    outer_dims = nd - 2 if has_rows else nd - 1
    tile = min(ncols, COLUMN_TILE)
    best = np.empty(tile, dtype=cur.dtype)
    pos = np.empty(tile, dtype=np.int32)
    for outer in range(start, stop):
        xb, slot_base, index = x0, slot0, index0
        r = outer
        for d in range(outer_dims - 1, -1, -1):
            i = r % sizes[d]
            r //= sizes[d]
            xb += i * xs[d]
            if red[d]:
                index += i * w[d]
            else:
                slot_base += i * w[d]
        for c0 in range(0, ncols, tile):
            width = min(tile, ncols - c0)
            tb, tp = best[:width], pos[:width]
            for r0 in range(0, nrows, ROW_CHUNK):
                rows = min(nrows - r0, ROW_CHUNK)
                cb = xb + c0 * sc + r0 * sr
                for c in range(width):
                    tb[c] = fold_value(x[cb + c * sc], kind)
                    tp[c] = 0
                row = 1
                if sc == 1:
                    if not ROW_BY_ROW[0] <= width <= ROW_BY_ROW[1]:
                        while row + ROW_GROUP <= rows:
                            fold_rows(tb, tp, x, cb + row * sr, sr, np.int32(row), kind, order)
                            row += ROW_GROUP
                    while row < rows:
                        fold_row(tb, tp, x[cb + row * sr:cb + row * sr + width], np.int32(row), kind, order)
                        row += 1
                else:
                    for row in range(1, rows):
                        rb = cb + row * sr
                        for c in range(width):
                            tb[c], tp[c] = fold(fold_value(x[rb + c * sc], kind), tb[c], tp[c], np.int32(row), kind,
                                                order)
                for c in range(width):
                    m = fold_result(tb[c], kind)
                    slot, at = slot_base + (c0 + c) * wc, index + (r0 + tp[c]) * wr
                    if found_key(m, kind) and (idx[slot] < 0 or replaces(m, at, cur[slot], idx[slot], order)):
                        cur[slot], idx[slot] = m, at  # (a column of NaN found nothing)

