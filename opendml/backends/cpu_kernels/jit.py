"""Kernels compiled by Numba (the ``fast`` extra): each reads and writes every element once.

Imported only when Numba is installed. Compiled code is cached on disk (``cache=True``), so a machine
compiles each kernel once per data type, not once per process. Arithmetic follows SPEC 8 to the bit:
no fastmath anywhere (so no fused multiply-add and no reassociation), FLOAT16 is converted to float32
exactly and rounded back once to nearest even by integer code (Numba has no float16 arithmetic), and
every comparison is written so that a NaN element or bound behaves as the NumPy reference does.

Kernels walk a layout given as ``sizes`` and per-operand ``strides`` (elements, as int64 arrays) over flat
1-D arrays, from linear element ``start`` to ``stop`` in row-major order, so one compiled kernel serves
every layout and a range is one thread's share.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

jit = njit(nogil=True, cache=True)
# Inlined where called, before Numba counts references: a call that takes arrays costs reference counting
# that LLVM cannot remove, which matters in helpers called once per short row.
inline = njit(nogil=True, cache=True, inline="always")

HALF = np.zeros(1, np.uint16)  # passed as ``half`` to read uint16 data as FLOAT16 bits (None: as stored)


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


def difference(x, z):  # type: ignore[no-untyped-def]
    """``x - z`` exactly, in int32 for 8- and 16-bit integers (as wide as float32, so 16 lanes a vector) and
    int64 for 32-bit ones (SPEC 8.6)."""


@overload(difference, jit_options={"cache": True})
def _difference(x, z):  # type: ignore[no-untyped-def]
    if x.bitwidth <= 16 and z.bitwidth <= 16:
        return lambda x, z: np.int32(np.int32(x) - np.int32(z))  # Numba would widen int32 - int32 to int64
    return lambda x, z: np.int64(x) - np.int64(z)


def wide(v):  # type: ignore[no-untyped-def]
    """An integer as the type ``difference`` would compute in."""


@overload(wide, jit_options={"cache": True})
def _wide(v):  # type: ignore[no-untyped-def]
    if v.bitwidth <= 16:
        return lambda v: np.int32(v)
    return lambda v: np.int64(v)


def as_float(v):  # type: ignore[no-untyped-def]
    """A FLOAT32 element, or FLOAT16 bits (uint16), as float32."""


@overload(as_float, jit_options={"cache": True})
def _as_float(v):  # type: ignore[no-untyped-def]
    if v == types.uint16:
        return lambda v: half_to_float(v)
    return lambda v: v


def to_output(v, like):  # type: ignore[no-untyped-def]
    """A float32 result stored as ``like``'s element type: float32 as is, FLOAT16 bits rounded once."""


@overload(to_output, jit_options={"cache": True})
def _to_output(v, like):  # type: ignore[no-untyped-def]
    if like.dtype == types.uint16:
        return lambda v, like: float_to_half(v)
    return lambda v, like: v


# Streaming stores: the bulk of a large contiguous output written with non-temporal vector stores.
#
# An ordinary store first reads the cache line it writes (to own it) and leaves it in the caches, so an
# element-wise operator on a tensor larger than the caches moves its output's bytes over the memory bus
# twice and evicts everything else. A non-temporal store writes whole lines straight to memory. LLVM's loop
# vectoriser will not emit one unless the scalar store is aligned to the whole vector, which it cannot
# know, so these kernels are written as LLVM vector code directly: each call runs ``count`` elements (a
# multiple of VECTOR_BYTES / itemsize) from ``o[os]``, which the caller has aligned to VECTOR_BYTES
# (``streamed``), loading the inputs unaligned. The arithmetic is the scalar kernels', instruction for
# instruction: the same comparisons (ordered, so NaN compares false), a multiply and an add never fused,
# one exact difference converted once (int16 for 8-bit inputs, which halves the widening; else int32 or
# int64). Other targets split or scalarise the vectors; the results do not change. (They live in this file
# because Numba's disk cache of a kernel is invalidated by changes to the kernel's own file only.)

