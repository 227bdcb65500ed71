"""``dequantize_linear`` and ``quantize_linear``: four tensors of one broadcast shape, each operand read through
zero strides where it broadcasts (nothing is materialised); ``quantized_linear_add``: nine alike."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import front_ends
from ..device import Device
from ..errors import invalid_type
from ..feature_levels import FeatureLevel
from ..ops.dequantize_linear import DEQUANTIZE_LINEAR_SCHEMA, ElementWiseDequantizeLinearDesc
from ..ops.quantize_linear import QUANTIZE_LINEAR_SCHEMA, ElementWiseQuantizeLinearDesc
from ..ops.quantized_linear_add import QUANTIZED_LINEAR_ADD_SCHEMA, ElementWiseQuantizedLinearAddDesc
from ..schema import OperatorSchema
from ..typing import ArrayInput, ArrayObject, DataTypeLike, DeviceLike
from .devices import _as_array, _resolve_device
from .operands import _broadcast, _operand, _quantize_scale, _quantize_zero_point, _scale, _zero_point
from .placement import _leading_ones, _run, _view_as
from .results import _output


def dequantize_linear(x: ArrayInput, scale: ArrayInput, zero_point: ArrayInput | None = None, *,
                      out: ArrayObject | None = None, device: DeviceLike = None) -> Any:
    """``(x - zero_point) * scale``, broadcasting NumPy-style; the result has the scale's type.

    Broadcast operands reach the operator as zero-stride descriptions (nothing is materialised). The scale
    and the zero point may be numbers, or arrays of any kind; one of a single element may also live on
    another device than ``x``. A Python number as the scale becomes FLOAT32. The zero point takes the
    input's type: a value of another type (a number, or every element of an array) is converted when it
    is exactly representable in it, and refused otherwise (never wrapped or truncated).

    >>> dequantize_linear(np.array([0, 10, 255], np.uint8), np.float32(0.5), 10)
    array([ -5. ,   0. , 122.5], dtype=float32)
    """
    front_end = front_ends.of((x, scale, zero_point), out)
    if front_end is not None:
        return front_end.dequantize_linear(x, scale, zero_point, out, device)
    owner = DEQUANTIZE_LINEAR_SCHEMA.name
    device = _resolve_device(device, x, owner)
    array = _as_array(device, x, owner, "InputTensor")
    scales = _scale(device, scale, owner)
    if zero_point is None and device.feature_level < FeatureLevel.FL_6_2:
        zero_point = 0  # the optional ZeroPointTensor needs 6_2: pass an explicit zero below it
    if zero_point is not None:
        zero_point = _zero_point(device, zero_point, array.dtype, owner)
    return _broadcast_run(device, DEQUANTIZE_LINEAR_SCHEMA, ElementWiseDequantizeLinearDesc,
                          (array, scales, zero_point), scales.dtype, out, x)


def quantize_linear(x: ArrayInput, scale: ArrayInput, zero_point: ArrayInput | None = None, *,
                    output_type: DataTypeLike | None = None, out: ArrayObject | None = None,
                    device: DeviceLike = None) -> Any:
    """``clamp(round(x / scale) + zero_point, Min, Max)`` (ELEMENT_WISE_QUANTIZE_LINEAR), broadcasting
    NumPy-style: one float32 division, rounded half to even, the zero point added exactly, saturated.

    The output type is the zero point's, else ``output_type``, else UINT8, as ONNX's QuantizeLinear; an
    ``output_type`` beside a typed zero point must be its type. A Python number as the zero point takes the
    output type (refused unless exactly representable in it). The scale is FLOAT32 for a FLOAT32 or INT32
    input and FLOAT16 for a FLOAT16 input: a Python number takes that type; an array must have it. Scale
    and zero point reach the operator as zero-stride descriptions where they broadcast.

    >>> quantize_linear(np.array([-1.0, 0.25, 1.5, 300.0], np.float32), np.float32(0.5), 128)
    array([126, 128, 131, 255], dtype=uint8)
    >>> quantize_linear(np.array([[-1.0], [2.5]], np.float32), np.array([1.0, 2.0], np.float32), np.int8(-3))
    array([[-4, -3],
           [-1, -2]], dtype=int8)
    """
    front_end = front_ends.of((x, scale, zero_point), out)
    if front_end is not None:
        return front_end.quantize_linear(x, scale, zero_point, output_type, out, device)
    owner = QUANTIZE_LINEAR_SCHEMA.name
    device = _resolve_device(device, x, owner)
    array = _as_array(device, x, owner, "InputTensor")
    scale = _quantize_scale(device, scale, array.dtype, owner)
    zero_point, out_dtype = _quantize_zero_point(device, zero_point, output_type, owner)
    if zero_point is None and device.feature_level < FeatureLevel.FL_6_2:
        zero_point = _zero_point(device, 0, out_dtype, owner)  # the optional ZeroPointTensor needs 6_2
    return _broadcast_run(device, QUANTIZE_LINEAR_SCHEMA, ElementWiseQuantizeLinearDesc,
                          (array, scale, zero_point), out_dtype, out, x)


def quantized_linear_add(a: ArrayInput, a_scale: ArrayInput, a_zero_point: ArrayInput | None, b: ArrayInput,
                         b_scale: ArrayInput, b_zero_point: ArrayInput | None, output_scale: ArrayInput,
                         output_zero_point: ArrayInput | None = None, *, output_type: DataTypeLike | None = None,
                         out: ArrayObject | None = None, device: DeviceLike = None) -> Any:
    """ELEMENT_WISE_QUANTIZED_LINEAR_ADD, broadcasting NumPy-style (the operands of ONNX's QLinearAdd, in its
    order): ``a`` and ``b`` dequantized as ``dequantize_linear`` does into float32, added in float32, the sum
    quantized as ``quantize_linear`` does. A Python number as a scale becomes FLOAT32; a zero point takes its
    tensor's type (None: absent, 0); the output type is the output zero point's, else ``output_type``, else
    UINT8. NumPy and CuPy arrays only so far (not under ``opendml.compile`` or Dask).

    >>> quantized_linear_add(np.array([10, 20], np.uint8), 0.5, 10, np.array([4, -4], np.int8), 0.25, None, 1.0)
    array([1, 4], dtype=uint8)
    """
    owner = QUANTIZED_LINEAR_ADD_SCHEMA.name
    operands = (a, a_scale, a_zero_point, b, b_scale, b_zero_point, output_scale, output_zero_point)
    if front_ends.of(operands, out) is not None:
        raise invalid_type(owner, "ATensor", "must be a NumPy or CuPy array (opendml.compile and Dask do not run "
                           "ELEMENT_WISE_QUANTIZED_LINEAR_ADD yet)", type(a).__name__)
    device = _resolve_device(device, a, owner)
    placed: list[Any] = []
    for data, scale, zero_point, side in ((a, a_scale, a_zero_point, "A"), (b, b_scale, b_zero_point, "B")):
        array = _as_array(device, data, owner, f"{side}Tensor")
        placed += [array, _float32_scale(device, scale, owner, f"{side}ScaleTensor"),
                   None if zero_point is None else _zero_point(device, zero_point, array.dtype, owner,
                                                               field=f"{side}ZeroPointTensor")]
    out_zero_point, out_dtype = _quantize_zero_point(device, output_zero_point, output_type, owner)
    placed += [_float32_scale(device, output_scale, owner, "OutputScaleTensor"), out_zero_point]
    shape: tuple[int, ...] = ()
    for operand, field in zip(placed, (*QUANTIZED_LINEAR_ADD_SCHEMA.inputs,)):
        if operand is not None:
            shape = _broadcast(owner, shape, "the operands before it", operand.shape, field.name)
    result = _output(device, out, shape, out_dtype, owner, a)
    full = (1,) * _leading_ones(QUANTIZED_LINEAR_ADD_SCHEMA, device, max(len(shape), 1)) + (shape or (1,))
    xp = device.backend.xp
    _run(device, QUANTIZED_LINEAR_ADD_SCHEMA, ElementWiseQuantizedLinearAddDesc,
         [None if v is None else _broadcast_to(xp, v, full) for v in placed], _view_as(result.array, full))
    return result.deliver()


def _float32_scale(device: Device, scale: Any, owner: str, field: str) -> Any:
    """A scale of QUANTIZED_LINEAR_ADD: a Python number as FLOAT32, an array as it is (its table takes FLOAT32)."""
    if isinstance(scale, (int, float)) and not isinstance(scale, bool):
        scale = np.float32(scale)
    return _operand(device, scale, owner, field)


def _broadcast_run(device: Device, schema: OperatorSchema, desc_type: type, operands: tuple[Any, Any, Any],
                   out_dtype: np.dtype, out: Any, like: Any) -> Any:
    """Run an operator of InputTensor, ScaleTensor, ZeroPointTensor (None: absent) and OutputTensor over the
    operands' broadcast shape, each operand described with zero strides where it broadcasts."""
    owner = schema.name
    array, scale, zero_point = operands
    shape = _operands_shape(owner, array.shape, scale.shape, None if zero_point is None else zero_point.shape)
    result = _output(device, out, shape, out_dtype, owner, like)
    pad = _leading_ones(schema, device, max(len(shape), 1))
    full = (1,) * pad + (shape or (1,))
    xp = device.backend.xp
    placed = [None if a is None else _broadcast_to(xp, a, full) for a in operands]
    _run(device, schema, desc_type, placed, _view_as(result.array, full))
    return result.deliver()


def _operands_shape(owner: str, shape: tuple[int, ...], scale: tuple[int, ...], zero_point: tuple[int, ...] | None
                    ) -> tuple[int, ...]:
    """The broadcast shape of InputTensor, ScaleTensor and ZeroPointTensor (None: absent), or an error naming
    the operand that does not broadcast."""
    shape = _broadcast(owner, shape, "InputTensor", scale, "ScaleTensor")
    if zero_point is not None:
        shape = _broadcast(owner, shape, "InputTensor and ScaleTensor", zero_point, "ZeroPointTensor")
    return shape


def _broadcast_to(xp: Any, array: Any, shape: tuple[int, ...]) -> Any:
    """``array`` read as ``shape`` through zero strides, nothing copied. A NumPy view stays as writeable as
    ``array`` (NumPy's own is read-only): Numba compiles a CPU kernel apart for read-only operands, so a
    read-only view would compile the operator's kernel a second time at its first execution."""
    view = xp.broadcast_to(array, shape)
    if xp is not np or not array.flags.writeable:
        return view
    return np.lib.stride_tricks.as_strided(array, shape, view.strides)
