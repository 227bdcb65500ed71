"""The nodes of element expressions (``opendml.expr``, whose docstring gives each one's meaning and lowerings):
their classes and type rules, and the integer ranges those rules check."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .dtypes import DataType
from .rounded.binary import BINARY_FUNCTIONS
from .rounded.catalog import FUNCTIONS

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
class Widen(_Unary):
    type: DataType

    def __post_init__(self) -> None:
        source = self.value.data_type
        _require(source in INTEGERS and self.type in INTEGERS, f"Widen of {_name(source)} to {_name(self.type)}")
        low, high = integer_range(self.value)
        t_low, t_high = self.type.integer_range
        _require(t_low <= low and high <= t_high, f"Widen of {_name(source)} to {_name(self.type)} is not exact")

    @property
    def data_type(self) -> ValueType:
        return self.type


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class _Binary(Expr):
    a: Expr
    b: Expr

    @property
    def children(self) -> tuple[Expr, ...]:
        return (self.a, self.b)


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class Subtract(_Binary):
    def __post_init__(self) -> None:
        t = self.a.data_type
        _require(t in INTEGERS and self.b.data_type == t, f"Subtract of {_name(t)} and {_name(self.b.data_type)}")
        (a_low, a_high), (b_low, b_high) = integer_range(self.a), integer_range(self.b)
        low, high = _type(t).integer_range
        _require(low <= a_low - b_high and a_high - b_low <= high, f"Subtract in {_name(t)} may overflow")

    @property
    def data_type(self) -> ValueType:
        return self.a.data_type


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class ToFloat32(_Unary):

    def __post_init__(self) -> None:
        source = self.value.data_type
        _require(source in INTEGERS or source is DataType.FLOAT16, f"ToFloat32 of {_name(source)}")

    @property
    def data_type(self) -> ValueType:
        return DataType.FLOAT32


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class ToFloat64(_Unary):
    """An integer rounded once to nearest-even FLOAT64 (exact below 2**53 in magnitude), or a FLOAT32 value
    exactly (FLOAT16 values are made FLOAT32 first, exactly)."""

    def __post_init__(self) -> None:
        source = self.value.data_type
        _require(source in INTEGERS or source is DataType.FLOAT32, f"ToFloat64 of {_name(source)}")

    @property
    def data_type(self) -> ValueType:
        return DataType.FLOAT64


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class _Float(_Binary):
    def __post_init__(self) -> None:
        _require(self.a.data_type is DataType.FLOAT32 and self.b.data_type is DataType.FLOAT32,
                 f"{type(self).__name__} of {_name(self.a.data_type)} and {_name(self.b.data_type)}")

    @property
    def data_type(self) -> ValueType:
        return DataType.FLOAT32


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class Multiply(_Float):
    pass


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class Add(_Binary):
    """FLOAT32 + FLOAT32 rounded once, or two integers of one type added exactly (no overflow possible)."""

    def __post_init__(self) -> None:
        t = self.a.data_type
        _require((t is DataType.FLOAT32 or t in INTEGERS) and self.b.data_type == t,
                 f"Add of {_name(t)} and {_name(self.b.data_type)}")
        if t in INTEGERS:
            (a_low, a_high), (b_low, b_high) = integer_range(self.a), integer_range(self.b)
            low, high = _type(t).integer_range
            _require(low <= a_low + b_low and a_high + b_high <= high, f"Add in {_name(t)} may overflow")

    @property
    def data_type(self) -> ValueType:
        return self.a.data_type


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class Divide(_Binary):
    """FLOAT32 a / b rounded once (IEEE); or two integers of one type, the quotient truncated toward zero
    (x / 0 is 0; the smallest signed integer / -1 wraps to itself)."""

    def __post_init__(self) -> None:
        t = self.a.data_type
        _require((t is DataType.FLOAT32 or t in INTEGERS) and self.b.data_type == t,
                 f"Divide of {_name(t)} and {_name(self.b.data_type)}")

    @property
    def data_type(self) -> ValueType:
        return self.a.data_type


WRAPPING_OPS = ("+", "-", "*")


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class Wrapping(_Binary):
    """a op b (``op``: ``+``, ``-`` or ``*``) of two integers of one type, modulo 2**bits: two's complement
    wrapping in the type's own width (a 64-bit one too: no wider type is needed)."""

    op: str

    def __post_init__(self) -> None:
        t = self.a.data_type
        _require(t in INTEGERS and self.b.data_type == t and self.op in WRAPPING_OPS,
                 f"Wrapping {self.op!r} of {_name(t)} and {_name(self.b.data_type)}")

    @property
    def data_type(self) -> ValueType:
        return self.a.data_type


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class Remainder(_Binary):
    """FLOAT32 fmod(a, b) (exact: the remainder of the truncated quotient, the sign of a; x % 0 and inf % y
    NaN, x % inf x); or two integers of one type, C's truncated remainder (x % 0 is 0, as x % -1)."""

    def __post_init__(self) -> None:
        t = self.a.data_type
        _require((t is DataType.FLOAT32 or t in INTEGERS) and self.b.data_type == t,
                 f"Remainder of {_name(t)} and {_name(self.b.data_type)}")

    @property
    def data_type(self) -> ValueType:
        return self.a.data_type


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class Negate(_Unary):
    """-v: FLOAT32's sign flipped, or a signed integer negated in its own type, wrapping around."""

    def __post_init__(self) -> None:
        t = self.value.data_type
        _require(t is DataType.FLOAT32 or t in SIGNED_INTEGERS, f"Negate of {_name(t)}")

    @property
    def data_type(self) -> ValueType:
        return self.value.data_type


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class BitNot(_Unary):
    """~v: an integer's bits inverted, in its own type."""

    def __post_init__(self) -> None:
        _require(self.value.data_type in INTEGERS, f"BitNot of {_name(self.value.data_type)}")

    @property
    def data_type(self) -> ValueType:
        return self.value.data_type


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class BitCount(_Unary):
    """The number of an integer's bits set, in its own width (a population count): a UINT8."""

    def __post_init__(self) -> None:
        _require(self.value.data_type in INTEGERS, f"BitCount of {_name(self.value.data_type)}")

    @property
    def data_type(self) -> ValueType:
        return DataType.UINT8


