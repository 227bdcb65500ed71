"""What a backend provides to the device."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..dtypes import DataType
from ..errors import KernelUnsupportedError, invalid, kernel_unsupported

if TYPE_CHECKING:
    from ..buffer import Buffer
    from ..device import Device
    from ..kernels.spec import KernelSpec
    from ..operator import Kernel, Operator
    from ..tensor import TensorDesc


class Backend(Protocol):
    name: str
    xp: Any  # the array module of this backend's memory (NumPy or CuPy)

    def as_array(self, x: Any) -> Any:
        """``x`` as an array of this backend's kind, sharing its memory where the array protocols allow."""

    def byte_range(self, array: Any, size: int) -> Any:
        """A 1-D uint8 view of ``size`` bytes starting at the array's first element."""

    def to_caller(self, result: Any, like: Any) -> Any:
        """A result handed back as the kind of array the caller gave (``like``)."""

    def allocate(self, device: Device, size_in_bytes: int) -> Buffer:
        """A new zero-filled buffer."""

    def upload(self, device: Device, array: Any) -> Buffer:
        """A new buffer holding a copy of the array's bytes (row-major)."""

    def wrap(self, device: Device, raw: Any) -> Buffer:
        """A buffer over existing memory: ``raw`` is a 1-D uint8 array of this backend's kind."""

    def compile(self, operator: Operator) -> Kernel:
        """The kernel that executes the operator."""

    def compile_spec(self, device: Device, spec: KernelSpec, inputs: Sequence[TensorDesc | None],
                     output: TensorDesc, extra_outputs: Sequence[TensorDesc] = ()) -> Kernel:
        """The kernel of ``spec`` over tensors so described (None: an absent input): an operator's, or a
        compiled graph's fused kernel. Executed with bindings in the same order, the outputs ``output``
        then ``extra_outputs`` (one per ``spec.extra``)."""

    def reduction_prologues(self) -> bool:
        """Whether ``compile_spec`` lowers a reduction whose element is a computed expression (an
        element-wise chain fused into it as its prologue), not only a load of its input."""

    def fused_outputs(self) -> bool:
        """Whether ``compile_spec`` lowers ``spec.extra`` (a fused kernel writing intermediates that are
        graph outputs), element-wise kernels and reductions alike."""

    def supports_data_type(self, data_type: DataType) -> bool: ...

    def prepare_copy(self, destination: Buffer, offset: int, source: Buffer, size: int) -> Callable[[], None]:
        """A call copying ``source``'s first ``size`` bytes to ``offset`` in ``destination`` (what an operator
        initializer dispatch does to put a graph's constants in its persistent resource)."""

    # A backend may also offer ``queue_executor(cuda_graphs)``: how its command queues run command lists
    # (``opendml.recording.executors``); without it they run synchronously, call by call.


def unsupported_extra(spec: KernelSpec, backend: str) -> KernelUnsupportedError:
    """The error of a backend given ``spec.extra`` outputs it does not lower (``fused_outputs`` is False)."""
    return kernel_unsupported(spec.operator, "extra", f"must be empty on backend {backend!r} (it writes one "
                              "output a kernel)", f"{len(spec.extra)} extra output(s)")


def check_extra_outputs(spec: KernelSpec, sizes: Sequence[int], extra_outputs: Sequence[TensorDesc]) -> None:
    """Each of ``spec.extra`` is described once, in order, with its value's type and the sizes the kernel
    iterates over (the output's for an element-wise kernel, the InputTensor's for a reduction)."""
    wanted = [(value.type.name, list(sizes)) for value in spec.extra]
    got = [(desc.data_type.name, list(desc.sizes)) for desc in extra_outputs]
    if got != wanted:
        raise invalid(spec.operator, "extra_outputs", "must describe one tensor per extra output, of its type "
                      f"and the kernel's sizes {wanted}", got)
