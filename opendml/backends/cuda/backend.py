"""CUDA buffers and kernels: plans made once at compile time, launches at execute time."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import cupy
import numpy as np

from ...buffer import Buffer, check_buffer_dtype, host_array
from ...dtypes import ALL_TYPES, DataType
from ...errors import OutOfMemoryError, out_of_memory
from ...ops.argmin import ArgMinParams
from ...ops.elementwise import ClampParams
from ..layout import Layout, collapse, split_axes
from . import codegen
from .compiler import kernel
from .plan import BLOCK, ArgMinPlan, plan_argmin

if TYPE_CHECKING:
    from ...binding import BoundTensor
    from ...device import Device
    from ...operator import Operator


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
            array = host_array(array)  # checked (and bytes read) as on the cpu backend
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
        if operator.name == "ARGMIN":
            return ArgMinKernel(self, operator)
        return ElementwiseKernel(self, operator)

    def supports_data_type(self, data_type: DataType) -> bool:
        return data_type in ALL_TYPES

    def synchronize(self) -> None:
        cupy.cuda.get_current_stream().synchronize()

    def grid(self, work_items: int, per_block: int = BLOCK) -> int:
        """Blocks for a grid-stride loop: enough to fill the GPU, no more than the work needs."""
        return max(1, min(math.ceil(work_items / per_block), self.sm_count * 32))


def _pointer(bound: BoundTensor) -> int:
    return bound.buffer.address + bound.offset


class ElementwiseKernel:
    """CLIP, CLIP1, THRESHOLD and DEQUANTIZE_LINEAR: one generated kernel per layout."""

    def __init__(self, backend: CudaBackend, operator: Operator) -> None:
        self.backend = backend
        schema = operator.definition.schema
        tensors = operator.tensors
        self.inputs = [None if (desc := tensors[f.name]) is None else codegen.Operand(k, desc.data_type)
                       for k, f in enumerate(schema.inputs)]
        out_desc = operator.tensor(schema.outputs[0].name)
        self.output = out_desc.data_type
        self.sizes = [op.data_type.size for op in self.inputs if op is not None] + [self.output.size]
        present = [desc for f in schema.inputs if (desc := tensors[f.name]) is not None]
        self.layout: Layout = collapse(out_desc.sizes, [d.effective_strides for d in present]
                                       + [out_desc.effective_strides])
        self.count = out_desc.element_count
        self.snippet = _snippet(operator)
        self.width = codegen.vector_width(self.inputs, self.output, self.layout)
        self._vector: Any = None
        self._general: Any = None
        if self.width is not None:
            self._vector = kernel(codegen.elementwise_vector(self.inputs, self.output, self.snippet,
                                                             self.layout, self.width))
        else:
            self._general = self._general_kernel()

    def _general_kernel(self) -> Any:
        if self._general is None:
            self._general = kernel(codegen.elementwise_general(self.inputs, self.output, self.snippet, self.layout))
        return self._general

    def initialize(self) -> None:
        """Nothing to prepare: the kernels were compiled with the operator."""

    def execute(self, inputs: Sequence[BoundTensor | None], outputs: Sequence[BoundTensor]) -> None:
        pointers = [_pointer(b) for b in inputs if b is not None] + [_pointer(outputs[0])]
        args = tuple(np.uint64(p) for p in pointers)
        if self.width is not None and all(p % (self.width * size) == 0 for p, size, st in
                                          zip(pointers, self.sizes, self.layout.strides) if st[-1] == 1):
            tiles = math.ceil(self.count // self.width / (BLOCK * codegen.chunk_unroll(self.inputs, self.output)))
            self._vector((max(1, min(tiles, 1 << 20)),), (BLOCK,), args)
        else:
            self._general_kernel()((self.backend.grid(self.count),), (BLOCK,), args)


def _snippet(operator: Operator) -> str:
    params = operator.params
    if isinstance(params, ClampParams):
        return codegen.clamp_snippet(params)
    return codegen.dequantize_snippet(operator.tensor("InputTensor").data_type,
                                      operator.tensor("ScaleTensor").data_type,
                                      operator.tensors["ZeroPointTensor"] is not None)


class ArgMinKernel:
    """ARGMIN as a reduction whose strategy follows the layout (see ``plan.plan_argmin``)."""

    def __init__(self, backend: CudaBackend, operator: Operator) -> None:
        self.backend = backend
        params: ArgMinParams = operator.params
        x, out = operator.tensor("InputTensor"), operator.tensor("OutputTensor")
        self.in_type, self.out_type, self.direction = x.data_type, out.data_type, params.axis_direction
        self.kept, self.reduced = split_axes(x.sizes, x.effective_strides, out.effective_strides, params.axes)
        self.plan = plan_argmin(x.sizes, x.effective_strides, params.axes, self.kept, self.reduced,
                                backend.sm_count, x.data_type.size)
        self._kernels = {self.plan.vector: self._kernel_for(self.plan)}
        self._combine = None
        if self.plan.splits > 1:
            self._combine = kernel(codegen.argmin_combine_kernel(self.plan, x.data_type, out.data_type,
                                                                 self.direction, self.kept))
        self.compute_dtype = codegen.COMPUTE_NUMPY[codegen.COMPUTE_TYPE[x.data_type]]

    def _kernel_for(self, plan: ArgMinPlan) -> Any:
        return kernel(codegen.argmin_kernel(plan, self.in_type, self.out_type, self.direction, self.kept,
                                            self.reduced))

    def initialize(self) -> None:
        """Nothing to prepare: partial results live in the memory pool for one execution."""

    def execute(self, inputs: Sequence[BoundTensor | None], outputs: Sequence[BoundTensor]) -> None:
        plan = self.plan
        x_address = _pointer(inputs[0])  # type: ignore[arg-type]
        if plan.vector > 1 and x_address % 16:
            plan = plan.scalar()  # 16-byte loads need a 16-byte aligned input
            if 1 not in self._kernels:
                self._kernels[1] = self._kernel_for(plan)
        px, pout = np.uint64(x_address), np.uint64(_pointer(outputs[0]))
        items = plan.outputs // plan.columns * plan.splits
        if plan.family == "columns":
            grid = self.backend.grid(items)
        elif plan.group == 32:
            grid = self.backend.grid(items * 32)
        else:
            grid = max(1, min(items, self.backend.sm_count * 32))
        launch = self._kernels[plan.vector]
        if self._combine is None:
            launch((grid,), (plan.block,), (px, pout, np.uint64(0), np.uint64(0)))
            return
        values = cupy.empty(plan.outputs * plan.splits, dtype=self.compute_dtype)
        indices = cupy.empty(plan.outputs * plan.splits, dtype=cupy.uint64)
        pv, pi = np.uint64(values.data.ptr), np.uint64(indices.data.ptr)
        launch((grid,), (plan.block,), (px, pout, pv, pi))
        per_block = BLOCK // plan.combine_group  # outputs one block merges at a time
        self._combine((max(1, min(math.ceil(plan.outputs / per_block), self.backend.sm_count * 32)),), (BLOCK,),
                      (pv, pi, pout))
