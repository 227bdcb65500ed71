"""The operator functions: ``clip``, ``threshold``, ``dequantize_linear`` and ``argmin`` on arrays.

``clip`` and ``threshold`` start with the cached fast path (a repeated call on NumPy arrays). Each then
hands a traced argument to ``opendml.compile``'s tracing, and otherwise describes its arrays and runs one
operator over them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..device import Device
from ..dtypes import DataType
from ..enums import AxisDirection
from ..errors import invalid
from ..feature_levels import FeatureLevel
from ..ops.argmin import ARGMIN_SCHEMA, ArgMinDesc
from ..ops.clip import CLIP1_SCHEMA, CLIP_SCHEMA, ElementWiseClip1Desc, ElementWiseClipDesc
from ..ops.dequantize_linear import DEQUANTIZE_LINEAR_SCHEMA, ElementWiseDequantizeLinearDesc
from ..ops.elementwise import ScaleBias, typed_bound
from ..ops.threshold import THRESHOLD_SCHEMA, ElementWiseThresholdDesc
from ..schema import OperatorSchema
from ..tensor import TensorDesc
from .devices import _as_array, _resolve_device, _traced, _tracing
from .fastpath import _direct, _exact, _remember
from .operands import _broadcast, _scale, _zero_point
from .placement import _leading_ones, _run, _view_as
from .results import _output


def _unary(schema: OperatorSchema, x: Any, out: Any, device: Device,
           make_desc: Callable[[TensorDesc, TensorDesc], object], key: Any = None) -> Any:
    array = _as_array(device, x, schema.name, "InputTensor")
    result = _output(device, out, array.shape, array.dtype, schema.name, x)
    pad = _leading_ones(schema, device, max(array.ndim, 1))
    shape = (1,) * pad + (array.shape or (1,))
    compiled = _run(device, schema, make_desc, [_view_as(array, shape)], _view_as(result.array, shape))
    if key is not None and array is x:
        _remember(device, key, x, out, compiled)
    return result.deliver()


def clip(x: Any, min: float | None, max: float | None, *, scale_bias: ScaleBias | tuple[float, float] | None = None,
         out: Any = None, device: Device | str | None = None) -> Any:
    """``max(min, min(x * scale + bias, max))`` element by element; None leaves a side unbounded.

    Integer tensors use ELEMENT_WISE_CLIP1 with exact typed bounds where the device's level has it.

    >>> clip(np.array([-3, 0, 5], np.int32), -1, 2.7)
    array([-1,  0,  2], dtype=int32)
    """
    key = ("clip", _exact(min), _exact(max), _exact(scale_bias))
    done = _direct(device, key, x, out)  # first: the per-call cost of small arrays (a traced x never runs here)
    if done is not None:
        return done
    if _tracing(x):
        return _traced().clip(x, min, max, scale_bias, out, device)
    device = _resolve_device(device, x, CLIP_SCHEMA.name)
    dtype = _as_array(device, x, CLIP_SCHEMA.name, "InputTensor").dtype
    schema, make_desc = _clip_desc(device, dtype, min, max, scale_bias)
    return _unary(schema, x, out, device, make_desc, key)


def _clip_desc(device: Device, dtype: np.dtype, min: float | None, max: float | None,
               scale_bias: ScaleBias | tuple[float, float] | None
               ) -> tuple[OperatorSchema, Callable[[TensorDesc, TensorDesc], object]]:
    """The operator clip runs for an input of ``dtype``, and how its description is made from the input's
    and the output's: one rule for arrays and for traced functions."""
    data_type = DataType.parse(dtype, owner=CLIP_SCHEMA.name, field="InputTensor.DataType")
    sb = ScaleBias.parse(scale_bias, CLIP_SCHEMA.name)
    if data_type.is_integer and device.feature_level >= CLIP1_SCHEMA.introduced:
        owner = CLIP1_SCHEMA.name
        low, high = data_type.integer_range
        lo = low if min is None else typed_bound(_number(min, owner, "Min"), data_type, owner, "Min")
        hi = high if max is None else typed_bound(_number(max, owner, "Max"), data_type, owner, "Max")
        assert lo is not None and hi is not None  # an integer bound is never None: typed_bound refuses NaN

        def clip1(i: TensorDesc, o: TensorDesc) -> object:
            return ElementWiseClip1Desc(i, o, data_type, int(lo), int(hi), sb)

        return CLIP1_SCHEMA, clip1
    lo_f = -math.inf if min is None else min
    hi_f = math.inf if max is None else max
    return CLIP_SCHEMA, lambda i, o: ElementWiseClipDesc(i, o, lo_f, hi_f, sb)


