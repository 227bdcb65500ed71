"""The CUDA C of each element expression node (``LOWERINGS``, one entry per node of ``opendml.expr``), with
the device helpers those expressions call; ``expr_c`` assembles them into a kernel's statements.

Values are held in their compute type (``codegen.COMPUTE_TYPE``): FLOAT16 as its float value, 8- and
16-bit integers in 32 bits (every integer node is exact, so the width never shows), BOOL as ``bool``.
Float math, conversions and comparisons go through the PTX helpers of ``codegen.PRELUDE`` (division,
rounding and saturating conversions through those of ``ARITHMETIC``), which no compiler setting can change.

The lowerings of conversions to floats (and the types values are held in, their storage forms, packed bytes) are
in ``node_conversions_c``; those of arithmetic, the integers' bit operations and ``Saturate`` in ``node_arithmetic_c``.
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
from .codegen import C_TYPE, load
from .node_arithmetic_c import _add, _bit_count, _bitwise, _divide, _negate, _remainder, _saturate, _wrapping
from .node_conversions_c import _PACKED_LOADS, _TO_DOUBLE, _to_float32, held_type, storage_form


def unsupported(operator: str, field: str, requirement: str, got: object) -> KernelUnsupportedError:
    return kernel_unsupported(operator, field, requirement, got)


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
