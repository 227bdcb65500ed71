"""ELEMENT_WISE_ACOS: ``f(x) = acos(x * scale + bias)``, correctly rounded (``opendml.rounded``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..feature_levels import FeatureLevel as L
from .rounded_unary import rounded_unary
from .unary import ScaleBiasDesc


@dataclass(frozen=True)
class ElementWiseAcosDesc(ScaleBiasDesc):
    """DML_ELEMENT_WISE_ACOS_OPERATOR_DESC."""


ACOS = rounded_unary("ELEMENT_WISE_ACOS", ElementWiseAcosDesc, L.FL_1_0, "ACOS", python="acos")
