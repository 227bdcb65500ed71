"""ELEMENT_WISE_ASIN: ``f(x) = asin(x * scale + bias)``, correctly rounded (``opendml.rounded``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..feature_levels import FeatureLevel as L
from .rounded_unary import rounded_unary
from .unary import ScaleBiasDesc


@dataclass(frozen=True)
class ElementWiseAsinDesc(ScaleBiasDesc):
    """DML_ELEMENT_WISE_ASIN_OPERATOR_DESC."""


ASIN = rounded_unary("ELEMENT_WISE_ASIN", ElementWiseAsinDesc, L.FL_1_0, "ASIN", python="asin")
