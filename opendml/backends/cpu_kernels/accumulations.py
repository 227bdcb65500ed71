"""REDUCE's value functions on the CPU (``KernelSpec.accumulation``): what both kernel modules run.

The exact sums (SUM, AVERAGE, L1 and LOG_SUM's sum of FLOAT32 and FLOAT16) run the Numba accumulator of
``sum_accumulator``, the exact sums of squares (SUM_SQUARE, L2) that of ``squares``, LOG_SUM_EXP the compiled definition
of ``logsumexp``, where Numba is the kernel module in force; every other function, and the NumPy path
(``OPENDML_CPU_KERNELS=numpy`` and the stand-in while a kernel compiles), runs the NumPy reference of ``ops/reduce.py``.
Both give the exact sum rounded once (L2: its correctly rounded root; LOG_SUM: the same float64 ``log`` of the same
float64; LOG_SUM_EXP: the same float64 ``exp``, exact sum and ``log``), so the two paths give the same bits.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from ...enums import ReduceFunction
from ...errors import kernel_unsupported
from ...kernels.spec import Accumulation, KernelSpec
from ...ops.reduce import ReduceParams, reduce_reference

# The functions and input types the exact-sum kernels take.
FAST_FUNCTIONS = frozenset({"SUM", "AVERAGE", "L1"})
SQUARE_FUNCTIONS = frozenset({"SUM_SQUARE", "L2"})  # the exact sums of squares (``squares``)
FAST_TYPES = (np.dtype(np.float32), np.dtype(np.float16))


def record(spec: KernelSpec) -> Accumulation:
    """The spec's accumulation, or a clear error (the element must be the input's own elements: REDUCE's
    value functions take no fused prologue yet)."""
    accumulation = spec.accumulation
    if accumulation is None or len(spec.inputs) != 1 or spec.inputs[0] is None:
        raise kernel_unsupported(spec.operator, "Accumulation", "must be a REDUCE value reduction of one input",
                                 repr(accumulation))
    if spec.extra or repr(spec.element) != f"Load(0, {spec.inputs[0].name})":
        raise kernel_unsupported(spec.operator, "Accumulation element", "must be the input's own elements (a "
                                 "computed prologue is not lowered for REDUCE's value functions)", repr(spec.element))
    return accumulation


def _params(spec: KernelSpec, accumulation: Accumulation) -> ReduceParams:
    source = spec.inputs[0]
    assert source is not None
    return ReduceParams(ReduceFunction[accumulation.function], accumulation.axes, source, spec.output)


def numpy_reduction(spec: KernelSpec) -> Callable[..., None]:
    """The call ``run(x, out, threads)``: SUM and L1 of floats by exact float64 piece sums (``_numpy_sums``),
    everything else by the reference, written into ``out``."""
    params = _params(spec, record(spec))
    fast = params.function in (ReduceFunction.SUM, ReduceFunction.L1) and params.input_type.numpy in FAST_TYPES

    def run(x: np.ndarray, out: np.ndarray, threads: int) -> None:
        if fast and x.size:
            n = int(np.prod([x.shape[a] for a in params.axes], dtype=np.int64))
            rows = _rows(x, params.axes, n)
            out[...] = _numpy_sums(rows, params, out.dtype).reshape(out.shape)
            return
        out[...] = reduce_reference([x], params)

    return run


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


def numba_reduction(spec: KernelSpec) -> Callable[..., None]:
    """The call ``run(x, out, threads)``: the exact-sum kernels where they apply, else the reference."""
    accumulation = record(spec)
    params = _params(spec, accumulation)
    fallback = numpy_reduction(spec)
    if params.input_type.numpy not in FAST_TYPES:
        return fallback
    if accumulation.function in SQUARE_FUNCTIONS:
        return _squares_run(accumulation, fallback)
    if accumulation.function == "LOG_SUM":
        return _log_sum_run(accumulation, fallback)
    if accumulation.function == "LOG_SUM_EXP":
        return _log_sum_exp_run(accumulation, fallback)
    if accumulation.function not in FAST_FUNCTIONS:
        return fallback
    from . import sum_accumulator, sum_columns, sum_halves, sums

    function = sum_accumulator.ABS if accumulation.function == "L1" else sum_accumulator.SUM
    average = accumulation.function == "AVERAGE"

    def run(x: np.ndarray, out: np.ndarray, threads: int) -> None:
        n = int(np.prod([x.shape[a] for a in accumulation.axes], dtype=np.int64))
        if n == 0 or (average and n >= 1 << 31):
            fallback(x, out, threads)
            return
        columns = _columns(x, accumulation.axes, n)
        halves = _half_rows(x, accumulation.axes, n)
        if halves is not None:
            result = sum_halves.sum_half_rows(halves, function, average, out.dtype, threads)
        elif columns is not None:
            result = sum_columns.sum_columns(columns, function, average, out.dtype, threads)
        else:
            result = sums.sum_rows(_rows(x, accumulation.axes, n), function, average, out.dtype, threads)
        out[...] = result.reshape(out.shape)

    return run


def _squares_run(accumulation: Accumulation, fallback: Callable[..., None]) -> Callable[..., None]:
    """SUM_SQUARE and L2 of FLOAT32 and FLOAT16 (its exact FLOAT32 copy): the exact sums of squares of ``squares``,
    rounded once (SUM_SQUARE) or their correctly rounded square roots (L2)."""
    from . import squares, sum_rounding

    def run(x: np.ndarray, out: np.ndarray, threads: int) -> None:
        n = int(np.prod([x.shape[a] for a in accumulation.axes], dtype=np.int64))
        if n == 0:
            fallback(x, out, threads)
            return
        columns = _columns(x, accumulation.axes, n)
        if columns is not None:
            accs = squares.column_accumulators(columns, threads)
        else:
            accs = squares.row_accumulators(_rows(x, accumulation.axes, n), threads)
        if accumulation.function == "L2":
            result = squares.roots(accs, out.dtype)
        else:
            result = sum_rounding._finished(accs, n, False, out.dtype, squares.UNIT)
        out[...] = result.reshape(out.shape)

    return run


def _log_sum_run(accumulation: Accumulation, fallback: Callable[..., None]) -> Callable[..., None]:
    """LOG_SUM of FLOAT32 and FLOAT16: the exact sums (SUM's accumulators), each rounded once to float64, then the
    reference's ``log_of_sum``: the reference's bits."""
    from ...ops.reduce import log_of_sum
    from . import sum_accumulator, sum_columns, sum_halves, sum_rounding, sums

    def run(x: np.ndarray, out: np.ndarray, threads: int) -> None:
        n = int(np.prod([x.shape[a] for a in accumulation.axes], dtype=np.int64))
        if n == 0:
            fallback(x, out, threads)
            return
        columns = _columns(x, accumulation.axes, n)
        halves = _half_rows(x, accumulation.axes, n)
        if halves is not None:
            accs = sum_halves.half_row_accumulators(halves, sum_accumulator.SUM, threads)
        elif columns is not None:
            accs = sum_columns.column_accumulators(columns, sum_accumulator.SUM, threads)
        else:
            accs = sums.row_accumulators(_rows(x, accumulation.axes, n), sum_accumulator.SUM, threads)
        totals = sum_rounding.nearest_doubles(accs).tolist()
        out[...] = np.array([log_of_sum(t) for t in totals], np.float64).astype(out.dtype).reshape(out.shape)

    return run


def _log_sum_exp_run(accumulation: Accumulation, fallback: Callable[..., None]) -> Callable[..., None]:
    """LOG_SUM_EXP of FLOAT32 and FLOAT16 (its exact FLOAT32 copy): the reference's definition compiled
    (``logsumexp``: the same float64 operations, its sum exact), rounded once to the output type."""
    from . import logsumexp

    def run(x: np.ndarray, out: np.ndarray, threads: int) -> None:
        n = int(np.prod([x.shape[a] for a in accumulation.axes], dtype=np.int64))
        if n == 0 or n >= 1 << 35:
            fallback(x, out, threads)
            return
        result = logsumexp.log_sum_exp_rows(_rows(x, accumulation.axes, n), threads)
        with np.errstate(over="ignore"):
            out[...] = result.astype(out.dtype).reshape(out.shape)

    return run


def _columns(x: np.ndarray, axes: Sequence[int], n: int) -> np.ndarray | None:
    """``x`` as (reduced, kept) FLOAT32 with contiguous rows, where that is a view (the reduced axes lead a
    C-contiguous array, the kept ones follow: a first-axis reduction); else None."""
    kept = [k for k in range(x.ndim) if k not in axes]
    if not kept or x.dtype != np.float32:
        return None
    moved = np.transpose(x, list(axes) + kept)
    if not moved.flags.c_contiguous or moved.size // n < 2:
        return None
    return moved.reshape(n, -1)


def _half_rows(x: np.ndarray, axes: Sequence[int], n: int) -> np.ndarray | None:
    """FLOAT16 ``x`` as rows of its bits (2-D uint16, each row contiguous) where the reduced axes are innermost and
    that is a view; else None (the FLOAT32 paths take a converted copy)."""
    if x.dtype != np.float16:
        return None
    kept = [k for k in range(x.ndim) if k not in axes]
    moved = np.transpose(x, kept + list(axes))
    return moved.reshape(-1, n).view(np.uint16) if moved.flags.c_contiguous else None


def _rows(x: np.ndarray, axes: Sequence[int], n: int) -> np.ndarray:
    """``x`` as FLOAT32 rows (one per output element, the reduced axes flattened), each contiguous: free where
    the reduced axes are the innermost of a contiguous FLOAT32 array, else one copy (FLOAT16 is converted,
    exactly, in that copy)."""
    kept = [k for k in range(x.ndim) if k not in axes]
    moved = np.transpose(x, kept + list(axes))
    rows = moved.reshape(-1, n) if moved.flags.c_contiguous else np.ascontiguousarray(moved).reshape(-1, n)
    if rows.dtype != np.float32:
        rows = rows.astype(np.float32)
    return rows


def prepare(spec: KernelSpec, numba: bool) -> None:
    """The compile step: the spec checked, and the exact-sum kernels compiled once (Numba's disk cache)."""
    accumulation = record(spec)
    if not numba or spec.output.numpy not in FAST_TYPES:
        return
    from . import squares, sum_accumulator, sum_rounding, sums

    if accumulation.function in FAST_FUNCTIONS or accumulation.function == "LOG_SUM":
        sums.sum_rows(np.zeros((1, 1), np.float32), sum_accumulator.SUM, False, spec.output.numpy, 1)
    if accumulation.function == "LOG_SUM":
        sum_rounding.nearest_doubles(sums.row_accumulators(np.ones((1, 1), np.float32), sum_accumulator.SUM, 1))
    if accumulation.function == "LOG_SUM_EXP":
        from . import logsumexp

        logsumexp.log_sum_exp_rows(np.zeros((1, 1), np.float32), 1)
    if accumulation.function in SQUARE_FUNCTIONS:
        accs = squares.row_accumulators(np.ones((1, 1), np.float32), 1)
        sum_rounding._finished(accs, 1, False, spec.output.numpy, squares.UNIT)
        squares.roots(accs, spec.output.numpy)


# --- exact partial sums, merged elsewhere (Dask's chunks) -------------------------------------------------------

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
