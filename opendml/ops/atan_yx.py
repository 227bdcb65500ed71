"""ELEMENT_WISE_ATAN_YX: ``f(a, b) = atan2(a, b)`` (ATensor the y, BTensor the x), correctly rounded
(``opendml.rounded.binary``); the origin's value is C99's (``atan2(+-0, +0) = +-0``, ``atan2(+-0, -0) = +-pi``),
which the page leaves undefined."""

from __future__ import annotations

from dataclasses import dataclass

from .. import expr as ex
from ..dtypes import FLOATS
from ..feature_levels import FeatureLevel as L
from ..rounded.evaluate import evaluate_binary
from .binary import BinaryDesc, binary, binary_row


@dataclass(frozen=True)
class ElementWiseAtanYxDesc(BinaryDesc):
    """DML_ELEMENT_WISE_ATAN_YX_OPERATOR_DESC."""


ATAN_YX = binary(
    "ELEMENT_WISE_ATAN_YX", ElementWiseAtanYxDesc, L.FL_3_1, (binary_row(L.FL_3_1, (1, 8), FLOATS),),
    element=lambda a, b, p, c: ex.BinaryFunction(a, b, "ATAN_YX", p.output),
    reference=lambda a, b, p: evaluate_binary("ATAN_YX", a, b, p.output.name), python="atan_yx")
