"""REDUCE's SUM and L1 of FLOAT32 rows on the NumPy path (``accumulations.numpy_reduction``): each row's exact sum,
rounded once. A row whose float64 sum is exact (its elements span few enough binades) is converted once; any other
is summed as the exact float64 sums of its pieces of ``PIECE`` elements and the elements of the other pieces,
rounded together as the reference rounds a row (NaN and infinities by the reference). The same bits as the
reference (``ops/reduce.py``) and as the Numba accumulator of ``sum_accumulator``.
"""

from __future__ import annotations

import numpy as np

from ...enums import ReduceFunction
from ...ops.reduce import ReduceParams

WHOLE_ROW_MAX = 1 << 16  # rows up to this long are first summed whole (exact where their span is at most 13)
PIECE = 1 << 10  # elements of a piece: 24 + 19 + 10 bits, so a piece spanning 19 binades sums exactly


def _piece_sums(pieces: np.ndarray, absolute: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each row's float64 sum (``pieces``: 2-D FLOAT32) and whether it is exact: its nonzero elements span at
    most ``53 - 24 - log2(row length)`` binades, so that every partial sum, in any order, is a float64 (the
    argument of ``sum_accumulator``'s module docstring), and no NaN or infinity is among them."""
    a = pieces.view(np.uint32) << np.uint32(1)
    hi = a.max(axis=1).astype(np.int64)
    lo = (a - np.uint32(1)).min(axis=1).astype(np.int64)
    emax, emin = hi >> 24, np.maximum((lo + 1) >> 24, 1)
    span = 29 - max(0, int(pieces.shape[1] - 1).bit_length())
    exact = (hi == 0) | ((emax != 255) & (emax - emin <= span))
    wide = pieces.astype(np.float64)
    if absolute:
        np.abs(wide, out=wide)
    with np.errstate(invalid="ignore", over="ignore"):  # inf + -inf, a float64 overflow: rows not exact, redone
        sums64 = wide.sum(axis=1)
    zero = sums64 == 0  # NumPy's sum may start from +0.0: the sign of an exact zero is the rule's
    if zero.any():
        negative = np.zeros_like(zero) if absolute else (pieces.view(np.uint32) == 0x80000000).all(axis=1)
        sums64[zero] = np.where(negative[zero], -0.0, 0.0)
    return sums64, exact


def _numpy_sums(rows: np.ndarray, params: ReduceParams, out_dtype: np.dtype) -> np.ndarray:
    """SUM or L1 of each row (2-D FLOAT32), exact, rounded once to ``out_dtype``: a row whose float64 sum is
    exact is converted once; any other, by ``_pieces_row``."""
    absolute = params.function is ReduceFunction.L1
    count, n = rows.shape
    result = np.empty(count, out_dtype)
    rest: list[int] = list(range(count))
    if n <= WHOLE_ROW_MAX:  # each row's float64 sum, where the whole row's span allows it
        rest = []
        step = max(1, (1 << 16) // n)  # rows a step: the float64 temporaries stay in the L2 cache
        for r0 in range(0, count, step):
            sums64, exact = _piece_sums(rows[r0:r0 + step], absolute)
            with np.errstate(over="ignore"):
                result[r0:r0 + step] = sums64.astype(out_dtype)
            rest += [r0 + int(k) for k in np.flatnonzero(~exact)]
    for r in rest:
        result[r] = _pieces_row(rows[r], params, out_dtype, absolute)
    return result


def _pieces_row(row: np.ndarray, params: ReduceParams, out_dtype: np.dtype, absolute: bool) -> np.generic:
    """One row's exact sum: the exact float64 sums of its pieces of ``PIECE`` elements, the elements of the other
    pieces, rounded together as the reference rounds a row; NaN and infinities by the reference."""
    from ...ops.reduce import _exact_float, _float_row

    whole = row.size // PIECE * PIECE
    pieces = row[:whole].reshape(-1, PIECE)
    sums64, exact = _piece_sums(pieces, absolute)
    if whole == 0 or not np.isfinite(sums64).all() or not np.isfinite(row[whole:]).all():
        return out_dtype.type(_float_row(params.function, row, out_dtype))
    rest = np.concatenate([pieces[~exact].ravel(), row[whole:]]).astype(np.float64)
    parts = np.concatenate([sums64[exact], np.abs(rest) if absolute else rest])
    if not parts.any():  # zeros only: the sign of the rule
        return out_dtype.type(_float_row(params.function, row, out_dtype))
    with np.errstate(over="ignore"):
        return out_dtype.type(_exact_float(parts, out_dtype))  # type: ignore[no-any-return]
