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

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic, overload

jit = njit(nogil=True, cache=True)

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


def value_of(v, half):  # type: ignore[no-untyped-def]
    """An element in its compute type: float32 for FLOAT16 bits (``half`` not None), else as stored."""


@overload(value_of, jit_options={"cache": True})
def _value_of(v, half):  # type: ignore[no-untyped-def]
    if isinstance(half, types.NoneType):
        return lambda v, half: v
    return lambda v, half: half_to_float(v)


def wide(v):  # type: ignore[no-untyped-def]
    """An integer widened so that a difference of two is exact (SPEC 8.6)."""


@overload(wide, jit_options={"cache": True})
def _wide(v):  # type: ignore[no-untyped-def]
    if v.bitwidth <= 16:
        return lambda v: np.int32(v)  # 8- and 16-bit: int32 holds every difference and vectorises well
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


@jit
def base_offset(row, sizes, strides):  # type: ignore[no-untyped-def]
    """Element offset of the first element of ``row``, a linear index over every dimension but the last."""
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


@jit
def clamp(x, o, sizes, xs, os, start, stop, low, high):  # type: ignore[no-untyped-def]
    """CLIP/THRESHOLD without ScaleBias on FLOAT32 and integers (a NaN bound bounds nothing)."""
    n = sizes[-1]
    sx, so = xs[-1], os[-1]
    row = start // n
    j = start - row * n
    while start < stop:
        end = min(n, j + stop - start)
        xb, ob = base_offset(row, sizes, xs), base_offset(row, sizes, os)
        if sx == 1 and so == 1:
            xr, orow = x[xb + j:xb + end], o[ob + j:ob + end]
            if xr.ctypes.data == orow.ctypes.data:  # in place: one array, so the loop vectorises
                for k in range(orow.size):
                    orow[k] = clamp_value(orow[k], low, high)
            else:
                for k in range(orow.size):
                    orow[k] = clamp_value(xr[k], low, high)
        else:
            for k in range(j, end):
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
def clamp_scale_bias(x, o, sizes, xs, os, start, stop, scale, bias, low, high):  # type: ignore[no-untyped-def]
    """CLIP/THRESHOLD with ScaleBias on FLOAT32."""
    n = sizes[-1]
    sx, so = xs[-1], os[-1]
    row = start // n
    j = start - row * n
    while start < stop:
        end = min(n, j + stop - start)
        xb, ob = base_offset(row, sizes, xs), base_offset(row, sizes, os)
        if sx == 1 and so == 1:
            xr, orow = x[xb + j:xb + end], o[ob + j:ob + end]
            if xr.ctypes.data == orow.ctypes.data:
                for k in range(orow.size):
                    orow[k] = clamp_value(scale_bias_value(orow[k], scale, bias), low, high)
            else:
                for k in range(orow.size):
                    orow[k] = clamp_value(scale_bias_value(xr[k], scale, bias), low, high)
        else:
            for k in range(j, end):
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
def clamp_half(x, o, sizes, xs, os, start, stop, scale, bias, has_scale_bias, low, high):  # type: ignore
    """CLIP/THRESHOLD on FLOAT16 bits: computed in float32, rounded once."""
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
    return to_output(np.float32(wide(xv) - wide(zv)) * as_float(sv), like)


@jit
def dequantize_value_no_zero_point(xv, sv, like):  # type: ignore[no-untyped-def]
    return to_output(np.float32(wide(xv)) * as_float(sv), like)


@jit
def dequantize(x, s, z, o, sizes, xs, ss, zs, os, start, stop):  # type: ignore[no-untyped-def]
    """DEQUANTIZE_LINEAR with a zero point. Broadcast operands (per-tensor, per-axis) have stride 0."""
    n = sizes[-1]
    sx, s_s, sz, so = xs[-1], ss[-1], zs[-1], os[-1]
    row = start // n
    j = start - row * n
    while start < stop:
        end = min(n, j + stop - start)
        xb, sb, ob = base_offset(row, sizes, xs), base_offset(row, sizes, ss), base_offset(row, sizes, os)
        zb = base_offset(row, sizes, zs)
        xr, orow = x[xb + j * sx:], o[ob + j * so:]
        if sx == 1 and so == 1 and s_s <= 1 and sz <= 1:  # scale and zero point each per-element or hoisted
            sr, zr = s[sb + j * s_s:], z[zb + j * sz:]
            if s_s == 0 and sz == 0:
                sv, zv = sr[0], zr[0]
                for k in range(end - j):
                    orow[k] = dequantize_value(xr[k], zv, sv, o)
            elif s_s == 0:
                sv = sr[0]
                for k in range(end - j):
                    orow[k] = dequantize_value(xr[k], zr[k], sv, o)
            elif sz == 0:
                zv = zr[0]
                for k in range(end - j):
                    orow[k] = dequantize_value(xr[k], zv, sr[k], o)
            else:
                for k in range(end - j):
                    orow[k] = dequantize_value(xr[k], zr[k], sr[k], o)
        else:
            for k in range(j, end):
                o[ob + k * so] = dequantize_value(x[xb + k * sx], z[zb + k * sz], s[sb + k * s_s], o)
        start += end - j
        row += 1
        j = 0


