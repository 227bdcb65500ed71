"""The JIT path: each operator as one Numba kernel over the views' memory, shared out to threads.

ARGMIN's engines live in the ``argmin_*`` modules: ``argmin`` (by parameters) and ``reduction`` (by kernel
specification) are theirs, re-exported here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...dtypes import DataType
from ...ops.dequantize_linear import DequantizeParams
from ...ops.elementwise import ClampParams
from . import drivers, jit
from .argmin_engine import argmin as argmin  # re-exported: the kernel modules' common interface
from .argmin_engine import reduction as reduction
from .threads import run_tasks
from .views import PARALLEL_MIN, elementwise_layout, flat, int64s, shares


def _bits(a: np.ndarray) -> np.ndarray:
    """FLOAT16 data as uint16 bits (the kernels convert them); other types as they are."""
    return a.view(np.uint16) if a.dtype == np.float16 else a


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
_UNIT = int64s([1])


def _length(n: int) -> np.ndarray:
    """``[n]`` as the kernels' sizes array, made once per length."""
    sizes = _lengths.get(n)
    if sizes is None:
        if len(_lengths) > 1024:
            _lengths.clear()
        sizes = _lengths[n] = int64s([n])
    return sizes


def _walk(arrays: list[np.ndarray], threads: int) -> _Walk:
    key = (threads, arrays[-1].shape, *(a.strides for a in arrays), *(a.itemsize for a in arrays))
    walk = _walks.get(key)
    if walk is None:
        layout = elementwise_layout(arrays)
        pieces = shares(math.prod(layout.sizes), threads)
        walk = _Walk(int64s(layout.sizes), tuple(int64s(s) for s in layout.strides), pieces,
                     drivers.bounds_of(pieces))
        if len(_walks) > 1024:
            _walks.clear()
        _walks[key] = walk
    return walk


def _run_shares(kernel: Callable[..., None], driver: Callable[..., None], head: tuple[Any, ...], walk: _Walk,
                tail: tuple[Any, ...], threads: int) -> None:
    """``kernel`` over each share: here if there is one, else on Numba's threads through ``driver`` (Python
    threads where those may not run)."""
    if len(walk.shares) == 1:
        a, b = walk.shares[0]
        kernel(*head, walk.sizes, *walk.strides, a, b, *tail)
    elif drivers.usable():
        drivers.launch(driver, (*head, walk.sizes, *walk.strides, walk.bounds, *tail), threads)
    else:
        run_tasks(kernel, [(*head, walk.sizes, *walk.strides, a, b, *tail) for a, b in walk.shares], threads)


def clamp(params: ClampParams) -> Callable[[np.ndarray, np.ndarray, int], None]:
    """CLIP, CLIP1 and THRESHOLD: the kernel and its scalar arguments chosen once per operator."""
    data_type = params.data_type
    if data_type.is_float:
        low = np.float32(np.nan) if params.low is None else np.float32(params.low)  # NaN compares false
        high = np.float32(np.nan) if params.high is None else np.float32(params.high)
        if data_type == DataType.FLOAT16:
            scale, bias = params.scale_bias or (np.float32(1), np.float32(0))
            kernel, driver = jit.clamp_half, drivers.clamp_half
            tail: tuple[Any, ...] = (scale, bias, params.scale_bias is not None, low, high)
        elif params.scale_bias is not None:
            kernel, driver, tail = jit.clamp_scale_bias, drivers.clamp_scale_bias, (*params.scale_bias, low, high)
        else:
            kernel, driver, tail = jit.clamp, drivers.clamp, (low, high)
    else:
        info, scalar = np.iinfo(data_type.numpy), data_type.numpy.type
        low = scalar(info.min) if params.low is None else scalar(params.low)
        high = scalar(info.max) if params.high is None else scalar(params.high)
        kernel, driver, tail = jit.clamp, drivers.clamp, (low, high)
    half = data_type == DataType.FLOAT16

    def run(x: np.ndarray, out: np.ndarray, threads: int) -> None:
        if half:
            x, out = x.view(np.uint16), out.view(np.uint16)
        n = out.size
        streaming = not half and out.nbytes >= STREAM_MIN_BYTES
        if n < PARALLEL_MIN and x.flags.c_contiguous and out.flags.c_contiguous:  # the per-call cost path
            kernel(x.reshape(-1), out.reshape(-1), _length(n), _UNIT, _UNIT, 0, n, *tail, streaming)
            return
        walk = _walk([x, out], threads)
        _run_shares(kernel, driver, (flat(x), flat(out)), walk, (*tail, streaming), threads)

    return run


def dequantize(params: DequantizeParams) -> Callable[..., None]:
    """DEQUANTIZE_LINEAR."""
    return _dequantize


def _dequantize(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray | None, out: np.ndarray,
                threads: int) -> None:
    streaming = (out.dtype == np.float32 and out.nbytes >= STREAM_MIN_BYTES,)
    if zero_point is None:
        walk = _walk([x, scale, out], threads)
        _run_shares(jit.dequantize_no_zero_point, drivers.dequantize_no_zero_point,
                    (flat(x), flat(_bits(scale)), flat(_bits(out))), walk, streaming, threads)
        return
    walk = _walk([x, scale, zero_point, out], threads)
    _run_shares(jit.dequantize, drivers.dequantize, (flat(x), flat(_bits(scale)), flat(zero_point), flat(_bits(out))),
                walk, streaming, threads)
