"""ELEMENT_WISE_QUANTIZED_LINEAR_ADD: two quantized tensors dequantized, added, quantized again.

``AValue = (A - AZeroPoint) * AScale`` and ``BValue`` alike, as ELEMENT_WISE_DEQUANTIZE_LINEAR computes them into
FLOAT32 (the exact integer difference rounded once to float32, times the scale: ``dequantized``); their sum
rounded once in float32; then ``clamp(round(sum / OutputScale) + OutputZeroPoint, Min, Max)`` as
ELEMENT_WISE_QUANTIZE_LINEAR computes it (one float32 division, half to even, the zero point added exactly,
saturated; a NaN quotient gives the zero point: ``quantized``). The result is bit for bit DEQUANTIZE_LINEAR twice,
ADD and QUANTIZE_LINEAR run as operators of their own (FLOAT32 between them). An absent zero point is 0.

The page expects one element in each scale and zero point ("The expected number of elements ... is 1") and asks
the DimensionCount of every tensor to be the same. opendml takes each scale and zero point in either form: every
size 1 (the page's: one element, broadcast over the output as DirectML does), or the output's Sizes, as every
element-wise operator's tensors (a single value described with zero strides, as the functional API and
``opendml.graph.reinterpret`` do; other strides give a value per element). ATensor and BTensor have the
output's Sizes. The kernel reads a one-element tensor through zero strides over the output's Sizes (its
``layout``), so the bound bytes are never copied."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import DataType as T
from ..errors import invalid
from ..feature_levels import FeatureLevel as L
from ..kernels.spec import KernelSpec
from ..schema import OperatorSchema, SupportRow, TensorField, snake_case
from ..tensor import TensorDesc
from ..validate import check_same_data_type, check_same_sizes
from .blocked import Operand
from .definition import OperatorDefinition
from .dequantize_linear import DequantizeParams, dequantize_linear_reference, dequantized
from .quantize_linear import QuantizeParams, quantize_linear_reference, quantized

NAME = "ELEMENT_WISE_QUANTIZED_LINEAR_ADD"
_INPUTS = ("ATensor", "AScaleTensor", "AZeroPointTensor", "BTensor", "BScaleTensor", "BZeroPointTensor",
           "OutputScaleTensor", "OutputZeroPointTensor")
_OPTIONAL = frozenset({"AZeroPointTensor", "BZeroPointTensor", "OutputZeroPointTensor"})
_QUANTIZATION = tuple(n for n in _INPUTS if n not in ("ATensor", "BTensor"))  # the scales and zero points
_BYTES = frozenset({T.INT8, T.UINT8})
_F32 = frozenset({T.FLOAT32})

QUANTIZED_LINEAR_ADD_SCHEMA = OperatorSchema(
    name=NAME,
    introduced=L.FL_4_0,
    tensors=(*(TensorField(n, "input", optional=n in _OPTIONAL) for n in _INPUTS),
             TensorField("OutputTensor", "output")),
    rows=(SupportRow(L.FL_4_0, (1, 8), {n: _F32 if "Scale" in n else _BYTES for n in (*_INPUTS, "OutputTensor")},
                     _OPTIONAL),),
)


@dataclass(frozen=True)
class ElementWiseQuantizedLinearAddDesc:
    """DML_ELEMENT_WISE_QUANTIZED_LINEAR_ADD_OPERATOR_DESC. An absent zero point means 0."""

    a_tensor: TensorDesc
    a_scale_tensor: TensorDesc
    a_zero_point_tensor: TensorDesc | None
    b_tensor: TensorDesc
    b_scale_tensor: TensorDesc
    b_zero_point_tensor: TensorDesc | None
    output_scale_tensor: TensorDesc
    output_zero_point_tensor: TensorDesc | None
    output_tensor: TensorDesc


@dataclass(frozen=True)
class QuantizedLinearAddParams:
    output_type: T


def prepare_quantized_linear_add(desc: ElementWiseQuantizedLinearAddDesc) -> QuantizedLinearAddParams:
    out = desc.output_tensor
    for side, data in (("A", desc.a_tensor), ("B", desc.b_tensor), ("Output", out)):
        zero_point = getattr(desc, f"{side.lower()}_zero_point_tensor")
        if zero_point is not None:
            data_name = "OutputTensor" if side == "Output" else f"{side}Tensor"
            check_same_data_type(NAME, data_name, data, f"{side}ZeroPointTensor", zero_point)
    check_same_sizes(NAME, "OutputTensor", out, "ATensor", desc.a_tensor)
    check_same_sizes(NAME, "OutputTensor", out, "BTensor", desc.b_tensor)
    for field in _QUANTIZATION:
        tensor = getattr(desc, snake_case(field))
        if tensor is not None:
            _check_quantization_sizes(field, tensor, out)
    return QuantizedLinearAddParams(out.data_type)


def _check_quantization_sizes(field: str, tensor: TensorDesc, out: TensorDesc) -> None:
    """A scale or zero point: the output's DimensionCount (the page's constraint), every size 1 (the page's one
    element) or the output's Sizes."""
    if tensor.dimension_count != out.dimension_count:
        raise invalid(NAME, f"{field}.DimensionCount", f"must equal OutputTensor.DimensionCount "
                      f"({out.dimension_count})", tensor.dimension_count)
    if _single(tensor) or tensor.sizes == out.sizes:
        return
    raise invalid(NAME, f"{field}.Sizes", f"must be all 1 (one element, for every output element) or equal "
                  f"OutputTensor.Sizes ({list(out.sizes)})", list(tensor.sizes))


