"""The JIT path: each operator as one Numba kernel over the views' memory, shared out to threads.

Element-wise operators run kernels generated from their expression (``codegen``); reductions run the
hand-tuned engine of their kind.

ARGMIN compares integer keys of the elements (``jit.key_of``), so one vectorised kernel serves every
data type, NaN and signed zeros included, and releases the GIL like the others.
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import expr as ex
from ...enums import AxisDirection
from ...kernels.spec import KernelSpec
from ...ops.argmin import ArgMinParams
from . import argmin_params, codegen, drivers, jit, unsupported
from .threads import run_tasks
from .views import elementwise_layout, flat, int64s, shares


@dataclass(frozen=True)
class _Walk:
    """A merged layout as the kernels take it, and the thread shares of its elements."""

    sizes: np.ndarray
    strides: tuple[np.ndarray, ...]
    shares: list[tuple[int, int]]
    bounds: np.ndarray  # the shares as the drivers take them


# Outputs of at least this many bytes are written with streaming (non-temporal) stores (``stream``): they
# would not stay in the caches for the next operator anyway, and the stores skip reading every line first.
STREAM_MIN_BYTES = 1 << 25

_walks: dict[Any, _Walk] = {}
_lengths: dict[int, np.ndarray] = {}
UNIT = int64s([1])


def lengths(n: int) -> np.ndarray:
    """``[n]`` as the kernels' sizes array, made once per length."""
    sizes = _lengths.get(n)
    if sizes is None:
        if len(_lengths) > 1024:
            _lengths.clear()
        sizes = _lengths[n] = int64s([n])
    return sizes


def walk(arrays: list[np.ndarray], threads: int) -> _Walk:
    """The merged layout of same-shaped operands (the output last) and its thread shares, made once."""
    key = (threads, arrays[-1].shape, *(a.strides for a in arrays), *(a.itemsize for a in arrays))
    found = _walks.get(key)
    if found is None:
        layout = elementwise_layout(arrays)
        pieces = shares(math.prod(layout.sizes), threads)
        found = _Walk(int64s(layout.sizes), tuple(int64s(s) for s in layout.strides), pieces,
                      drivers.bounds_of(pieces))
        if len(_walks) > 1024:
            _walks.clear()
        _walks[key] = found
    return found


def run_shares(kernel: Callable[..., None], driver: Callable[..., None], head: tuple[Any, ...], layout: _Walk,
               tail: tuple[Any, ...], threads: int) -> None:
    """``kernel`` over each share: here if there is one, else on Numba's threads through ``driver`` (Python
    threads where those may not run)."""
    if len(layout.shares) == 1:
        a, b = layout.shares[0]
        kernel(*head, layout.sizes, *layout.strides, a, b, *tail)
    elif drivers.usable():
        drivers.launch(driver, (*head, layout.sizes, *layout.strides, layout.bounds, *tail), threads)
    else:
        run_tasks(kernel, [(*head, layout.sizes, *layout.strides, a, b, *tail) for a, b in layout.shares], threads)


def elementwise(spec: KernelSpec) -> Callable[..., None]:
    """An element-wise operator: its generated module's entry (``codegen``), called with the operator's
    inputs in DirectML order (None for an absent one), its output and a thread count. The entry uses
    ``lengths``, ``UNIT``, ``walk``, ``run_shares``, ``flat`` and ``STREAM_MIN_BYTES`` from here."""
    try:
        module = codegen.compiled(spec.element)
    except ex.ExpressionError as error:
        raise unsupported(spec) from error
    return module.entry(spec.scalars, sys.modules[__name__])  # type: ignore[no-any-return]


def reduction(spec: KernelSpec) -> Callable[..., None]:
    """A reduction operator: the engine of its kind, taking its values from the element expression."""
    return argmin(argmin_params(spec))


@dataclass(frozen=True)
class _Reduction:
    """ARGMIN's dimensions after dropping 1s and merging neighbours of one kind.

    ``weights`` are slot strides (kept dimensions: output elements in row-major order) or index strides
    (reduced dimensions: the flattened index over the reduced axes, SPEC 7).
    """

    sizes: list[int]
    strides: list[int]
    reduced: list[bool]
    weights: list[int]
    slots: int
    length: int


