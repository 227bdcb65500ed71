"""ELEMENT_WISE_MODULUS_TRUNCATE: C's modulus, ``f(a, b) = a - (b * trunc(a / b))``, the sign of the dividend.
Floats: C's ``fmod`` (exact; a zero result keeps a's sign; x % 0 and inf % y NaN, x % inf x); integers: C's
``%``, x % 0 giving 0 (docs/semantics.md 9b)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..feature_levels import FeatureLevel as L
from .binary import BinaryDesc, binary, modulus_rows
from .unary import UnaryParams


@dataclass(frozen=True)
class ElementWiseModulusTruncateDesc(BinaryDesc):
    """DML_ELEMENT_WISE_MODULUS_TRUNCATE_OPERATOR_DESC."""


def _reference(a: np.ndarray, b: np.ndarray, p: UnaryParams) -> np.ndarray:
    if p.data_type.is_float:
        return np.fmod(a, b, dtype=np.float32)
    zero = (b == 0) | ((b == -1) if p.data_type.is_signed else False)
    return np.fmod(a, np.where(zero, b.dtype.type(1), b))


MODULUS_TRUNCATE = binary(
    "ELEMENT_WISE_MODULUS_TRUNCATE", ElementWiseModulusTruncateDesc, L.FL_2_1, modulus_rows(),
    element=lambda a, b, p, c: ex.Remainder(a, b), reference=_reference, python="modulus_truncate")
