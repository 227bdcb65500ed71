"""REDUCE's value functions on the CPU (``KernelSpec.accumulation``): what both kernel modules run.

The exact sums (SUM, AVERAGE and L1 of FLOAT32 and FLOAT16) run the Numba accumulator of ``sums`` where
Numba is the kernel module in force; every other function, and the NumPy path (``OPENDML_CPU_KERNELS=numpy``
and the stand-in while a kernel compiles), runs the NumPy reference of ``ops/reduce.py``. Both give the
exact sum rounded once, so the two paths give the same bits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ...enums import ReduceFunction
from ...errors import kernel_unsupported
from ...kernels.spec import Accumulation, KernelSpec
from ...ops.reduce import ReduceParams, reduce_reference

# The functions and input types the exact-sum kernels take.
FAST_FUNCTIONS = frozenset({"SUM", "AVERAGE", "L1"})
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
    """The call ``run(x, out, threads)``: the reference, written into ``out``."""
    params = _params(spec, record(spec))

    def run(x: np.ndarray, out: np.ndarray, threads: int) -> None:
        out[...] = reduce_reference([x], params)

    return run


def numba_reduction(spec: KernelSpec) -> Callable[..., None]:
    """The call ``run(x, out, threads)``: the exact-sum kernels where they apply, else the reference."""
    accumulation = record(spec)
    params = _params(spec, accumulation)
    fallback = numpy_reduction(spec)
    if accumulation.function not in FAST_FUNCTIONS or params.input_type.numpy not in FAST_TYPES:
        return fallback
    from . import sums

    function = sums.ABS if accumulation.function == "L1" else sums.SUM
    average = accumulation.function == "AVERAGE"

    def run(x: np.ndarray, out: np.ndarray, threads: int) -> None:
        n = int(np.prod([x.shape[a] for a in accumulation.axes], dtype=np.int64))
        if n == 0 or (average and n >= 1 << 31):
            fallback(x, out, threads)
            return
        columns = _columns(x, accumulation.axes, n)
        halves = _half_rows(x, accumulation.axes, n)
        if halves is not None:
            result = sums.sum_half_rows(halves, function, average, out.dtype, threads)
        elif columns is not None:
            result = sums.sum_columns(columns, function, average, out.dtype, threads)
        else:
            result = sums.sum_rows(_rows(x, accumulation.axes, n), function, average, out.dtype, threads)
        out[...] = result.reshape(out.shape)

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
    if numba and accumulation.function in FAST_FUNCTIONS and spec.output.numpy in FAST_TYPES:
        from . import sums

        sums.sum_rows(np.zeros((1, 1), np.float32), sums.SUM, False, spec.output.numpy, 1)
