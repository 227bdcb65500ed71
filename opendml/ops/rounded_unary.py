"""The correctly rounded unary functions' factory (ELEMENT_WISE_EXP, LOG, SIN, ... ERF): ``f(x * scale + bias)``,
the exact value rounded once to the output's type (``opendml.rounded``), with DirectML's support table for them:
FLOAT32 and FLOAT16 in 1 to 8 dimensions from 3_0, in 4 from the level that introduced the operator."""

from __future__ import annotations

from ..dtypes import FLOATS
from ..expr import Function
from ..feature_levels import FeatureLevel as L
from ..rounded.evaluate import evaluate
from .definition import OperatorDefinition
from .unary import SCALE_BIAS, unary, unary_row


def rounded_unary(name: str, desc_type: type, introduced: L, function: str, python: str) -> OperatorDefinition:
    """The operator ``name`` computing ``opendml.rounded``'s ``function`` (EXP) of its ScaleBias'd input."""
    return unary(
        name, desc_type, introduced, (unary_row(L.FL_3_0, (1, 8), FLOATS), unary_row(introduced, (4, 4), FLOATS)),
        element=lambda v, p, c: Function(v, function, p.output),
        reference=lambda v, p: evaluate(function, v, p.output.name),
        python=python, fields=(SCALE_BIAS,))
