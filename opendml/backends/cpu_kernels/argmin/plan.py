"""How an ARGMIN is shared out: its layout merged to the fewest dimensions, then cut into tasks.

Plain Python, run once per call: the kernels (``argmin_rows``, ``argmin_columns``) take a task's numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..views import shares
from .engines.columns import ROW_GROUP

# Below these, a piece of a split would be too short to pay for its private state and the merge.
SPLIT_RUN_MIN = 4096  # elements of a reduced last dimension per piece (``split_reduced``)
SPLIT_COLUMNS_MIN = 1024  # kept last-dimension columns per piece
SPLIT_ROWS_MIN = 4 * ROW_GROUP  # reduced rows per piece, when the last dimension is kept


@dataclass(frozen=True)
class ReducedLayout:
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


def reduced_layout(x: np.ndarray, axes: tuple[int, ...]) -> ReducedLayout:
    return layout_of(x.shape, [s // x.itemsize for s in x.strides], axes)


def layout_of(shape: Sequence[int], strides: Sequence[int], axes: tuple[int, ...]) -> ReducedLayout:
    """``reduced_layout`` of a shape and its strides in elements (no array needed: compiling plans with it)."""
    found = merged(shape, [strides], axes)
    return replace(found.layout, strides=found.strides[0])


@dataclass(frozen=True)
class Merged:
    """The operands' common layout: ``layout`` as the plan takes it (packed strides), each operand's
    strides over the same dimensions."""

    layout: ReducedLayout
    strides: list[list[int]]


def merged(shape: Sequence[int], strides: Sequence[Sequence[int]], axes: tuple[int, ...]) -> Merged:
    """The layout of several operands (``layout_of`` is one operand's): dimensions of 1 dropped, neighbours
    of one kind merged where every operand's strides allow it."""
    dims: list[list[Any]] = []  # [size, reduced, weight, strides]
    for k, n in enumerate(shape):
        if n == 1:
            continue
        reduced = k in axes
        later = [shape[a] for a in axes if a > k] if reduced else [shape[j] for j in range(k + 1, len(shape))
                                                                    if j not in axes]
        own = [s[k] for s in strides]
        if dims and dims[-1][1] == reduced and all(p == s * n for p, s in zip(dims[-1][3], own)):
            dims[-1][0] *= n
            dims[-1][2] = math.prod(later)
            dims[-1][3] = own
            continue
        dims.append([n, reduced, math.prod(later), own])
    if not dims:
        dims = [[1, True, 1, [0] * len(strides)]]
    sizes = [d[0] for d in dims]
    packed = [math.prod(sizes[d + 1:]) for d in range(len(sizes))]
    layout = ReducedLayout(sizes, packed, [bool(d[1]) for d in dims], [d[2] for d in dims],
                           math.prod(n for k, n in enumerate(shape) if k not in axes),
                           math.prod(shape[k] for k in axes))
    return Merged(layout, [[d[3][p] for d in dims] for p in range(len(strides))])


@dataclass(frozen=True)
class Task:
    """One share of an ARGMIN: the kernel's arguments that differ from share to share."""

    x0: int
    slot0: int
    index0: int
    start: int
    stop: int
    piece: int  # the state row it folds into
    sizes: list[int]


@dataclass(frozen=True)
class Plan:
    rows: bool  # the last dimension is reduced: ``argmin_rows``, else ``argmin_columns``
    tasks: list[Task]
    pieces: int  # private states to merge (1: the tasks' slots are disjoint)


def plan(red: ReducedLayout, threads: int) -> Plan:
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
        return Plan(rows, [Task(0, 0, 0, a, b, 0, sizes) for a, b in shares_of(outer, min(outer, pieces))], 1)
    if pieces > 1 and not rows and inner == 2 and red.sizes[-2] >= SPLIT_ROWS_MIN * pieces and (
            red.slots * pieces <= total // 4):  # split the rows: whole rows stream through memory
        return split_reduced(red, rows, len(sizes) - 2, pieces, outer)
    last = red.sizes[-1]
    if pieces > 1 and not rows and last >= pieces * SPLIT_COLUMNS_MIN:  # split the columns: disjoint slots
        return Plan(rows, [Task(a * red.strides[-1], a * red.weights[-1], 0, 0, outer, 0, sizes[:-1] + [b - a])
                           for a, b in shares_of(last, pieces)], 1)
    if pieces > 1 and rows and last >= pieces * SPLIT_RUN_MIN:  # split the reduced run
        return split_reduced(red, rows, len(sizes) - 1, pieces, outer)
    return Plan(rows, [Task(0, 0, 0, 0, outer, 0, sizes)], 1)


def split_reduced(red: ReducedLayout, rows: bool, dim: int, pieces: int, outer: int) -> Plan:
    """Reduced dimension ``dim`` cut into pieces, each folded into a state of its own (merged afterwards)."""
    tasks = []
    for p, (a, b) in enumerate(shares_of(red.sizes[dim], pieces)):
        sizes = list(red.sizes)
        sizes[dim] = b - a
        tasks.append(Task(a * red.strides[dim], 0, a * red.weights[dim], 0, outer, p, sizes))
    return Plan(rows, tasks, len(tasks))


def shares_of(total: int, count: int) -> list[tuple[int, int]]:
    """``total`` items in ``count`` ranges of equal size (the last shorter)."""
    step = math.ceil(total / count)
    return [(a, min(total, a + step)) for a in range(0, total, step)]
