"""ONNX's comparisons, logical operators and Where, each one declared opendml operator, as DirectML's execution
provider maps them: Equal, Greater, GreaterOrEqual, Less, LessOrEqual (ELEMENT_WISE_LOGICAL_EQUALS, GREATER_THAN,
GREATER_THAN_OR_EQUAL, LESS_THAN, LESS_THAN_OR_EQUAL), And, Or, Xor (LOGICAL_AND, OR, XOR) and Where
(ELEMENT_WISE_IF).

ONNX's BOOL tensors are held as UINT8 0 and 1 (``types.data_type``): a comparison writes its BOOL output as UINT8,
And, Or and Xor read and write UINT8, Where's condition is read as IF's UINT8 ConditionTensor. The operands broadcast
as NumPy's, described as they lie over the output's sizes with zero strides where broadcast (never copied), as the
arithmetic operators' (``binary``). The element types are those of the operator's newest support row; Equal and
Where take BOOL operands too (held as UINT8, which both take).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from ...device import Device
from ...dtypes import DataType
from ...ops import BY_NAME
from .. import types
from ..graph import NodeView, Value
from .base import (
    Lowered,
    Mapping,
    describe,
    expect_same_type,
    expect_type,
    leading_ones,
    make_step,
    newest_types,
    output_value,
    problem,
)
from .binary import _broadcast_strides


def _newest(operator: str, tensor: str) -> frozenset[int]:
    return newest_types(BY_NAME[operator].schema, tensor)


def elementwise_mapping(op_type: str, operator: str, fields: Sequence[str], allowed: Collection[int],
                        output: int | None, condition: bool = False) -> Mapping:
    """``op_type`` as DirectML's ``operator`` over its inputs (ONNX's names ``fields``), broadcast together.
    ``allowed``: the operands' ONNX types (all of one type, after the condition); ``output``: the output's ONNX
    type (None: the operands'); ``condition``: the first input is a BOOL condition (Where's) of a type of its own."""
    first = 1 if condition else 0

    def check(node: NodeView, values: Sequence[Value | None]) -> list[str]:
        if len(values) != len(fields):
            return [problem(node, "inputs", f"must be {len(fields)}", len(values))]
        found = expect_type(node, fields[0], values[0], {types.BOOL}) if condition else []
        found += expect_type(node, fields[first], values[first], allowed)
        for k in range(first + 1, len(fields)):
            found += expect_same_type(node, fields[k], values[k], fields[first], values[first])
        return found

    def lower(node: NodeView, values: Sequence[Value | None], device: Device) -> Lowered:
        assert all(v is not None and v.data_type is not None for v in values)
        present = [v for v in values if v is not None]
        op = BY_NAME[operator]
        shape = tuple(int(n) for n in np.broadcast_shapes(*(v.concrete_shape for v in present)))
        pad = leading_ones(op.schema, device, len(shape))
        tensors = [describe(v.data_type, shape, _broadcast_strides(v.concrete_shape, shape), pad=pad)  # type: ignore[arg-type]
                   for v in present]
        onnx_output = present[first].onnx_type if output is None else output
        out_type = types.data_type(onnx_output)
        assert isinstance(out_type, DataType)
        out = output_value(node, onnx_output, shape)
        desc = op.describe(tuple(tensors), describe(out_type, shape, pad=pad), [])
        return Lowered((out,), make_step(node, device, desc, [v.name for v in present], out))

    return Mapping(op_type, None, check, lower)


def _comparison(op_type: str, operator: str, bools: bool = False) -> Mapping:
    allowed = _newest(operator, "ATensor") | ({types.BOOL} if bools else frozenset())
    return elementwise_mapping(op_type, operator, ("A", "B"), allowed, types.BOOL)


def _logical(op_type: str, operator: str) -> Mapping:
    return elementwise_mapping(op_type, operator, ("A", "B"), {types.BOOL}, types.BOOL)


EQUAL = _comparison("Equal", "ELEMENT_WISE_LOGICAL_EQUALS", bools=True)
GREATER = _comparison("Greater", "ELEMENT_WISE_LOGICAL_GREATER_THAN")
GREATER_OR_EQUAL = _comparison("GreaterOrEqual", "ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL")
LESS = _comparison("Less", "ELEMENT_WISE_LOGICAL_LESS_THAN")
LESS_OR_EQUAL = _comparison("LessOrEqual", "ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL")
AND = _logical("And", "ELEMENT_WISE_LOGICAL_AND")
OR = _logical("Or", "ELEMENT_WISE_LOGICAL_OR")
XOR = _logical("Xor", "ELEMENT_WISE_LOGICAL_XOR")
WHERE = elementwise_mapping("Where", "ELEMENT_WISE_IF", ("condition", "X", "Y"),
                            _newest("ELEMENT_WISE_IF", "ATensor") | {types.BOOL}, None, condition=True)

COMPARISON_MAPPINGS = (EQUAL, GREATER, GREATER_OR_EQUAL, LESS, LESS_OR_EQUAL, AND, OR, XOR, WHERE)
