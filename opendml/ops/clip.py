"""ELEMENT_WISE_CLIP and ELEMENT_WISE_CLIP1: ``f = max(Min, min(g(x), Max))``.

A bound replaces the value only when the comparison is strictly true (``clamp``): a NaN element stays NaN, a NaN
bound on a float tensor bounds nothing, and on a tie (-0.0 against +0.0) the element is kept; an absent bound is
no node at all (SPEC 4, 8.3-8.5). Each bound is typed as the tensor's compute values (``typed_bound``): CLIP's
FLOAT bounds rounded to float32, then to the tensor's type; CLIP1's exact values of MinMaxDataType.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS, INTEGERS_32, INTEGERS_64
from ..dtypes import DataType as T
from ..errors import invalid, invalid_type
from ..feature_levels import FeatureLevel as L
from ..schema import OperatorSchema
from .definition import Adapter, Describe, Field
from .elementwise import ScaleBias, exact_scalar, float_field, typed_bound
from .unary import SCALE_BIAS, Constants, UnaryDesc, UnaryParams, float_parameter, unary, unary_row

_CLIP, _CLIP1 = "ELEMENT_WISE_CLIP", "ELEMENT_WISE_CLIP1"


@dataclass(frozen=True)
class ElementWiseClipDesc(UnaryDesc):
    """DML_ELEMENT_WISE_CLIP_OPERATOR_DESC; Min and Max are FLOAT (float32) fields."""

    min: float
    max: float
    scale_bias: ScaleBias | None = None


@dataclass(frozen=True)
class ElementWiseClip1Desc(UnaryDesc):
    """DML_ELEMENT_WISE_CLIP1_OPERATOR_DESC; Min and Max are values of MinMaxDataType."""

    min_max_data_type: T | str
    min: int | float
    max: int | float
    scale_bias: ScaleBias | None = None


def clamp(v: ex.Expr, p: UnaryParams, c: Constants) -> ex.Expr:
    """``max(Min, min(v, Max))`` of the typed bounds present (CLIP, CLIP1 and THRESHOLD)."""
    high, low = p.values.get("Max"), p.values.get("Min")
    if high is not None:
        bound = c(high)
        v = ex.Select(ex.Less(bound, v), bound, v)
    if low is not None:
        bound = c(low)
        v = ex.Select(ex.Less(v, bound), bound, v)
    return v


def clamp_reference(v: np.ndarray, p: UnaryParams) -> np.ndarray:
    high, low = p.values.get("Max"), p.values.get("Min")
    if high is not None:
        v = np.where(v > high, high, v)
    if low is not None:
        v = np.where(v < low, low, v)
    return v


def float_bounds(owner: str) -> Callable[[Any, T], dict[str, Any]]:
    """The reader of a description's FLOAT Min and Max (CLIP's, CLIP_GRAD's): each rounded to float32, then
    typed as the tensor's compute values (``typed_bound``)."""
    def read(desc: Any, data_type: T) -> dict[str, Any]:
        return {name: typed_bound(float_field(value, owner, name), data_type, owner, name)
                for name, value in (("Min", desc.min), ("Max", desc.max))}
    return read


def exact_bounds(owner: str, output: str) -> Callable[[Any, T], dict[str, Any]]:
    """The reader of a description's MinMaxDataType and its typed Min and Max (CLIP1's, CLIP_GRAD1's): the type
    must be the ``output`` tensor's, the bounds exact values of it."""
    def read(desc: Any, data_type: T) -> dict[str, Any]:
        min_max_type = T.parse(desc.min_max_data_type, owner=owner, field="MinMaxDataType")
        if min_max_type != data_type:
            raise invalid(owner, "MinMaxDataType", f"must equal {output}.DataType ({data_type.name})",
                          min_max_type.name)
        return {name: typed_bound(exact_scalar(value, data_type, owner, name), data_type, owner, name)
                for name, value in (("Min", desc.min), ("Max", desc.max))}
    return read


def _clip_over_arrays(level: L, dtype: Any, values: tuple[Any, ...]) -> tuple[OperatorSchema, Describe]:
    """None leaves a side unbounded. Integer tensors run ELEMENT_WISE_CLIP1, with exact typed bounds, where
    the device's feature level has it."""
    low, high, scale_bias = values
    data_type = T.parse(dtype, owner=_CLIP, field="InputTensor.DataType")
    sb = ScaleBias.parse(scale_bias, _CLIP)
    if data_type.is_integer and level >= CLIP1.schema.introduced:
        lowest, highest = data_type.integer_range
        lo = lowest if low is None else typed_bound(_number(low, _CLIP1, "Min"), data_type, _CLIP1, "Min")
        hi = highest if high is None else typed_bound(_number(high, _CLIP1, "Max"), data_type, _CLIP1, "Max")
        assert lo is not None and hi is not None  # an integer bound is never None: typed_bound refuses NaN
        return CLIP1.schema, lambda i, o: ElementWiseClip1Desc(i, o, data_type, int(lo), int(hi), sb)
    lo_f = -math.inf if low is None else low
    hi_f = math.inf if high is None else high
    return CLIP.schema, lambda i, o: ElementWiseClipDesc(i, o, lo_f, hi_f, sb)


def _number(value: object, owner: str, field: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise invalid_type(owner, field, "must be a number", repr(value))
    return int(value) if isinstance(value, (int, np.integer)) else float(value)


CLIP = unary(
    _CLIP, ElementWiseClipDesc, L.FL_1_0, (
        unary_row(L.FL_5_0, (1, 8), FLOATS | INTEGERS_32 | INTEGERS_64),
        unary_row(L.FL_3_0, (1, 8), FLOATS | INTEGERS_32),
        unary_row(L.FL_2_1, (4, 4), FLOATS | INTEGERS_32),
        unary_row(L.FL_1_0, (4, 4), FLOATS)),
    element=clamp, reference=clamp_reference, python="clip",
    fields=(SCALE_BIAS, float_parameter("Min"), float_parameter("Max")), read=float_bounds(_CLIP),
    adapter=Adapter(_clip_over_arrays, optional=frozenset({"min", "max"})))

# No front end by its own name but the graph builder's ``clip1``: ``clip`` runs it on integers.
CLIP1 = unary(
    _CLIP1, ElementWiseClip1Desc, L.FL_5_0, (unary_row(L.FL_5_0, (1, 8), FLOATS | INTEGERS_32 | INTEGERS_64),),
    element=clamp, reference=clamp_reference, python=None,
    fields=(SCALE_BIAS, Field("MinMaxDataType", "data_type", "min_max_data_type"), Field("Min", "scalar", "min"),
            Field("Max", "scalar", "max")), read=exact_bounds(_CLIP1, "OutputTensor"))

CLIP_SCHEMA, CLIP1_SCHEMA = CLIP.schema, CLIP1.schema
