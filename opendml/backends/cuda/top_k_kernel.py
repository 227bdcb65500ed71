"""TOP_K and TOP_K1 on CUDA: the selection's launch (``top_k_c`` plans it and renders its source)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ...kernels.spec import KernelSpec
from . import top_k_c
from .compiler import kernel, title
from .launch import PackedLaunch, bound_address
from .plan import BLOCK

if TYPE_CHECKING:
    from ...binding import BoundTensor
    from ...tensor import TensorDesc
    from .backend import CudaBackend


class TopKKernel:
    """A TOP_K selection: a block a sequence, no scratch outside its block's shared memory (so launches on any
    streams need no turns)."""

    def __init__(self, backend: CudaBackend, spec: KernelSpec, inputs: Sequence[TensorDesc | None],
                 values: TensorDesc, indices: TensorDesc) -> None:
        x = inputs[0]
        assert x is not None and spec.selection is not None
        self.plan = top_k_c.plan_top_k(spec, x, values, indices)  # refuses a K or a length not lowered, by name
        self._kernel = kernel(top_k_c.top_k_kernel(spec, self.plan, spec.selection.index_type),
                              title(spec, f"{spec.operator} K={spec.selection.k}"))
        self._grid = (max(1, min(self.plan.sequences, backend.sm_count * 32)),)

    def initialize(self) -> None:
        """Nothing to prepare."""

    def execute(self, inputs: Sequence[BoundTensor | None], outputs: Sequence[BoundTensor]) -> None:
        self.run([bound_address(b) for b in inputs if b is not None] + [bound_address(b) for b in outputs])

    def run(self, pointers: Sequence[int]) -> None:
        """Launch on device addresses: the InputTensor's first element, then the values' and the indices'."""
        self._kernel(self._grid, (BLOCK,), tuple(np.uint64(p) for p in pointers[:3]))

    def prepare(self, inputs: Sequence[BoundTensor | None], outputs: Sequence[BoundTensor]) -> Callable[[], None]:
        """The launch over these bindings, its arguments packed once (a recorded dispatch, a CUDA graph's
        capture)."""
        pointers = [bound_address(b) for b in inputs if b is not None] + [bound_address(b) for b in outputs]
        return PackedLaunch(self._kernel, self._grid, (BLOCK,), tuple(np.uint64(p) for p in pointers[:3]))

    def prepare_arrays(self, inputs: Sequence[Any], out: Any) -> Callable[..., None] | None:
        """No launch over arrays: TOP_K has two outputs, bound through ``execute``."""
        return None
