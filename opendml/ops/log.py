"""ELEMENT_WISE_LOG: ``f(x) = log(x * scale + bias)``, correctly rounded (``opendml.rounded``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..feature_levels import FeatureLevel as L
from .rounded_unary import rounded_unary
from .unary import ScaleBiasDesc


@dataclass(frozen=True)
class ElementWiseLogDesc(ScaleBiasDesc):
    """DML_ELEMENT_WISE_LOG_OPERATOR_DESC."""


LOG = rounded_unary("ELEMENT_WISE_LOG", ElementWiseLogDesc, L.FL_1_0, "LOG", python="log")
