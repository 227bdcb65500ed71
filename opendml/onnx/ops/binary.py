"""ONNX's arithmetic operators of two inputs, each one declared opendml operator of the binary family, as DirectML's
execution provider maps them: Add, Sub, Mul, Div, Min, Max, Sum (ADD) and Mod (fmod 0: MODULUS_FLOOR, Python's %;
fmod 1: MODULUS_TRUNCATE, C's fmod); Mean and PRelu.

ONNX broadcasts as NumPy does; DirectML as its page says: every tensor has the output's sizes, and an operand read
again along a dimension has a zero stride there. So each input is described as it lies, over the output's sizes,
with zero strides where it is broadcast (never copied), and the leading 1s a 4-D level asks for. The element types
are those of the operator's newest support row (a device at a lower level refuses the rest when the step is
created). Min, Max and Sum take any number of inputs: chained binary operators, left to right (one input: an
ELEMENT_WISE_IDENTITY). Mean is ONNX's n-ary mean, not DirectML's binary MEAN: the inputs chained by ADD, then one
ELEMENT_WISE_DIVIDE by n, as ONNX's reference computes it (the sum in the inputs' type, divided by the count: a
division by 3 rounds once, where a product by 1/3 would round 1/3 first). PRelu is ACTIVATION_PARAMETERIZED_RELU,
its slope broadcast to X's shape (ONNX's unidirectional broadcasting).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...device import Device
from ...errors import invalid
from ...ops import BY_NAME
from ...ops.definition import OperatorDefinition
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
    """``op_type`` as DirectML's ``operator`` (or, for Mod, one per value of its ``fmod`` attribute); ``variadic``:
    any number of inputs, chained left to right."""
    operators = operator if isinstance(operator, dict) else {0: operator}

    def chosen(node: NodeView) -> str:
        return operators[int(node.attribute("fmod", 0))] if op_type == "Mod" else operators[0]

    def check(node: NodeView, values: Sequence[Value | None]) -> list[str]:
        if not variadic and len(values) != 2:
            return [problem(node, "inputs", "must be two", len(values))]
        if variadic and not values:
            return [problem(node, "inputs", "must be one or more", 0)]
        if op_type == "Mod" and int(node.attribute("fmod", 0)) not in operators:
            return [problem(node, "fmod", "must be 0 or 1", node.attribute("fmod"))]
        return _types_problems(node, values, chosen(node), names=None if variadic else ("A", "B"))

    def lower(node: NodeView, values: Sequence[Value | None], device: Device) -> Lowered:
        if len(values) == 1:
            return _identity(node, values[0], device)
        return _chain(node, [BY_NAME[chosen(node)]] * (len(values) - 1), list(values), device)

    return Mapping(op_type, None, check, lower)


def _types_problems(node: NodeView, values: Sequence[Value | None], operator: str,
                    allowed: frozenset[int] | None = None, names: tuple[str, str] | None = None) -> list[str]:
    """Every input of one type, which the operator's newest row takes (``allowed``: ONNX's narrower list);
    ``names``: ONNX's names of two inputs (A, B; X, slope), else a variadic input's data_0, data_1..."""
    op = BY_NAME[operator]
    types_taken = newest_types(op.schema, op.schema.inputs[0].name)
    labels = names or tuple(f"data_{k}" for k in range(len(values)))
    found = expect_type(node, labels[0], values[0], types_taken if allowed is None else types_taken & allowed)
    for k, value in enumerate(values[1:], 1):
        found += expect_same_type(node, labels[k], value, labels[0], values[0])
    return found


def _identity(node: NodeView, x: Value | None, device: Device) -> Lowered:
    """One input of a variadic operator: its value, through ELEMENT_WISE_IDENTITY."""
    assert x is not None and x.data_type is not None
    shape = tuple(int(n) for n in x.concrete_shape)
    op = BY_NAME["ELEMENT_WISE_IDENTITY"]
    pad = leading_ones(op.schema, device, len(shape))
    tensor = describe(x.data_type, shape, pad=pad)
    out = output_value(node, x.onnx_type, shape)
    return Lowered((out,), make_step(node, device, op.describe((tensor,), tensor, [None]), [x.name], out))


Operand = Value | np.ndarray


def _chain(node: NodeView, ops: Sequence[OperatorDefinition], operands: Sequence[Operand | None],
           device: Device, shape_of_output: tuple[int, ...] | None = None) -> Lowered:
    """``ops[k]`` of the running result and operand ``k + 1``, left to right; each partial result over the
    broadcast shape so far (the last: ``shape_of_output`` where given), a computed value named after the output.
    An operand given as an array (Mean's count) is bound as the mapping made it, read through zero strides."""
    first = operands[0]
    assert isinstance(first, Value) and first.data_type is not None
    data_type, onnx_type = first.data_type, first.onnx_type
    name: str | np.ndarray = first.name
    shape = tuple(int(n) for n in first.concrete_shape)
    steps = []
    for k, (op, operand) in enumerate(zip(ops, operands[1:])):
        assert operand is not None
        other_shape = tuple(int(n) for n in (operand.shape if isinstance(operand, np.ndarray)
                                             else operand.concrete_shape))
        result = tuple(int(n) for n in np.broadcast_shapes(shape, other_shape))
        if k == len(ops) - 1 and shape_of_output is not None:
            result = shape_of_output
        pad = leading_ones(op.schema, device, len(result))
        tensors = [describe(data_type, result, _broadcast_strides(s, result), pad=pad) for s in (shape, other_shape)]
        last = k == len(ops) - 1
        out = output_value(node, onnx_type, result) if last else Value(
            f"{node.proto.output[0]}#{k}", onnx_type, result, source=node.label)
        desc = op.describe(tuple(tensors), describe(data_type, result, pad=pad), [])
        source = operand if isinstance(operand, np.ndarray) else operand.name
        steps.append(make_step(node, device, desc, [name, source], out))
        name, shape = out.name, result
    return Lowered((out,), steps[-1], tuple(steps[:-1]))


def _mean_check(node: NodeView, values: Sequence[Value | None]) -> list[str]:
    if not values:
        return [problem(node, "inputs", "must be one or more", 0)]
    return _types_problems(node, values, "ELEMENT_WISE_DIVIDE", frozenset({types.FLOAT, types.FLOAT16}))


def _mean_lower(node: NodeView, values: Sequence[Value | None], device: Device) -> Lowered:
    """The inputs chained by ADD, then one DIVIDE by their count (an array of the inputs' type, one element)."""
    first = values[0]
    assert first is not None and first.data_type is not None
    count = np.array([len(values)], first.data_type.numpy)
    ops = [BY_NAME["ELEMENT_WISE_ADD"]] * (len(values) - 1) + [BY_NAME["ELEMENT_WISE_DIVIDE"]]
    return _chain(node, ops, [*values, count], device)


def _prelu_check(node: NodeView, values: Sequence[Value | None]) -> list[str]:
    if len(values) != 2:
        return [problem(node, "inputs", "must be two", len(values))]
    return _types_problems(node, values, "ACTIVATION_PARAMETERIZED_RELU", names=("X", "slope"))


def _prelu_lower(node: NodeView, values: Sequence[Value | None], device: Device) -> Lowered:
    """ACTIVATION_PARAMETERIZED_RELU over X's shape: the slope must broadcast to it (unidirectionally)."""
    x, slope = values
    assert x is not None and slope is not None
    shape = tuple(int(n) for n in x.concrete_shape)
    if tuple(np.broadcast_shapes(shape, tuple(int(n) for n in slope.concrete_shape))) != shape:
        raise invalid(node.label, "slope shape", f"must broadcast to X's shape {shape} (unidirectional)",
                      tuple(slope.concrete_shape))
    return _chain(node, [BY_NAME["ACTIVATION_PARAMETERIZED_RELU"]], [x, slope], device, shape)


ADD = binary_mapping("Add", "ELEMENT_WISE_ADD")
SUB = binary_mapping("Sub", "ELEMENT_WISE_SUBTRACT")
MUL = binary_mapping("Mul", "ELEMENT_WISE_MULTIPLY")
DIV = binary_mapping("Div", "ELEMENT_WISE_DIVIDE")
MIN = binary_mapping("Min", "ELEMENT_WISE_MIN", variadic=True)
MAX = binary_mapping("Max", "ELEMENT_WISE_MAX", variadic=True)
SUM = binary_mapping("Sum", "ELEMENT_WISE_ADD", variadic=True)
MOD = binary_mapping("Mod", {0: "ELEMENT_WISE_MODULUS_FLOOR", 1: "ELEMENT_WISE_MODULUS_TRUNCATE"})
def _pow_check(node: NodeView, values: Sequence[Value | None]) -> list[str]:
    if len(values) != 2:
        return [problem(node, "inputs", "must be two", len(values))]
    return _types_problems(node, values, "ELEMENT_WISE_POW", names=("X", "Y"))


def _pow_lower(node: NodeView, values: Sequence[Value | None], device: Device) -> Lowered:
    """ELEMENT_WISE_POW (correctly rounded) of X and Y broadcast: one type for both (ONNX allows two)."""
    return _chain(node, [BY_NAME["ELEMENT_WISE_POW"]], list(values), device)


MEAN = Mapping("Mean", None, _mean_check, _mean_lower)
POW = Mapping("Pow", None, _pow_check, _pow_lower)
PRELU = Mapping("PRelu", None, _prelu_check, _prelu_lower)

BINARY_MAPPINGS = (ADD, SUB, MUL, DIV, MIN, MAX, SUM, MOD, MEAN, PRELU, POW)
