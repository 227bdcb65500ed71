"""ELEMENT_WISE_MAX: ``f(a, b) = max(a, b)``. Floats as IEEE 754-2019's maximumNumber: a NaN operand gives the
other (HLSL's ``max``; NaN only when both are), and +0.0 is greater than -0.0; the result is one operand's bits."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..feature_levels import FeatureLevel as L
from .binary import BinaryDesc, binary, by_kind, min_max_rows, reference_by_kind
from .minimum import pick, pick_reference


@dataclass(frozen=True)
class ElementWiseMaxDesc(BinaryDesc):
    """DML_ELEMENT_WISE_MAX_OPERATOR_DESC."""


MAX = binary(
    "ELEMENT_WISE_MAX", ElementWiseMaxDesc, L.FL_1_0, min_max_rows(),
    element=by_kind(lambda a, b, p, c: pick(a, b, False), lambda a, b, p, c: ex.Select(ex.Less(a, b), b, a)),
    reference=reference_by_kind(lambda a, b, p: pick_reference(a, b, False), lambda a, b, p: np.maximum(a, b)),
    python="maximum")
