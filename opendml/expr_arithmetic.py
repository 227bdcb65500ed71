"""The arithmetic nodes of element expressions (``opendml.expr``: each one's meaning and lowerings): conversions
(``Widen``, ``ToFloat32``, ``ToFloat64``, ``Wrap``, ``Saturate``), exact and rounded arithmetic, the integers' bit
operations; and ``integer_range``, the values an integer expression can take, by which the exact nodes' rules refuse
an overflow.

The base (``Expr``, the type sets) is in ``expr_base``; the other nodes in ``expr_functions``, ``expr_choices`` and
``expr_nodes``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .dtypes import DataType
from .expr_base import (
    INTEGERS,
    SATURATED_FLOATS,
    SIGNED_INTEGERS,
    Expr,
    ValueType,
    _Binary,
    _name,
    _require,
    _type,
    _Unary,
)
from .expr_choices import Select


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
class Saturate(_Unary):
    type: DataType

    def __post_init__(self) -> None:
        source = self.value.data_type
        _require((source in SATURATED_FLOATS or source in INTEGERS) and self.type in INTEGERS,
                 f"Saturate of {_name(source)} to {_name(self.type)}")

    @property
    def data_type(self) -> ValueType:
        return self.type


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
