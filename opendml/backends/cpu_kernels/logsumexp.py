"""REDUCE LOG_SUM_EXP of FLOAT32 (FLOAT16 through its exact FLOAT32 copy): the reference's steps, compiled.

The definition (docs/semantics.md, REDUCE): a row holding a NaN gives NaN; else with ``m`` its largest element, an
infinite ``m`` is the answer (+inf, or -inf where every element is -inf); else ``m + ln S`` correctly rounded to
the output type (``opendml.rounded.log_sum``), where ``S`` is the exact sum of ``e_i = EXP(x_i - m)``: the FLOAT32
difference and EXP correctly rounded to FLOAT32, SOFTMAX's steps 1 to 4.

The same bits here: SOFTMAX's compiled row steps (``softmax_rows``: the largest element by integer keys, the
vectorized EXP with its rounding test and hard cases, the exact sum by levels into REDUCE's accumulator), then
``log_sums.log_of_sum`` on the accumulator with ``m`` as the addend. Rows are shared among the threads as SUM's
are (``sums.split_rows``): where there are fewer long rows than threads, each row is cut into segments whose
largest elements are combined first, then whose accumulators of terms merge exactly, so the cut never shows.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
from numba import njit

from . import log_sums, softmax_rows, sum_accumulator
from .sums import SPLIT_MIN, split_rows

_DIGITS = sum_accumulator.DIGITS + 3


@cache
def _kernels() -> tuple[Any, Any, Any]:
    """``largest_task``, ``terms_task`` (``split_rows``' task) and ``finish(accs, ms, base, lowest, top, out)``."""
    exp_rows, largest = softmax_rows.exp_float32(), softmax_rows.largest
    exact_sum, log_of_sum = softmax_rows.exact_sum_levels, log_sums.log_of_sum

    @njit(nogil=True)
    def largest_task(x, r0, r1, i0, i1, out):  # type: ignore[no-untyped-def]
        """``out[r]``: the largest of elements ``i0:i1`` of row ``r`` (``r0 <= r < r1``), NaN where one is NaN."""
        for r in range(r0, r1):
            m, nan = largest(x[r, i0:i1])
            out[r] = np.float32(np.nan) if nan else m

    @njit(nogil=True)
    def terms_task(x, r0, r1, i0, i1, ms, accs):  # type: ignore[no-untyped-def]
        """The exact sum of ``EXP(x - m)`` over rows ``r0:r1``, elements ``i0:i1``, into ``accs[r - r0]``."""
        p = np.empty(softmax_rows.BLOCK, np.float64)
        q = np.empty(softmax_rows.BLOCK, np.float64)
        e = np.empty(i1 - i0, np.float32)
        for r in range(r0, r1):
            m = ms[r]
            if np.isfinite(m):
                exp_rows(x[r, i0:i1], m, e)
                exact_sum(e, accs[r - r0], p, q)

    @njit(nogil=True)
    def finish(accs, ms, base, lowest, top, out):  # type: ignore[no-untyped-def]
        digits = np.zeros(_DIGITS, np.int64)
        scratch = np.zeros(_DIGITS, np.int64)
        for r in range(accs.shape[0]):
            m = ms[r]
            out[r] = np.float64(m) if not np.isfinite(m) else log_of_sum(accs[r], digits, scratch, np.float64(m),
                                                                        base, lowest, top)

    return largest_task, terms_task, finish


def _largest(x: np.ndarray, threads: int) -> np.ndarray:
    """Each row's largest element (+0.0 above -0.0; NaN where one is NaN): rows shared among the threads, or with
    fewer long rows than threads each row's segments' largest, then the largest of those."""
    from .threads import run_tasks

    largest_task = _kernels()[0]
    rows, n = x.shape
    if rows >= threads or n < SPLIT_MIN or threads <= 1:
        out = np.empty(rows, np.float32)
        step = -(-rows // max(1, min(threads, rows)))
        run_tasks(largest_task, [(x, r0, min(rows, r0 + step), 0, n, out) for r0 in range(0, rows, step)], threads)
        return out
    seg = -(-n // threads)
    parts = np.empty((-(-n // seg), rows), np.float32)
    run_tasks(largest_task, [(x, 0, rows, p * seg, min(n, (p + 1) * seg), parts[p]) for p in range(len(parts))],
              threads)
    bits = parts.view(np.int32)
    keys = bits ^ ((bits >> 31) & 0x7FFFFFFF)  # ordered as the numbers, -0.0 just below +0.0
    out = np.take_along_axis(parts, keys.argmax(axis=0)[None], axis=0)[0]
    out[np.isnan(parts).any(axis=0)] = np.nan
    return out


def log_sum_exp_rows(x: np.ndarray, grid: tuple[int, int, float], threads: int) -> np.ndarray:
    """LOG_SUM_EXP of each row of ``x`` (2-D FLOAT32, rows contiguous, each of at least one element) rounded once
    to the format whose grid is ``grid`` (``Precision``'s base, lowest, top), as float64 values that convert to it
    exactly; the rows shared among up to ``threads`` threads (long rows cut into segments)."""
    from .threads import run_tasks

    _, terms_task, finish = _kernels()
    ms = _largest(x, threads)
    accs = split_rows(terms_task, x, (ms,), sum_accumulator.WORDS, softmax_rows.BLOCK, threads)
    rows = x.shape[0]
    out = np.empty(rows, np.float64)
    step = max(-(-rows // max(1, threads)), 256)  # a row's logarithm takes about half a microsecond
    run_tasks(finish, [(accs[r:r + step], ms[r:r + step], *grid, out[r:r + step]) for r in range(0, rows, step)],
              threads)
    return out
