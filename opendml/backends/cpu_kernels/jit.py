"""Kernels compiled by Numba (the ``fast`` extra): each reads every element once.

Imported only when Numba is installed. Compiled code is cached on disk (``cache=True``) in the kernel cache
directory (``opendml.kernels.cache``), so a machine compiles each kernel once per data type, not once per
process. Arithmetic follows SPEC 8 to the bit: no fastmath anywhere, and every comparison is written so
that a NaN element behaves as the NumPy reference does. Element-wise kernels are generated from their
expressions (``codegen``); the FLOAT16 conversions, the row walk and the LLVM vector helpers they share with
the reductions live in ``halves``, ``rows`` and ``vectors`` (named here too, for the reductions).
"""

from __future__ import annotations

import platform

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from ...kernels.cache import use_for_numba
from .halves import U32, _bits_to_f32, _f32_to_bits, float_to_half, half_to_float  # noqa: F401 (shared)
from .rows import base_offset, inline, streamed  # noqa: F401 (shared)
from .vectors import VECTOR_BYTES, lanes
from .vectors import Loop as _Loop
from .vectors import i64 as _i64
from .vectors import splat as _splat

use_for_numba()  # before the decorators: Numba picks each function's cache directory then

jit = njit(nogil=True, cache=True)

HALF = np.zeros(1, np.uint16)  # passed as ``half`` to read uint16 data as FLOAT16 bits (None: as stored)


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


# ARGMIN. Elements are compared as integer keys (``key_of``): an order-preserving map that makes -0.0 and
# +0.0 equal and sends every NaN to the largest key, which no number reaches, so comparisons need no NaN
# rule and vectorise as integer min/compare instructions. A task reduces part of the input into per-slot
# state (key, index, found); slots are the output elements in row-major order. Within a task each slot sees
# its elements in increasing index order, so a strict ``<`` (INCREASING) or ``<=`` (DECREASING) keeps the
# right one of equal keys; ``merge`` compares indices explicitly, so tasks may cover any parts in any order.

FLOAT = np.zeros(1, np.float32)  # passed as ``kind`` for FLOAT32 data read as int32 bits (HALF: FLOAT16 bits)
DECREASING = np.zeros(1, np.uint8)  # passed as ``order`` for AxisDirection DECREASING (None: INCREASING)
FLOAT_NAN_KEY = np.int32(0x7FFFFFFF)
HALF_NAN_KEY = np.int16(0x7FFF)


def key_of(v, kind):  # type: ignore[no-untyped-def]
    """An element's comparison key: integers as they are; float bits as sign-and-magnitude, NaN largest."""


@overload(key_of, jit_options={"cache": True})
def _key_of(v, kind):  # type: ignore[no-untyped-def]
    if isinstance(kind, types.NoneType):
        return lambda v, kind: v
    if kind.dtype == types.float32:
        def float_key(v, kind):  # type: ignore[no-untyped-def]
            magnitude = np.int32(v & np.int32(0x7FFFFFFF))
            key = np.int32(-magnitude) if v < 0 else magnitude
            return FLOAT_NAN_KEY if magnitude > np.int32(0x7F800000) else key
        return float_key

    def half_key(v, kind):  # type: ignore[no-untyped-def]
        magnitude = np.int16(v & np.uint16(0x7FFF))
        key = np.int16(-magnitude) if v & np.uint16(0x8000) else magnitude
        return HALF_NAN_KEY if magnitude > np.int16(0x7C00) else key
    return half_key


def found_key(key, kind):  # type: ignore[no-untyped-def]
    """Whether a reduction's best key is an element's (False: every element was NaN)."""


@overload(found_key, jit_options={"cache": True})
def _found_key(key, kind):  # type: ignore[no-untyped-def]
    if isinstance(kind, types.NoneType):
        return lambda key, kind: True
    if kind.dtype == types.float32:
        return lambda key, kind: key != FLOAT_NAN_KEY
    return lambda key, kind: key != HALF_NAN_KEY


