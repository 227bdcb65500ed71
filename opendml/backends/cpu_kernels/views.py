"""Turning strided NumPy views into what the kernels walk: flat arrays, merged layouts, thread shares."""

from __future__ import annotations

import math

import numpy as np

from ..layout import Layout, collapse

PARALLEL_MIN = 1 << 18  # elements below which one thread is faster than waking others
PIECES = 4  # pieces per thread: a thread slowed by other work on its core takes fewer
ALIGN = 64  # thread shares start on multiples of this many elements (whole cache lines of output)


def flat(a: np.ndarray) -> np.ndarray:
    """A 1-D contiguous array over ``a``'s memory, from its first element to its last (strides >= 0)."""
    if a.flags.c_contiguous:
        return a.reshape(-1)
    span = sum((n - 1) * s for n, s in zip(a.shape, a.strides)) // a.itemsize + 1
    return np.lib.stride_tricks.as_strided(a, shape=(span,), strides=(a.itemsize,))


def element_strides(a: np.ndarray) -> tuple[int, ...]:
    return tuple(s // a.itemsize for s in a.strides)


def elementwise_layout(arrays: list[np.ndarray]) -> Layout:
    """The merged layout of same-shaped operands (the output last)."""
    return collapse(arrays[-1].shape, [element_strides(a) for a in arrays])


def shares(total: int, threads: int) -> list[tuple[int, int]]:
    """``[start, stop)`` ranges splitting ``total`` items into pieces for the threads worth using.

    Several pieces per thread (``run_tasks`` hands them out as threads come free), none under half of
    ``PARALLEL_MIN``.
    """
    count = 1 if total < PARALLEL_MIN or threads <= 1 else min(threads * PIECES, max(1, total // (PARALLEL_MIN // 2)))
    if count <= 1:
        return [(0, total)]
    step = math.ceil(total / count / ALIGN) * ALIGN
    return [(a, min(total, a + step)) for a in range(0, total, step)]


def int64s(values: tuple[int, ...] | list[int]) -> np.ndarray:
    return np.array(values, dtype=np.int64)
