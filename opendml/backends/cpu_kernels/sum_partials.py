"""Exact partial sums of REDUCE's SUM, AVERAGE, L1 (``exact_partials``) and SUM_SQUARE, L2 (``square_partials``)
of FLOAT32 and FLOAT16 rows, merged elsewhere (Dask's chunks): each row's exact sum as the accumulator words of
``sum_accumulator`` or ``squares``, which add word by word whatever the split of the row, and their rounding once
(``finish_partials``, ``finish_square_partials``). Numba's accumulators where Numba is installed, else Python's
integers: the same words, and the same bits.
"""

from __future__ import annotations

import math

import numpy as np


def exact_partials(rows: np.ndarray, absolute: bool) -> np.ndarray:
    """Each row's exact sum (2-D FLOAT32 or FLOAT16, rows contiguous; ``absolute``: of the magnitudes, L1) as the
    accumulator words of ``sum_accumulator`` (``WORDS`` int64 a row: digits carried, each below 2**32 but the top
    one, then the NaN, +inf, -inf and "an element other than -0.0" flags). Partials of any split of a row add
    word by word (flags by a sum read as nonzero) to the whole row's: ``finish_partials`` rounds them once.
    Numba's accumulator where it is installed, else Python's integers: the same words."""
    from . import numba_available

    if numba_available():
        from . import sum_accumulator, sum_halves, sums

        accs = np.zeros((rows.shape[0], sum_accumulator.WORDS), np.int64)
        function = sum_accumulator.ABS if absolute else sum_accumulator.SUM
        if rows.dtype == np.float16:
            sum_halves._half_rows_task(np.ascontiguousarray(rows).view(np.uint16), 0, rows.shape[0], 0, rows.shape[1],
                                 function, accs)
        else:
            sums._rows_task(np.ascontiguousarray(rows, np.float32), 0, rows.shape[0], 0, rows.shape[1], function,
                            accs)
        for acc in accs:
            sum_accumulator._carry(acc[:sum_accumulator.DIGITS])
        return accs
    return np.array([_python_words(row, absolute) for row in rows], np.int64).reshape(-1, WORDS)


DIGITS, WORDS = 11, 15  # as ``sum_accumulator``: digits of base 2**32 in units of 2**-149, then four flags


def _python_words(row: np.ndarray, absolute: bool) -> list[int]:
    """``exact_partials``' words of one row by Python's integers (every finite float32 is an integer multiple
    of 2**-149)."""
    from fractions import Fraction

    values = np.abs(row.astype(np.float64)) if absolute else row.astype(np.float64)
    finite = values[np.isfinite(values)]
    total = sum((Fraction(v) for v in finite.tolist()), Fraction(0)) * (1 << 149)
    assert total.denominator == 1
    integer = int(total)
    digits = [(integer >> (32 * k)) & 0xFFFFFFFF for k in range(DIGITS - 1)]
    digits.append(integer >> (32 * (DIGITS - 1)))  # the top digit keeps the sign
    flags = [int(np.isnan(values).any()), int(np.isposinf(values).any()), int(np.isneginf(values).any()),
             int(bool(((row.view(f"u{row.itemsize}") != (1 << (8 * row.itemsize - 1))) | absolute).any()))]
    return digits + flags


def finish_partials(words: np.ndarray, count: int, average: bool, out_dtype: np.dtype) -> np.ndarray:
    """The merged words of each row (2-D: rows, ``WORDS``) rounded once to ``out_dtype``: the exact sum, or
    with ``average`` the exact quotient by ``count``."""
    words = np.array(words, np.int64).reshape(-1, WORDS)
    words[:, DIGITS:] = words[:, DIGITS:] != 0
    from . import numba_available

    if numba_available() and not (average and count >= 1 << 31):
        from . import sum_rounding

        return sum_rounding._finished(words, count, average, out_dtype)
    from fractions import Fraction

    from ...ops.reduce import _round_fraction

    result = np.empty(words.shape[0], out_dtype)
    for r, w in enumerate(words.tolist()):
        nan, pinf, ninf, other = w[DIGITS:]
        if nan or (pinf and ninf):
            result[r] = np.nan
        elif pinf or ninf:
            result[r] = np.inf if pinf else -np.inf
        else:
            exact = Fraction(sum(d << (32 * k) for k, d in enumerate(w[:DIGITS])), 1 << 149)
            exact /= count if average else 1
            result[r] = (-0.0 if not other else 0.0) if exact == 0 else _round_fraction(exact, out_dtype)
    return result


