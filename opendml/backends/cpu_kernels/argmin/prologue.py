"""ARGMIN over a computed element (a fused prologue) on the JIT path: the layout of every operand merged,
the engines' plan (``plan``) made over it, and its tasks run box by box (``boxes``).

The operands have the reduction input's shape, each with its own strides (a broadcast scale or zero point
reads through zero strides), so dimensions merge only where they merge for every operand. The plan is made
over a packed stand-in of the merged sizes (its offsets are then turned into each operand's), so a prologue
takes the same tasks, threads, split reductions and state merges as a plain ARGMIN of that layout.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .... import expr as ex
from ....dtypes import DataType
from ....kernels.spec import KernelSpec
from ....ops.arg_reduction import ArgReductionParams
from .. import drivers
from ..threads import run_tasks
from ..views import flat
from . import call as engine
from .engines import boxes, task_rows
from .engines.rows import ROW_BLOCK
from .engines.vectors import vectorised
from .keys import missing_index, order_of
from .plan import Merged, Plan, merged, plan

Run = Any  # run(*operands, out, threads)


@dataclass(frozen=True)
class Prepared:
    """What a call of one layout runs: its plan, the engine, the task table and the walker's arrays."""

    work: Plan
    engine: str
    hoisted: tuple[bool, ...] | None  # for the fast tasks: operands that are one value along the last dimension
    tasks: np.ndarray
    strides: np.ndarray  # operands x walker dimensions (a leading dimension of 1, then the merged ones)
    red: np.ndarray
    w: np.ndarray
    slots: int
    length: int


def prepare(shape: Sequence[int], strides: Sequence[Sequence[int]], axes: tuple[int, ...], threads: int,
            fast: bool = False) -> Prepared:
    """The plan of a layout and what runs it, where ``fast`` (the element is ``vectors.vectorised``)
    and every operand walks the last dimension with stride 1 or 0: the fast row task (``fast_rows``) where
    it is reduced, the fast column task (``fast_columns``) where it is kept; else the engine of the
    plan's tasks over scratch tiles (``boxes``)."""
    found = merged(shape, strides, axes)
    red = found.layout
    work = plan(red, threads)
    hoisted = None
    if fast and all(s[-1] in (0, 1) for s in found.strides):
        hoisted = tuple(s[-1] == 0 for s in found.strides)
        engine_name = "fast_rows" if work.rows else "fast_columns"
    else:
        engine_name = "columns" if not work.rows else ("short_rows" if red.sizes[-1] <= ROW_BLOCK else "rows")
    rows = [_task_row(found, task, work.rows) for task in work.tasks]
    walker = np.array([[0, *s] for s in found.strides], np.int64)
    return Prepared(work, engine_name, hoisted, np.array(rows, np.int64), walker,
                    np.array([0, *red.reduced], np.uint8), np.array([0, *red.weights], np.int64), red.slots,
                    red.length)


