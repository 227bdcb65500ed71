"""The binary family's bitwise operators (ELEMENT_WISE_BIT_AND, BIT_OR, BIT_XOR, BIT_SHIFT_LEFT, BIT_SHIFT_RIGHT):
their support tables and element math, shared by their modules.

DirectML applies them "to tensor data in its native encoding": the data type only gives each element's width.
A shift count of the width or more shifts every bit out (0), where C leaves it undefined and HLSL counts its
low bits only (docs/semantics.md 9b): the count is compared with the width first, and the shift itself
(``ex.Bitwise``, defined for every count) only ever sees counts below it.

>>> from opendml.ops import BY_NAME
>>> BY_NAME["ELEMENT_WISE_BIT_SHIFT_LEFT"].api.python
'bit_shift_left'
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import expr as ex
from ..dtypes import INTEGERS_32, INTEGERS_64
from ..dtypes import DataType as T
from ..feature_levels import FeatureLevel as L
from ..schema import SupportRow
from .binary import BinaryElement, BinaryReference, binary_row
from .unary import Constants, UnaryParams

_UNSIGNED_32 = frozenset({T.UINT32, T.UINT16, T.UINT8})


def logical_rows() -> tuple[SupportRow, ...]:
    """The table BIT_AND's, BIT_OR's and BIT_XOR's pages give: every integer type in 1-8 dimensions from 4_1 (the
    float types of that row, combined in their encoding, are not taken here, as BIT_NOT's); UINT32, UINT16,
    UINT8 in 1-8 from 3_0 (the level they were introduced at)."""
    return (binary_row(L.FL_4_1, (1, 8), INTEGERS_32 | INTEGERS_64), binary_row(L.FL_3_0, (1, 8), _UNSIGNED_32))


def shift_rows() -> tuple[SupportRow, ...]:
    """The table BIT_SHIFT_LEFT's and BIT_SHIFT_RIGHT's pages give: the unsigned types only, UINT64 with them in
    1-8 dimensions from 4_1; UINT32, UINT16, UINT8 in 1-8 from 3_0, in 4 from 2_1."""
    return (binary_row(L.FL_4_1, (1, 8), _UNSIGNED_32 | {T.UINT64}), binary_row(L.FL_3_0, (1, 8), _UNSIGNED_32),
            binary_row(L.FL_2_1, (4, 4), _UNSIGNED_32))


def logical(op: str) -> BinaryElement:
    """``a op b`` on the bits (``op``: ``&``, ``|`` or ``^``)."""

    def element(a: ex.Expr, b: ex.Expr, p: UnaryParams, c: Constants) -> ex.Expr:
        return ex.Bitwise(a, b, op)

    return element


def shift(op: str) -> BinaryElement:
    """``a << b`` or ``a >> b`` (logical: the types are unsigned), 0 where the count b is the width or more."""

    def element(a: ex.Expr, b: ex.Expr, p: UnaryParams, c: Constants) -> ex.Expr:
        return ex.Select(ex.Less(b, c(p.data_type.bits)), ex.Bitwise(a, b, op), c(0))

    return element


def shift_reference(ufunc: Callable[..., np.ndarray]) -> BinaryReference:
    """NumPy's shift of counts below the width, 0 beyond it."""

    def reference(a: np.ndarray, b: np.ndarray, p: UnaryParams) -> np.ndarray:
        bits = p.data_type.bits
        inside = b < bits
        return np.where(inside, ufunc(a, np.where(inside, b, b.dtype.type(0))), a.dtype.type(0))

    return reference
