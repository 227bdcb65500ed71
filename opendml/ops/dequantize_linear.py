"""ELEMENT_WISE_DEQUANTIZE_LINEAR: ``f = (input - zero_point) * scale``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import INTEGERS_32
from ..dtypes import DataType as T
from ..feature_levels import FeatureLevel as L
from ..kernels.spec import KernelSpec
from ..schema import OperatorSchema, SupportRow
from ..tensor import TensorDesc
from ..validate import check_same_data_type, check_same_sizes
from .definition import OperatorDefinition
from .quantization import QUANTIZATION_TENSORS, quantization_row

_F32 = frozenset({T.FLOAT32})
_F32_F16 = frozenset({T.FLOAT32, T.FLOAT16})


def _row(level: L, dimensions: tuple[int, int], inputs: frozenset[T], floats: frozenset[T],
         zero_point_optional: bool = False) -> SupportRow:
    return quantization_row(level, dimensions, inputs, floats, inputs, floats, zero_point_optional)


DEQUANTIZE_LINEAR_SCHEMA = OperatorSchema(
    name="ELEMENT_WISE_DEQUANTIZE_LINEAR",
    introduced=L.FL_1_0,
    tensors=QUANTIZATION_TENSORS,
    rows=(
        _row(L.FL_6_2, (1, 8), INTEGERS_32, _F32_F16, zero_point_optional=True),
        _row(L.FL_6_0, (1, 8), INTEGERS_32, _F32_F16),
        _row(L.FL_3_0, (1, 8), INTEGERS_32, _F32),
        _row(L.FL_2_1, (4, 4), INTEGERS_32, _F32),
        _row(L.FL_1_0, (4, 4), frozenset({T.UINT8}), _F32),
    ),
)


@dataclass(frozen=True)
class ElementWiseDequantizeLinearDesc:
    """DML_ELEMENT_WISE_DEQUANTIZE_LINEAR_OPERATOR_DESC. An absent zero point means 0."""

    input_tensor: TensorDesc
    scale_tensor: TensorDesc
    zero_point_tensor: TensorDesc | None
    output_tensor: TensorDesc


@dataclass(frozen=True)
class DequantizeParams:
    output_type: T


def prepare_dequantize_linear(desc: ElementWiseDequantizeLinearDesc) -> DequantizeParams:
    owner = DEQUANTIZE_LINEAR_SCHEMA.name
    x, scale, zero_point, out = desc.input_tensor, desc.scale_tensor, desc.zero_point_tensor, desc.output_tensor
    check_same_data_type(owner, "ScaleTensor", scale, "OutputTensor", out)
    check_same_sizes(owner, "InputTensor", x, "ScaleTensor", scale)
    check_same_sizes(owner, "InputTensor", x, "OutputTensor", out)
    if zero_point is not None:
        check_same_data_type(owner, "InputTensor", x, "ZeroPointTensor", zero_point)
        check_same_sizes(owner, "InputTensor", x, "ZeroPointTensor", zero_point)
    return DequantizeParams(out.data_type)


def dequantize_linear_reference(inputs: Sequence[np.ndarray | None], params: DequantizeParams) -> np.ndarray:
    """Exact integer difference, rounded once to float32, times the scale in float32 (SPEC 8.6)."""
    x, scale, zero_point = inputs
    assert x is not None and scale is not None  # required tensors: execute never binds None for them
    difference = x.astype(np.int64)
    if zero_point is not None:
        difference = difference - zero_point.astype(np.int64)  # exact: both fit in 33 bits
    value = np.multiply(difference.astype(np.float32), scale.astype(np.float32), dtype=np.float32)
    return value.astype(params.output_type.numpy)


def dequantize_linear_kernel(params: DequantizeParams, tensors: Mapping[str, TensorDesc | None]) -> KernelSpec:
    """SPEC 8.6 element by element: the difference exact in the narrowest type that holds it (INT16 for
    8-bit operands, INT32 for 16-bit, INT64 for 32-bit), converted once to float32, times the scale in
    float32 (rounded once), stored as the output type (FLOAT16 rounded once more)."""
    x, scale, zero_point = (tensors[name] for name in ("InputTensor", "ScaleTensor", "ZeroPointTensor"))
    assert x is not None and scale is not None
    element = ex.Store(dequantized(x.data_type, scale.data_type, None if zero_point is None else zero_point.data_type,
                                   (0, 1, 2)), params.output_type)
    inputs = (x.data_type, scale.data_type, None if zero_point is None else zero_point.data_type)
    return KernelSpec(DEQUANTIZE_LINEAR_SCHEMA.name, inputs, params.output_type, element)


def dequantized(x: T, scale: T, zero_point: T | None, operands: tuple[int, int, int]) -> ex.Expr:
    """The float32 ``(x - zero_point) * scale`` of the operands numbered ``operands`` (input, scale, zero point;
    ``zero_point`` None: absent): the exact integer difference, rounded once to float32, times the scale
    (ELEMENT_WISE_DEQUANTIZE_LINEAR, and QUANTIZED_LINEAR_ADD's two inputs)."""
    value: ex.Expr = ex.Load(operands[0], x)
    if zero_point is not None:
        wide = ex.difference_type(x, zero_point)
        value = ex.Subtract(ex.Widen(value, wide), ex.Widen(ex.Load(operands[2], zero_point), wide))
    factor: ex.Expr = ex.Load(operands[1], scale)
    if scale is T.FLOAT16:
        factor = ex.ToFloat32(factor)
    return ex.Multiply(ex.ToFloat32(value), factor)


DEQUANTIZE_LINEAR = OperatorDefinition(DEQUANTIZE_LINEAR_SCHEMA, ElementWiseDequantizeLinearDesc,
                                       prepare_dequantize_linear, dequantize_linear_reference,
                                       dequantize_linear_kernel)
