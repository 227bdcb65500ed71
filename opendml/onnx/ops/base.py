"""What every operator mapping shares: the mapping record, the planned step, checks and descriptions."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

import numpy as np

from ...device import Device
from ...dtypes import DataType
from ...errors import InvalidArgumentError, invalid, message
from ...operator import CompiledOperator
from ...schema import OperatorSchema
from ...tensor import TensorDesc
from .. import types
from ..graph import NodeView, Value


@dataclass(frozen=True)
class Step:
    """One compiled opendml operator of the plan, and where its tensors come from and go.

    ``inputs`` holds, per DirectML input tensor, a graph value's name, a host array the mapping made
    (uploaded when the plan runs), or None for an absent optional tensor. ``outputs`` names the value each
    DirectML output tensor holds, in the schema's order (TOP_K: the values, then the indices), and
    ``output_bytes`` each one's buffer size.
    """

    label: str
    operator: CompiledOperator
    inputs: tuple[str | np.ndarray | None, ...]
    outputs: tuple[str, ...]
    output_bytes: tuple[int, ...]
    runs: bool = True  # False when an output has no elements: nothing to compute

    @property
    def output(self) -> str:
        """The first output's value (the only one of most operators)."""
        return self.outputs[0]


@dataclass(frozen=True)
class Lowered:
    """What a node becomes: its output values and the step computing them (none for a Constant); ``before``: the
    steps computing the values it reads that no node outputs (a chain's partial results: variadic Sum's sums)."""

    outputs: tuple[Value, ...]
    step: Step | None = None
    before: tuple[Step, ...] = ()


Check = Callable[[NodeView, Sequence[Value | None]], list[str]]
Lower = Callable[[NodeView, Sequence[Value | None], Device], Lowered]


@dataclass(frozen=True)
class Mapping:
    """How one ONNX operator maps onto opendml.

    ``check`` finds what can be found from types, ranks and sources alone (it runs again on the real
    inputs); ``lower`` turns a node whose check passed into a compiled step, raising an OpenDMLError
    for anything the concrete shapes and values rule out.
    """

    op_type: str
    versions: tuple[int, ...] | None  # the schema versions (since_version) mapped; None: every one
    check: Check
    lower: Lower


_ONNX_TYPES = {v: k for k, v in types._TO_DATA_TYPE.items()}  # each DirectML type's own ONNX type


def newest_types(schema: OperatorSchema, tensor: str) -> frozenset[int]:
    """The ONNX types of ``tensor`` in the operator's newest support row (a device at a lower level refuses the
    rest when the step is created)."""
    newest = max(schema.rows, key=lambda row: row.level)
    return frozenset(_ONNX_TYPES[t] for t in newest.types[tensor])


def problem(node: NodeView, field: str, requirement: str, got: object) -> str:
    return message(node.label, field, requirement, got)


def fail(node: NodeView, field: str, requirement: str, got: object) -> InvalidArgumentError:
    return invalid(node.label, field, requirement, got)


def expect_type(node: NodeView, field: str, value: Value | None, allowed: Collection[int]) -> list[str]:
    """A problem when the value's element type is known and not one opendml maps here."""
    if value is None or not value.onnx_type or value.onnx_type in allowed:
        return []
    return [problem(node, f"Input {field}", f"must have one of the types opendml maps ({types.type_names(allowed)})",
                    types.type_name(value.onnx_type))]


def expect_same_type(node: NodeView, field: str, value: Value | None, other_field: str, other: Value | None
                     ) -> list[str]:
    """A problem when two inputs that ONNX types alike have different known types."""
    if value is None or other is None or not value.onnx_type or not other.onnx_type:
        return []
    if value.onnx_type == other.onnx_type:
        return []
    return [problem(node, f"Input {field}", f"must have {other_field}'s type ({types.type_name(other.onnx_type)})",
                    types.type_name(value.onnx_type))]


def expect_known(node: NodeView, field: str, value: Value | None, why: str) -> list[str]:
    """A problem when a value that becomes a DirectML field is computed by another node."""
    if value is None or value.known_before_running:
        return []
    return [problem(node, f"Input {field}",
                    f"must be known before the graph runs (an initializer, a Constant node or a graph input) {why}",
                    value.describe_source())]


def expect_single_element(node: NodeView, field: str, value: Value | None) -> list[str]:
    """A problem when a value that must be a scalar has a known size other than 1."""
    if value is None or value.shape is None or None in value.shape or math.prod(value.shape) == 1:  # type: ignore[arg-type]
        return []
    return [problem(node, f"Input {field}", "must be a scalar (one element)", f"shape {list(value.shape)}")]


def scalar(value: Value) -> int | float:
    """The one element of a value known before running, as an exact Python number."""
    assert value.host is not None
    return value.host.reshape(-1)[0].item()


def leading_ones(schema: OperatorSchema, device: Device, rank: int) -> int:
    """How many leading 1s the device's support row needs (4-D-only levels), as ONNX Runtime pads."""
    row = schema.row_at(device.feature_level)
    return max(0, row.dimensions[0] - rank) if row is not None else 0


def describe(data_type: DataType, sizes: Sequence[int], strides: Sequence[int] | None = None, *,
             pad: int = 0) -> TensorDesc:
    """A description of ``sizes`` (a scalar as [1]) behind ``pad`` leading 1s.

    A zero size stands in as 1: such an operator is validated but never run (its output is empty).
    """
    sizes = [max(int(n), 1) for n in sizes] or [1]
    if strides is not None:
        strides = [int(s) for s in strides] or [0]
        strides = [0] * pad + strides
    return TensorDesc(data_type, [1] * pad + sizes, strides)


def make_step(node: NodeView, device: Device, desc: object, inputs: Sequence[str | np.ndarray | None],
              *outputs: Value) -> Step:
    """Create (validating against the device's feature level) and compile one operator; ``outputs`` are the
    values its output tensors hold, in the schema's order."""
    compiled = device.compiled(desc)
    fields = compiled.operator.definition.schema.outputs
    assert len(fields) == len(outputs), (compiled.operator.definition.schema.name, len(outputs))
    sizes = []
    for tensor_field in fields:
        out_desc = compiled.operator.tensors[tensor_field.name]
        assert out_desc is not None
        sizes.append(out_desc.total_tensor_size_in_bytes)
    runs = all(out.shape is not None and all(n != 0 for n in out.concrete_shape) for out in outputs)
    return Step(node.label, compiled, tuple(inputs), tuple(out.name for out in outputs), tuple(sizes), runs)


def output_value(node: NodeView, onnx_type: int, shape: tuple[int, ...]) -> Value:
    return Value(node.proto.output[0], onnx_type, tuple(shape), source=node.label)
