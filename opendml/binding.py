"""The binding rules of SPEC 2-3: counts, alignment, sizes, ranges and overlaps."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .buffer import Buffer, BufferBinding
from .errors import binding_error
from .schema import TensorField
from .tensor import TensorDesc

if TYPE_CHECKING:
    from .device import Device
    from .operator import Operator

MIN_OFFSET_ALIGNMENT = 16  # DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT


@dataclass(frozen=True)
class BoundTensor:
    """A tensor description placed in a buffer: the operator touches only ``[start, end)``."""

    field: TensorField
    desc: TensorDesc
    buffer: Buffer
    offset: int

    @property
    def start(self) -> int:
        return self.buffer.address + self.offset

    @property
    def end(self) -> int:
        return self.start + self.desc.total_tensor_size_in_bytes

    def aliases(self, other: BoundTensor) -> bool:
        """The exact alias that in-place execution allows."""
        return self.start == other.start and self.desc.same_layout(other.desc)

    def overlaps(self, other: BoundTensor) -> bool:
        return self.start < other.end and other.start < self.end


def bind(op: Operator, inputs: Sequence[BufferBinding | Buffer | None],
         outputs: Sequence[BufferBinding | Buffer | None]) -> tuple[list[BoundTensor | None], list[BoundTensor]]:
    """Check every binding rule and place each tensor in its buffer."""
    schema = op.definition.schema
    bound_inputs = _bind_group(op, schema.inputs, inputs, "inputs")
    bound_outputs = [b for b in _bind_group(op, schema.outputs, outputs, "outputs") if b is not None]
    check_overlaps(schema.name, bound_inputs, bound_outputs, schema.in_place)
    return bound_inputs, bound_outputs


def check_overlaps(owner: str, bound_inputs: Sequence[BoundTensor | None], bound_outputs: Sequence[BoundTensor],
                   in_place: bool) -> None:
    """No output may overlap an input or another output, except the exact alias in-place execution allows."""
    for k, out in enumerate(bound_outputs):
        for other in [b for b in bound_inputs if b is not None] + list(bound_outputs[:k]):
            if not out.overlaps(other):
                continue
            if other.field.kind == "input" and in_place and out.aliases(other):
                continue
            rule = ("may alias InputTensor only exactly (same buffer, offset, sizes, strides and total size)"
                    if in_place and other.field.kind == "input" else "must not overlap")
            raise binding_error(owner, f"{out.field.name} binding", f"{rule} {other.field.name}",
                                f"bytes [{out.offset}, {out.offset + out.desc.total_tensor_size_in_bytes}) "
                                f"against [{other.offset}, {other.offset + other.desc.total_tensor_size_in_bytes})")


def _bind_group(op: Operator, fields: tuple[TensorField, ...], bindings: object,
                group: str) -> list[BoundTensor | None]:
    name = op.definition.schema.name
    if isinstance(bindings, (str, bytes)) or not isinstance(bindings, Sequence):
        raise binding_error(name, group, "must be a list of bindings", type(bindings).__name__)
    if len(bindings) != len(fields):
        wanted = ", ".join(f.name for f in fields)
        raise binding_error(name, group, f"must hold {len(fields)} binding(s), one per tensor ({wanted})",
                            len(bindings))
    return [_bind_one(op, f, b) for f, b in zip(fields, bindings)]


def _bind_one(op: Operator, field: TensorField, binding: object) -> BoundTensor | None:
    return bind_tensor(op.definition.schema.name, op.device, field, op.tensors[field.name], binding)


def bind_tensor(owner: str, device: Device, field: TensorField, desc: TensorDesc | None,
                binding: object) -> BoundTensor | None:
    """Check one binding of ``desc`` (None: an absent tensor, bound as None) on ``device``'s backend."""
    name = owner
    if desc is None:
        if binding is not None:
            raise binding_error(name, field.name, "must be bound as None (the tensor is absent)",
                                type(binding).__name__)
        return None
    if isinstance(binding, Buffer):
        binding = BufferBinding(binding)
    if not isinstance(binding, BufferBinding):
        raise binding_error(name, field.name, "must be a BufferBinding", repr(binding))
    buffer = binding.buffer
    if not isinstance(buffer, Buffer) or getattr(buffer.device, "backend", None) is not device.backend:
        raise binding_error(name, f"{field.name}.Buffer", f"must be a buffer of {device}", repr(buffer))
    offset = _integer(binding.offset)
    alignment = max(MIN_OFFSET_ALIGNMENT, desc.guaranteed_base_offset_alignment)
    if offset is None or offset < 0 or offset % alignment:
        raise binding_error(name, f"{field.name}.Offset", f"must be a non-negative multiple of {alignment}",
                            repr(binding.offset))
    size = buffer.size_in_bytes - offset if binding.size_in_bytes is None else _integer(binding.size_in_bytes)
    if size is None:
        raise binding_error(name, f"{field.name}.SizeInBytes", "must be an integer, or None for the rest of "
                            "the buffer", repr(binding.size_in_bytes))
    if size < desc.total_tensor_size_in_bytes:
        raise binding_error(name, f"{field.name}.SizeInBytes",
                            f"must be at least TotalTensorSizeInBytes ({desc.total_tensor_size_in_bytes})", size)
    if offset + size > buffer.size_in_bytes:
        raise binding_error(name, f"{field.name} binding",
                            f"must lie inside its buffer of {buffer.size_in_bytes} bytes",
                            f"bytes [{offset}, {offset + size})")
    return BoundTensor(field, desc, buffer, offset)


def _integer(value: object) -> int | None:
    """An offset or size as an int (NumPy integers too), or None for anything else (floats, bools, text)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        return None
    return int(value)
