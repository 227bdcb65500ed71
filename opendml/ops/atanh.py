"""ELEMENT_WISE_ATANH: ``f(x) = atanh(x * scale + bias)``, correctly rounded (``opendml.rounded``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..feature_levels import FeatureLevel as L
from .rounded_unary import rounded_unary
from .unary import ScaleBiasDesc


@dataclass(frozen=True)
class ElementWiseAtanhDesc(ScaleBiasDesc):
    """DML_ELEMENT_WISE_ATANH_OPERATOR_DESC."""


ATANH = rounded_unary("ELEMENT_WISE_ATANH", ElementWiseAtanhDesc, L.FL_2_0, "ATANH", python="atanh")
