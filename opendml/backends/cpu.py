"""The CPU backend: NumPy memory, and fast kernels (``cpu_kernels``) run over strided views on every core."""

from __future__ import annotations

import functools
import math
import sys
import threading
from collections.abc import Callable, Hashable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from ..buffer import Buffer, checked_array, directml_layout
from ..dtypes import ALL_TYPES, DataType
from ..errors import OutOfMemoryError, invalid, out_of_memory
from ..kernels import notices
from . import cpu_kernels, tiers
from .base import unsupported_extra

if TYPE_CHECKING:
    from ..binding import BoundTensor
    from ..device import Device
    from ..kernels.spec import KernelSpec
    from ..operator import Operator
    from ..tensor import TensorDesc


class CpuBuffer(Buffer):
    """Host memory: a 1-D uint8 NumPy array."""

    def __init__(self, device: Device, data: np.ndarray) -> None:
        super().__init__(device, int(data.size))
        self.data = data

    @property
    def address(self) -> int:
        return int(self.data.__array_interface__["data"][0])

    def to_numpy(self) -> np.ndarray:
        return self.data.copy()


class CpuKernel:
    """Runs the kernel of a KernelSpec (its expression, or its reduction's engine) over ``inputs`` (None for
    an absent one), ``output`` and one extra output per ``spec.extra`` laid out as described; the NumPy
    reference in ``ops/`` stays the oracle the kernels are tested against.

    Tiered (``tiers``): where the Numba kernels are in force and this kernel was not compiled in this process
    yet, the NumPy path's kernel runs (``pending``) until the Numba one, compiled on the compile thread,
    replaces it; both give the same bits."""

    def __init__(self, spec: KernelSpec, inputs: Sequence[TensorDesc | None], output: TensorDesc,
                 threads: int, extra_outputs: Sequence[TensorDesc] = ()) -> None:
        self.spec = spec
        self.threads = threads
        self.pending = False  # True while the NumPy path stands in for the kernel being compiled
        self._compiled = threading.Event()
        layout = (tuple(inputs), output, tuple(extra_outputs))
        key = functools.partial(_compile_key, spec, layout, threads)
        if not tiers.enabled() or tiers.built(key):
            self._run = _built(cpu_kernels.kernels(), spec, *layout, threads)
            self._compiled.set()
            return
        self._numpy = _built(cpu_kernels.load("numpy"), spec, *layout, threads)
        self._run = self._standing_in
        self.pending = True
        label = self._label = tiers.label_now(lambda: notices.describe(spec.operator, output))
        tiers.compile_later(key, label, lambda: _built(cpu_kernels.kernels(), spec, *layout, threads),
                            self._replace, self._keep_numpy)

    def _replace(self, run: Callable[..., None]) -> None:
        """The compiled kernel is ready: every call from now on runs it (an attribute store: a call on another
        thread runs one kernel or the other, whole)."""
        self._run = run
        self.pending = False
        self._compiled.set()

    def _keep_numpy(self) -> None:
        self._run = self._numpy
        self.pending = False
        self._compiled.set()

    def _standing_in(self, *args: Any) -> None:
        """A call while the kernel compiles: on the NumPy path, unless it is large enough that waiting for the
        compiled kernel costs less (``tiers.WAIT_MIN_ELEMENTS``)."""
        size = max((a.size for a in args if isinstance(a, np.ndarray)), default=0)
        if size >= tiers.WAIT_MIN_ELEMENTS:
            if not self._compiled.is_set():  # a wait the user sees: said, as a compile is
                tiers.LOGGER.info("waiting for the kernels of %s to compile: a call of %d elements runs faster on "
                                  "them than on the NumPy path", self._label, size)
            self._compiled.wait()
            self._run(*args)
            return
        self._numpy(*args)

    def wait_compiled(self, timeout: float | None = None) -> bool:
        """Block until the kernel's own (compiled) call is in place (False if ``timeout`` passed first)."""
        return self._compiled.wait(timeout)

    def initialize(self) -> None:
        """Nothing to prepare: the operators have no weights or persistent resources."""

    def execute(self, inputs: Sequence[BoundTensor | None], outputs: Sequence[BoundTensor]) -> None:
        self.run_arrays([None if b is None else _view(b) for b in inputs], _view(outputs[0]),
                        [_view(b) for b in outputs[1:]])

    def prepare(self, inputs: Sequence[BoundTensor | None], outputs: Sequence[BoundTensor]) -> Callable[[], None]:
        """``execute`` over these bindings as one call taking no arguments: the views made once, and where the
        kernel module offers it (``run.prepare``: the generated element-wise entries) its layout walk and
        kernel chosen once too. What a recorded dispatch replays; buffers never move, so the views stay
        valid as long as the call holds them. While the kernel compiles, a call that prepares itself again
        once it is compiled (``_Prepared``)."""
        views = [None if b is None else _view(b) for b in inputs] + [_view(b) for b in outputs]
        if self.pending:
            return _Prepared(self, views)
        return self.prepare_views(views)

    def prepare_views(self, views: list[np.ndarray | None]) -> Callable[[], None]:
        """``prepare`` over views already made (the inputs', then the outputs')."""
        prepare = getattr(self._run, "prepare", None)
        if prepare is not None:
            return prepare(*views, self.threads)  # type: ignore[no-any-return]
        return functools.partial(self._run, *views, self.threads)

    def prepare_arrays(self, inputs: Sequence[np.ndarray | None], out: np.ndarray) -> Callable[..., None] | None:
        """``run_arrays`` for arrays laid out as these (the same shapes, strides and dtypes), with everything
        their layout decides resolved once: a call taking ``(*inputs, out)``, holding no array (what a
        repeated functional call runs). None where the kernel module has no such call (the NumPy kernels,
        reductions), the kernel writes extra outputs or is still being compiled (``pending``)."""
        if self.pending:
            return None
        prepare = getattr(self._run, "prepare_layout", None)
        if prepare is None or self.spec.extra:
            return None
        return prepare(*inputs, out, self.threads)  # type: ignore[no-any-return]

    def run_arrays(self, inputs: Sequence[np.ndarray | None], out: np.ndarray,
                   extras: Sequence[np.ndarray] = ()) -> None:
        """Execute on NumPy views laid out as the operator's descriptions say (bindings already checked);
        ``extras``: one view per ``spec.extra``.

        Elements are read and written in blocks, so an exact in-place alias is safe; only the outputs'
        elements are written, each once, so padding between them is never touched.
        """
        self._run(*inputs, out, *extras, self.threads)


