"""QUANTIZE (feature level 6_3): ``clamp(round(input / scale) + zero_point, Min, Max)`` with blocked
quantization tensors, 4-bit outputs included (``ops/blocked.py``; docs/semantics.md, section 11)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import DataType as T
from ..enums import QuantizationType
from ..feature_levels import FeatureLevel as L
from ..kernels.spec import KernelSpec
from ..schema import OperatorSchema
from ..tensor import TensorDesc
from . import blocked
from .blocked import Quantization, check_quantization, expand, four_bit_clamp, midpoint, unpacked
from .definition import OperatorDefinition
from .quantize_linear import ROUNDED, SUM

QUANTIZE_SCHEMA = OperatorSchema(
    name="QUANTIZE",
    introduced=L.FL_6_3,
    tensors=blocked.TENSORS,
    rows=(blocked.row(blocked.FLOATS, blocked.QUANTIZED),),
)


@dataclass(frozen=True)
class QuantizeDesc:
    """DML_QUANTIZE_OPERATOR_DESC: InputTensor, QuantizationType, QuantizationTensors (none; the scale; the
    scale and the zero point), OutputTensor. QuantizationTensorCount is the sequence's length."""

    input_tensor: TensorDesc
    quantization_type: QuantizationType | str | int
    quantization_tensors: Sequence[TensorDesc]
    output_tensor: TensorDesc

    @property
    def quantization_tensor_count(self) -> int:
        return len(self.quantization_tensors)


def prepare_quantize(desc: QuantizeDesc) -> Quantization:
    return check_quantization(QUANTIZE_SCHEMA.name, desc, "OutputTensor", "InputTensor")


def quantize_reference(inputs: Sequence[np.ndarray | None], params: Quantization) -> np.ndarray:
    """One float32 division by the scale (repeated over its block), rounded half to even, plus the zero point
    (the midpoint for SCALE) exactly, saturated to the output type's range (a 4-bit one's too); NaN gives the
    zero point. 4-bit outputs come back unpacked (one element a byte)."""
    x, scale, zero_point = inputs
    assert x is not None
    quotient = x.astype(np.float32)
    if scale is not None:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            quotient = np.divide(quotient, expand(scale, x.shape).astype(np.float32), dtype=np.float32)
    rounded = np.rint(quotient)
    # Beyond +-1024 every zero point (|zp| <= 255) saturates alike, so the bound changes no result.
    whole = np.clip(np.where(np.isnan(rounded), 0, rounded), -1024, 1024).astype(np.int64)
    if zero_point is not None:
        whole = whole + expand(zero_point, x.shape).astype(np.int64)
    elif params.quantization_type is QuantizationType.SCALE:
        whole = whole + midpoint(params.quantized)
    low, high = params.quantized.integer_range
    return np.clip(whole, low, high).astype(params.quantized.numpy)


def quantize_kernel(params: Quantization, tensors: Mapping[str, TensorDesc | None]) -> KernelSpec:
    """Over the kernel's layout (``blocked.kernel_layout``), QUANTIZE_LINEAR's expression: the input and the
    scale as float32, one division, rounded half to even, saturated to INT16, the zero point added exactly in
    INT32, saturated to the output type (an INT8 or UINT8 value, then clamped to a 4-bit type's range)."""
    x, scale, zero_point = (tensors[name] for name in ("InputTensor", blocked.SCALE, blocked.ZERO_POINT))
    assert x is not None
    held = unpacked(params.quantized)
    scalars: list[np.generic] = []
    value: ex.Expr = ex.Load(0, x.data_type)
    if x.data_type is not T.FLOAT32:
        value = ex.ToFloat32(value)
    if scale is not None:
        divisor: ex.Expr = ex.Load(1, scale.data_type)
        if scale.data_type is not T.FLOAT32:
            divisor = ex.ToFloat32(divisor)
        value = ex.Divide(value, divisor)
    rounded = ex.Round(value)
    addend: ex.Expr | None = None
    if zero_point is not None:
        addend = ex.Load(2, held)
    elif params.quantization_type is QuantizationType.SCALE and midpoint(params.quantized):
        addend = ex.Param(0, held)
        scalars.append(held.numpy.type(midpoint(params.quantized)))
    whole: ex.Expr
    if addend is None:
        whole = ex.Saturate(rounded, held)
    else:
        whole = ex.Saturate(ex.Add(ex.Widen(ex.Saturate(rounded, ROUNDED), SUM), ex.Widen(addend, SUM)), held)
    whole = four_bit_clamp(whole, params.quantized, scalars)
    inputs = (x.data_type, None if scale is None else scale.data_type, None if zero_point is None else held)
    return KernelSpec(QUANTIZE_SCHEMA.name, inputs, held, ex.Store(whole, held), tuple(scalars))


QUANTIZE = OperatorDefinition(QUANTIZE_SCHEMA, QuantizeDesc, prepare_quantize, quantize_reference,
                              quantize_kernel, layout=blocked.kernel_layout)
