"""ONNX DequantizeLinear (every version) -> ELEMENT_WISE_DEQUANTIZE_LINEAR.

DirectML's four tensors share one set of sizes, so a scale or zero point of another shape is described
over x's sizes with zero strides, never copied:

- per tensor (one element): every stride 0;
- per axis (a 1-D tensor along ``axis``, DequantizeLinear-13): stride 1 on ``axis``, 0 elsewhere;
- blocked (``block_size`` B, DequantizeLinear-21; the scale has x's shape with ceil(n / B) on ``axis``):
  when B divides n, ``axis`` is split into (n / B, B) in every description (a free reshape of packed
  tensors), the scale stepping once per block and not at all within one. When B does not divide n,
  no strides express the last, short block: the scale is then expanded on the host (a copy), which
  needs it known before the graph runs.

An absent zero point is 0, as ONNX says: the optional ZeroPointTensor is left out from feature level
6_2, and below it a zero is bound through an all-zero-stride description. ``output_dtype``
(DequantizeLinear-23) must be the scale's type, since DirectML's ScaleTensor and OutputTensor share
one. opendml computes ``x - zero_point`` exactly and rounds once to float32; ONNX's reference rounds
x and the zero point to float32 first, which differs only for int32 values beyond 2^24.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ...device import Device
from ...feature_levels import FeatureLevel
from ...ops.dequantize_linear import DEQUANTIZE_LINEAR_SCHEMA, ElementWiseDequantizeLinearDesc
from ...tensor import MAX_DIMENSIONS, packed_strides
from .. import types
from ..graph import NodeView, Value, optional
from .base import (
    Lowered,
    Mapping,
    describe,
    expect_same_type,
    expect_type,
    fail,
    leading_ones,
    make_step,
    output_value,
    problem,
)

# The integer types of ONNX's T1 that DirectML holds; float8, int4, int2 and float4 have no DirectML type.
_X_TYPES = frozenset({types.INT8, types.UINT8, types.INT16, types.UINT16, types.INT32})
_OPERANDS = ((1, "x_scale"), (2, "x_zero_point"))


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
    if int(node.attribute("block_size", 0)) < 0:
        problems.append(problem(node, "block_size", "must be 0 or more", node.attribute("block_size")))
    return problems


def _size(value: Value) -> int:
    return math.prod(value.concrete_shape)


def _axis(node: NodeView, rank: int) -> int:
    axis = int(node.attribute("axis", 1))
    if not -rank <= axis < rank:
        raise fail(node, "axis", f"must be in [{-rank}, {rank - 1}] for x of rank {rank}", axis)
    return axis % rank


def _check_grouped(node: NodeView, field: str, value: Value, shape: tuple[int, ...], axis: int,
                   block: int) -> None:
    """A per-axis or blocked scale or zero point must fit x's shape as ONNX says."""
    if block == 0:
        wanted: tuple[int, ...] = (shape[axis],)
        why = f"a 1-D tensor of x's size along axis {axis} (per-axis)"
    else:
        wanted = (*shape[:axis], -(-shape[axis] // block), *shape[axis + 1:])
        why = f"x's shape with ceil({shape[axis]} / {block}) along axis {axis} (blocked)"
    if value.concrete_shape != wanted:
        raise fail(node, f"Input {field}", f"must have shape {list(wanted)}, {why}",
                   f"shape {list(value.concrete_shape)}")


def _layout(node: NodeView, field: str, value: Value, sizes: tuple[int, ...], axis: int, block: int,
            n: int) -> tuple[str | np.ndarray, list[int] | None]:
    """Where a scale or zero point comes from, and its strides over the shared sizes (None: packed)."""
    if _size(value) == 1:
        return value.name, [0] * len(sizes)
    if block == 0:
        strides = [0] * len(sizes)
        strides[axis] = 1
        return value.name, strides
    if len(sizes) == len(value.concrete_shape) + 1:  # axis split into (blocks, block_size)
        own = packed_strides(value.concrete_shape)
        return value.name, [*own[:axis], own[axis], 0, *own[axis + 1:]]
    if value.host is None:
        raise fail(node, f"Input {field}", f"must be known before the graph runs when block_size ({block}) "
                   f"does not divide x's size along axis {axis} ({n}): the short last block needs a copy",
                   value.describe_source())
    expanded = np.repeat(value.host, block, axis=axis).take(np.arange(n), axis=axis)
    return np.ascontiguousarray(expanded), None


def lower_dequantize_linear(node: NodeView, inputs: Sequence[Value | None], device: Device) -> Lowered:
    x, scale, zero_point = inputs[0], inputs[1], optional(inputs, 2)
    assert x is not None and scale is not None and x.data_type is not None and scale.data_type is not None
    shape = x.concrete_shape
    block = int(node.attribute("block_size", 0))
    operands = [(field, optional(inputs, k)) for k, field in _OPERANDS]
    grouped = [(field, v) for field, v in operands if v is not None and _size(v) != 1]
    if grouped and node.version is not None and node.version < 13:
        field, value = grouped[0]
        raise fail(node, f"Input {field}", "must be a scalar before DequantizeLinear-13 (no axis attribute)",
                   f"shape {list(value.concrete_shape)}")
    axis = _axis(node, len(shape)) if grouped else 0
    for field, value in grouped:
        _check_grouped(node, field, value, shape, axis, block)
    n = shape[axis] if shape else 1
    if 0 in shape:
        grouped, block = [], 0  # nothing to compute: describe every operand per tensor, for validation
    split = bool(grouped) and block > 0 and n % block == 0 and len(shape) < MAX_DIMENSIONS
    sizes = (*shape[:axis], n // block, block, *shape[axis + 1:]) if split else shape

    pad = leading_ones(DEQUANTIZE_LINEAR_SCHEMA, device, max(len(sizes), 1))
    scale_source, scale_strides = _layout(node, "x_scale", scale, sizes, axis, block, n)
    bindings: list[str | np.ndarray | None] = [x.name, scale_source]
    if zero_point is not None:
        zp_source, zp_strides = _layout(node, "x_zero_point", zero_point, sizes, axis, block, n)
        zp_desc = describe(x.data_type, sizes, zp_strides, pad=pad)
        bindings.append(zp_source)
    elif device.feature_level < FeatureLevel.FL_6_2:  # ZeroPointTensor is optional only from 6_2
        zp_desc = describe(x.data_type, sizes, [0] * len(sizes), pad=pad)
        bindings.append(np.zeros(1, x.data_type.numpy))
    else:
        zp_desc = None
        bindings.append(None)
    out = output_value(node, scale.onnx_type, shape)
    desc = ElementWiseDequantizeLinearDesc(
        describe(x.data_type, sizes, pad=pad), describe(scale.data_type, sizes, scale_strides, pad=pad),
        zp_desc, describe(scale.data_type, sizes, pad=pad))
    return Lowered((out,), make_step(node, device, desc, bindings, out))


DEQUANTIZE_LINEAR = Mapping("DequantizeLinear", (10, 13, 19, 21, 23, 24, 25, 28), check_dequantize_linear,
                            lower_dequantize_linear)
