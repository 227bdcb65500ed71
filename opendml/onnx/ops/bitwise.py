"""ONNX's bitwise operators of two inputs, each one declared opendml operator: BitwiseAnd, BitwiseOr, BitwiseXor
(ELEMENT_WISE_BIT_AND, BIT_OR, BIT_XOR) and BitShift (its ``direction`` attribute, ``"LEFT"`` or ``"RIGHT"``:
ELEMENT_WISE_BIT_SHIFT_LEFT or BIT_SHIFT_RIGHT), broadcast as the arithmetic ones are (``binary.binary_mapping``).
BitShift-11 leaves a count of the width or more undefined; opendml's shifts give 0 there (docs/semantics.md 9b),
as ONNX's reference implementation does.

BitShift-28 takes the signed types too: a right shift is arithmetic (sign-extending), a left shift drops the bits
shifted past the sign bit, and a negative count or one of the width or more gives what the sign extension alone
gives (-1 for a right shift of a negative X, else 0). DirectML's shifts take unsigned types only, so a signed
BitShift is lowered onto them through CAST (integer to integer: the bits kept, docs/semantics.md 9d) to the
unsigned type of its width U: ``X << Y`` is ``cast(cast(X, U) << cast(Y, U), T)`` (a negative count, cast, is at
least the width: 0); ``X >> Y`` is ``cast((cast(X, U) ^ s) >> cast(Y, U) ^ s, T)`` with ``s`` all ones where X
is negative (ELEMENT_WISE_IF of LESS_THAN(X, 0)), else 0: the logical shift of the complement, complemented
again, is the arithmetic shift, and a count of the width or more leaves ``s``. In a compiled graph the steps are
one fused kernel."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...device import Device
from ...dtypes import DataType
from ...ops import BY_NAME
from ...ops.cast import CastDesc
from ...tensor import TensorDesc
from .. import types
from ..graph import NodeView, Value
from .base import (
    Lowered,
    Mapping,
    Step,
    describe,
    expect_same_type,
    leading_ones,
    make_step,
    output_value,
    problem,
)
from .binary import _broadcast_strides, binary_mapping

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
    if values and values[0] is not None and values[0].onnx_type in types.SIGNED:
        if len(values) != 2:
            return [problem(node, "inputs", "must be two", len(values))]
        return expect_same_type(node, "Y", values[1], "X", values[0])
    return _SHIFTS[direction].check(node, values)


def _lower_shift(node: NodeView, values: Sequence[Value | None], device: Device) -> Lowered:
    direction = _direction(node)
    assert direction is not None  # checked
    x = values[0]
    if x is not None and x.onnx_type in types.SIGNED:
        return _SignedShift(node, values, device).lower(direction)
    return _SHIFTS[direction].lower(node, values, device)


_UNSIGNED = {DataType.INT8: DataType.UINT8, DataType.INT16: DataType.UINT16, DataType.INT32: DataType.UINT32,
             DataType.INT64: DataType.UINT64}
_ONNX = {DataType.UINT8: types.UINT8, DataType.UINT16: types.UINT16, DataType.UINT32: types.UINT32,
         DataType.UINT64: types.UINT64}  # a partial result's ONNX type (LESS_THAN's UINT8 is a BOOL held as it)
# Every operator a signed shift's steps use: each step's tensors take the leading 1s the strictest asks for.
_OPERATORS = ("CAST", "ELEMENT_WISE_BIT_SHIFT_LEFT", "ELEMENT_WISE_BIT_SHIFT_RIGHT", "ELEMENT_WISE_LOGICAL_LESS_THAN",
              "ELEMENT_WISE_IF", "ELEMENT_WISE_BIT_XOR")


class _SignedShift:
    """BitShift-28 of a signed X and Y as steps over DirectML's unsigned shifts (the module's docstring)."""

    def __init__(self, node: NodeView, values: Sequence[Value | None], device: Device) -> None:
        x, y = values
        assert x is not None and y is not None and x.data_type is not None
        self.node, self.device, self.x, self.y = node, device, x, y
        self.signed, self.unsigned = x.data_type, _UNSIGNED[x.data_type]
        self.x_shape = tuple(int(n) for n in x.concrete_shape)
        self.y_shape = tuple(int(n) for n in y.concrete_shape)
        self.shape = tuple(int(n) for n in np.broadcast_shapes(self.x_shape, self.y_shape))
        rank = max(len(self.shape), 1)
        self.pad = max(leading_ones(BY_NAME[name].schema, device, rank) for name in _OPERATORS)
        self.steps: list[Step] = []

    def lower(self, direction: str) -> Lowered:
        x_bits = self._cast(self.x.name, self.x_shape, self.signed, self.unsigned)
        y_bits = self._cast(self.y.name, self.y_shape, self.signed, self.unsigned)
        if direction == "LEFT":
            shifted = self._binary("ELEMENT_WISE_BIT_SHIFT_LEFT", x_bits, self.x_shape, y_bits, self.y_shape,
                                   self.shape, self.unsigned)
        else:
            negative = self._binary("ELEMENT_WISE_LOGICAL_LESS_THAN", self.x.name, self.x_shape,
                                    np.zeros(1, self.signed.numpy), (), self.x_shape, DataType.UINT8,
                                    operand_type=self.signed)
            sign = self._if(negative)
            flipped = self._binary("ELEMENT_WISE_BIT_XOR", x_bits, self.x_shape, sign, self.x_shape, self.x_shape,
                                   self.unsigned)
            moved = self._binary("ELEMENT_WISE_BIT_SHIFT_RIGHT", flipped, self.x_shape, y_bits, self.y_shape,
                                 self.shape, self.unsigned)
            shifted = self._binary("ELEMENT_WISE_BIT_XOR", moved, self.shape, sign, self.x_shape, self.shape,
                                   self.unsigned)
        out = output_value(self.node, self.x.onnx_type, self.shape)
        step = self._step(CastDesc(self._describe(self.unsigned, self.shape), self._describe(self.signed, self.shape)),
                          [shifted], out)
        return Lowered((out,), step, tuple(self.steps))

    def _describe(self, data_type: DataType, shape: tuple[int, ...], over: tuple[int, ...] | None = None
                  ) -> TensorDesc:
        """``shape`` packed, or read over ``over`` (zero strides where it is broadcast)."""
        if over is None or over == shape:
            return describe(data_type, shape, pad=self.pad)
        return describe(data_type, over, _broadcast_strides(shape, over), pad=self.pad)

    def _step(self, desc: object, inputs: list[str | np.ndarray], out: Value) -> Step:
        return make_step(self.node, self.device, desc, inputs, out)

    def _value(self, shape: tuple[int, ...], data_type: DataType) -> Value:
        """A partial result, named after the output (as a chain's: ``binary._chain``)."""
        onnx_type = _ONNX.get(data_type, self.x.onnx_type)
        return Value(f"{self.node.proto.output[0]}#{len(self.steps)}", onnx_type, shape, source=self.node.label)

    def _add(self, desc: object, inputs: list[str | np.ndarray], shape: tuple[int, ...], data_type: DataType) -> str:
        out = self._value(shape, data_type)
        self.steps.append(self._step(desc, inputs, out))
        return out.name

    def _cast(self, name: str, shape: tuple[int, ...], source: DataType, target: DataType) -> str:
        return self._add(CastDesc(self._describe(source, shape), self._describe(target, shape)), [name], shape, target)

    def _binary(self, operator: str, a: str | np.ndarray, a_shape: tuple[int, ...], b: str | np.ndarray,
                b_shape: tuple[int, ...], shape: tuple[int, ...], output_type: DataType,
                operand_type: DataType | None = None) -> str:
        operand_type = operand_type or self.unsigned
        desc = BY_NAME[operator].describe((self._describe(operand_type, a_shape, shape),
                                           self._describe(operand_type, b_shape, shape)),
                                          self._describe(output_type, shape), [])
        return self._add(desc, [a, b], shape, output_type)

    def _if(self, negative: str) -> str:
        """All ones where X is negative, else 0, in the unsigned type (IF of two one-element arrays)."""
        u = self.unsigned
        all_ones, zero = np.full(1, np.iinfo(u.numpy).max, u.numpy), np.zeros(1, u.numpy)
        shape = self.x_shape
        desc = BY_NAME["ELEMENT_WISE_IF"].describe(
            (self._describe(DataType.UINT8, shape), self._describe(u, (), shape), self._describe(u, (), shape)),
            self._describe(u, shape), [])
        return self._add(desc, [negative, all_ones, zero], shape, u)


BIT_SHIFT = Mapping("BitShift", None, _check_shift, _lower_shift)

BITWISE_MAPPINGS = (BITWISE_AND, BITWISE_OR, BITWISE_XOR, BIT_SHIFT)
