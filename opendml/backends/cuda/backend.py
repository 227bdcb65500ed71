"""CUDA buffers and kernels: plans made once at compile time, launches at execute time."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import cupy
import numpy as np

from ...buffer import Buffer, check_buffer_dtype, host_array
from ...dtypes import ALL_TYPES, DataType
from ...errors import OutOfMemoryError, out_of_memory
from ...kernels.spec import KernelSpec
from ..base import check_extra_outputs
from ..layout import Layout, collapse
from . import argmin_c, elementwise_c, expr_c
from .argmin_kernel import ArgMinKernel
from .compiler import kernel, title
from .launch import PackedLaunch, PointerLaunch, bound_address, current_stream
from .plan import BLOCK
from .reduce_kernel import ReduceKernel
from .top_k_kernel import TopKKernel

_BLOCK = (BLOCK,)  # a launch's block shape

if TYPE_CHECKING:
    from ...binding import BoundTensor
    from ...device import Device
    from ...operator import Operator
    from ...tensor import TensorDesc

# Greedy decoding's few long rows as thread-block clusters (plan.cluster_plan) where the GPU has them: checked
# on the host (tests/cuda_emulation.py runs its merge) and on an H100, where it is faster than rows split with
# counters at every decode shape (docs/cuda-backend.md, both plans timed in one run).
CLUSTER_ROWS = True


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
        attributes = cupy.cuda.Device().attributes
        self.sm_count = int(attributes["MultiProcessorCount"])
        # Thread-block clusters (compute capability 9.0 on): blocks of one merge through distributed shared
        # memory. 8 is the portable size, which every such device schedules.
        clusters = CLUSTER_ROWS and int(cupy.cuda.Device().compute_capability) >= 90  # "90" on an H100
        self.cluster_blocks = 8 if clusters else 1

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
        spec = operator.kernel_spec
        if spec.selection is not None:  # the indices are a second output of their own description
            inputs, values = operator.kernel_tensors
            return TopKKernel(self, spec, inputs, values, operator.tensor(operator.definition.schema.outputs[1].name))
        return self.compile_spec(operator.device, spec, *operator.kernel_tensors)

    def compile_spec(self, device: Device, spec: KernelSpec, inputs: Sequence[TensorDesc | None],
                     output: TensorDesc, extra_outputs: Sequence[TensorDesc] = ()) -> Any:
        """The kernel of ``spec`` (an operator's, or a fused graph kernel's) over these descriptions; each of
        ``spec.extra`` written to its description in ``extra_outputs``, through its own strides."""
        if spec.accumulation is not None:
            return ReduceKernel(self, spec, inputs, output)  # refuses a function it does not lower, by name
        if spec.selection is not None:  # an operator's alone (compile): never fused
            raise expr_c.unsupported(spec.operator, "kernel", "must be element-wise or an ARGMIN or ARGMAX "
                                     "reduction on backend 'cuda'", "a fused TOP_K selection")
        if spec.normalization is not None:
            raise expr_c.unsupported(spec.operator, "kernel", "must be element-wise or an ARGMIN or ARGMAX "
                                     "reduction on backend 'cuda'", f"a {spec.normalization.function} normalization")
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
                                  title(spec, "element-wise, 16-byte chunks"))
            tiles = math.ceil(self.count // self.width / (BLOCK * elementwise_c.chunk_unroll(spec)))
            self._vector_grid = (max(1, min(tiles, 1 << 20)),)
            self._aligned_to = [(k, self.width * size) for k, (size, st) in
                                enumerate(zip(self.sizes, self.layout.strides)) if st[-1] == 1]
        else:
            self._general_kernel()

    def _general_kernel(self) -> Any:
        if self._general is None:
            self._general = kernel(elementwise_c.elementwise_general(self.spec, self.layout),
                                   title(self.spec, "element-wise, any strides"))
        return self._general

    def initialize(self) -> None:
        """Nothing to prepare: the kernels were compiled with the operator."""

    def execute(self, inputs: Sequence[BoundTensor | None], outputs: Sequence[BoundTensor]) -> None:
        self.run([bound_address(b) for b in inputs if b is not None] + [bound_address(b) for b in outputs])

    def prepare(self, inputs: Sequence[BoundTensor | None], outputs: Sequence[BoundTensor]) -> Callable[[], None]:
        """The launch over these bindings, its kernel, grid and arguments fixed once: a recorded dispatch
        (launched on the stream current when it is called, as ``run``)."""
        function, grid, args = self._launch([bound_address(b) for b in inputs if b is not None]
                                            + [bound_address(b) for b in outputs])
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