def takes(v, best, order):  # type: ignore[no-untyped-def]
    """Whether key ``v``, met after ``best``, replaces it: strictly smaller (INCREASING) or not larger."""


@overload(takes, jit_options={"cache": True})
def _takes(v, best, order):  # type: ignore[no-untyped-def]
    if isinstance(order, types.NoneType):
        return lambda v, best, order: v < best
    return lambda v, best, order: v <= best


@jit
def replaces(key, index, best, best_index, order):  # type: ignore[no-untyped-def]
    """Whether a found (key, index) replaces a slot's (best, best_index): a smaller key, or an equal key
    at the index the direction prefers (SPEC 7).

    Scalars only: the callers store into the state arrays themselves, because a call taking arrays costs
    reference counting that LLVM does not remove, as much as reducing a short row.
    """
    return key < best or (key == best and ((index < best_index) if order is None else (index > best_index)))


@jit
def merge_states(cur, idx, cur2, idx2, order):  # type: ignore[no-untyped-def]
    for s in range(cur.size):
        if idx2[s] >= 0 and (idx[s] < 0 or replaces(cur2[s], idx2[s], cur[s], idx[s], order)):
            cur[s], idx[s] = cur2[s], idx2[s]


@jit
def fill_missing(idx, default):  # type: ignore[no-untyped-def]
    """Slots that found nothing (every element NaN) take the default index (SPEC 8.5)."""
    for s in range(idx.size):
        if idx[s] < 0:
            idx[s] = default


@jit
def scan(x, xb, n, sx, kind, order):  # type: ignore[no-untyped-def]
    """The best (key, position) of a run of ``n`` elements ``sx`` apart."""
    best = key_of(x[xb], kind)
    pos = 0
    for k in range(1, n):
        v = key_of(x[xb + k * sx], kind)
        if takes(v, best, order):
            best = v
            pos = k
    return best, pos


ROW_BLOCK = 256  # elements of a contiguous run reduced at once: the block is searched again from L1


@jit
def keyed_min(xs, kind):  # type: ignore[no-untyped-def]
    """The smallest key of a block: an integer min reduction, which vectorises."""
    m = key_of(xs[0], kind)
    for k in range(xs.size):  # from 0, not 1: whole vectors, no remainder loop on power-of-two blocks
        m = min(m, key_of(xs[k], kind))
    return m


# FLOAT32 (FLOAT16) bits as integers that order as the floats, in three instructions an element: a
# negative's magnitude bits are flipped (its key minus one, so -0.0 lands just under +0.0; a positive's bits
# are its key), then the flipped bits of -inf plus the sign bit are subtracted, so that -inf becomes the
# least signed integer and every NaN, of either sign, lands above +inf (the processor has no unsigned
# vector comparison). ``unflip`` turns the smallest back into a key. The block minimum (``flipped_min``)
# needs only that key; a row reduced in one pass (``lane_argmin``: each vector lane keeps its own smallest
# and the vector where it was found, strictly smaller for INCREASING, not larger for DECREASING, then the
# lanes are reduced to the smallest and, among lanes holding it, the first or last element) has its zeros
# searched again as equals when its minimum is a zero.

FLIP_SHIFT = 0x007FFFFF  # FLOAT32: -inf's flipped bits, 0x807FFFFF, plus the sign bit
FLIP = {32: (0x7FFFFFFF, FLIP_SHIFT), 16: (0x7FFF, 0x03FF)}  # magnitude mask, shift


@jit
def flipped_min(xs):  # type: ignore[no-untyped-def]
    """``keyed_min`` of FLOAT32 bits, flipped and shifted (five instructions an element instead of seven)."""
    v = xs[0]
    m = np.int32((v ^ ((v >> 31) & 0x7FFFFFFF)) - FLIP_SHIFT)
    for k in range(xs.size):
        v = xs[k]
        m = min(m, np.int32((v ^ ((v >> 31) & 0x7FFFFFFF)) - FLIP_SHIFT))
    return unflip(m, FLOAT)


