"""ARGMIN and ARGMAX on the JIT path: a plan (``plan``) run over per-slot states, merged, written out.

The engines compare integer keys of the elements (``keys.key_of``), so one vectorised kernel serves
every data type, NaN and signed zeros included, both operators (ARGMAX's keys are those of order-reversed
elements) and both NaN policies, and releases the GIL like the others.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ....kernels.spec import KernelSpec
from ....ops.arg_reduction import ArgReductionParams
from .. import drivers
from ..threads import run_tasks
from ..views import flat, int64s, shares
from . import drivers as argmin_drivers
from .engines.columns import argmin_columns
from .engines.rows import (
    argmin_long_rows,
    argmin_rows,
    argmin_short_rows,
    long_rows,
    long_rows_into,
    short_rows,
    short_rows_into,
)
from .keys import fill_missing, kind_of, missing_index, order_of
from .plan import Plan, ReducedLayout, layout_of, plan, reduced_layout, shares_of

Run = Callable[[np.ndarray, np.ndarray, int], None]


def argmin(params: ArgReductionParams) -> Run:
    """ARGMIN or ARGMAX (``params.kind``) over any axes of any layout, reading each element once; its
    ``prepare`` resolves a binding's layout once (what a recorded dispatch replays)."""

    # Calls of the layouts seen, taking the arrays: a call on arrays of a layout seen before (a new block of
    # the same shape, a new result) skips the layout's merge, plan and task table (100-350 us a call on
    # 32 MiB, on top of its 1.1 ms of work).
    calls: dict[Any, LayoutCall] = {}

    def run(x: np.ndarray, out: np.ndarray, threads: int) -> None:
        key = (x.dtype, x.shape, x.strides, threads)
        call = calls.get(key)
        if call is None:
            if len(calls) >= _LAYOUT_CALLS:
                calls.clear()
            call = calls[key] = _layout_call(params, x, threads)
        call(x, out)

    run.prepare = lambda x, out, threads: _prepared(params, x, out, threads)  # type: ignore[attr-defined]
    # A call taking (x, out) for arrays of this layout: what a functional call on new arrays runs.
    run.prepare_layout = lambda x, out, threads: _layout_call(params, x, threads, out)  # type: ignore[attr-defined]
    return run


_LAYOUT_CALLS = 64  # layouts a reduction's run remembers
LayoutCall = Callable[[np.ndarray, np.ndarray], None]


def compile_layout(spec: KernelSpec, params: ArgReductionParams, shape: Sequence[int],
                   strides: Sequence[int], threads: int) -> None:
    """Compile the kernels that an ARGMIN of its input's own elements over this layout runs, and no others,
    by running its plan over no rows (``reduction.prepare_reduction``)."""
    order = order_of(params)
    red = layout_of(shape, strides, params.axes)
    bits, kind, key = _keyed(np.zeros(1, spec.inputs[0].numpy), params)  # type: ignore[union-attr]
    work = plan(red, threads)
    empty = Plan(work.rows, [replace(t, stop=t.start) for t in work.tasks], work.pieces)
    state = State.fresh(1, key, work.pieces)
    _run_plan(bits, red, empty, state, kind, order, threads)
    fill_missing(state.idx[0], 0)
    rows = _rows_kernel(red, work)
    if rows is not None:  # and the one compiled call of small rows, over no rows, into the index type
        kernel, _, n, xs = rows
        kernel(bits, 0, n, xs, np.zeros(1, spec.output.numpy), 0, kind, order, FLOAT_COMPARISONS)


class State:
    """Running (key, index) per slot, one row per piece of a split reduction (row 0 holds the result);
    index -1 while a slot has found nothing."""

    def __init__(self, cur: np.ndarray, idx: np.ndarray) -> None:
        self.cur, self.idx = cur, idx

    @classmethod
    def fresh(cls, slots: int, key: np.dtype, pieces: int = 1) -> State:
        """Arrays of the state, not filled (``_fill``)."""
        return cls(np.empty((pieces, slots), key), np.empty((pieces, slots), np.int64))

    @classmethod
    def reused(cls, slots: int, key: np.dtype, pieces: int = 1) -> State:
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
# FLOAT32 ARGMIN rows compared as floats where the thread's comparisons are exact (``argmin_rows``);
# False forces integer keys everywhere (the tests run both).
FLOAT_COMPARISONS = True
_kept = threading.local()


def _keyed(x: np.ndarray, params: ArgReductionParams) -> tuple[np.ndarray, Any, np.dtype]:
    """The input as the kernels read it, its ``kind`` and its key type: floats as their bits (``key_of``)."""
    return (_bits(x), *kind_and_key(x.dtype, params))


