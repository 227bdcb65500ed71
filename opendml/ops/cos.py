"""ELEMENT_WISE_COS: ``f(x) = cos(x * scale + bias)``, correctly rounded (``opendml.rounded``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..feature_levels import FeatureLevel as L
from .rounded_unary import rounded_unary
from .unary import ScaleBiasDesc


@dataclass(frozen=True)
class ElementWiseCosDesc(ScaleBiasDesc):
    """DML_ELEMENT_WISE_COS_OPERATOR_DESC."""


COS = rounded_unary("ELEMENT_WISE_COS", ElementWiseCosDesc, L.FL_1_0, "COS", python="cos")