def _lane_key(builder: ir.IRBuilder, v: ir.Value, bits: int, flipped: bool) -> ir.Value:
    if not flipped:
        return v
    mask, bias = (_splat(builder, ir.Constant(ir.IntType(bits), c), v.type.count) for c in FLIP[bits])
    sign = builder.ashr(v, _splat(builder, ir.Constant(ir.IntType(bits), bits - 1), v.type.count))
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
    (``unflip`` makes it a key)."""
    if not isinstance(x, types.Array):
        return None
    flipped = not isinstance(kind, types.NoneType)
    unsigned = not flipped and not x.dtype.signed
    increasing = isinstance(order, types.NoneType)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        bits = x.dtype.bitwidth
        count = lanes(bits // 8)
        loop = _Loop(context, builder, signature.args[0], count)
        base = loop.base(signature.args[0], args[0], args[1])
        element, i32 = ir.IntType(bits), ir.IntType(32)
        best = cgutils.alloca_once_value(builder, _lane_key(builder, loop.load(base, _i64(0), x.dtype), bits, flipped))
        where = cgutils.alloca_once_value(builder, ir.Constant(ir.VectorType(element, count), [0] * count))
        with cgutils.for_range_slice(builder, _i64(1), args[2], _i64(1)) as (j, _):
            _prefetch(builder, base, builder.add(builder.mul(j, _i64(count)), _i64(PREFETCH_BYTES * 8 // bits)))
            key = _lane_key(builder, loop.load(base, builder.mul(j, _i64(count)), x.dtype), bits, flipped)
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
# reduced again with integer keys. Only where ``floats_compare_exactly()``: a library may set the x86
# MXCSR bit that makes comparisons read subnormals as zero, and then -1e-45 < +0.0 would be false.

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


@intrinsic
def lane_argmin_float(typingctx, x, xb, vectors, order):  # type: ignore[no-untyped-def]
    """``lane_argmin`` of FLOAT32 data (read as int32 bits) compared as floats: ``(bits, position)``."""
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
        with cgutils.for_range_slice(builder, _i64(0), args[2], _i64(1)) as (j, _):
            _prefetch(builder, base, builder.add(builder.mul(j, _i64(count)), _i64(PREFETCH_BYTES // 4)))
            v = builder.bitcast(loop.load(base, builder.mul(j, _i64(count)), types.int32), floats)
            old = builder.load(best)
            takes = builder.fcmp_ordered("<" if increasing else "<=", v, old)
            builder.store(builder.select(takes, v, old), best)
            at = _splat(builder, builder.trunc(j, i32), count)
            builder.store(builder.select(takes, at, builder.load(where)), where)
        values = builder.load(best)
        smallest = _float_minimum(builder, values)
        holds = builder.fcmp_ordered("==", values, _splat(builder, smallest, count))
        return context.make_tuple(builder, signature.return_type,
                                  [builder.bitcast(smallest, i32), _chosen_position(builder, holds,
                                                                                    builder.load(where), increasing)])

    return types.Tuple((types.int32, types.int64))(x, xb, vectors, order), codegen


def float_lanes(x, xb, n, kind, order):  # type: ignore[no-untyped-def]
    """``(key, position, certain, done)``: ``lane_argmin_float`` over the first ``done`` elements of
    ``x[xb:xb + n]`` (whole vectors) for FLOAT32; never certain for other kinds (whose key type it keeps)."""


@overload(float_lanes, jit_options={"cache": True})
def _float_lanes(x, xb, n, kind, order):  # type: ignore[no-untyped-def]
    if not isinstance(kind, types.NoneType) and kind.dtype == types.float32:
        def float_best(x, xb, n, kind, order):  # type: ignore[no-untyped-def]
            per = VECTOR_BYTES // 4
            vectors = n // per
            if vectors == 0:
                return key_of(x[xb], kind), np.int64(0), False, 0
            bits, pos = lane_argmin_float(x, xb, vectors, order)
            return key_of(bits, kind), pos, bits != FLOAT_INFINITY_BITS, vectors * per
        return float_best
    return lambda x, xb, n, kind, order: (key_of(x[xb], kind), np.int64(0), False, 0)


def unflip(raw, kind):  # type: ignore[no-untyped-def]
    """A key from ``lane_argmin``'s raw key."""


