"""The comparison and logical operators' shared pieces: their support tables and their element math, over the
binary factory (``ops.binary``).

A comparison (ELEMENT_WISE_LOGICAL_EQUALS, GREATER_THAN, GREATER_THAN_OR_EQUAL, LESS_THAN, LESS_THAN_OR_EQUAL)
reads two tensors of one type and writes 1 where the relation holds, 0 where it does not, into a UINT8 or UINT32
output. Floats compare as IEEE 754 does (FLOAT16 read exactly as float32): a NaN operand makes every relation
false (EQUALS too), and -0.0 equals +0.0; integers compare exactly in their own type. Each relation is built from
the one strict order node (``ex.Less``) and ``ex.IsNumber``, so every backend gives the same answer.

A logical operator (ELEMENT_WISE_LOGICAL_AND, OR, XOR) reads two UINT8 or UINT32 tensors, any nonzero element
true, and writes 1 or 0 in the same type.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS, INTEGERS_32, INTEGERS_64, DataType
from ..feature_levels import FeatureLevel
from ..schema import SupportRow
from .binary import BinaryElement, BinaryReference, binary_row
from .unary import Constants, UnaryParams

OUTPUTS = frozenset({DataType.UINT32, DataType.UINT8})


def _comparison_row(level: FeatureLevel, dimensions: tuple[int, int], inputs: frozenset[DataType],
                    outputs: frozenset[DataType] = OUTPUTS) -> SupportRow:
    return SupportRow(level, dimensions, {"ATensor": inputs, "BTensor": inputs, "OutputTensor": outputs})


def comparison_rows(introduced: FeatureLevel) -> tuple[SupportRow, ...]:
    """The table the comparison pages give: the floats and every 8- to 64-bit integer in 1-8 dimensions from 4_1;
    without the 64-bit integers from 3_0; in 4 dimensions from 2_1; the floats alone in 4 from 2_0, into UINT32
    alone from 1_0 (EQUALS, GREATER_THAN, LESS_THAN: ``introduced`` 1_0). GREATER_THAN_OR_EQUAL and
    LESS_THAN_OR_EQUAL came in 3_0: their tables stop there."""
    narrow = FLOATS | INTEGERS_32
    rows = [_comparison_row(FeatureLevel.FL_4_1, (1, 8), narrow | INTEGERS_64),
            _comparison_row(FeatureLevel.FL_3_0, (1, 8), narrow)]
    if introduced < FeatureLevel.FL_3_0:
        rows += [_comparison_row(FeatureLevel.FL_2_1, (4, 4), narrow),
                 _comparison_row(FeatureLevel.FL_2_0, (4, 4), FLOATS),
                 _comparison_row(FeatureLevel.FL_1_0, (4, 4), FLOATS, frozenset({DataType.UINT32}))]
    return tuple(rows)


def logical_rows() -> tuple[SupportRow, ...]:
    """The table LOGICAL_AND's, OR's and XOR's pages give (LOGICAL_NOT's too): UINT32 and UINT8 in 1-8 dimensions
    from 3_0, in 4 from 2_0; UINT32 alone in 4 from 1_0; the three tensors of one type."""
    both = frozenset({DataType.UINT32, DataType.UINT8})
    return (binary_row(FeatureLevel.FL_3_0, (1, 8), both), binary_row(FeatureLevel.FL_2_0, (4, 4), both),
            binary_row(FeatureLevel.FL_1_0, (4, 4), frozenset({DataType.UINT32})))


def _numbers(a: ex.Expr, b: ex.Expr, p: UnaryParams, then: ex.Expr, otherwise: ex.Expr) -> ex.Expr:
    """``then`` where neither operand is NaN (always, for integers), else ``otherwise``."""
    if not p.data_type.is_float:
        return then
    return ex.Select(ex.IsNumber(a), ex.Select(ex.IsNumber(b), then, otherwise), otherwise)


def less(a: ex.Expr, b: ex.Expr, p: UnaryParams, c: Constants) -> ex.Expr:
    """1 where ``a < b``, else 0 (NaN: 0)."""
    return ex.Select(ex.Less(a, b), c.out(1), c.out(0))


def _at_most(a: ex.Expr, b: ex.Expr, p: UnaryParams, one: ex.Expr, zero: ex.Expr) -> ex.Expr:
    return ex.Select(ex.Less(b, a), zero, _numbers(a, b, p, one, zero))


def less_or_equal(a: ex.Expr, b: ex.Expr, p: UnaryParams, c: Constants) -> ex.Expr:
    """1 where ``a <= b``: not ``b < a``, and neither NaN."""
    return _at_most(a, b, p, c.out(1), c.out(0))


def equal(a: ex.Expr, b: ex.Expr, p: UnaryParams, c: Constants) -> ex.Expr:
    """1 where ``a == b``: neither strictly below the other, and neither NaN (so -0.0 == +0.0)."""
    one, zero = c.out(1), c.out(0)
    return ex.Select(ex.Less(a, b), zero, _at_most(a, b, p, one, zero))


def swapped(element: BinaryElement) -> BinaryElement:
    """``element`` of ``(b, a)``: GREATER_THAN as LESS_THAN with its operands swapped."""
    return lambda a, b, p, c: element(b, a, p, c)


def compare_reference(relation: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> BinaryReference:
    """A comparison's NumPy reference: ``relation`` over the compute values (IEEE's, as NumPy's ufuncs compare)."""
    return lambda a, b, p: relation(a, b)


def _true(v: ex.Expr, c: Constants) -> ex.Expr:
    return ex.Less(c(0), v)  # an unsigned value is true where it is not 0


def logical(op: str) -> BinaryElement:
    """LOGICAL_AND, OR or XOR (``op``: "and", "or", "xor") of two unsigned values, any nonzero one true: 1 or 0."""

    def element(a: ex.Expr, b: ex.Expr, p: UnaryParams, c: Constants) -> ex.Expr:
        one, zero = c(1), c(0)
        if op == "and":
            return ex.Select(_true(a, c), ex.Select(_true(b, c), one, zero), zero)
        if op == "or":
            return ex.Select(_true(a, c), one, ex.Select(_true(b, c), one, zero))
        return ex.Select(_true(a, c), ex.Select(_true(b, c), zero, one), ex.Select(_true(b, c), one, zero))

    return element


_LOGICAL = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}


def logical_reference(op: str) -> BinaryReference:
    """``logical``'s NumPy reference."""
    ufunc = _LOGICAL[op]
    return lambda a, b, p: ufunc(a != 0, b != 0)