def _single(tensor: TensorDesc) -> bool:
    return all(n == 1 for n in tensor.sizes)


def quantized_linear_add_layout(name: str, params: QuantizedLinearAddParams,
                                tensors: Mapping[str, TensorDesc | None]) -> dict[str, Operand | None]:
    """Each tensor as the kernel reads it: a one-element scale or zero point over the output's Sizes through
    zero strides (one value for every element, as DirectML broadcasts it); every other tensor as described."""
    out = tensors["OutputTensor"]
    assert out is not None
    layout: dict[str, Operand | None] = {}
    for field, tensor in tensors.items():
        if tensor is None or tensor.sizes == out.sizes:
            layout[field] = None if tensor is None else Operand(tensor)
            continue
        layout[field] = Operand(TensorDesc(tensor.data_type, out.sizes, [0] * out.dimension_count,
                                           total_tensor_size_in_bytes=tensor.total_tensor_size_in_bytes))
    return layout


def quantized_linear_add_reference(inputs: Sequence[np.ndarray | None],
                                   params: QuantizedLinearAddParams) -> np.ndarray:
    """DEQUANTIZE_LINEAR's reference twice (into FLOAT32), their float32 sum, QUANTIZE_LINEAR's reference."""
    a, a_scale, a_zero, b, b_scale, b_zero, out_scale, out_zero = inputs
    as_float = DequantizeParams(T.FLOAT32)
    total = np.add(dequantize_linear_reference([a, a_scale, a_zero], as_float),
                   dequantize_linear_reference([b, b_scale, b_zero], as_float), dtype=np.float32)
    return quantize_linear_reference([total, out_scale, out_zero], QuantizeParams(params.output_type))


def quantized_linear_add_kernel(params: QuantizedLinearAddParams,
                                tensors: Mapping[str, TensorDesc | None]) -> KernelSpec:
    """``dequantized`` of operands 0-2 and of 3-5 (float32 each), added in float32, ``quantized`` by operand 6
    with the zero point operand 7."""
    types = [None if tensors[n] is None else tensors[n].data_type for n in _INPUTS]  # type: ignore[union-attr]
    a_type, a_scale, a_zero, b_type, b_scale, b_zero, out_scale, out_zero = types
    assert a_type is not None and a_scale is not None and b_type is not None and b_scale is not None
    assert out_scale is not None
    total = ex.Add(dequantized(a_type, a_scale, a_zero, (0, 1, 2)), dequantized(b_type, b_scale, b_zero, (3, 4, 5)))
    zero_point = None if out_zero is None else ex.Load(7, out_zero)
    whole = quantized(total, ex.Load(6, out_scale), zero_point, params.output_type)
    return KernelSpec(NAME, tuple(types), params.output_type, ex.Store(whole, params.output_type))


QUANTIZED_LINEAR_ADD = OperatorDefinition(QUANTIZED_LINEAR_ADD_SCHEMA, ElementWiseQuantizedLinearAddDesc,
                                          prepare_quantized_linear_add, quantized_linear_add_reference,
                                          quantized_linear_add_kernel, layout=quantized_linear_add_layout)