@jit
def dequantize_no_zero_point(x, s, o, sizes, xs, ss, os, start, stop):  # type: ignore[no-untyped-def]
    """DEQUANTIZE_LINEAR without a zero point (SPEC 8.6: it means 0)."""
    n = sizes[-1]
    sx, s_s, so = xs[-1], ss[-1], os[-1]
    row = start // n
    j = start - row * n
    while start < stop:
        end = min(n, j + stop - start)
        xb, sb, ob = base_offset(row, sizes, xs), base_offset(row, sizes, ss), base_offset(row, sizes, os)
        xr, orow = x[xb + j * sx:], o[ob + j * so:]
        if sx == 1 and so == 1 and s_s == 0:
            sv = s[sb]
            for k in range(end - j):
                orow[k] = dequantize_value_no_zero_point(xr[k], sv, o)
        elif sx == 1 and so == 1 and s_s == 1:
            sr = s[sb + j:]
            for k in range(end - j):
                orow[k] = dequantize_value_no_zero_point(xr[k], sr[k], o)
        else:
            for k in range(j, end):
                o[ob + k * so] = dequantize_value_no_zero_point(x[xb + k * sx], s[sb + k * s_s], o)
        start += end - j
        row += 1
        j = 0


# ARGMIN. A task reduces part of the input into per-slot state (value, index, found); slots are the
# output elements in row-major order. Within a task each slot sees its elements in increasing index
# order, so a strict ``<`` (INCREASING) or ``<=`` (DECREASING) keeps the right one of equal values;
# ``merge`` compares indices explicitly, so tasks may cover any parts in any order. NaN is never taken.


@jit
def merge(cur, idx, has, slot, value, index, decreasing):  # type: ignore[no-untyped-def]
    """Fold one found (value, index) into a slot's state, ties broken by index (SPEC 7)."""
    if not has[slot]:
        cur[slot] = value
        idx[slot] = index
        has[slot] = 1
        return
    best = cur[slot]
    if value < best or (value == best and ((index > idx[slot]) if decreasing else (index < idx[slot]))):
        cur[slot] = value
        idx[slot] = index


@jit
def merge_states(cur, idx, has, cur2, idx2, has2, decreasing):  # type: ignore[no-untyped-def]
    for s in range(cur.size):
        if has2[s]:
            merge(cur, idx, has, s, cur2[s], idx2[s], decreasing)


@jit
def _scan(x, xb, n, sx, half, decreasing):  # type: ignore[no-untyped-def]
    """The best (value, position, found) of a run of ``n`` elements."""
    best = value_of(x[xb], half)
    pos = 0
    found = best == best
    for k in range(1, n):
        v = value_of(x[xb + k * sx], half)
        if v == v and (not found or v < best or (decreasing and v == best)):
            best = v
            pos = k
            found = True
    return best, pos, found


@jit
def argmin_rows(x, x0, sizes, xs, red, w, slot0, index0, start, stop, cur, idx, has, half, decreasing):  # type: ignore
    """The last dimension is reduced: scan each run of it (rows ``start``..``stop`` of the others)."""
    nd = sizes.size
    n, sx, wn = sizes[-1], xs[-1], w[-1]
    for row in range(start, stop):
        xb, slot, index = x0, slot0, index0
        r = row
        for d in range(nd - 2, -1, -1):
            i = r % sizes[d]
            r //= sizes[d]
            xb += i * xs[d]
            if red[d]:
                index += i * w[d]
            else:
                slot += i * w[d]
        best, pos, found = _scan(x, xb, n, sx, half, decreasing)
        if found:
            merge(cur, idx, has, slot, best, index + pos * wn, decreasing)


COLUMN_TILE = 16384  # columns whose running state (12 bytes each) stays in the L2 cache


@jit
def argmin_columns(x, x0, sizes, xs, red, w, slot0, index0, start, stop, cur, idx, has, half, decreasing):  # type: ignore
    """The last dimension is kept: a running minimum and index per column, updated row after row.

    The reduced dimension just before the last one gives the rows (one row when there is none); every
    dimension before those walks outer positions ``start``..``stop``. Columns go in tiles whose running
    state stays in cache, and the update is branch-free so that it vectorises.
    """
    nd = sizes.size
    ncols, sc, wc = sizes[-1], xs[-1], w[-1]
    has_rows = nd >= 2 and red[nd - 2] == 1
    nrows = sizes[nd - 2] if has_rows else 1
    sr = xs[nd - 2] if has_rows else 0
    wr = w[nd - 2] if has_rows else 0
    outer_dims = nd - 2 if has_rows else nd - 1
    tile = min(ncols, COLUMN_TILE)
    best = np.full(tile, value_of(x[x0], half))
    pos = np.zeros(tile, dtype=np.int64)
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
            for c in range(width):
                best[c] = value_of(x[xb + (c0 + c) * sc], half)
                pos[c] = 0
            for row in range(1, nrows):
                rb = xb + row * sr + c0 * sc
                if decreasing:
                    for c in range(width):
                        v = value_of(x[rb + c * sc], half)
                        m = best[c]
                        take = (v <= m) | ((m != m) & (v == v))
                        best[c] = v if take else m
                        pos[c] = row if take else pos[c]
                else:
                    for c in range(width):
                        v = value_of(x[rb + c * sc], half)
                        m = best[c]
                        take = (v < m) | ((m != m) & (v == v))
                        best[c] = v if take else m
                        pos[c] = row if take else pos[c]
            for c in range(width):
                m = best[c]
                if m == m:  # a column of NaN found nothing
                    merge(cur, idx, has, slot_base + (c0 + c) * wc, m, index + pos[c] * wr, decreasing)
