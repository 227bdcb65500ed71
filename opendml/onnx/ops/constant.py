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

# value_* attribute -> how it becomes an array (value_string(s) and sparse_value are not mapped).
_SIMPLE = {
    "value_float": lambda v: np.asarray(v, np.float32),
    "value_floats": lambda v: np.asarray(list(v), np.float32),
    "value_int": lambda v: np.asarray(v, np.int64),
    "value_ints": lambda v: np.asarray(list(v), np.int64),
}


def _array(node: NodeView) -> np.ndarray | None:
    if "value" in node.attributes:
        return numpy_helper.to_array(node.attributes["value"])
    for name, convert in _SIMPLE.items():
        if name in node.attributes:
            return convert(node.attributes[name])
    return None


def check_constant(node: NodeView, inputs: Sequence[Value | None]) -> list[str]:
    if "value" in node.attributes or any(name in node.attributes for name in _SIMPLE):
        return []
    return [problem(node, "Attribute", "must be one of value, " + ", ".join(_SIMPLE),
                    ", ".join(node.attributes) or "none")]


def lower_constant(node: NodeView, inputs: Sequence[Value | None], device: Device) -> Lowered:
    array = _array(node)
    assert array is not None
    value = Value(node.proto.output[0], types.onnx_type_of(array.dtype), array.shape, array, CONSTANT)
    return Lowered((value,))


CONSTANT_MAPPING = Mapping("Constant", None, check_constant, lower_constant)
