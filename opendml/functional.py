"""Functions on arrays: each builds a description of the arrays as they lie in memory and runs it.

Views are described by their strides, never copied (except views with negative strides, and tensors
whose last bytes would fall short of DirectML's 4-byte rounding of a tensor's size).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .buffer import BufferBinding
from .device import Device
from .dtypes import DataType, from_numpy
from .enums import AxisDirection
from .errors import invalid
from .feature_levels import FeatureLevel
from .ops.argmin import ARGMIN_SCHEMA, ArgMinDesc
from .ops.clip import CLIP1_SCHEMA, CLIP_SCHEMA, ElementWiseClip1Desc, ElementWiseClipDesc
from .ops.dequantize_linear import DEQUANTIZE_LINEAR_SCHEMA, ElementWiseDequantizeLinearDesc
from .ops.elementwise import ScaleBias, typed_bound
from .ops.threshold import THRESHOLD_SCHEMA, ElementWiseThresholdDesc
from .schema import OperatorSchema
from .tensor import TensorDesc, calc_buffer_tensor_size

_default_device: Device | None = None


def default_device() -> Device:
    """The CPU device at the newest feature level, made once."""
    global _default_device
    if _default_device is None:
        _default_device = Device("cpu")
    return _default_device


@dataclass
class _Placed:
    """An array described as a tensor in a buffer; ``finish`` copies a staged output back."""

    desc: TensorDesc
    binding: BufferBinding
    staged: np.ndarray | None = None  # the packed copy actually bound, when the array could not be


def _as_array(x: Any, owner: str, name: str) -> np.ndarray:
    array = np.asarray(x)
    try:
        from_numpy(array.dtype)
    except KeyError:
        raise invalid(owner, name, "must have a DirectML data type (float16/32/64 or a sized integer)",
                      array.dtype) from None
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("<"))
    return array


def _describe(array: np.ndarray) -> TensorDesc:
    itemsize = array.itemsize
    strides = tuple(s // itemsize for s in array.strides)
    return TensorDesc(from_numpy(array.dtype), array.shape, strides)


def _byte_range(array: np.ndarray, size: int) -> np.ndarray:
    """A 1-D uint8 view of ``size`` bytes starting at the array's first element."""
    first = array[(slice(0, 1),) * array.ndim].reshape(-1).view(np.uint8)
    return np.lib.stride_tricks.as_strided(first, shape=(size,), strides=(1,))


