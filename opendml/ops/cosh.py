"""ELEMENT_WISE_COSH: ``f(x) = cosh(x * scale + bias)``, correctly rounded (``opendml.rounded``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..feature_levels import FeatureLevel as L
from .rounded_unary import rounded_unary
from .unary import ScaleBiasDesc


@dataclass(frozen=True)
class ElementWiseCoshDesc(ScaleBiasDesc):
    """DML_ELEMENT_WISE_COSH_OPERATOR_DESC."""


COSH = rounded_unary("ELEMENT_WISE_COSH", ElementWiseCoshDesc, L.FL_2_0, "COSH", python="cosh")
