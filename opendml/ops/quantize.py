"""QUANTIZE (feature level 6_3): ``clamp(round(input / scale) + zero_point, Min, Max)`` with blocked
quantization tensors, 4-bit outputs included (``ops/blocked.py``; docs/semantics.md, section 11)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..kernels.spec import KernelSpec
from ..tensor import TensorDesc
from . import blocked
from .blocked import BlockedQuantizationDesc, Quantization, check_quantization, expand, four_bit_clamp, unpacked
from .definition import OperatorDefinition
from .quantize_linear import ROUNDED, SUM

QUANTIZE_SCHEMA = blocked.schema("QUANTIZE", blocked.FLOATS, blocked.QUANTIZED)


@dataclass(frozen=True)
class QuantizeDesc(BlockedQuantizationDesc):
    """DML_QUANTIZE_OPERATOR_DESC: InputTensor, QuantizationType, QuantizationTensors (none; the scale; the
    scale and the zero point), OutputTensor. QuantizationTensorCount is the sequence's length."""


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
    whole = whole + blocked.zero_point_reference(params, zero_point, x.shape)
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
    value = blocked.load_float32(0, x.data_type)
    if scale is not None:
        value = ex.Divide(value, blocked.load_float32(1, scale.data_type))
    rounded = ex.Round(value)
    addend = blocked.zero_point_operand(params, zero_point is not None, scalars)
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
