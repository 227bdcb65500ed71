"""The CUDA C of element expressions' conversions to floats: the C type each value is held in (``held_type``),
``ToFloat32`` (an integer rounded by PTX ``cvt.rn``; with ``small``, a small integer by ``small_i2f`` and a difference
of two small integers, or of two packed UINT8 bytes, without forming it), ``ToFloat64``'s conversions, a value's
storage form (``storage_form``), and a packed 8-bit operand's element (one ``prmt``).

Values are held in their compute type (``codegen.COMPUTE_TYPE``): FLOAT16 as its float value, 8- and
16-bit integers in 32 bits (every integer node is exact, so the width never shows), BOOL as ``bool``.
The device helpers these call (``SMALL_TO_FLOAT``, ``DOUBLES``, ``BYTES``) and the table of every node's lowering
are in ``node_c``.
"""

from __future__ import annotations

from collections.abc import Callable

from ... import expr as ex
from ...dtypes import DataType
from .codegen import COMPUTE_TYPE, store


def held_type(data_type: ex.ValueType) -> str:
    """The C type a value of ``data_type`` is held in."""
    return "bool" if data_type == ex.BOOL else COMPUTE_TYPE[data_type]  # type: ignore[index]


# Integer -> float32, rounded to nearest even by PTX ``cvt.rn``, by the type the integer is held in.
_TO_FLOAT = {"int": "i2f_rn", "unsigned int": "u2f_rn", "ll": "ll2f_rn", "ull": "ull2f_rn"}

_SMALL = 1 << 22


def _small(data_type: ex.ValueType) -> bool:
    """Whether every value of the integer type is below 2**22 in magnitude."""
    if not isinstance(data_type, DataType) or data_type.is_float:
        return False
    low, high = data_type.integer_range
    return low > -_SMALL and high < _SMALL


# A reduction's value converts a difference a - b of two small integers (DEQUANTIZE_LINEAR's x - zero point)
# without forming it: each side becomes the float K + a by writing a into K's mantissa, and one rounded add
# of K + a and -(K + b) gives a - b. Exact: K + a is a float exactly (K = 2**23 for 0 <= a < 2**23, by OR;
# K = 2**23 + 2**22 for -2**22 <= a < 2**22, by adding a to K's bits: the mantissa field 2**22 + a stays in
# [0, 2**23), so no carry reaches the exponent, whose ulp is 1), and |a - b| < 2**24 is representable, so
# add.rn returns it exactly (a = b gives +0.0, as cvt.rn of 0 does).
_OFFSETS = (("0x4B000000 | ", 0, 1 << 23), ("0x4B400000 + ", -(1 << 22), 1 << 22))  # (K's bits and, range)


def _both_packed(node: ex.Subtract, packed: frozenset[int]) -> bool:
    """Whether both sides are packed UINT8 elements: then K + a and K + b cost one prmt each, fewer
    instructions than the difference's cvt.rn after each byte is taken out of its word (element-wise
    kernels convert by cvt.rn otherwise)."""
    return _packed_byte(node.a, packed) is not None and _packed_byte(node.b, packed) is not None


def _offset_difference(node: ex.Subtract, v: Callable[[ex.Expr], str],
                       packed: frozenset[int] = frozenset()) -> str | None:
    """ToFloat32(a - b) through K + a and K + b (see above) where both sides fit one form; else None."""
    ranges = [ex.integer_range(node.a), ex.integer_range(node.b)]
    for bits, low, high in _OFFSETS:
        if all(low <= a_low and a_high < high for a_low, a_high in ranges):
            a, b = (_offset(bits, side, v, packed) for side in (node.a, node.b))
            return f"add_rn({a}, -{b})"
    return None


def _offset(bits: str, side: ex.Expr, v: Callable[[ex.Expr], str], packed: frozenset[int]) -> str:
    """K + side as a float: a packed UINT8 byte by one prmt into 2**23's mantissa, else by its bits."""
    k = _packed_byte(side, packed)
    if k is not None and bits == _OFFSETS[0][0]:
        return f"__int_as_float(prmt(0x4B000000u, a{k}, 0x3004u + s{k}))"
    return f"__int_as_float({bits}(int)({v(side)}))"


def _to_float32(node: ex.ToFloat32, v: Callable[[ex.Expr], str], small: bool = False,
                packed: frozenset[int] = frozenset()) -> str:
    source = node.value.data_type
    if source is DataType.FLOAT16:
        return v(node.value)  # held as its float value already: exact
    if isinstance(node.value, ex.Subtract) and (small or _both_packed(node.value, packed)):
        difference = _offset_difference(node.value, v, packed)
        if difference is not None:
            return difference
    if small and _small(source):
        return f"small_i2f({v(node.value)})"
    return f"{_TO_FLOAT[held_type(source)]}({v(node.value)})"


# Integer -> float64, rounded to nearest even (exact below 2**53) by PTX ``cvt.rn``, by the type it is held in.
_TO_DOUBLE = {"int": "i2d_rn", "unsigned int": "u2d_rn", "ll": "ll2d_rn", "ull": "ull2d_rn", "float": "f2d"}


def storage_form(data_type: DataType, value: ex.Expr, held: str) -> str:
    """A value (C expression ``held``, of its compute type) in the storage form of ``data_type``: a FLOAT64 one
    rounded once to FLOAT32 or FLOAT16 (``d2f_rn``, ``d2h_rn``), any other as ``codegen.store`` writes it."""
    if value.data_type is DataType.FLOAT64 and data_type is not DataType.FLOAT64:
        return f"d2h_rn({held})" if data_type is DataType.FLOAT16 else f"d2f_rn({held})"
    return store(data_type, held)


_PACKED_LOADS = {DataType.UINT8: "prmt(0u, a{k}, 0x0004u + s{k})",
                 DataType.INT8: "((int)prmt(0u, a{k}, 0xCCC4u + s{k} * 0x1111u))"}


def _packed_byte(side: ex.Expr, packed: frozenset[int]) -> int | None:
    """The operand of a side that is a packed UINT8 operand's element (widened or not), else None."""
    while isinstance(side, ex.Widen):
        side = side.value
    if isinstance(side, ex.Load) and side.operand in packed and side.stored is DataType.UINT8:
        return side.operand
    return None
