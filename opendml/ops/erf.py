"""ELEMENT_WISE_ERF: ``f(x) = erf(x * scale + bias)``, correctly rounded (``opendml.rounded``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..feature_levels import FeatureLevel as L
from .rounded_unary import rounded_unary
from .unary import ScaleBiasDesc


@dataclass(frozen=True)
class ElementWiseErfDesc(ScaleBiasDesc):
    """DML_ELEMENT_WISE_ERF_OPERATOR_DESC."""


ERF = rounded_unary("ELEMENT_WISE_ERF", ElementWiseErfDesc, L.FL_2_0, "ERF", python="erf")
