"""ONNX ArgMin and ArgMax (every version) -> ARGMIN and ARGMAX over one axis, INT64 indices.

The two share everything but the operator: ``select_last_index`` (version 12) picks AxisDirection
DECREASING; ``keepdims = 0`` drops the reduced axis, which costs nothing (the packed output's bytes are
the same either way); negative axes count from the end from version 11 on.

NaN: both lower with NanPolicy PROPAGATE (an opendml extension; DirectML's own ARGMIN and ARGMAX, and
opendml's default, ignore NaN): a NaN wins, so a row holding NaN gives its first NaN's index, or its last
with ``select_last_index``, as ONNX's reference (NumPy's argmin and argmax) and PyTorch give. ONNX
Runtime's CPU kernels differ: they compare each element with the best so far, so a NaN wins only as a
row's first element and is otherwise passed over (docs/semantics.md). ONNX's conformance data has no NaN.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...device import Device
from ...dtypes import DataType
from ...enums import AxisDirection, NanPolicy
from ...errors import InvalidArgumentError
from ...ops.argmax import ARGMAX_SCHEMA, ArgMaxDesc
from ...ops.argmin import ARGMIN_SCHEMA, ArgMinDesc
from ...schema import OperatorSchema
from .. import types
from ..graph import NodeView, Value
from .base import Lower, Lowered, Mapping, describe, expect_type, fail, leading_ones, make_step, output_value, problem

_ALLOWED = types.FLOATS | types.INTEGERS
_VERSIONS = (1, 11, 12, 13)


def _axis(node: NodeView, rank: int) -> int:
    """The reduced axis in [0, rank); negative axes count from the end from version 11 on."""
    axis = int(node.attribute("axis", 0))
    lowest = -rank if node.version is not None and node.version >= 11 else 0
    if not lowest <= axis < rank:
        raise fail(node, "axis", f"must be in [{lowest}, {rank - 1}] for data of rank {rank}", axis)
    return axis % rank


def axis_problems(node: NodeView, label: str, x: Value | None, axis: Callable[[NodeView, int], int]) -> list[str]:
    """The problems of a reduction's input ``label`` and its ``axis`` attribute (read by ``axis``), where its
    rank is known: a scalar, or an axis out of range."""
    if x is None or x.shape is None:
        return []
    if not x.shape:
        return [problem(node, f"Input {label}", "must have rank 1 or more", "a scalar")]
    try:
        axis(node, len(x.shape))
    except InvalidArgumentError as error:
        return [str(error)]
    return []


def check_arg_reduction(node: NodeView, inputs: Sequence[Value | None]) -> list[str]:
    return expect_type(node, "data", inputs[0], _ALLOWED) + axis_problems(node, "data", inputs[0], _axis)


def _lowering(schema: OperatorSchema, make_desc: type[ArgMinDesc] | type[ArgMaxDesc]) -> Lower:
    """The lowering onto one of the two operators (their descriptions take the same fields)."""

    def lower(node: NodeView, inputs: Sequence[Value | None], device: Device) -> Lowered:
        x = inputs[0]
        assert x is not None and x.data_type is not None
        shape = x.concrete_shape
        axis = _axis(node, len(shape))
        if shape[axis] == 0:
            raise fail(node, "Input data", f"must not be empty along axis {axis}", f"shape {list(shape)}")
        kept = (*shape[:axis], 1, *shape[axis + 1:])
        keepdims = int(node.attribute("keepdims", 1)) != 0
        out = output_value(node, types.INT64, kept if keepdims else shape[:axis] + shape[axis + 1:])
        last = int(node.attribute("select_last_index", 0)) != 0
        direction = AxisDirection.DECREASING if last else AxisDirection.INCREASING
        pad = leading_ones(schema, device, len(shape))
        desc = make_desc(describe(x.data_type, shape, pad=pad), describe(DataType.INT64, kept, pad=pad),
                         (axis + pad,), direction, nan_policy=NanPolicy.PROPAGATE)
        return Lowered((out,), make_step(node, device, desc, [x.name], out))

    return lower


ARGMIN = Mapping("ArgMin", _VERSIONS, check_arg_reduction, _lowering(ARGMIN_SCHEMA, ArgMinDesc))
ARGMAX = Mapping("ArgMax", _VERSIONS, check_arg_reduction, _lowering(ARGMAX_SCHEMA, ArgMaxDesc))
