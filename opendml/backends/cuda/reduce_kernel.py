"""REDUCE's value functions on CUDA: the scan and finish kernels of one reduction, its words of scratch, and
its launches (``reduce_plan`` plans them, ``reduce_c`` and ``reduce_finish_c`` render the sources; ``reduce_c`` says why
the result is the same bits whatever the launch)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import cupy
import numpy as np

from ...kernels.spec import KernelSpec
from . import reduce_c, reduce_finish_c, reduce_plan
from .argmin_kernel import _Turns
from .compiler import kernel, title
from .launch import PackedLaunch, bound_address
from .plan import BLOCK

if TYPE_CHECKING:
    from ...binding import BoundTensor
    from ...tensor import TensorDesc
    from .backend import CudaBackend


class ReduceKernel:
    """A REDUCE value reduction: a scan adding every piece of each output into the output's words by commuting
    atomic operations, then a finish pass that writes each output from its words and zeroes them. The words
    are allocated zero once and left at zero by every launch; launches from several streams take turns over
    them as a split ARGMIN's do over its partial results (``argmin_kernel._Turns``)."""

    def __init__(self, backend: CudaBackend, spec: KernelSpec, inputs: Sequence[TensorDesc | None],
                 output: TensorDesc) -> None:
        self.how = reduce_plan.mode(spec)  # refuses a function or type not lowered, by name
        x = inputs[0]
        assert x is not None and spec.accumulation is not None
        self.backend, self.spec = backend, spec
        self.kept, self.reduced = reduce_plan.layouts(spec, x, output)
        self.plan = reduce_plan.plan_for(spec, x, self.kept, self.reduced, backend.sm_count)
        reduce_plan.check_plan(spec.operator, self.plan, self.how)
        function = spec.accumulation.function
        self._scan = kernel(reduce_c.scan_kernel(spec, self.plan, self.kept, self.reduced),
                            title(spec, f"REDUCE {function}, {self.plan.family} scan"))
        self._finish = kernel(reduce_finish_c.finish_kernel(spec, self.plan, self.kept, output.data_type),
                              title(spec, f"REDUCE {function}, finish"))
        self._words = cupy.zeros(reduce_plan.scratch_words(self.plan, self.how), dtype=cupy.uint64)
        cupy.cuda.get_current_stream().synchronize()  # zeroed before a launch on any stream reads them
        self._grid = (reduce_plan.grid(self.plan, backend.sm_count),)
        self._finish_grid = (reduce_plan.finish_grid(self.plan, backend.sm_count),)
        self._turns = _Turns()

    def initialize(self) -> None:
        """Nothing to prepare: the words were zeroed when the kernel was compiled."""

    def execute(self, inputs: Sequence[BoundTensor | None], outputs: Sequence[BoundTensor]) -> None:
        self.run([bound_address(b) for b in inputs if b is not None] + [bound_address(b) for b in outputs])

    def run(self, pointers: Sequence[int]) -> None:
        """Launch on device addresses: the InputTensor's first element, then the OutputTensor's."""
        source, target = pointers[0], pointers[1]
        words = np.uint64(self._words.data.ptr)
        self._turns.run([lambda: self._scan(self._grid, (BLOCK,), (np.uint64(source), words)),
                         lambda: self._finish(self._finish_grid, (BLOCK,), (words, np.uint64(target)))])

    def prepare(self, inputs: Sequence[BoundTensor | None], outputs: Sequence[BoundTensor]) -> Callable[[], None]:
        """The two launches over these bindings, their arguments packed once (a recorded dispatch, a CUDA
        graph's capture)."""
        source = bound_address(next(b for b in inputs if b is not None))
        words, target = np.uint64(self._words.data.ptr), np.uint64(bound_address(outputs[0]))
        launches = [PackedLaunch(self._scan, self._grid, (BLOCK,), (np.uint64(source), words)),
                    PackedLaunch(self._finish, self._finish_grid, (BLOCK,), (words, target))]
        return functools.partial(self._turns.run, launches)

    def prepare_arrays(self, inputs: Sequence[Any], out: Any) -> Callable[..., None] | None:
        """A launch over CuPy arrays laid out as these: a call taking ``(x, out)``."""
        if len(inputs) != 1 or inputs[0] is None:
            return None

        def launch(x: Any, result: Any) -> None:
            self.run([x.data.ptr, result.data.ptr])

        return launch
