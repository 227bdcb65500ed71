"""The comparison nodes of element expressions (``opendml.expr``: each one's meaning and lowerings): the BOOL values
(``Less``, ``IsNumber``, ``SignBit``) and ``Select``, which chooses between two values by one.

The base (``Expr``, the type sets) is in ``expr_base``; the other nodes in ``expr_arithmetic``, ``expr_functions``
and ``expr_nodes``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .dtypes import DataType
from .expr_base import BOOL, INTEGERS, Expr, ValueType, _Binary, _name, _require
from .expr_functions import _OfFloat32


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class Less(_Binary):
    def __post_init__(self) -> None:
        t = self.a.data_type
        _require((t in INTEGERS or t is DataType.FLOAT32) and self.b.data_type == t,
                 f"Less of {_name(t)} and {_name(self.b.data_type)}")

    @property
    def data_type(self) -> ValueType:
        return BOOL


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class IsNumber(_OfFloat32):
    """Whether a FLOAT32 value is not NaN (BOOL)."""

    @property
    def data_type(self) -> ValueType:
        return BOOL


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class SignBit(_OfFloat32):
    """Whether a FLOAT32 value's sign bit is set (BOOL): true for -0.0 and negative values, a NaN's own sign bit
    (what tells -0.0 from +0.0, which compare equal)."""

    @property
    def data_type(self) -> ValueType:
        return BOOL


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class Select(Expr):
    condition: Expr
    a: Expr
    b: Expr

    def __post_init__(self) -> None:
        _require(self.condition.data_type == BOOL and self.a.data_type == self.b.data_type
                 and self.a.data_type != BOOL, f"Select of {_name(self.a.data_type)} and {_name(self.b.data_type)}")

    @property
    def data_type(self) -> ValueType:
        return self.a.data_type

    @property
    def children(self) -> tuple[Expr, ...]:
        return (self.condition, self.a, self.b)
