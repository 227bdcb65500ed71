"""CUDA buffers and kernels: plans made once at compile time, launches at execute time."""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import cupy
import numpy as np

from ...buffer import Buffer, check_buffer_dtype, host_array
from ...dtypes import ALL_TYPES, DataType
from ...errors import OutOfMemoryError, out_of_memory
from ...kernels.spec import KernelSpec
from ..base import check_extra_outputs
from ..layout import Layout, collapse
from . import argmin_c, codegen, elementwise_c, expr_c
from .compiler import kernel
from .launch import PackedLaunch, PointerLaunch, current_stream
from .plan import BLOCK, ArgMinPlan

_BLOCK = (BLOCK,)  # a launch's block shape

if TYPE_CHECKING:
    from ...binding import BoundTensor
    from ...device import Device
    from ...operator import Operator
    from ...tensor import TensorDesc


class CudaBuffer(Buffer):
    """Device memory: a 1-D uint8 CuPy array."""

    def __init__(self, device: Device, data: cupy.ndarray) -> None:
        super().__init__(device, int(data.size))
        self.data = data

    @property
    def address(self) -> int:
        return int(self.data.data.ptr)

    def to_numpy(self) -> np.ndarray:
        return cupy.asnumpy(self.data)


# CuPy's pool rounds a request up to its block size, which overflows a size_t just below 2**63.
_OUT_OF_MEMORY = (MemoryError, cupy.cuda.memory.OutOfMemoryError, OverflowError)


def _out_of_gpu_memory(size_in_bytes: int) -> OutOfMemoryError:
    """A failed GPU allocation as DirectML reports it, E_OUTOFMEMORY."""
    return out_of_memory("Device", "size_in_bytes", "must fit in the GPU memory free now (out of memory, "
                         "E_OUTOFMEMORY)", size_in_bytes)


def _on_gpu(x: Any) -> bool:
    try:
        return x.__dlpack_device__()[0] in (2, 3, 13)  # kDLCUDA, kDLCUDAHost, kDLCUDAManaged
    except Exception:
        return False


def _as_device_array(array: Any) -> cupy.ndarray:
    """A CuPy array over the same memory (CuPy, DLPack) or uploaded (NumPy and the rest)."""
    if isinstance(array, cupy.ndarray):
        return array
    if hasattr(array, "__dlpack__") and not isinstance(array, np.ndarray):
        try:
            return cupy.from_dlpack(array)
        except Exception:  # a host tensor: go through NumPy below
            pass
    host = np.asarray(array)
    # Uploaded as 1-D: CuPy makes a 0-d array by filling it, and fills a zero with a memset, which turns
    # -0.0 into +0.0; a copy of the bytes keeps every bit.
    return cupy.asarray(host.reshape(-1)).reshape(host.shape)


