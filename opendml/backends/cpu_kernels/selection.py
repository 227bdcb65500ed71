"""TOP_K's selection on the CPU (``KernelSpec.selection``): what both kernel modules run.

Each sequence's elements become rank keys (``rank_keys``: smaller ranks first in NumPy's order, NaN after every
number, -0.0 equal to +0.0), so that a partition finds K candidates and the K-th key ``t`` of a row in linear
time; the row's selection is every element of a key below ``t`` and, of those equal to ``t``, the lowest indices
up to K (ties at the boundary by ascending index). The K selected are then sorted by (key, index). Where K is a
large part of the row (``FULL_SORT_SHARE``), one stable sort of the keys costs less. Rows are shared among the
device's threads (NumPy's partition and sorts release the GIL).

The Numba kernels run ``numba_reduction`` instead: where K is small beside the row (``uses_heap``), one scan a
row keeping the K best in a bounded heap (``top_k.py``), over the input's own memory whatever its strides, rows
shared among the threads and, where rows are fewer than threads, each row cut into segments merged after. The
same order, so the same bits as the partition.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import pairwise

import numpy as np

from ...errors import kernel_unsupported
from ...kernels.spec import KernelSpec, Selection
from .threads import run_tasks

FULL_SORT_SHARE = 4  # K above a quarter of the row: one stable sort rather than partition and sort
MIN_TASK_ELEMENTS = 1 << 16  # below this many input elements a thread's share is not worth starting it
HEAP_MAX_K = 256  # the Numba kernel's bounded heap up to this K (beyond, the partition: its cost does not grow with K)
SEGMENT_MIN = 1 << 15  # a row is cut among threads into segments of at least this many elements
# The Numba kernel reads floats as their bits: the storage type, its sign bit, and +inf's bits.
_FLOAT_BITS = {np.dtype(np.float16): (np.uint16, 0x8000, 0x7C00), np.dtype(np.float32): (np.int32, 1 << 31, 0x7F800000)}
_FLOAT_DTYPES = {np.dtype(np.uint16): np.float16, np.dtype(np.int32): np.float32}

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


def numba_reduction(spec: KernelSpec) -> Callable[..., None]:
    """The Numba kernel's ``run(x, values, indices, threads)`` (``top_k.py``: one scan a row, a bounded heap of the
    K best) where K is small beside the row (``HEAP_MAX_K``, ``FULL_SORT_SHARE``) and the type is one it takes
    (not UINT64); the partition above otherwise. Both give the K first of the same order, so the same bits."""
    selection = record(spec)
    fallback = reduction(spec)

    def run(x: np.ndarray, values: np.ndarray, indices: np.ndarray, threads: int) -> None:
        axis, k = selection.axis, selection.k
        n = x.shape[axis]
        if x.size == 0 or not uses_heap(x.dtype, n, k):
            fallback(x, values, indices, threads)
            return
        result_values, result_indices = heap_select(x, axis, k, selection.largest, threads)
        shape = np.moveaxis(x, axis, -1).shape[:-1] + (k,)
        np.moveaxis(values, axis, -1)[...] = result_values.reshape(shape)
        np.moveaxis(indices, axis, -1)[...] = result_indices.reshape(shape).astype(indices.dtype)

    return run


def heap_select(x: np.ndarray, axis: int, k: int, largest: bool, threads: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's K first along ``axis`` (2-D: rows in C order of the other axes, K), values and INT64 indices, by
    the Numba kernel over ``x``'s own memory (no copy whatever its strides). Rows are shared among the threads;
    where there are fewer rows than threads and rows are long, each row is cut into segments whose K first are
    found apart (their indices offset), then merged by (key, index): the K first of a row are among its
    segments' K first, so the answer is the same."""
    from . import top_k
    from .views import flat

    n = x.shape[axis]
    bits = _FLOAT_BITS.get(x.dtype)  # floats as their bits: (the storage, its sign bit, +inf's bits)
    data = flat(x if bits is None else x.view(bits[0]))
    sign_bit, inf_bits = (None, None) if bits is None else bits[1:]
    element = [s // x.itemsize for s in x.strides]
    step = element[axis]
    others = [d for d in range(x.ndim) if d != axis]
    offsets = np.zeros(1, np.int64)
    for d in others:  # each row's first element, the other axes in C order
        offsets = (offsets[:, None] + np.arange(x.shape[d], dtype=np.int64) * element[d]).reshape(-1)
    rows = offsets.size
    values = np.empty((rows, k), data.dtype)
    indices = np.empty((rows, k), np.int64)
    parts = min(2 * threads, n // max(SEGMENT_MIN, k)) if rows < threads else 1
    if parts <= 1:
        def task(start: int, stop: int) -> None:
            top_k.select_rows(data, sign_bit, inf_bits, offsets, step, n, k, largest, values, indices, start, stop)

        _in_tasks(task, rows, x.size, threads)
    else:
        _segments(data, (sign_bit, inf_bits), offsets, step, n, k, largest, parts, values, indices, threads)
    return (values if bits is None else values.view(x.dtype)), indices


def _segments(data: np.ndarray, floats: tuple[int | None, int | None], offsets: np.ndarray, step: int, n: int,
              k: int, largest: bool, parts: int, values: np.ndarray, indices: np.ndarray, threads: int) -> None:
    """Each row cut into ``parts`` segments of the threads' work, then each row's segments' K first merged."""
    from . import top_k

    bounds = [n * s // parts for s in range(parts + 1)]
    rows = offsets.size
    found_values = np.empty((rows, parts, k), data.dtype)
    found_indices = np.empty((rows, parts, k), np.int64)

    def task(r: int, s: int) -> None:
        lo, hi = bounds[s], bounds[s + 1]
        start = np.array([offsets[r] + lo * step], np.int64)
        top_k.select_rows(data, *floats, start, step, hi - lo, k, largest, found_values[r, s:s + 1],
                          found_indices[r, s:s + 1], 0, 1)
        found_indices[r, s] += lo

    run_tasks(task, [(r, s) for r in range(rows) for s in range(parts)], threads)
    candidates = found_values.reshape(rows, parts * k)
    floating = _FLOAT_DTYPES.get(candidates.dtype) if floats[0] is not None else None
    keys = rank_keys(candidates if floating is None else candidates.view(floating), largest)
    order = np.lexsort((found_indices.reshape(rows, -1), keys), axis=-1)[:, :k]  # NaN keys last, ties by index
    values[...] = np.take_along_axis(candidates, order, axis=-1)
    indices[...] = np.take_along_axis(found_indices.reshape(rows, -1), order, axis=-1)


def _in_tasks(task: Callable[[int, int], None], count: int, elements: int, threads: int) -> None:
    """``task`` over ``[0, count)`` in contiguous shares, two a thread where the input is large enough (a thread
    slowed by other work takes fewer)."""
    shares = max(1, min(2 * threads, count, elements // MIN_TASK_ELEMENTS))
    bounds = [count * s // shares for s in range(shares + 1)]
    run_tasks(task, list(pairwise(bounds)), threads)


def prepare(spec: KernelSpec, numba: bool = False, shape: Sequence[int] | None = None) -> None:
    """The compile step: the spec checked, and for the Numba kernels the input type's kernel compiled (once:
    Numba's disk cache) on a row of two elements, where ``shape`` (the input's sizes, when known) is one the
    kernel runs (``uses_heap``): a TOP_K that always takes the partition compiles nothing."""
    selection = record(spec)
    dtype = np.dtype(spec.inputs[0].numpy)  # type: ignore[union-attr]
    if numba and (shape is None or uses_heap(dtype, shape[selection.axis], selection.k)):
        heap_select(np.zeros((1, 2), dtype), 1, 1, True, 1)


def uses_heap(dtype: np.dtype, n: int, k: int) -> bool:
    """Whether the Numba kernel selects K of rows of ``n`` elements of ``dtype`` (else the partition does)."""
    return dtype != np.uint64 and k <= HEAP_MAX_K and k * FULL_SORT_SHARE < n
