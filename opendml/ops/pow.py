"""ELEMENT_WISE_POW: ``f(x, e) = pow(x * scale + bias, e)`` (InputTensor ``x``, ExponentTensor ``e``; the
ScaleBias applies to the input only), correctly rounded (``opendml.rounded.binary``). A negative base with a
non-integral exponent gives NaN, as the page says; the special values are C99's (``pow(x, 0) = 1``, ``pow(1, e) =
1``, ``pow(-1, +-inf) = 1``...). The floats of the page's table: its integer rows (exact integer powers) are not
declared yet, and a description of them is refused by the support table."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS, DataType
from ..feature_levels import FeatureLevel as L
from ..rounded.evaluate import evaluate_binary
from ..tensor import TensorDesc
from .binary import binary, binary_row
from .elementwise import ScaleBias, apply_scale_bias, float_field
from .unary import SCALE_BIAS, Constants, UnaryParams

_NAME = "ELEMENT_WISE_POW"
_TENSORS = ("InputTensor", "ExponentTensor", "OutputTensor")


@dataclass(frozen=True)
class ElementWisePowDesc:
    """DML_ELEMENT_WISE_POW_OPERATOR_DESC."""

    input_tensor: TensorDesc
    exponent_tensor: TensorDesc
    output_tensor: TensorDesc
    scale_bias: ScaleBias | None = None


def _read(desc: Any, data_type: DataType) -> Mapping[str, Any]:
    """The ScaleBias in float32 (its fields as FLOAT fields are read), or None."""
    parsed = ScaleBias.parse(desc.scale_bias, _NAME)
    if parsed is None:
        return {"ScaleBias": None}
    return {"ScaleBias": (float_field(parsed.scale, _NAME, "ScaleBias.Scale"),
                          float_field(parsed.bias, _NAME, "ScaleBias.Bias"))}


def _element(a: ex.Expr, b: ex.Expr, p: UnaryParams, c: Constants) -> ex.Expr:
    if p["ScaleBias"] is not None:  # a rounded multiply, then a rounded add (never fused)
        scale, bias = p["ScaleBias"]
        a = ex.Add(ex.Multiply(a, c(scale)), c(bias))
    return ex.BinaryFunction(a, b, "POW", p.output)


def _reference(a: np.ndarray, b: np.ndarray, p: UnaryParams) -> np.ndarray:
    return evaluate_binary("POW", apply_scale_bias(a, p["ScaleBias"]), b, p.output.name)


POW = binary(
    _NAME, ElementWisePowDesc, L.FL_1_0,
    (binary_row(L.FL_3_0, (1, 8), FLOATS, _TENSORS), binary_row(L.FL_1_0, (4, 4), FLOATS, _TENSORS)),
    element=_element, reference=_reference, python="pow", names=_TENSORS, fields=(SCALE_BIAS,), read=_read)
