"""TOP_K's selection on the CPU (``KernelSpec.selection``): what both kernel modules run.

Each sequence's elements become integer rank keys (``rank_keys``: smaller ranks first; NaN after every number;
-0.0 as +0.0), so that a partition finds the K-th key ``t`` of a row in linear time; the row's selection is
every element of a key below ``t`` and, of those equal to ``t``, the lowest indices up to K (ties at the
boundary by ascending index). The K selected are then sorted by (key, index). Where K is a large part of the
row (``FULL_SORT_SHARE``), one stable sort of the keys costs less. Rows are shared among the device's threads
(NumPy's partition and sorts release the GIL).
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

_SIGNED = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


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
    """Integer keys ordered as the ranking (smaller first), equal exactly where the values tie: floats by their
    bits made monotone (-0.0 as +0.0), reversed for ``largest``, NaN then moved past every number."""
    if rows.dtype.kind == "f":
        wide = rows.astype(np.float32) if rows.dtype == np.float16 else rows  # exact: every FLOAT16 is a FLOAT32
        wide = wide + wide.dtype.type(0)  # -0.0 + 0.0 is +0.0: one key for both zeros
        bits = wide.view(_SIGNED[wide.dtype.itemsize])
        keys = np.where(bits < 0, bits.dtype.type(-1) - (bits & np.iinfo(bits.dtype).max), bits)
        if largest:
            np.invert(keys, out=keys)
        keys[np.isnan(wide)] = np.iinfo(keys.dtype).max
        return keys
    if rows.dtype == np.uint64:
        keys = (rows ^ np.uint64(1 << 63)).view(np.int64)  # monotone: the sign bit flipped
    elif rows.dtype.itemsize < 8:
        keys = rows.astype(np.int64)
    else:
        keys = rows.copy()
    return np.invert(keys) if largest else keys


def select_rows(rows: np.ndarray, k: int, largest: bool) -> np.ndarray:
    """The indices of each row's K first elements in the ranking's order (2-D: rows, K; int64)."""
    keys = rank_keys(rows, largest)
    n = keys.shape[-1]
    if k * FULL_SORT_SHARE >= n:
        return np.argsort(keys, axis=-1, kind="stable")[:, :k]
    threshold = np.partition(keys, k - 1, axis=-1)[:, k - 1:k]
    below = keys < threshold
    tied = keys == threshold
    room = k - np.count_nonzero(below, axis=-1, keepdims=True)  # how many tied elements the row still takes
    chosen = below
    chosen |= tied & (np.cumsum(tied, axis=-1, dtype=np.int64) <= room)
    columns = np.nonzero(chosen)[1].reshape(-1, k)  # exactly K a row, by ascending index
    picked = np.take_along_axis(keys, columns, axis=-1)
    order = np.argsort(picked, axis=-1, kind="stable")  # by key; equal keys keep ascending index
    return np.take_along_axis(columns, order, axis=-1)


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
