"""REDUCE LOG_SUM_EXP of FLOAT32 (FLOAT16 through its exact FLOAT32 copy): the reference's steps, compiled.

The definition (docs/semantics.md, REDUCE): a row holding a NaN gives NaN; else with ``m`` its largest element, an
infinite ``m`` is the answer (+inf, or -inf where every element is -inf); else ``m + ln S`` correctly rounded to
the output type (``opendml.rounded.log_sum``), where ``S`` is the exact sum of ``e_i = EXP(x_i - m)``: the FLOAT32
difference and EXP correctly rounded to FLOAT32, SOFTMAX's steps 1 to 4.

The same bits here: SOFTMAX's compiled row steps (``softmax_rows``: the largest element by integer keys, the
vectorized EXP with its rounding test and hard cases, the exact sum by levels into REDUCE's accumulator), then
``log_sums.log_of_sum`` on the accumulator with ``m`` as the addend.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
from numba import njit

from . import log_sums, softmax_rows, sum_accumulator

_WORDS, _DIGITS = sum_accumulator.WORDS, sum_accumulator.DIGITS + 3


@cache
def _rows_task() -> Any:
    """``task(x, r0, r1, out, base, lowest, top)``: LOG_SUM_EXP of rows ``r0 .. r1`` of ``x`` into ``out``."""
    exp_rows, largest = softmax_rows.exp_float32(), softmax_rows.largest
    exact_sum, log_of_sum = softmax_rows.exact_sum_levels, log_sums.log_of_sum

    @njit(nogil=True)
    def task(x, r0, r1, out, base, lowest, top):  # type: ignore[no-untyped-def]
        acc = np.zeros(_WORDS, np.int64)
        digits = np.zeros(_DIGITS, np.int64)
        scratch = np.zeros(_DIGITS, np.int64)
        p = np.empty(softmax_rows.BLOCK, np.float64)
        q = np.empty(softmax_rows.BLOCK, np.float64)
        e = np.empty(x.shape[1], np.float32)
        for r in range(r0, r1):
            m, nan = largest(x[r])
            if nan or np.isinf(m):
                out[r] = np.nan if nan else np.float64(m)
                continue
            exp_rows(x[r], m, e)
            acc[:] = 0
            exact_sum(e, acc, p, q)
            out[r] = log_of_sum(acc, digits, scratch, np.float64(m), base, lowest, top)

    return task


def log_sum_exp_rows(x: np.ndarray, grid: tuple[int, int, float], threads: int) -> np.ndarray:
    """LOG_SUM_EXP of each row of ``x`` (2-D FLOAT32, rows contiguous, each of at least one element) rounded once
    to the format whose grid is ``grid`` (``Precision``'s base, lowest, top), as float64 values that convert to it
    exactly; the rows shared among up to ``threads`` threads."""
    from .threads import run_tasks

    rows = x.shape[0]
    out = np.empty(rows, np.float64)
    step = -(-rows // max(1, min(threads, rows)))
    task = _rows_task()
    run_tasks(task, [(x, r0, min(rows, r0 + step), out, *grid) for r0 in range(0, rows, step)], threads)
    return out
