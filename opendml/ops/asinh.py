"""ELEMENT_WISE_ASINH: ``f(x) = asinh(x * scale + bias)``, correctly rounded (``opendml.rounded``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..feature_levels import FeatureLevel as L
from .rounded_unary import rounded_unary
from .unary import ScaleBiasDesc


@dataclass(frozen=True)
class ElementWiseAsinhDesc(ScaleBiasDesc):
    """DML_ELEMENT_WISE_ASINH_OPERATOR_DESC."""


ASINH = rounded_unary("ELEMENT_WISE_ASINH", ElementWiseAsinhDesc, L.FL_2_0, "ASINH", python="asinh")
