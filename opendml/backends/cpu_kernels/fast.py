"""The JIT path: each operator as one Numba kernel over the views' memory, shared out to threads.

Element-wise operators run kernels generated from their expression (``codegen``); reductions run the
hand-tuned engine of their kind: ARGMIN's live in the ``argmin_*`` modules, and ``argmin`` (by parameters),
``reduction`` (by kernel specification) and ``prepare_reduction`` (its compile step) are theirs, re-exported
here.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import expr as ex
from ...dtypes import DataType
from ...kernels.spec import KernelSpec
from ...tensor import TensorDesc
from . import accumulations, codegen, drivers, selection, softmax, unsupported
from .argmin.call import argmin as argmin  # re-exported: the kernel modules' common interface
from .argmin.reduction import prepare_reduction as prepare_index_reduction
from .argmin.reduction import reduction as index_reduction
from .threads import run_tasks
from .views import elementwise_layout, int64s, shares
from .views import flat as flat  # the generated entries take it from here (``codegen``: ``host.flat``)


def reduction(spec: KernelSpec) -> Callable[..., None]:
    """A reduction's run: ARGMIN's engines for an index reduction, REDUCE's exact sums for a value one,
    TOP_K's selection (``selection``) for a selection, SOFTMAX's rows (``softmax``) for a normalization."""
    if spec.accumulation is not None:
        return accumulations.numba_reduction(spec)
    if spec.selection is not None:
        return selection.numba_reduction(spec)
    if spec.normalization is not None:
        return softmax.reduction(spec, numba=True)
    return index_reduction(spec)


def prepare_reduction(spec: KernelSpec, shape: Sequence[int], strides: Sequence[int], threads: int,
                      operands: Sequence[Sequence[int] | None] = (), extras: Sequence[Sequence[int]] = ()) -> None:
    """The compile step of ``reduction(spec)`` over this input layout."""
    if spec.accumulation is not None:
        accumulations.prepare(spec, numba=True)
        return
    if spec.selection is not None:
        selection.prepare(spec, numba=True, shape=shape)
        return
    if spec.normalization is not None:
        softmax.prepare(spec, numba=True)
        return
    prepare_index_reduction(spec, shape, strides, threads, operands, extras)


@dataclass(frozen=True)
class _Walk:
    """A merged layout as the kernels take it, and the thread shares of its elements."""

    sizes: np.ndarray
    strides: tuple[np.ndarray, ...]
    shares: list[tuple[int, int]]
    bounds: np.ndarray  # the shares as the drivers take them


# A reduction's element may be any expression (a fused prologue): its values are written into scratch tiles
# that the ARGMIN engines reduce (``argmin.engines.boxes``, ``argmin.prologue``).
REDUCTION_PROLOGUES = True

# Kernels write ``KernelSpec.extra`` too: element-wise modules store every root (``codegen``), reductions
# write their extra values where they compute their element (``argmin.extras``).
FUSED_OUTPUTS = True

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
    """``kernel`` over each share: here if there is one, else on Numba's threads through ``driver`` where it
    is ready (``drivers.ready``), else on Python threads."""
    if len(layout.shares) == 1:
        a, b = layout.shares[0]
        kernel(*head, layout.sizes, *layout.strides, a, b, *tail)
        return
    args = (*head, layout.sizes, *layout.strides, layout.bounds, *tail)
    if drivers.ready(driver, args):
        drivers.launch(driver, args, threads)
    else:
        run_tasks(kernel, [(*head, layout.sizes, *layout.strides, a, b, *tail) for a, b in layout.shares], threads)


def prepare_elementwise(spec: KernelSpec, inputs: Sequence[TensorDesc | None], output: TensorDesc) -> None:
    """Compile the kernel that the calls of an element-wise operator with this output run, and no other,
    by running it over no elements: the streaming kernel where the output has ``STREAM_MIN_BYTES`` or more
    (its description fixes its size, so every call streams), else the plain one. A one-element warm-up would
    compile the plain kernel for every operator, and a large one's first call the streaming one too: 0.6 s
    more for the benchmark's DEQUANTIZE_LINEAR -> CLIP -> THRESHOLD [16384, 4096]."""
    module = codegen.compiled(spec.element)
    large = math.prod(output.sizes) * output.data_type.size >= STREAM_MIN_BYTES
    kernel = module.kernel_streamed if large and hasattr(module, "kernel_streamed") else module.kernel
    loaded = ex.loads(spec.element)
    arrays = [np.zeros(1, _held(loaded[k])) for k in codegen.operands(spec.element)]
    units = [UNIT] * (len(arrays) + 1)
    kernel(*arrays, np.zeros(1, _held(spec.output)), UNIT, *units, 0, 0, *spec.scalars)


def _held(t: DataType | None) -> np.dtype:
    """How the kernels take data of type ``t``: FLOAT16 as its bits."""
    return np.dtype(np.uint16) if t is DataType.FLOAT16 else np.dtype(t.numpy)  # type: ignore[union-attr]


def elementwise(spec: KernelSpec) -> Callable[..., None]:
    """An element-wise operator: its generated module's entry (``codegen``), called with the operator's
    inputs in DirectML order (None for an absent one), its output, one output per ``spec.extra`` and a thread
    count. The entry uses ``lengths``, ``UNIT``, ``walk``, ``run_shares``, ``flat`` and ``STREAM_MIN_BYTES``
    from here. Outputs of at least STREAM_MIN_BYTES together are written with streaming stores."""
    try:
        module = codegen.compiled(spec.element, spec.extra)
    except ex.ExpressionError as error:
        raise unsupported(spec) from error
    return module.entry(spec.scalars, sys.modules[__name__])  # type: ignore[no-any-return]