@overload(unflip, jit_options={"cache": True})
def _unflip(raw, kind):  # type: ignore[no-untyped-def]
    if isinstance(kind, types.NoneType):
        return lambda raw, kind: raw
    if kind.dtype == types.float32:
        def float_key(raw, kind):  # type: ignore[no-untyped-def]
            if raw > np.int32(0x7F000001):  # above +inf: NaN
                return FLOAT_NAN_KEY
            f = np.int32(raw + np.int32(FLIP_SHIFT))
            return np.int32(f + 1) if f < 0 else f
        return float_key

    def half_key(raw, kind):  # type: ignore[no-untyped-def]
        r = np.int16(raw)  # FLOAT16 bits are read as uint16
        if r > np.int16(0x7801):
            return HALF_NAN_KEY
        f = np.int16(r + np.int16(0x03FF))
        return np.int16(f + 1) if f < 0 else f
    return half_key


def block_min(xs, kind):  # type: ignore[no-untyped-def]
    """The smallest key of a block."""


@overload(block_min, jit_options={"cache": True})
def _block_min(xs, kind):  # type: ignore[no-untyped-def]
    if not isinstance(kind, types.NoneType) and kind.dtype == types.float32:
        return lambda xs, kind: flipped_min(xs)
    return lambda xs, kind: keyed_min(xs, kind)


def key_bits(key, kind):  # type: ignore[no-untyped-def]
    """``(mask, bits)``: the elements whose key is ``key`` are those with ``element & mask == bits``."""


@overload(key_bits, jit_options={"cache": True})
def _key_bits(key, kind):  # type: ignore[no-untyped-def]
    if isinstance(kind, types.NoneType):
        return lambda key, kind: (~type(key)(0), key)
    if kind.dtype == types.float32:
        def float_bits(key, kind):  # type: ignore[no-untyped-def]
            if key == 0:  # -0.0 and +0.0
                return np.int32(0x7FFFFFFF), np.int32(0)
            return np.int32(-1), np.int32(key if key > 0 else np.int32(-key) | np.int32(-0x80000000))
        return float_bits

    def half_bits(key, kind):  # type: ignore[no-untyped-def]
        if key == 0:
            return np.uint16(0x7FFF), np.uint16(0)
        return np.uint16(0xFFFF), np.uint16(key) if key > 0 else np.uint16(np.uint16(-key) | np.uint16(0x8000))
    return half_bits


@jit
def block_find(xs, key, kind, order):  # type: ignore[no-untyped-def]
    """The first (INCREASING) or last position of ``key`` in a block (at most ROW_BLOCK elements), as a
    branch-free int32 min or max reduction so that it vectorises at the elements' width."""
    mask, bits = key_bits(key, kind)
    n = np.int32(xs.size)
    if order is None:
        pos = n
        for k in range(n):
            pos = min(pos, np.int32(k) if xs[k] & mask == bits else n)
        return pos
    pos = np.int32(-1)
    for k in range(n):
        pos = max(pos, np.int32(k) if xs[k] & mask == bits else np.int32(-1))
    return pos


@jit
def best_block(x, xb, n, kind, order):  # type: ignore[no-untyped-def]
    """The smallest block key of a contiguous run and where its block starts."""
    best = block_min(x[xb:xb + min(n, ROW_BLOCK)], kind)
    where = 0
    for b in range(ROW_BLOCK, n, ROW_BLOCK):
        m = block_min(x[xb + b:xb + min(n, b + ROW_BLOCK)], kind)
        if takes(m, best, order):
            best = m
            where = b
    return best, where