def _number(value: object, owner: str, field: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise invalid(owner, field, "must be a number", repr(value))
    return int(value) if isinstance(value, (int, np.integer)) else float(value)


def threshold(x: Any, min: float, *, scale_bias: ScaleBias | tuple[float, float] | None = None,
              out: Any = None, device: Device | str | None = None) -> Any:
    """``max(x * scale + bias, min)`` element by element (ELEMENT_WISE_THRESHOLD).

    >>> threshold(np.array([-2.0, 0.5], np.float32), 0.0)
    array([0. , 0.5], dtype=float32)
    """
    key = ("threshold", _exact(min), _exact(scale_bias))
    done = _direct(device, key, x, out)  # first: the per-call cost of small arrays (a traced x never runs here)
    if done is not None:
        return done
    if _tracing(x):
        return _traced().threshold(x, min, scale_bias, out, device)
    device = _resolve_device(device, x, THRESHOLD_SCHEMA.name)
    sb = ScaleBias.parse(scale_bias, THRESHOLD_SCHEMA.name)
    return _unary(THRESHOLD_SCHEMA, x, out, device, lambda i, o: ElementWiseThresholdDesc(i, o, min, sb), key)


def dequantize_linear(x: Any, scale: Any, zero_point: Any = None, *, out: Any = None,
                      device: Device | str | None = None) -> Any:
    """``(x - zero_point) * scale``, broadcasting NumPy-style; the result has the scale's type.

    Broadcast operands reach the operator as zero-stride descriptions (nothing is materialised). The scale
    and the zero point may be numbers, or arrays of any kind; one of a single element may also live on
    another device than ``x``. A Python number as the scale becomes FLOAT32. The zero point takes the
    input's type: a value of another type (a number, or every element of an array) is converted when it
    is exactly representable in it, and refused otherwise (never wrapped or truncated).

    >>> dequantize_linear(np.array([0, 10, 255], np.uint8), np.float32(0.5), 10)
    array([ -5. ,   0. , 122.5], dtype=float32)
    """
    if _tracing(x, scale, zero_point):
        return _traced().dequantize_linear(x, scale, zero_point, out, device)
    owner = DEQUANTIZE_LINEAR_SCHEMA.name
    device = _resolve_device(device, x, owner)
    array = _as_array(device, x, owner, "InputTensor")
    scale = _scale(device, scale, owner)
    if zero_point is None and device.feature_level < FeatureLevel.FL_6_2:
        zero_point = 0  # the optional ZeroPointTensor needs 6_2: pass an explicit zero below it
    if zero_point is not None:
        zero_point = _zero_point(device, zero_point, array.dtype, owner)
    shape = _broadcast(owner, array.shape, "InputTensor", scale.shape, "ScaleTensor")
    if zero_point is not None:
        shape = _broadcast(owner, shape, "InputTensor and ScaleTensor", zero_point.shape, "ZeroPointTensor")
    result = _output(device, out, shape, scale.dtype, owner, x)
    pad = _leading_ones(DEQUANTIZE_LINEAR_SCHEMA, device, max(len(shape), 1))
    full = (1,) * pad + (shape or (1,))
    xp = device.backend.xp
    operands = [None if a is None else _broadcast_to(xp, a, full) for a in (array, scale, zero_point)]
    _run(device, DEQUANTIZE_LINEAR_SCHEMA, ElementWiseDequantizeLinearDesc, operands, _view_as(result.array, full))
    return result.deliver()


def _broadcast_to(xp: Any, array: Any, shape: tuple[int, ...]) -> Any:
    """``array`` read as ``shape`` through zero strides, nothing copied. A NumPy view stays as writeable as
    ``array`` (NumPy's own is read-only): Numba compiles a CPU kernel apart for read-only operands, so a
    read-only view would compile the operator's kernel a second time at its first execution."""
    view = xp.broadcast_to(array, shape)
    if xp is not np or not array.flags.writeable:
        return view
    return np.lib.stride_tricks.as_strided(array, shape, view.strides)


def argmin(x: Any, axes: int | Sequence[int] | None = None, *,
           axis_direction: AxisDirection | str = "INCREASING", output_type: DataType | str = "INT64",
           out: Any = None, device: Device | str | None = None) -> Any:
    """Indices of the smallest elements over ``axes`` (None: all); the rank is kept, as in DirectML.
    ``out``, if given, receives them: an array of the result's shape and of ``output_type``.

    >>> argmin(np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], np.float32), 1)
    array([[0],
           [1],
           [0]])
    """
    if _tracing(x):
        return _traced().argmin(x, axes, axis_direction, output_type, out, device)
    owner = ARGMIN_SCHEMA.name
    device = _resolve_device(device, x, owner)
    array = _as_array(device, x, owner, "InputTensor")
    rank = max(array.ndim, 1)
    reduced = _normalize_axes(axes, rank, owner)
    direction = AxisDirection.parse(axis_direction, owner=owner)
    out_type = DataType.parse(output_type, owner=owner, field="OutputTensor.DataType")
    out_shape = tuple(1 if k in reduced else n for k, n in enumerate(array.shape or (1,)))
    result = _output(device, out, array.shape and out_shape, out_type.numpy, owner, x)
    pad = _leading_ones(ARGMIN_SCHEMA, device, rank)
    shifted = tuple(a + pad for a in reduced)

    def make(i: TensorDesc, o: TensorDesc) -> object:
        return ArgMinDesc(i, o, shifted, direction)

    full = (1,) * pad + out_shape
    _run(device, ARGMIN_SCHEMA, make, [_view_as(array, (1,) * pad + (array.shape or (1,)))],
         _view_as(result.array, full))
    return result.deliver()


def _normalize_axes(axes: object, rank: int, owner: str) -> tuple[int, ...]:
    if axes is None:
        return tuple(range(rank))
    if isinstance(axes, np.ndarray) and axes.ndim <= 1:
        listed: list[object] = axes.reshape(-1).tolist() if axes.ndim else [axes.item()]
    elif isinstance(axes, (int, np.integer)):
        listed = [axes]
    elif isinstance(axes, Sequence) and not isinstance(axes, (str, bytes)):
        listed = list(axes)
    else:
        raise invalid(owner, "Axes", "must be an integer, a sequence of integers or None", repr(axes))
    normalized = []
    for k, axis in enumerate(listed):
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -rank <= axis < rank:
            raise invalid(owner, f"Axes[{k}]", f"must be an integer in [{-rank}, {rank - 1}]", repr(axis))
        normalized.append(int(axis) % rank)
    if len(set(normalized)) != len(normalized):
        raise invalid(owner, "Axes", "must not repeat an axis", listed)
    return tuple(sorted(normalized))
