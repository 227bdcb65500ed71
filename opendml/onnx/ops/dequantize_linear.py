"""ONNX DequantizeLinear (every version) -> ELEMENT_WISE_DEQUANTIZE_LINEAR.

The scale and the zero point are described over x's sizes as ``quantization.py`` says (per tensor, per
axis, blocked; an absent zero point is 0). ``output_dtype`` (DequantizeLinear-23) must be the scale's
type, since DirectML's ScaleTensor and OutputTensor share one. opendml computes ``x - zero_point``
exactly and rounds once to float32; ONNX's reference rounds x and the zero point to float32 first, which
differs only for int32 values beyond 2^24.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...device import Device
from ...ops.dequantize import DequantizeDesc
from ...ops.dequantize_linear import DEQUANTIZE_LINEAR_SCHEMA, ElementWiseDequantizeLinearDesc
from .. import types
from ..graph import NodeView, Value, optional
from .base import Lowered, Mapping, describe, expect_same_type, expect_type, make_step, output_value, problem
from .quantization import check_block_size, grid, quantization_tensors

# The integer types of ONNX's T1 that DirectML holds (INT4 and UINT4 from feature level 6_3, through
# DEQUANTIZE); float8, int2 and float4 have no DirectML type.
_X_TYPES = frozenset({types.INT8, types.UINT8, types.INT16, types.UINT16, types.INT32, types.INT4, types.UINT4})


def check_dequantize_linear(node: NodeView, inputs: Sequence[Value | None]) -> list[str]:
    x, scale, zero_point = inputs[0], inputs[1], optional(inputs, 2)
    problems = (expect_type(node, "x", x, _X_TYPES) + expect_type(node, "x_scale", scale, types.FLOATS)
                + expect_type(node, "x_zero_point", zero_point, _X_TYPES))
    if not problems:
        problems += expect_same_type(node, "x_zero_point", zero_point, "x", x)
    output_dtype = int(node.attribute("output_dtype", 0))
    if output_dtype and scale is not None and scale.onnx_type and output_dtype != scale.onnx_type:
        problems.append(problem(node, "output_dtype", "must be x_scale's type "
                                f"({types.type_name(scale.onnx_type)}): DirectML's ScaleTensor and OutputTensor "
                                "share one data type", types.type_name(output_dtype)))
    return problems + check_block_size(node)


def lower_dequantize_linear(node: NodeView, inputs: Sequence[Value | None], device: Device) -> Lowered:
    x, scale, zero_point = inputs[0], inputs[1], optional(inputs, 2)
    assert x is not None and scale is not None and x.data_type is not None and scale.data_type is not None
    shape = x.concrete_shape
    if x.data_type.is_sub_byte:
        return _lower_dequantize(node, x, scale, zero_point, device)
    shared = grid(node, shape, [("x_scale", scale), ("x_zero_point", zero_point)], DEQUANTIZE_LINEAR_SCHEMA, device)
    scale_source, scale_desc = shared.operand(node, "x_scale", scale, scale.data_type)
    zp_source, zp_desc = shared.zero_point(node, "x_zero_point", zero_point, x.data_type, device)
    out = output_value(node, scale.onnx_type, shape)
    desc = ElementWiseDequantizeLinearDesc(shared.describe(x.data_type), scale_desc, zp_desc,
                                           shared.describe(scale.data_type))
    return Lowered((out,), make_step(node, device, desc, [x.name, scale_source, zp_source], out))


def _lower_dequantize(node: NodeView, x: Value, scale: Value, zero_point: Value | None, device: Device) -> Lowered:
    """4-bit x: DEQUANTIZE (``quantization.py``)."""
    assert x.data_type is not None and scale.data_type is not None
    shape = x.concrete_shape
    kind, tensors, sources = quantization_tensors(node, shape, scale, "x_scale", zero_point, "x_zero_point",
                                                  x.data_type)
    out = output_value(node, scale.onnx_type, shape)
    desc = DequantizeDesc(describe(x.data_type, shape), kind, tensors, describe(scale.data_type, shape))
    return Lowered((out,), make_step(node, device, desc, [x.name, *sources, *[None] * (2 - len(sources))], out))


DEQUANTIZE_LINEAR = Mapping("DequantizeLinear", (10, 13, 19, 21, 23, 24, 25, 28), check_dequantize_linear,
                            lower_dequantize_linear)
