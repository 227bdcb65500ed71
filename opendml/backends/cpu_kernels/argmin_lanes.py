"""ARGMIN's (and ARGMAX's) LLVM vector code: a run reduced in one pass, each vector lane keeping its own best.

Numba's loop vectoriser does not keep a position per lane, so these reductions are written as LLVM vector
code (llvmlite intrinsics): ``lane_argmin`` on integer keys (FLOAT32/FLOAT16 bits flipped to signed order,
``argmin_keys``), ``lane_argmin_float`` on FLOAT32 compared as floats where that is exact. Both ask for the
memory ahead of what they read (``_prefetch``), and both take ARGMAX as ARGMIN of order-reversed elements
(``argmin_keys.flip_order``): one XOR a vector.
"""

from __future__ import annotations

import platform

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from .argmin_keys import FLIP, flip_bias, flip_order, is_float, is_half, is_largest, key_of, propagates
from .jit import jit  # imported first: it puts Numba's cache of these kernels in the kernel cache
from .vectors import VECTOR_BYTES, lanes
from .vectors import Loop as _Loop
from .vectors import i64 as _i64
from .vectors import splat as _splat

# Row reductions ask for the memory this far ahead of what they read. Rows of 256 FLOAT32 elements wait on
# each row's vector chain and leave the hardware prefetcher behind: on one Intel Xeon thread, 102 ns a row
# from memory without, 58-61 with prefetches 2 to 16 KiB ahead (4 KiB chosen), 23 in cache; long rows 83 ->
# 74 ns per 256 elements.
PREFETCH_BYTES = 4096


def _prefetch(builder: ir.IRBuilder, base: ir.Value, index: ir.Value) -> None:
    """A read prefetch of ``base[index]``, into every cache level (a hint: it never faults)."""
    i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
    fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                        "llvm.prefetch.p0i8")
    pointer = builder.bitcast(builder.gep(base, [index]), i8p)
    builder.call(fn, [pointer, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])


def _lane_key(builder: ir.IRBuilder, v: ir.Value, bits: int, kind: types.Type) -> ir.Value:
    """A vector of elements as raw keys (``argmin_keys``): order-reversed for ARGMAX (one XOR: the sign bit
    of float bits, every bit of integers), then float bits flipped to signed order less the bias."""
    count, element = v.type.count, ir.IntType(bits)
    floating = is_float(kind) or is_half(kind)
    if is_largest(kind):
        v = builder.xor(v, _splat(builder, ir.Constant(element, -(1 << (bits - 1)) if floating else -1), count))
    if not floating:
        return v
    mask = _splat(builder, ir.Constant(element, FLIP[bits][0]), count)
    bias = _splat(builder, ir.Constant(element, flip_bias(bits, propagates(kind))), count)
    sign = builder.ashr(v, _splat(builder, ir.Constant(element, bits - 1), count))
    return builder.sub(builder.xor(v, builder.and_(sign, mask)), bias)


def _reduce(builder: ir.IRBuilder, how: str, v: ir.Value) -> ir.Value:
    element = v.type.element
    name = f"llvm.vector.reduce.{how}.v{v.type.count}i{element.width}"
    return builder.call(cgutils.get_or_insert_function(builder.module, ir.FunctionType(element, [v.type]), name),
                        [v])


def _chosen_position(builder: ir.IRBuilder, holds: ir.Value, where: ir.Value, increasing: bool) -> ir.Value:
    """The int64 position of the first (INCREASING) or last element among the lanes in ``holds``; ``where``
    (int32 lanes) is the vector each lane's element came from."""
    i32, count = ir.IntType(32), where.type.count
    position = builder.add(builder.mul(where, _splat(builder, ir.Constant(i32, count), count)),
                           ir.Constant(where.type, list(range(count))))
    none = ir.Constant(i32, 0x7FFFFFFF if increasing else -1)
    chosen = builder.select(holds, position, _splat(builder, none, count))
    return builder.sext(_reduce(builder, "smin" if increasing else "smax", chosen), ir.IntType(64))


