"""Shared pieces of CLIP, CLIP1 and THRESHOLD: ScaleBias, typed bounds, and the per-element math.

The math is stated once as an element expression (``clamp_expression``), which every backend lowers; the
NumPy reference below (``clamp_reference``) is written apart, as the oracle the kernels are tested against.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import DataType
from ..errors import invalid
from ..kernels.spec import KernelSpec, Scalars
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
        raise invalid(owner, "ScaleBias", "must be a ScaleBias or a (scale, bias) pair", repr(value))


@dataclass(frozen=True)
class ClampParams:
    """Everything the per-element math of CLIP, CLIP1 and THRESHOLD needs.

    ``low``/``high`` are in the compute type (float32 for float tensors, the tensor's type for
    integers); None means no bound on that side (THRESHOLD's Max, or a NaN bound on a float tensor).
    """

    data_type: DataType
    scale_bias: tuple[np.float32, np.float32] | None
    low: np.integer | np.floating | None
    high: np.integer | np.floating | None


def float_field(value: object, owner: str, field: str) -> np.float32:
    """A DirectML FLOAT field: any real number, rounded to float32 as a C cast would."""
    if isinstance(value, bool) or not isinstance(value, Number):
        raise invalid(owner, field, "must be a number", repr(value))
    try:
        as_double = float(value)
    except OverflowError:  # a Python int beyond float64: it rounds to an infinity
        as_double = math.inf if value > 0 else -math.inf
    with np.errstate(over="ignore"):
        return np.float32(as_double)


def exact_scalar(value: object, data_type: DataType, owner: str, field: str) -> np.integer | np.floating:
    """A DML_SCALAR_UNION of ``data_type``: integers exact and in range, floats without overflow."""
    if isinstance(value, bool) or not isinstance(value, Number):
        raise invalid(owner, field, f"must be a number of type {data_type.name}", repr(value))
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
    return (float_field(parsed.scale, owner, "ScaleBias.Scale"),
            float_field(parsed.bias, owner, "ScaleBias.Bias"))


def compute_values(x: np.ndarray, data_type: DataType) -> np.ndarray:
    """Elements in the compute type: float32 for FLOAT16/FLOAT32 (exact), the type itself otherwise."""
    return x.astype(np.float32) if data_type.is_float else np.asarray(x)


def apply_scale_bias(v: np.ndarray, scale_bias: tuple[np.float32, np.float32] | None) -> np.ndarray:
    """``v * scale + bias`` in float32: a rounded multiply, then a rounded add (never fused)."""
    if scale_bias is None:
        return v
    scale, bias = scale_bias
    product = np.multiply(v, scale, dtype=np.float32)
    return np.add(product, bias, dtype=np.float32)


def clamp(v: np.ndarray, low: np.generic | None, high: np.generic | None) -> np.ndarray:
    """``max(low, min(v, high))`` with one rule for every backend.

    A bound replaces an element only when the comparison is strictly true: a NaN element stays NaN,
    a NaN bound replaces nothing, and on a tie (-0.0 against +0.0) the element is kept.
    """
    if high is not None:
        v = np.where(v > high, high, v)
    if low is not None:
        v = np.where(v < low, low, v)
    return v


def clamp_reference(inputs: Sequence[np.ndarray | None], params: ClampParams) -> np.ndarray:
    """The NumPy reference of CLIP, CLIP1 and THRESHOLD."""
    (x,) = inputs
    assert x is not None  # InputTensor is required: execute never binds None for it
    v = compute_values(x, params.data_type)
    v = apply_scale_bias(v, params.scale_bias)
    v = clamp(v, params.low, params.high)
    return v.astype(params.data_type.numpy)


def clamp_expression(params: ClampParams, scalars: Scalars) -> ex.Expr:
    """CLIP, CLIP1 and THRESHOLD element by element (SPEC 4, 8.3-8.5): in float32 for float tensors
    (ScaleBias a rounded multiply, then a rounded add), in the tensor's type for integers; a bound
    replaces the value only when the comparison is strictly true (so NaN stays, and -0.0 ties keep the
    element); an absent bound is no node at all."""
    data_type = params.data_type
    compute = DataType.FLOAT32 if data_type.is_float else data_type
    v: ex.Expr = ex.Load(0, data_type)
    if data_type is DataType.FLOAT16:
        v = ex.ToFloat32(v)
    if params.scale_bias is not None:
        scale, bias = params.scale_bias
        v = ex.Add(ex.Multiply(v, scalars.add(scale, compute)), scalars.add(bias, compute))
    if params.high is not None:
        high = scalars.add(params.high, compute)
        v = ex.Select(ex.Less(high, v), high, v)
    if params.low is not None:
        low = scalars.add(params.low, compute)
        v = ex.Select(ex.Less(v, low), low, v)
    return ex.Store(v, data_type)


def clamp_kernel(name: str) -> Callable[[ClampParams, Mapping[str, TensorDesc | None]], KernelSpec]:
    """The KernelSpec of CLIP, CLIP1 or THRESHOLD (``name``)."""
    def kernel(params: ClampParams, tensors: Mapping[str, TensorDesc | None]) -> KernelSpec:
        scalars = Scalars()
        element = clamp_expression(params, scalars)
        return KernelSpec(name, (params.data_type,), params.data_type, element, tuple(scalars.values))

    return kernel
