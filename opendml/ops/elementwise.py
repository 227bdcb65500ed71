"""Shared pieces of the element-wise operators: ScaleBias, FLOAT fields, typed bounds (CLIP, CLIP1 and
THRESHOLD), the unary tensor rules and the compute values a reference starts from."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..dtypes import DataType
from ..errors import invalid, invalid_type
from ..tensor import TensorDesc
from ..validate import check_same_data_type, check_same_sizes

Number = int | float | np.integer | np.floating


@dataclass(frozen=True)
class ScaleBias:
    """DML_SCALE_BIAS: ``g(x) = x * scale + bias``, computed in float32 with two roundings."""

    scale: float
    bias: float

    @classmethod
    def parse(cls, value: object, owner: str) -> ScaleBias | None:
        """Accept None, a ScaleBias or a ``(scale, bias)`` pair."""
        if value is None or isinstance(value, ScaleBias):
            return value
        if isinstance(value, (tuple, list)) and len(value) == 2:
            return cls(*value)
        raise invalid_type(owner, "ScaleBias", "must be a ScaleBias or a (scale, bias) pair", repr(value))


def float_field(value: object, owner: str, field: str) -> np.float32:
    """A DirectML FLOAT field: any real number, rounded to float32 as a C cast would."""
    if isinstance(value, bool) or not isinstance(value, Number):
        raise invalid_type(owner, field, "must be a number", repr(value))
    try:
        as_double = float(value)
    except OverflowError:  # a Python int beyond float64: it rounds to an infinity
        as_double = math.inf if value > 0 else -math.inf
    with np.errstate(over="ignore"):
        return np.float32(as_double)


def exact_scalar(value: object, data_type: DataType, owner: str, field: str) -> np.integer | np.floating:
    """A DML_SCALAR_UNION of ``data_type``: integers exact and in range, floats without overflow."""
    if isinstance(value, bool) or not isinstance(value, Number):
        raise invalid_type(owner, field, f"must be a number of type {data_type.name}", repr(value))
    if data_type.is_integer:
        if isinstance(value, (float, np.floating)) and not float(value).is_integer():
            raise invalid(owner, field, f"must be an integer for MinMaxDataType {data_type.name}", value)
        low, high = data_type.integer_range
        if not low <= int(value) <= high:
            raise invalid(owner, field, f"must be in [{low}, {high}] for {data_type.name}", _short(value))
        return data_type.numpy.type(int(value))
    # Finite as given (a Python int always is; a long double may be finite beyond float64's range).
    finite = isinstance(value, (int, np.integer)) or bool(np.isfinite(value))
    try:
        as_double = float(value)
    except OverflowError:  # a Python int beyond float64 is beyond every float type
        as_double = math.inf
    with np.errstate(over="ignore"):
        typed = data_type.numpy.type(as_double)
    if finite and not np.isfinite(typed):
        raise invalid(owner, field, f"must be representable in {data_type.name}", _short(value))
    return typed


def _short(value: Number) -> str:
    """A number for a message: an integer of hundreds of digits is shown in scientific notation."""
    text = str(value)
    if len(text) <= 40:
        return text
    sign, digits = ("-", text[1:]) if text.startswith("-") else ("", text)
    return f"{sign}{digits[0]}.{digits[1:4]}e+{len(digits) - 1}"  # only integers print this long


def typed_bound(value: Number, data_type: DataType, owner: str, field: str) -> np.integer | np.floating | None:
    """A bound in the compute type of ``data_type`` (SPEC 8.3), or None where it bounds nothing.

    Floats round to the tensor's type (nearest even) and a NaN bound bounds nothing. Integer tensors
    take the bound truncated toward zero, then saturated, in exact arithmetic (so an exact integer
    given as a Python int stays exact); a NaN bound is rejected.
    """
    if data_type.is_float:
        if np.isnan(value):
            return None
        with np.errstate(over="ignore"):
            return np.float32(data_type.numpy.type(value))
    low, high = data_type.integer_range
    if isinstance(value, (int, np.integer)):
        exact = int(value)
    elif math.isnan(value):
        raise invalid(owner, field, f"must not be NaN on a {data_type.name} tensor", "nan")
    elif math.isinf(value):
        exact = high if value > 0 else low
    else:
        exact = math.trunc(float(value))
    return data_type.numpy.type(min(max(exact, low), high))


def prepare_unary(owner: str, input_tensor: TensorDesc, output_tensor: TensorDesc,
                  scale_bias: object) -> tuple[np.float32, np.float32] | None:
    """The tensor rules shared by CLIP, CLIP1 and THRESHOLD; returns the float32 ScaleBias, if any."""
    check_same_data_type(owner, "InputTensor", input_tensor, "OutputTensor", output_tensor)
    check_same_sizes(owner, "InputTensor", input_tensor, "OutputTensor", output_tensor)
    parsed = ScaleBias.parse(scale_bias, owner)
    if parsed is None:
        return None
    if not input_tensor.data_type.is_float:
        raise invalid(owner, "ScaleBias", "must be absent on integer tensors",
                      f"ScaleBias on {input_tensor.data_type.name}")
    if input_tensor.data_type is DataType.FLOAT64:  # a copy only: opendml has no FLOAT64 arithmetic
        raise invalid(owner, "ScaleBias", "must be absent on FLOAT64 tensors (opendml has no FLOAT64 arithmetic)",
                      "ScaleBias on FLOAT64")
    return (float_field(parsed.scale, owner, "ScaleBias.Scale"),
            float_field(parsed.bias, owner, "ScaleBias.Bias"))


def compute_values(x: np.ndarray, data_type: DataType) -> np.ndarray:
    """Elements in the compute type: float32 for FLOAT16/FLOAT32 (exact), the type itself otherwise (FLOAT64 too)."""
    return x.astype(np.float32) if data_type in (DataType.FLOAT32, DataType.FLOAT16) else np.asarray(x)


def apply_scale_bias(v: np.ndarray, scale_bias: tuple[np.float32, np.float32] | None) -> np.ndarray:
    """``v * scale + bias`` in float32: a rounded multiply, then a rounded add (never fused)."""
    if scale_bias is None:
        return v
    scale, bias = scale_bias
    product = np.multiply(v, scale, dtype=np.float32)
    return np.add(product, bias, dtype=np.float32)
