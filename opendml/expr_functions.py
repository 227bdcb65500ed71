"""The function nodes of element expressions (``opendml.expr``: each one's meaning and lowerings): correctly rounded
functions of FLOAT32 values (``Sqrt``, ``Round``, ``Function``, ``BinaryFunction``), and ``_OfFloat32``, the base of
the nodes of one FLOAT32 value.

The base (``Expr``, the type sets) is in ``expr_base``; the other nodes in ``expr_arithmetic``, ``expr_choices`` and
``expr_nodes``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .dtypes import DataType
from .expr_base import ValueType, _Binary, _name, _require, _Unary
from .rounded.binary import BINARY_FUNCTIONS
from .rounded.catalog import FUNCTIONS


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class _OfFloat32(_Unary):
    """A node of one FLOAT32 value (its own a FLOAT32, unless the node says otherwise)."""

    def __post_init__(self) -> None:
        _require(self.value.data_type is DataType.FLOAT32, f"{type(self).__name__} of {_name(self.value.data_type)}")

    @property
    def data_type(self) -> ValueType:
        return DataType.FLOAT32


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class Sqrt(_OfFloat32):
    """FLOAT32 square root, correctly rounded (one IEEE operation)."""


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class Function(_OfFloat32):
    """A correctly rounded function of a FLOAT32 value (``opendml.rounded``: ``name`` EXP, LOG, SIN...), rounded
    once to ``precision``: FLOAT32, or FLOAT16 (the result held exactly as a FLOAT32, which a FLOAT16 Store
    keeps)."""

    name: str
    precision: DataType

    def __post_init__(self) -> None:
        super().__post_init__()
        _require(self.name in FUNCTIONS, f"Function {self.name!r} is not one of {sorted(FUNCTIONS)}")
        _require(self.precision in (DataType.FLOAT32, DataType.FLOAT16), f"Function to {_name(self.precision)}")


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class BinaryFunction(_Binary):
    """A correctly rounded function of two FLOAT32 values (``opendml.rounded.binary``: ``name`` POW, ``a ** b``,
    or ATAN_YX, ``atan2(a, b)``), rounded once to ``precision``: FLOAT32, or FLOAT16 held exactly as a FLOAT32."""

    name: str
    precision: DataType

    def __post_init__(self) -> None:
        types = (self.a.data_type, self.b.data_type)
        _require(types == (DataType.FLOAT32, DataType.FLOAT32),
                 f"BinaryFunction of {_name(types[0])} and {_name(types[1])}")
        _require(self.name in BINARY_FUNCTIONS,
                 f"BinaryFunction {self.name!r} is not one of {sorted(BINARY_FUNCTIONS)}")
        _require(self.precision in (DataType.FLOAT32, DataType.FLOAT16),
                 f"BinaryFunction to {_name(self.precision)}")

    @property
    def data_type(self) -> ValueType:
        return DataType.FLOAT32


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class Round(_OfFloat32):
    """FLOAT32 to its nearest integer, ties to even (still FLOAT32)."""