@inline
def rest_best(x, xb, done, n, key, pos, kind, order):  # type: ignore[no-untyped-def]
    """The best ``(key, position)`` after the elements ``done..n`` of a run (the few after its whole
    vectors) are compared one by one with the best of the first ``done``."""
    for k in range(done, n):
        v = key_of(x[xb + k], kind)
        if takes(v, key, order):
            key, pos = v, k
    return key, pos


@jit
def run_best(x, xb, n, kind, order, floats):  # type: ignore[no-untyped-def]
    """``scan`` of a contiguous run. Where ``floats``, FLOAT32 in one pass compared as floats (a minimum and
    position per vector lane, as short rows: in cache 23 against 40 ns per 256 elements for the blocks);
    otherwise, or if its best is +inf (not certain then), the smallest key of each block, then one search
    of the block holding it, with integer keys."""
    if floats:
        key, pos, certain, done = float_lanes(x, xb, n, kind, order)
        if certain:
            return rest_best(x, xb, done, n, key, pos, kind, order)
    best, where = best_block(x, xb, n, kind, order)
    pos = where + block_find(x[xb + where:xb + min(n, where + ROW_BLOCK)], best, kind, order)
    return best, pos


@jit
def row_start(row, sizes, xs, red, w, where, digits):  # type: ignore[no-untyped-def]
    """Set ``where`` (element offset, slot, index; from the task's origin) and ``digits`` to row ``row``."""
    for d in range(sizes.size - 2, -1, -1):
        i = row % sizes[d]
        row //= sizes[d]
        digits[d] = i
        where[0] += i * xs[d]
        where[2 if red[d] else 1] += i * w[d]


@jit
def next_rows(sizes, xs, red, w, where, digits, count, offsets, slots, indices):  # type: ignore[no-untyped-def]
    """The offset, slot and index of ``count`` rows from ``where``, stepping ``where`` and ``digits`` past
    them as an odometer (no division per row); one dimension before the run steps without one."""
    nd = sizes.size
    if nd <= 2:
        step_x = xs[0] if nd == 2 else 0
        step_slot = w[0] if nd == 2 and not red[0] else 0
        step_index = w[0] if nd == 2 and red[0] else 0
        offset, slot, index = where[0], where[1], where[2]
        for j in range(count):
            offsets[j], slots[j], indices[j] = offset, slot, index
            offset += step_x
            slot += step_slot
            index += step_index
        where[0], where[1], where[2] = offset, slot, index
        return
    for j in range(count):
        offsets[j], slots[j], indices[j] = where[0], where[1], where[2]
        for d in range(nd - 2, -1, -1):
            field = 2 if red[d] else 1
            if digits[d] + 1 < sizes[d]:
                digits[d] += 1
                where[0] += xs[d]
                where[field] += w[d]
                break
            where[0] -= xs[d] * (sizes[d] - 1)
            where[field] -= w[d] * (sizes[d] - 1)
            digits[d] = 0


@inline
def short_best(x, xb, n, kind, order, floats):  # type: ignore[no-untyped-def]
    """``scan`` of a contiguous run of at most ROW_BLOCK elements: its whole vectors in one pass (as
    floats where ``floats`` and certain, else with integer keys), then the few elements after them."""
    per = VECTOR_BYTES // x.itemsize
    vectors = n // per
    if vectors == 0:
        return scan(x, xb, n, 1, kind, order)
    certain, done = False, 0
    if floats:
        key, pos, certain, done = float_lanes(x, xb, n, kind, order)
    if not certain:
        done = vectors * per
        raw, pos = lane_argmin(x, xb, vectors, kind, order)
        key = unflip(raw, kind)
        if kind is not None and key == 0:  # -0.0 flipped is just under +0.0: find the zeros as equals
            pos = block_find(x[xb:xb + done], key, kind, order)
    return rest_best(x, xb, done, n, key, pos, kind, order)


