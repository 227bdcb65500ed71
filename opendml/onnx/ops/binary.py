"""ONNX's arithmetic operators of two inputs, each one declared opendml operator of the binary family, as DirectML's
execution provider maps them: Add, Sub, Mul, Div, Min, Max, Sum (ADD) and Mod (fmod 0: MODULUS_FLOOR, Python's %;
fmod 1: MODULUS_TRUNCATE, C's fmod).

ONNX broadcasts as NumPy does; DirectML as its page says: every tensor has the output's sizes, and an operand read
again along a dimension has a zero stride there. So each input is described as it lies, over the output's sizes,
with zero strides where it is broadcast (never copied), and the leading 1s a 4-D level asks for. The element types
are those of the operator's newest support row (a device at a lower level refuses the rest when the step is
created). Min, Max and Sum take any number of inputs in ONNX; two are mapped here (one, or three and more, are
refused by name).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...device import Device
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
    output_value,
    problem,
)

_ONNX_TYPES = {v: k for k, v in types._TO_DATA_TYPE.items()}


def _broadcast_strides(shape: Sequence[int], out: Sequence[int]) -> list[int]:
    """Element strides of a packed tensor of ``shape`` read over ``out`` (NumPy's broadcast: shapes aligned on the
    right), zero along every dimension it is broadcast on."""
    padded = [1] * (len(out) - len(shape)) + list(shape)
    strides, step = [0] * len(out), 1
    for d in range(len(out) - 1, -1, -1):
        strides[d] = step if padded[d] != 1 else 0
        step *= padded[d]
    return strides


def binary_mapping(op_type: str, operator: str | dict[int, str], variadic: bool = False) -> Mapping:
    """``op_type`` as DirectML's ``operator`` (or, for Mod, one per value of its ``fmod`` attribute)."""
    operators = operator if isinstance(operator, dict) else {0: operator}

    def chosen(node: NodeView) -> str:
        return operators[int(node.attribute("fmod", 0))] if op_type == "Mod" else operators[0]

    def check(node: NodeView, values: Sequence[Value | None]) -> list[str]:
        if len(values) != 2:
            requirement = "must be two (opendml maps two operands, one binary operator)" if variadic else "must be two"
            return [problem(node, "inputs", requirement, len(values))]
        if op_type == "Mod" and int(node.attribute("fmod", 0)) not in operators:
            return [problem(node, "fmod", "must be 0 or 1", node.attribute("fmod"))]
        op = BY_NAME[chosen(node)]
        newest = max(op.schema.rows, key=lambda row: row.level)
        allowed = frozenset(_ONNX_TYPES[t] for t in newest.types["ATensor"])
        return (expect_type(node, "A", values[0], allowed) + expect_same_type(node, "B", values[1], "A", values[0]))

    def lower(node: NodeView, values: Sequence[Value | None], device: Device) -> Lowered:
        a, b = values
        assert a is not None and b is not None and a.data_type is not None
        op = BY_NAME[chosen(node)]
        shape = tuple(int(n) for n in np.broadcast_shapes(a.concrete_shape, b.concrete_shape))
        pad = leading_ones(op.schema, device, len(shape))
        tensors = [describe(a.data_type, shape, _broadcast_strides(v.concrete_shape, shape), pad=pad) for v in (a, b)]
        out = output_value(node, a.onnx_type, shape)
        desc = op.describe(tuple(tensors), describe(a.data_type, shape, pad=pad), [])
        return Lowered((out,), make_step(node, device, desc, [a.name, b.name], out))

    return Mapping(op_type, None, check, lower)


ADD = binary_mapping("Add", "ELEMENT_WISE_ADD")
SUB = binary_mapping("Sub", "ELEMENT_WISE_SUBTRACT")
MUL = binary_mapping("Mul", "ELEMENT_WISE_MULTIPLY")
DIV = binary_mapping("Div", "ELEMENT_WISE_DIVIDE")
MIN = binary_mapping("Min", "ELEMENT_WISE_MIN", variadic=True)
MAX = binary_mapping("Max", "ELEMENT_WISE_MAX", variadic=True)
SUM = binary_mapping("Sum", "ELEMENT_WISE_ADD", variadic=True)
MOD = binary_mapping("Mod", {0: "ELEMENT_WISE_MODULUS_FLOOR", 1: "ELEMENT_WISE_MODULUS_TRUNCATE"})

BINARY_MAPPINGS = (ADD, SUB, MUL, DIV, MIN, MAX, SUM, MOD)