def _reduction(x: np.ndarray, axes: tuple[int, ...]) -> _Reduction:
    shape, strides = x.shape, [s // x.itemsize for s in x.strides]
    kept_sizes = [n for k, n in enumerate(shape) if k not in axes]
    red_sizes = [shape[k] for k in axes]
    dims: list[list[int]] = []  # [size, stride, reduced, weight]
    for k, n in enumerate(shape):
        if n == 1:
            continue
        reduced = k in axes
        later = [shape[a] for a in axes if a > k] if reduced else [shape[j] for j in range(k + 1, len(shape))
                                                                    if j not in axes]
        weight = math.prod(later)
        if dims and dims[-1][2] == reduced and dims[-1][1] == strides[k] * n:
            dims[-1][0] *= n
            dims[-1][1] = strides[k]
            dims[-1][3] = weight
            continue
        dims.append([n, strides[k], reduced, weight])
    if not dims:
        dims = [[1, 0, True, 1]]
    return _Reduction([d[0] for d in dims], [d[1] for d in dims], [bool(d[2]) for d in dims],
                      [d[3] for d in dims], math.prod(kept_sizes), math.prod(red_sizes))


class _State:
    """Running (key, index) per slot, one row per piece of a split reduction (row 0 holds the result);
    index -1 while a slot has found nothing."""

    def __init__(self, cur: np.ndarray, idx: np.ndarray) -> None:
        self.cur, self.idx = cur, idx

    @classmethod
    def fresh(cls, slots: int, key: np.dtype, pieces: int = 1) -> _State:
        """Arrays of the state, not filled (``_fill``)."""
        return cls(np.empty((pieces, slots), key), np.empty((pieces, slots), np.int64))

    @classmethod
    def reused(cls, slots: int, key: np.dtype, pieces: int = 1) -> _State:
        """A state on this thread's kept arrays where they are large enough (and at most STATE_KEPT_BYTES),
        not filled (``_fill``): fresh memory costs a page fault a page on first touch (short-row ARGMIN of
        [262144, 256] spent 1 ms a call filling a new index array), while refilling kept memory costs a
        tenth of that. Each thread has its own, and a state lives only during one ``_argmin`` on the thread
        that made it."""
        n = pieces * slots
        if n * (8 + key.itemsize) > STATE_KEPT_BYTES:
            return cls.fresh(slots, key, pieces)
        kept = _kept.__dict__.setdefault("states", {})
        if key not in kept or kept[key].idx.size < n:
            kept[key] = cls.fresh(n, key)
        return cls(kept[key].cur.reshape(-1)[:n].reshape(pieces, slots),
                   kept[key].idx.reshape(-1)[:n].reshape(pieces, slots))


STATE_KEPT_BYTES = 16 << 20
# FLOAT32 ARGMIN rows compared as floats where the thread's comparisons are exact (``jit.argmin_rows``);
# False forces integer keys everywhere (the tests run both).
FLOAT_COMPARISONS = True
_kept = threading.local()


def argmin(params: ArgMinParams) -> Callable[[np.ndarray, np.ndarray, int], None]:
    """ARGMIN over any axes of any layout, reading each element once."""
    return lambda x, out, threads: _argmin(params, x, out, threads)


def _keyed(x: np.ndarray) -> tuple[np.ndarray, Any, np.dtype]:
    """The input as the kernels read it, its ``kind`` and its key type: floats as their bits (jit.key_of)."""
    if x.dtype == np.float32:
        return x.view(np.int32), jit.FLOAT, np.dtype(np.int32)
    if x.dtype == np.float16:
        return x.view(np.uint16), jit.HALF, np.dtype(np.int16)
    return x, None, x.dtype


def _argmin(params: ArgMinParams, x: np.ndarray, out: np.ndarray, threads: int) -> None:
    order = jit.DECREASING if params.axis_direction == AxisDirection.DECREASING else None
    red = _reduction(x, params.axes)
    bits, kind, key = _keyed(x)
    plan = _plan(red, threads)
    state = _State.reused(red.slots, key, plan.pieces)
    _fill(state.idx.reshape(-1), -1, threads)
    _run_plan(flat(bits), red, plan, state, kind, order, threads)
    if plan.pieces > 1:
        _merge(state, order, threads)
    _finish(state.idx[0], out, red.length - 1 if order is not None else 0, threads)


def _fill(a: np.ndarray, value: int, threads: int) -> None:
    """A 1-D array filled, on the threads where it is large (2 MiB of indices took 0.2 ms on one)."""
    parts = shares(a.size, threads)
    if len(parts) > 1 and drivers.usable():
        drivers.launch(drivers.fill, (a, value, drivers.bounds_of(parts)), threads)
    else:
        a.fill(value)


def _finish(idx: np.ndarray, out: np.ndarray, default: int, threads: int) -> None:
    """The indices into the output; ``default`` where every element was NaN (SPEC 8.5)."""
    parts = shares(idx.size, threads)
    if len(parts) > 1 and drivers.usable() and out.flags.c_contiguous:
        drivers.launch(drivers.finish, (idx, out.reshape(-1), default, drivers.bounds_of(parts)), threads)
        return
    jit.fill_missing(idx, default)
    np.copyto(out, idx.reshape(out.shape), casting="unsafe")


@dataclass(frozen=True)
class _Task:
    """One share of an ARGMIN: the kernel's arguments that differ from share to share."""

    x0: int
    slot0: int
    index0: int
    start: int
    stop: int
    piece: int  # the state row it folds into
    sizes: list[int]


@dataclass(frozen=True)
class _Plan:
    rows: bool  # the last dimension is reduced: ``jit.argmin_rows``, else ``jit.argmin_columns``
    tasks: list[_Task]
    pieces: int  # private states to merge (1: the tasks' slots are disjoint)


def _plan(red: _Reduction, threads: int) -> _Plan:
    """How the work is shared: by output rows, by columns, or by cutting the reduced rows or run into
    pieces with private states."""
    rows = red.reduced[-1]
    inner = 1 if rows else (2 if len(red.sizes) >= 2 and red.reduced[-2] else 1)
    outer_dims = len(red.sizes) - inner
    outer = math.prod(red.sizes[:outer_dims])
    outer_kept = not any(red.reduced[:outer_dims])
    total = math.prod(red.sizes)
    pieces = len(shares(total, threads))
    sizes = list(red.sizes)
    if pieces > 1 and outer_kept and outer >= threads:  # disjoint slots: one shared state
        return _Plan(rows, [_Task(0, 0, 0, a, b, 0, sizes) for a, b in shares_of(outer, min(outer, pieces))], 1)
    if pieces > 1 and not rows and inner == 2 and red.sizes[-2] >= 4 * jit.ROW_GROUP * pieces and (
            red.slots * pieces <= total // 4):  # split the rows: whole rows stream through memory
        return _split_reduced(red, rows, len(sizes) - 2, pieces, outer)
    last = red.sizes[-1]
    if pieces > 1 and not rows and last >= pieces * 1024:  # split the columns: disjoint slots
        return _Plan(rows, [_Task(a * red.strides[-1], a * red.weights[-1], 0, 0, outer, 0, sizes[:-1] + [b - a])
                            for a, b in shares_of(last, pieces)], 1)
    if pieces > 1 and rows and last >= pieces * 4096:  # split the reduced run
        return _split_reduced(red, rows, len(sizes) - 1, pieces, outer)
    return _Plan(rows, [_Task(0, 0, 0, 0, outer, 0, sizes)], 1)


def _split_reduced(red: _Reduction, rows: bool, dim: int, pieces: int, outer: int) -> _Plan:
    """Reduced dimension ``dim`` cut into pieces, each folded into a state of its own (merged afterwards)."""
    tasks = []
    for p, (a, b) in enumerate(shares_of(red.sizes[dim], pieces)):
        sizes = list(red.sizes)
        sizes[dim] = b - a
        tasks.append(_Task(a * red.strides[dim], 0, a * red.weights[dim], 0, outer, p, sizes))
    return _Plan(rows, tasks, len(tasks))


def _run_plan(fx: np.ndarray, red: _Reduction, plan: _Plan, state: _State, kind: Any, order: Any,
              threads: int) -> None:
    strides, reduced, weights = int64s(red.strides), np.array(red.reduced, np.uint8), int64s(red.weights)
    if len(plan.tasks) > 1 and drivers.usable():
        table = np.array([[t.x0, t.slot0, t.index0, t.start, t.stop, t.piece, *t.sizes] for t in plan.tasks],
                         np.int64)
        drivers.launch(drivers.argmin, (plan.rows, fx, table, strides, reduced, weights, state.cur, state.idx,
                                        kind, order, FLOAT_COMPARISONS), threads)
        return
    kernel = jit.argmin_rows if plan.rows else jit.argmin_columns
    run_tasks(kernel, [(fx, t.x0, int64s(t.sizes), strides, reduced, weights, t.slot0, t.index0, t.start, t.stop,
                        state.cur[t.piece], state.idx[t.piece], kind, order, FLOAT_COMPARISONS)
                       for t in plan.tasks], threads)


def _merge(state: _State, order: Any, threads: int) -> None:
    """Every piece's state folded into row 0, ranges of slots on the threads where there is enough to do
    (first-axis ARGMIN of [8192, 8192] on 16 threads: 64 pieces of 8192 slots)."""
    pieces, slots = state.idx.shape
    count = len(shares(pieces * slots, threads))
    if count > 1 and drivers.usable():
        parts = shares_of(slots, min(count, slots))
        drivers.launch(drivers.merge, (state.cur, state.idx, order, drivers.bounds_of(parts)), threads)
    else:
        drivers.merge_range(state.cur, state.idx, 0, slots, order)


def shares_of(total: int, count: int) -> list[tuple[int, int]]:
    step = math.ceil(total / count)
    return [(a, min(total, a + step)) for a in range(0, total, step)]
