"""ELEMENT_WISE_ATAN: ``f(x) = atan(x * scale + bias)``, correctly rounded (``opendml.rounded``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..feature_levels import FeatureLevel as L
from .rounded_unary import rounded_unary
from .unary import ScaleBiasDesc


@dataclass(frozen=True)
class ElementWiseAtanDesc(ScaleBiasDesc):
    """DML_ELEMENT_WISE_ATAN_OPERATOR_DESC."""


ATAN = rounded_unary("ELEMENT_WISE_ATAN", ElementWiseAtanDesc, L.FL_1_0, "ATAN", python="atan")
