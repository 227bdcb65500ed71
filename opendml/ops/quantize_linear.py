"""ELEMENT_WISE_QUANTIZE_LINEAR: ``f = clamp(round(input / scale) + zero_point, Min, Max)`` (SPEC 9)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import DataType as T
from ..errors import invalid
from ..feature_levels import FeatureLevel as L
from ..kernels.spec import KernelSpec
from ..schema import OperatorSchema, SupportRow
from ..tensor import TensorDesc
from ..validate import check_same_data_type, check_same_sizes
from .definition import OperatorDefinition
from .quantization import QUANTIZATION_TENSORS, quantization_row

_F32 = frozenset({T.FLOAT32})
_F32_F16 = frozenset({T.FLOAT32, T.FLOAT16})
_F32_I32 = frozenset({T.FLOAT32, T.INT32})
_F32_F16_I32 = frozenset({T.FLOAT32, T.FLOAT16, T.INT32})
_I8_U8 = frozenset({T.INT8, T.UINT8})


def _row(level: L, dimensions: tuple[int, int], inputs: frozenset[T], scales: frozenset[T],
         outputs: frozenset[T], zero_point_optional: bool = False) -> SupportRow:
    return quantization_row(level, dimensions, inputs, scales, outputs, outputs, zero_point_optional)


QUANTIZE_LINEAR_SCHEMA = OperatorSchema(
    name="ELEMENT_WISE_QUANTIZE_LINEAR",
    introduced=L.FL_1_0,
    tensors=QUANTIZATION_TENSORS,
    rows=(
        _row(L.FL_6_2, (1, 8), _F32_F16_I32, _F32_F16, _I8_U8, zero_point_optional=True),
        _row(L.FL_6_0, (1, 8), _F32_F16_I32, _F32_F16, _I8_U8),
        _row(L.FL_3_0, (1, 8), _F32_I32, _F32, _I8_U8),
        _row(L.FL_2_1, (4, 4), _F32_I32, _F32, _I8_U8),
        _row(L.FL_1_0, (4, 4), _F32, _F32, frozenset({T.UINT8})),
    ),
)


@dataclass(frozen=True)
class ElementWiseQuantizeLinearDesc:
    """DML_ELEMENT_WISE_QUANTIZE_LINEAR_OPERATOR_DESC. An absent zero point means 0."""

    input_tensor: TensorDesc
    scale_tensor: TensorDesc
    zero_point_tensor: TensorDesc | None
    output_tensor: TensorDesc


@dataclass(frozen=True)
class QuantizeParams:
    output_type: T


def scale_type_for(input_type: T) -> T:
    """The ScaleTensor's data type an input takes: FLOAT32 for an INT32 input, else the input's own."""
    return T.FLOAT32 if input_type is T.INT32 else input_type


def prepare_quantize_linear(desc: ElementWiseQuantizeLinearDesc) -> QuantizeParams:
    owner = QUANTIZE_LINEAR_SCHEMA.name
    x, scale, zero_point, out = desc.input_tensor, desc.scale_tensor, desc.zero_point_tensor, desc.output_tensor
    wanted = scale_type_for(x.data_type)
    # An input no row accepts is refused by the support table, which names it (not its scale).
    if x.data_type in _F32_F16_I32 and scale.data_type is not wanted:
        why = "FLOAT32 for an INT32 InputTensor" if x.data_type is T.INT32 else "InputTensor.DataType"
        raise invalid(owner, "ScaleTensor.DataType", f"must be {wanted.name} ({why})", scale.data_type.name)
    check_same_sizes(owner, "InputTensor", x, "ScaleTensor", scale)
    check_same_sizes(owner, "InputTensor", x, "OutputTensor", out)
    if zero_point is not None:
        check_same_data_type(owner, "OutputTensor", out, "ZeroPointTensor", zero_point)
        check_same_sizes(owner, "InputTensor", x, "ZeroPointTensor", zero_point)
    return QuantizeParams(out.data_type)


def quantize_linear_reference(inputs: Sequence[np.ndarray | None], params: QuantizeParams) -> np.ndarray:
    """One float32 division, rounded half to even, plus the zero point exactly, saturated (SPEC 9)."""
    x, scale, zero_point = inputs
    assert x is not None and scale is not None  # required tensors: execute never binds None for them
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        quotient = np.divide(x.astype(np.float32), scale.astype(np.float32), dtype=np.float32)
    rounded = np.rint(quotient)  # half to even
    nan = np.isnan(rounded)
    # Beyond +-1024 every zero point (|zp| <= 255) saturates alike, so the bound changes no result.
    whole = np.clip(np.where(nan, 0, rounded), -1024, 1024).astype(np.int64)
    if zero_point is not None:
        whole = whole + zero_point.astype(np.int64)
    low, high = params.output_type.integer_range
    return np.clip(whole, low, high).astype(params.output_type.numpy)


# The type a rounded quotient saturates to before the zero point is added: every quotient beyond its range
# (|q| > 32767) gives the 8-bit output's limit whatever the zero point (|zero point| <= 255), so the
# saturation changes no result, and the exact sum of it and a zero point fits in INT32.
ROUNDED = T.INT16
SUM = T.INT32


def quantize_linear_kernel(params: QuantizeParams, tensors: Mapping[str, TensorDesc | None]) -> KernelSpec:
    """SPEC 9 element by element: the input and the scale as float32 (FLOAT16 exactly, INT32 rounded to
    nearest even), one float32 division, rounded half to even to an integer (NaN, the quotient of 0 / 0 or
    of a NaN, gives 0), the zero point added exactly, saturated to the output type (+-inf to its limits)."""
    x, scale, zero_point = (tensors[name] for name in ("InputTensor", "ScaleTensor", "ZeroPointTensor"))
    assert x is not None and scale is not None
    value: ex.Expr = ex.Load(0, x.data_type)
    if x.data_type is not T.FLOAT32:
        value = ex.ToFloat32(value)
    whole = quantized(value, ex.Load(1, scale.data_type),
                      None if zero_point is None else ex.Load(2, zero_point.data_type), params.output_type)
    inputs = (x.data_type, scale.data_type, None if zero_point is None else zero_point.data_type)
    return KernelSpec(QUANTIZE_LINEAR_SCHEMA.name, inputs, params.output_type, ex.Store(whole, params.output_type))


def quantized(value: ex.Expr, divisor: ex.Expr, zero_point: ex.Expr | None, output_type: T) -> ex.Expr:
    """SPEC 9 of a float32 ``value``: divided by the scale ``divisor`` (as float32: FLOAT16 exactly, INT32
    rounded to nearest even) once in float32, rounded half to even to an integer (NaN gives 0), the zero point
    (None: absent) added exactly, saturated to ``output_type`` (ELEMENT_WISE_QUANTIZE_LINEAR, and
    QUANTIZED_LINEAR_ADD's sum)."""
    if divisor.data_type is not T.FLOAT32:
        divisor = ex.ToFloat32(divisor)
    rounded = ex.Round(ex.Divide(value, divisor))
    if zero_point is None:
        return ex.Saturate(rounded, output_type)
    shifted = ex.Add(ex.Widen(ex.Saturate(rounded, ROUNDED), SUM), ex.Widen(zero_point, SUM))
    return ex.Saturate(shifted, output_type)


QUANTIZE_LINEAR = OperatorDefinition(QUANTIZE_LINEAR_SCHEMA, ElementWiseQuantizeLinearDesc,
                                     prepare_quantize_linear, quantize_linear_reference, quantize_linear_kernel)
