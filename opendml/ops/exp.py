"""ELEMENT_WISE_EXP: ``f(x) = exp(x * scale + bias)``, correctly rounded (``opendml.rounded``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..feature_levels import FeatureLevel as L
from .rounded_unary import rounded_unary
from .unary import ScaleBiasDesc


@dataclass(frozen=True)
class ElementWiseExpDesc(ScaleBiasDesc):
    """DML_ELEMENT_WISE_EXP_OPERATOR_DESC."""


EXP = rounded_unary("ELEMENT_WISE_EXP", ElementWiseExpDesc, L.FL_1_0, "EXP", python="exp")
