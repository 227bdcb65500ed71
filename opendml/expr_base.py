"""The base of the nodes of element expressions (``opendml.expr``, whose docstring gives each one's meaning and
lowerings): ``Expr`` and its leaves (``Load``, ``Param``), the value types and the type sets the nodes' rules check,
and ``ExpressionError``.

The nodes themselves: arithmetic and the integer ranges in ``expr_arithmetic``, the functions of FLOAT32 values in
``expr_functions``, comparisons and ``Select`` in ``expr_choices``, ``Store`` and the closed set ``NODES`` in
``expr_nodes``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .dtypes import DataType

BOOL: Literal["BOOL"] = "BOOL"
ValueType = DataType | Literal["BOOL"]

INTEGERS = frozenset(t for t in DataType if t.is_integer and not t.is_sub_byte)  # UINT4, INT4: never a value's type
SIGNED_INTEGERS = frozenset(t for t in INTEGERS if t.is_signed)
STORED = frozenset({DataType.FLOAT64, DataType.FLOAT32, DataType.FLOAT16}) | INTEGERS
# The float types a Saturate converts from: FLOAT32 (FLOAT16 values are made FLOAT32 first) and FLOAT64.
SATURATED_FLOATS = frozenset({DataType.FLOAT32, DataType.FLOAT64})


class ExpressionError(TypeError):
    """A malformed expression: a programming error in an operator's definition, never a user's."""


def _name(t: ValueType) -> str:
    return t if isinstance(t, str) else t.name


def _type(t: ValueType) -> DataType:
    _require(isinstance(t, DataType), f"{_name(t)} is not a data type")
    return t  # type: ignore[return-value]


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ExpressionError(message)


class Expr:
    """A node; ``data_type`` is the type of its value. Equal trees are equal and hash alike."""

    def _fields(self) -> tuple:
        return tuple(getattr(self, f) for f in self.__dataclass_fields__)  # type: ignore[attr-defined]

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is not type(self) or hash(self) != hash(other):
            return False
        return self._fields() == other._fields()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        cached = self.__dict__.get("_hash")
        if cached is None:
            cached = hash((type(self).__name__, self._fields()))
            object.__setattr__(self, "_hash", cached)
        return cached

    def __repr__(self) -> str:
        args = ", ".join(f.name if isinstance(f, DataType) else repr(f) for f in self._fields())
        return f"{type(self).__name__}({args})"

    @property
    def data_type(self) -> ValueType:
        raise NotImplementedError

    @property
    def children(self) -> tuple[Expr, ...]:
        return ()


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class Load(Expr):
    operand: int
    stored: DataType

    def __post_init__(self) -> None:
        _require(self.operand >= 0 and self.stored in STORED, f"Load({self.operand}, {_name(self.stored)})")

    @property
    def data_type(self) -> ValueType:
        return self.stored


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class Param(Expr):
    index: int
    type: DataType

    def __post_init__(self) -> None:
        _require(self.index >= 0 and (self.type in INTEGERS or self.type is DataType.FLOAT32),
                 f"Param({self.index}, {_name(self.type)})")

    @property
    def data_type(self) -> ValueType:
        return self.type


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class _Unary(Expr):
    value: Expr

    @property
    def children(self) -> tuple[Expr, ...]:
        return (self.value,)


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class _Binary(Expr):
    a: Expr
    b: Expr

    @property
    def children(self) -> tuple[Expr, ...]:
        return (self.a, self.b)
