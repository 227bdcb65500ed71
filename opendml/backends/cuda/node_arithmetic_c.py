"""The CUDA C of element expressions' arithmetic: FLOAT32 and integer sums, negation, division and remainders
(integers: never a trap or an overflow in C), wrapping arithmetic, the integers' bit counts and bitwise operations,
and ``Saturate`` (a float or an integer clamped into an integer type).

Values are held in their compute type (``codegen.COMPUTE_TYPE``): FLOAT16 as its float value, 8- and
16-bit integers in 32 bits (every integer node is exact, so the width never shows), BOOL as ``bool``.
The device helpers these call (``ARITHMETIC``, ``DOUBLES``) and the table of every node's lowering are in ``node_c``;
the held types in ``node_conversions_c``.
"""

from __future__ import annotations

from collections.abc import Callable

from ... import expr as ex
from ...dtypes import DataType
from .codegen import C_TYPE
from .node_conversions_c import held_type


def _integer_literal(value: int, held: str) -> str:
    """``value`` as a C constant of the held integer type (the lowest int and ll written as a difference:
    C has no literal of them)."""
    if held == "int":
        return "(-2147483647 - 1)" if value == -(1 << 31) else str(value)
    if held == "ll":
        return "(-9223372036854775807ll - 1)" if value == -(1 << 63) else f"{value}ll"
    return f"{value}u" if held == "unsigned int" else f"{value}ull"


def _add(node: ex.Add, v: Callable[[ex.Expr], str]) -> str:
    if node.data_type is DataType.FLOAT32:
        return f"add_rn({v(node.a)}, {v(node.b)})"
    # Both sides are held in the node's type or wider, and the type rules make the sum fit it.
    return f"(({held_type(node.data_type)})({v(node.a)} + {v(node.b)}))"


def _negate(node: ex.Negate, v: Callable[[ex.Expr], str]) -> str:
    """FLOAT32: the sign bit flipped on the bits (as NumPy's negative does; the compiler may lower a float ``-x``
    to an add that turns a NaN's payload or sign otherwise). A signed integer: negated as a 64-bit unsigned (no
    signed overflow in C), truncated to its own type (wrapping: the smallest integer stays), then held as its
    type is."""
    if node.data_type is DataType.FLOAT32:
        return f"__int_as_float(__float_as_int({v(node.value)}) ^ 0x80000000)"
    own = C_TYPE[node.data_type]  # type: ignore[index]
    return f"(({held_type(node.data_type)})(({own})(0ull - (ull)({v(node.value)}))))"


_UNSIGNED = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int"}


def _wrapping(node: ex.Wrapping, v: Callable[[ex.Expr], str]) -> str:
    """Computed as 64-bit unsigned (modular in C, where signed overflow is undefined), truncated to the node's own
    type (wrapping), then held as its type is."""
    own = C_TYPE[node.data_type]  # type: ignore[index]
    return f"(({held_type(node.data_type)})(({own})((ull)({v(node.a)}) {node.op} (ull)({v(node.b)}))))"


def _divide(node: ex.Divide, v: Callable[[ex.Expr], str]) -> str:
    """FLOAT32: ``div.rn``. Integers, in the held type (exact there): a divisor of 0 gives 0 and, signed, -1 gives
    -a wrapped (``_negate``'s), each before C's ``/`` could trap or overflow (``?:`` evaluates one branch)."""
    if node.data_type is DataType.FLOAT32:
        return f"div_rn({v(node.a)}, {v(node.b)})"
    held = held_type(node.data_type)
    a, b = v(node.a), v(node.b)
    zero = _integer_literal(0, held)
    if not node.data_type.is_signed:  # type: ignore[union-attr]
        return f"(({held})({b} == {zero} ? {zero} : {a} / {b}))"
    negated = _negate(ex.Negate(node.a), v)
    return f"(({held})({b} == {zero} ? {zero} : {b} == {_integer_literal(-1, held)} ? {negated} : {a} / {b}))"


