"""FLOAT16 in Numba kernels, which have no float16 arithmetic: bits to float32 exactly, and float32 back to
bits rounded once to nearest even by integer code (SPEC 8)."""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from ...kernels.cache import use_for_numba

use_for_numba()  # before the decorators: Numba picks each function's cache directory then

jit = njit(nogil=True, cache=True)


@intrinsic
def _bits_to_f32(typingctx, bits):  # type: ignore[no-untyped-def]
    if bits != types.uint32:
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.bitcast(args[0], ir.FloatType())

    return types.float32(types.uint32), codegen


@intrinsic
def _f32_to_bits(typingctx, value):  # type: ignore[no-untyped-def]
    if value != types.float32:
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.bitcast(args[0], ir.IntType(32))

    return types.uint32(types.float32), codegen


U32 = np.uint32


@jit
def half_to_float(h):  # type: ignore[no-untyped-def]
    """FLOAT16 bits to float32, exactly (subnormals renormalised by an exact float subtraction)."""
    o = U32(U32(U32(h) & U32(0x7FFF)) << U32(13))
    exponent = U32(o & U32(0x0F800000))
    o = U32(o + U32(0x38000000))  # rebias the exponent: (127 - 15) << 23
    if exponent == U32(0x0F800000):  # infinity or NaN: all exponent bits set
        f = _bits_to_f32(U32(o + U32(0x38000000)))
    elif exponent == U32(0):  # zero or subnormal
        f = _bits_to_f32(U32(o + U32(0x00800000))) - _bits_to_f32(U32(0x38800000))
    else:
        f = _bits_to_f32(o)
    return _bits_to_f32(U32(_f32_to_bits(f) | U32(U32(U32(h) & U32(0x8000)) << U32(16))))


@jit
def float_to_half(f):  # type: ignore[no-untyped-def]
    """float32 to FLOAT16 bits, rounded to nearest even; overflow gives infinity, NaN stays NaN."""
    u = _f32_to_bits(f)
    sign = U32(u & U32(0x80000000))
    u = U32(u ^ sign)
    if u >= U32(0x47800000):  # 65536 and above, infinity, NaN
        o = U32(0x7E00) if u > U32(0x7F800000) else U32(0x7C00)
    elif u < U32(0x38800000):  # the result is subnormal or zero: let float addition round
        g = _bits_to_f32(u) + _bits_to_f32(U32(0x3F000000))
        o = U32(_f32_to_bits(g) - U32(0x3F000000))
    else:
        odd = U32(U32(u >> U32(13)) & U32(1))
        u = U32(u + U32(0xC8000FFF))  # rebias ((15 - 127) << 23) plus the rounding bias 0xfff
        o = U32(U32(u + odd) >> U32(13))
    return np.uint16(o | U32(sign >> U32(16)))