class CudaBackend:
    name = "cuda"
    xp = cupy

    def as_array(self, x: Any) -> cupy.ndarray:
        """``x`` as a CuPy array: GPU arrays keep their memory (DLPack), host data is uploaded."""
        return _as_device_array(x)

    def byte_range(self, array: cupy.ndarray, size: int) -> cupy.ndarray:
        """A 1-D uint8 array over ``size`` bytes starting at the array's first element."""
        return cupy.ndarray((size,), dtype=cupy.uint8, memptr=array.data)

    def to_caller(self, result: cupy.ndarray, like: Any) -> Any:
        """The result in the caller's kind: CuPy stays, PyTorch through DLPack, host data downloaded."""
        if isinstance(like, cupy.ndarray):
            return result
        if type(like).__module__.split(".")[0] == "torch" and _on_gpu(like):
            import torch

            return torch.from_dlpack(result)
        if hasattr(like, "__cuda_array_interface__") or _on_gpu(like):
            return result
        return cupy.asnumpy(result)

    def __init__(self) -> None:
        self.sm_count = int(cupy.cuda.Device().attributes["MultiProcessorCount"])

    def allocate(self, device: Device, size_in_bytes: int) -> Buffer:
        try:
            return CudaBuffer(device, cupy.zeros(size_in_bytes, dtype=cupy.uint8))
        except _OUT_OF_MEMORY:
            raise _out_of_gpu_memory(size_in_bytes) from None

    def upload(self, device: Device, array: Any) -> Buffer:
        if not isinstance(array, cupy.ndarray) and not _on_gpu(array):
            array = host_array(array)  # checked, bytes read and laid out as on the cpu backend
        data = _as_device_array(array)
        check_buffer_dtype(data.dtype, array)
        try:
            data = cupy.ascontiguousarray(data)
            if data.dtype.byteorder == ">":
                data = data.astype(data.dtype.newbyteorder("<"))
            return CudaBuffer(device, data.reshape(-1).view(cupy.uint8).copy())
        except _OUT_OF_MEMORY:
            raise _out_of_gpu_memory(data.nbytes) from None

    def wrap(self, device: Device, raw: Any) -> Buffer:
        return CudaBuffer(device, raw)

    def compile(self, operator: Operator) -> Any:
        """The kernel of the operator's KernelSpec: chosen by its structure, never by the operator's name."""
        return self.compile_spec(operator.device, operator.kernel_spec, *operator.kernel_tensors)

    def compile_spec(self, device: Device, spec: KernelSpec, inputs: Sequence[TensorDesc | None],
                     output: TensorDesc, extra_outputs: Sequence[TensorDesc] = ()) -> Any:
        """The kernel of ``spec`` (an operator's, or a fused graph kernel's) over these descriptions; each of
        ``spec.extra`` written to its description in ``extra_outputs``, through its own strides."""
        if spec.reduction is None:
            check_extra_outputs(spec, output.sizes, extra_outputs)
            return ElementwiseKernel(self, spec, inputs, output, extra_outputs)
        if spec.reduction.kind in argmin_c.INDEX_REDUCTIONS:
            x = inputs[0]
            assert x is not None  # InputTensor is required
            check_extra_outputs(spec, x.sizes, extra_outputs)
            return ArgMinKernel(self, spec, inputs, output, extra_outputs)
        raise expr_c.unsupported(spec.operator, "kernel", "must be element-wise or an ARGMIN or ARGMAX "
                                 "reduction on backend 'cuda'", f"a {spec.reduction.kind.name} reduction")

    def reduction_prologues(self) -> bool:
        return True  # ARGMIN's and ARGMAX's value() takes an element of each operand of a fused chain

    def fused_outputs(self) -> bool:
        return True  # apply() and value() compute spec.extra beside the output, stored where it is computed

    def supports_data_type(self, data_type: DataType) -> bool:
        return data_type in ALL_TYPES

    def synchronize(self) -> None:
        cupy.cuda.get_current_stream().synchronize()

    def queue_executor(self, cuda_graphs: bool | None) -> Any:
        """How a command queue runs command lists: on a stream of its own, captured into CUDA graphs."""
        from .graphs import CudaQueueExecutor

        return CudaQueueExecutor(cuda_graphs)

    def prepare_copy(self, destination: Buffer, offset: int, source: Buffer, size: int) -> Callable[[], None]:
        """A copy of ``source``'s first ``size`` bytes to ``offset`` in ``destination``, on the stream current
        when it is called (an asynchronous device-to-device copy, which a CUDA graph captures)."""
        runtime = cupy.cuda.runtime
        target, origin = destination.address + offset, source.address

        def copy() -> None:
            runtime.memcpyAsync(target, origin, size, runtime.memcpyDeviceToDevice,
                                current_stream().ptr)

        return copy

    def grid(self, work_items: int, per_block: int = BLOCK) -> int:
        """Blocks for a grid-stride loop: enough to fill the GPU, no more than the work needs."""
        return max(1, min(math.ceil(work_items / per_block), self.sm_count * 32))


