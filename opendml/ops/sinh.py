"""ELEMENT_WISE_SINH: ``f(x) = sinh(x * scale + bias)``, correctly rounded (``opendml.rounded``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..feature_levels import FeatureLevel as L
from .rounded_unary import rounded_unary
from .unary import ScaleBiasDesc


@dataclass(frozen=True)
class ElementWiseSinhDesc(ScaleBiasDesc):
    """DML_ELEMENT_WISE_SINH_OPERATOR_DESC."""


SINH = rounded_unary("ELEMENT_WISE_SINH", ElementWiseSinhDesc, L.FL_2_0, "SINH", python="sinh")
