"""TOP_K and TOP_K1 on CUDA: the selection's launches (``top_k_c`` plans them and renders their sources)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import cupy
import numpy as np

from ...kernels.spec import KernelSpec
from . import top_k_c
from .argmin_kernel import _Turns
from .compiler import kernel, title
from .launch import PackedLaunch, bound_address
from .plan import BLOCK

if TYPE_CHECKING:
    from ...binding import BoundTensor
    from ...tensor import TensorDesc
    from .backend import CudaBackend


class TopKKernel:
    """A TOP_K selection: a block a sequence; where the sequences are too few to fill the GPU, a block a slice
    of one into a list of candidates, then a block a sequence over its candidates. Launches from several
    streams take turns over the list as a split ARGMIN's do over its partial results."""

    def __init__(self, backend: CudaBackend, spec: KernelSpec, inputs: Sequence[TensorDesc | None],
                 values: TensorDesc, indices: TensorDesc) -> None:
        x = inputs[0]
        assert x is not None and spec.selection is not None
        # refuses a K or a length not lowered, by name
        self.plan = plan = top_k_c.plan_top_k(spec, x, values, indices, backend.sm_count)
        index_type, name = spec.selection.index_type, f"{spec.operator} K={spec.selection.k}"
        grid = backend.sm_count * 32
        if plan.slices > 1:
            self._stages = [
                (kernel(top_k_c.top_k_kernel(spec, plan, index_type, top_k_c.SLICES), title(spec, f"{name}, slices")),
                 (max(1, min(plan.sequences * plan.slices, grid)),)),
                (kernel(top_k_c.top_k_kernel(spec, plan, index_type, top_k_c.MERGE), title(spec, f"{name}, merge")),
                 (max(1, min(plan.sequences, grid)),))]
            self._candidates = cupy.empty(plan.candidates, dtype=cupy.uint32)
            self._list = np.uint64(self._candidates.data.ptr)
        else:
            self._stages = [(kernel(top_k_c.top_k_kernel(spec, plan, index_type), title(spec, name)),
                             (max(1, min(plan.sequences, grid)),))]
            self._list = np.uint64(0)
        self._turns = _Turns()

    def initialize(self) -> None:
        """Nothing to prepare."""

    def execute(self, inputs: Sequence[BoundTensor | None], outputs: Sequence[BoundTensor]) -> None:
        self.run([bound_address(b) for b in inputs if b is not None] + [bound_address(b) for b in outputs])

    def run(self, pointers: Sequence[int]) -> None:
        """Launch on device addresses: the InputTensor's first element, then the values' and the indices'."""
        args = (*(np.uint64(p) for p in pointers[:3]), self._list)
        self._turns.run([functools.partial(function, grid, (BLOCK,), args) for function, grid in self._stages])

    def prepare(self, inputs: Sequence[BoundTensor | None], outputs: Sequence[BoundTensor]) -> Callable[[], None]:
        """The launches over these bindings, their arguments packed once (a recorded dispatch, a CUDA graph's
        capture)."""
        pointers = [bound_address(b) for b in inputs if b is not None] + [bound_address(b) for b in outputs]
        args = (*(np.uint64(p) for p in pointers[:3]), self._list)
        return functools.partial(self._turns.run, [PackedLaunch(function, grid, (BLOCK,), args)
                                                   for function, grid in self._stages])

    def prepare_arrays(self, inputs: Sequence[Any], out: Any) -> Callable[..., None] | None:
        """No launch over arrays: TOP_K has two outputs, bound through ``execute``."""
        return None
