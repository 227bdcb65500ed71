"""ELEMENT_WISE_TANH: ``f(x) = tanh(x * scale + bias)``, correctly rounded (``opendml.rounded``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..feature_levels import FeatureLevel as L
from .rounded_unary import rounded_unary
from .unary import ScaleBiasDesc


@dataclass(frozen=True)
class ElementWiseTanhDesc(ScaleBiasDesc):
    """DML_ELEMENT_WISE_TANH_OPERATOR_DESC."""


TANH = rounded_unary("ELEMENT_WISE_TANH", ElementWiseTanhDesc, L.FL_2_0, "TANH", python="tanh")
