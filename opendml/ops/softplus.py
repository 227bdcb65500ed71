"""ACTIVATION_SOFTPLUS: ``f(x) = ln(1 + exp(Steepness * x)) / Steepness``. Steepness 1: correctly rounded as a
whole (``opendml.rounded``'s SOFTPLUS); else the composition ``SOFTPLUS(Steepness * x) / Steepness`` (a float32
multiply, SOFTPLUS correctly rounded to FLOAT32, a float32 divide). Steepness below 1 (or NaN) is refused, as
DirectML's page asks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS, DataType
from ..errors import invalid
from ..feature_levels import FeatureLevel as L
from ..rounded.evaluate import evaluate
from .rounded_activation import div, f32, mul, rounded
from .unary import Constants, UnaryDesc, UnaryParams, activation_rows, field_values, float_parameter, unary

NAME = "ACTIVATION_SOFTPLUS"
FIELDS = (float_parameter("Steepness", 1.0),)


@dataclass(frozen=True)
class ActivationSoftplusDesc(UnaryDesc):
    """DML_ACTIVATION_SOFTPLUS_OPERATOR_DESC."""

    steepness: float


def _read(desc: Any, data_type: DataType) -> dict[str, Any]:
    values = field_values(FIELDS, desc, NAME, data_type)
    if not values["Steepness"] >= 1:  # NaN too
        raise invalid(NAME, "Steepness", "must be at least 1", float(values["Steepness"]))
    return values


def _element(v: ex.Expr, p: UnaryParams, c: Constants) -> ex.Expr:
    steepness = p["Steepness"]
    if steepness == 1:
        return ex.Function(v, "SOFTPLUS", p.output)
    return ex.Divide(rounded(ex.Multiply(v, c(steepness)), "SOFTPLUS"), c(steepness))


def _reference(v: np.ndarray, p: UnaryParams) -> np.ndarray:
    steepness = p["Steepness"]
    if steepness == 1:
        return evaluate("SOFTPLUS", v, p.output.name)
    return div(f32("SOFTPLUS", mul(v, steepness)), steepness)


SOFTPLUS = unary(NAME, ActivationSoftplusDesc, L.FL_1_0, activation_rows(FLOATS), element=_element,
                 reference=_reference, python="softplus", fields=FIELDS, read=_read)
