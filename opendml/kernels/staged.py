"""A kernel over a layout of its own: an operator whose definition gives one (``OperatorDefinition.layout``:
QUANTIZE and DEQUANTIZE) runs its element-wise KernelSpec over each tensor's ``Operand``: the bound bytes seen
through other sizes and strides (a blocked axis cut in two), or, for 4-bit data, a staging buffer holding one
element a byte, unpacked from the bound nibbles before the kernel runs (an input) or packed into them after it
(an output, the other nibble of each byte kept). The backend compiles the spec as any other (``compile_spec``);
the staging is its array module's indexing (NumPy, CuPy).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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


class StagedKernel:
    """The operator's kernel over its layout (see the module's docstring)."""

    def __init__(self, device: Device, operator: Operator) -> None:
        definition = operator.definition
        assert definition.layout is not None
        schema = definition.schema
        self.device = device
        self.layout: Mapping[str, Operand | None] = definition.layout(operator.name, operator.params,
                                                                       operator.tensors)
        self.output_name = schema.outputs[0].name
        inputs = [None if self.layout[f.name] is None else self.layout[f.name].desc  # type: ignore[union-attr]
                  for f in schema.inputs]
        output = self.layout[self.output_name]
        assert output is not None
        self.inner: Kernel = device.backend.compile_spec(device, operator.kernel_spec, inputs, output.desc)
        xp = device.backend.xp
        # Each strided 4-bit tensor's element offsets (nibbles, row-major over its sizes), made once; a packed
        # one is unpacked and packed as a run of bytes (None here).
        self.offsets: dict[str, Any] = {}
        for name, tensor in operator.tensors.items():
            operand = self.layout[name]
            if tensor is not None and operand is not None and operand.staged is not None:
                self.offsets[name] = None if tensor.is_packed else xp.asarray(
                    element_offsets(tensor.sizes, tensor.effective_strides))
        self.types = {name: tensor.data_type for name, tensor in operator.tensors.items() if tensor is not None}

    def initialize(self) -> None:
        self.inner.initialize()

    def execute(self, inputs: Sequence[BoundTensor | None], outputs: Sequence[BoundTensor]) -> None:
        staged_inputs = [None if b is None else self._input(b) for b in inputs]
        out = outputs[0]
        operand = self.layout[self.output_name]
        assert operand is not None
        if operand.staged is None:
            self.inner.execute(staged_inputs, [BoundTensor(out.field, operand.desc, out.buffer, out.offset)])
            return
        staging = self._staging(operand.staged)
        self.inner.execute(staged_inputs, [BoundTensor(out.field, operand.desc, staging, 0)])
        count = operand.staged.element_count
        values = staging.data[:count].view(operand.staged.data_type.numpy)  # type: ignore[attr-defined]
        offsets = self.offsets[self.output_name]
        if offsets is None:
            pack_run(out.buffer.data, out.offset, values)  # type: ignore[attr-defined]
        else:
            store_nibbles(out.buffer.data, out.offset, offsets, values, self.types[self.output_name])  # type: ignore[attr-defined]

    def _input(self, bound: BoundTensor) -> BoundTensor:
        operand = self.layout[bound.field.name]
        assert operand is not None
        if operand.staged is None:
            return BoundTensor(bound.field, operand.desc, bound.buffer, bound.offset)
        name = bound.field.name
        data, xp, offsets = bound.buffer.data, self.device.backend.xp, self.offsets[name]  # type: ignore[attr-defined]
        if offsets is None:
            values = unpack_run(data, bound.offset, operand.staged.element_count, self.types[name], xp)
        else:
            values = nibbles_at(data, bound.offset, offsets, self.types[name], xp)
        staging = self._staging(operand.staged)
        staging.data[:values.size] = values.view(np.uint8)  # type: ignore[attr-defined]
        return BoundTensor(bound.field, operand.desc, staging, 0)

    def _staging(self, desc: TensorDesc) -> Any:
        """A new buffer for one staged tensor (a call's own, so that concurrent calls never share one)."""
        return self.device.backend.allocate(self.device, desc.total_tensor_size_in_bytes)