ROW_BATCH = 16  # rows whose offsets, slots and indices are found at once


@jit
def argmin_rows(x, x0, sizes, xs, red, w, slot0, index0, start, stop, cur, idx, kind, order, floats):  # type: ignore
    """The last dimension is reduced: reduce each run of it (rows ``start``..``stop`` of the others).
    FLOAT32 is compared as floats where ``floats`` and this thread's comparisons are exact.

    Rows are handed to the reductions as ``x`` and an offset, never as slices: a call that takes a slice
    costs reference counting that LLVM does not remove, as much as a fifth of reducing a short row (the
    batches of 16 once did that).
    """
    n, sx, wn = sizes[-1], xs[-1], w[-1]
    short = sx == 1 and n <= ROW_BLOCK
    floats = floats and floats_compare_exactly()
    if short and sizes.size == 2:  # the usual layout after merging: rows one stride apart, no odometer
        step_slot, step_index = (0, w[0]) if red[0] else (w[0], 0)
        for r in range(start, stop):
            key, pos = short_best(x, x0 + r * xs[0], n, kind, order, floats)
            slot, index = slot0 + r * step_slot, index0 + r * step_index + pos * wn
            if found_key(key, kind) and (idx[slot] < 0 or replaces(key, index, cur[slot], idx[slot], order)):
                cur[slot], idx[slot] = key, index
        return
    where = np.array([x0, slot0, index0], np.int64)
    digits = np.zeros(max(sizes.size - 1, 1), np.int64)
    row_start(start, sizes, xs, red, w, where, digits)
    offsets = np.empty(ROW_BATCH, np.int64)
    slots = np.empty(ROW_BATCH, np.int64)
    indices = np.empty(ROW_BATCH, np.int64)
    for first in range(start, stop, ROW_BATCH):
        count = min(ROW_BATCH, stop - first)
        next_rows(sizes, xs, red, w, where, digits, count, offsets, slots, indices)
        for j in range(count):
            xb = offsets[j]
            if short:
                key, pos = short_best(x, xb, n, kind, order, floats)
            elif sx == 1:
                key, pos = run_best(x, xb, n, kind, order, floats)
            else:
                key, pos = scan(x, xb, n, sx, kind, order)
            slot, index = slots[j], indices[j] + pos * wn
            if found_key(key, kind) and (idx[slot] < 0 or replaces(key, index, cur[slot], idx[slot], order)):
                cur[slot], idx[slot] = key, index


COLUMN_TILE = 8192  # columns whose running state (key and row, 16 bytes each) stays in the L2 cache
ROW_GROUP = 8  # rows folded into the state per pass over a tile: 8 reads of input per state load and store


@jit
def fold(v, m, p, row, order):  # type: ignore[no-untyped-def]
    """One element (key ``v`` of row ``row``) folded into a column's (key ``m``, row ``p``)."""
    return (v, row) if takes(v, m, order) else (m, p)


@jit
def fold_row(best, pos, xr, row, kind, order):  # type: ignore[no-untyped-def]
    for c in range(best.size):
        best[c], pos[c] = fold(key_of(xr[c], kind), best[c], pos[c], row, order)


