"""SOFTMAX and LOG_SOFTMAX of FLOAT32 rows in Numba: docs/semantics.md 9g's steps, one row at a time.

Per row: the largest element ``m`` (+0.0 above -0.0) and whether a NaN occurs; ``e_i = EXP(x_i - m)`` (the
FLOAT32 difference, then the correctly rounded function of ``rounded``) written to the output; the exact sum of
the ``e_i`` by REDUCE's accumulator (``sums.accumulate``), rounded once to FLOAT32 (``sums.finish``); then each
``e_i / S`` (SOFTMAX) or ``(x_i - m) - LOG(S)`` (LOG_SOFTMAX) in FLOAT32. The same steps as the NumPy path
(``softmax``), so the two give the same bits. The functions are made on first use: compiling the rounded
functions takes a few seconds, which importing the kernel modules should not cost.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import numpy as np
from numba import njit

from . import rounded, sums
from .rounded import _bits_float, _float_bits

_FLOAT32 = sums.FORMATS[np.dtype(np.float32)]
LOG_SOFTMAX = 1  # the kernels' ``log`` flag


@cache
def row_kernel() -> Any:
    """``rows(x, out, log)``: each row of the 2-D FLOAT32 ``x`` (rows contiguous) normalized into ``out``."""
    exp = rounded.EXP_FLOAT32
    log_ = rounded.LOG_FLOAT32
    accumulate, finish = sums.accumulate, sums.finish
    words, bins_count, digit_count, function = sums.WORDS, sums.BINS, sums.DIGITS + 3, sums.SUM
    precision, base, inf_bits, nan_bits, sign_bit = _FLOAT32

    @njit(nogil=True)
    def largest(row):  # type: ignore[no-untyped-def]
        """The row's largest element (+0.0 above -0.0) and whether it holds a NaN."""
        m = np.float32(-np.inf)
        nan = False
        for i in range(row.shape[0]):
            v = row[i]
            if v > m:
                m = v
            elif v != v:
                nan = True
            elif v == 0 and m == 0 and _float_bits(v) == 0:
                m = v  # +0.0 after -0.0
        return m, nan

    @njit(nogil=True)
    def rows(x, out, log):  # type: ignore[no-untyped-def]
        acc = np.zeros(words, np.int64)
        bins = np.zeros(bins_count, np.float64)
        digits = np.zeros(digit_count, np.int64)
        n = x.shape[1]
        for r in range(x.shape[0]):
            row = x[r]
            o = out[r]
            m, nan = largest(row)
            if nan or math.isinf(m) or n == 0:
                for i in range(n):
                    o[i] = np.float32(np.nan)
                continue
            for i in range(n):
                o[i] = exp(row[i] - m)  # a FLOAT32 difference, then EXP correctly rounded
            acc[:] = 0
            accumulate(o, o.view(np.uint32), 0, n, function, acc, bins)
            s = _bits_float(np.uint32(finish(acc, n, False, precision, base, inf_bits, nan_bits, sign_bit, digits)))
            if log == LOG_SOFTMAX:
                ls = log_(s)
                for i in range(n):
                    o[i] = (row[i] - m) - ls
            else:
                for i in range(n):
                    o[i] = o[i] / s

    return rows
