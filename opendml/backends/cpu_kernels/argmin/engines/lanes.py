"""ARGMIN's (and ARGMAX's) LLVM vector code: a run reduced in one pass, each vector lane keeping its own best.

Numba's loop vectoriser does not keep a position per lane, so these reductions are written as LLVM vector
code (llvmlite intrinsics): ``lane_argmin`` on integer keys (FLOAT32/FLOAT16 bits flipped to signed order,
``keys``), ``lane_argmin_float`` on FLOAT32 compared as floats where that is exact. Both ask for the
memory ahead of what they read (``_prefetch``), and both take ARGMAX at ARGMIN's cost: float raw keys
are a constant less the flipped bits instead of the flipped bits less one, and integers and floats
compared as floats keep maxima, their comparisons turned round.
"""

from __future__ import annotations

import platform

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from ...jit import jit  # noqa: F401 (imported first: it puts Numba's cache of these kernels in the kernel cache)
from ...vectors import VECTOR_BYTES, lanes
from ...vectors import Loop as _Loop
from ...vectors import i64 as _i64
from ...vectors import splat as _splat
from ..keys import FLIP, flip_bias, is_float, is_half, is_largest, key_of, propagates, raw_constant

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
    """A vector of elements as raw keys (``keys``): float bits flipped to signed order less the
    bias, or for ARGMAX a constant less them (``raw_constant``); integers as they are (ARGMAX compares them
    the other way round, ``lane_argmin``)."""
    if not (is_float(kind) or is_half(kind)):
        return v
    count, element = v.type.count, ir.IntType(bits)
    mask = _splat(builder, ir.Constant(element, FLIP[bits][0]), count)
    sign = builder.ashr(v, _splat(builder, ir.Constant(element, bits - 1), count))
    flipped = builder.xor(v, builder.and_(sign, mask))
    if is_largest(kind):
        return builder.sub(_splat(builder, ir.Constant(element, raw_constant(bits, kind)), count), flipped)
    return builder.sub(flipped, _splat(builder, ir.Constant(element, flip_bias(bits, propagates(kind))), count))


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
    elements a vector; at most 127 vectors). The key is raw (``unflip`` makes it a key): for float bits,
    flipped and shifted; for integers the element itself, the largest for ARGMAX (its comparisons and
    reduction turned round, at no cost, rather than each element complemented). The position is that of
    the first (last) best raw key, which for a zero or a NaN may not be the first (last) of its key
    (``keys.searched_again``)."""
    if not isinstance(x, types.Array):
        return None
    integers = not (is_float(kind) or is_half(kind))
    unsigned = integers and not x.dtype.signed
    largest = integers and is_largest(kind)  # integer ARGMAX: the largest element kept, compared as it is
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
            op = ("<" if increasing else "<=") if not largest else (">" if increasing else ">=")
            takes = builder.icmp_unsigned(op, key, old) if unsigned else builder.icmp_signed(op, key, old)
            builder.store(builder.select(takes, key, old), best)
            at = _splat(builder, builder.trunc(j, element) if bits < 64 else j, count)  # vectors < 128
            builder.store(builder.select(takes, at, builder.load(where)), where)
        keys = builder.load(best)
        smallest = _reduce(builder, ("u" if unsigned else "s") + ("max" if largest else "min"), keys)
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
# reduced again with integer keys, and so are runs holding a NaN under PROPAGATE (``FloatBest``); ARGMAX
# keeps maxima from -inf, alike. Only where
# ``floats_compare_exactly()``: a library may set the x86 MXCSR bit that makes comparisons read subnormals
# as zero, and then -1e-45 < +0.0 would be false.

X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86")


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


def _float_best(builder: ir.IRBuilder, v: ir.Value, largest: bool) -> ir.Value:
    """The smallest (largest) lane of a vector holding no NaN, by halving (a -0.0/+0.0 pick is harmless)."""
    i32 = ir.IntType(32)
    width = v.type.count
    while width > 1:
        width //= 2
        low = builder.shuffle_vector(v, v, ir.Constant(ir.VectorType(i32, width), list(range(width))))
        high = builder.shuffle_vector(v, v, ir.Constant(ir.VectorType(i32, width), list(range(width, 2 * width))))
        v = builder.select(builder.fcmp_ordered(">" if largest else "<", high, low), high, low)
    return builder.extract_element(v, ir.Constant(i32, 0))


# The bits a float pass returns when it is not certain: those its lanes start from, +inf (ARGMAX: -inf).
START_BITS = {False: 0x7F800000, True: -0x800000}


class FloatBest:
    """Each lane's best FLOAT32 value and the vector it came from, compared as floats (ARGMAX: the largest,
    its comparisons turned round, at no cost). Under PROPAGATE a lane also notes whether it met a NaN (one
    unordered comparison and an OR a vector): a float comparison never takes a NaN, so a run holding one
    is not certain as floats, and is reduced again with integer keys, which rank NaN first."""

    def __init__(self, builder: ir.IRBuilder, kind: types.Type, order: types.Type, count: int) -> None:
        self.builder, self.largest = builder, is_largest(kind)
        self.increasing, self.propagates = isinstance(order, types.NoneType), propagates(kind)
        f32, i32 = ir.FloatType(), ir.IntType(32)
        start = ir.Constant(f32, float("-inf") if self.largest else float("inf"))
        self.best = cgutils.alloca_once_value(builder, _splat(builder, start, count))
        self.where = cgutils.alloca_once_value(builder, ir.Constant(ir.VectorType(i32, count), [0] * count))
        self.seen = cgutils.alloca_once_value(builder, ir.Constant(ir.VectorType(ir.IntType(1), count),
                                                                   [0] * count)) if self.propagates else None

    def fold(self, v: ir.Value, j: ir.Value) -> None:
        """Vector ``v`` (number ``j``, int64) folded in: a lane takes it where strictly better (INCREASING)
        or not worse."""
        b = self.builder
        if self.seen is not None:
            b.store(b.or_(b.load(self.seen), b.fcmp_unordered("uno", v, v)), self.seen)
        old = b.load(self.best)
        op = ("<" if self.increasing else "<=") if not self.largest else (">" if self.increasing else ">=")
        takes = b.fcmp_ordered(op, v, old)
        b.store(b.select(takes, v, old), self.best)
        b.store(b.select(takes, _splat(b, b.trunc(j, ir.IntType(32)), v.type.count), b.load(self.where)), self.where)

    def result(self) -> list[ir.Value]:
        """``[bits, position]``: the best value's bits (START_BITS where not certain: a NaN met) and the
        int64 position of its first (INCREASING) or last occurrence."""
        b = self.builder
        values = b.load(self.best)
        best = _float_best(b, values, self.largest)
        holds = b.fcmp_ordered("==", values, _splat(b, best, values.type.count))
        position = _chosen_position(b, holds, b.load(self.where), self.increasing)
        bits = b.bitcast(best, ir.IntType(32))
        if self.seen is not None:
            bits = b.select(_reduce(b, "or", b.load(self.seen)), ir.Constant(bits.type, START_BITS[self.largest]),
                            bits)
        return [bits, position]


@intrinsic
def lane_argmin_float(typingctx, x, xb, vectors, kind, order):  # type: ignore[no-untyped-def]
    """``lane_argmin`` of FLOAT32 data (read as int32 bits) compared as floats: ``(bits, position)``
    (``FloatBest``; ``lane_float_key`` makes the bits a key)."""
    if not (isinstance(x, types.Array) and x.dtype == types.int32):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        count = lanes(4)
        loop = _Loop(context, builder, signature.args[0], count)
        base = loop.base(signature.args[0], args[0], args[1])
        floats = ir.VectorType(ir.FloatType(), count)
        best = FloatBest(builder, kind, order, count)
        with cgutils.for_range_slice(builder, _i64(0), args[2], _i64(1)) as (j, _):
            _prefetch(builder, base, builder.add(builder.mul(j, _i64(count)), _i64(PREFETCH_BYTES // 4)))
            best.fold(builder.bitcast(loop.load(base, builder.mul(j, _i64(count)), types.int32), floats), j)
        return context.make_tuple(builder, signature.return_type, best.result())

    return types.Tuple((types.int32, types.int64))(x, xb, vectors, kind, order), codegen


def lane_float_key(bits, kind):  # type: ignore[no-untyped-def]
    """``(key, certain)`` of a float pass's best bits (``FloatBest.result``): not certain where they are
    those its lanes start from."""


@overload(lane_float_key, jit_options={"cache": True})
def _lane_float_key(bits, kind):  # type: ignore[no-untyped-def]
    start = np.int32(START_BITS[is_largest(kind)])
    return lambda bits, kind: (key_of(bits, kind), bits != start)


def float_lanes(x, xb, n, kind, order):  # type: ignore[no-untyped-def]
    """``(key, position, certain, done)``: ``lane_argmin_float`` over the first ``done`` elements of
    ``x[xb:xb + n]`` (whole vectors) for FLOAT32; never certain for other kinds (whose key type it keeps)."""


# Inlined where called (as ``rows.inline``): left to LLVM, it was a call per short row for some kinds
# (ARGMIN under PROPAGATE: 15% slower on rows of 256 FLOAT32).
@overload(float_lanes, jit_options={"cache": True}, inline="always")
def _float_lanes(x, xb, n, kind, order):  # type: ignore[no-untyped-def]
    if is_float(kind):
        def float_best(x, xb, n, kind, order):  # type: ignore[no-untyped-def]
            per = VECTOR_BYTES // 4
            vectors = n // per
            if vectors == 0:
                return key_of(x[xb], kind), np.int64(0), False, 0
            bits, pos = lane_argmin_float(x, xb, vectors, kind, order)
            key, certain = lane_float_key(bits, kind)
            return key, pos, certain, vectors * per
        return float_best
    return lambda x, xb, n, kind, order: (key_of(x[xb], kind), np.int64(0), False, 0)
