"""DEQUANTIZE (feature level 6_3): ``(input - zero_point) * scale`` with blocked quantization tensors, 4-bit
inputs included (``ops/blocked.py`` has the rules both operators share; docs/semantics.md, section 11)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..kernels.spec import KernelSpec
from ..tensor import TensorDesc
from . import blocked
from .blocked import BlockedQuantizationDesc, Quantization, check_quantization, expand, unpacked
from .definition import OperatorDefinition

DEQUANTIZE_SCHEMA = blocked.schema("DEQUANTIZE", blocked.QUANTIZED, blocked.FLOATS)


@dataclass(frozen=True)
class DequantizeDesc(BlockedQuantizationDesc):
    """DML_DEQUANTIZE_OPERATOR_DESC: InputTensor, QuantizationType, QuantizationTensors (none; the scale; the
    scale and the zero point), OutputTensor. QuantizationTensorCount is the sequence's length."""


def prepare_dequantize(desc: DequantizeDesc) -> Quantization:
    return check_quantization(DEQUANTIZE_SCHEMA.name, desc, "InputTensor", "OutputTensor")


def dequantize_reference(inputs: Sequence[np.ndarray | None], params: Quantization) -> np.ndarray:
    """The exact integer difference (the zero point repeated over its block; the midpoint for SCALE), rounded
    once to float32, times the scale in float32 (one rounding), stored as the output type (SPEC 8.6). 4-bit
    inputs come unpacked (one element a byte)."""
    x, scale, zero_point = inputs
    assert x is not None
    value = (x.astype(np.int64) - blocked.zero_point_reference(params, zero_point, x.shape)).astype(np.float32)
    if scale is not None:
        value = np.multiply(value, expand(scale, x.shape).astype(np.float32), dtype=np.float32)
    return value.astype(params.float_type.numpy)


def dequantize_kernel(params: Quantization, tensors: Mapping[str, TensorDesc | None]) -> KernelSpec:
    """Over the kernel's layout (``blocked.kernel_layout``: 4-bit operands unpacked to INT8 and UINT8, blocked
    axes cut in two), DEQUANTIZE_LINEAR's expression: the difference exact in the narrowest type holding it, one
    conversion to float32, one multiply by the scale, one store."""
    scale, zero_point = tensors[blocked.SCALE], tensors[blocked.ZERO_POINT]
    held = unpacked(params.quantized)
    scalars: list[np.generic] = []
    value: ex.Expr = ex.Load(0, held)
    subtrahend = blocked.zero_point_operand(params, zero_point is not None, scalars)
    if subtrahend is not None:
        wide = ex.difference_type(held, held)
        value = ex.Subtract(ex.Widen(value, wide), ex.Widen(subtrahend, wide))
    result: ex.Expr = ex.ToFloat32(value)
    if scale is not None:
        result = ex.Multiply(result, blocked.load_float32(1, scale.data_type))
    inputs = (held, None if scale is None else scale.data_type, None if zero_point is None else held)
    return KernelSpec(DEQUANTIZE_SCHEMA.name, inputs, params.float_type, ex.Store(result, params.float_type),
                      tuple(scalars))


DEQUANTIZE = OperatorDefinition(DEQUANTIZE_SCHEMA, DequantizeDesc, prepare_dequantize, dequantize_reference,
                                dequantize_kernel, layout=blocked.kernel_layout)
