"""ELEMENT_WISE_TAN: ``f(x) = tan(x * scale + bias)``, correctly rounded (``opendml.rounded``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..feature_levels import FeatureLevel as L
from .rounded_unary import rounded_unary
from .unary import ScaleBiasDesc


@dataclass(frozen=True)
class ElementWiseTanDesc(ScaleBiasDesc):
    """DML_ELEMENT_WISE_TAN_OPERATOR_DESC."""


TAN = rounded_unary("ELEMENT_WISE_TAN", ElementWiseTanDesc, L.FL_1_0, "TAN", python="tan")