SQUARE_DIGITS, SQUARE_WORDS = 20, 24  # as ``squares``: digits of base 2**32 in units of 2**-298, then four flags
SQUARE_UNIT = 298


def square_partials(rows: np.ndarray) -> np.ndarray:
    """Each row's exact sum of squares (2-D FLOAT32 or FLOAT16) as the accumulator words of ``squares``
    (``SQUARE_WORDS`` int64 a row: digits in units of 2**-298 carried, then the NaN, +inf, (unused) and "an element
    seen" flags). Partials of any split of a row add word by word to the whole row's, as ``exact_partials``' do:
    ``finish_square_partials`` rounds them once (SUM_SQUARE) or takes their correctly rounded root (L2). Numba's
    accumulator where it is installed, else Python's integers: the same words."""
    from . import numba_available

    if numba_available():
        from . import squares, sum_accumulator

        accs = np.zeros((rows.shape[0], squares.WORDS), np.int64)
        squares._rows_task(np.ascontiguousarray(rows, np.float32), 0, rows.shape[0], 0, rows.shape[1], accs)
        for acc in accs:
            sum_accumulator._carry(acc[:squares.DIGITS])
        return accs
    return np.array([_python_square_words(row) for row in rows], np.int64).reshape(-1, SQUARE_WORDS)


def _python_square_words(row: np.ndarray) -> list[int]:
    """``square_partials``' words of one row by Python's integers (a float32's square is an integer multiple of
    2**-298)."""
    from fractions import Fraction

    values = row.astype(np.float64)
    finite = values[np.isfinite(values)]
    total = sum((Fraction(v) ** 2 for v in finite.tolist()), Fraction(0)) * (1 << SQUARE_UNIT)
    assert total.denominator == 1
    integer = int(total)
    digits = [(integer >> (32 * k)) & 0xFFFFFFFF for k in range(SQUARE_DIGITS - 1)]
    digits.append(integer >> (32 * (SQUARE_DIGITS - 1)))
    return digits + [int(np.isnan(values).any()), int(np.isinf(values).any()), 0, int(row.size > 0)]


def finish_square_partials(words: np.ndarray, root: bool, out_dtype: np.dtype) -> np.ndarray:
    """The merged words of each row (2-D: rows, ``SQUARE_WORDS``): the exact sum of squares rounded once, or with
    ``root`` its square root correctly rounded (L2)."""
    words = np.array(words, np.int64).reshape(-1, SQUARE_WORDS)
    words[:, SQUARE_DIGITS:] = words[:, SQUARE_DIGITS:] != 0
    from . import numba_available

    if numba_available():
        from . import squares, sum_rounding

        if root:
            return squares.roots(words, out_dtype)
        return sum_rounding._finished(words, 1, False, out_dtype, squares.UNIT)
    result = np.empty(words.shape[0], out_dtype)
    with np.errstate(over="ignore"):  # a sum past the type's largest finite value rounds to inf
        for r, w in enumerate(words.tolist()):
            result[r] = _python_square_finish(w, root, out_dtype)
    return result


def _python_square_finish(w: list[int], root: bool, out_dtype: np.dtype) -> np.generic:
    """``finish_square_partials`` of one row's words by Python's integers."""
    from fractions import Fraction

    from ...ops.reduce import _round_fraction

    nan, inf = w[SQUARE_DIGITS:SQUARE_DIGITS + 2]
    total = sum(d << (32 * k) for k, d in enumerate(w[:SQUARE_DIGITS]))
    if nan or inf:
        return out_dtype.type(np.nan if nan else np.inf)
    if total == 0:
        return out_dtype.type(0.0)
    if root:  # sqrt(total) * 2**-149: the integer root of total * 4**j (>= 2**60) and a sticky half
        j = max(0, 61 - total.bit_length() // 2)
        s = math.isqrt(total << (2 * j))
        inexact = s * s != total << (2 * j)
        return _round_fraction(Fraction(2 * s + inexact, 1 << (j + 1 + 149)), out_dtype)
    return _round_fraction(Fraction(total, 1 << SQUARE_UNIT), out_dtype)
