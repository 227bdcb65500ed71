"""The CUDA C of each element expression node (``LOWERINGS``, one entry per node of ``opendml.expr``), with
the device helpers those expressions call; ``expr_c`` assembles them into a kernel's statements.

Values are held in their compute type (``codegen.COMPUTE_TYPE``): FLOAT16 as its float value, 8- and
16-bit integers in 32 bits (every integer node is exact, so the width never shows), BOOL as ``bool``.
Float math, conversions and comparisons go through the PTX helpers of ``codegen.PRELUDE`` (division,
rounding and saturating conversions through those of ``ARITHMETIC``), which no compiler setting can change.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from ... import expr as ex
from ...dtypes import DataType
from ...errors import KernelUnsupportedError, kernel_unsupported
from ...kernels.monotone import clamped
from . import rounded_binary_c, rounded_c
from .codegen import C_TYPE, COMPUTE_TYPE, load, store


def unsupported(operator: str, field: str, requirement: str, got: object) -> KernelUnsupportedError:
    return kernel_unsupported(operator, field, requirement, got)


def held_type(data_type: ex.ValueType) -> str:
    """The C type a value of ``data_type`` is held in."""
    return "bool" if data_type == ex.BOOL else COMPUTE_TYPE[data_type]  # type: ignore[index]


# Integer -> float32, rounded to nearest even by PTX ``cvt.rn``, by the type the integer is held in.
_TO_FLOAT = {"int": "i2f_rn", "unsigned int": "u2f_rn", "ll": "ll2f_rn", "ull": "ull2f_rn"}


# A reduction's value converts integers below 2**22 in magnitude by SMALL_TO_FLOAT, not by the
# quarter-rate I2F instruction. Exact: for an integer d with |d| < 2**22, 0x4B400000 + d is the bit
# pattern of the float 2**23 + (2**22 + d), since 0 < 2**22 + d < 2**23 stays in the mantissa of the
# exponent of 2**23 (whose ulp is 1) without carrying into it; 12582912 = 2**23 + 2**22 is a float too,
# and the difference of the two is d, an integer below 2**24, so representable: add.rn returns it
# exactly (d = 0 gives +0.0, as cvt.rn does).
SMALL_TO_FLOAT = """__device__ __forceinline__ float small_i2f(int d) {
    return add_rn(__int_as_float(0x4B400000 + d), -12582912.0f);
}
"""
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


# Division (IEEE, never a reciprocal), rounding to an integer (ties to even) and a float's conversion to an
# integer, as PTX: ``cvt.rzi`` truncates and clamps to the destination's range, and gives 0 for NaN where
# the destination has 32 bits but 1 << 63 where it has 64 (so ``_saturate`` selects those NaN apart);
# 8- and 16-bit ranges are clamped after a 32-bit conversion. Prepended to the device functions that use
# them (``device_function``), so every other kernel renders as it did without them.
ARITHMETIC = r"""__device__ __forceinline__ float div_rn(float a, float b) {
    float r; asm("div.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); return r;
}
__device__ __forceinline__ float rint_rn(float a) {
    float r; asm("cvt.rni.f32.f32 %0, %1;" : "=f"(r) : "f"(a)); return r;
}
__device__ __forceinline__ int f2i_rz(float a, int lo, int hi) {
    int r; asm("cvt.rzi.s32.f32 %0, %1;" : "=r"(r) : "f"(a)); return r < lo ? lo : (r > hi ? hi : r);
}
__device__ __forceinline__ unsigned int f2u_rz(float a, unsigned int hi) {
    unsigned int r; asm("cvt.rzi.u32.f32 %0, %1;" : "=r"(r) : "f"(a)); return r > hi ? hi : r;
}
__device__ __forceinline__ ll f2ll_rz(float a) {
    ll r; asm("cvt.rzi.s64.f32 %0, %1;" : "=l"(r) : "f"(a)); return r;
}
__device__ __forceinline__ ull f2ull_rz(float a) {
    ull r; asm("cvt.rzi.u64.f32 %0, %1;" : "=l"(r) : "f"(a)); return r;
}
"""
ARITHMETIC_NODES = (ex.Divide, ex.Round, ex.Saturate)

# FLOAT64 values' conversions, as PTX (no compiler setting changes them): a float32 widened exactly, an integer
# rounded to nearest even, a double rounded once to float32 or straight to FLOAT16 (``cvt.rn.f16.f64``: one
# rounding, never through a float32), a double truncated to an integer as ARITHMETIC's float32 ones are. Prepended
# to the device functions whose expressions hold a FLOAT64 value (``holds_double``) only, so every other kernel
# renders as it did without them.
DOUBLES = r"""__device__ __forceinline__ double f2d(float a) {
    double r; asm("cvt.f64.f32 %0, %1;" : "=d"(r) : "f"(a)); return r;
}
__device__ __forceinline__ double i2d_rn(int a) {
    double r; asm("cvt.rn.f64.s32 %0, %1;" : "=d"(r) : "r"(a)); return r;
}
__device__ __forceinline__ double u2d_rn(unsigned int a) {
    double r; asm("cvt.rn.f64.u32 %0, %1;" : "=d"(r) : "r"(a)); return r;
}
__device__ __forceinline__ double ll2d_rn(ll a) {
    double r; asm("cvt.rn.f64.s64 %0, %1;" : "=d"(r) : "l"(a)); return r;
}
__device__ __forceinline__ double ull2d_rn(ull a) {
    double r; asm("cvt.rn.f64.u64 %0, %1;" : "=d"(r) : "l"(a)); return r;
}
__device__ __forceinline__ float d2f_rn(double a) {
    float r; asm("cvt.rn.f32.f64 %0, %1;" : "=f"(r) : "d"(a)); return r;
}
__device__ __forceinline__ unsigned short d2h_rn(double a) {
    unsigned short h; asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h) : "d"(a)); return h;
}
__device__ __forceinline__ bool is_number(double a) {
    unsigned int r; asm("{ .reg .pred p; setp.num.f64 p, %1, %1; selp.u32 %0, 1, 0, p; }" : "=r"(r) : "d"(a));
    return r != 0;
}
__device__ __forceinline__ int d2i_rz(double a, int lo, int hi) {
    int r; asm("cvt.rzi.s32.f64 %0, %1;" : "=r"(r) : "d"(a)); return r < lo ? lo : (r > hi ? hi : r);
}
__device__ __forceinline__ unsigned int d2u_rz(double a, unsigned int hi) {
    unsigned int r; asm("cvt.rzi.u32.f64 %0, %1;" : "=r"(r) : "d"(a)); return r > hi ? hi : r;
}
__device__ __forceinline__ ll d2ll_rz(double a) {
    ll r; asm("cvt.rzi.s64.f64 %0, %1;" : "=l"(r) : "d"(a)); return r;
}
__device__ __forceinline__ ull d2ull_rz(double a) {
    ull r; asm("cvt.rzi.u64.f64 %0, %1;" : "=l"(r) : "d"(a)); return r;
}
"""


def holds_double(exprs: Sequence[ex.Expr]) -> bool:
    """Whether an expression holds a FLOAT64 value (then its device function needs DOUBLES)."""
    return any(node.data_type is DataType.FLOAT64 for root in exprs for node in ex.nodes(root))


# Integer -> float64, rounded to nearest even (exact below 2**53) by PTX ``cvt.rn``, by the type it is held in.
_TO_DOUBLE = {"int": "i2d_rn", "unsigned int": "u2d_rn", "ll": "ll2d_rn", "ull": "ull2d_rn", "float": "f2d"}


def storage_form(data_type: DataType, value: ex.Expr, held: str) -> str:
    """A value (C expression ``held``, of its compute type) in the storage form of ``data_type``: a FLOAT64 one
    rounded once to FLOAT32 or FLOAT16 (``d2f_rn``, ``d2h_rn``), any other as ``codegen.store`` writes it."""
    if value.data_type is DataType.FLOAT64 and data_type is not DataType.FLOAT64:
        return f"d2h_rn({held})" if data_type is DataType.FLOAT16 else f"d2f_rn({held})"
    return store(data_type, held)

# A packed byte operand (``packed`` below) arrives as the 32-bit word holding it and the byte's place s in
# it, and becomes a value by one PTX ``prmt`` picking byte 4 + s of {word, constant}: zero-extended (UINT8,
# the constant's zero bytes above it), sign-replicated (INT8, the selector's high bit), or, for the offset
# difference, written straight into the mantissa of 2**23 (0x4B000000's top byte kept above it). The
# constant is the first operand and the selector an immediate, so no register holds a selector per place. A
# byte taken out of a union then widened costs a shift and a mask or two.
BYTES = r"""__device__ __forceinline__ unsigned int prmt(unsigned int a, unsigned int b, unsigned int s) {
    unsigned int r; asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(s)); return r;
}
"""
# CLIP's and THRESHOLD's clamps against a scalar bound p, ``Select(Less(p, x), p, x)`` (above) and
# ``Select(Less(x, p), p, x)`` (below), as one PTX ``min.NaN`` or ``max.NaN`` where p is known, when the
# source is made, to be a nonzero number: then a NaN x gives a NaN either way (payloads may differ, SPEC 8.5),
# and an x equal to p has p's bits, so neither zero's sign nor a NaN bound (the select keeps x, the min would
# not) can tell them apart. Other bounds keep the select (exact for each: a bound of -0.0 above or +0.0
# below is not the min's or max's answer for x of the other zero). Before sm_80 (no ``.NaN``) the select.
CLAMPS = r"""__device__ __forceinline__ float clamp_above(float x, float p) {
#if __CUDA_ARCH__ >= 800
    float r; asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(p)); return r;
