"""DEQUANTIZE_LINEAR's scale and zero point as arrays on the device, and the broadcast of their shapes.

Each is checked exactly: a zero point of another type than the input's is converted only when every value
is representable in it (never wrapped or truncated).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..device import Device
from ..errors import invalid
from .devices import _as_array, _on_gpu, _to_host


def _broadcast(owner: str, shape: tuple[int, ...], of: str, other: tuple[int, ...], field: str) -> tuple[int, ...]:
    """NumPy's broadcast of two shapes, or an error naming ``field`` and both shapes."""
    try:
        return np.broadcast_shapes(shape, other)
    except ValueError:
        raise invalid(owner, f"{field} shape", f"must broadcast with the shape {shape} of {of}",
                      tuple(other)) from None


def _operand(device: Device, value: Any, owner: str, field: str) -> Any:
    """A scale or zero point as an array of the device's kind. One of a single element in GPU memory is
    copied to the host for a CPU device (CuPy, PyTorch); larger ones must be on the device already."""
    if device.backend.xp is np and _on_gpu(value) and math.prod(getattr(value, "shape", ())) == 1:
        value = _to_host(value)
    return _as_array(device, value, owner, field)


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_)) or getattr(getattr(value, "dtype", None), "kind", None) == "b"


def _scale(device: Device, scale: Any, owner: str) -> Any:
    if _is_bool(scale):
        raise invalid(owner, "ScaleTensor", "must hold FLOAT32 or FLOAT16 values", repr(scale))
    if isinstance(scale, (int, float)):
        scale = np.float32(scale)
    return _operand(device, scale, owner, "ScaleTensor")


def _zero_point(device: Device, value: Any, dtype: np.dtype, owner: str) -> Any:
    """The zero point as an array of the input's type, every value checked exactly (SPEC 6: ZeroPointTensor
    shares the InputTensor's DataType)."""
    if dtype.kind not in "iu":  # no support row takes it: a number stands in, so the input's type is refused
        stand_in = np.zeros((), dtype) if isinstance(value, (int, float, np.number)) else value
        return _operand(device, stand_in, owner, "ZeroPointTensor")
    requirement = f"must hold values of the input's type {dtype}"
    if _is_bool(value):
        raise invalid(owner, "ZeroPointTensor", requirement, repr(value))
    if isinstance(value, (int, float, np.integer, np.floating)):
        exact = _integral(value)
        info = np.iinfo(dtype)
        if exact is None or not info.min <= exact <= info.max:
            raise invalid(owner, "ZeroPointTensor", requirement, repr(value))
        return _as_array(device, np.asarray(exact, dtype=dtype), owner, "ZeroPointTensor")
    array = _operand(device, value, owner, "ZeroPointTensor")
    if array.dtype == dtype:
        return array
    if not _fits(array, dtype):
        raise invalid(owner, "ZeroPointTensor", f"{requirement} (every element exactly)",
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