VECTOR_BYTES = 64  # one cache line: every store writes a whole line


def lanes(itemsize: int) -> int:
    """Elements of ``itemsize`` bytes per vector."""
    return VECTOR_BYTES // itemsize


def _i64(value: int) -> ir.Constant:
    return ir.Constant(ir.IntType(64), value)


def _splat(builder: ir.IRBuilder, value: ir.Value, count: int) -> ir.Value:
    vector = ir.VectorType(value.type, count)
    undef = ir.Constant(vector, ir.Undefined)
    first = builder.insert_element(undef, value, ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(first, undef, ir.Constant(ir.VectorType(ir.IntType(32), count), [0] * count))


class _Loop:
    """The vector loop of one call: element pointers of its arrays, vector loads and the streaming store."""

    def __init__(self, context: Any, builder: ir.IRBuilder, out_type: types.Array, count: int) -> None:
        self.context, self.builder, self.count = context, builder, count
        self.nontemporal = builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)])
        self.out_type = out_type

    def base(self, array_type: types.Array, array: ir.Value, start: ir.Value) -> ir.Value:
        data = self.context.make_array(array_type)(self.context, self.builder, array).data
        return self.builder.gep(data, [start])

    def load(self, base: ir.Value, k: ir.Value, dtype: types.Type) -> ir.Value:
        element = self.context.get_data_type(dtype)
        vector = ir.VectorType(element, self.count)
        pointer = self.builder.bitcast(self.builder.gep(base, [k]), vector.as_pointer())
        return self.builder.load(pointer, align=self.context.get_abi_sizeof(element))

    def store(self, base: ir.Value, k: ir.Value, value: ir.Value) -> None:
        pointer = self.builder.bitcast(self.builder.gep(base, [k]), value.type.as_pointer())
        self.builder.store(value, pointer, align=VECTOR_BYTES).set_metadata("nontemporal", self.nontemporal)

    def run(self, total: ir.Value, body: Callable[[ir.Value], None]) -> None:
        with cgutils.for_range_slice(self.builder, _i64(0), total, _i64(self.count)) as (k, _):
            body(k)


def _clamp_vector(builder: ir.IRBuilder, dtype: types.Type, v: ir.Value, low: ir.Value, high: ir.Value) -> ir.Value:
    """``jit.clamp_value``: a bound replaces the value only when the comparison is strictly true."""
    if isinstance(dtype, types.Float):
        above, below = builder.fcmp_ordered(">", v, high), None
        v = builder.select(above, high, v)
        below = builder.fcmp_ordered("<", v, low)
    else:
        signed = dtype.signed
        above = builder.icmp_signed(">", v, high) if signed else builder.icmp_unsigned(">", v, high)
        v = builder.select(above, high, v)
        below = builder.icmp_signed("<", v, low) if signed else builder.icmp_unsigned("<", v, low)
    return builder.select(below, low, v)


@intrinsic
def stream_clamp(typingctx, x, o, xs, os, count, low, high):  # type: ignore[no-untyped-def]
    """``o[os + k] = clamp(x[xs + k])`` for ``k < count``: FLOAT32 and integer CLIP and THRESHOLD."""
    if not (isinstance(x, types.Array) and isinstance(o, types.Array) and x.dtype == o.dtype):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        loop = _Loop(context, builder, signature.args[1], lanes(context.get_abi_sizeof(
            context.get_data_type(o.dtype))))
        xb, ob = loop.base(signature.args[0], args[0], args[2]), loop.base(signature.args[1], args[1], args[3])
        low_v, high_v = _splat(builder, args[5], loop.count), _splat(builder, args[6], loop.count)
        loop.run(args[4], lambda k: loop.store(ob, k, _clamp_vector(builder, o.dtype, loop.load(xb, k, x.dtype),
                                                                      low_v, high_v)))
        return context.get_dummy_value()

    return types.void(x, o, xs, os, count, low, high), codegen