#else
    return lt(p, x) ? p : x;
#endif
}
__device__ __forceinline__ float clamp_below(float x, float p) {
#if __CUDA_ARCH__ >= 800
    float r; asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(p)); return r;
#else
    return lt(x, p) ? p : x;
#endif
}
"""


def clamp_bounds(scalars: Sequence[np.generic]) -> frozenset[int]:
    """The FLOAT32 scalars (by index) that are nonzero numbers: the bounds a clamp may be a min or max of."""
    return frozenset(k for k, value in enumerate(scalars)
                     if isinstance(value, np.float32) and not np.isnan(value) and value != 0)


def _clamp(node: ex.Select, bounds: frozenset[int], v: Callable[[ex.Expr], str]) -> str | None:
    """A clamp's min or max (CLAMPS), where its bound is in ``bounds``; else None."""
    x = clamped(node)
    if x is None or x.data_type is not DataType.FLOAT32 or node.a.index not in bounds:  # type: ignore[attr-defined]
        return None
    above = node.condition.a == node.a  # type: ignore[attr-defined]
    return f"{'clamp_above' if above else 'clamp_below'}({v(x)}, {v(node.a)})"


_PACKED_LOADS = {DataType.UINT8: "prmt(0u, a{k}, 0x0004u + s{k})",
                 DataType.INT8: "((int)prmt(0u, a{k}, 0xCCC4u + s{k} * 0x1111u))"}


