"""ACTIVATION_IDENTITY: ``f(x) = x``."""

from __future__ import annotations

from dataclasses import dataclass

from ..dtypes import FLOATS
from ..feature_levels import FeatureLevel as L
from .unary import UnaryDesc, activation_rows, unary


@dataclass(frozen=True)
class ActivationIdentityDesc(UnaryDesc):
    """DML_ACTIVATION_IDENTITY_OPERATOR_DESC."""


ACTIVATION_IDENTITY = unary(
    "ACTIVATION_IDENTITY", ActivationIdentityDesc, L.FL_1_0, activation_rows(FLOATS),
    element=lambda v, p, c: v,
    reference=lambda v, p: v,
    python="activation_identity")
