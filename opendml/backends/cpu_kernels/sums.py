"""Exact sums of FLOAT32 rows (REDUCE's SUM, AVERAGE and L1 over the innermost axis): each row's exact sum,
rounded once; and ``split_rows``, which shares the rows (or segments of a few long rows) of any row accumulation
among the threads.

The accumulator, and why a block's float64 sum is exact, is in ``sum_accumulator``; the rounding in
``sum_rounding``; the sums over the first axis in ``sum_columns``; FLOAT16 rows in ``sum_halves``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .jit import jit
from .sum_accumulator import ABS, BINS, BLOCK, SPAN, WORDS, _fast_block, accumulate, merge
from .sum_rounding import _finished


@jit
def _rows_task(x, r0, r1, i0, i1, function, accs):  # type: ignore[no-untyped-def]
    """Rows ``r0:r1`` of ``x`` (2-D, rows contiguous), elements ``i0:i1`` of each, into ``accs[r - r0]``."""
    bins = np.zeros(BINS, np.float64)
    xb = x.view(np.uint32)
    for r in range(r0, r1):
        accumulate(x[r], xb[r], i0, i1, function, accs[r - r0], bins)


@jit
def _short_rows_task(x, r0, r1, function, accs, sums64, direct):  # type: ignore[no-untyped-def]
    """Rows ``r0:r1`` of ``x`` of at most ``BLOCK`` elements each. A row whose float64 sum is exact (its span
    fits, or every element is a zero) has that sum in ``sums64`` and ``direct`` set: the exact sum as a float64,
    which one conversion rounds to the output type (IEEE conversion: to nearest even, subnormals, overflow to
    infinity, the sign of a zero: float64 addition gives -0.0 only where every element is -0.0, as the rule is).
    Any other row is accumulated into ``accs``."""
    bins = np.zeros(BINS, np.float64)
    xb = x.view(np.uint32)
    absolute = function == ABS
    for r in range(r0, r1):
        s, hi, lo = _fast_block(x[r], xb[r], absolute)
        emax = hi >> 24
        if hi == 0 or (emax != 255 and emax - max((lo + 1) >> 24, 1) <= SPAN):
            sums64[r - r0] = s
            direct[r - r0] = 1
        else:
            accumulate(x[r], xb[r], 0, x.shape[1], function, accs[r - r0], bins)


def _short_rows(x: np.ndarray, function: int, out_dtype: np.dtype, threads: int, accs: np.ndarray) -> np.ndarray:
    """``sum_rows`` of rows of at most ``BLOCK`` elements: most rows' float64 sums are exact, and converted."""
    from .threads import run_tasks

    rows = x.shape[0]
    sums64 = np.zeros(rows, np.float64)
    direct = np.zeros(rows, np.uint8)
    step = -(-rows // max(1, min(threads, rows)))
    tasks = [(x, r0, min(rows, r0 + step), function, accs[r0:r0 + step], sums64[r0:r0 + step], direct[r0:r0 + step])
             for r0 in range(0, rows, step)]
    run_tasks(_short_rows_task, tasks, threads)
    with np.errstate(over="ignore"):  # a sum past the type's largest value converts to an infinity, as it must
        result = sums64.astype(out_dtype)
    rest = np.flatnonzero(direct == 0)
    if rest.size:
        result[rest] = _finished(accs[rest], x.shape[1], False, out_dtype)
    return result


SPLIT_MIN = 1 << 16  # elements of a row below which a row is never split between threads


def sum_rows(x: np.ndarray, function: int, average: bool, out_dtype: np.dtype, threads: int) -> np.ndarray:
    """Each row of ``x`` (2-D FLOAT32, rows contiguous) summed exactly and rounded once to ``out_dtype``
    (AVERAGE: the exact quotient by the row's length), on up to ``threads`` threads. Rows are shared among
    the threads; where there are fewer rows than threads, each row is split into segments summed apart and
    merged (exactly: the split never shows)."""
    rows, n = x.shape
    if n <= BLOCK and not average:
        return _short_rows(x, function, out_dtype, threads, np.zeros((rows, WORDS), np.int64))
    return _finished(row_accumulators(x, function, threads), n, average, out_dtype, threads=threads)


def row_accumulators(x: np.ndarray, function: int, threads: int) -> np.ndarray:
    """``sum_rows``' accumulators (rows, ``WORDS``), not yet rounded."""
    return split_rows(_rows_task, x, (function,), WORDS, BLOCK, threads)


def split_rows(task: Callable[..., None], x: np.ndarray, args: tuple[object, ...], words: int, block: int,
               threads: int) -> np.ndarray:
    """The accumulators (rows, ``words``) of ``task(x, r0, r1, i0, i1, *args, accs)`` over the rows of ``x`` on up
    to ``threads`` threads: rows shared among the threads, or, with fewer long rows than threads, each row split
    into segments of whole ``block``s whose accumulators merge exactly."""
    from .threads import run_tasks

    rows, n = x.shape
    accs = np.zeros((rows, words), np.int64)
    if rows >= threads or n < SPLIT_MIN or threads <= 1:
        step = -(-rows // max(1, min(threads, rows)))
        tasks = [(x, r0, min(rows, r0 + step), 0, n, *args, accs[r0:r0 + step]) for r0 in range(0, rows, step)]
        run_tasks(task, tasks, threads)
        return accs
    seg = -(-n // threads)
    seg = -(-seg // block) * block
    partial = np.zeros((threads, rows, words), np.int64)
    tasks = [(x, 0, rows, p * seg, min(n, (p + 1) * seg), *args, partial[p]) for p in range(threads)]
    run_tasks(task, tasks, threads)
    for p in range(threads):
        for r in range(rows):
            merge(accs[r], partial[p, r])
    return accs
