"""REDUCE MULTIPLY of floats on the CPU in Numba: the reference's fixed order (``ops/reduce.py``'s ``_product``, the
pairwise tree over each row's flattened index: node ``i`` of a level the product of nodes ``i`` and ``i + rest`` of
the level below, ``rest`` its upper half's start, an odd level's middle node carried up), in float64, level by
level in place in a scratch row, rounded once to the output type by the caller. Each product is one IEEE float64
multiplication of the same two operands as the reference's, so the same bits; rows are shared among the threads,
and a row too long for one thread has each level's products shared instead."""

from __future__ import annotations

import numpy as np

from .jit import jit

LONG = 1 << 16  # a level's products from which one row's level is shared among the threads


@jit
def _level(source, target, half, rest, i0, i1):  # type: ignore[no-untyped-def]
    """``target[i] = source[i] * source[i + rest]`` for ``i0 <= i < i1`` (``i1 <= half``), in float64."""
    for i in range(i0, i1):
        target[i] = np.float64(source[i]) * np.float64(source[i + rest])


@jit
def _finish_row(scratch, m):  # type: ignore[no-untyped-def]
    """The tree's levels above one of ``m`` nodes (``scratch[:m]``), in place: its root."""
    while m > 1:
        half, rest = m // 2, m - m // 2
        for i in range(half):  # reads i + rest >= rest > i: never a node written at this level
            scratch[i] = scratch[i] * scratch[i + rest]
        m = rest
    return scratch[0]


@jit
def _first_level(row, scratch):  # type: ignore[no-untyped-def]
    """The row's first level into ``scratch`` (its middle element carried); returns the level's width."""
    n = row.shape[0]
    half, rest = n // 2, n - n // 2
    _level(row, scratch, half, rest, 0, half)
    if rest > half:
        scratch[half] = np.float64(row[half])
    return rest


@jit
def _rows_task(x, r0, r1, out):  # type: ignore[no-untyped-def]
    scratch = np.empty(x.shape[1] // 2 + 1, np.float64)
    for r in range(r0, r1):
        out[r] = _finish_row(scratch, _first_level(x[r], scratch)) if x.shape[1] > 1 else np.float64(x[r, 0])


def _long_row(row: np.ndarray, threads: int) -> float:
    """One row's product, each level of at least ``LONG`` products shared among the threads (the first is)."""
    from .threads import run_tasks

    source: np.ndarray = row
    scratch = np.empty(row.shape[0] // 2 + 1, np.float64)
    m = row.shape[0]
    while m // 2 >= LONG:
        half, rest = m // 2, m - m // 2
        step = -(-half // threads)
        run_tasks(_level, [(source, scratch, half, rest, i, min(half, i + step)) for i in range(0, half, step)],
                  threads)
        if rest > half:
            scratch[half] = source[half]
        source, m = scratch, rest
    return float(_finish_row(scratch, m))


def products(x: np.ndarray, threads: int) -> np.ndarray:
    """The float64 product of each row of ``x`` (2-D FLOAT32 or float64, rows contiguous, at least one element
    each) in the tree's order, on up to ``threads`` threads."""
    from .threads import run_tasks

    rows = x.shape[0]
    out = np.empty(rows, np.float64)
    if rows < threads and x.shape[1] // 2 >= LONG:
        for r in range(rows):
            out[r] = _long_row(x[r], threads)
        return out
    step = -(-rows // max(1, min(threads, rows)))
    run_tasks(_rows_task, [(x, r0, min(rows, r0 + step), out) for r0 in range(0, rows, step)], threads)
    return out


COLUMN_TILE = 64  # columns whose tree levels a task keeps in one scratch (2**11 rows: 1 MiB of float64)


@jit
def _columns_task(x, c0, c1, out):  # type: ignore[no-untyped-def]
    """The product of each column ``c0 <= c < c1`` of ``x`` (rows contiguous): the same tree over the column's
    index, each level a product of whole row pieces, ``COLUMN_TILE`` columns at a time."""
    n = x.shape[0]
    scratch = np.empty((n // 2 + 1, COLUMN_TILE), np.float64)
    for t0 in range(c0, c1, COLUMN_TILE):
        w = min(COLUMN_TILE, c1 - t0)
        half, rest = n // 2, n - n // 2
        for i in range(half):
            for c in range(w):
                scratch[i, c] = np.float64(x[i, t0 + c]) * np.float64(x[i + rest, t0 + c])
        if rest > half:
            for c in range(w):
                scratch[half, c] = np.float64(x[half, t0 + c])
        m = rest
        while m > 1:
            half, rest = m // 2, m - m // 2
            for i in range(half):
                for c in range(w):
                    scratch[i, c] = scratch[i, c] * scratch[i + rest, c]
            m = rest
        for c in range(w):
            out[t0 + c] = scratch[0, c] if n > 1 else np.float64(x[0, t0 + c])


def column_products(x: np.ndarray, threads: int) -> np.ndarray:
    """The float64 product of each column of ``x`` (2-D FLOAT32, rows contiguous: a first-axis reduction) in the
    tree's order over the column's index, the columns shared among up to ``threads`` threads."""
    from .threads import run_tasks

    columns = x.shape[1]
    out = np.empty(columns, np.float64)
    step = -(-columns // max(1, threads))
    step = -(-step // COLUMN_TILE) * COLUMN_TILE
    run_tasks(_columns_task, [(x, c, min(columns, c + step), out) for c in range(0, columns, step)], threads)
    return out
