"""REDUCE's value functions on the CPU (``KernelSpec.accumulation``): what both kernel modules run.

The exact sums (SUM, AVERAGE, L1 and LOG_SUM's sum of FLOAT32 and FLOAT16) run the Numba accumulator of
``sum_accumulator``, the exact sums of squares (SUM_SQUARE, L2) that of ``squares``, LOG_SUM_EXP the compiled definition
of ``logsumexp``, float MULTIPLY the compiled tree of ``products``, where Numba is the kernel module in force; MAX and
MIN there run the reference's NumPy steps shared among the threads. Every other function, and the NumPy path
(``OPENDML_CPU_KERNELS=numpy`` and the stand-in while a kernel compiles), runs the NumPy reference of ``ops/reduce.py``.
Both give the exact sum rounded once (L2: its correctly rounded root; LOG_SUM and LOG_SUM_EXP: ``m + ln S``
correctly rounded by ``opendml.rounded.log_sum``'s steps, LOG_SUM_EXP's ``S`` the exact sum of correctly rounded
EXPs), so the two paths give the same bits.

The NumPy path's exact SUM and L1 of floats (float64 sums of pieces) are in ``sum_pieces``; exact partial sums that
are merged elsewhere (Dask's chunks) in ``sum_partials``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...enums import ReduceFunction
from ...errors import kernel_unsupported
from ...kernels.spec import Accumulation, KernelSpec
from ...ops.reduce import ReduceParams, reduce_reference
from .sum_pieces import _numpy_sums

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


def numba_reduction(spec: KernelSpec) -> Callable[..., None]:
    """The call ``run(x, out, threads)``: the exact-sum kernels where they apply, else the reference."""
    accumulation = record(spec)
    params = _params(spec, accumulation)
    fallback = numpy_reduction(spec)
    if accumulation.function in ("MAX", "MIN"):
        return _order_run(accumulation)
    if params.input_type.numpy not in FAST_TYPES:
        return fallback
    if accumulation.function in SQUARE_FUNCTIONS:
        return _squares_run(accumulation, fallback)
    if accumulation.function == "LOG_SUM":
        return _log_sum_run(accumulation, fallback)
    if accumulation.function == "LOG_SUM_EXP":
        return _log_sum_exp_run(accumulation, fallback)
    if accumulation.function == "MULTIPLY":
        return _products_run(accumulation, fallback)
    if accumulation.function not in FAST_FUNCTIONS:
        return fallback
    from . import sum_accumulator, sum_columns, sum_halves, sums

    function = sum_accumulator.ABS if accumulation.function == "L1" else sum_accumulator.SUM
    average = accumulation.function == "AVERAGE"

    def body(x: np.ndarray, n: int, out: np.ndarray, threads: int) -> None:
        if average and n >= 1 << 31:
            fallback(x, out, threads)
            return
        result = _by_layout(
            x, accumulation.axes, n, threads,
            lambda columns: sum_columns.sum_columns(columns, function, average, out.dtype, threads),
            lambda rows: sums.sum_rows(rows, function, average, out.dtype, threads),
            lambda halves: sum_halves.sum_half_rows(halves, function, average, out.dtype, threads))
        out[...] = result.reshape(out.shape)

    return _nonempty(accumulation, fallback, body)


def _squares_run(accumulation: Accumulation, fallback: Callable[..., None]) -> Callable[..., None]:
    """SUM_SQUARE and L2 of FLOAT32 and FLOAT16 (its exact FLOAT32 copy): the exact sums of squares of ``squares``,
    rounded once (SUM_SQUARE) or their correctly rounded square roots (L2)."""
    from . import squares, sum_rounding

    def body(x: np.ndarray, n: int, out: np.ndarray, threads: int) -> None:
        accs = _by_layout(x, accumulation.axes, n, threads,
                          lambda columns: squares.column_accumulators(columns, threads),
                          lambda rows: squares.row_accumulators(rows, threads))
        if accumulation.function == "L2":
            result = squares.roots(accs, out.dtype)
        else:
            result = sum_rounding._finished(accs, n, False, out.dtype, squares.UNIT, threads)
        out[...] = result.reshape(out.shape)

    return _nonempty(accumulation, fallback, body)


def _log_sum_run(accumulation: Accumulation, fallback: Callable[..., None]) -> Callable[..., None]:
    """LOG_SUM of FLOAT32 and FLOAT16: the exact sums (SUM's accumulators), then ``ln S`` of each correctly rounded
    (``log_sums``: the reference's steps on the accumulator's digits): the reference's bits."""
    from . import log_sums, sum_accumulator, sum_columns, sum_halves, sums

    add = sum_accumulator.SUM

    def body(x: np.ndarray, n: int, out: np.ndarray, threads: int) -> None:
        accs = _by_layout(x, accumulation.axes, n, threads,
                          lambda columns: sum_columns.column_accumulators(columns, add, threads),
                          lambda rows: sums.row_accumulators(rows, add, threads),
                          lambda halves: sum_halves.half_row_accumulators(halves, add, threads))
        out[...] = log_sums.log_sums(accs, *_format(out.dtype), threads).astype(out.dtype).reshape(out.shape)

    return _nonempty(accumulation, fallback, body)


def _format(dtype: np.dtype) -> tuple[int, int, float]:
    """The rounding grid (``Precision``'s base, lowest, top) of FLOAT32 or FLOAT16."""
    from ...dtypes import from_numpy
    from ...rounded.method import PRECISIONS

    precision = PRECISIONS[from_numpy(np.dtype(dtype)).name]
    return precision.base, precision.lowest, precision.top


def _log_sum_exp_run(accumulation: Accumulation, fallback: Callable[..., None]) -> Callable[..., None]:
    """LOG_SUM_EXP of FLOAT32 and FLOAT16 (its exact FLOAT32 copy): the reference's steps compiled (``logsumexp``:
    the same FLOAT32 differences, correctly rounded EXP, exact sum and correctly rounded ``m + ln S``)."""
    from . import logsumexp

    def body(x: np.ndarray, n: int, out: np.ndarray, threads: int) -> None:
        rows = _rows(x, accumulation.axes, n, threads)
        result = logsumexp.log_sum_exp_rows(rows, _format(out.dtype), threads)
        out[...] = result.astype(out.dtype).reshape(out.shape)

    return _nonempty(accumulation, fallback, body)


def _order_run(accumulation: Accumulation) -> Callable[..., None]:
    """MAX and MIN of every type: the reference's NumPy maximum (minimum) with its signed-zero rule
    (``ops.reduce._ordered``), the outputs shared among the threads, or with fewer outputs than threads each row
    cut into segments whose results are reduced once more (the largest of the segments' largest is the row's, a
    NaN anywhere a NaN, a zero's sign settled again among the segments' zeros)."""
    from ...ops.reduce import _ordered
    from ...ops.reduce import _rows as row_view
    from .threads import run_tasks
    from .views import PARALLEL_MIN

    largest = accumulation.function == "MAX"

    def part(rows: np.ndarray) -> np.ndarray:
        return _ordered(rows, largest)

    def run(x: np.ndarray, out: np.ndarray, threads: int) -> None:
        rows = row_view(x, accumulation.axes)
        count, n = rows.shape
        if threads <= 1 or rows.size < PARALLEL_MIN:
            result = part(rows)
        elif count >= threads:
            step = -(-count // threads)
            result = np.concatenate(run_tasks(part, [(rows[r:r + step],) for r in range(0, count, step)], threads))
        else:
            step = -(-n // threads)
            pieces = run_tasks(part, [(rows[:, i:i + step],) for i in range(0, n, step)], threads)
            result = part(np.stack(pieces, axis=-1))
        out[...] = result.astype(out.dtype).reshape(out.shape)

    return run


def _products_run(accumulation: Accumulation, fallback: Callable[..., None]) -> Callable[..., None]:
    """MULTIPLY of FLOAT32 and FLOAT16 (its exact FLOAT32 copy): the reference's pairwise tree in float64
    (``products``: along rows, or along the columns of a first-axis reduction), rounded once to the output type."""
    from . import products

    def body(x: np.ndarray, n: int, out: np.ndarray, threads: int) -> None:
        result = _by_layout(x, accumulation.axes, n, threads,
                            lambda columns: products.column_products(columns, threads),
                            lambda rows: products.products(rows, threads))
        with np.errstate(over="ignore"):  # a product past the output's range rounds to infinity
            out[...] = result.astype(out.dtype).reshape(out.shape)

    return _nonempty(accumulation, fallback, body)


def _nonempty(accumulation: Accumulation, fallback: Callable[..., None],
              body: Callable[[np.ndarray, int, np.ndarray, int], None]) -> Callable[..., None]:
    """The call ``run(x, out, threads)``: ``fallback`` (the reference's) for a reduction over no elements, else
    ``body(x, n, out, threads)``, ``n`` the elements each output reduces."""

    def run(x: np.ndarray, out: np.ndarray, threads: int) -> None:
        n = int(np.prod([x.shape[a] for a in accumulation.axes], dtype=np.int64))
        if n == 0:
            fallback(x, out, threads)
            return
        body(x, n, out, threads)

    return run


def _by_layout(x: np.ndarray, axes: Sequence[int], n: int, threads: int, on_columns: Callable[[np.ndarray], Any],
               on_rows: Callable[[np.ndarray], Any], on_halves: Callable[[np.ndarray], Any] | None = None) -> Any:
    """``x``'s reduction by its layout: ``on_halves`` of FLOAT16 rows where they are a view of its bits (and the
    kernel takes them), ``on_columns`` of a first-axis reduction's FLOAT32 columns, else ``on_rows`` of FLOAT32 rows
    (a copy where they are not a view)."""
    halves = None if on_halves is None else _half_rows(x, axes, n)
    if halves is not None and on_halves is not None:
        return on_halves(halves)
    columns = _columns(x, axes, n)
    if columns is not None:
        return on_columns(columns)
    return on_rows(_rows(x, axes, n, threads))


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


def _rows(x: np.ndarray, axes: Sequence[int], n: int, threads: int = 1) -> np.ndarray:
    """``x`` as FLOAT32 rows (one per output element, the reduced axes flattened), each contiguous: free where
    the reduced axes are the innermost of a contiguous FLOAT32 array, else one copy (tile by tile on ``threads``
    threads where the reduced axes are one block of a contiguous array's: ``transpose``; FLOAT16 is converted,
    exactly, after it)."""
    from .transpose import contiguous_rows

    kept = [k for k in range(x.ndim) if k not in axes]
    moved = np.transpose(x, kept + list(axes))
    if moved.flags.c_contiguous:
        rows = moved.reshape(-1, n)
    else:
        tiled = contiguous_rows(x, axes, threads)
        rows = np.ascontiguousarray(moved).reshape(-1, n) if tiled is None else tiled
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
        from . import log_sums

        log_sums.log_sums(sums.row_accumulators(np.ones((1, 1), np.float32), sum_accumulator.SUM, 1),
                          *_format(spec.output.numpy))
    if accumulation.function == "LOG_SUM_EXP":
        from . import logsumexp

        logsumexp.log_sum_exp_rows(np.zeros((1, 1), np.float32), _format(spec.output.numpy), 1)
    if accumulation.function in SQUARE_FUNCTIONS:
        accs = squares.row_accumulators(np.ones((1, 1), np.float32), 1)
        sum_rounding._finished(accs, 1, False, spec.output.numpy, squares.UNIT)
        squares.roots(accs, spec.output.numpy)
