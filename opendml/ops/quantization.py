"""What DEQUANTIZE_LINEAR and QUANTIZE_LINEAR share: their four tensors and the shape of a support-table row."""

from __future__ import annotations

from ..dtypes import DataType as T
from ..feature_levels import FeatureLevel as L
from ..schema import SupportRow, TensorField

QUANTIZATION_TENSORS = (
    TensorField("InputTensor", "input"),
    TensorField("ScaleTensor", "input"),
    TensorField("ZeroPointTensor", "input", optional=True),
    TensorField("OutputTensor", "output"),
)


def quantization_row(level: L, dimensions: tuple[int, int], inputs: frozenset[T], scales: frozenset[T],
                     zero_points: frozenset[T], outputs: frozenset[T], zero_point_optional: bool = False) -> SupportRow:
    """One row of a quantization operator's table; ``zero_point_optional``: ZeroPointTensor may be left out."""
    types = {"InputTensor": inputs, "ScaleTensor": scales, "ZeroPointTensor": zero_points, "OutputTensor": outputs}
    absent = frozenset({"ZeroPointTensor"}) if zero_point_optional else frozenset()
    return SupportRow(level, dimensions, types, absent)