def _packed_byte(side: ex.Expr, packed: frozenset[int]) -> int | None:
    """The operand of a side that is a packed UINT8 operand's element (widened or not), else None."""
    while isinstance(side, ex.Widen):
        side = side.value
    if isinstance(side, ex.Load) and side.operand in packed and side.stored is DataType.UINT8:
        return side.operand
    return None


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


class Options(NamedTuple):
    """How ``bodies`` was asked to lower: ``small`` integers to float through ``small_i2f``, ``packed``
    8-bit operands as a word and a byte's place, clamps against the scalar ``bounds`` as a min or max."""

    small: bool = False
    packed: frozenset[int] = frozenset()
    bounds: frozenset[int] = frozenset()


def _load(node: ex.Load, v: Callable[[ex.Expr], str], at: Options) -> str:
    if node.operand in at.packed:
        return _PACKED_LOADS[node.stored].format(k=node.operand)
    return load(node.stored, f"a{node.operand}")


def _select(node: ex.Select, v: Callable[[ex.Expr], str], at: Options) -> str:
    clamp = _clamp(node, at.bounds, v) if at.bounds else None
    return clamp if clamp is not None else f"({v(node.condition)} ? {v(node.a)} : {v(node.b)})"


def _held_store(node: ex.Store, v: Callable[[ex.Expr], str], at: Options) -> str:
    """A Store inside an expression (a fused kernel's intermediate): the value as memory would hold it,
    read back into its compute type (FLOAT16 rounded once, then converted back exactly). A root Store's
    storage form is written by ``bodies`` itself."""
    return load(node.type, storage_form(node.type, node.value, v(node.value)))


