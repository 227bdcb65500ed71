"""ONNX QuantizeLinear (every version) -> ELEMENT_WISE_QUANTIZE_LINEAR, INT8 and UINT8 outputs.

The scale and the zero point are described over x's sizes as ``quantization.py`` says (per tensor, per
axis, blocked; an absent zero point is 0). The output type is the zero point's, else ``output_dtype``
(QuantizeLinear-21), else UINT8, as ONNX says; ``saturate`` concerns float8 outputs only, and is ignored.

DirectML's ScaleTensor is FLOAT32 for an INT32 input and the input's own type otherwise; an ONNX scale of
another type is refused (QuantizeLinear-19 and -21 type an INT32 x's scale INT32, so those two take no
INT32 x). opendml divides in float32 (docs/semantics.md, QUANTIZE_LINEAR), as ONNX Runtime does;
QuantizeLinear-23 and later divide in ``precision``, by default the scale's type, so from 23 a FLOAT16
scale needs ``precision`` FLOAT. ONNX's reference divides FLOAT16 by FLOAT16 in FLOAT16 at every version
and an INT32 x in float64, so on a quotient near a half it can differ from opendml by one.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...device import Device
from ...dtypes import DataType
from ...ops.quantize import QuantizeDesc
from ...ops.quantize_linear import QUANTIZE_LINEAR_SCHEMA, ElementWiseQuantizeLinearDesc
from .. import types
from ..graph import NodeView, Value, optional
from .base import Lowered, Mapping, describe, expect_type, make_step, output_value, problem
from .quantization import check_block_size, grid, quantization_tensors

# DirectML's: INT8 and UINT8 (QUANTIZE_LINEAR), INT4 and UINT4 (QUANTIZE, feature level 6_3); int16, float8 and
# the like are not.
_OUTPUTS = frozenset({types.INT8, types.UINT8, types.INT4, types.UINT4})


def _x_types(version: int) -> frozenset[int]:
    """The types of x that ONNX allows at ``version`` and DirectML holds (no BFLOAT16)."""
    return frozenset({types.FLOAT, types.INT32} | ({types.FLOAT16} if version >= 19 else set()))


def _scale_problems(node: NodeView, x: Value | None, scale: Value | None) -> list[str]:
    """DirectML's ScaleTensor: FLOAT32 for an INT32 input, else the input's type."""
    if x is None or scale is None or x.onnx_type not in types.FLOATS | {types.INT32} or not scale.onnx_type:
        return expect_type(node, "y_scale", scale, types.FLOATS)
    wanted = types.FLOAT if x.onnx_type == types.INT32 else x.onnx_type
    if scale.onnx_type == wanted:
        return []
    why = "FLOAT32 for an INT32 InputTensor" if x.onnx_type == types.INT32 else "the InputTensor's data type"
    return [problem(node, "Input y_scale", f"must be {types.type_name(wanted)} for x of type "
                    f"{types.type_name(x.onnx_type)} (DirectML's ScaleTensor takes {why})",
                    types.type_name(scale.onnx_type))]


def _output_problems(node: NodeView, zero_point: Value | None) -> list[str]:
    output_dtype = int(node.attribute("output_dtype", 0))
    if not output_dtype:
        return []
    if output_dtype not in _OUTPUTS:
        return [problem(node, "output_dtype", f"must be one of the types opendml maps ({types.type_names(_OUTPUTS)})",
                        types.type_name(output_dtype))]
    if zero_point is not None and zero_point.onnx_type and zero_point.onnx_type != output_dtype:
        return [problem(node, "output_dtype", f"must be y_zero_point's type ({types.type_name(zero_point.onnx_type)})",
                        types.type_name(output_dtype))]
    return []


def _precision_problems(node: NodeView, scale: Value | None) -> list[str]:
    """From QuantizeLinear-23 the division is in ``precision`` (absent: the scale's type); opendml's is float32."""
    assert node.version is not None
    precision = int(node.attribute("precision", 0))
    if node.version < 23 or precision == types.FLOAT:
        return []
    if precision:
        got = types.type_name(precision)
    elif scale is not None and scale.onnx_type and scale.onnx_type != types.FLOAT:
        got = f"none (so y_scale's type, {types.type_name(scale.onnx_type)})"
    else:
        return []
    return [problem(node, "precision", "must be FLOAT (opendml divides in float32; an absent precision is "
                    "y_scale's type)", got)]


def check_quantize_linear(node: NodeView, inputs: Sequence[Value | None]) -> list[str]:
    assert node.version is not None
    x, scale, zero_point = inputs[0], inputs[1], optional(inputs, 2)
    return (expect_type(node, "x", x, _x_types(node.version)) + _scale_problems(node, x, scale)
            + expect_type(node, "y_zero_point", zero_point, _OUTPUTS) + _output_problems(node, zero_point)
            + _precision_problems(node, scale) + check_block_size(node))


def output_type(node: NodeView, zero_point: Value | None) -> int:
    """The zero point's type, else ``output_dtype``, else UINT8 (ONNX's rule)."""
    if zero_point is not None:
        return zero_point.onnx_type
    return int(node.attribute("output_dtype", 0)) or types.UINT8


def lower_quantize_linear(node: NodeView, inputs: Sequence[Value | None], device: Device) -> Lowered:
    x, scale, zero_point = inputs[0], inputs[1], optional(inputs, 2)
    assert x is not None and scale is not None and x.data_type is not None and scale.data_type is not None
    shape = x.concrete_shape
    out_type = output_type(node, zero_point)
    out_data_type = types.data_type(out_type)
    assert isinstance(out_data_type, DataType)
    if out_data_type.is_sub_byte:
        return _lower_quantize(node, x, scale, zero_point, out_type, device)
    shared = grid(node, shape, [("y_scale", scale), ("y_zero_point", zero_point)], QUANTIZE_LINEAR_SCHEMA, device)
    scale_source, scale_desc = shared.operand(node, "y_scale", scale, scale.data_type)
    zp_source, zp_desc = shared.zero_point(node, "y_zero_point", zero_point, out_data_type, device)
    out = output_value(node, out_type, shape)
    desc = ElementWiseQuantizeLinearDesc(shared.describe(x.data_type), scale_desc, zp_desc,
                                         shared.describe(out_data_type))
    return Lowered((out,), make_step(node, device, desc, [x.name, scale_source, zp_source], out))


def _lower_quantize(node: NodeView, x: Value, scale: Value, zero_point: Value | None, out_type: int,
                    device: Device) -> Lowered:
    """A 4-bit output: QUANTIZE (``quantization.py``)."""
    out_data_type = types.data_type(out_type)
    assert x.data_type is not None and out_data_type is not None
    shape = x.concrete_shape
    kind, tensors, sources = quantization_tensors(node, shape, scale, "y_scale", zero_point, "y_zero_point",
                                                  out_data_type)
    out = output_value(node, out_type, shape)
    desc = QuantizeDesc(describe(x.data_type, shape), kind, tensors, describe(out_data_type, shape))
    return Lowered((out,), make_step(node, device, desc, [x.name, *sources, *[None] * (2 - len(sources))], out))


QUANTIZE_LINEAR = Mapping("QuantizeLinear", (10, 13, 19, 21, 23, 24, 25, 28), check_quantize_linear,
                          lower_quantize_linear)