def kind_and_key(dtype: Any, params: ArgReductionParams) -> tuple[Any, np.dtype]:
    """The engines' ``kind`` of an element type, and the type its keys are held in."""
    dtype = np.dtype(dtype)
    return kind_of(dtype, params), _KEY_TYPES.get(dtype, dtype)


# The key type of each float input (integers are their own keys).
_KEY_TYPES: dict[np.dtype, np.dtype] = {np.dtype(np.float32): np.dtype(np.int32),
                                        np.dtype(np.float16): np.dtype(np.int16)}


def _bits(x: np.ndarray) -> np.ndarray:
    """The input as the kernels read it: floats as their bits."""
    if x.dtype == np.float32:
        return x.view(np.int32)
    if x.dtype == np.float16:
        return x.view(np.uint16)
    return x


def _argmin(params: ArgReductionParams, x: np.ndarray, out: np.ndarray, threads: int) -> None:
    _layout_call(params, x, threads)(x, out)


def _prepared(params: ArgReductionParams, x: np.ndarray, out: np.ndarray, threads: int) -> Callable[[], None]:
    """The reduction of ``x`` into ``out`` as a call of no arguments (``_layout_call`` bound to them)."""
    call = _layout_call(params, x, threads)
    return lambda: call(x, out)


def _layout_call(params: ArgReductionParams, x: np.ndarray, threads: int, out: np.ndarray | None = None
                 ) -> LayoutCall:
    """The reduction of arrays laid out as ``x`` (dtype, shape, strides) as a call taking them and the output
    (laid out as ``out`` where given): the layout merged, the plan made, the task table and the kernel chosen
    once. Its state is taken at each call (``State.reused``: this thread's kept arrays), so one call may run on
    several threads at once."""
    order = order_of(params)
    red = reduced_layout(x, params.axes)
    kind, key = kind_and_key(x.dtype, params)
    work = plan(red, threads)
    default = missing_index(order, red.length)
    by_state = _state_call(red, work, kind, key, order, threads, default)
    return _rows_into(x, out, red, work, kind, order, default, by_state) or by_state


def _state_call(red: ReducedLayout, work: Plan, kind: Any, key: np.dtype, order: Any, threads: int,
                default: int) -> LayoutCall:
    """The plan's tasks over per-slot states, merged, then written out."""
    run = _plan_runner(red, work, kind, order, threads)

    def call(x: np.ndarray, out: np.ndarray) -> None:
        state = State.reused(red.slots, key, work.pieces)
        _fill(state.idx.reshape(-1), -1, threads)
        run(flat(_bits(x)), state)
        if work.pieces > 1:
            _merge(state, order, threads)
        _finish(state.idx[0], out, default, threads)

    return call


def _rows_into(x: np.ndarray, out: np.ndarray | None, red: ReducedLayout, work: Plan, kind: Any, order: Any,
               default: int, by_state: LayoutCall) -> LayoutCall | None:
    """For arrays laid out as ``x`` (and ``out``, where given), a plan of one task over contiguous rows, each one
    output (or one row, the only output), as one compiled call writing a C-contiguous output itself
    (``short_rows_into``, ``long_rows_into``), any other output ``by_state``; None for any other plan. The
    small calls on new arrays (the functional API's) pay no state, task table or pass over missing indices,
    and what the layouts decide (the input's flat view, the output's) is decided here, once."""
    found = _rows_kernel(red, work)
    if found is None:
        return None
    kernel, rows, n, xs = found
    bits = _bits(x).dtype
    if out is not None and out.flags.c_contiguous and x.flags.c_contiguous:
        def into(x: np.ndarray, out: np.ndarray) -> None:
            kernel(x.reshape(-1).view(bits), rows, n, xs, out.reshape(-1), default, kind, order, FLOAT_COMPARISONS)

        return into

    def call(x: np.ndarray, out: np.ndarray) -> None:
        if out.flags.c_contiguous:
            kernel(flat(x.view(bits)), rows, n, xs, out.reshape(-1), default, kind, order, FLOAT_COMPARISONS)
        else:
            by_state(x, out)

    return call


def _rows_kernel(red: ReducedLayout, work: Plan) -> tuple[Callable[..., None], int, int, int] | None:
    """(kernel, rows, their length, their stride) of a plan ``_rows_into`` takes: one task over contiguous
    rows, each one output (or one row, the only output); None for any other plan."""
    if not work.rows or len(work.tasks) != 1 or len(red.sizes) > 2 or red.strides[-1] != 1:
        return None
    if len(red.sizes) == 2 and red.reduced[0]:
        return None  # one output over rows apart: the task's kernel walks them
    rows, n = (red.sizes[0], red.sizes[1]) if len(red.sizes) == 2 else (1, red.sizes[0])
    xs = red.strides[0] if len(red.sizes) == 2 else 0
    return short_rows_into if short_rows(red.sizes, red.strides) else long_rows_into, rows, n, xs


