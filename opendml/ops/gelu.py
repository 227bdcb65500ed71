"""ACTIVATION_GELU: ``f(x) = 0.5 * x * (1 + erf(x / sqrt(2)))`` (the erf form), correctly rounded as a whole
(``opendml.rounded``'s GELU: ``x / 2 * erfc(-x / sqrt(2))`` with a corrected argument)."""

from __future__ import annotations

from dataclasses import dataclass

from ..dtypes import FLOATS
from ..feature_levels import FeatureLevel as L
from .rounded_activation import whole
from .unary import UnaryDesc, unary_row


@dataclass(frozen=True)
class ActivationGeluDesc(UnaryDesc):
    """DML_ACTIVATION_GELU_OPERATOR_DESC."""


GELU = whole("ACTIVATION_GELU", ActivationGeluDesc, L.FL_5_1, (unary_row(L.FL_5_1, (1, 8), FLOATS),), "GELU",
             python="gelu")
