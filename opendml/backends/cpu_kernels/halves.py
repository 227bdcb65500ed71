"""FLOAT16 in Numba kernels, which have no float16 arithmetic: bits to float32 exactly, and float32 back to
bits rounded once to nearest even (SPEC 8).

A FLOAT64 value is rounded to FLOAT16 once, from the double (``double_to_half``): LLVM's own ``fptrunc`` of a
double to half is a library call on x86-64 that a Numba module cannot count on, so the double is first rounded
to float32 to odd (truncated toward zero, the last bit set where any was dropped), then that float32 to FLOAT16
to nearest even: float32 keeps 13 bits beyond FLOAT16's 11 over all of FLOAT16's range (its subnormals too), so
the odd last bit stands for everything dropped and the second rounding is the one rounding of the double.

Both float32 conversions are LLVM's ``fpext`` and ``fptrunc`` (IEEE conversions: exact one way, rounded to nearest
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

_I16, _I32, _I64 = ir.IntType(16), ir.IntType(32), ir.IntType(64)


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


def _odd_float(builder: ir.IRBuilder, d: ir.Value) -> ir.Value:
    """The double ``d`` rounded to float32 to odd: the float32 nearest ``d`` toward zero, its last bit set where the
    conversion was inexact (NaN stays a NaN; beyond float32's range, FLT_MAX with the sign, which FLOAT16 rounds to
    infinity as the double would)."""
    nearest = builder.fptrunc(d, ir.FloatType())
    back = builder.fpext(nearest, ir.DoubleType())
    zero = ir.Constant(ir.DoubleType(), 0.0)
    # The nearest float32 lies beyond d (in magnitude) where it rounded away from zero: then one step down in
    # magnitude (its bits minus one) is the truncated one.
    beyond = builder.select(builder.fcmp_ordered(">", d, zero), builder.fcmp_ordered(">", back, d),
                            builder.fcmp_ordered("<", back, d))
    bits = builder.bitcast(nearest, _I32)
    truncated = builder.sub(bits, builder.zext(beyond, _I32))
    inexact = builder.zext(builder.fcmp_ordered("one", back, d), _I32)
    return builder.bitcast(builder.or_(truncated, inexact), ir.FloatType())


def _double_sign_nan(builder: ir.IRBuilder, d: ir.Value, bits: int) -> ir.Value:
    """The quiet NaN of ``d``'s sign: FLOAT16 bits (``bits`` 16) or float32 bits (32)."""
    sign = builder.lshr(builder.bitcast(d, _I64), ir.Constant(_I64, 64 - bits))
    kind = ir.IntType(bits)
    quiet = 0x7E00 if bits == 16 else 0x7FC00000
    top = builder.and_(builder.trunc(sign, kind), ir.Constant(kind, 1 << (bits - 1)))
    return builder.or_(top, ir.Constant(kind, quiet))


@intrinsic
def double_to_half(typingctx, value):  # type: ignore[no-untyped-def]
    """float64 to FLOAT16 bits, rounded once to nearest even (through float32 to odd); overflow gives infinity,
    NaN gives 0x7E00 with the NaN's sign."""
    if value != types.float64:
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        d = args[0]
        bits = builder.bitcast(builder.fptrunc(_odd_float(builder, d), ir.HalfType()), _I16)
        return builder.select(builder.fcmp_unordered("uno", d, d), _double_sign_nan(builder, d, 16), bits)

    return types.uint16(types.float64), codegen


@intrinsic
def round_double_to_half(typingctx, value):  # type: ignore[no-untyped-def]
    """A float64 rounded to FLOAT16 once and read back as float32 (a fused kernel's FLOAT16 intermediate): the
    float32 of ``half_to_float(double_to_half(value))``, a NaN the quiet NaN of its sign."""
    if value != types.float64:
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        d = args[0]
        rounded = builder.fpext(builder.fptrunc(_odd_float(builder, d), ir.HalfType()), ir.FloatType())
        nan = builder.bitcast(_double_sign_nan(builder, d, 32), ir.FloatType())
        return builder.select(builder.fcmp_unordered("uno", d, d), nan, rounded)

    return types.float32(types.float64), codegen
