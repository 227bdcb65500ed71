"""The scale and zero point of DEQUANTIZE_LINEAR and QUANTIZE_LINEAR as arrays on the device, the output type
QUANTIZE_LINEAR takes from them, and the broadcast of their shapes.

Each is checked exactly: a zero point of another type than the one it must have is converted only when every
value is representable in it (never wrapped or truncated).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..device import Device
from ..dtypes import FLOAT_TYPES, INTEGERS_32, INTEGERS_64, DataType
from ..errors import invalid
from ..ops.elementwise import exact_scalar
from .devices import _as_array, _on_gpu, _to_host


def _broadcast(owner: str, shape: tuple[int, ...], of: str, other: tuple[int, ...], field: str) -> tuple[int, ...]:
    """NumPy's broadcast of two shapes, or an error naming ``field`` and both shapes."""
    try:
        return np.broadcast_shapes(shape, other)
    except ValueError:
        raise invalid(owner, f"{field} shape", f"must broadcast with the shape {shape} of {of}",
                      tuple(other)) from None


def _operand(device: Device, value: Any, owner: str, field: str, accepts: frozenset[DataType] | None = None) -> Any:
    """A scale or zero point as an array of the device's kind. One of a single element in GPU memory is
    copied to the host for a CPU device (CuPy, PyTorch); larger ones must be on the device already.
    ``accepts``: the types taken (``_as_array``; None: those of the operator's ``field``)."""
    if device.backend.xp is np and _on_gpu(value) and math.prod(getattr(value, "shape", ())) == 1:
        value = _to_host(value)
    return _as_array(device, value, owner, field, accepts)


# A zero point of any of these types is converted to the input's where every value fits (FLOAT64 too: [5.0]).
_CONVERTIBLE = FLOAT_TYPES | INTEGERS_32 | INTEGERS_64


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_)) or getattr(getattr(value, "dtype", None), "kind", None) == "b"


def _scale(device: Device, scale: Any, owner: str) -> Any:
    if _is_bool(scale):
        raise invalid(owner, "ScaleTensor", "must hold FLOAT32 or FLOAT16 values", repr(scale))
    if isinstance(scale, (int, float)):
        scale = np.float32(scale)
    return _operand(device, scale, owner, "ScaleTensor")


def _quantize_scale(device: Device, scale: Any, input_dtype: np.dtype, owner: str) -> Any:
    """QUANTIZE_LINEAR's scale: a number takes the type the input needs (FLOAT16 for a FLOAT16 input, else
    FLOAT32; SPEC 9), refused where it overflows that type; an array keeps its own type."""
    if _is_bool(scale):
        raise invalid(owner, "ScaleTensor", "must hold FLOAT32 or FLOAT16 values", repr(scale))
    if isinstance(scale, (int, float)):
        scale_type = DataType.FLOAT16 if input_dtype == np.float16 else DataType.FLOAT32
        scale = exact_scalar(scale, scale_type, owner, "ScaleTensor")
    return _operand(device, scale, owner, "ScaleTensor")


def _is_number(value: Any) -> bool:
    """A Python number: a value without a type of its own (NumPy scalars and arrays have one)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _quantize_zero_point(device: Device, value: Any, output_type: object, owner: str) -> tuple[Any, np.dtype]:
    """QUANTIZE_LINEAR's zero point (None when absent) and the output's type: the zero point's own type, else
    ``output_type``, else UINT8, as ONNX's QuantizeLinear. A Python number takes the output's type, checked
    exactly; an ``output_type`` given beside a typed zero point must agree with it."""
    if value is None or _is_number(value):
        dtype = (_output_type(output_type, owner) or DataType.UINT8).numpy
        return (None if value is None else _zero_point(device, value, dtype, owner, "the output's type")), dtype
    if _is_bool(value):
        raise invalid(owner, "ZeroPointTensor", "must be an array or a number of the output's type", repr(value))
    array = _operand(device, value, owner, "ZeroPointTensor")
    _check_output_type(array.dtype, output_type, owner)
    return array, array.dtype


def _output_type(output_type: object, owner: str) -> DataType | None:
    return None if output_type is None else DataType.parse(output_type, owner=owner, field="OutputTensor.DataType")


def _check_output_type(zero_point_dtype: np.dtype, output_type: object, owner: str) -> None:
    """ZeroPointTensor and OutputTensor share a DataType (SPEC 9): an output_type beside it must be the same."""
    wanted = _output_type(output_type, owner)
    own = DataType.parse(zero_point_dtype, owner=owner, field="ZeroPointTensor.DataType")
    if wanted is not None and wanted is not own:
        raise invalid(owner, "output_type", f"must equal ZeroPointTensor.DataType ({own.name}), the zero point's "
                      "own type, when both are given", wanted.name)


def _zero_point(device: Device, value: Any, dtype: np.dtype, owner: str, of: str = "the input's type",
                field: str = "ZeroPointTensor") -> Any:
    """The zero point as an array of ``dtype``, every value checked exactly (SPEC 6: DEQUANTIZE_LINEAR's
    ZeroPointTensor shares the InputTensor's DataType; ``of`` says which type it is in messages, ``field`` which
    tensor it is: QUANTIZED_LINEAR_ADD's AZeroPointTensor)."""
    if dtype.kind not in "iu":  # no support row takes it: a number stands in, so the input's type is refused
        stand_in = np.zeros((), dtype) if isinstance(value, (int, float, np.number)) else value
        return _operand(device, stand_in, owner, field)
    requirement = f"must hold values of {of} {dtype}"
    if _is_bool(value):
        raise invalid(owner, field, requirement, repr(value))
    if isinstance(value, (int, float, np.integer, np.floating)):
        exact = _integral(value)
        info = np.iinfo(dtype)
        if exact is None or not info.min <= exact <= info.max:
            raise invalid(owner, field, requirement, repr(value))
        return _as_array(device, np.asarray(exact, dtype=dtype), owner, field)
    array = _operand(device, value, owner, field, _CONVERTIBLE)
    if array.dtype == dtype:
        return array
    if not _fits(array, dtype):
        raise invalid(owner, field, f"{requirement} (every element exactly)",
                      f"an array of {array.dtype} that does not fit")
    return array.astype(dtype)


def _integral(value: int | float | np.integer | np.floating) -> int | None:
    """The number as an exact integer, or None if it is not one (1.5, NaN, an infinity)."""
    if isinstance(value, (int, np.integer)):
        return int(value)
    as_float = float(value)
    return int(as_float) if math.isfinite(as_float) and as_float.is_integer() else None


def _fits(array: Any, dtype: np.dtype) -> bool:
    """Whether every element of an integer or float array is an integer in ``dtype``'s range (reductions on
    the array's own device; only their results come to the host)."""
    if array.size == 0:
        return True
    info = np.iinfo(dtype)
    if array.dtype.kind == "f" and not bool((array == array.round()).all()):  # 1.5 fails, and NaN
        return False
    low, high = _integral(array.min().item()), _integral(array.max().item())
    return low is not None and high is not None and info.min <= low and high <= info.max
