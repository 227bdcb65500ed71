"""The element expressions' Divide, Wrapping, Remainder, Round, Saturate, BitCount, Bitwise and Wrap in Numba
kernels, as LLVM instructions.

Numba's own spellings mean something else: its float ``/`` checks the divisor and raises on zero (the
Python error model), ``round`` is Python's, and a cast of a float beyond an integer type's range is
undefined in LLVM (``fptosi`` gives poison). So each is an intrinsic emitting the instructions the table in
``opendml.expr`` names: ``fdiv`` (no fast-math flags: IEEE division, x / 0 is +-inf and 0 / 0 NaN, never a
multiply by a reciprocal), ``llvm.rint`` (nearest integer, ties to even: Numba never changes the rounding
mode), and a saturating conversion (truncated toward zero, NaN gives 0, beyond the range its limits): of a
float, compares and selects around a conversion of the values in range; of an integer, a clamp and a
truncation. A Saturate of a Round to a type whose limits are float32 values (QUANTIZE_LINEAR's) clamps the
unrounded value and converts it rounding (``llvm.lrint``: one ``vcvtps2dq``), which is the same value.
The same builders (``rint``, ``saturate``) lower vectors for the streaming stores (``vectors``), and LLVM's
loop vectoriser vectorises the scalar forms (these are intrinsics it knows), so the plain loops vectorise
too.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic


def _name(t: ir.Type) -> str:
    """LLVM's overload suffix of a scalar or vector type (``f32``, ``v16i8``)."""
    if isinstance(t, ir.VectorType):
        return f"v{t.count}{_name(t.element)}"
    if isinstance(t, ir.DoubleType):
        return "f64"
    return "f32" if isinstance(t, ir.FloatType) else f"i{t.width}"  # type: ignore[attr-defined]


def _call(builder: ir.IRBuilder, name: str, value: ir.Value) -> ir.Value:
    """A call of the LLVM intrinsic ``name`` (overloaded on ``value``'s type, and returning it) on ``value``."""
    full = f"{name}.{_name(value.type)}"
    result = value.type
    module = builder.module
    function = module.globals.get(full) or ir.Function(module, ir.FunctionType(result, [value.type]), full)
    return builder.call(function, [value])


def _call_to(builder: ir.IRBuilder, name: str, result: ir.Type, value: ir.Value) -> ir.Value:
    """A call of the LLVM intrinsic ``name`` overloaded on its result's and ``value``'s types."""
    full = f"{name}.{_name(result)}.{_name(value.type)}"
    module = builder.module
    function = module.globals.get(full) or ir.Function(module, ir.FunctionType(result, [value.type]), full)
    return builder.call(function, [value])


def sqrt(builder: ir.IRBuilder, value: ir.Value) -> ir.Value:
    """float32 (or a vector of them) square root, correctly rounded (IEEE; no fast-math flags)."""
    return _call(builder, "llvm.sqrt", value)


def rint(builder: ir.IRBuilder, value: ir.Value) -> ir.Value:
    """float32 (or a vector of them) to the nearest integer, ties to even."""
    return _call(builder, "llvm.rint", value)


def ctpop(builder: ir.IRBuilder, value: ir.Value) -> ir.Value:
    """The bits set of an integer (or of each of a vector of them), in its own width, as an 8-bit integer."""
    return _resize(builder, _call(builder, "llvm.ctpop", value), 8, False)


def _special_divisor(builder: ir.IRBuilder, b: ir.Value, signed: bool) -> tuple[ir.Value, ir.Value, ir.Value | None]:
    """The integer divisor with 0 (and, signed, -1) made 1, so that ``sdiv``/``udiv``/``srem``/``urem`` by it are
    defined (LLVM: division by zero and the smallest integer / -1 are undefined behaviour); whether it was 0,
    and whether it was -1 (None unsigned)."""
    zero, one = _constant(b.type, 0), _constant(b.type, 1)
    is_zero = builder.icmp_unsigned("==", b, zero)
    if not signed:
        return builder.select(is_zero, one, b), is_zero, None
    is_minus_one = builder.icmp_signed("==", b, _constant(b.type, -1))
    return builder.select(builder.or_(is_zero, is_minus_one), one, b), is_zero, is_minus_one


