"""ONNX ArgMin (every version) -> ARGMIN over one axis, INT64 indices.

``select_last_index`` (ArgMin-12) picks AxisDirection DECREASING; ``keepdims = 0`` drops the reduced
axis, which costs nothing: the packed output's bytes are the same either way.

NaN: ONNX's reference (NumPy's argmin) returns the first NaN of a row; opendml's ARGMIN ignores NaN
elements, as DirectML is reported to do, and returns the smallest number's index. ONNX's conformance
data has no NaN.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...device import Device
from ...dtypes import DataType
from ...enums import AxisDirection
from ...errors import InvalidArgumentError
from ...ops.argmin import ARGMIN_SCHEMA, ArgMinDesc
from .. import types
from ..graph import NodeView, Value
from .base import Lowered, Mapping, describe, expect_type, fail, leading_ones, make_step, output_value, problem

_ALLOWED = types.FLOATS | types.INTEGERS


def _axis(node: NodeView, rank: int) -> int:
    """The reduced axis in [0, rank); negative axes count from the end from ArgMin-11 on."""
    axis = int(node.attribute("axis", 0))
    lowest = -rank if node.version is not None and node.version >= 11 else 0
    if not lowest <= axis < rank:
        raise fail(node, "axis", f"must be in [{lowest}, {rank - 1}] for data of rank {rank}", axis)
    return axis % rank


def check_argmin(node: NodeView, inputs: Sequence[Value | None]) -> list[str]:
    problems = expect_type(node, "data", inputs[0], _ALLOWED)
    x = inputs[0]
    if x is not None and x.shape is not None:
        if not x.shape:
            problems.append(problem(node, "Input data", "must have rank 1 or more", "a scalar"))
        else:
            try:
                _axis(node, len(x.shape))
            except InvalidArgumentError as error:
                problems.append(str(error))
    return problems


def lower_argmin(node: NodeView, inputs: Sequence[Value | None], device: Device) -> Lowered:
    x = inputs[0]
    assert x is not None and x.data_type is not None
    shape = x.concrete_shape
    axis = _axis(node, len(shape))
    if shape[axis] == 0:
        raise fail(node, "Input data", f"must not be empty along axis {axis}", f"shape {list(shape)}")
    kept = (*shape[:axis], 1, *shape[axis + 1:])
    keepdims = int(node.attribute("keepdims", 1)) != 0
    out = output_value(node, types.INT64, kept if keepdims else shape[:axis] + shape[axis + 1:])
    direction = AxisDirection.DECREASING if int(node.attribute("select_last_index", 0)) else AxisDirection.INCREASING
    pad = leading_ones(ARGMIN_SCHEMA, device, len(shape))
    desc = ArgMinDesc(describe(x.data_type, shape, pad=pad), describe(DataType.INT64, kept, pad=pad),
                      (axis + pad,), direction)
    return Lowered((out,), make_step(node, device, desc, [x.name], out))


ARGMIN = Mapping("ArgMin", (1, 11, 12, 13), check_argmin, lower_argmin)