def _task_row(found: Merged, task: Any, rows: bool) -> list[int]:
    """A plan task as ``boxes`` takes it: the walker's sizes lead with a dimension of 1, so that
    the box dimension ``f`` is never before the engine's last outer dimension (``m``, in those sizes)."""
    red = found.layout
    sizes = [1, *task.sizes]
    nd = len(task.sizes)
    m = nd - 1 if rows or not (nd >= 2 and red.reduced[nd - 2]) else nd - 2
    m += 1
    first = next(d for d in range(len(sizes)) if math.prod(sizes[d + 1:]) <= boxes.BOX)
    f = max(m - 1, first)
    step = boxes.BOX // math.prod(sizes[f + 1:])
    per = math.prod(sizes[m:f + 1])
    digits = [(task.x0 // p) % n for p, n in zip(red.strides, red.sizes)]  # the task's origin (packed)
    origins = [sum(i * s for i, s in zip(digits, own)) for own in found.strides]
    return [task.piece, task.slot0, task.index0, task.start, task.stop, task.start * per, task.stop * per, f, step,
            *origins, *sizes]


def reduction(spec: KernelSpec, params: ArgReductionParams) -> Run:
    """The run of a reduction whose element is computed: ``run(*operands, out, threads)``."""
    fill = boxes.fill_expression(spec.element)
    try:  # the source says whether the element lowers; the module a call runs depends on its layout
        boxes.source(spec.element)
    except ex.ExpressionError as error:
        from .. import unsupported

        raise unsupported(spec) from error
    fast = vectorised(spec.element)
    ops = tuple(sorted(ex.loads(fill)))
    kind, key = _kind(fill.type, params)
    order = order_of(params)
    halves = [ex.loads(fill)[k] is DataType.FLOAT16 for k in ops]
    prepared: dict[Any, Prepared] = {}

    def run(*args: Any) -> None:
        arrays = [args[k] for k in ops]
        out, threads = args[-2], args[-1]
        layout_key = (threads, arrays[0].shape, *(a.strides for a in arrays))
        found = prepared.get(layout_key)
        if found is None:
            if len(prepared) > 64:
                prepared.clear()
            found = prepared[layout_key] = prepare(arrays[0].shape, [_elements(a) for a in arrays], params.axes,
                                                   threads, fast)
        flats = [flat(a.view(np.uint16) if h else a) for a, h in zip(arrays, halves)]
        module = boxes.compiled(spec.element, found.hoisted)
        _execute(module, found, flats, spec.scalars, kind, key, order, out, threads)

    return run


def compile_layout(spec: KernelSpec, params: ArgReductionParams, shape: Sequence[int],
                   strides: Sequence[Sequence[int]], threads: int) -> None:
    """Compile what a call of this layout runs, and nothing else, by running its plan over no boxes."""
    fill = boxes.fill_expression(spec.element)
    ops = tuple(sorted(ex.loads(fill)))
    kind, key = _kind(fill.type, params)
    order = order_of(params)
    found = prepare(shape, strides, params.axes, threads, vectorised(spec.element))
    module = boxes.compiled(spec.element, found.hoisted)
    empty = found.tasks.copy()
    empty[:, task_rows.LAST] = empty[:, task_rows.FIRST]
    empty[:, task_rows.STOP] = empty[:, task_rows.START]
    types = ex.loads(fill)
    flats = [np.zeros(1, np.uint16 if types[k] is DataType.FLOAT16 else types[k].numpy) for k in ops]
    state = engine.State.fresh(1, key, found.work.pieces)
    _launch(module, replace(found, tasks=empty, slots=1, length=1), flats,
            spec.scalars, kind, order, state, threads)


def _execute(module: Any, found: Prepared, flats: list[np.ndarray], scalars: tuple[Any, ...], kind: Any,
             key: np.dtype, order: Any, out: np.ndarray, threads: int) -> None:
    state = engine.State.reused(found.slots, key, found.work.pieces)
    engine._fill(state.idx.reshape(-1), -1, threads)
    _launch(module, found, flats, scalars, kind, order, state, threads)
    if found.work.pieces > 1:
        engine._merge(state, order, threads)
    engine._finish(state.idx[0], out, missing_index(order, found.length), threads)


def _launch(module: Any, found: Prepared, flats: list[np.ndarray], scalars: tuple[Any, ...], kind: Any, order: Any,
            state: engine.State, threads: int) -> None:
    floats = engine.FLOAT_COMPARISONS
    tail = (found.strides, found.red, found.w, state.cur, state.idx, kind, order, floats, *scalars)
    if len(found.tasks) > 1:
        driver, args = getattr(module, f"driver_{found.engine}"), (*flats, found.tasks, *tail)
        if drivers.ready(driver, args):
            drivers.launch(driver, args, threads)
            return
    task = getattr(module, f"task_{found.engine}")
    run_tasks(task, [(*flats, t, *tail) for t in found.tasks], threads)


def _kind(t: DataType, params: ArgReductionParams) -> tuple[Any, np.dtype]:
    """The engines' ``kind`` of an element type, and its key type."""
    return engine.kind_and_key(t.numpy, params)


def _elements(a: np.ndarray) -> list[int]:
    return [s // a.itemsize for s in a.strides]
