"""ONNX Constant (every version): a value known before the graph runs; no operator, nothing on the device.

Its value is uploaded only where an operator reads it, and can be a bound that DirectML needs as a field
(Clip's min and max).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from onnx import numpy_helper

from ...device import Device
from .. import types
from ..graph import CONSTANT, NodeView, Value
from .base import Lowered, Mapping, problem

# value_* attribute -> its ONNX element type (value_string(s) and sparse_value are not mapped).
_SIMPLE = {"value_float": types.FLOAT, "value_floats": types.FLOAT, "value_int": types.INT64,
           "value_ints": types.INT64}


def _array(node: NodeView) -> tuple[np.ndarray, int] | None:
    """The constant and its ONNX element type."""
    if "value" in node.attributes:
        tensor = node.attributes["value"]
        return numpy_helper.to_array(tensor), tensor.data_type
    for name, onnx_type in _SIMPLE.items():
        if name in node.attributes:
            value = node.attributes[name]
            listed = list(value) if isinstance(value, (list, tuple)) else value
            return np.asarray(listed, types.data_type(onnx_type).numpy), onnx_type  # type: ignore[union-attr]
    return None


def check_constant(node: NodeView, inputs: Sequence[Value | None]) -> list[str]:
    if "value" in node.attributes or any(name in node.attributes for name in _SIMPLE):
        return []
    return [problem(node, "Attribute", "must be one of value, " + ", ".join(_SIMPLE),
                    ", ".join(node.attributes) or "none")]


def lower_constant(node: NodeView, inputs: Sequence[Value | None], device: Device) -> Lowered:
    found = _array(node)
    assert found is not None
    array, onnx_type = found
    value = Value(node.proto.output[0], onnx_type, array.shape, array, CONSTANT)
    return Lowered((value,))


CONSTANT_MAPPING = Mapping("Constant", None, check_constant, lower_constant)