def quotient(builder: ir.IRBuilder, a: ir.Value, b: ir.Value, signed: bool) -> ir.Value:
    """Integer a / b (scalars or vectors) truncated toward zero; x / 0 is 0, x / -1 is -x wrapping."""
    safe, is_zero, is_minus_one = _special_divisor(builder, b, signed)
    if is_minus_one is None:
        value = builder.udiv(a, safe)
    else:
        value = builder.select(is_minus_one, builder.neg(a), builder.sdiv(a, safe))
    return builder.select(is_zero, _constant(a.type, 0), value)


def integer_remainder(builder: ir.IRBuilder, a: ir.Value, b: ir.Value, signed: bool) -> ir.Value:
    """Integer a % b (scalars or vectors), C's truncated remainder; by 0 (and by -1, as by 1) it is 0."""
    safe = _special_divisor(builder, b, signed)[0]
    return (builder.srem if signed else builder.urem)(a, safe)


def wrapping(builder: ir.IRBuilder, op: str, a: ir.Value, b: ir.Value) -> ir.Value:
    """Integer a op b (scalars or vectors) in their own width: LLVM's add, sub and mul without ``nsw``/``nuw``
    wrap modulo 2**bits."""
    return {"+": builder.add, "-": builder.sub, "*": builder.mul}[op](a, b)


def bitwise(builder: ir.IRBuilder, op: str, a: ir.Value, b: ir.Value, signed: bool) -> ir.Value:
    """Integer a op b (scalars or vectors) on their bits: ``and``, ``or``, ``xor``; a shift by b's low bits (b
    masked to ``bits - 1`` first: LLVM's shl, lshr and ashr by the width or more give poison), ``>>`` arithmetic
    where ``signed``."""
    if op in ("&", "|", "^"):
        return {"&": builder.and_, "|": builder.or_, "^": builder.xor}[op](a, b)
    width = a.type.element.width if isinstance(a.type, ir.VectorType) else a.type.width
    count = builder.and_(b, _constant(b.type, width - 1))
    if op == "<<":
        return builder.shl(a, count)
    return (builder.ashr if signed else builder.lshr)(a, count)


def wrap(builder: ir.IRBuilder, value: ir.Value, bits: int, signed: bool) -> ir.Value:
    """An integer (vector) as ``bits`` bits modulo 2**bits: truncated, or extended by ``signed`` (the source's)."""
    return _resize(builder, value, bits, signed)


def _like(value: ir.Value, element: ir.Type) -> ir.Type:
    """``element``, or a vector of it as wide as ``value``."""
    return ir.VectorType(element, value.type.count) if isinstance(value.type, ir.VectorType) else element


def _constant(t: ir.Type, number: int | float) -> ir.Constant:
    """``number`` as a constant of the scalar or vector type ``t`` (every element)."""
    if isinstance(t, ir.VectorType):
        return ir.Constant(t, [ir.Constant(t.element, number)] * t.count)
    return ir.Constant(t, number)


def saturate(builder: ir.IRBuilder, value: ir.Value, source: tuple[bool, int, int] | None,
             target: tuple[bool, int, int, int], rounded: ir.Value | None = None) -> ir.Value:
    """``value`` (a float32 or float64, or an integer described by ``source`` as (signed, lowest, highest)) as the
    integer type ``target`` (signed, bits, lowest, highest): truncated toward zero, NaN as 0, clamped to the
    target's range. ``rounded``: the float32 that ``value`` is ``rint`` of, where the conversion may round
    it itself (``_saturate_float``)."""
    if source is None:
        return _saturate_float(builder, value, target, rounded)
    _, bits, low, high = target
    source_signed, source_low, source_high = source
    compare = builder.icmp_signed if source_signed else builder.icmp_unsigned
    if low > source_low:  # the limits the source can pass, each a value of the source type (0 is in both)
        bound = _constant(value.type, low)
        value = builder.select(compare("<", value, bound), bound, value)
    if high < source_high:
        bound = _constant(value.type, high)
        value = builder.select(compare(">", value, bound), bound, value)
    return _resize(builder, value, bits, source_signed)


