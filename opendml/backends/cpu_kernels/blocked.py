"""The NumPy path (no Numba installed): block by block on the worker threads.

Element-wise operators evaluate their expression (``opendml.kernels.numpy_lowering``), reductions run the
reference; no temporary is larger than a block, but each block makes several passes over its elements:
see docs/cpu-backend.md for how much slower this is.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ... import expr as ex
from ...dtypes import DataType
from ...kernels.numpy_lowering import evaluate_all
from ...kernels.spec import KernelSpec
from ...ops.arg_reduction import ArgReductionParams, arg_reduction_reference
from ...tensor import TensorDesc
from . import accumulations, selection, softmax
from .argmin.spec import argmin_params
from .threads import run_tasks
from .views import PARALLEL_MIN

BLOCK = 1 << 16  # elements per block: the reference's temporaries stay in the L2 cache


def blocks(shape: tuple[int, ...], limit: int, axes: tuple[int, ...] | None = None) -> Iterator[tuple[Any, ...]]:
    """Index tuples cutting ``shape`` into blocks of about ``limit`` elements, cut only along ``axes``
    (every axis by default): whole trailing axes, a range of one axis, single indices before it."""
    allowed = list(range(len(shape))) if axes is None else list(axes)
    if not allowed:
        yield (slice(None),) * len(shape)
        return
    split = next((k for k in allowed if math.prod(shape[k + 1:]) <= limit), allowed[-1])
    step = max(1, limit // max(math.prod(shape[split + 1:]), 1))
    outer_axes = [k for k in allowed if k < split]
    for prefix in np.ndindex(*(shape[k] for k in outer_axes)):
        index: list[Any] = [slice(None)] * len(shape)
        for k, i in zip(outer_axes, prefix):
            index[k] = slice(i, i + 1)
        for a in range(0, shape[split], step):
            index[split] = slice(a, a + step)
            yield tuple(index)


def _deal(work: list[Any], threads: int, total: int) -> list[list[Any]]:
    count = 1 if total < PARALLEL_MIN else max(1, min(threads, len(work)))
    return [work[g::count] for g in range(count)]


def elementwise(spec: KernelSpec) -> Callable[..., None]:
    """An element-wise operator (inputs in DirectML order, None for an absent one, then the output, one
    array per ``spec.extra`` and a thread count): its expressions evaluated block by block."""
    outs = 2 + len(spec.extra)
    return lambda *args: _elementwise(spec, args[:-outs], args[-outs:-1], args[-1])


# A reduction's element may be any expression (a fused prologue): it is evaluated block by block.
REDUCTION_PROLOGUES = True
# Kernels write ``KernelSpec.extra`` too: each block's extra values are stored where they are computed.
FUSED_OUTPUTS = True


def reduction(spec: KernelSpec) -> Callable[..., None]:
    """A reduction (operands in order, then the output, one array per ``spec.extra`` shaped as the input, and
    a thread count): ARGMIN or ARGMAX over its element's values, computed a block at a time where the element is a
    prologue rather than the input itself, each block's extra values written as they are computed."""
    if spec.accumulation is not None:
        return accumulations.numpy_reduction(spec)
    if spec.selection is not None:
        return selection.reduction(spec)
    if spec.normalization is not None:
        return softmax.reduction(spec, numba=False)
    params = argmin_params(spec, prologue=True)
    if spec.element == ex.Load(0, spec.inputs[0]) and not spec.extra:  # type: ignore[arg-type]
        return argmin(params)
    outs = 2 + len(spec.extra)
    return lambda *args: _argmin(params, _Values(spec, args[:-outs], args[-outs + 1:-1]), args[-outs], args[-1])


def prepare_elementwise(spec: KernelSpec, inputs: Sequence[TensorDesc | None], output: TensorDesc) -> None:
    """Nothing to compile: the expression evaluated once on one element of each operand, so that an element
    the NumPy lowering refuses is refused at compile time."""
    evaluate_all((spec.element, *spec.extra), [None if d is None else np.zeros(1, d.data_type.numpy) for d in inputs],
                 spec.scalars)


def prepare_reduction(spec: KernelSpec, shape: Sequence[int], strides: Sequence[int], threads: int,
                      operands: Sequence[Sequence[int] | None] = (), extras: Sequence[Sequence[int]] = ()) -> None:
    """Nothing to compile: the reference runs as it is (``fast.prepare_reduction`` compiles its kernels)."""
    if spec.accumulation is not None:
        accumulations.prepare(spec, numba=False)
        return
    if spec.selection is not None:
        selection.prepare(spec)
        return
    if spec.normalization is not None:
        softmax.prepare(spec, numba=False)
        return
    argmin_params(spec, prologue=True)  # refused at compile time, as the fast kernels refuse it