def _padded_empty(shape: tuple[int, ...], dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """A new packed array and the raw bytes under it, rounded up to DirectML's 4-byte sizes."""
    nbytes = math.prod(shape) * dtype.itemsize
    raw = np.zeros(calc_buffer_tensor_size(from_numpy(dtype), shape, None), dtype=np.uint8)
    return raw[:nbytes].view(dtype).reshape(shape), raw


def _place(device: Device, array: np.ndarray) -> _Placed:
    """Describe ``array`` where it lies; stage a packed copy when that cannot be bound directly."""
    if any(s < 0 or s % array.itemsize for s in array.strides):
        array = np.ascontiguousarray(array)
    desc = _describe(array)
    if desc.span_in_bytes >= desc.total_tensor_size_in_bytes:
        raw = _byte_range(array, desc.total_tensor_size_in_bytes)
        return _Placed(desc, BufferBinding(device.backend.wrap(device, raw)))
    staged, raw = _padded_empty(array.shape, array.dtype)
    staged[...] = array
    return _Placed(_describe(staged), BufferBinding(device.backend.wrap(device, raw)), staged)


def _leading_ones(schema: OperatorSchema, device: Device, rank: int) -> int:
    """How many leading 1s the device's support row needs (4-D-only levels), as ONNX Runtime pads."""
    row = schema.row_at(device.feature_level)
    return max(0, row.dimensions[0] - rank) if row is not None else 0


def _unsqueeze(array: np.ndarray, count: int) -> np.ndarray:
    return array.reshape((1,) * count + array.shape)


def _run(device: Device, make_desc: Callable[..., object], inputs: Sequence[np.ndarray | None],
         out: np.ndarray) -> None:
    """Describe, validate and run one operator over arrays, writing ``out`` (which may alias an input)."""
    if out.size == 0:
        stand_ins = [None if a is None else np.zeros((1,) * a.ndim, a.dtype) for a in inputs]
        device.create_operator(make_desc(*[None if a is None else _describe(a) for a in stand_ins],
                                         _describe(np.zeros((1,) * out.ndim, out.dtype))))
        return
    placed_inputs = [None if a is None else _place(device, a) for a in inputs]
    placed_out = _place(device, out)
    descs = [None if p is None else p.desc for p in placed_inputs]
    compiled = device.compiled(make_desc(*descs, placed_out.desc))
    compiled.execute([None if p is None else p.binding for p in placed_inputs], [placed_out.binding])
    if placed_out.staged is not None:
        out[...] = placed_out.staged


def _output(out: np.ndarray | None, shape: tuple[int, ...], dtype: np.dtype, owner: str) -> np.ndarray:
    if out is None:
        return _padded_empty(shape, dtype)[0]
    if not isinstance(out, np.ndarray):
        raise invalid(owner, "out", "must be a NumPy array", type(out).__name__)
    if out.shape != shape or out.dtype != dtype:
        raise invalid(owner, "out", f"must have shape {shape} and dtype {dtype}", f"{out.shape} {out.dtype}")
    if not out.flags.writeable:
        raise invalid(owner, "out", "must be writeable", "a read-only array")
    return out


def _unary(schema: OperatorSchema, x: Any, out: np.ndarray | None, device: Device | None,
           make_desc: Callable[[TensorDesc, TensorDesc], object]) -> np.ndarray:
    device = device or default_device()
    x = _as_array(x, schema.name, "InputTensor")
    result = _output(out, x.shape, x.dtype, schema.name)
    pad = _leading_ones(schema, device, max(x.ndim, 1))
    shape = (1,) * pad + (x.shape or (1,))
    _run(device, make_desc, [x.reshape(shape)], result.reshape(shape))
    return result


def clip(x: Any, min: float | None, max: float | None, *, scale_bias: ScaleBias | tuple[float, float] | None = None,
         out: np.ndarray | None = None, device: Device | None = None) -> np.ndarray:
    """``max(min, min(x * scale + bias, max))`` element by element; None leaves a side unbounded.

    Integer tensors use ELEMENT_WISE_CLIP1 with exact typed bounds where the device's level has it.

    >>> clip(np.array([-3, 0, 5], np.int32), -1, 2.7)
    array([-1,  0,  2], dtype=int32)
    """
    device = device or default_device()
    data_type = DataType.parse(np.asarray(x).dtype, owner=CLIP_SCHEMA.name, field="InputTensor.DataType")
    sb = ScaleBias.parse(scale_bias, CLIP_SCHEMA.name)
    if data_type.is_integer and device.feature_level >= CLIP1_SCHEMA.introduced:
        owner = CLIP1_SCHEMA.name
        low, high = data_type.integer_range
        lo = low if min is None else typed_bound(_number(min, owner, "Min"), data_type, owner, "Min")
        hi = high if max is None else typed_bound(_number(max, owner, "Max"), data_type, owner, "Max")

        def clip1(i: TensorDesc, o: TensorDesc) -> object:
            return ElementWiseClip1Desc(i, o, data_type, int(lo), int(hi), sb)

        return _unary(CLIP1_SCHEMA, x, out, device, clip1)
    lo_f = -math.inf if min is None else min
    hi_f = math.inf if max is None else max
    return _unary(CLIP_SCHEMA, x, out, device, lambda i, o: ElementWiseClipDesc(i, o, lo_f, hi_f, sb))


def _number(value: object, owner: str, field: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise invalid(owner, field, "must be a number", repr(value))
    return int(value) if isinstance(value, (int, np.integer)) else float(value)


def threshold(x: Any, min: float, *, scale_bias: ScaleBias | tuple[float, float] | None = None,
              out: np.ndarray | None = None, device: Device | None = None) -> np.ndarray:
    """``max(x * scale + bias, min)`` element by element (ELEMENT_WISE_THRESHOLD).

    >>> threshold(np.array([-2.0, 0.5], np.float32), 0.0)
    array([0. , 0.5], dtype=float32)
    """
    sb = ScaleBias.parse(scale_bias, THRESHOLD_SCHEMA.name)
    return _unary(THRESHOLD_SCHEMA, x, out, device, lambda i, o: ElementWiseThresholdDesc(i, o, min, sb))


def dequantize_linear(x: Any, scale: Any, zero_point: Any = None, *, out: np.ndarray | None = None,
                      device: Device | None = None) -> np.ndarray:
    """``(x - zero_point) * scale``, broadcasting NumPy-style; the result has the scale's type.

    Broadcast operands reach the operator as zero-stride descriptions (nothing is materialised).

    >>> dequantize_linear(np.array([0, 10, 255], np.uint8), np.float32(0.5), 10)
    array([ -5. ,   0. , 122.5], dtype=float32)
    """
    device = device or default_device()
    owner = DEQUANTIZE_LINEAR_SCHEMA.name
    x = _as_array(x, owner, "InputTensor")
    scale = _as_array(np.float32(scale) if isinstance(scale, (int, float)) else scale, owner, "ScaleTensor")
    if zero_point is None and device.feature_level < FeatureLevel.FL_6_2:
        zero_point = 0  # the optional ZeroPointTensor needs 6_2: pass an explicit zero below it
    if zero_point is not None:
        zero_point = _typed_like(zero_point, x.dtype, owner)
    shape = np.broadcast_shapes(*(a.shape for a in (x, scale, zero_point) if a is not None))
    result = _output(out, shape, scale.dtype, owner)
    pad = _leading_ones(DEQUANTIZE_LINEAR_SCHEMA, device, max(len(shape), 1))
    full = (1,) * pad + (shape or (1,))
    operands = [None if a is None else np.broadcast_to(a, full) for a in (x, scale, zero_point)]
    _run(device, ElementWiseDequantizeLinearDesc, operands, result.reshape(full))
    return result


def _typed_like(value: Any, dtype: np.dtype, owner: str) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return _as_array(value, owner, "ZeroPointTensor")
    try:
        return np.asarray(value, dtype=dtype)
    except (OverflowError, ValueError, TypeError):
        raise invalid(owner, "ZeroPointTensor", f"must hold values of the input's type {dtype}",
                      repr(value)) from None


def argmin(x: Any, axes: int | Sequence[int] | None = None, *,
           axis_direction: AxisDirection | str = "INCREASING", output_type: DataType | str = "INT64",
           device: Device | None = None) -> np.ndarray:
    """Indices of the smallest elements over ``axes`` (None: all); the rank is kept, as in DirectML.

    >>> argmin(np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], np.float32), 1)
    array([[0],
           [1],
           [0]])
    """
    device = device or default_device()
    owner = ARGMIN_SCHEMA.name
    x = _as_array(x, owner, "InputTensor")
    rank = max(x.ndim, 1)
    reduced = _normalize_axes(axes, rank, owner)
    direction = AxisDirection.parse(axis_direction, owner=owner)
    out_type = DataType.parse(output_type, owner=owner, field="OutputTensor.DataType")
    out_shape = tuple(1 if k in reduced else n for k, n in enumerate(x.shape or (1,)))
    result = _padded_empty(out_shape, out_type.numpy)[0]
    pad = _leading_ones(ARGMIN_SCHEMA, device, rank)
    shifted = tuple(a + pad for a in reduced)

    def make(i: TensorDesc, o: TensorDesc) -> object:
        return ArgMinDesc(i, o, shifted, direction)

    _run(device, make, [_unsqueeze(x.reshape(x.shape or (1,)), pad)], _unsqueeze(result, pad))
    return result.reshape(x.shape and out_shape)


def _normalize_axes(axes: int | Sequence[int] | None, rank: int, owner: str) -> tuple[int, ...]:
    if axes is None:
        return tuple(range(rank))
    listed = [axes] if isinstance(axes, (int, np.integer)) else list(axes)
    normalized = []
    for k, axis in enumerate(listed):
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -rank <= axis < rank:
            raise invalid(owner, f"Axes[{k}]", f"must be an integer in [{-rank}, {rank - 1}]", repr(axis))
        normalized.append(int(axis) % rank)
    if len(set(normalized)) != len(normalized):
        raise invalid(owner, "Axes", "must not repeat an axis", listed)
    return tuple(sorted(normalized))