BITWISE_OPS = ("&", "|", "^", "<<", ">>")


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class Bitwise(_Binary):
    """a op b (``op``: ``&``, ``|``, ``^``, ``<<`` or ``>>``) of two integers of one type, on their bits in the
    type's own width. A shift counts b's low bits only (b modulo the width, as ``b & (bits - 1)``: defined for
    every b); ``>>`` is arithmetic for a signed type, logical for an unsigned one."""

    op: str

    def __post_init__(self) -> None:
        t = self.a.data_type
        _require(t in INTEGERS and self.b.data_type == t and self.op in BITWISE_OPS,
                 f"Bitwise {self.op!r} of {_name(t)} and {_name(self.b.data_type)}")

    @property
    def data_type(self) -> ValueType:
        return self.a.data_type


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class Wrap(_Unary):
    """Integer v as the integer type T modulo 2**bits of T (two's complement: a narrower T keeps v's low bits, a
    wider one extends v by v's own signedness)."""

    type: DataType

    def __post_init__(self) -> None:
        source = self.value.data_type
        _require(source in INTEGERS and self.type in INTEGERS, f"Wrap of {_name(source)} to {_name(self.type)}")

    @property
    def data_type(self) -> ValueType:
        return self.type


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


@dataclass(frozen=True, eq=False, repr=False)  # Expr compares, hashes and prints
class Saturate(_Unary):
    type: DataType

    def __post_init__(self) -> None:
        source = self.value.data_type
        _require((source in SATURATED_FLOATS or source in INTEGERS) and self.type in INTEGERS,
                 f"Saturate of {_name(source)} to {_name(self.type)}")

    @property
    def data_type(self) -> ValueType:
        return self.type


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


def integer_range(expr: Expr) -> tuple[int, int]:
    """The smallest and largest value an integer expression can take."""
    if isinstance(expr, Widen):
        return integer_range(expr.value)
    if isinstance(expr, Subtract):
        (a_low, a_high), (b_low, b_high) = integer_range(expr.a), integer_range(expr.b)
        return a_low - b_high, a_high - b_low
    if isinstance(expr, Add) and expr.data_type in INTEGERS:
        (a_low, a_high), (b_low, b_high) = integer_range(expr.a), integer_range(expr.b)
        return a_low + b_low, a_high + b_high
    if isinstance(expr, Saturate):
        return saturated_range(expr)
    if isinstance(expr, Select):
        (a_low, a_high), (b_low, b_high) = integer_range(expr.a), integer_range(expr.b)
        return min(a_low, b_low), max(a_high, b_high)
    t = expr.data_type
    _require(t in INTEGERS, f"integer_range of {_name(t)}")
    return _type(t).integer_range


def saturated_range(node: Saturate) -> tuple[int, int]:
    """The values a Saturate gives: its type's range, narrowed to its integer source's."""
    low, high = node.type.integer_range
    if node.value.data_type in SATURATED_FLOATS:
        return low, high
    source_low, source_high = integer_range(node.value)
    return max(low, min(source_low, high)), min(high, max(source_high, low))
