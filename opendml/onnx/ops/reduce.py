"""ONNX ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp
and ReduceSumSquare (every version) -> REDUCE with the matching DML_REDUCE_FUNCTION.

The axes are an attribute up to ReduceSum-11 and the others' version 13, an optional input after (which opendml
needs before the graph runs: DirectML's Axes are a field); negative axes count from the end from version 11 on.
No axes reduce every axis, unless ``noop_with_empty_axes`` (the input versions) makes it a reduction over no
axis, which still applies a composite reduction's element function (ReduceLogSum-18 is then the log of each
element): REDUCE over an axis of size 1 computes exactly that. ``keepdims = 0`` drops the reduced axes, which
costs nothing (the packed output's bytes are the same either way). A later node reading the output through other
sizes (a ``keepdims = 0`` output, or a broadcast of a kept one, as softmax written by hand does) reads REDUCE's
own output through its own description, in a later compiled graph (docs/graphs.md, ONNX models).

The element types are those REDUCE takes for the function (its page's table for that group of functions at the
device's level; a 4-D-only level pads leading 1s). Sums are REDUCE's: the exact sum rounded once (AVERAGE the
exact quotient), where ONNX's reference sums in float32 as NumPy does; an element squared by ReduceSumSquare is
squared exactly, not rounded first (docs/semantics.md, REDUCE). A reduction over an axis of size 0 (ONNX's
``empty_set`` cases, whose answer is the function's identity) is refused: DirectML's tensors have no size 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...device import Device
from ...enums import ReduceFunction
from ...ops.reduce import FUNCTION_SCHEMAS, REDUCE_SCHEMA, ReduceDesc
from .. import types
from ..graph import NodeView, Value, optional
from .base import (
    Lowered,
    Mapping,
    describe,
    expect_known,
    expect_type,
    fail,
    leading_ones,
    make_step,
    newest_types,
    output_value,
    problem,
)

F = ReduceFunction
# ONNX operator -> (DML_REDUCE_FUNCTION, the version whose axes are an input)
FUNCTIONS: dict[str, tuple[ReduceFunction, int]] = {
    "ReduceSum": (F.SUM, 13), "ReduceMean": (F.AVERAGE, 18), "ReduceMax": (F.MAX, 18), "ReduceMin": (F.MIN, 18),
    "ReduceProd": (F.MULTIPLY, 18), "ReduceL1": (F.L1, 18), "ReduceL2": (F.L2, 18), "ReduceLogSum": (F.LOG_SUM, 18),
    "ReduceLogSumExp": (F.LOG_SUM_EXP, 18), "ReduceSumSquare": (F.SUM_SQUARE, 18),
}
_VERSIONS = {"ReduceSum": (1, 11, 13), "ReduceMax": (1, 11, 12, 13, 18, 20), "ReduceMin": (1, 11, 12, 13, 18, 20),
             "ReduceLogSum": (1, 11, 13, 18, 28), "ReduceLogSumExp": (1, 11, 13, 18, 28)}
_WHY = "(DirectML's Axes are a field of the operator description)"


def _allowed(function: ReduceFunction) -> frozenset[int]:
    """The ONNX types of REDUCE's newest row for ``function``; BOOL (held as UINT8 0 and 1, whose MAX is ONNX's
    any and MIN its all) where that row takes UINT8 and the function is MAX or MIN (ReduceMax-20, ReduceMin-20)."""
    allowed = newest_types(FUNCTION_SCHEMAS[function], "InputTensor")
    return allowed | {types.BOOL} if function in (F.MAX, F.MIN) and types.UINT8 in allowed else allowed


def _axes_given(node: NodeView, inputs: Sequence[Value | None], from_input: int) -> list[int] | None:
    """The axes as the node gives them (None: none given)."""
    assert node.version is not None
    if node.version < from_input:
        axes = node.attribute("axes", None)
        return None if axes is None else [int(a) for a in axes]
    given = optional(inputs, 1)
    if given is None:
        return None
    assert given.host is not None
    return [int(a) for a in np.asarray(given.host).reshape(-1)]


def _axes(node: NodeView, inputs: Sequence[Value | None], from_input: int, rank: int) -> tuple[int, ...] | None:
    """The reduced axes in [0, rank), sorted; None for ``noop_with_empty_axes`` with no axes (an Identity)."""
    assert node.version is not None
    given = _axes_given(node, inputs, from_input)
    if not given:
        return None if int(node.attribute("noop_with_empty_axes", 0)) else tuple(range(rank))
    lowest = -rank if node.version >= 11 else 0
    for k, axis in enumerate(given):
        if not lowest <= axis < rank:
            raise fail(node, f"axes[{k}]", f"must be in [{lowest}, {rank - 1}] for data of rank {rank}", axis)
    axes = sorted(a % rank for a in given)
    if len(set(axes)) != len(axes):
        raise fail(node, "axes", "must not repeat an axis", given)
    return tuple(axes)


def _elementwise(node: NodeView, function: ReduceFunction, x: Value, device: Device) -> Lowered:
    """``noop_with_empty_axes`` with no axes: ONNX's reduction over no axis, which still applies a composite
    reduction's element function (ReduceLogSum's log, ReduceSumSquare's square, ReduceL1's absolute value): REDUCE
    over an axis of size 1 (the data's first such axis, else a new leading one) computes exactly that."""
    assert x.data_type is not None
    shape = x.concrete_shape
    ones = [k for k, n in enumerate(shape) if n == 1]
    sizes = shape if ones else (1, *shape)
    if len(sizes) > 8:
        raise fail(node, "noop_with_empty_axes", "must be 0 for data of rank 8 without an axis of size 1 (REDUCE "
                   "takes at most 8 dimensions, one of them reduced)", 1)
    axis = ones[0] if ones else 0
    pad = leading_ones(REDUCE_SCHEMA, device, len(sizes))
    tensor = describe(x.data_type, sizes, pad=pad)
    out = output_value(node, x.onnx_type, shape)
    desc = ReduceDesc(function, tensor, tensor, (axis + pad,))
    return Lowered((out,), make_step(node, device, desc, [x.name], out))


def _mapping(op_type: str) -> Mapping:
    function, from_input = FUNCTIONS[op_type]
    allowed = _allowed(function)

    def check(node: NodeView, inputs: Sequence[Value | None]) -> list[str]:
        assert node.version is not None
        problems = expect_type(node, "data", inputs[0], allowed)
        if node.version >= from_input:
            axes = optional(inputs, 1)
            problems += expect_known(node, "axes", axes, _WHY)
            if axes is not None and axes.shape is not None and len(axes.shape) != 1:
                problems.append(problem(node, "Input axes", "must be a 1-D tensor", f"shape {list(axes.shape)}"))
        return problems

    def lower(node: NodeView, inputs: Sequence[Value | None], device: Device) -> Lowered:
        x = inputs[0]
        assert x is not None and x.data_type is not None
        shape = x.concrete_shape
        axes = _axes(node, inputs, from_input, max(len(shape), 1))
        if axes is None:  # noop_with_empty_axes: the reduction of each element alone, over an axis of size 1
            return _elementwise(node, function, x, device)
        for axis in axes:
            if shape and shape[axis] == 0:
                raise fail(node, "Input data", f"must not be empty along reduced axis {axis} (DirectML's tensors "
                           "have no size 0)", f"shape {list(shape)}")
        kept = tuple(1 if k in axes else n for k, n in enumerate(shape))
        keepdims = int(node.attribute("keepdims", 1)) != 0
        out = output_value(node, x.onnx_type, kept if keepdims else tuple(n for k, n in enumerate(shape)
                                                                           if k not in axes))
        pad = leading_ones(REDUCE_SCHEMA, device, max(len(shape), 1))
        desc = ReduceDesc(function, describe(x.data_type, shape, pad=pad), describe(x.data_type, kept, pad=pad),
                          tuple(a + pad for a in axes))
        return Lowered((out,), make_step(node, device, desc, [x.name], out))

    return Mapping(op_type, _VERSIONS.get(op_type, (1, 11, 13, 18)), check, lower)


REDUCE_MAPPINGS: tuple[Mapping, ...] = tuple(_mapping(op_type) for op_type in FUNCTIONS)
