"""ARGMIN and ARGMAX on CUDA: the kernel of a reduction (its plan, compiled templates and launches), the
partial results and counters of split reductions, and the prepared launches over device addresses that
functional calls run (``AddressLaunch``)."""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import cupy
import numpy as np

from ...kernels.spec import KernelSpec
from . import argmin_c, codegen, expr_c
from .compiler import kernel, title
from .launch import PackedLaunch, PointerLaunch, bound_address, current_stream
from .plan import BLOCK, ArgMinPlan

if TYPE_CHECKING:
    from ...binding import BoundTensor
    from ...tensor import TensorDesc
    from .backend import CudaBackend

_BLOCK = (BLOCK,)  # a launch's block shape


class ArgMinKernel:
    """An ARGMIN or ARGMAX reduction, under either NanPolicy, whose strategy follows the layout (see
    ``plan.plan_argmin``); the values compared come from the KernelSpec's element expression, over the
    InputTensor and any other operand of a fused prologue (each through its own strides). The kind and the
    policy reach the generated code only as its comparison (``argmin_c.Order``): every plan serves all four.

    A plan that splits its reductions writes partial results: split rows are merged by the scan itself (its
    last piece of each output: ``argmin_c.one_pass``), counting pieces on counters that it leaves at zero;
    the other split plans by a combine pass."""

    def __init__(self, backend: CudaBackend, spec: KernelSpec, inputs: Sequence[TensorDesc | None],
                 output: TensorDesc, extra_outputs: Sequence[TensorDesc] = ()) -> None:
        reduction = spec.reduction
        assert reduction is not None
        x = inputs[0]
        assert x is not None  # InputTensor is required
        self.backend, self.spec, self.direction = backend, spec, reduction.direction
        self.kept, self.reduced = argmin_c.layouts(spec, inputs, output, extra_outputs)
        self.plan = argmin_c.plan(spec, x, self.kept, self.reduced, backend.sm_count, backend.cluster_blocks)
        self.alignments = argmin_c.alignments(spec, self.plan, self.kept, self.reduced)
        self.scalars = expr_c.launch_scalars(spec.element, spec.scalars, spec.extra)
        self._kernels = {self.plan.vector: self._kernel_for(self.plan)}
        self._combine = None
        if self._combines(self.plan):
            self._combine_kernel()
        value_type = expr_c.value_type(spec.operator, spec.element)
        self.compute_dtype = codegen.COMPUTE_NUMPY[expr_c.held_type(value_type)]

    def _kernel_for(self, plan: ArgMinPlan) -> Any:
        source = argmin_c.argmin_kernel(self.spec, plan, self.direction, self.kept, self.reduced)
        kind = self.spec.reduction.kind.value  # type: ignore[union-attr]
        return kernel(source, title(self.spec, f"{kind}, {plan.family}, {plan.vector} per load"))

    def _combines(self, plan: ArgMinPlan) -> bool:
        """Whether ``plan``'s partial results are merged by a combine pass (not by its scan)."""
        return plan.partial and not argmin_c.one_pass(self.spec, plan)

    def _combine_kernel(self) -> Any:
        if self._combine is None:
            kind = self.spec.reduction.kind.value  # type: ignore[union-attr]
            self._combine = kernel(argmin_c.argmin_combine_kernel(self.spec, self.plan, self.direction, self.kept),
                                   title(self.spec, f"{kind}, combine pass"))
        return self._combine

    def initialize(self) -> None:
        """Nothing to prepare: partial results live in the memory pool for one execution."""

    def execute(self, inputs: Sequence[BoundTensor | None], outputs: Sequence[BoundTensor]) -> None:
        self.run([bound_address(b) for b in inputs if b is not None] + [bound_address(b) for b in outputs])

    def prepare(self, inputs: Sequence[BoundTensor | None], outputs: Sequence[BoundTensor]) -> Callable[[], None]:
        """The launches over these bindings, fixed once: a split reduction's partial results (and counters)
        get buffers of their own here, held by the returned call, so that replaying it (a CUDA graph captured
        from it included) allocates nothing. Its calls on several streams take turns on the GPU
        (``_SplitLaunch``)."""
        launch = self._launch([bound_address(b) for b in inputs if b is not None] + [bound_address(b) for b in outputs])
        if not launch.plan.partial:
            return PackedLaunch(launch.scan, launch.grid, (launch.plan.block,), launch.args())
        scratch = self._scratch(launch.plan)
        combine = self._combine_launch(launch, scratch, PackedLaunch) if self._combines(launch.plan) else None
        return _SplitLaunch(launch, combine, scratch, self._partials(launch.plan, scratch))

    def prepare_arrays(self, inputs: Sequence[Any], out: Any) -> Callable[..., None] | None:
        """A launch over CuPy arrays laid out as these (the same dtypes, shapes and strides): a call taking
        ``(*inputs, out)`` that reads their addresses and launches on the current stream (what a repeated
        functional call runs; it holds no array). None where an input is absent or the kernel writes extra
        outputs."""
        call = self.prepare_addresses(len(inputs))
        if call is None:
            return None

        def run(*arrays: Any) -> None:
            stream = current_stream()
            call.on(stream.ptr, [a.data.ptr for a in arrays], stream)

        return run

    def prepare_addresses(self, count: int) -> AddressLaunch | None:
        """The launches over any arrays laid out as the kernel's descriptions, given as the device addresses
        of ``count`` operands (the InputTensor's first) and of the output, on a stream given at each call
        (``AddressLaunch``); None where the kernel writes extra outputs or takes another number of operands."""
        if self.spec.extra or count != sum(t is not None for t in self.spec.inputs):
            return None
        return AddressLaunch(self, count)

    def run(self, pointers: Sequence[int]) -> None:
        """Launch on device addresses: each present operand's first element (the InputTensor's first), then
        the OutputTensor's, then each extra output's."""
        launch = self._launch(pointers)
        block = (launch.plan.block,)
        if not launch.plan.partial:
            launch.scan(launch.grid, block, launch.args())
            return
        scratch = self._scratch(launch.plan, pooled=True)
        launch.scan(launch.grid, block, launch.args(*self._partials(launch.plan, scratch)))
        if self._combines(launch.plan):
            self._combine_launch(launch, scratch)()

    def _launch(self, pointers: Sequence[int]) -> _ScanLaunch:
        count = len(pointers) - 1 - len(self.spec.extra)
        operands, out_address, extra_addresses = pointers[:count], pointers[count], pointers[count + 1:]
        plan = self._plan_for([*operands, *extra_addresses])
        addresses = tuple(np.uint64(p) for p in operands)
        pout = (np.uint64(out_address), *(np.uint64(p) for p in extra_addresses))
        return _ScanLaunch(self._kernels[plan.vector], plan, (self._grid(plan),), addresses, pout, self.scalars)

    def _plan_for(self, addresses: Sequence[int]) -> ArgMinPlan:
        """The plan a launch on these addresses (the operands', then the extra outputs') runs: the element by
        element plan where an address fits no 16-byte load (or an operand's words)."""
        plan = self.plan
        if any(addresses[k] % alignment for k, alignment in self.alignments):
            plan = plan.scalar()
            if 1 not in self._kernels:
                self._kernels[1] = self._kernel_for(plan)
        if self._combines(plan):
            self._combine_kernel()
        return plan

    def _grid(self, plan: ArgMinPlan) -> int:
        items = plan.items
        if plan.cluster:
            return items  # a block for each piece of each row: a cluster's blocks each take one
        if plan.family == "columns":
            return self.backend.grid(items)
        if plan.group == 32:
            return self.backend.grid(items * 32)
        return max(1, min(items, self.backend.sm_count * 32))

    def _scratch(self, plan: ArgMinPlan, pooled: bool = False) -> _Scratch:
        """Buffers for a split reduction's partial results (values and indices, one per output and piece) and
        counters (one per output, zero) for a scan that merges them. ``pooled``: for one launch of ``plan``
        (counters only where it takes them, zeroed on the current stream before it); else held by a prepared
        call, whichever plan it launches (zeroed now, then left at zero by each launch)."""
        # Held: room for either plan's partial results (a warp's each where the scan merges them).
        size = plan.outputs * (argmin_c.partials_per_output(self.spec, plan) if pooled else
                               plan.splits * max(1, plan.group // 32))
        counters = None
        if not pooled or argmin_c.one_pass(self.spec, plan):
            counters = cupy.zeros(plan.outputs, dtype=cupy.uint32)
            if not pooled:
                cupy.cuda.get_current_stream().synchronize()  # zeroed before a launch on any stream reads them
        return _Scratch(cupy.empty(size, dtype=self.compute_dtype), cupy.empty(size, dtype=cupy.uint64), counters)

    def _partials(self, plan: ArgMinPlan, scratch: _Scratch) -> tuple[int, ...]:
        """The scan's arguments of ``scratch``: the partial results' addresses, then the counters' where the
        scan merges its pieces."""
        found = (scratch.values.data.ptr, scratch.indices.data.ptr)
        if argmin_c.one_pass(self.spec, plan):
            assert scratch.counters is not None  # made with them (``_scratch``)
            return (*found, scratch.counters.data.ptr)
        return found

    def _combine_launch(self, launch: _ScanLaunch, scratch: _Scratch,
                        call: Callable[..., Callable[[], None]] = functools.partial) -> Callable[[], None]:
        """The combine pass over these partial results, as ``call(kernel, grid, block, args)`` makes it (a
        prepared call packs its arguments: ``PackedLaunch``)."""
        return call(self._combine_kernel(), self._combine_grid(launch.plan), _BLOCK,
                    (np.uint64(scratch.values.data.ptr), np.uint64(scratch.indices.data.ptr), launch.pout[0]))

    def _combine_grid(self, plan: ArgMinPlan) -> tuple[int]:
        per_block = BLOCK // plan.combine_group  # outputs one block merges at a time
        return (max(1, min(math.ceil(plan.outputs / per_block), self.backend.sm_count * 32)),)


class _Scratch(NamedTuple):
    """A split reduction's partial results (values, indices) and counters (None where no scan merges)."""

    values: cupy.ndarray
    indices: cupy.ndarray
    counters: cupy.ndarray | None


class _ScanLaunch(NamedTuple):
    """An ARGMIN's scan over fixed addresses: its kernel, plan, grid and arguments but the partial results'
    (a tuple: made on every ``execute``)."""

    scan: Any
    plan: ArgMinPlan
    grid: tuple[int]
    addresses: tuple[Any, ...]
    pout: tuple[Any, ...]
    scalars: tuple[Any, ...]

    def args(self, *partials: int) -> tuple[Any, ...]:
        """The arguments with these partial-result addresses (values, indices, and counters where taken)."""
        return self.addresses + self.pout + self.after(*partials)

    def after(self, *partials: int) -> tuple[Any, ...]:
        """The arguments after the output's address: the partial results' (0, 0 where none are given: every scan
        takes them, and reads them where it splits), then the scalars."""
        return tuple(np.uint64(p) for p in partials or (0, 0)) + self.scalars


class _Turns:
    """Calls sharing buffers (a split reduction's partial results and counters) from several streams take
    turns: a call on another stream than the call before it first makes its stream wait for all the work
    queued so far on that one (an event), and the host's calls hold ``lock``. Calls on one stream are ordered
    by it, and cost nothing more. A stream being captured into a CUDA graph waits on nothing outside the
    capture (CUDA refuses it), nor does work outside a capture wait on one: a captured graph replayed beside
    other calls is ordered by its replaying stream, as a command queue's are."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._stream: int | None = None  # where the call before ran (a stream's handle)
        self._owner: object = None  # what keeps that stream alive: its handle is used at the next call
        self._event: Any = None

    def run(self, launches: Sequence[Callable[[], None]]) -> None:
        """``launches`` in order on the current stream, after the calls before them (a call's turn)."""
        stream = current_stream()
        with self.lock:
            self.enter(stream.ptr, stream)
            for launch in launches:
                launch()

    def enter(self, stream: int, owner: object) -> None:
        """Order a call on ``stream`` after the calls before it (with ``lock`` held). ``owner`` is the object
        whose life the stream's (a CuPy stream; None for one that is never destroyed, as PyTorch's are): it
        is held until a call on another stream, since a destroyed stream's handle must not be used (asking
        whether it is capturing crashed the process)."""
        last = self._stream
        if last == stream:
            self._owner = owner
            return
        if last is not None and not _capturing(stream) and not _capturing(last):
            runtime = cupy.cuda.runtime
            if self._event is None:
                self._event = runtime.eventCreateWithFlags(runtime.eventDisableTiming)
            runtime.eventRecord(self._event, last)
            runtime.streamWaitEvent(stream, self._event, 0)
        self._stream, self._owner = stream, owner

    def __del__(self) -> None:
        if self._event is not None:
            # No module-level name but cupy's: at the process's end they may be gone (None) already.
            try:  # noqa: SIM105
                cupy.cuda.runtime.eventDestroy(self._event)
            except Exception:  # the process is ending, and CUDA with it
                pass


def _capturing(stream: int) -> bool:
    return bool(cupy.cuda.runtime.streamIsCapturing(stream))


class _SplitLaunch:
    """A split reduction's prepared launches, the scan then (where the scan does not merge its pieces) the
    combine pass, over partial-result buffers and counters it holds (allocated once, when prepared); its calls
    on several streams take turns (``_Turns``)."""

    def __init__(self, launch: _ScanLaunch, combine: Callable[[], None] | None, scratch: _Scratch,
                 partials: tuple[int, ...]) -> None:
        self._scan = PackedLaunch(launch.scan, launch.grid, (launch.plan.block,), launch.args(*partials))
        self._combine = combine
        self._scratch = scratch  # held: the launches' arguments point into it
        self._turns = _Turns()

    def __call__(self) -> None:
        stream = current_stream()
        with self._turns.lock:
            self._turns.enter(stream.ptr, stream)
            self._scan()
            if self._combine is not None:
                self._combine()


class AddressLaunch:
    """An ARGMIN kernel's launches over arrays given by their device addresses (``count`` operands, then the
    output) on a stream given at each call: what a functional call on arrays laid out as the kernel's
    descriptions runs, CuPy's and PyTorch's alike. Each plan's launches have their arguments packed once
    (``PointerLaunch``): the 16-byte-load plan's where the addresses allow it, else the element by element
    plan's; a split reduction's partial results and counters are held here, its calls taking turns
    (``_Turns``)."""

    def __init__(self, kernel: ArgMinKernel, count: int) -> None:
        self._kernel, self._count = kernel, count
        self._alignments = kernel.alignments
        self._vector = kernel.plan.vector
        self._launches: dict[int, tuple[PointerLaunch, PointerLaunch | None]] = {}
        self._scratch: _Scratch | None = None
        self._turns = _Turns()
        self._split = kernel.plan.partial

    def on(self, stream: int, addresses: Sequence[int], owner: object = None) -> None:
        """Launch on ``stream`` (a handle) over the operands' and the output's ``addresses``; ``owner`` keeps
        the stream alive (``_Turns.enter``)."""
        vector = self._vector
        for k, alignment in self._alignments:
            if addresses[k] % alignment:
                vector = 1
                break
        found = self._launches.get(vector)
        if found is None:
            found = self._launches[vector] = self._made(addresses)
        scan, combine = found
        if not self._split:
            scan.on(stream, addresses)
            return
        with self._turns.lock:
            self._turns.enter(stream, owner)
            scan.on(stream, addresses)
            if combine is not None:
                combine.on(stream, addresses[self._count:])

    def _made(self, addresses: Sequence[int]) -> tuple[PointerLaunch, PointerLaunch | None]:
        """The launches of the plan these addresses take: its scan, and its combine pass where it has one."""
        kernel = self._kernel
        launch = kernel._launch(list(addresses))
        partials: tuple[int, ...] = ()
        combine = None
        if launch.plan.partial:
            if self._scratch is None:
                self._scratch = kernel._scratch(launch.plan)
            partials = kernel._partials(launch.plan, self._scratch)
            if kernel._combines(launch.plan):
                before = (np.uint64(self._scratch.values.data.ptr), np.uint64(self._scratch.indices.data.ptr))
                combine = PointerLaunch(kernel._combine_kernel(), kernel._combine_grid(launch.plan), _BLOCK, 1, (),
                                        before)
        fixed = launch.after(*partials)
        return PointerLaunch(launch.scan, launch.grid, (launch.plan.block,), self._count + 1, fixed), combine
