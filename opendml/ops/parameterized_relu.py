"""ACTIVATION_PARAMETERIZED_RELU: ``f(x, slope) = x if x >= 0 else slope * x``, SlopeTensor read as any operand
is (a broadcast slope: zero strides). Floats: the product rounded once in float32 (FLOAT16 rounded again on store);
-0.0 is kept (-0.0 >= 0); a NaN input is NaN either way, and opendml keeps the input's own bits (as RELU does:
the product is taken only below zero). Integers: the product wrapping as MULTIPLY's does
(SPEC 11.3: INT8's -128 * -1 is -128)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS, SIGNED_32
from ..feature_levels import FeatureLevel as L
from ..tensor import TensorDesc
from .binary import arithmetic, arithmetic_reference, binary, binary_row

_NAMES = ("InputTensor", "SlopeTensor", "OutputTensor")


@dataclass(frozen=True)
class ActivationParameterizedReluDesc:
    """DML_ACTIVATION_PARAMETERIZED_RELU_OPERATOR_DESC."""

    input_tensor: TensorDesc
    slope_tensor: TensorDesc
    output_tensor: TensorDesc


_product = arithmetic(lambda x, s, p, c: ex.Multiply(x, s), "*")
_product_reference = arithmetic_reference("*")

PARAMETERIZED_RELU = binary(
    "ACTIVATION_PARAMETERIZED_RELU", ActivationParameterizedReluDesc, L.FL_1_0, (
        binary_row(L.FL_5_1, (1, 8), FLOATS | SIGNED_32, _NAMES), binary_row(L.FL_3_0, (1, 8), FLOATS, _NAMES),
        binary_row(L.FL_2_0, (4, 5), FLOATS, _NAMES), binary_row(L.FL_1_0, (4, 4), FLOATS, _NAMES)),
    element=lambda x, s, p, c: ex.Select(ex.Less(x, c(0)), _product(x, s, p, c), x),
    reference=lambda x, s, p: np.where(np.less(x, 0), _product_reference(x, s, p), x),
    python="parameterized_relu", names=_NAMES)
