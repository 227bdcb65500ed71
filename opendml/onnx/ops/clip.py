"""ONNX Clip (every version) -> ELEMENT_WISE_CLIP on floats, ELEMENT_WISE_CLIP1 on integers.

Clip-1 and Clip-6 take the bounds as attributes (Clip-6 defaults them to -FLT_MAX and FLT_MAX, so an
infinite element becomes FLT_MAX, as ONNX says); from Clip-11 they are optional scalar inputs, which
opendml needs before the graph runs because DirectML's Min and Max are fields, not tensors. Clip-12
adds the integer types, mapped onto CLIP1 whose typed bounds are exact (CLIP's FLOAT fields cannot
hold every int32 or int64 bound).

ONNX computes ``min(max(x, min), max)``, DirectML ``max(Min, min(x, Max))``: they differ only when
min > max, where ONNX gives max everywhere, so the mapping then passes Min = Max = max. A NaN bound
has no ONNX meaning that DirectML can express (ONNX's reference then gives NaN everywhere, DirectML's
NaN bound bounds nothing), so it is rejected.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ...device import Device
from ...feature_levels import FeatureLevel
from ...ops.clip import CLIP1_SCHEMA, CLIP_SCHEMA, ElementWiseClip1Desc, ElementWiseClipDesc
from .. import types
from ..graph import NodeView, Value, optional
from .base import (
    Lowered,
    Mapping,
    describe,
    expect_known,
    expect_same_type,
    expect_single_element,
    expect_type,
    fail,
    leading_ones,
    make_step,
    output_value,
    scalar,
)

FLT_MAX = float(np.finfo(np.float32).max)  # Clip-6's default bounds are -FLT_MAX and FLT_MAX
_WHY = "(DirectML's Min and Max are fields of the operator description)"


def _allowed(version: int) -> frozenset[int]:
    return types.FLOATS | types.INTEGERS if version >= 12 else types.FLOATS


def check_clip(node: NodeView, inputs: Sequence[Value | None]) -> list[str]:
    assert node.version is not None
    x = inputs[0]
    problems = expect_type(node, "input", x, _allowed(node.version))
    for k, field in ((1, "min"), (2, "max")):
        bound = optional(inputs, k)
        problems += expect_known(node, field, bound, _WHY) + expect_single_element(node, field, bound)
        problems += expect_same_type(node, field, bound, "input", x)
    return problems


def _bounds(node: NodeView, inputs: Sequence[Value | None]) -> tuple[int | float | None, int | float | None]:
    """ONNX's bounds, None for an absent one, as exact Python numbers."""
    assert node.version is not None
    if node.version >= 11:
        low, high = optional(inputs, 1), optional(inputs, 2)
        return (None if low is None else scalar(low)), (None if high is None else scalar(high))
    default = FLT_MAX if node.version == 6 else None  # Clip-1 has no defaults: an absent bound bounds nothing
    low = node.attribute("min", None if default is None else -default)
    return low, node.attribute("max", default)


def lower_clip(node: NodeView, inputs: Sequence[Value | None], device: Device) -> Lowered:
    x = inputs[0]
    assert x is not None and x.data_type is not None
    data_type, shape = x.data_type, x.concrete_shape
    low, high = _bounds(node, inputs)
    if data_type.is_float:
        for field, bound in (("min", low), ("max", high)):
            if bound is not None and math.isnan(bound):
                raise fail(node, field, "must not be NaN (ONNX gives NaN everywhere; DirectML's NaN bound "
                           "bounds nothing)", bound)
    if low is not None and high is not None and low > high:
        low = high  # ONNX: min > max gives max everywhere; DirectML's formula would give Min
    out = output_value(node, x.onnx_type, shape)
    use_clip1 = data_type.is_integer and device.feature_level >= CLIP1_SCHEMA.introduced
    pad = leading_ones(CLIP1_SCHEMA if use_clip1 else CLIP_SCHEMA, device, len(shape))
    tensor = describe(data_type, shape, pad=pad)
    if use_clip1:
        lowest, highest = data_type.integer_range
        desc: object = ElementWiseClip1Desc(tensor, tensor, data_type, lowest if low is None else int(low),
                                            highest if high is None else int(high))
    else:
        desc = ElementWiseClipDesc(tensor, tensor, _float_field(node, "min", low, -math.inf),
                                   _float_field(node, "max", high, math.inf))
    return Lowered((out,), make_step(node, device, desc, [x.name], out))


def _float_field(node: NodeView, field: str, bound: int | float | None, absent: float) -> float:
    """A bound for CLIP's FLOAT field; an integer bound must survive the float32 rounding exactly."""
    if bound is None:
        return absent
    if isinstance(bound, int) and int(np.float32(bound)) != bound:
        raise fail(node, field, f"must be exact in float32 below feature level {FeatureLevel.FL_5_0.label} "
                   "(ELEMENT_WISE_CLIP1, whose bounds are typed, needs 5_0)", bound)
    return float(bound)


CLIP = Mapping("Clip", (1, 6, 11, 12, 13), check_clip, lower_clip)
