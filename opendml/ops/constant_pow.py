"""ELEMENT_WISE_CONSTANT_POW: ``f(x) = pow(x * scale + bias, Exponent)``, correctly rounded
(``opendml.rounded.binary``); a negative base with a non-integral Exponent gives NaN, as the page says, and the
special values are C99's (``pow(x, 0) = 1``, ``pow(1, y) = 1``...)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dtypes import FLOATS
from ..expr import BinaryFunction
from ..feature_levels import FeatureLevel as L
from ..rounded.evaluate import evaluate_binary
from .elementwise import ScaleBias
from .unary import SCALE_BIAS, UnaryDesc, float_parameter, unary, unary_row


@dataclass(frozen=True)
class ElementWiseConstantPowDesc(UnaryDesc):
    """DML_ELEMENT_WISE_CONSTANT_POW_OPERATOR_DESC (InputTensor, OutputTensor, ScaleBias, Exponent: a FLOAT)."""

    exponent: float
    scale_bias: ScaleBias | None = None


CONSTANT_POW = unary(
    "ELEMENT_WISE_CONSTANT_POW", ElementWiseConstantPowDesc, L.FL_1_0,
    (unary_row(L.FL_3_0, (1, 8), FLOATS), unary_row(L.FL_1_0, (4, 4), FLOATS)),
    element=lambda v, p, c: BinaryFunction(v, c(p["Exponent"]), "POW", p.output),
    reference=lambda v, p: evaluate_binary("POW", v, np.float32(p["Exponent"]), p.output.name),
    python="constant_pow", fields=(SCALE_BIAS, float_parameter("Exponent")))
