"""The nodes of element expressions (``opendml.expr``, whose docstring gives each one's meaning and lowerings): the
closed set ``NODES`` every lowering covers, and ``Store``, the root of every element-wise kernel.

The nodes are defined by kind: the base (``Expr``, ``Load``, ``Param``, the type sets the rules check) in
``expr_base``; arithmetic, conversions and the integer ranges those rules check in ``expr_arithmetic``; the functions
of FLOAT32 values in ``expr_functions``; comparisons and ``Select`` in ``expr_choices``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .dtypes import DataType
from .expr_arithmetic import (
    Add,
    BitCount,
    BitNot,
    Bitwise,
    Divide,
    Multiply,
    Negate,
    Remainder,
    Saturate,
    Subtract,
    ToFloat32,
    ToFloat64,
    Widen,
    Wrap,
    Wrapping,
)
from .expr_base import STORED, Expr, Load, Param, ValueType, _name, _require, _Unary
from .expr_choices import IsNumber, Less, Select, SignBit
from .expr_functions import BinaryFunction, Function, Round, Sqrt


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class Store(_Unary):
    type: DataType

    def __post_init__(self) -> None:
        source = self.value.data_type
        ok = source == self.type or (source is DataType.FLOAT32 and self.type is DataType.FLOAT16) or (
            source is DataType.FLOAT64 and self.type in (DataType.FLOAT32, DataType.FLOAT16))  # rounded once
        _require(ok and self.type in STORED, f"Store of {_name(source)} as {_name(self.type)}")

    @property
    def data_type(self) -> ValueType:
        return self.type


# The closed set of nodes, in the table's order: each lowering is a table with one entry per node
# (``LOWERINGS`` in opendml.kernels.numpy_lowering, cpu_kernels.codegen, cpu_kernels.vectors and
# cuda.expr_c), and tests/test_expr.py checks that every table, and the concrete subclasses of Expr, are
# exactly this set: a node missing from a lowering fails there, not on a user's first large tensor.
NODES: tuple[type[Expr], ...] = (Load, Param, Widen, Subtract, ToFloat32, Multiply, Add, Divide, Wrapping, Remainder,
                                 Negate, BitNot, BitCount, Sqrt, Round, Saturate, Less, IsNumber, SignBit, Select,
                                 Store, Bitwise, Wrap, Function, ToFloat64, BinaryFunction)
