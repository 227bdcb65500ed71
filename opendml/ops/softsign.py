"""ACTIVATION_SOFTSIGN: ``f(x) = x / (1 + |x|)``, correctly rounded as a whole (``opendml.rounded``); the
infinities give +-1."""

from __future__ import annotations

from dataclasses import dataclass

from ..dtypes import FLOATS
from ..feature_levels import FeatureLevel as L
from .rounded_activation import whole
from .unary import UnaryDesc, activation_rows


@dataclass(frozen=True)
class ActivationSoftsignDesc(UnaryDesc):
    """DML_ACTIVATION_SOFTSIGN_OPERATOR_DESC."""


SOFTSIGN = whole("ACTIVATION_SOFTSIGN", ActivationSoftsignDesc, L.FL_1_0, activation_rows(FLOATS), "SOFTSIGN",
                 python="softsign")