@intrinsic
def lane_argmin(typingctx, x, xb, vectors, kind, order):  # type: ignore[no-untyped-def]
    """``(key, position)`` of the best element of ``x[xb:xb + vectors * lanes]`` (``lanes(itemsize)``
    elements a vector; at most 127 vectors). The key is raw: for float bits, flipped and shifted
    (``unflip`` makes it a key); the position is that of the first (last) smallest raw key, which for a
    zero or a NaN may not be the first (last) of its key (``argmin_keys.searched_again``)."""
    if not isinstance(x, types.Array):
        return None
    unsigned = not (is_float(kind) or is_half(kind)) and not x.dtype.signed
    increasing = isinstance(order, types.NoneType)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        bits = x.dtype.bitwidth
        count = lanes(bits // 8)
        loop = _Loop(context, builder, signature.args[0], count)
        base = loop.base(signature.args[0], args[0], args[1])
        element, i32 = ir.IntType(bits), ir.IntType(32)
        best = cgutils.alloca_once_value(builder, _lane_key(builder, loop.load(base, _i64(0), x.dtype), bits, kind))
        where = cgutils.alloca_once_value(builder, ir.Constant(ir.VectorType(element, count), [0] * count))
        with cgutils.for_range_slice(builder, _i64(1), args[2], _i64(1)) as (j, _):
            _prefetch(builder, base, builder.add(builder.mul(j, _i64(count)), _i64(PREFETCH_BYTES * 8 // bits)))
            key = _lane_key(builder, loop.load(base, builder.mul(j, _i64(count)), x.dtype), bits, kind)
            old = builder.load(best)
            op = "<" if increasing else "<="
            takes = builder.icmp_unsigned(op, key, old) if unsigned else builder.icmp_signed(op, key, old)
            builder.store(builder.select(takes, key, old), best)
            at = _splat(builder, builder.trunc(j, element) if bits < 64 else j, count)  # vectors < 128
            builder.store(builder.select(takes, at, builder.load(where)), where)
        keys = builder.load(best)
        smallest = _reduce(builder, "umin" if unsigned else "smin", keys)
        found, wide = builder.load(where), ir.VectorType(i32, count)
        if bits != 32:
            found = builder.zext(found, wide) if bits < 32 else builder.trunc(found, wide)
        holds = builder.icmp_unsigned("==", keys, _splat(builder, smallest, count))
        return context.make_tuple(builder, signature.return_type,
                                  [smallest, _chosen_position(builder, holds, found, increasing)])

    return types.Tuple((x.dtype, types.int64))(x, xb, vectors, kind, order), codegen



# FLOAT32 compared as floats where that is exact: an ordered comparison (``<``, ``<=``) is false when
# either side is NaN, so a NaN never replaces what a lane or block holds, and -0.0 equals +0.0, as SPEC 7
# and 8.5 want. A float minimum is one instruction, against four or five for an integer key, which keeps the
# reductions waiting on memory rather than on the processor when its cores are busy. Minima start at
# +inf, so a best of +inf is not certain (the minimum is +inf, or every element is NaN): such runs are
# reduced again with integer keys, and so are runs holding a NaN under PROPAGATE (``NanSeen``). Only where
# ``floats_compare_exactly()``: a library may set the x86 MXCSR bit that makes comparisons read subnormals
# as zero, and then -1e-45 < +0.0 would be false.

X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86")
FLOAT_INFINITY_BITS = np.int32(0x7F800000)  # also +inf's key


@intrinsic
def floats_compare_exactly(typingctx):  # type: ignore[no-untyped-def]
    """Whether this thread's float comparisons read subnormals as they are: on x86, the MXCSR register's
    denormals-are-zero bit is clear. Elsewhere False: only integer comparisons are used there."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        if not X86:
            return ir.Constant(ir.IntType(1), 0)
        i32, byte = ir.IntType(32), ir.IntType(8).as_pointer()
        slot = cgutils.alloca_once(builder, i32)
        read = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [byte]),
                                              "llvm.x86.sse.stmxcsr")
        builder.call(read, [builder.bitcast(slot, byte)])
        return builder.icmp_unsigned("==", builder.and_(builder.load(slot), ir.Constant(i32, 0x40)),
                                     ir.Constant(i32, 0))

    return types.boolean(), codegen


def _float_minimum(builder: ir.IRBuilder, v: ir.Value) -> ir.Value:
    """The smallest lane of a vector holding no NaN, by halving (a -0.0/+0.0 pick is harmless)."""
    i32 = ir.IntType(32)
    width = v.type.count
    while width > 1:
        width //= 2
        low = builder.shuffle_vector(v, v, ir.Constant(ir.VectorType(i32, width), list(range(width))))
        high = builder.shuffle_vector(v, v, ir.Constant(ir.VectorType(i32, width), list(range(width, 2 * width))))
        v = builder.select(builder.fcmp_ordered("<", high, low), high, low)
    return builder.extract_element(v, ir.Constant(i32, 0))


def float_order(builder: ir.IRBuilder, v: ir.Value, kind: types.Type) -> ir.Value:
    """A vector of FLOAT32 values as compared: negated for ARGMAX (its sign bit flipped, ``flip_order``)."""
    if not is_largest(kind):
        return v
    i32, count = ir.IntType(32), v.type.count
    ints = builder.bitcast(v, ir.VectorType(i32, count))
    return builder.bitcast(builder.xor(ints, _splat(builder, ir.Constant(i32, -(1 << 31)), count)), v.type)


class NanSeen:
    """Under PROPAGATE, whether a lane met a NaN (``note`` per vector, one unordered comparison and an OR):
    a float comparison never takes a NaN, so a run holding one is not certain as floats (``result``), and
    is reduced again with integer keys, which rank NaN first. Nothing is emitted under IGNORE."""

    def __init__(self, builder: ir.IRBuilder, kind: types.Type, count: int) -> None:
        self.builder, self.active = builder, propagates(kind)
        self.seen = cgutils.alloca_once_value(builder, ir.Constant(ir.VectorType(ir.IntType(1), count),
                                                                   [0] * count)) if self.active else None

    def note(self, v: ir.Value) -> None:
        if self.active:
            b = self.builder
            b.store(b.or_(b.load(self.seen), b.fcmp_unordered("uno", v, v)), self.seen)

    def result(self, bits: ir.Value) -> ir.Value:
        """``bits`` of the best value, or +inf's (not certain) where a NaN was met."""
        if not self.active:
            return bits
        b = self.builder
        return b.select(_reduce(b, "or", b.load(self.seen)), ir.Constant(bits.type, 0x7F800000), bits)


@intrinsic
def lane_argmin_float(typingctx, x, xb, vectors, kind, order):  # type: ignore[no-untyped-def]
    """``lane_argmin`` of FLOAT32 data (read as int32 bits) compared as floats: ``(bits, position)``, the
    bits of the best value as compared (ARGMAX: negated, ``float_order``)."""
    if not (isinstance(x, types.Array) and x.dtype == types.int32):
        return None
    increasing = isinstance(order, types.NoneType)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        count = lanes(4)
        loop = _Loop(context, builder, signature.args[0], count)
        base = loop.base(signature.args[0], args[0], args[1])
        f32, i32 = ir.FloatType(), ir.IntType(32)
        floats, ints = ir.VectorType(f32, count), ir.VectorType(i32, count)
        best = cgutils.alloca_once_value(builder, _splat(builder, ir.Constant(f32, float("inf")), count))
        where = cgutils.alloca_once_value(builder, ir.Constant(ints, [0] * count))
        nan = NanSeen(builder, kind, count)
        with cgutils.for_range_slice(builder, _i64(0), args[2], _i64(1)) as (j, _):
            _prefetch(builder, base, builder.add(builder.mul(j, _i64(count)), _i64(PREFETCH_BYTES // 4)))
            v = float_order(builder, builder.bitcast(loop.load(base, builder.mul(j, _i64(count)), types.int32),
                                                     floats), kind)
            nan.note(v)
            old = builder.load(best)
            takes = builder.fcmp_ordered("<" if increasing else "<=", v, old)
            builder.store(builder.select(takes, v, old), best)
            at = _splat(builder, builder.trunc(j, i32), count)
            builder.store(builder.select(takes, at, builder.load(where)), where)
        values = builder.load(best)
        smallest = _float_minimum(builder, values)
        holds = builder.fcmp_ordered("==", values, _splat(builder, smallest, count))
        return context.make_tuple(builder, signature.return_type,
                                  [nan.result(builder.bitcast(smallest, i32)),
                                   _chosen_position(builder, holds, builder.load(where), increasing)])

    return types.Tuple((types.int32, types.int64))(x, xb, vectors, kind, order), codegen


def float_lanes(x, xb, n, kind, order):  # type: ignore[no-untyped-def]
    """``(key, position, certain, done)``: ``lane_argmin_float`` over the first ``done`` elements of
    ``x[xb:xb + n]`` (whole vectors) for FLOAT32; never certain for other kinds (whose key type it keeps)."""


@overload(float_lanes, jit_options={"cache": True})
def _float_lanes(x, xb, n, kind, order):  # type: ignore[no-untyped-def]
    if is_float(kind):
        def float_best(x, xb, n, kind, order):  # type: ignore[no-untyped-def]
            per = VECTOR_BYTES // 4
            vectors = n // per
            if vectors == 0:
                return key_of(x[xb], kind), np.int64(0), False, 0
            bits, pos = lane_argmin_float(x, xb, vectors, kind, order)
            return lane_float_key(bits, kind), pos, bits != FLOAT_INFINITY_BITS, vectors * per
        return float_best
    return lambda x, xb, n, kind, order: (key_of(x[xb], kind), np.int64(0), False, 0)


@jit
def lane_float_key(bits, kind):  # type: ignore[no-untyped-def]
    """The key of a value whose bits are given as compared (``float_order``): back to the element, keyed."""
    return key_of(flip_order(bits, kind), kind)
