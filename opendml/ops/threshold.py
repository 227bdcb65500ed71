"""ELEMENT_WISE_THRESHOLD: ``f = max(g(x), Min)`` (not ThresholdedRelu)."""

from __future__ import annotations

from dataclasses import dataclass

from ..dtypes import FLOATS, INTEGERS_32
from ..feature_levels import FeatureLevel as L
from ..schema import OperatorSchema
from ..tensor import TensorDesc
from .definition import OperatorDefinition
from .elementwise import (
    ClampParams,
    ScaleBias,
    clamp_kernel,
    clamp_reference,
    float_field,
    prepare_unary,
    typed_bound,
)
from .unary import UNARY_TENSORS, unary_row

THRESHOLD_SCHEMA = OperatorSchema(
    name="ELEMENT_WISE_THRESHOLD",
    introduced=L.FL_1_0,
    tensors=UNARY_TENSORS,
    rows=(
        unary_row(L.FL_3_0, (1, 8), FLOATS | INTEGERS_32),
        unary_row(L.FL_2_1, (4, 4), FLOATS | INTEGERS_32),
        unary_row(L.FL_1_0, (4, 4), FLOATS),
    ),
    in_place=True,
)


@dataclass(frozen=True)
class ElementWiseThresholdDesc:
    """DML_ELEMENT_WISE_THRESHOLD_OPERATOR_DESC; Min is a FLOAT (float32) field."""

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    min: float
    scale_bias: ScaleBias | None = None


def prepare_threshold(desc: ElementWiseThresholdDesc) -> ClampParams:
    owner = THRESHOLD_SCHEMA.name
    scale_bias = prepare_unary(owner, desc.input_tensor, desc.output_tensor, desc.scale_bias)
    data_type = desc.output_tensor.data_type
    low = typed_bound(float_field(desc.min, owner, "Min"), data_type, owner, "Min")
    return ClampParams(data_type, scale_bias, low, None)


THRESHOLD = OperatorDefinition(THRESHOLD_SCHEMA, ElementWiseThresholdDesc, prepare_threshold, clamp_reference,
                               clamp_kernel(THRESHOLD_SCHEMA.name))
