"""SOFTMAX, LOG_SOFTMAX and HARDMAX on the CPU (``KernelSpec.normalization``): what both kernel modules run.

The input is laid out as rows (``ops.softmax.rows_of``: a view where the axes are the innermost and contiguous,
else a copy), each row normalized by docs/semantics.md 9g's steps, and the rows written back over the output's
layout. Numba's kernel module runs the FLOAT32 steps in ``softmax_rows`` (FLOAT16: converted to FLOAT32 rows,
the FLOAT32 result rounded once); NumPy's runs them with ``opendml.rounded.evaluate`` and REDUCE's exact NumPy
sums. HARDMAX is ARGMAX's index by NumPy on both. Rows are shared among the device's threads.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise

import numpy as np

from ...dtypes import DataType
from ...enums import ReduceFunction
from ...errors import kernel_unsupported
from ...kernels.spec import KernelSpec, Normalization
from ...ops.reduce import ReduceParams
from ...ops.softmax import from_rows, hardmax_rows, normalize_rows, rows_of
from .threads import run_tasks

MIN_TASK_ELEMENTS = 1 << 15  # below this many elements a thread's share is not worth starting it
_SUM = ReduceParams(ReduceFunction.SUM, (1,), DataType.FLOAT32, DataType.FLOAT32)


def record(spec: KernelSpec) -> Normalization:
    """The spec's normalization, or a clear error (the element must be the input's own elements)."""
    normalization = spec.normalization
    if normalization is None or len(spec.inputs) != 1 or spec.inputs[0] is None:
        raise kernel_unsupported(spec.operator, "Normalization", "must be a SOFTMAX, LOG_SOFTMAX or HARDMAX of one "
                                 "input", repr(normalization))
    if spec.extra or repr(spec.element) != f"Load(0, {spec.inputs[0].name})":
        raise kernel_unsupported(spec.operator, "Normalization element", "must be the input's own elements (a "
                                 "computed prologue is not lowered for SOFTMAX)", repr(spec.element))
    return normalization


def _numpy_sums(e: np.ndarray) -> np.ndarray:
    """Each row of the FLOAT32 ``e`` summed exactly, rounded once to FLOAT32 (REDUCE's NumPy path)."""
    from .sum_pieces import _numpy_sums as exact_rows

    return exact_rows(e, _SUM, np.dtype(np.float32))


def _numpy_rows(rows: np.ndarray, function: str) -> np.ndarray:
    return normalize_rows(rows, function, _numpy_sums)


def _numba_rows(rows: np.ndarray, function: str, into: np.ndarray | None = None) -> np.ndarray:
    """The rows normalized by Numba's kernel, written to ``into`` where given (FLOAT32 rows, contiguous)."""
    from .softmax_rows import LOG_SOFTMAX, row_kernel

    x = np.ascontiguousarray(rows, np.float32)
    out = np.empty(x.shape, np.float32) if into is None else into
    row_kernel()(x, out, LOG_SOFTMAX if function == "LOG_SOFTMAX" else 0)
    if rows.dtype == np.float32:
        return out
    with np.errstate(over="ignore"):  # FLOAT16: rounded once (a LOG_SOFTMAX below -65520 is -inf)
        return out.astype(rows.dtype)


def reduction(spec: KernelSpec, numba: bool) -> Callable[..., None]:
    """The call ``run(x, out, threads)`` over views laid out as the descriptions say."""
    normalization = record(spec)
    function, axes = normalization.function, normalization.axes
    if function == "HARDMAX":
        compute: Callable[[np.ndarray, str], np.ndarray] = lambda rows, f: hardmax_rows(rows)  # noqa: E731
    else:
        compute = _numba_rows if numba else _numpy_rows

    def run(x: np.ndarray, out: np.ndarray, threads: int) -> None:
        rows = rows_of(x, axes)
        direct = numba and function != "HARDMAX" and _rows_in_place(x, out, axes)
        result = rows_of(out, axes) if direct else np.empty(rows.shape, out.dtype)

        def task(start: int, stop: int) -> None:
            if direct:  # FLOAT32 rows contiguous in the output too: written where they belong
                _numba_rows(rows[start:stop], function, result[start:stop])
            else:
                result[start:stop] = compute(rows[start:stop], function)

        shares = max(1, min(2 * threads, rows.shape[0], rows.size // MIN_TASK_ELEMENTS))
        bounds = [rows.shape[0] * s // shares for s in range(shares + 1)]
        run_tasks(task, list(pairwise(bounds)), threads)
        if not direct:
            out[...] = from_rows(result, x.shape, axes)

    return run


def _rows_in_place(x: np.ndarray, out: np.ndarray, axes: tuple[int, ...]) -> bool:
    """Whether the output's rows are views, each contiguous, that Numba's kernel may write (FLOAT32 rows over the
    innermost axes of a C-contiguous output sharing no memory with the input: the kernel reads its row again)."""
    last = tuple(range(x.ndim - len(axes), x.ndim))
    return (out.dtype == np.float32 and x.dtype == np.float32 and axes == last and out.flags.c_contiguous
            and not np.may_share_memory(x, out))


def prepare(spec: KernelSpec, numba: bool) -> None:
    """The compile step: the spec checked, and Numba's row kernel compiled where it runs."""
    normalization = record(spec)
    if numba and normalization.function != "HARDMAX":
        from .softmax_rows import row_kernel

        kernel = row_kernel()
        one = np.zeros((1, 1), np.float32)
        kernel(one, one.copy(), 0)  # compiles it (its signature is the same for every call)
