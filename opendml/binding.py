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
RESOURCE_ALIGNMENT = 256  # DML_TEMPORARY_BUFFER_ALIGNMENT and DML_PERSISTENT_BUFFER_ALIGNMENT


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
    def size(self) -> int:
        return self.desc.total_tensor_size_in_bytes

    @property
    def end(self) -> int:
        return self.start + self.size

    def aliases(self, other: BoundTensor | BoundResource) -> bool:
        """The exact alias that in-place execution allows."""
        return isinstance(other, BoundTensor) and self.start == other.start and self.desc.same_layout(other.desc)

    def overlaps(self, other: BoundTensor | BoundResource) -> bool:
        return self.start < other.end and other.start < self.end


@dataclass(frozen=True)
class BoundResource:
    """A temporary or persistent resource (DML_BINDING_PROPERTIES) placed in a buffer: the dispatch uses
    ``[start, start + size)``, ``size`` being what the dispatchable needs (its TemporaryResourceSize or
    PersistentResourceSize)."""

    field: TensorField  # its name (TemporaryResource, PersistentResource, Outputs[k]) for messages
    buffer: Buffer
    offset: int
    size: int

    @property
    def start(self) -> int:
        return self.buffer.address + self.offset

    @property
    def end(self) -> int:
        return self.start + self.size

    def aliases(self, other: BoundTensor | BoundResource) -> bool:
        return False  # a resource is never an in-place alias

    def overlaps(self, other: BoundTensor | BoundResource) -> bool:
        return self.start < other.end and other.start < self.end


def bind(op: Operator, inputs: Sequence[BufferBinding | Buffer | None],
         outputs: Sequence[BufferBinding | Buffer | None]) -> tuple[list[BoundTensor | None], list[BoundTensor]]:
    """Check every binding rule and place each tensor in its buffer."""
    schema = op.definition.schema
    bound_inputs = bind_inputs(op, inputs)
    bound_outputs = bind_outputs(op, outputs)
    check_overlaps(schema.name, bound_inputs, bound_outputs, schema.in_place)
    return bound_inputs, bound_outputs


def bind_inputs(op: Operator, inputs: object) -> list[BoundTensor | None]:
    """Check the input bindings alone (count, then each binding's rules); None for an absent tensor."""
    return _bind_group(op, op.definition.schema.inputs, inputs, "inputs")


def bind_outputs(op: Operator, outputs: object) -> list[BoundTensor]:
    """Check the output bindings alone (count, then each binding's rules)."""
    return [b for b in _bind_group(op, op.definition.schema.outputs, outputs, "outputs") if b is not None]


def check_overlaps(owner: str, bound_inputs: Sequence[BoundTensor | BoundResource | None],
                   bound_outputs: Sequence[BoundTensor | BoundResource], in_place: bool) -> None:
    """No output may overlap an input or another output, except the exact alias in-place execution allows.

    Resources are checked as outputs (a dispatch writes them), with ``in_place`` False."""
    for k, out in enumerate(bound_outputs):
        for other in [b for b in bound_inputs if b is not None] + list(bound_outputs[:k]):
            if not out.overlaps(other):
                continue
            if other.field.kind == "input" and in_place and out.aliases(other):
                continue
            rule = ("may alias InputTensor only exactly (same buffer, offset, sizes, strides and total size)"
                    if in_place and other.field.kind == "input" else "must not overlap")
            raise binding_error(owner, f"{out.field.name} binding", f"{rule} {other.field.name}",
                                f"bytes [{out.offset}, {out.offset + out.size}) "
                                f"against [{other.offset}, {other.offset + other.size})")


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
    alignment = max(MIN_OFFSET_ALIGNMENT, desc.guaranteed_base_offset_alignment)
    buffer, offset = _place(name, device, field.name, binding, alignment, desc.total_tensor_size_in_bytes,
                            "TotalTensorSizeInBytes")
    return BoundTensor(field, desc, buffer, offset)


def bind_resource(owner: str, device: Device, field: TensorField, binding: object, size: int, size_name: str,
                  alignment: int = RESOURCE_ALIGNMENT) -> BoundResource | None:
    """Check the binding of a resource of ``size`` bytes (``size_name``: the DML_BINDING_PROPERTIES field
    giving it) by a tensor binding's rules: a BufferBinding (or a Buffer) of ``device``, its offset a multiple
    of ``alignment``, at least ``size`` bytes, inside its buffer. None: no resource is bound."""
    if binding is None:
        return None
    buffer, offset = _place(owner, device, field.name, binding, alignment, size, size_name)
    return BoundResource(field, buffer, offset, size)


def _place(name: str, device: Device, field: str, binding: object, alignment: int, minimum: int,
           minimum_name: str) -> tuple[Buffer, int]:
    """The buffer and offset of a binding checked against the rules every binding follows (SPEC 2)."""
    if isinstance(binding, Buffer):
        binding = BufferBinding(binding)
    if not isinstance(binding, BufferBinding):
        raise binding_error(name, field, "must be a BufferBinding", repr(binding))
    buffer = binding.buffer
    if not isinstance(buffer, Buffer) or buffer.device is not device:
        raise binding_error(name, f"{field}.Buffer", f"must be a buffer of {device}, the device it is bound on "
                            "(made by its create_buffer or buffer_from)", _foreign(buffer, device))
    offset = _integer(binding.offset)
    if offset is None or offset < 0 or offset % alignment:
        raise binding_error(name, f"{field}.Offset", f"must be a non-negative multiple of {alignment}",
                            repr(binding.offset))
    size = buffer.size_in_bytes - offset if binding.size_in_bytes is None else _integer(binding.size_in_bytes)
    if size is None:
        raise binding_error(name, f"{field}.SizeInBytes", "must be an integer, or None for the rest of "
                            "the buffer", repr(binding.size_in_bytes))
    if size < minimum:
        raise binding_error(name, f"{field}.SizeInBytes", f"must be at least {minimum_name} ({minimum})", size)
    if offset + size > buffer.size_in_bytes:
        raise binding_error(name, f"{field} binding",
                            f"must lie inside its buffer of {buffer.size_in_bytes} bytes",
                            f"bytes [{offset}, {offset + size})")
    return buffer, offset


def _foreign(buffer: object, device: Device) -> str:
    """The buffer refused, and whose it is where its repr does not tell."""
    owner = getattr(buffer, "device", None)
    if not isinstance(buffer, Buffer) or owner is device or repr(owner) != repr(device):
        return repr(buffer)
    return f"{buffer!r}, a buffer of {other_device(owner, device)}"


def other_device(owner: object, device: Device) -> str:
    """``owner``, a device other than ``device``, named so that the two can be told apart: two CPU devices of
    one feature level print alike, so one printed as ``device`` is said to be another object (objects made by a
    device, buffers and operators alike, are that one Device object's)."""
    if owner is device or repr(owner) != repr(device):
        return repr(owner)
    threads = getattr(owner, "threads", None)
    return f"another {type(owner).__name__} object" + (
        f" ({threads} thread{'s' * (threads != 1)})" if isinstance(threads, int) else "")


def _integer(value: object) -> int | None:
    """An offset or size as an int (NumPy integers too), or None for anything else (floats, bools, text)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        return None
    return int(value)