def _saturate_float(builder: ir.IRBuilder, value: ir.Value, target: tuple[bool, int, int, int],
                    rounded: ir.Value | None = None) -> ir.Value:
    """A float32 or float64 (or a vector of them) as an integer type, by compares and selects around a
    conversion of in-range values only.

    ``llvm.fptosi.sat`` means the same, but x86 lowers its vectors of 8- and 16-bit results one element at
    a time; this form is ``vcmpps``, ``vblendvps`` and ``vcvttps2dq`` a vector. The type's lowest value and
    its highest + 1 are 0 or powers of two, so exact as float32 and float64: a value at or past them is its
    limit (compared as the float it is), NaN is neither and gives 0, and every other value converts exactly.
    """
    signed, bits, low, high = target
    kind = value.type  # float32 or float64, scalar or vector: the constants are of the value's own type
    if high < 1 << 24:  # the limits are float32 values: clamped as floats (``vmaxps``, ``vminps``), NaN to 0
        # Of a rounded value, the unrounded one is clamped and converted rounding (``vcvtps2dq``, in place of
        # ``vroundps`` and ``vcvttps2dq``): the limits are integers, so clamping commutes with rounding.
        source = value if rounded is None else rounded
        floor, top = _constant(kind, float(low)), _constant(kind, float(high))
        clamped = builder.select(builder.fcmp_ordered("<", source, floor), floor, source)
        clamped = builder.select(builder.fcmp_ordered(">", clamped, top), top, clamped)
        clamped = builder.select(builder.fcmp_unordered("uno", source, source), _constant(kind, 0.0), clamped)
        i32 = _like(value, ir.IntType(32))
        whole = builder.fptosi(clamped, i32) if rounded is None else _call_to(builder, "llvm.lrint", i32, clamped)
        return _resize(builder, whole, bits, True)
    floor, ceiling = _constant(kind, float(low)), _constant(kind, float(high + 1))
    under, over = builder.fcmp_ordered("<", value, floor), builder.fcmp_ordered(">=", value, ceiling)
    inside = builder.select(builder.fcmp_unordered("uno", value, value), _constant(kind, 0.0), value)
    inside = builder.select(builder.or_(under, over), _constant(kind, 0.0), inside)
    # Converted at 32 bits at least: 8- and 16-bit values are exact there, and x86 has those conversions.
    wide = max(bits, 32)
    convert = builder.fptosi if signed or bits < 32 else builder.fptoui
    whole = _resize(builder, convert(inside, _like(value, ir.IntType(wide))), bits, True)
    result = whole.type
    return builder.select(over, _constant(result, high), builder.select(under, _constant(result, low), whole))


def _resize(builder: ir.IRBuilder, value: ir.Value, bits: int, signed: bool) -> ir.Value:
    """An integer (vector) whose value fits ``bits`` bits as that width, extended by ``signed``."""
    width = value.type.element.width if isinstance(value.type, ir.VectorType) else value.type.width
    result = _like(value, ir.IntType(bits))
    if width > bits:
        return builder.trunc(value, result)
    if width < bits:
        return (builder.sext if signed else builder.zext)(value, result)
    return value


def _integer(t: types.Integer) -> tuple[bool, int, int, int]:
    bits = t.bitwidth
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if t.signed else (0, (1 << bits) - 1)
    return t.signed, bits, low, high


@intrinsic
def divide(typingctx, a, b):  # type: ignore[no-untyped-def]
    """float32 (or float64) a / b, rounded once (IEEE): no zero check, no reciprocal."""
    if a != b or a not in (types.float32, types.float64):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.fdiv(args[0], args[1])

    return a(a, a), codegen


def _same_integers(a: types.Type, b: types.Type) -> bool:
    return isinstance(a, types.Integer) and a == b


@intrinsic
def int_quotient(typingctx, a, b):  # type: ignore[no-untyped-def]
    """Integer a / b of one type, truncated toward zero (``quotient``: x / 0 is 0, x / -1 wraps)."""
    if not _same_integers(a, b):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return quotient(builder, args[0], args[1], a.signed)

    return a(a, b), codegen


@intrinsic
def remainder(typingctx, a, b):  # type: ignore[no-untyped-def]
    """float32 fmod(a, b) (``frem``: exact), or integer a % b of one type (``integer_remainder``)."""
    if a == types.float32 and b == types.float32:
        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            return builder.frem(args[0], args[1])
    elif _same_integers(a, b):
        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            return integer_remainder(builder, args[0], args[1], a.signed)
    else:
        return None
    return a(a, b), codegen