@jit
def fold_rows(best, pos, x, rb, sr, row, kind, order):  # type: ignore[no-untyped-def]
    """Rows ``row``..``row + 7`` of a contiguous tile (``sr`` apart), in order, folded into the state at once:
    the state is loaded and stored once per eight input rows."""
    w = best.size
    x0, x1 = x[rb:rb + w], x[rb + sr:rb + sr + w]
    x2, x3 = x[rb + 2 * sr:rb + 2 * sr + w], x[rb + 3 * sr:rb + 3 * sr + w]
    x4, x5 = x[rb + 4 * sr:rb + 4 * sr + w], x[rb + 5 * sr:rb + 5 * sr + w]
    x6, x7 = x[rb + 6 * sr:rb + 6 * sr + w], x[rb + 7 * sr:rb + 7 * sr + w]
    r0, r1, r2, r3 = row, np.int32(row + 1), np.int32(row + 2), np.int32(row + 3)
    r4, r5, r6, r7 = np.int32(row + 4), np.int32(row + 5), np.int32(row + 6), np.int32(row + 7)
    for c in range(w):
        m, p = fold(key_of(x0[c], kind), best[c], pos[c], r0, order)
        m, p = fold(key_of(x1[c], kind), m, p, r1, order)
        m, p = fold(key_of(x2[c], kind), m, p, r2, order)
        m, p = fold(key_of(x3[c], kind), m, p, r3, order)
        m, p = fold(key_of(x4[c], kind), m, p, r4, order)
        m, p = fold(key_of(x5[c], kind), m, p, r5, order)
        m, p = fold(key_of(x6[c], kind), m, p, r6, order)
        m, p = fold(key_of(x7[c], kind), m, p, r7, order)
        best[c], pos[c] = m, p


ROW_CHUNK = 1 << 20  # rows reduced into one tile state before it is merged: row numbers stay int32, as wide as the keys


@jit
def argmin_columns(x, x0, sizes, xs, red, w, slot0, index0, start, stop, cur, idx, kind, order, floats):  # type: ignore
    """The last dimension is kept: a running minimum key and row per column, updated row after row.

    The reduced dimension just before the last one gives the rows (one row when there is none); every
    dimension before those walks outer positions ``start``..``stop``. Columns go in tiles whose running
    state stays in cache; contiguous tiles fold eight rows per pass, branch-free, so that it vectorises.
    ``floats`` is unused: the branch-free column update compares integer keys.
    """
    nd = sizes.size
    ncols, sc, wc = sizes[-1], xs[-1], w[-1]
    has_rows = nd >= 2 and red[nd - 2] == 1
    nrows = sizes[nd - 2] if has_rows else 1
    sr = xs[nd - 2] if has_rows else 0
    wr = w[nd - 2] if has_rows else 0
    outer_dims = nd - 2 if has_rows else nd - 1
    tile = min(ncols, COLUMN_TILE)
    best = np.empty(tile, dtype=cur.dtype)
    pos = np.empty(tile, dtype=np.int32)
    for outer in range(start, stop):
        xb, slot_base, index = x0, slot0, index0
        r = outer
        for d in range(outer_dims - 1, -1, -1):
            i = r % sizes[d]
            r //= sizes[d]
            xb += i * xs[d]
            if red[d]:
                index += i * w[d]
            else:
                slot_base += i * w[d]
        for c0 in range(0, ncols, tile):
            width = min(tile, ncols - c0)
            tb, tp = best[:width], pos[:width]
            for r0 in range(0, nrows, ROW_CHUNK):
                rows = min(nrows - r0, ROW_CHUNK)
                cb = xb + c0 * sc + r0 * sr
                for c in range(width):
                    tb[c] = key_of(x[cb + c * sc], kind)
                    tp[c] = 0
                row = 1
                if sc == 1:
                    while row + ROW_GROUP <= rows:
                        fold_rows(tb, tp, x, cb + row * sr, sr, np.int32(row), kind, order)
                        row += ROW_GROUP
                    while row < rows:
                        fold_row(tb, tp, x[cb + row * sr:cb + row * sr + width], np.int32(row), kind, order)
                        row += 1
                else:
                    for row in range(1, rows):
                        rb = cb + row * sr
                        for c in range(width):
                            tb[c], tp[c] = fold(key_of(x[rb + c * sc], kind), tb[c], tp[c], np.int32(row), order)
                for c in range(width):
                    m = tb[c]
                    slot, at = slot_base + (c0 + c) * wc, index + (r0 + tp[c]) * wr
                    if found_key(m, kind) and (idx[slot] < 0 or replaces(m, at, cur[slot], idx[slot], order)):
                        cur[slot], idx[slot] = m, at  # (a column of NaN found nothing)