class _Prepared:
    """A recorded call over fixed views made while its kernel compiled: the NumPy path until the kernel is
    compiled, then the kernel's own prepared call, made once."""

    def __init__(self, kernel: CpuKernel, views: list[np.ndarray | None]) -> None:
        self.kernel, self.views = kernel, views
        self.call: Callable[[], None] | None = None

    def __call__(self) -> None:
        call = self.call
        if call is None:
            if self.kernel.pending:
                self.kernel._run(*self.views, self.kernel.threads)
                return
            call = self.call = self.kernel.prepare_views(self.views)
        call()


def _built(kernels: ModuleType, spec: KernelSpec, inputs: tuple[TensorDesc | None, ...], output: TensorDesc,
           extra_outputs: tuple[TensorDesc, ...], threads: int) -> Callable[..., None]:
    """The call of ``spec``'s kernel in the kernel module ``kernels`` (``fast`` or ``blocked``), with what its
    calls over these descriptions run compiled: the compile step, so that no execution compiles."""
    run: Callable[..., None] = kernels.reduction(spec) if spec.is_reduction else kernels.elementwise(spec)
    if not spec.is_reduction:
        if spec.extra:  # run once on one-element arrays: what the calls run is compiled then
            run(*[None if desc is None else _one_element(desc) for desc in inputs], _one_element(output),
                *[_one_element(desc) for desc in extra_outputs], threads)
        else:
            kernels.prepare_elementwise(spec, inputs, output)
    else:  # a reduction's kernels depend on its input's layout: those its plan runs are compiled
        x = inputs[0]
        assert x is not None  # a reduction's input is required
        kernels.prepare_reduction(spec, x.sizes, x.effective_strides, threads,
                                  [None if d is None else d.effective_strides for d in inputs],
                                  [d.effective_strides for d in extra_outputs])
    return run


def _compile_key(spec: KernelSpec, layout: tuple[Any, ...], threads: int) -> Hashable:
    """What decides which kernels a compile step compiles, so that one compiled in this process already is
    built at once, not tiered: an element-wise spec's kernels serve every layout, and its output's size
    decides only whether they stream (``fast.STREAM_MIN_BYTES``); a reduction's layout and threads decide its
    engines. Before the Numba kernels are imported nothing was built: the whole layout then."""
    fast = sys.modules.get(f"{cpu_kernels.__name__}.fast")
    output: TensorDesc = layout[1]
    if not spec.is_reduction and fast is not None:
        return spec, math.prod(output.sizes) * output.data_type.size >= fast.STREAM_MIN_BYTES
    return spec, repr(layout), threads


