"""ELEMENT_WISE_CLIP and ELEMENT_WISE_CLIP1: ``f = max(Min, min(g(x), Max))``."""

from __future__ import annotations

from dataclasses import dataclass

from ..dtypes import FLOATS, INTEGERS_32, INTEGERS_64
from ..dtypes import DataType as T
from ..errors import invalid
from ..feature_levels import FeatureLevel as L
from ..schema import OperatorSchema
from ..tensor import TensorDesc
from .definition import OperatorDefinition
from .elementwise import (
    ClampParams,
    ScaleBias,
    clamp_kernel,
    clamp_reference,
    exact_scalar,
    float_field,
    prepare_unary,
    typed_bound,
)
from .unary import UNARY_TENSORS, unary_row

CLIP_SCHEMA = OperatorSchema(
    name="ELEMENT_WISE_CLIP",
    introduced=L.FL_1_0,
    tensors=UNARY_TENSORS,
    rows=(
        unary_row(L.FL_5_0, (1, 8), FLOATS | INTEGERS_32 | INTEGERS_64),
        unary_row(L.FL_3_0, (1, 8), FLOATS | INTEGERS_32),
        unary_row(L.FL_2_1, (4, 4), FLOATS | INTEGERS_32),
        unary_row(L.FL_1_0, (4, 4), FLOATS),
    ),
    in_place=True,
)

CLIP1_SCHEMA = OperatorSchema(
    name="ELEMENT_WISE_CLIP1",
    introduced=L.FL_5_0,
    tensors=UNARY_TENSORS,
    rows=(unary_row(L.FL_5_0, (1, 8), FLOATS | INTEGERS_32 | INTEGERS_64),),
    in_place=True,
)


@dataclass(frozen=True)
class ElementWiseClipDesc:
    """DML_ELEMENT_WISE_CLIP_OPERATOR_DESC; Min and Max are FLOAT (float32) fields."""

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    min: float
    max: float
    scale_bias: ScaleBias | None = None


@dataclass(frozen=True)
class ElementWiseClip1Desc:
    """DML_ELEMENT_WISE_CLIP1_OPERATOR_DESC; Min and Max are values of MinMaxDataType."""

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    min_max_data_type: T | str
    min: int | float
    max: int | float
    scale_bias: ScaleBias | None = None


def prepare_clip(desc: ElementWiseClipDesc) -> ClampParams:
    owner = CLIP_SCHEMA.name
    scale_bias = prepare_unary(owner, desc.input_tensor, desc.output_tensor, desc.scale_bias)
    data_type = desc.output_tensor.data_type
    low = typed_bound(float_field(desc.min, owner, "Min"), data_type, owner, "Min")
    high = typed_bound(float_field(desc.max, owner, "Max"), data_type, owner, "Max")
    return ClampParams(data_type, scale_bias, low, high)


def prepare_clip1(desc: ElementWiseClip1Desc) -> ClampParams:
    owner = CLIP1_SCHEMA.name
    scale_bias = prepare_unary(owner, desc.input_tensor, desc.output_tensor, desc.scale_bias)
    data_type = desc.output_tensor.data_type
    min_max_type = T.parse(desc.min_max_data_type, owner=owner, field="MinMaxDataType")
    if min_max_type != data_type:
        raise invalid(owner, "MinMaxDataType", f"must equal OutputTensor.DataType ({data_type.name})",
                      min_max_type.name)
    low = typed_bound(exact_scalar(desc.min, data_type, owner, "Min"), data_type, owner, "Min")
    high = typed_bound(exact_scalar(desc.max, data_type, owner, "Max"), data_type, owner, "Max")
    return ClampParams(data_type, scale_bias, low, high)


CLIP = OperatorDefinition(CLIP_SCHEMA, ElementWiseClipDesc, prepare_clip, clamp_reference,
                          clamp_kernel(CLIP_SCHEMA.name))
CLIP1 = OperatorDefinition(CLIP1_SCHEMA, ElementWiseClip1Desc, prepare_clip1, clamp_reference,
                           clamp_kernel(CLIP1_SCHEMA.name))
