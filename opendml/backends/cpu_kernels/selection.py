"""TOP_K's selection on the CPU (``KernelSpec.selection``): what both kernel modules run.

Each sequence's elements become rank keys (``rank_keys``: smaller ranks first in NumPy's order, NaN after every
number, -0.0 equal to +0.0), so that a partition finds K candidates and the K-th key ``t`` of a row in linear
time; the row's selection is every element of a key below ``t`` and, of those equal to ``t``, the lowest indices
up to K (ties at the boundary by ascending index). The K selected are then sorted by (key, index). Where K is a
large part of the row (``FULL_SORT_SHARE``), one stable sort of the keys costs less. Rows are shared among the
device's threads (NumPy's partition and sorts release the GIL).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise

import numpy as np

from ...errors import kernel_unsupported
from ...kernels.spec import KernelSpec, Selection
from .threads import run_tasks

FULL_SORT_SHARE = 4  # K above a quarter of the row: one stable sort rather than partition and sort
MIN_TASK_ELEMENTS = 1 << 16  # below this many input elements a thread's share is not worth starting it

def record(spec: KernelSpec) -> Selection:
    """The spec's selection, or a clear error (the element must be the input's own elements)."""
    selection = spec.selection
    if selection is None or len(spec.inputs) != 1 or spec.inputs[0] is None:
        raise kernel_unsupported(spec.operator, "Selection", "must be a TOP_K selection of one input",
                                 repr(selection))
    if spec.extra or repr(spec.element) != f"Load(0, {spec.inputs[0].name})":
        raise kernel_unsupported(spec.operator, "Selection element", "must be the input's own elements (a "
                                 "computed prologue is not lowered for TOP_K)", repr(spec.element))
    return selection


def rank_keys(rows: np.ndarray, largest: bool) -> np.ndarray:
    """Keys whose NumPy order is the ranking (smaller first), equal exactly where the values tie: floats as
    FLOAT32 or FLOAT64 (every FLOAT16 exact), negated for ``largest`` (NumPy's sorts and partitions put NaN last
    either way, and take -0.0 as equal to +0.0); integers as INT64 (UINT64 with its top bit flipped), bits
    inverted for ``largest`` (an order reversed without overflow)."""
    if rows.dtype.kind == "f":
        keys = rows.astype(np.float32) if rows.dtype == np.float16 else rows
        return np.negative(keys) if largest else keys
    if rows.dtype == np.uint64:
        keys = (rows ^ np.uint64(1 << 63)).view(np.int64)
    else:
        keys = rows.astype(np.int64)
    return np.invert(keys) if largest else keys


def _tied(keys: np.ndarray, threshold: np.ndarray) -> np.ndarray:
    """Where a key equals its row's threshold (NaN equal to NaN)."""
    tied = keys == threshold
    if keys.dtype.kind == "f" and np.isnan(threshold).any():
        tied |= np.isnan(keys) & np.isnan(threshold)
    return tied


def _below(keys: np.ndarray, threshold: np.ndarray) -> np.ndarray:
    """Where a key ranks before its row's threshold (every number before a NaN threshold)."""
    below = keys < threshold
    if keys.dtype.kind == "f" and np.isnan(threshold).any():
        below |= ~np.isnan(keys) & np.isnan(threshold)
    return below


def select_rows(rows: np.ndarray, k: int, largest: bool) -> np.ndarray:
    """The indices of each row's K first elements in the ranking's order (2-D: rows, K; int64).

    A partition gives K candidates ranked no later than the K-th key ``t``; they are the selection unless a row
    holds more keys equal to ``t`` than it took, and then which of them it took is the partition's choice: such
    rows take every key below ``t`` and the lowest indices of those equal to it. The K are then sorted by (key,
    index)."""
    keys = rank_keys(rows, largest)
    n = keys.shape[-1]
    if k * FULL_SORT_SHARE >= n:
        return np.argsort(keys, axis=-1, kind="stable")[:, :k]
    candidates = np.argpartition(keys, k - 1, axis=-1)[:, :k]
    picked = np.take_along_axis(keys, candidates, axis=-1)
    threshold = np.take_along_axis(keys, candidates[:, k - 1:k], axis=-1)
    short = np.count_nonzero(_tied(keys, threshold), axis=-1) > np.count_nonzero(_tied(picked, threshold), axis=-1)
    for r in np.flatnonzero(short):  # rows tied at the boundary beyond K: the lowest indices of the tie
        row, t = keys[r:r + 1], threshold[r:r + 1]
        tied = _tied(row, t)
        chosen = _below(row, t)
        chosen |= tied & (np.cumsum(tied, axis=-1) <= k - np.count_nonzero(chosen))
        candidates[r] = np.flatnonzero(chosen[0])
        picked[r] = row[0, candidates[r]]
    order = np.lexsort((candidates, picked), axis=-1)  # by key (NaN last), then index
    return np.take_along_axis(candidates, order, axis=-1)


def reduction(spec: KernelSpec) -> Callable[..., None]:
    """The call ``run(x, values, indices, threads)`` over views laid out as the descriptions say."""
    selection = record(spec)

    def run(x: np.ndarray, values: np.ndarray, indices: np.ndarray, threads: int) -> None:
        axis, k = selection.axis, selection.k
        moved = np.moveaxis(x, axis, -1)
        rows = moved.reshape(-1, moved.shape[-1])  # a copy where the layout needs one
        result_values = np.empty((rows.shape[0], k), values.dtype)
        result_indices = np.empty((rows.shape[0], k), np.int64)

        def task(start: int, stop: int) -> None:
            chosen = select_rows(rows[start:stop], k, selection.largest)
            result_indices[start:stop] = chosen
            result_values[start:stop] = np.take_along_axis(rows[start:stop], chosen, axis=-1)

        _in_tasks(task, rows.shape[0], rows.size, threads)
        shape = moved.shape[:-1] + (k,)
        np.moveaxis(values, axis, -1)[...] = result_values.reshape(shape)
        np.moveaxis(indices, axis, -1)[...] = result_indices.reshape(shape).astype(indices.dtype)

    return run


def _in_tasks(task: Callable[[int, int], None], count: int, elements: int, threads: int) -> None:
    """``task`` over ``[0, count)`` in contiguous shares, two a thread where the input is large enough (a thread
    slowed by other work takes fewer)."""
    shares = max(1, min(2 * threads, count, elements // MIN_TASK_ELEMENTS))
    bounds = [count * s // shares for s in range(shares + 1)]
    run_tasks(task, list(pairwise(bounds)), threads)


def prepare(spec: KernelSpec) -> None:
    """The compile step: the spec checked (nothing is compiled)."""
    record(spec)