def _remainder(node: ex.Remainder, v: Callable[[ex.Expr], str]) -> str:
    """FLOAT32: ``fmodf`` (exact). Integers: C's ``%`` in the held type, a divisor of 0 (or -1, as 1 gives) 0."""
    a, b = v(node.a), v(node.b)
    if node.data_type is DataType.FLOAT32:
        return f"fmodf({a}, {b})"
    held = held_type(node.data_type)
    zero = _integer_literal(0, held)
    special = f"{b} == {zero}"
    if node.data_type.is_signed:  # type: ignore[union-attr]
        special += f" || {b} == {_integer_literal(-1, held)}"
    return f"(({held})({special} ? {zero} : {a} % {b}))"


def _bit_count(node: ex.BitCount, v: Callable[[ex.Expr], str]) -> str:
    """The bits of the value's own width (an 8- or 16-bit integer is held in 32, a signed one sign-extended there):
    cast to the unsigned type of that width, counted by ``__popc`` (``__popcll`` for 64 bits), held as a UINT8."""
    t = node.value.data_type
    assert isinstance(t, DataType)
    if t.size == 8:
        return f"((unsigned int)__popcll((ull)({v(node.value)})))"
    return f"((unsigned int)__popc((unsigned int)(({_UNSIGNED[t.size]})({v(node.value)}))))"


def _bitwise(node: ex.Bitwise, v: Callable[[ex.Expr], str]) -> str:
    """``&``, ``|``, ``^`` in the held type (each commutes with the sign- or zero-extension an 8- or 16-bit value is
    held in); a shift by b's low bits (``& (bits - 1)``: C leaves a count of the width or more undefined), ``<<``
    through 64-bit unsigned (no signed overflow in C) truncated to the node's own type, ``>>`` in the node's own
    type (arithmetic for a signed one, as nvcc shifts), then held as its type is."""
    t = node.data_type
    assert isinstance(t, DataType)
    held, own = held_type(t), C_TYPE[t]
    a, b = v(node.a), v(node.b)
    if node.op in ("&", "|", "^"):
        return f"(({held})({a} {node.op} {b}))"
    count = f"((unsigned int)({b}) & {t.bits - 1}u)"
    if node.op == "<<":
        return f"(({held})(({own})((ull)({a}) << {count})))"
    return f"(({held})(({own})({a}) >> {count}))"


def _saturate(node: ex.Saturate, v: Callable[[ex.Expr], str]) -> str:
    """A float (FLOAT32, or FLOAT64 through DOUBLES' ``d2`` helpers) through ``cvt.rzi`` (clamped to 32 bits; NaN
    selected apart for 64 bits and for a double), then clamped to the type's range; an integer clamped in its own
    held type to the limits it can pass, then cast."""
    low, high = node.type.integer_range
    held = held_type(node.type)
    value = v(node.value)
    if node.value.data_type in ex.SATURATED_FLOATS:
        f = "d" if node.value.data_type is DataType.FLOAT64 else "f"
        if held in ("int", "unsigned int"):
            convert = (f"{f}2i_rz({value}, {_integer_literal(low, held)}, {_integer_literal(high, held)})"
                       if held == "int" else f"{f}2u_rz({value}, {_integer_literal(high, held)})")
            # cvt.rzi of a float NaN gives 0, of a double NaN 0x80000000 (measured on an H100): a double's NaN
            # is selected apart, as every 64-bit destination's is
            return convert if f == "f" else f"(is_number({value}) ? {convert} : {_integer_literal(0, held)})"
        convert = f"{f}2ll_rz" if held == "ll" else f"{f}2ull_rz"
        return f"(is_number({value}) ? {convert}({value}) : {_integer_literal(0, held)})"
    source_low, source_high = node.value.data_type.integer_range  # type: ignore[union-attr]
    source = held_type(node.value.data_type)
    if high < source_high:  # every bound lies in both ranges (0 is in each)
        bound = _integer_literal(high, source)
        value = f"({value} > {bound} ? {bound} : {value})"
    if low > source_low:
        bound = _integer_literal(low, source)
        value = f"({value} < {bound} ? {bound} : {value})"
    return f"(({held})({value}))"