def _fill(a: np.ndarray, value: int, threads: int) -> None:
    """A 1-D array filled, on the threads where it is large (2 MiB of indices took 0.2 ms on one)."""
    parts = shares(a.size, threads)
    args = (a, value, drivers.bounds_of(parts))
    if len(parts) > 1 and drivers.ready(argmin_drivers.fill, args):
        drivers.launch(argmin_drivers.fill, args, threads)
    else:
        a.fill(value)


def _finish(idx: np.ndarray, out: np.ndarray, default: int, threads: int) -> None:
    """The indices into the output; ``default`` where every element was NaN (SPEC 8.5)."""
    parts = shares(idx.size, threads)
    if len(parts) > 1 and out.flags.c_contiguous:
        args = (idx, out.reshape(-1), default, drivers.bounds_of(parts))
        if drivers.ready(argmin_drivers.finish, args):
            drivers.launch(argmin_drivers.finish, args, threads)
            return
    fill_missing(idx, default)
    np.copyto(out, idx.reshape(out.shape), casting="unsafe")


def _run_plan(fx: np.ndarray, red: ReducedLayout, work: Plan, state: State, kind: Any, order: Any,
              threads: int) -> None:
    _plan_runner(red, work, kind, order, threads)(fx, state)


def _plan_runner(red: ReducedLayout, work: Plan, kind: Any, order: Any,
                 threads: int) -> Callable[[np.ndarray, State], None]:
    """The plan's tasks as a call of the flat input and the state they update: the task table, the kernel
    (or its driver) and every other argument made once."""
    strides, reduced, weights = int64s(red.strides), np.array(red.reduced, np.uint8), int64s(red.weights)
    kernel = _kernel(work, red, argmin_columns, argmin_short_rows, argmin_long_rows, argmin_rows)
    tasks = [(t.x0, int64s(t.sizes), strides, reduced, weights, t.slot0, t.index0, t.start, t.stop, t.piece)
             for t in work.tasks]

    def on_tasks(fx: np.ndarray, state: State) -> None:
        run_tasks(kernel, [(fx, *a[:-1], state.cur[a[-1]], state.idx[a[-1]], kind, order, FLOAT_COMPARISONS)
                           for a in tasks], threads)

    if len(work.tasks) <= 1:
        return on_tasks
    table = np.array([[t.x0, t.slot0, t.index0, t.start, t.stop, t.piece, *t.sizes] for t in work.tasks], np.int64)
    driver = _kernel(work, red, argmin_drivers.columns, argmin_drivers.short_rows, argmin_drivers.long_rows,
                     argmin_drivers.rows)

    def on_driver(fx: np.ndarray, state: State) -> None:
        args = (fx, table, strides, reduced, weights, state.cur, state.idx, kind, order, FLOAT_COMPARISONS)
        if drivers.ready(driver, args):
            drivers.launch(driver, args, threads)
        else:
            on_tasks(fx, state)

    return on_driver


def _kernel(work: Plan, red: ReducedLayout, columns: Callable[..., None], short_rows_kernel: Callable[..., None],
            long_rows_kernel: Callable[..., None], rows: Callable[..., None]) -> Callable[..., None]:
    """Of the column, short-row, long-row and row kernels (or their drivers), the one a plan's tasks run
    (their runs are all short or all not: pieces of a split run are longer than ROW_BLOCK). Only that one is
    compiled: ``argmin_rows`` would serve every row layout, but its walker and all three row paths cost
    twice as much to compile as the one path of the usual two-dimensional layouts."""
    if not work.rows:
        return columns
    sizes = work.tasks[0].sizes
    if short_rows(sizes, red.strides):
        return short_rows_kernel
    return long_rows_kernel if long_rows(sizes, red.strides) else rows


def _merge(state: State, order: Any, threads: int) -> None:
    """Every piece's state folded into row 0, ranges of slots on the threads where there is enough to do
    (first-axis ARGMIN of [8192, 8192] on 16 threads: 64 pieces of 8192 slots)."""
    pieces, slots = state.idx.shape
    count = len(shares(pieces * slots, threads))
    args = (state.cur, state.idx, order, drivers.bounds_of(shares_of(slots, min(count, slots))))
    if count > 1 and drivers.ready(argmin_drivers.merge, args):
        drivers.launch(argmin_drivers.merge, args, threads)
    else:
        argmin_drivers.merge_range(state.cur, state.idx, 0, slots, order)
