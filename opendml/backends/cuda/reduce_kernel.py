"""REDUCE's value functions on CUDA: the scan and finish kernels of one reduction, its words of scratch, and
its launches (``reduce_plan`` plans them, ``reduce_stages`` lists them, ``reduce_c`` and ``reduce_finish_c`` render the
sources; ``reduce_c`` says why the result is the same bits whatever the launch)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import cupy
import numpy as np

from ...kernels.spec import KernelSpec
from . import reduce_plan, reduce_stages
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
    atomic operations, then a finish pass that writes each output from its words and zeroes them (LOG_SUM_EXP: a
    scan of the largest elements first; ``reduce_stages``). The words
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
        self._stages = [(kernel(stage.source, title(spec, f"REDUCE {function}, {stage.what}")), stage)
                        for stage in reduce_stages.stages(spec, self.plan, self.kept, self.reduced, output.data_type,
                                                          backend.sm_count)]
        self._scratch = {name: cupy.zeros(words, dtype=cupy.uint64)
                         for name, words in reduce_stages.scratch(self.plan, self.how).items()}
        cupy.cuda.get_current_stream().synchronize()  # zeroed before a launch on any stream reads them
        self._scratch_addresses = {name: a.data.ptr for name, a in self._scratch.items()}  # fixed for its life
        self._turns = _Turns()

    def initialize(self) -> None:
        """Nothing to prepare: the words were zeroed when the kernel was compiled."""

    def execute(self, inputs: Sequence[BoundTensor | None], outputs: Sequence[BoundTensor]) -> None:
        self.run([bound_address(b) for b in inputs if b is not None] + [bound_address(b) for b in outputs])

    def _arguments(self, source: int, target: int) -> list[tuple[Any, tuple[int], tuple[np.uint64, ...]]]:
        """Each stage's kernel, grid and arguments over these device addresses."""
        addresses = {"x": source, "out": target, **self._scratch_addresses}
        return [(compiled, (stage.grid,), tuple(np.uint64(addresses[name]) for name in stage.args))
                for compiled, stage in self._stages]

    def run(self, pointers: Sequence[int]) -> None:
        """Launch on device addresses: the InputTensor's first element, then the OutputTensor's."""
        launches = self._arguments(pointers[0], pointers[1])
        self._turns.run([functools.partial(compiled, grid, (BLOCK,), args) for compiled, grid, args in launches])

    def prepare(self, inputs: Sequence[BoundTensor | None], outputs: Sequence[BoundTensor]) -> Callable[[], None]:
        """The launches over these bindings, their arguments packed once (a recorded dispatch, a CUDA graph's
        capture)."""
        source = bound_address(next(b for b in inputs if b is not None))
        launches = [PackedLaunch(compiled, grid, (BLOCK,), args)
                    for compiled, grid, args in self._arguments(source, bound_address(outputs[0]))]
        return functools.partial(self._turns.run, launches)

    def prepare_arrays(self, inputs: Sequence[Any], out: Any) -> Callable[..., None] | None:
        """A launch over CuPy arrays laid out as these: a call taking ``(x, out)``."""
        if len(inputs) != 1 or inputs[0] is None:
            return None

        def launch(x: Any, result: Any) -> None:
            self.run([x.data.ptr, result.data.ptr])

        return launch
