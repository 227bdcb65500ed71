"""ACTIVATION_RELU_GRAD: ``OutputGradientTensor = InputGradientTensor if InputTensor > 0 else 0``, the page's rule
(``X > 0 ? dY : 0``) exactly: an input of -0.0, +0.0 or NaN gives +0.0, the gradient is passed with its bits."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS
from ..feature_levels import FeatureLevel as L
from ..tensor import TensorDesc
from .binary import binary, binary_row

GRAD_NAMES = ("InputTensor", "InputGradientTensor", "OutputGradientTensor")


@dataclass(frozen=True)
class ActivationReluGradDesc:
    """DML_ACTIVATION_RELU_GRAD_OPERATOR_DESC."""

    input_tensor: TensorDesc
    input_gradient_tensor: TensorDesc
    output_gradient_tensor: TensorDesc


RELU_GRAD = binary(
    "ACTIVATION_RELU_GRAD", ActivationReluGradDesc, L.FL_3_0,
    (binary_row(L.FL_4_0, (1, 8), FLOATS, GRAD_NAMES), binary_row(L.FL_3_0, (1, 8), FLOATS, GRAD_NAMES)),
    element=lambda x, dy, p, c: ex.Select(ex.Less(c(0), x), dy, c(0)),
    reference=lambda x, dy, p: np.where(x > 0, dy, np.float32(0)),
    python="relu_grad", names=GRAD_NAMES)