# A node's lowering: the node, its children's temporaries (``v(child)``) and the options, to its C expression.
Lowering = Callable[[Any, Callable[[ex.Expr], str], Options], str]

# One entry per node of ``ex.NODES`` (the CUDA C column of the table in opendml.expr).
LOWERINGS: dict[type[ex.Expr], Lowering] = {
    ex.Load: _load,
    ex.Param: lambda n, v, at: f"q{n.index}",
    ex.Widen: lambda n, v, at: f"(({held_type(n.type)})({v(n.value)}))",
    # Both sides are held in the node's type or wider, and the type rules make the difference fit it.
    ex.Subtract: lambda n, v, at: f"(({held_type(n.data_type)})({v(n.a)} - {v(n.b)}))",
    ex.ToFloat32: lambda n, v, at: _to_float32(n, v, at.small, at.packed),
    ex.Multiply: lambda n, v, at: f"mul_rn({v(n.a)}, {v(n.b)})",
    ex.Add: lambda n, v, at: _add(n, v),
    ex.Divide: lambda n, v, at: _divide(n, v),
    ex.Wrapping: lambda n, v, at: _wrapping(n, v),
    ex.Remainder: lambda n, v, at: _remainder(n, v),
    ex.Negate: lambda n, v, at: _negate(n, v),
    # Inverted in the held type, then truncated to the node's own (a UINT8 held in 32 bits keeps 8 of them).
    ex.BitNot: lambda n, v, at: f"(({held_type(n.data_type)})(({C_TYPE[n.data_type]})(~{v(n.value)})))",
    ex.BitCount: lambda n, v, at: _bit_count(n, v),
    # sqrt.rn.f32, rounded once; denormals kept by codegen.OPTIONS' --ftz=false (the one node not in inline PTX)
    ex.Sqrt: lambda n, v, at: f"__fsqrt_rn({v(n.value)})",
    ex.Round: lambda n, v, at: f"rint_rn({v(n.value)})",
    ex.Saturate: lambda n, v, at: _saturate(n, v),
    ex.Less: lambda n, v, at: f"lt({v(n.a)}, {v(n.b)})",
    ex.IsNumber: lambda n, v, at: f"is_number({v(n.value)})",
    ex.SignBit: lambda n, v, at: f"(__float_as_int({v(n.value)}) < 0)",
    ex.Select: _select,
    ex.Store: _held_store,
    ex.Bitwise: lambda n, v, at: _bitwise(n, v),
    # Through the type's own C type (modular: a wider one extends by the held value's sign), then held as it is.
    ex.Wrap: lambda n, v, at: f"(({held_type(n.type)})(({C_TYPE[n.type]})({v(n.value)})))",
    # The device function rounded_c makes for the function and precision (expr_c puts it before its caller).
    ex.Function: lambda n, v, at: f"{rounded_c.function_name(n)}({v(n.value)})",
    # DOUBLES' conversions: cvt.rn.f64 of an integer (by the type it is held in), cvt.f64.f32 of a float (exact)
    ex.ToFloat64: lambda n, v, at: f"{_TO_DOUBLE[held_type(n.value.data_type)]}({v(n.value)})",
    ex.BinaryFunction: lambda n, v, at: f"{rounded_binary_c.function_name(n)}({v(n.a)}, {v(n.b)})",
}
