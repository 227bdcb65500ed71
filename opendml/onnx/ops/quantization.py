"""What DequantizeLinear and QuantizeLinear share: their scale and zero point described over x's sizes (and,
for 4-bit data, as DEQUANTIZE's and QUANTIZE's QuantizationTensors: at the end).

DirectML's four tensors share one set of sizes, so a scale or zero point of another shape is described
over x's sizes with zero strides, never copied:

- per tensor (one element): every stride 0;
- per axis (a 1-D tensor along ``axis``, version 13): stride 1 on ``axis``, 0 elsewhere;
- blocked (``block_size`` B, version 21; the operand has x's shape with ceil(n / B) on ``axis``): when
  B divides n, ``axis`` is split into (n / B, B) in every description (a free reshape of packed
  tensors), the operand stepping once per block and not at all within one. When B does not divide n,
  no strides express the last, short block: the operand is then expanded on the host (a copy), which
  needs it known before the graph runs.

An absent zero point is 0, as ONNX says: the optional ZeroPointTensor is left out from feature level 6_2,
and below it a zero is bound through an all-zero-stride description.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...device import Device
from ...dtypes import DataType
from ...enums import QuantizationType
from ...feature_levels import FeatureLevel
from ...schema import OperatorSchema
from ...tensor import MAX_DIMENSIONS, TensorDesc, packed_strides
from .. import types
from ..graph import NodeView, Value
from .base import describe, fail, leading_ones, problem

Source = str | np.ndarray | None  # a graph value's name, a host array the mapping made, or an absent tensor


def check_block_size(node: NodeView) -> list[str]:
    if int(node.attribute("block_size", 0)) < 0:
        return [problem(node, "block_size", "must be 0 or more", node.attribute("block_size"))]
    return []


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


@dataclass(frozen=True)
class Grid:
    """The sizes the four DirectML tensors share, behind ``pad`` leading 1s: x's, or x's with a blocked
    axis split into (blocks, block_size) where the block size divides it."""

    sizes: tuple[int, ...]
    axis: int
    block: int  # 0: per tensor or per axis
    n: int  # x's size along axis
    split: bool
    pad: int

    def describe(self, data_type: DataType, strides: Sequence[int] | None = None) -> TensorDesc:
        return describe(data_type, self.sizes, strides, pad=self.pad)

    def operand(self, node: NodeView, field: str, value: Value, data_type: DataType) -> tuple[Source, TensorDesc]:
        """Where a scale or zero point comes from, and its description over the shared sizes."""
        if _size(value) == 1:
            return value.name, self.describe(data_type, [0] * len(self.sizes))
        if self.block == 0:
            strides = [0] * len(self.sizes)
            strides[self.axis] = 1
            return value.name, self.describe(data_type, strides)
        if self.split:
            own = packed_strides(value.concrete_shape)
            return value.name, self.describe(data_type, [*own[:self.axis], own[self.axis], 0, *own[self.axis + 1:]])
        if value.host is None:
            raise fail(node, f"Input {field}", f"must be known before the graph runs when block_size ({self.block}) "
                       f"does not divide x's size along axis {self.axis} ({self.n}): the short last block needs a "
                       "copy", value.describe_source())
        expanded = np.repeat(value.host, self.block, axis=self.axis).take(np.arange(self.n), axis=self.axis)
        return np.ascontiguousarray(expanded), self.describe(data_type)

    def zero_point(self, node: NodeView, field: str, value: Value | None, data_type: DataType,
                   device: Device) -> tuple[Source, TensorDesc | None]:
        """The zero point's source and description; an absent one is 0 (see the module's docstring)."""
        if value is not None:
            return self.operand(node, field, value, data_type)
        if device.feature_level < FeatureLevel.FL_6_2:  # ZeroPointTensor is optional only from 6_2
            return np.zeros(1, data_type.numpy), self.describe(data_type, [0] * len(self.sizes))
        return None, None


def grid(node: NodeView, shape: tuple[int, ...], operands: Sequence[tuple[str, Value | None]],
         schema: OperatorSchema, device: Device) -> Grid:
    """The shared sizes for x's ``shape`` and its scale and zero point, their shapes checked against ONNX's
    rules (a 1-element operand is per tensor whatever its shape)."""
    block = int(node.attribute("block_size", 0))
    grouped = [(field, v) for field, v in operands if v is not None and _size(v) != 1]
    if grouped and node.version is not None and node.version < 13:
        field, value = grouped[0]
        raise fail(node, f"Input {field}", f"must be a scalar before {node.op_type}-13 (no axis attribute)",
                   f"shape {list(value.concrete_shape)}")
    axis = _axis(node, len(shape)) if grouped else 0
    for field, value in grouped:
        _check_grouped(node, field, value, shape, axis, block)
    n = shape[axis] if shape else 1
    if 0 in shape:
        grouped, block = [], 0  # nothing to compute: describe every operand per tensor, for validation
    if not grouped:
        block = 0
    split = bool(grouped) and block > 0 and n % block == 0 and len(shape) < MAX_DIMENSIONS
    sizes = (*shape[:axis], n // block, block, *shape[axis + 1:]) if split else shape
    return Grid(tuple(sizes), axis, block, n, split, leading_ones(schema, device, max(len(sizes), 1)))

# --- DEQUANTIZE and QUANTIZE (feature level 6_3): 4-bit x of DequantizeLinear, 4-bit y of QuantizeLinear ---------
#
# Their quantization tensors have x's rank and divide its sizes, so ONNX's scale and zero point are described as
# they are, reshaped for free: one element as 1s on every axis; per axis (a 1-D tensor) as x's rank with its size
# on ``axis``; blocked (``block_size`` B, x's shape with ceil(n / B) on ``axis``) as it is when B divides n, else
# expanded on the host to one value per element along ``axis`` (a copy, which needs it known before the graph
# runs). ONNX's absent zero point is 0, while the operators' absent one is the type's midpoint (docs/semantics.md,
# section 11): for UINT4 an explicit zero is bound; for INT4 the midpoint is 0.

def quantization_tensors(node: NodeView, shape: tuple[int, ...], scale: Value, scale_field: str,
                         zero_point: Value | None, zero_field: str, quantized: DataType
                         ) -> tuple[QuantizationType, list[TensorDesc], list[Source]]:
    """The QuantizationType, QuantizationTensors and their sources of an ONNX scale and zero point over x's
    ``shape``."""
    block = int(node.attribute("block_size", 0))
    grouped = [(f, v) for f, v in ((scale_field, scale), (zero_field, zero_point)) if v is not None
               and math.prod(v.concrete_shape) != 1]
    axis = _axis(node, len(shape)) if grouped and shape else 0
    for field, grouped_value in grouped:
        assert grouped_value is not None
        _check_grouped(node, field, grouped_value, shape, axis, block)
    assert scale.data_type is not None
    descs: list[TensorDesc] = []
    sources: list[Source] = []
    for field, operand, data_type in ((scale_field, scale, scale.data_type), (zero_field, zero_point, quantized)):
        if operand is None:
            continue
        sizes, source = _operand(node, field, operand, shape, axis, block)
        descs.append(describe(data_type, sizes))
        sources.append(source)
    if zero_point is None and quantized.integer_range[0] == 0:  # ONNX's 0, not the unsigned type's midpoint
        sizes = descs[0].sizes  # a zero point per block, as the scale
        descs.append(describe(quantized, sizes))
        sources.append(np.zeros(sizes, types.numpy_dtype(_onnx(quantized))))
    kind = QuantizationType.SCALE_ZERO_POINT if len(descs) == 2 else QuantizationType.SCALE
    return kind, descs, sources


def _onnx(data_type: DataType) -> int:
    return {DataType.INT4: types.INT4, DataType.UINT4: types.UINT4, DataType.INT8: types.INT8,
            DataType.UINT8: types.UINT8}[data_type]


def _operand(node: NodeView, field: str, value: Value, shape: tuple[int, ...], axis: int, block: int
             ) -> tuple[Sequence[int], Source]:
    rank = max(len(shape), 1)
    if math.prod(value.concrete_shape) == 1:
        return [1] * rank, value.name
    if block == 0:  # per axis
        sizes = [1] * rank
        sizes[axis] = shape[axis]
        return sizes, value.name
    n = shape[axis]
    if n % block == 0:
        return value.concrete_shape, value.name
    if value.host is None:
        raise fail(node, f"Input {field}", f"must be known before the graph runs when block_size ({block}) does "
                   f"not divide x's size along axis {axis} ({n}): the short last block needs a copy",
                   value.describe_source())
    expanded = np.repeat(value.host, block, axis=axis).take(np.arange(n), axis=axis)
    return expanded.shape, np.ascontiguousarray(expanded)
