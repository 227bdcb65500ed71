"""ACTIVATION_SIGMOID: ``f(x) = 1 / (1 + exp(-x))``, correctly rounded as a whole (``opendml.rounded``)."""

from __future__ import annotations

from dataclasses import dataclass

from ..dtypes import FLOATS
from ..feature_levels import FeatureLevel as L
from .rounded_activation import whole
from .unary import UnaryDesc, activation_rows


@dataclass(frozen=True)
class ActivationSigmoidDesc(UnaryDesc):
    """DML_ACTIVATION_SIGMOID_OPERATOR_DESC."""


SIGMOID = whole("ACTIVATION_SIGMOID", ActivationSigmoidDesc, L.FL_1_0, activation_rows(FLOATS), "SIGMOID",
                python="sigmoid")