@intrinsic
def stream_clamp_scale_bias(typingctx, x, o, xs, os, count, scale, bias, low, high):  # type: ignore
    """``stream_clamp`` after ``v * scale + bias`` (FLOAT32): a multiply, then an add, each rounded."""
    # The output's type is compared by element type only: a read-only input (np.broadcast_to) is typed apart.
    if not (isinstance(x, types.Array) and x.dtype == types.float32 and isinstance(o, types.Array)
            and o.dtype == x.dtype):
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        loop = _Loop(context, builder, signature.args[1], lanes(4))
        xb, ob = loop.base(signature.args[0], args[0], args[2]), loop.base(signature.args[1], args[1], args[3])
        scale_v, bias_v, low_v, high_v = (_splat(builder, a, loop.count) for a in args[5:9])

        def body(k: ir.Value) -> None:
            product = builder.fmul(loop.load(xb, k, x.dtype), scale_v)  # no fast-math flags: never contracted
            loop.store(ob, k, _clamp_vector(builder, x.dtype, builder.fadd(product, bias_v), low_v, high_v))

        loop.run(args[4], body)
        return context.get_dummy_value()

    return types.void(x, o, xs, os, count, scale, bias, low, high), codegen


def _widen(builder: ir.IRBuilder, value: ir.Value, dtype: types.Integer, wide: ir.Type) -> ir.Value:
    return builder.sext(value, wide) if dtype.signed else builder.zext(value, wide)


@intrinsic
def stream_dequantize_vectors(typingctx, x, s, z, o, xs, ss, zs, os, count):  # type: ignore[no-untyped-def]
    """``o[os + k] = float32(x - z) * s`` (SPEC 8.6) into FLOAT32. ``s`` and ``z`` are arrays read from
    ``ss``/``zs`` on (one per element) or scalars (per-tensor or per-row); ``z`` may be None."""
    if not (isinstance(x, types.Array) and isinstance(o, types.Array) and o.dtype == types.float32):
        return None
    if isinstance(s, types.Array) and s.dtype != types.float32:
        return None
    z_bits = z.dtype.bitwidth if isinstance(z, types.Array) else getattr(z, "bitwidth", 0)
    wide_bits = {8: 16, 16: 32}.get(max(x.dtype.bitwidth, z_bits), 64)  # exact: 8-bit differences fit 16 bits

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        loop = _Loop(context, builder, signature.args[3], lanes(4))
        wide = ir.VectorType(ir.IntType(wide_bits), loop.count)
        xb, ob = loop.base(signature.args[0], args[0], args[4]), loop.base(signature.args[3], args[3], args[7])
        s_base = loop.base(s, args[1], args[5]) if isinstance(s, types.Array) else None
        z_base = loop.base(z, args[2], args[6]) if isinstance(z, types.Array) else None
        s_all = None if s_base is not None else _splat(builder, args[1], loop.count)
        z_all = None
        if isinstance(z, types.Integer):
            z_all = _widen(builder, _splat(builder, args[2], loop.count), z, wide)

        def body(k: ir.Value) -> None:
            value = _widen(builder, loop.load(xb, k, x.dtype), x.dtype, wide)
            if z_base is not None:
                value = builder.sub(value, _widen(builder, loop.load(z_base, k, z.dtype), z.dtype, wide))
            elif z_all is not None:
                value = builder.sub(value, z_all)
            scale = loop.load(s_base, k, types.float32) if s_base is not None else s_all
            loop.store(ob, k, builder.fmul(builder.sitofp(value, ir.VectorType(ir.FloatType(), loop.count)),
                                           scale))

        loop.run(args[8], body)
        return context.get_dummy_value()

    return types.void(x, s, z, o, xs, ss, zs, os, count), codegen


