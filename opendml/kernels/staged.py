"""A kernel over a layout of its own: an operator whose definition gives one (``OperatorDefinition.layout``:
QUANTIZE and DEQUANTIZE), or a compiled graph's fused kernel holding one of them, runs its element-wise (or
reduction) KernelSpec over each tensor's ``Operand``: the bound bytes seen through other sizes and strides (a
blocked axis cut in two), or, for 4-bit data, a staging buffer holding one element a byte, unpacked from the
bound nibbles before the kernel runs (an input) or packed into them after it (an output, the other nibble of
each byte kept). The backend compiles the spec as any other (``compile_spec``); the staging is its array
module's indexing (NumPy, CuPy).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..binding import BoundTensor
from ..packing import nibbles_at, pack_run, store_nibbles, unpack_run
from ..tensor import element_offsets

if TYPE_CHECKING:
    from ..device import Device
    from ..operator import Kernel, Operator
    from ..ops.blocked import Operand
    from ..tensor import TensorDesc


class ViewedKernel:
    """``inner`` (compiled over the operands' kernel views) run over bindings of the tensors' own descriptions:
    ``inputs[k]`` and ``outputs[k]`` pair each tensor's description (None: an absent input) with its
    ``Operand`` (the kernel's view, and the staging of a 4-bit tensor)."""

    def __init__(self, device: Device, inner: Kernel, inputs: Sequence[tuple[TensorDesc, Operand] | None],
                 outputs: Sequence[tuple[TensorDesc, Operand]]) -> None:
        self.device, self.inner = device, inner
        self.inputs = [None if t is None else _Viewed(device, *t) for t in inputs]
        self.outputs = [_Viewed(device, *t) for t in outputs]

    def initialize(self) -> None:
        self.inner.initialize()

    def execute(self, inputs: Sequence[BoundTensor | None], outputs: Sequence[BoundTensor]) -> None:
        staged_inputs = [None if b is None or v is None else v.read(b) for b, v in zip(inputs, self.inputs)]
        staged_outputs = [v.target(b) for b, v in zip(outputs, self.outputs)]
        self.inner.execute(staged_inputs, staged_outputs)
        for bound, staged, viewed in zip(outputs, staged_outputs, self.outputs):
            viewed.write_back(staged, bound)


class _Viewed:
    """One tensor as its kernel sees it (see ``ViewedKernel``)."""

    def __init__(self, device: Device, tensor: TensorDesc, operand: Operand) -> None:
        self.device, self.tensor, self.operand = device, tensor, operand
        xp = device.backend.xp
        # A strided 4-bit tensor's element offsets (nibbles, row-major over its sizes), made once; a packed one
        # is unpacked and packed as a run of bytes (None).
        self.offsets: Any = None
        if operand.staged is not None and not tensor.is_packed:
            self.offsets = xp.asarray(element_offsets(tensor.sizes, tensor.effective_strides))

    def read(self, bound: BoundTensor) -> BoundTensor:
        """The kernel's view of an input: its bytes, or a staging buffer it is unpacked into."""
        staged = self.operand.staged
        if staged is None:
            return BoundTensor(bound.field, self.operand.desc, bound.buffer, bound.offset)
        data, xp, data_type = bound.buffer.data, self.device.backend.xp, self.tensor.data_type  # type: ignore[attr-defined]
        if self.offsets is None:
            values = unpack_run(data, bound.offset, staged.element_count, data_type, xp)
        else:
            values = nibbles_at(data, bound.offset, self.offsets, data_type, xp)
        staging = self._staging()
        staging.data[:values.size] = values.view(np.uint8)  # type: ignore[attr-defined]
        return BoundTensor(bound.field, self.operand.desc, staging, 0)

    def target(self, bound: BoundTensor) -> BoundTensor:
        """The kernel's view of an output: its bytes, or a staging buffer packed into them after the kernel."""
        if self.operand.staged is None:
            return BoundTensor(bound.field, self.operand.desc, bound.buffer, bound.offset)
        return BoundTensor(bound.field, self.operand.desc, self._staging(), 0)

    def write_back(self, staged: BoundTensor, bound: BoundTensor) -> None:
        """A staged output's values packed into the bound nibbles (nothing for any other output)."""
        if self.operand.staged is None:
            return
        count = self.operand.staged.element_count
        values = staged.buffer.data[:count].view(self.operand.staged.data_type.numpy)  # type: ignore[attr-defined]
        if self.offsets is None:
            pack_run(bound.buffer.data, bound.offset, values)  # type: ignore[attr-defined]
        else:
            store_nibbles(bound.buffer.data, bound.offset, self.offsets, values,  # type: ignore[attr-defined]
                          self.tensor.data_type)

    def _staging(self) -> Any:
        """A new buffer for the staged tensor (a call's own, so that concurrent calls never share one)."""
        assert self.operand.staged is not None
        return self.device.backend.allocate(self.device, self.operand.staged.total_tensor_size_in_bytes)


def staged_kernel(device: Device, operator: Operator) -> ViewedKernel:
    """The operator's kernel over its layout (see the module's docstring)."""
    definition = operator.definition
    assert definition.layout is not None
    schema = definition.schema
    layout = definition.layout(operator.name, operator.params, operator.tensors)

    def viewed(name: str) -> tuple[TensorDesc, Operand] | None:
        tensor, operand = operator.tensors[name], layout[name]
        return None if tensor is None or operand is None else (tensor, operand)

    inputs = [viewed(f.name) for f in schema.inputs]
    output = viewed(schema.outputs[0].name)
    assert output is not None
    inner = device.backend.compile_spec(device, operator.kernel_spec,
                                        [None if v is None else v[1].desc for v in inputs], output[1].desc)
    return ViewedKernel(device, inner, inputs, [output])