def _wrapping_intrinsic(op: str):  # type: ignore[no-untyped-def]
    @intrinsic
    def wrapped_op(typingctx, a, b):  # type: ignore[no-untyped-def]
        if not _same_integers(a, b):
            return None

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            return wrapping(builder, op, args[0], args[1])

        return a(a, b), codegen

    return wrapped_op


wrapping_add = _wrapping_intrinsic("+")  # integer a + b of one type, modulo 2**bits
wrapping_subtract = _wrapping_intrinsic("-")
wrapping_multiply = _wrapping_intrinsic("*")


def _bitwise_intrinsic(op: str):  # type: ignore[no-untyped-def]
    @intrinsic
    def bitwise_op(typingctx, a, b):  # type: ignore[no-untyped-def]
        if not _same_integers(a, b):
            return None

        def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
            return bitwise(builder, op, args[0], args[1], a.signed)

        return a(a, b), codegen

    return bitwise_op


bitwise_and = _bitwise_intrinsic("&")  # integer a op b of one type, on its bits (``bitwise``)
bitwise_or = _bitwise_intrinsic("|")
bitwise_xor = _bitwise_intrinsic("^")
shift_left = _bitwise_intrinsic("<<")  # by b modulo the width
shift_right = _bitwise_intrinsic(">>")  # arithmetic for a signed type


@intrinsic
def wrap_to(typingctx, value, target):  # type: ignore[no-untyped-def]
    """An integer ``value`` as the integer type ``target`` (a NumPy type) modulo 2**bits (``wrap``)."""
    if not isinstance(target, types.NumberClass) or not isinstance(target.instance_type, types.Integer) or \
            not isinstance(value, types.Integer):
        return None
    result = target.instance_type

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return wrap(builder, args[0], result.bitwidth, value.signed)

    return result(value, target), codegen


def sign_of(builder: ir.IRBuilder, value: ir.Value) -> ir.Value:
    """Whether a float32's (or each of a vector's) sign bit is set: its bits as a signed integer below zero."""
    bits = builder.bitcast(value, _like(value, ir.IntType(32)))
    return builder.icmp_signed("<", bits, _constant(bits.type, 0))


@intrinsic
def sign_bit(typingctx, value):  # type: ignore[no-untyped-def]
    """Whether a float32's sign bit is set (-0.0 included), as a boolean."""
    if value != types.float32:
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return sign_of(builder, args[0])

    return types.boolean(types.float32), codegen


@intrinsic
def square_root(typingctx, value):  # type: ignore[no-untyped-def]
    """float32 square root (a float32), rounded once."""
    if value != types.float32:
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return sqrt(builder, args[0])

    return types.float32(types.float32), codegen


@intrinsic
def bit_count(typingctx, value):  # type: ignore[no-untyped-def]
    """The bits set of an integer, in its own type's width (``llvm.ctpop``), as a uint8."""
    if not isinstance(value, types.Integer):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return ctpop(builder, args[0])

    return types.uint8(value), codegen


@intrinsic
def round_even(typingctx, value):  # type: ignore[no-untyped-def]
    """float32 to the nearest integer (a float32), ties to even."""
    if value != types.float32:
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return rint(builder, args[0])

    return types.float32(types.float32), codegen


@intrinsic
def saturate_to(typingctx, value, target):  # type: ignore[no-untyped-def]
    """``value`` (float32, float64 or an integer) as the integer type ``target`` (a NumPy type: ``np.uint8``),
    truncated toward zero, NaN as 0, clamped to the type's range."""
    if not isinstance(target, types.NumberClass) or not isinstance(target.instance_type, types.Integer):
        return None
    if value not in (types.float32, types.float64) and not isinstance(value, types.Integer):
        return None
    result = target.instance_type

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        source = None
        if isinstance(value, types.Integer):
            signed, _, low, high = _integer(value)
            source = (signed, low, high)
        return saturate(builder, args[0], source, _integer(result))

    return result(value, target), codegen


@intrinsic
def round_saturate_to(typingctx, value, target):  # type: ignore[no-untyped-def]
    """``saturate_to(round_even(value), target)`` for a float32 ``value``, converted rounding where the
    target's limits are float32 values (``saturate``)."""
    if value != types.float32 or not isinstance(target, types.NumberClass) or \
            not isinstance(target.instance_type, types.Integer):
        return None
    result = target.instance_type

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return saturate(builder, rint(builder, args[0]), None, _integer(result), rounded=args[0])

    return result(value, target), codegen
