"""ELEMENT_WISE_THRESHOLD: ``f = max(g(x), Min)`` (not ThresholdedRelu)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..dtypes import FLOATS, INTEGERS_32
from ..dtypes import DataType as T
from ..errors import invalid
from ..feature_levels import FeatureLevel as L
from ..schema import OperatorSchema
from .clip import CLIP1, ElementWiseClip1Desc, clamp, clamp_reference
from .definition import Adapter, Describe
from .elementwise import ScaleBias, float_field, typed_bound
from .unary import SCALE_BIAS, UnaryDesc, float_parameter, unary, unary_row

_THRESHOLD = "ELEMENT_WISE_THRESHOLD"
_WIDE_INTEGERS = frozenset({T.INT64, T.UINT64})


@dataclass(frozen=True)
class ElementWiseThresholdDesc(UnaryDesc):
    """DML_ELEMENT_WISE_THRESHOLD_OPERATOR_DESC; Min is a FLOAT (float32) field."""

    min: float
    scale_bias: ScaleBias | None = None


def _bound(desc: ElementWiseThresholdDesc, data_type: T) -> dict[str, Any]:
    return {"Min": typed_bound(float_field(desc.min, _THRESHOLD, "Min"), data_type, _THRESHOLD, "Min")}


def _threshold_over_arrays(level: L, dtype: Any, values: tuple[Any, ...]) -> tuple[OperatorSchema, Describe]:
    """ELEMENT_WISE_THRESHOLD takes no INT64 or UINT64 tensor: those run as ELEMENT_WISE_CLIP1 with Max the
    type's largest value and Min what THRESHOLD's FLOAT Min would be on such a tensor (rounded to float32,
    truncated toward zero, saturated: SPEC 8.3), so the bits are THRESHOLD's, where the level has CLIP1."""
    low, scale_bias = values
    sb = ScaleBias.parse(scale_bias, _THRESHOLD)
    data_type = T.parse(dtype, owner=_THRESHOLD, field="InputTensor.DataType")
    if data_type in _WIDE_INTEGERS and level >= CLIP1.schema.introduced:
        if sb is not None:  # THRESHOLD's own rule (SPEC 8.2), under its name
            raise invalid(_THRESHOLD, "ScaleBias", "must be absent on integer tensors",
                          f"ScaleBias on {data_type.name}")
        lo = typed_bound(float_field(low, _THRESHOLD, "Min"), data_type, _THRESHOLD, "Min")
        hi = data_type.integer_range[1]
        return CLIP1.schema, lambda i, o: ElementWiseClip1Desc(i, o, data_type, int(lo), hi)  # type: ignore[arg-type]
    return THRESHOLD.schema, lambda i, o: ElementWiseThresholdDesc(i, o, low, sb)


THRESHOLD = unary(
    _THRESHOLD, ElementWiseThresholdDesc, L.FL_1_0, (
        unary_row(L.FL_3_0, (1, 8), FLOATS | INTEGERS_32),
        unary_row(L.FL_2_1, (4, 4), FLOATS | INTEGERS_32),
        unary_row(L.FL_1_0, (4, 4), FLOATS)),
    element=clamp, reference=clamp_reference, python="threshold",
    fields=(SCALE_BIAS, float_parameter("Min")), read=_bound, adapter=Adapter(_threshold_over_arrays))

THRESHOLD_SCHEMA = THRESHOLD.schema
