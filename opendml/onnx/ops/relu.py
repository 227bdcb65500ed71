"""ONNX Relu (every version) -> ELEMENT_WISE_THRESHOLD with Min 0.

THRESHOLD has no 64-bit types, so INT64 (Relu-14) maps onto ELEMENT_WISE_CLIP1 with Min 0 and Max the
type's largest value, which is the same function. A NaN element stays NaN, as ONNX's ``max(x, 0)``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...device import Device
from ...dtypes import DataType
from ...ops.clip import CLIP1_SCHEMA, ElementWiseClip1Desc
from ...ops.threshold import THRESHOLD_SCHEMA, ElementWiseThresholdDesc
from .. import types
from ..graph import NodeView, Value
from .base import Lowered, Mapping, describe, expect_type, leading_ones, make_step, output_value


def _allowed(version: int) -> frozenset[int]:
    return types.FLOATS | types.SIGNED if version >= 14 else types.FLOATS


def check_relu(node: NodeView, inputs: Sequence[Value | None]) -> list[str]:
    assert node.version is not None
    return expect_type(node, "X", inputs[0], _allowed(node.version))


def lower_relu(node: NodeView, inputs: Sequence[Value | None], device: Device) -> Lowered:
    x = inputs[0]
    assert x is not None and x.data_type is not None
    data_type, shape = x.data_type, x.concrete_shape
    out = output_value(node, x.onnx_type, shape)
    if data_type == DataType.INT64:
        tensor = describe(data_type, shape, pad=leading_ones(CLIP1_SCHEMA, device, len(shape)))
        desc: object = ElementWiseClip1Desc(tensor, tensor, data_type, 0, data_type.integer_range[1])
    else:
        tensor = describe(data_type, shape, pad=leading_ones(THRESHOLD_SCHEMA, device, len(shape)))
        desc = ElementWiseThresholdDesc(tensor, tensor, 0.0)
    return Lowered((out,), make_step(node, device, desc, [x.name], out))


RELU = Mapping("Relu", (1, 6, 13, 14), check_relu, lower_relu)
