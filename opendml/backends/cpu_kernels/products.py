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


COLUMN_TILE = 512  # columns a tree evaluates side by side (its stack of partial products, 4 KiB a level, in cache)


@jit
def _level_sizes(n):  # type: ignore[no-untyped-def]
    """The tree's level widths ``m[0] = n, m[l + 1] = m[l] - m[l] // 2`` down to the root's 1."""
    depth = 0
    m = n
    while m > 1:
        m -= m // 2
        depth += 1
    sizes = np.empty(depth + 1, np.int64)
    sizes[0] = n
    for level in range(1, depth + 1):
        sizes[level] = sizes[level - 1] - sizes[level - 1] // 2
    return sizes


@jit
def _leaf(t, sizes):  # type: ignore[no-untyped-def]
    """Leaf ``t`` of the root's complete binary tree: its row, or -1 where a node on its path does not exist. Node
    ``i`` of level ``l`` has the children ``i`` and ``i + m[l]`` of level ``l - 1``, bit ``l - 1`` of ``t`` choosing
    the second; a child at or past its level's width is absent (an odd level's carried middle node has one child)."""
    i = 0
    for level in range(sizes.shape[0] - 1, 0, -1):
        if (t >> (level - 1)) & 1:
            i += sizes[level]
            if i >= sizes[level - 1]:
                return -1
    return i


@jit
def _join(dest, a, a_one, b, b_one, w):  # type: ignore[no-untyped-def]
    """``dest[:w] = a[:w] * b[:w]``, an absent operand (``*_one``) leaving the other as it is (the carried node:
    no multiplication, as multiplying by 1.0 would be); returns whether the result is absent too."""
    if a_one and b_one:
        return True
    if a_one or b_one:
        src = b if a_one else a
        for c in range(w):
            dest[c] = src[c]
        return False
    for c in range(w):
        dest[c] = a[c] * b[c]
    return False


@jit
def _group(x, sizes, t, t0, w, out):  # type: ignore[no-untyped-def]
    """``out[:w]`` = the subtree of height 3 whose first leaf is ``t`` (a multiple of 8) over columns ``t0:t0 + w``,
    its eight rows read and multiplied in one loop, as the tree pairs them (bit 0 of the leaf: the row ``m[1]`` on,
    bit 1: ``m[2]`` on, bit 2: ``m[3]`` on); returns False, leaving ``out`` as it is, where a leaf is absent."""
    if sizes.shape[0] < 4:
        return False
    r = _leaf(t, sizes)
    if r < 0 or _leaf(t + 7, sizes) < 0:  # the last leaf has the largest indices at every level
        return False
    a, b, c = sizes[1], sizes[2], sizes[3]
    p0, p1, p2, p3 = x[r, t0:t0 + w], x[r + a, t0:t0 + w], x[r + b, t0:t0 + w], x[r + b + a, t0:t0 + w]
    p4, p5 = x[r + c, t0:t0 + w], x[r + c + a, t0:t0 + w]
    p6, p7 = x[r + c + b, t0:t0 + w], x[r + c + b + a, t0:t0 + w]
    for k in range(w):
        out[k] = ((np.float64(p0[k]) * np.float64(p1[k])) * (np.float64(p2[k]) * np.float64(p3[k]))) \
            * ((np.float64(p4[k]) * np.float64(p5[k])) * (np.float64(p6[k]) * np.float64(p7[k])))
    return True


@jit
def _carry_up(stack, absent, t, j, right, right_absent, w):  # type: ignore[no-untyped-def]
    """A finished subtree of height ``j`` (``right``), leaf ``t`` its last, joins the stack: into slot ``j`` where it
    is a left child (bit ``j`` of ``t`` clear), else joined to its left sibling in slot ``j``, and so on up; the
    result waits in the first slot whose bit is clear (the counter's carry)."""
    if not (t >> j) & 1:
        absent[j] = _join(stack[j], stack[j], True, right, right_absent, w)
        return
    while True:
        d = j if (t >> (j + 1)) & 1 else j + 1
        absent[d] = _join(stack[d], stack[j], absent[j], right, right_absent, w)
        if d == j + 1:
            return
        right, right_absent, j = stack[j], absent[j], j + 1


@jit
def _columns_task(x, c0, c1, out):  # type: ignore[no-untyped-def]
    """The product of each column ``c0 <= c < c1`` of ``x`` (rows contiguous): the tree over the column's index,
    ``COLUMN_TILE`` columns side by side, evaluated as a binary counter over its leaves (slot ``l`` of ``stack``
    holds a finished subtree of height ``l`` until its sibling is done), eight leaves at a time where all eight are
    present (``_group``), one at a time near the end: each row of ``x`` is read once and a row of partial products
    is kept a level, whatever the column's length."""
    sizes = _level_sizes(x.shape[0])
    depth = sizes.shape[0] - 1
    stack = np.empty((depth + 1, COLUMN_TILE), np.float64)
    leaf = np.empty(COLUMN_TILE, np.float64)
    absent = np.zeros(depth + 1, np.bool_)
    for t0 in range(c0, c1, COLUMN_TILE):
        w = min(COLUMN_TILE, c1 - t0)
        t = 0
        while t < 1 << depth:
            if t & 7 == 0 and _group(x, sizes, t, t0, w, leaf):
                _carry_up(stack, absent, t + 7, 3, leaf, False, w)
                t += 8
                continue
            row = _leaf(t, sizes)
            if row >= 0:
                piece = x[row, t0:t0 + w]
                for c in range(w):
                    leaf[c] = np.float64(piece[c])
            _carry_up(stack, absent, t, 0, leaf, row < 0, w)
            t += 1
        for c in range(w):
            out[t0 + c] = 1.0 if absent[depth] else stack[depth, c]


def column_products(x: np.ndarray, threads: int) -> np.ndarray:
    """The float64 product of each column of ``x`` (2-D FLOAT32, rows contiguous: a first-axis reduction) in the
    tree's order over the column's index, the columns shared among up to ``threads`` threads."""
    from .threads import run_tasks

    columns = x.shape[1]
    out = np.empty(columns, np.float64)
    step = -(-columns // max(1, threads))
    step = -(-step // 16) * 16
    run_tasks(_columns_task, [(x, c, min(columns, c + step), out) for c in range(0, columns, step)], threads)
    return out