def _pointer(bound: BoundTensor) -> int:
    return bound.buffer.address + bound.offset


def _title(spec: KernelSpec, template: str) -> str:
    """How a printed kernel source is headed: the operator, its operand and output types, the template."""
    inputs = ", ".join("absent" if t is None else t.name for t in spec.inputs)
    return f"{spec.operator} ({inputs}) -> {spec.output.name}, {template}"


class ElementwiseKernel:
    """An element-wise KernelSpec: one generated kernel per layout, its scalars passed at launch."""

    def __init__(self, backend: CudaBackend, spec: KernelSpec, inputs: Sequence[TensorDesc | None],
                 output: TensorDesc, extra_outputs: Sequence[TensorDesc] = ()) -> None:
        self.backend, self.spec = backend, spec
        described = [desc for desc in [*inputs, output, *extra_outputs] if desc is not None]
        self.sizes = [desc.data_type.size for desc in described]
        self.layout: Layout = collapse(output.sizes, [desc.effective_strides for desc in described])
        self.count = output.element_count
        self.scalars = expr_c.launch_scalars(spec.element, spec.scalars, spec.extra)
        self.width = elementwise_c.vector_width(spec, self.layout)
        self._vector: Any = None
        self._general: Any = None
        # The 16-byte chunk kernel's launch, fixed by the layout: its grid, and (position among the pointers,
        # bytes) for each contiguous operand whose address must be a multiple of a chunk's bytes.
        self._vector_grid = (1,)
        self._aligned_to: list[tuple[int, int]] = []
        if self.width is not None:
            self._vector = kernel(elementwise_c.elementwise_vector(spec, self.layout, self.width),
                                  _title(spec, "element-wise, 16-byte chunks"))
            tiles = math.ceil(self.count // self.width / (BLOCK * elementwise_c.chunk_unroll(spec)))
            self._vector_grid = (max(1, min(tiles, 1 << 20)),)
            self._aligned_to = [(k, self.width * size) for k, (size, st) in
                                enumerate(zip(self.sizes, self.layout.strides)) if st[-1] == 1]
        else:
            self._general_kernel()

    def _general_kernel(self) -> Any:
        if self._general is None:
            self._general = kernel(elementwise_c.elementwise_general(self.spec, self.layout),
                                   _title(self.spec, "element-wise, any strides"))
        return self._general

    def initialize(self) -> None:
        """Nothing to prepare: the kernels were compiled with the operator."""

    def execute(self, inputs: Sequence[BoundTensor | None], outputs: Sequence[BoundTensor]) -> None:
        self.run([_pointer(b) for b in inputs if b is not None] + [_pointer(b) for b in outputs])

    def prepare(self, inputs: Sequence[BoundTensor | None], outputs: Sequence[BoundTensor]) -> Callable[[], None]:
        """The launch over these bindings, its kernel, grid and arguments fixed once: a recorded dispatch
        (launched on the stream current when it is called, as ``run``)."""
        function, grid, args = self._launch([_pointer(b) for b in inputs if b is not None]
                                            + [_pointer(b) for b in outputs])
        return PackedLaunch(function, grid, _BLOCK, args)

    def prepare_arrays(self, inputs: Sequence[Any], out: Any) -> Callable[..., None] | None:
        """A launch over CuPy arrays laid out as these (the same dtypes, shapes and strides): a call taking
        ``(*inputs, out)`` that reads their addresses and launches on the current stream, the kernels, grids
        and scalars fixed once (what a repeated functional call runs; it holds no array). None where an
        input is absent or the kernel writes extra outputs."""
        if self.spec.extra or any(a is None for a in inputs):
            return None
        count = len(inputs) + 1
        vector = None if self._vector is None else PointerLaunch(self._vector, self._vector_grid, _BLOCK, count,
                                                                 self.scalars)
        aligned_to = self._aligned_to
        general: list[PointerLaunch] = []  # the kernel of any strides' launch, made when first needed

        def run(*arrays: Any) -> None:
            pointers = [a.data.ptr for a in arrays]
            if vector is not None and all(pointers[k] % size == 0 for k, size in aligned_to):
                vector(*pointers)
                return
            if not general:
                general.append(PointerLaunch(self._general_kernel(), (self.backend.grid(self.count),), _BLOCK,
                                             count, self.scalars))
            general[0](*pointers)

        return run

    def run(self, pointers: Sequence[int]) -> None:
        """Launch on device addresses: each present input's first element, then the output's, then each
        extra output's."""
        function, grid, args = self._launch(pointers)
        function(grid, _BLOCK, args)

    def _launch(self, pointers: Sequence[int]) -> tuple[Any, tuple[int], tuple[Any, ...]]:
        """The kernel, grid and arguments of a launch on these addresses: 16-byte chunks where every
        contiguous operand's address allows them, else the kernel of any strides."""
        args = tuple([np.uint64(p) for p in pointers]) + self.scalars
        if self._vector is not None and all(pointers[k] % size == 0 for k, size in self._aligned_to):
            return self._vector, self._vector_grid, args
        return self._general_kernel(), (self.backend.grid(self.count),), args


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
        self.plan = argmin_c.plan(spec, x, self.kept, self.reduced, backend.sm_count)
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
        return kernel(source, _title(self.spec, f"{kind}, {plan.family}, {plan.vector} per load"))

    def _combines(self, plan: ArgMinPlan) -> bool:
        """Whether ``plan``'s partial results are merged by a combine pass (not by its scan)."""
        return plan.splits > 1 and not argmin_c.one_pass(self.spec, plan)

    def _combine_kernel(self) -> Any:
        if self._combine is None:
            kind = self.spec.reduction.kind.value  # type: ignore[union-attr]
            self._combine = kernel(argmin_c.argmin_combine_kernel(self.spec, self.plan, self.direction, self.kept),
                                   _title(self.spec, f"{kind}, combine pass"))
        return self._combine

    def initialize(self) -> None:
        """Nothing to prepare: partial results live in the memory pool for one execution."""

    def execute(self, inputs: Sequence[BoundTensor | None], outputs: Sequence[BoundTensor]) -> None:
        self.run([_pointer(b) for b in inputs if b is not None] + [_pointer(b) for b in outputs])

    def prepare(self, inputs: Sequence[BoundTensor | None], outputs: Sequence[BoundTensor]) -> Callable[[], None]:
        """The launches over these bindings, fixed once: a split reduction's partial results (and counters)
        get buffers of their own here, held by the returned call, so that replaying it (a CUDA graph captured
        from it included) allocates nothing. Its calls on several streams take turns on the GPU
        (``_SplitLaunch``)."""
        launch = self._launch([_pointer(b) for b in inputs if b is not None] + [_pointer(b) for b in outputs])
        if launch.plan.splits == 1:
            return PackedLaunch(launch.scan, launch.grid, (launch.plan.block,), launch.args(0, 0))
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
        if launch.plan.splits == 1:
            launch.scan(launch.grid, block, launch.args(0, 0))
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
        return self.addresses + self.pout + tuple(np.uint64(p) for p in partials) + self.scalars


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
        self._split = kernel.plan.splits > 1

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
        if launch.plan.splits > 1:
            if self._scratch is None:
                self._scratch = kernel._scratch(launch.plan)
            partials = kernel._partials(launch.plan, self._scratch)
            if kernel._combines(launch.plan):
                before = (np.uint64(self._scratch.values.data.ptr), np.uint64(self._scratch.indices.data.ptr))
                combine = PointerLaunch(kernel._combine_kernel(), kernel._combine_grid(launch.plan), _BLOCK, 1, (),
                                        before)
        fixed = tuple(np.uint64(p) for p in partials) + kernel.scalars
        return PointerLaunch(launch.scan, launch.grid, (launch.plan.block,), self._count + 1, fixed), combine
