"""How kernels walk a layout: the first element of a row, and the part of a run that streaming stores write.

A layout is ``sizes`` and per-operand ``strides`` (elements, as int64 arrays) over flat 1-D arrays, walked
from linear element ``start`` to ``stop`` in row-major order, so one compiled kernel serves every layout
and a range is one thread's share.
"""

from __future__ import annotations

from numba import njit

from ...kernels.cache import use_for_numba
from .vectors import VECTOR_BYTES

use_for_numba()  # before the decorators: Numba picks each function's cache directory then

# Inlined where called, before Numba counts references: a call that takes arrays costs reference counting
# that LLVM cannot remove, which matters in helpers called once per short row.
inline = njit(nogil=True, cache=True, inline="always")


@inline
def base_offset(row, sizes, strides):  # type: ignore[no-untyped-def]
    """Element offset of the first element of ``row``, a linear index over every dimension but the last."""
    if sizes.size == 2:  # the usual layout after merging dimensions: no division
        return row * strides[0]
    offset = 0
    for d in range(sizes.size - 2, -1, -1):
        n = sizes[d]
        offset += (row % n) * strides[d]
        row //= n
    return offset


@inline
def overlaps(a, b):  # type: ignore[no-untyped-def]
    """Whether two contiguous 1-D runs share memory (their byte ranges meet)."""
    pa, pb = a.ctypes.data, b.ctypes.data
    return a.size > 0 and b.size > 0 and pa < pb + b.size * b.itemsize and pb < pa + a.size * a.itemsize


@inline
def streamed(o, ob, j, end, contiguous):  # type: ignore[no-untyped-def]
    """``(h, t)``: the positions of run ``j``..``end`` (from ``o[ob]``) that streaming stores write, whole
    vectors from the first aligned element; ``(end, end)`` when the run is not contiguous."""
    if not contiguous:
        return end, end
    per = VECTOR_BYTES // o.itemsize
    address = o.ctypes.data + (ob + j) * o.itemsize
    h = min(end, j + (-address % VECTOR_BYTES) // o.itemsize)
    return h, h + (end - h) // per * per


@inline
def in_phase(o, ob, p, pb):  # type: ignore[no-untyped-def]
    """Whether ``o[ob]`` and ``p[pb]`` (of one element size) lie at the same place within a vector: the
    vectors that ``streamed`` aligns for one are aligned for the other (a kernel with several outputs
    streams them together)."""
    return (o.ctypes.data + ob * o.itemsize - p.ctypes.data - pb * p.itemsize) % VECTOR_BYTES == 0
