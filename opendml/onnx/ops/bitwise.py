"""ONNX's bitwise operators of two inputs, each one declared opendml operator: BitwiseAnd, BitwiseOr, BitwiseXor
(ELEMENT_WISE_BIT_AND, BIT_OR, BIT_XOR) and BitShift (its ``direction`` attribute, ``"LEFT"`` or ``"RIGHT"``:
ELEMENT_WISE_BIT_SHIFT_LEFT or BIT_SHIFT_RIGHT), broadcast as the arithmetic ones are (``binary.binary_mapping``).
ONNX leaves a count of the width or more undefined; opendml's shifts give 0 there (docs/semantics.md 9b), as
ONNX's reference implementation does."""

from __future__ import annotations

from collections.abc import Sequence

from ...device import Device
from ..graph import NodeView, Value
from .base import Lowered, Mapping, problem
from .binary import binary_mapping

BITWISE_AND = binary_mapping("BitwiseAnd", "ELEMENT_WISE_BIT_AND")
BITWISE_OR = binary_mapping("BitwiseOr", "ELEMENT_WISE_BIT_OR")
BITWISE_XOR = binary_mapping("BitwiseXor", "ELEMENT_WISE_BIT_XOR")

_SHIFTS = {"LEFT": binary_mapping("BitShift", "ELEMENT_WISE_BIT_SHIFT_LEFT"),
           "RIGHT": binary_mapping("BitShift", "ELEMENT_WISE_BIT_SHIFT_RIGHT")}


def _direction(node: NodeView) -> str | None:
    value = node.attribute("direction")
    text = value.decode() if isinstance(value, bytes) else value
    return text if text in _SHIFTS else None


def _check_shift(node: NodeView, values: Sequence[Value | None]) -> list[str]:
    direction = _direction(node)
    if direction is None:
        return [problem(node, "direction", 'must be "LEFT" or "RIGHT"', node.attribute("direction"))]
    return _SHIFTS[direction].check(node, values)


def _lower_shift(node: NodeView, values: Sequence[Value | None], device: Device) -> Lowered:
    direction = _direction(node)
    assert direction is not None  # checked
    return _SHIFTS[direction].lower(node, values, device)


BIT_SHIFT = Mapping("BitShift", None, _check_shift, _lower_shift)

BITWISE_MAPPINGS = (BITWISE_AND, BITWISE_OR, BITWISE_XOR, BIT_SHIFT)
