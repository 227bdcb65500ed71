"""ELEMENT_WISE_SIN: ``f(x) = sin(x * scale + bias)``, correctly rounded (``opendml.rounded``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..feature_levels import FeatureLevel as L
from .rounded_unary import rounded_unary
from .unary import ScaleBiasDesc


@dataclass(frozen=True)
class ElementWiseSinDesc(ScaleBiasDesc):
    """DML_ELEMENT_WISE_SIN_OPERATOR_DESC."""


SIN = rounded_unary("ELEMENT_WISE_SIN", ElementWiseSinDesc, L.FL_1_0, "SIN", python="sin")