class _Values:
    """A reduction's element values over its operands (same-shaped views), evaluated per indexed block; the
    extra outputs' values of the block (``extras``: views shaped as the input) stored as they are computed.
    ``_argmin`` indexes each input element in exactly one block, so each extra element is written once."""

    def __init__(self, spec: KernelSpec, operands: Sequence[np.ndarray | None],
                 extras: Sequence[np.ndarray] = ()) -> None:
        self.spec, self.operands, self.extras = spec, operands, extras
        first = next(a for a in operands if a is not None)
        self.shape, self.ndim, self.size = first.shape, first.ndim, first.size

    def __getitem__(self, index: Any) -> np.ndarray:
        values = evaluate_all((self.spec.element, *self.spec.extra),
                              [None if a is None else a[index] for a in self.operands], self.spec.scalars)
        for extra, value in zip(self.extras, values[1:]):
            extra[index] = value
        return np.asarray(values[0])


def argmin(params: ArgReductionParams) -> Callable[[np.ndarray, np.ndarray, int], None]:
    return lambda x, out, threads: _argmin(params, x, out, threads)


def _elementwise(spec: KernelSpec, inputs: tuple[np.ndarray | None, ...], outs: tuple[np.ndarray, ...],
                 threads: int) -> None:
    """The output and the extra outputs (``outs``, one shape) written block by block."""
    expressions = (spec.element, *spec.extra)

    def run(indices: list[Any]) -> None:
        for index in indices:
            values = evaluate_all(expressions, [None if a is None else a[index] for a in inputs], spec.scalars)
            for out, value in zip(outs, values):
                out[index] = value

    out = outs[0]
    groups = _deal(list(blocks(out.shape, BLOCK)), threads, out.size)
    run_tasks(run, [(g,) for g in groups], threads)


def _argmin(params: ArgReductionParams, x: np.ndarray | _Values, out: np.ndarray, threads: int) -> None:
    """Blocks of output elements; a reduction longer than a block is cut along its first axis and the
    pieces' winners reduced again (``_winners``)."""
    axes = params.axes
    kept = tuple(k for k in range(x.ndim) if k not in axes)
    length = math.prod(x.shape[a] for a in axes)
    per_block = max(1, BLOCK // length)
    work = list(blocks(out.shape, per_block, kept)) if kept else [(slice(None),) * x.ndim]

    def run(indices: list[Any]) -> None:
        for index in indices:
            out[index] = _argmin_block(params, x[index], length)

    groups = _deal(work, threads, x.size)
    run_tasks(run, [(g,) for g in groups], threads)


def _argmin_block(params: ArgReductionParams, x: np.ndarray, length: int) -> np.ndarray:
    if length <= BLOCK * 4:
        return arg_reduction_reference([x], params)
    first = params.axes[0]
    inner = length // x.shape[first]  # flattened indices per step along the first reduced axis
    step = max(1, BLOCK // inner)
    values, indices = [], []
    for a in range(0, x.shape[first], step):
        piece = x[(slice(None),) * first + (slice(a, a + step),)]
        local = arg_reduction_reference([piece], params).astype(np.int64)
        indices.append(local + a * inner)
        values.append(_gather(piece, params.axes, local))  # the piece's winner (its first NaN, or any NaN)
    return _winners(params, values, indices)


def _winners(params: ArgReductionParams, values: list[np.ndarray], indices: list[np.ndarray]) -> np.ndarray:
    """The index of the winner among the pieces' winners (``values``, pieces in index order): the same
    reduction run over them as candidates. Each piece's winner is its best element, the first (last) of its
    equals in the direction's order, so the best candidate, the first (last) of equal ones, is the whole
    reduction's: the same operator, NaN policy and direction decide, and a reduction of NaN only (ignored)
    falls to piece 0's first index or the last piece's last, as it would whole (SPEC 7, 8.5 and 9)."""
    candidates = np.stack(values, axis=-1)
    last = candidates.ndim - 1
    winner = arg_reduction_reference([candidates], replace(params, axes=(last,), output_type=DataType.INT64))
    return np.take_along_axis(np.stack(indices, axis=-1), winner, axis=last)[..., 0]


def _gather(x: np.ndarray, axes: tuple[int, ...], local: np.ndarray) -> np.ndarray:
    kept = [k for k in range(x.ndim) if k not in axes]
    rows = np.transpose(x, kept + list(axes)).reshape(*(x.shape[k] for k in kept), -1)
    flat_local = local.reshape(*(x.shape[k] for k in kept), 1)
    return np.take_along_axis(rows, flat_local, axis=-1).reshape(local.shape)