def _one_element(desc: TensorDesc) -> np.ndarray:
    return np.zeros((1,) * desc.dimension_count, dtype=desc.data_type.numpy)


def _view(bound: BoundTensor) -> np.ndarray:
    return bound.desc.numpy_view(bound.buffer.data, bound.offset)  # type: ignore[attr-defined]


class CpuBackend:
    name = "cpu"
    xp = np

    def as_array(self, x: Any) -> np.ndarray:
        """``x`` as a NumPy array."""
        _refuse_gpu(x)
        return np.asarray(x)

    def byte_range(self, array: np.ndarray, size: int) -> np.ndarray:
        """A 1-D uint8 view of ``size`` bytes starting at the array's first element."""
        first = array[(slice(0, 1),) * array.ndim].reshape(-1).view(np.uint8)
        return np.lib.stride_tricks.as_strided(first, shape=(size,), strides=(1,))

    def to_caller(self, result: np.ndarray, like: Any) -> np.ndarray:
        return result

    def allocate(self, device: Device, size_in_bytes: int) -> Buffer:
        try:
            return CpuBuffer(device, np.zeros(size_in_bytes, dtype=np.uint8))
        except MemoryError:
            raise out_of_host_memory(size_in_bytes) from None

    def upload(self, device: Device, array: Any) -> Buffer:
        _refuse_gpu(array)
        host = checked_array(array)
        try:
            placed = directml_layout(host)  # host_array's conversion, inside the out-of-memory report
            return CpuBuffer(device, placed.reshape(-1).view(np.uint8).copy())
        except MemoryError:
            raise out_of_host_memory(host.nbytes) from None

    def wrap(self, device: Device, raw: Any) -> Buffer:
        return CpuBuffer(device, raw)

    def prepare_copy(self, destination: Buffer, offset: int, source: Buffer, size: int) -> Callable[[], None]:
        """A copy of ``source``'s first ``size`` bytes to ``offset`` in ``destination``."""
        to = destination.data[offset:offset + size]  # type: ignore[attr-defined]
        return functools.partial(np.copyto, to, source.data[:size])  # type: ignore[attr-defined]

    def compile(self, operator: Operator) -> CpuKernel:
        return self.compile_spec(operator.device, operator.kernel_spec, *operator.kernel_tensors)

    def compile_spec(self, device: Device, spec: KernelSpec, inputs: Sequence[TensorDesc | None],
                     output: TensorDesc, extra_outputs: Sequence[TensorDesc] = ()) -> CpuKernel:
        """The kernel of ``spec`` (an operator's, or a fused graph kernel's) over these descriptions, writing
        ``extra_outputs`` (one per ``spec.extra``) too."""
        if (spec.extra or extra_outputs) and not self.fused_outputs():
            raise unsupported_extra(spec, self.name)
        if len(extra_outputs) != len(spec.extra):
            raise invalid(spec.operator, "extra_outputs", f"must hold one description per extra output "
                          f"({len(spec.extra)})", len(extra_outputs))
        return CpuKernel(spec, inputs, output, getattr(device, "threads", 1), extra_outputs)

    def reduction_prologues(self) -> bool:
        return bool(_capabilities().REDUCTION_PROLOGUES)

    def fused_outputs(self) -> bool:
        return bool(getattr(_capabilities(), "FUSED_OUTPUTS", False))

    def supports_data_type(self, data_type: DataType) -> bool:
        return data_type in ALL_TYPES


def _capabilities() -> ModuleType:
    """The kernel module whose capabilities (``REDUCTION_PROLOGUES``, ``FUSED_OUTPUTS``) a graph is planned by:
    the one in force, or the NumPy path's while kernels are tiered (both modules state the same; the NumPy
    one is imported without Numba)."""
    return cpu_kernels.load("numpy") if tiers.enabled() else cpu_kernels.kernels()


def _refuse_gpu(x: Any) -> None:
    """GPU arrays are refused rather than copied behind the caller's back."""
    if hasattr(x, "__cuda_array_interface__"):
        raise invalid("Device", "array", "must be in host memory for a cpu device (use Device('cuda'))",
                      type(x).__name__)


def out_of_host_memory(size_in_bytes: int) -> OutOfMemoryError:
    """A failed host allocation as DirectML reports it, E_OUTOFMEMORY, rather than a bare MemoryError."""
    return out_of_memory("Device", "size_in_bytes", "must fit in the host memory free now (out of memory, "
                         "E_OUTOFMEMORY)", size_in_bytes)


def create() -> CpuBackend:
    return CpuBackend()