@inline
def base_offset(row, sizes, strides):  # type: ignore[no-untyped-def]
    """Element offset of the first element of ``row``, a linear index over every dimension but the last."""
    if sizes.size == 2:  # the usual layout after merging dimensions: no division
        return row * strides[0]
    offset = 0
    for d in range(sizes.size - 2, -1, -1):
        n = sizes[d]
        offset += (row % n) * strides[d]
        row //= n
    return offset


@jit
def clamp_value(v, low, high):  # type: ignore[no-untyped-def]
    """SPEC 4 and 8.3-8.5: a bound replaces the value only when the comparison is strictly true."""
    if v > high:
        v = high
    if v < low:
        v = low
    return v


@inline
def streamed(o, ob, j, end, contiguous):  # type: ignore[no-untyped-def]
    """``(h, t)``: the positions of run ``j``..``end`` (from ``o[ob]``) that streaming stores write, whole
    vectors from the first aligned element; ``(end, end)`` when the run is not contiguous."""
    if not contiguous:
        return end, end
    per = VECTOR_BYTES // o.itemsize
    address = o.ctypes.data + (ob + j) * o.itemsize
    h = min(end, j + (-address % VECTOR_BYTES) // o.itemsize)
    return h, h + (end - h) // per * per


@jit
def clamp_run(xr, orow, low, high):  # type: ignore[no-untyped-def]
    if xr.ctypes.data == orow.ctypes.data:  # in place: one array, so the loop vectorises
        for k in range(orow.size):
            orow[k] = clamp_value(orow[k], low, high)
    else:
        for k in range(orow.size):
            orow[k] = clamp_value(xr[k], low, high)


@jit
def clamp(x, o, sizes, xs, os, start, stop, low, high, streaming):  # type: ignore[no-untyped-def]
    """CLIP/THRESHOLD without ScaleBias on FLOAT32 and integers (a NaN bound bounds nothing).

    ``streaming``: write contiguous runs with non-temporal stores (outputs larger than the caches).
    """
    n = sizes[-1]
    sx, so = xs[-1], os[-1]
    row = start // n
    j = start - row * n
    while start < stop:
        end = min(n, j + stop - start)
        xb, ob = base_offset(row, sizes, xs), base_offset(row, sizes, os)
        if sx == 1 and so == 1 and not streaming:
            clamp_run(x[xb + j:xb + end], o[ob + j:ob + end], low, high)
        else:
            h, t = streamed(o, ob, j, end, sx == 1 and so == 1)
            stream_clamp(x, o, xb + h, ob + h, t - h, low, high)
            for k in range(j, h):  # the rest one by one: a few elements, or a strided run
                o[ob + k * so] = clamp_value(x[xb + k * sx], low, high)
            for k in range(t, end):
                o[ob + k * so] = clamp_value(x[xb + k * sx], low, high)
        start += end - j
        row += 1
        j = 0


@jit
def scale_bias_value(v, scale, bias):  # type: ignore[no-untyped-def]
    """``v * scale + bias`` with two float32 roundings (separate statements: never contracted)."""
    product = v * scale
    return product + bias


@jit
def clamp_scale_bias_run(xr, orow, scale, bias, low, high):  # type: ignore[no-untyped-def]
    if xr.ctypes.data == orow.ctypes.data:
        for k in range(orow.size):
            orow[k] = clamp_value(scale_bias_value(orow[k], scale, bias), low, high)
    else:
        for k in range(orow.size):
            orow[k] = clamp_value(scale_bias_value(xr[k], scale, bias), low, high)


@jit
def clamp_scale_bias(x, o, sizes, xs, os, start, stop, scale, bias, low, high, streaming):  # type: ignore
    """CLIP/THRESHOLD with ScaleBias on FLOAT32."""
    n = sizes[-1]
    sx, so = xs[-1], os[-1]
    row = start // n
    j = start - row * n
    while start < stop:
        end = min(n, j + stop - start)
        xb, ob = base_offset(row, sizes, xs), base_offset(row, sizes, os)
        if sx == 1 and so == 1 and not streaming:
            clamp_scale_bias_run(x[xb + j:xb + end], o[ob + j:ob + end], scale, bias, low, high)
        else:
            h, t = streamed(o, ob, j, end, sx == 1 and so == 1)
            stream_clamp_scale_bias(x, o, xb + h, ob + h, t - h, scale, bias, low, high)
            for k in range(j, h):
                o[ob + k * so] = clamp_value(scale_bias_value(x[xb + k * sx], scale, bias), low, high)
            for k in range(t, end):
                o[ob + k * so] = clamp_value(scale_bias_value(x[xb + k * sx], scale, bias), low, high)
        start += end - j
        row += 1
        j = 0


@jit
def half_clamp_value(h, scale, bias, has_scale_bias, low, high):  # type: ignore[no-untyped-def]
    v = half_to_float(h)
    if has_scale_bias:
        v = scale_bias_value(v, scale, bias)
    return float_to_half(clamp_value(v, low, high))


@jit
def clamp_half(x, o, sizes, xs, os, start, stop, scale, bias, has_scale_bias, low, high, streaming):  # type: ignore
    """CLIP/THRESHOLD on FLOAT16 bits: computed in float32, rounded once (never streamed: the conversions,
    not the memory, take the time)."""
    n = sizes[-1]
    sx, so = xs[-1], os[-1]
    row = start // n
    j = start - row * n
    while start < stop:
        end = min(n, j + stop - start)
        xb, ob = base_offset(row, sizes, xs), base_offset(row, sizes, os)
        for k in range(j, end):
            o[ob + k * so] = half_clamp_value(x[xb + k * sx], scale, bias, has_scale_bias, low, high)
        start += end - j
        row += 1
        j = 0


@jit
def dequantize_value(xv, zv, sv, like):  # type: ignore[no-untyped-def]
    """SPEC 8.6: exact wide difference, one rounding to float32, one float32 multiply, then the output type."""
    return to_output(np.float32(difference(xv, zv)) * as_float(sv), like)


@jit
def dequantize_value_no_zero_point(xv, sv, like):  # type: ignore[no-untyped-def]
    return to_output(np.float32(wide(xv)) * as_float(sv), like)


def stream_dequantize(x, s, z, o, xs, ss, zs, os, count):  # type: ignore[no-untyped-def]
    """``stream_dequantize_vectors`` for FLOAT32 outputs; nothing for FLOAT16 ones (never streamed)."""


@overload(stream_dequantize, jit_options={"cache": True})
def _stream_dequantize(x, s, z, o, xs, ss, zs, os, count):  # type: ignore[no-untyped-def]
    if o.dtype != types.float32:
        return lambda x, s, z, o, xs, ss, zs, os, count: None
    return lambda x, s, z, o, xs, ss, zs, os, count: stream_dequantize_vectors(x, s, z, o, xs, ss, zs, os, count)


@jit
def dequantize_run(xr, sr, zr, orow, s_step, z_step):  # type: ignore[no-untyped-def]
    """A contiguous run; the scale and zero point each per element (step 1) or one value (step 0)."""
    if s_step == 0 and z_step == 0:
        sv, zv = sr[0], zr[0]
        for k in range(orow.size):
            orow[k] = dequantize_value(xr[k], zv, sv, orow)
    elif s_step == 0:
        sv = sr[0]
        for k in range(orow.size):
            orow[k] = dequantize_value(xr[k], zr[k], sv, orow)
    elif z_step == 0:
        zv = zr[0]
        for k in range(orow.size):
            orow[k] = dequantize_value(xr[k], zv, sr[k], orow)
    else:
        for k in range(orow.size):
            orow[k] = dequantize_value(xr[k], zr[k], sr[k], orow)


@jit
def dequantize_run_no_zero_point(xr, sr, orow, s_step):  # type: ignore[no-untyped-def]
    if s_step == 0:
        sv = sr[0]
        for k in range(orow.size):
            orow[k] = dequantize_value_no_zero_point(xr[k], sv, orow)
    else:
        for k in range(orow.size):
            orow[k] = dequantize_value_no_zero_point(xr[k], sr[k], orow)


@jit
def stream_run(x, s, z, o, xb, sb, zb, a, count):  # type: ignore[no-untyped-def]
    """``stream_dequantize`` compiled apart for each kind of scale and zero point (a value or an array) and
    called straight from the row loop: through a helper choosing among the variants, every row took longer
    (per-channel [16384, 4096] on one thread: 15 ms against 12.5 ms)."""
    stream_dequantize(x, s, z, o, xb, sb, zb, a, count)


@jit
def dequantize(x, s, z, o, sizes, xs, ss, zs, os, start, stop, streaming):  # type: ignore[no-untyped-def]
    """DEQUANTIZE_LINEAR with a zero point. Broadcast operands (per-tensor, per-axis) have stride 0."""
    n = sizes[-1]
    sx, s_s, sz, so = xs[-1], ss[-1], zs[-1], os[-1]
    row = start // n
    j = start - row * n
    while start < stop:
        end = min(n, j + stop - start)
        xb, sb, ob = base_offset(row, sizes, xs), base_offset(row, sizes, ss), base_offset(row, sizes, os)
        zb = base_offset(row, sizes, zs)
        contiguous = sx == 1 and so == 1 and s_s <= 1 and sz <= 1  # scale and zero point per element or hoisted
        if contiguous and not streaming:
            dequantize_run(x[xb + j:xb + end], s[sb + j * s_s:], z[zb + j * sz:], o[ob + j:ob + end], s_s, sz)
        else:
            h, t = streamed(o, ob, j, end, contiguous)
            if s_s == 0 and sz == 0:
                stream_run(x, s[sb], z[zb], o, xb + h, 0, 0, ob + h, t - h)
            elif s_s == 0:
                stream_run(x, s[sb], z, o, xb + h, 0, zb + h * sz, ob + h, t - h)
            elif sz == 0:
                stream_run(x, s, z[zb], o, xb + h, sb + h * s_s, 0, ob + h, t - h)
            else:
                stream_run(x, s, z, o, xb + h, sb + h * s_s, zb + h * sz, ob + h, t - h)
            for k in range(j, h):
                o[ob + k * so] = dequantize_value(x[xb + k * sx], z[zb + k * sz], s[sb + k * s_s], o)
            for k in range(t, end):
                o[ob + k * so] = dequantize_value(x[xb + k * sx], z[zb + k * sz], s[sb + k * s_s], o)
        start += end - j
        row += 1
        j = 0


@jit
def dequantize_no_zero_point(x, s, o, sizes, xs, ss, os, start, stop, streaming):  # type: ignore
    """DEQUANTIZE_LINEAR without a zero point (SPEC 8.6: it means 0)."""
    n = sizes[-1]
    sx, s_s, so = xs[-1], ss[-1], os[-1]
    row = start // n
    j = start - row * n
    while start < stop:
        end = min(n, j + stop - start)
        xb, sb, ob = base_offset(row, sizes, xs), base_offset(row, sizes, ss), base_offset(row, sizes, os)
        contiguous = sx == 1 and so == 1 and s_s <= 1
        if contiguous and not streaming:
            dequantize_run_no_zero_point(x[xb + j:xb + end], s[sb + j * s_s:], o[ob + j:ob + end], s_s)
        else:
            h, t = streamed(o, ob, j, end, contiguous)
            if s_s == 0:
                stream_run(x, s[sb], None, o, xb + h, 0, 0, ob + h, t - h)
            else:
                stream_run(x, s, None, o, xb + h, sb + h, 0, ob + h, t - h)
            for k in range(j, h):
                o[ob + k * so] = dequantize_value_no_zero_point(x[xb + k * sx], s[sb + k * s_s], o)
            for k in range(t, end):
                o[ob + k * so] = dequantize_value_no_zero_point(x[xb + k * sx], s[sb + k * s_s], o)
        start += end - j
        row += 1
        j = 0
