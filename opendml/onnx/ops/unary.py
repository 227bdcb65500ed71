"""ONNX's unary operators that are one declared opendml operator each (``opendml.ops.DECLARED``), as DirectML's
execution provider maps them: Identity, Abs, Neg, Ceil, Floor, Round (ties to even), Sign, Reciprocal, Sqrt, BitwiseNot,
LeakyRelu, ThresholdedRelu, HardSigmoid and HardSwish.

One generic mapping per ONNX operator: the element types are those of the DirectML operator's newest support
row (a device at a lower level refuses the rest when the step is created), the ONNX attributes become the
description's fields (with ONNX's defaults), and the tensor is described as it lies, with the leading 1s a 4-D
level asks for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...device import Device
from ...ops import BY_NAME
from ...ops.definition import OperatorDefinition
from .. import types
from ..graph import NodeView, Value
from .base import Lowered, Mapping, describe, expect_type, leading_ones, make_step, output_value

_ONNX_TYPES = {v: k for k, v in types._TO_DATA_TYPE.items()}


def _allowed(op: OperatorDefinition) -> frozenset[int]:
    newest = max(op.schema.rows, key=lambda row: row.level)
    return frozenset(_ONNX_TYPES[t] for t in newest.types["InputTensor"])


def unary_mapping(op_type: str, operator: str, attributes: dict[str, tuple[str, Any]] | None = None,
                  fixed: dict[str, Any] | None = None) -> Mapping:
    """``op_type`` as DirectML's ``operator``; ``attributes``: ONNX attribute -> (functional keyword, ONNX's
    default); ``fixed``: keyword values ONNX does not let a model choose (HardSwish's Alpha and Beta)."""
    op = BY_NAME[operator]
    assert op.api is not None and op.api.output is None  # the output takes X's type
    allowed = _allowed(op)

    def check(node: NodeView, inputs: Sequence[Value | None]) -> list[str]:
        return expect_type(node, "X", inputs[0], allowed)

    def lower(node: NodeView, inputs: Sequence[Value | None], device: Device) -> Lowered:
        x = inputs[0]
        assert x is not None and x.data_type is not None and op.api is not None
        shape = x.concrete_shape
        tensor = describe(x.data_type, shape, pad=leading_ones(op.schema, device, len(shape)))
        given = {keyword: node.attribute(name, default) for name, (keyword, default) in (attributes or {}).items()}
        values = [{**given, **(fixed or {})}.get(f.python, f.default) for f in op.api.keywords]
        values = [None if f.kind == "scale_bias" else v for f, v in zip(op.api.keywords, values)]
        out = output_value(node, x.onnx_type, shape)
        return Lowered((out,), make_step(node, device, op.describe(tensor, tensor, values), [x.name], out))

    return Mapping(op_type, None, check, lower)


IDENTITY = unary_mapping("Identity", "ELEMENT_WISE_IDENTITY")
ABS = unary_mapping("Abs", "ELEMENT_WISE_ABS")
NEG = unary_mapping("Neg", "ELEMENT_WISE_NEGATE")
CEIL = unary_mapping("Ceil", "ELEMENT_WISE_CEIL")
FLOOR = unary_mapping("Floor", "ELEMENT_WISE_FLOOR")
ROUND = unary_mapping("Round", "ELEMENT_WISE_ROUND", fixed={"rounding_mode": "HALVES_TO_NEAREST_EVEN"})
SIGN = unary_mapping("Sign", "ELEMENT_WISE_SIGN")
RECIPROCAL = unary_mapping("Reciprocal", "ELEMENT_WISE_RECIP")
SQRT = unary_mapping("Sqrt", "ELEMENT_WISE_SQRT")
BITWISE_NOT = unary_mapping("BitwiseNot", "ELEMENT_WISE_BIT_NOT")
LEAKY_RELU = unary_mapping("LeakyRelu", "ACTIVATION_LEAKY_RELU", {"alpha": ("alpha", 0.01)})
THRESHOLDED_RELU = unary_mapping("ThresholdedRelu", "ACTIVATION_THRESHOLDED_RELU", {"alpha": ("alpha", 1.0)})
HARD_SIGMOID = unary_mapping("HardSigmoid", "ACTIVATION_HARD_SIGMOID", {"alpha": ("alpha", 0.2), "beta": ("beta", 0.5)})
HARD_SWISH = unary_mapping("HardSwish", "ACTIVATION_HARD_SWISH", fixed={"alpha": 1 / 6, "beta": 0.5})

UNARY_MAPPINGS = (IDENTITY, ABS, NEG, CEIL, FLOOR, ROUND, SIGN, RECIPROCAL, SQRT, BITWISE_NOT, LEAKY_RELU,
                  THRESHOLDED_RELU, HARD_SIGMOID, HARD_SWISH)
