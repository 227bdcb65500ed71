"""A reduction's rows made contiguous: where the reduced axes are one block of a C-contiguous array's axes but not
the innermost (a first-axis reduction), each row's elements lie a whole stride apart, and NumPy's copy of the
transposed view walks memory one element a cache line (a 4096 x 4096 FLOAT32 copy took 124 ms on 2 cores). Here
the copy goes tile by tile (``TILE`` x ``TILE`` elements: every cache line read and written whole while the tile
is in cache), the tiles shared among the threads: the same values, in a few milliseconds."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .jit import jit

TILE = 32


@jit
def _transpose_task(a, out, j0, j1):  # type: ignore[no-untyped-def]
    """out[b, j, i] = a[b, i, j] for every batch ``b``, every ``i``, and ``j0 <= j < j1``, tile by tile."""
    rows = a.shape[1]
    for b in range(a.shape[0]):
        for i0 in range(0, rows, TILE):
            i1 = min(i0 + TILE, rows)
            for t0 in range(j0, j1, TILE):
                for j in range(t0, min(t0 + TILE, j1)):
                    for i in range(i0, i1):
                        out[b, j, i] = a[b, i, j]


def contiguous_rows(x: np.ndarray, axes: Sequence[int], threads: int) -> np.ndarray | None:
    """``x``'s rows (one per output element, the reduced axes flattened and innermost) as a contiguous copy made
    tile by tile, where ``x`` is C-contiguous and ``axes`` are one block of its axes that is not the innermost;
    else None (the caller copies as it can)."""
    from .threads import run_tasks

    first, last = min(axes), max(axes) + 1
    if not x.flags.c_contiguous or last - first != len(axes) or last == x.ndim:
        return None
    shape = x.shape
    batch, n = int(np.prod(shape[:first])), int(np.prod(shape[first:last]))
    columns = int(np.prod(shape[last:]))
    a = x.reshape(batch, n, columns).view(f"u{x.itemsize}")  # the bits moved as they are (FLOAT16 too)
    out = np.empty((batch, columns, n), a.dtype)
    step = -(-columns // max(1, threads * 4))
    step = -(-step // TILE) * TILE
    run_tasks(_transpose_task, [(a, out, j, min(columns, j + step)) for j in range(0, columns, step)], threads)
    return out.reshape(batch * columns, n).view(x.dtype)
