"""Exact sums of FLOAT16 rows (REDUCE's SUM, AVERAGE and L1), read in place as their bits: every block of
``HALF_BLOCK`` elements sums exactly in float64 whatever its values, and enters ``sum_accumulator``'s accumulator
once; ``sum_rounding`` rounds the total once.

FLOAT32 rows are summed in ``sums``, columns in ``sum_columns``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .halves import half_to_float
from .jit import jit
from .sum_accumulator import ABS, NAN, NINF, NONNEG, PINF, UNIT, WORDS, add_double
from .sum_rounding import _finished
from .sums import split_rows

HALF_BLOCK = 1 << 13  # FLOAT16 elements whose float64 sum is always exact (see ``_half_block``)


@njit(nogil=True, cache=True, fastmath={"reassoc"})
def _half_block(h, absolute):  # type: ignore[no-untyped-def]
    """The float64 sum of FLOAT16 elements (``h``: their bits), at most ``HALF_BLOCK`` of them, and the largest
    magnitude's bits (0x7C00 and above: an infinity or a NaN is among them). Exact whatever the values: every
    finite FLOAT16 is an integer multiple of 2**-24 below 2**16, so every partial sum of 2**13 of them is an
    integer multiple of 2**-24 below 2**53 of it, a float64, in any order."""
    hi = np.uint16(0)
    for i in range(h.shape[0]):
        hi = max(hi, np.uint16(h[i] & np.uint16(0x7FFF)))
    s = -0.0
    if absolute:
        for i in range(h.shape[0]):
            s += abs(np.float64(half_to_float(h[i])))
    else:
        for i in range(h.shape[0]):
            s += np.float64(half_to_float(h[i]))
    return s, hi


@jit
def _half_rows_task(h, r0, r1, i0, i1, function, accs):  # type: ignore[no-untyped-def]
    """Rows ``r0:r1`` of FLOAT16 bits ``h`` (2-D, rows contiguous), elements ``i0:i1`` of each, into
    ``accs[r - r0]``."""
    absolute = function == ABS
    for r in range(r0, r1):
        acc = accs[r - r0]
        for j0 in range(i0, i1, HALF_BLOCK):
            block = h[r, j0:min(i1, j0 + HALF_BLOCK)]
            s, hi = _half_block(block, absolute)
            if hi >= 0x7C00:  # the specials noted, the finite elements summed (still exactly)
                s = -0.0
                for i in range(block.shape[0]):
                    b = block[i] & 0x7FFF if absolute else block[i]
                    if (b & 0x7FFF) > 0x7C00:
                        acc[NAN] = 1
                    elif (b & 0x7FFF) == 0x7C00:
                        acc[NINF if b & 0x8000 else PINF] = 1
                    else:
                        v = np.float64(half_to_float(b))
                        s += v
                    if b != 0x8000:
                        acc[NONNEG] = 1
            if s != 0.0:
                add_double(acc, s, UNIT)
            if not (s == 0.0 and np.signbit(s)):  # -0.0 only where every element is -0.0
                acc[NONNEG] = 1


def sum_half_rows(h: np.ndarray, function: int, average: bool, out_dtype: np.dtype, threads: int) -> np.ndarray:
    """``sums.sum_rows`` of FLOAT16 rows given as their bits (2-D uint16, rows contiguous), read in place."""
    return _finished(half_row_accumulators(h, function, threads), h.shape[1], average, out_dtype, threads=threads)


def half_row_accumulators(h: np.ndarray, function: int, threads: int) -> np.ndarray:
    """``sum_half_rows``' accumulators (rows, ``WORDS``): rows shared among the threads, or a few long rows each
    split between them."""
    return split_rows(_half_rows_task, h, (function,), WORDS, HALF_BLOCK, threads)
