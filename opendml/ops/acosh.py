"""ELEMENT_WISE_ACOSH: ``f(x) = acosh(x * scale + bias)``, correctly rounded (``opendml.rounded``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..feature_levels import FeatureLevel as L
from .rounded_unary import rounded_unary
from .unary import ScaleBiasDesc


@dataclass(frozen=True)
class ElementWiseAcoshDesc(ScaleBiasDesc):
    """DML_ELEMENT_WISE_ACOSH_OPERATOR_DESC."""


ACOSH = rounded_unary("ELEMENT_WISE_ACOSH", ElementWiseAcoshDesc, L.FL_2_0, "ACOSH", python="acosh")
