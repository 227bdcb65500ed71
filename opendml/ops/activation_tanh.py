"""ACTIVATION_TANH: ``f(x) = tanh(x)``, correctly rounded as a whole (``opendml.rounded``'s TANH, as
ELEMENT_WISE_TANH without a ScaleBias)."""

from __future__ import annotations

from dataclasses import dataclass

from ..dtypes import FLOATS
from ..feature_levels import FeatureLevel as L
from .rounded_activation import whole
from .unary import UnaryDesc, activation_rows


@dataclass(frozen=True)
class ActivationTanhDesc(UnaryDesc):
    """DML_ACTIVATION_TANH_OPERATOR_DESC."""


ACTIVATION_TANH = whole("ACTIVATION_TANH", ActivationTanhDesc, L.FL_1_0, activation_rows(FLOATS), "TANH",
                        python="activation_tanh")
