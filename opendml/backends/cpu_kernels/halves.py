"""FLOAT16 in Numba kernels, which have no float16 arithmetic: bits to float32 exactly, and float32 back to
bits rounded once to nearest even (SPEC 8).

Both conversions are LLVM's ``fpext`` and ``fptrunc`` (IEEE conversions: exact one way, rounded to nearest
even the other), which LLVM lowers to the CPU's own instructions (F16C's vcvtph2ps and vcvtps2ph on x86-64,
fcvt on AArch64) and vectorises in loops: a fused kernel holding FLOAT16 intermediates rounds each one
several times an element, and branchy integer code there stopped whole loops from vectorising. NaN is the
only input those instructions leave open (they quieten signalling NaNs and keep what payload fits); a select
pins it to what opendml has always written: a FLOAT16 store of any NaN is 0x7E00 with the NaN's sign, a
load keeps the half's payload bits.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

_I16, _I32 = ir.IntType(16), ir.IntType(32)


def _as_u16(context, builder, value, value_type):  # type: ignore[no-untyped-def]
    return context.cast(builder, value, value_type, types.uint16)


@intrinsic
def half_to_float(typingctx, bits):  # type: ignore[no-untyped-def]
    """FLOAT16 bits (any integer holding them) to float32, exactly; a NaN keeps its payload."""
    if not isinstance(bits, types.Integer):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        h = _as_u16(context, builder, args[0], signature.args[0])
        value = builder.fpext(builder.bitcast(h, ir.HalfType()), ir.FloatType())
        wide = builder.zext(h, _I32)
        magnitude = builder.and_(wide, ir.Constant(_I32, 0x7FFF))
        is_nan = builder.icmp_unsigned(">", magnitude, ir.Constant(_I32, 0x7C00))
        sign = builder.shl(builder.and_(wide, ir.Constant(_I32, 0x8000)), ir.Constant(_I32, 16))
        payload = builder.shl(builder.and_(wide, ir.Constant(_I32, 0x3FF)), ir.Constant(_I32, 13))
        nan = builder.or_(builder.or_(sign, payload), ir.Constant(_I32, 0x7F800000))
        return builder.select(is_nan, builder.bitcast(nan, ir.FloatType()), value)

    return types.float32(bits), codegen


@intrinsic
def float_to_half(typingctx, value):  # type: ignore[no-untyped-def]
    """float32 to FLOAT16 bits, rounded to nearest even; overflow gives infinity, NaN gives 0x7E00 signed."""
    if value != types.float32:
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        f = args[0]
        bits = builder.bitcast(builder.fptrunc(f, ir.HalfType()), _I16)
        sign = builder.trunc(builder.lshr(builder.bitcast(f, _I32), ir.Constant(_I32, 16)), _I16)
        nan = builder.or_(builder.and_(sign, ir.Constant(_I16, 0x8000)), ir.Constant(_I16, 0x7E00))
        return builder.select(builder.fcmp_unordered("uno", f, f), nan, bits)

    return types.uint16(types.float32), codegen


@intrinsic
def round_to_half(typingctx, value):  # type: ignore[no-untyped-def]
    """A float32 rounded to FLOAT16 and back (a fused kernel's FLOAT16 intermediate): the same float32 as
    ``half_to_float(float_to_half(value))``, a NaN the quiet NaN of its sign, in a third of the instructions."""
    if value != types.float32:
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        f = args[0]
        rounded = builder.fpext(builder.fptrunc(f, ir.HalfType()), ir.FloatType())
        sign = builder.and_(builder.bitcast(f, _I32), ir.Constant(_I32, 0x80000000))
        nan = builder.bitcast(builder.or_(sign, ir.Constant(_I32, 0x7FC00000)), ir.FloatType())
        return builder.select(builder.fcmp_unordered("uno", f, f), nan, rounded)

    return types.float32(types.float32), codegen
