"""Exact sums of FLOAT32 and FLOAT16 elements (REDUCE's SUM, AVERAGE and L1): the exact sum, rounded once.

The accumulator
---------------
Every finite FLOAT32 (and FLOAT16) value is an integer multiple of ``2**-149`` below ``2**128``. A row's exact
sum is kept as that integer ``V`` (in units of ``2**-149``), in ``DIGITS`` signed int64 digits of base
``2**32``: ``V = sum(acc[k] * 2**(32*k))``. A digit gains less than ``2**34`` in magnitude per addition, so it
holds ``2**29`` additions before it could overflow; rows add one float64 per block of ``BLOCK`` elements (and
at most ``BINS`` per block on the slow path), so any row below ``2**35`` elements is safe. Digits are
added digit by digit when partial sums merge (threads, segments of a row, Dask's chunks): exactly, so the
result is the same bits whatever the split. Three more int64 words carry the specials: whether a NaN, a
+inf or a -inf was met, and whether any element was other than -0.0.

The fast block (why a float64 sum of a block is exact)
------------------------------------------------------
Let a block's finite nonzero elements have exponent fields between ``emin`` and ``emax`` (a subnormal's
field counted as 1, whose ulp it shares). Each element is ``m * 2**(e - 150)`` with ``m < 2**24``: in units of
``u = 2**(emin - 150)`` an integer below ``2**(24 + emax - emin)``. Every partial sum of ``B`` of them, in any
order, is an integer multiple of ``u`` below ``B * 2**(24 + emax - emin)`` in magnitude; where that is at most
``2**53`` it is a float64 (``u >= 2**-149`` keeps it far from float64's subnormals, ``2**139`` from its
overflow), so every float64 addition of the block is exact, whatever the order: the compiler may reorder
them into vector lanes (``fastmath={"reassoc"}``, and nothing else: no flag that assumes finite values or
ignores zeros' signs). With ``BLOCK = 2**10`` the condition is ``emax - emin <= 19``: 19 binades, which random
data of one scale meets almost always. The block's float64 sum then enters the accumulator once.

A block that fails (a wider range, or a NaN or an infinity in it) is summed again by exponent: bin
``e >> 4`` (16 binades: elements below ``2**40`` of the bin's unit, so ``2**13`` of them sum exactly in float64)
collects its elements, and each bin's float64 enters the accumulator. Both paths are exact, so which one
a block takes never shows in the result.

The rounding
------------
``finish`` carries the digits, takes ``V``'s sign and magnitude, and rounds ``|V| * 2**-149`` once, to nearest
with ties to even, to a format of ``P`` significant bits whose smallest ulp is ``2**-149 * 2**base`` (FLOAT32:
``P = 24, base = 0``; FLOAT16: ``P = 11, base = 125``): below ``2**(base + P)`` the format's bits are ``|V|``
shifted right by ``base`` (subnormals and the first binade share one ulp); above, the top ``P`` bits shifted
by ``s`` are placed at exponent field ``s - base + 1``: ``bits = ((s - base) << (P - 1)) + q``, so a rounding
carry steps into the next binade, and past the largest finite value into infinity. AVERAGE divides the
digits (scaled by ``2**64`` first, so that the quotient keeps 64 bits below the smallest ulp) by the count,
and a nonzero remainder joins the sticky bit: the exact quotient rounded once.

Specials: NaN where any element is NaN or both infinities occur (the canonical quiet NaN); else an infinity
where one occurs; else the rounded sum. An exact zero is +0.0 unless every element was -0.0 (as IEEE
addition in round-to-nearest gives: ``-0.0 + -0.0 = -0.0``, ``x + -x = +0.0``); a nonzero sum too small for the
format rounds to a zero of its sign.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from .halves import half_to_float
from .jit import jit

BLOCK = 1 << 10  # elements per fast block: the float64 sum of a block is exact where its span <= SPAN
SPAN = 29 - 10  # 24 + SPAN + log2(BLOCK) <= 53
DIGITS = 11  # 352 bits: 2**-149 .. 2**139 and headroom for carries
BINS = 16  # the slow path's bins of 16 binades each
WORDS = DIGITS + 4  # digits, then NaN seen, +inf seen, -inf seen, an element other than -0.0 seen
NAN, PINF, NINF, NONNEG = DIGITS, DIGITS + 1, DIGITS + 2, DIGITS + 3
FLAGS = 4  # the flags' words after the digits (``merge`` and ``finish`` take any count of digits before them)
MASK = (1 << 32) - 1

# The kernels' function codes (which value of an element is summed).
SUM, ABS = 0, 1


@intrinsic
def double_bits(typingctx, value):  # type: ignore[no-untyped-def]
    """A float64's bits as an int64 (a register move; a scalar's ``view`` would make an array)."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.bitcast(args[0], ir.IntType(64))
    return types.int64(types.float64), codegen


UNIT = 149  # the accumulator's unit: 2**-UNIT


@jit
def add_double(acc, s, unit):  # type: ignore[no-untyped-def]
    """acc += s, exactly: ``s`` is a nonzero float64 multiple of ``2**-unit`` (a normal float64), below
    ``2**(32 * (digits - 3) - unit)`` for the accumulator's digits."""
    b = double_bits(s)
    e = (b >> 52) & 0x7FF
    m = (b & ((1 << 52) - 1)) | (1 << 52)
    sh = e - 1075 + unit  # s = m * 2**(e - 1075) = m << sh units of 2**-unit
    if sh < 0:  # m's low bits are zero: s is a multiple of 2**-unit
        m >>= -sh
        sh = 0
    k = sh >> 5
    r = sh & 31
    t0 = (m & MASK) << r  # < 2**63
    t1 = (m >> 32) << r  # < 2**52
    if b < 0:
        acc[k] -= t0 & MASK
        acc[k + 1] -= (t0 >> 32) + (t1 & MASK)
        acc[k + 2] -= t1 >> 32
    else:
        acc[k] += t0 & MASK
        acc[k + 1] += (t0 >> 32) + (t1 & MASK)
        acc[k + 2] += t1 >> 32


@njit(nogil=True, cache=True, fastmath={"reassoc"})
def _fast_block(x, xb, absolute):  # type: ignore[no-untyped-def]
    """The float64 sum of the block ``x`` (``xb``: its bits), exact where its span allows (the module's
    docstring), and the largest and smallest of ``(bits << 1) - 1`` over its elements: the sign shifted out,
    the exponent field in the top 8 bits, a zero wrapped to the largest (so that the smallest is a nonzero
    element's). Kept in 32 bits (each operation cast back) so that each vector holds 8 elements; the block is read
    twice (it is in the L1 cache the second time): one loop with the float64 sums would hold 4 per vector."""
    hi = np.uint32(0)
    lo = np.uint32(0xFFFFFFFF)
    for i in range(xb.shape[0]):  # a loop of its own: its vectors hold 8 elements, the float64 loop's 4
        a = np.uint32(xb[i] << np.uint32(1))
        hi = np.uint32(max(hi, a))
        lo = np.uint32(min(lo, np.uint32(a - np.uint32(1))))
    s = -0.0  # the identity of IEEE addition: a sum of -0.0 alone stays -0.0
    if absolute:
        for i in range(x.shape[0]):
            s += abs(np.float64(x[i]))
    else:
        for i in range(x.shape[0]):
            s += np.float64(x[i])
    return s, hi, lo


@jit
def _slow_block(x, xb, i0, i1, function, acc, bins):  # type: ignore[no-untyped-def]
    """``x[i0:i1]`` added to ``acc`` by exponent bins (any range; NaN and infinities noted)."""
    bins[:] = 0.0
    for i in range(i0, i1):
        b = xb[i]
        if function == ABS:
            b &= np.uint32(0x7FFFFFFF)
        if b != np.uint32(0x80000000):
            acc[NONNEG] = 1
        e = (b >> np.uint32(23)) & np.uint32(0xFF)
        if e == 255:
            if (b & np.uint32(0x7FFFFF)) != 0:
                acc[NAN] = 1
            elif b >> np.uint32(31):
                acc[NINF] = 1
            else:
                acc[PINF] = 1
            continue
        v = np.float64(x[i])
        bins[e >> 4] += abs(v) if function == ABS else v
    for j in range(BINS):
        if bins[j] != 0.0:
            add_double(acc, bins[j], UNIT)


@jit
def accumulate(x, xb, i0, i1, function, acc, bins):  # type: ignore[no-untyped-def]
    """``x[i0:i1]`` (a contiguous FLOAT32 run; ``xb``: its bits) added to the accumulator ``acc`` (``bins``:
    the slow path's scratch, ``BINS`` float64)."""
    absolute = function == ABS
    for j0 in range(i0, i1, BLOCK):
        j1 = min(j0 + BLOCK, i1)
        s, hi, lo = _fast_block(x[j0:j1], xb[j0:j1], absolute)
        emax = hi >> 24
        emin = max((lo + 1) >> 24, 1)  # a subnormal's ulp is the first binade's
        if hi == 0:  # every element a zero: -0.0 unless one is +0.0 (or ABS made it so)
            if absolute:
                acc[NONNEG] = 1
            for i in range(j0, j1):
                if xb[i] == 0:
                    acc[NONNEG] = 1
        elif emax == 255 or emax - emin > SPAN:
            _slow_block(x, xb, j0, j1, function, acc, bins)
        else:
            acc[NONNEG] = 1  # a nonzero element
            if s != 0.0:
                add_double(acc, s, UNIT)


@jit
def merge(acc, other):  # type: ignore[no-untyped-def]
    """acc += other (digits, and the specials' flags: the last ``FLAGS`` words, whatever the digits' count). Both
    are carried first, so that each digit of the sum stays far from int64's range however many additions either
    holds."""
    n = acc.shape[0] - FLAGS
    _carry(acc[:n])
    _carry(other[:n])
    for k in range(n):
        acc[k] += other[k]
    for k in range(n, acc.shape[0]):
        acc[k] |= other[k]


@jit
def _magnitude(acc, digits):  # type: ignore[no-untyped-def]
    """``|V|`` carried into ``digits`` (each in [0, 2**32)); returns V's sign (1: negative)."""
    n = digits.shape[0]
    m = acc.shape[0] - FLAGS
    for k in range(n):
        digits[k] = acc[k] if k < m else 0
    _carry(digits)
    negative = 0
    if digits[n - 1] < 0:
        negative = 1
        for k in range(n):
            digits[k] = -digits[k]
        _carry(digits)
    return negative


@jit
def _carry(digits):  # type: ignore[no-untyped-def]
    n = digits.shape[0]
    for k in range(n - 1):
        c = digits[k] >> 32  # arithmetic: floor division by 2**32
        digits[k] -= c << 32
        digits[k + 1] += c


@jit
def _bit_length(v):  # type: ignore[no-untyped-def]
    n = 0
    while v:
        v >>= 1
        n += 1
    return n


@jit
def _bits(digits, lo, width):  # type: ignore[no-untyped-def]
    """Bits [lo, lo + width) of the carried digits (each in [0, 2**32); width <= 32)."""
    k = lo >> 5
    r = lo & 31
    n = digits.shape[0]
    out = digits[k] >> r if k < n else 0
    if r and k + 1 < n:
        out |= (digits[k + 1] & ((1 << r) - 1)) << (32 - r)
    return out & ((1 << width) - 1)


@jit
def _any_below(digits, p):  # type: ignore[no-untyped-def]
    """Whether a bit below position ``p`` is set."""
    k = p >> 5
    for j in range(min(k, digits.shape[0])):
        if digits[j] != 0:
            return True
    return k < digits.shape[0] and (digits[k] & ((1 << (p & 31)) - 1)) != 0


@jit
def _round(digits, sticky, precision, base):  # type: ignore[no-untyped-def]
    """The format's bits (sign apart) of ``|V|`` (carried digits, units 2**-149 * 2**-... see ``finish``)
    rounded to nearest even; ``sticky``: nonzero bits below the digits."""
    top = -1
    for k in range(digits.shape[0] - 1, -1, -1):
        if digits[k] != 0:
            top = 32 * k + _bit_length(digits[k]) - 1
            break
    if top < 0:
        return 0, sticky
    s = max(top - (precision - 1), base)
    q = _bits(digits, s, min(precision, 32))
    half = _bits(digits, s - 1, 1) if s >= 1 else 0
    rest = sticky or (s >= 1 and _any_below(digits, s - 1))
    if half and (rest or (q & 1)):
        q += 1
    return ((s - base) << (precision - 1)) + q, True


@jit
def finish(acc, count, average, precision, base, inf_bits, nan_bits, sign_bit, digits):  # type: ignore[no-untyped-def]
    """The format's bits of the accumulated sum (``average``: divided by ``count``), rounded once
    (``digits``: scratch of the accumulator's digits and 3 more int64; ``base`` counted in its unit)."""
    f = acc.shape[0] - FLAGS  # the flags' words follow the digits
    if acc[f + 0] or (acc[f + 1] and acc[f + 2]):
        return nan_bits
    if acc[f + 1]:
        return inf_bits
    if acc[f + 2]:
        return inf_bits | sign_bit
    negative = _magnitude(acc, digits)
    sticky = False
    b = base
    top = digits.shape[0] - 1
    if average:  # |V| * 2**64 // count, the remainder sticky: units 2**-(unit + 64)
        for k in range(top, 1, -1):
            digits[k] = digits[k - 2]
        digits[0] = 0
        digits[1] = 0
        r = 0
        for k in range(top, -1, -1):
            cur = (r << 32) | digits[k]
            digits[k] = cur // count
            r = cur - digits[k] * count
        sticky = r != 0
        b = base + 64
    bits, nonzero = _round(digits, sticky, precision, b)
    if bits >= inf_bits:
        bits = inf_bits
    if negative or (not nonzero and not acc[f + 3]):  # a negative sum, or every element -0.0
        bits |= sign_bit
    return bits


FORMATS = {  # output numpy dtype: precision, base, inf bits, NaN bits, sign bit
    np.dtype(np.float32): (24, 0, 0x7F800000, 0x7FC00000, 0x80000000),
    np.dtype(np.float16): (11, 125, 0x7C00, 0x7E00, 0x8000),
}


@jit
def _rows_task(x, r0, r1, i0, i1, function, accs):  # type: ignore[no-untyped-def]
    """Rows ``r0:r1`` of ``x`` (2-D, rows contiguous), elements ``i0:i1`` of each, into ``accs[r - r0]``."""
    bins = np.zeros(BINS, np.float64)
    xb = x.view(np.uint32)
    for r in range(r0, r1):
        accumulate(x[r], xb[r], i0, i1, function, accs[r - r0], bins)


@jit
def _short_rows_task(x, r0, r1, function, accs, sums64, direct):  # type: ignore[no-untyped-def]
    """Rows ``r0:r1`` of ``x`` of at most ``BLOCK`` elements each. A row whose float64 sum is exact (its span
    fits, or every element is a zero) has that sum in ``sums64`` and ``direct`` set: the exact sum as a float64,
    which one conversion rounds to the output type (IEEE conversion: to nearest even, subnormals, overflow to
    infinity, the sign of a zero: float64 addition gives -0.0 only where every element is -0.0, as the rule is).
    Any other row is accumulated into ``accs``."""
    bins = np.zeros(BINS, np.float64)
    xb = x.view(np.uint32)
    absolute = function == ABS
    for r in range(r0, r1):
        s, hi, lo = _fast_block(x[r], xb[r], absolute)
        emax = hi >> 24
        if hi == 0 or (emax != 255 and emax - max((lo + 1) >> 24, 1) <= SPAN):
            sums64[r - r0] = s
            direct[r - r0] = 1
        else:
            accumulate(x[r], xb[r], 0, x.shape[1], function, accs[r - r0], bins)


@jit
def _finish_rows(accs, out, count, average, precision, base, inf_bits, nan_bits, sign_bit):  # type: ignore[no-untyped-def]
    digits = np.zeros(accs.shape[1] - FLAGS + 3, np.int64)
    for r in range(accs.shape[0]):
        out[r] = finish(accs[r], count, average, precision, base, inf_bits, nan_bits, sign_bit, digits)


TILE = 512  # columns summed side by side when the reduced axis is not the innermost (``sum_columns``)
# Rows of a column block: the span is checked over the whole tile's block (TILE x COLUMN_BLOCK elements, whose
# smallest element is smaller than a row block's), so each column sums fewer elements and may span more.
COLUMN_BLOCK = 1 << 7
COLUMN_SPAN = 29 - 7


@njit(nogil=True, cache=True, fastmath={"reassoc"})
def _columns_block(x, xb, r0, r1, c0, c1, absolute, s):  # type: ignore[no-untyped-def]
    """``s[c - c0]`` = the float64 sum of rows ``r0:r1`` of each column ``c0:c1`` of ``x`` (exact where the
    block's span allows, as ``_fast_block``'s: each column sums at most ``COLUMN_BLOCK`` elements), and the largest
    and smallest ``(bits << 1) - 1`` over the whole block. As ``_fast_block``: the bits in a loop of their own;
    four rows are added together before their sum joins ``s`` (one load and store of ``s`` per four rows: any
    order of these additions is exact)."""
    hi = np.uint32(0)
    lo = np.uint32(0xFFFFFFFF)
    s[:] = 0.0
    r = r0
    while r + 4 <= r1:  # four rows at a time: read by the bits' loop, then again from the L1 cache
        for k in range(r, r + 4):
            bits = xb[k, c0:c1]
            for c in range(c1 - c0):
                a = np.uint32(bits[c] << np.uint32(1))
                hi = np.uint32(max(hi, a))
                lo = np.uint32(min(lo, np.uint32(a - np.uint32(1))))
        p, q, u, v = x[r, c0:c1], x[r + 1, c0:c1], x[r + 2, c0:c1], x[r + 3, c0:c1]
        if absolute:
            for c in range(c1 - c0):
                s[c] += (abs(np.float64(p[c])) + abs(np.float64(q[c]))) + (abs(np.float64(u[c]))
                                                                          + abs(np.float64(v[c])))
        else:
            for c in range(c1 - c0):
                s[c] += (np.float64(p[c]) + np.float64(q[c])) + (np.float64(u[c]) + np.float64(v[c]))
        r += 4
    while r < r1:
        bits = xb[r, c0:c1]
        p = x[r, c0:c1]
        for c in range(c1 - c0):
            a = np.uint32(bits[c] << np.uint32(1))
            hi = np.uint32(max(hi, a))
            lo = np.uint32(min(lo, np.uint32(a - np.uint32(1))))
            s[c] += abs(np.float64(p[c])) if absolute else np.float64(p[c])
        r += 1
    return hi, lo


@jit
def _column_bounds(xb, r0, r1, c0, c1, his, los):  # type: ignore[no-untyped-def]
    """Each column's largest and smallest ``(bits << 1) - 1`` over rows ``r0:r1`` (read along the rows, so that
    the loop is vectorised): where a tile's span is too wide, which of its columns are."""
    his[:] = 0
    los[:] = 0xFFFFFFFF
    for r in range(r0, r1):
        bits = xb[r, c0:c1]
        for c in range(c1 - c0):
            a = np.uint32(bits[c] << np.uint32(1))
            his[c] = max(his[c], a)
            los[c] = min(los[c], np.uint32(a - np.uint32(1)))


@jit
def _fits(hi, lo, span):  # type: ignore[no-untyped-def]
    """Whether elements with these bounds have an exact float64 sum (no NaN or infinity; a span of at most
    ``span`` binades; or zeros only)."""
    emax = hi >> 24
    return hi == 0 or (emax != 255 and emax - max((lo + 1) >> 24, 1) <= span)


@jit
def _columns_task(x, r0, r1, c0, c1, function, accs):  # type: ignore[no-untyped-def]
    """Rows ``r0:r1`` of columns ``c0:c1`` of ``x`` (2-D, rows contiguous) into ``accs[c - c0]``."""
    xb = x.view(np.uint32)
    bins = np.zeros(BINS, np.float64)
    s = np.zeros(c1 - c0, np.float64)
    his = np.zeros(c1 - c0, np.uint32)
    los = np.zeros(c1 - c0, np.uint32)
    absolute = function == ABS
    for j0 in range(r0, r1, COLUMN_BLOCK):
        j1 = min(j0 + COLUMN_BLOCK, r1)
        hi, lo = _columns_block(x, xb, j0, j1, c0, c1, absolute, s)
        tile_fits = _fits(hi, lo, COLUMN_SPAN)
        if not tile_fits:  # the tile's span is wider than its columns' (most of them)
            _column_bounds(xb, j0, j1, c0, c1, his, los)
        for c in range(c0, c1):
            acc = accs[c - c0]
            if not tile_fits and not _fits(his[c - c0], los[c - c0], COLUMN_SPAN):
                _slow_block(x[j0:j1, c], xb[j0:j1, c], 0, j1 - j0, function, acc, bins)
                continue
            if s[c - c0] != 0.0:
                acc[NONNEG] = 1
                add_double(acc, s[c - c0], UNIT)
            elif not acc[NONNEG]:  # an exact zero: -0.0 only if every element of the column is
                for r in range(j0, j1):
                    if xb[r, c] != 0x80000000 or absolute:
                        acc[NONNEG] = 1
                        break


def sum_columns(x: np.ndarray, function: int, average: bool, out_dtype: np.dtype, threads: int) -> np.ndarray:
    """Each column of ``x`` (2-D FLOAT32, rows contiguous: the reduced axis is the first) summed exactly and
    rounded once, as ``sum_rows`` does each row."""
    return _finished(column_accumulators(x, function, threads), x.shape[0], average, out_dtype)


def column_accumulators(x: np.ndarray, function: int, threads: int) -> np.ndarray:
    """``sum_columns``' accumulators (columns, ``WORDS``): tiles of ``TILE`` columns side by side, shared among the
    threads; with fewer tiles than threads, the rows are split too and the partial sums merged (exactly)."""
    from .threads import run_tasks

    n, cols = x.shape
    tiles = [(c0, min(cols, c0 + TILE)) for c0 in range(0, cols, TILE)]
    parts = 1 if len(tiles) >= threads or n < 2 * BLOCK else min(threads, n // BLOCK)
    step = -(-n // parts)
    step = -(-step // BLOCK) * BLOCK
    partial = np.zeros((parts, cols, WORDS), np.int64)
    tasks = [(x, p * step, min(n, (p + 1) * step), c0, c1, function, partial[p, c0:c1])
             for p in range(parts) for c0, c1 in tiles]
    run_tasks(_columns_task, tasks, threads)
    accs = partial[0]
    for p in range(1, parts):
        for c in range(cols):
            merge(accs[c], partial[p, c])
    return accs


def _short_rows(x: np.ndarray, function: int, out_dtype: np.dtype, threads: int, accs: np.ndarray) -> np.ndarray:
    """``sum_rows`` of rows of at most ``BLOCK`` elements: most rows' float64 sums are exact, and converted."""
    from .threads import run_tasks

    rows = x.shape[0]
    sums64 = np.zeros(rows, np.float64)
    direct = np.zeros(rows, np.uint8)
    step = -(-rows // max(1, min(threads, rows)))
    tasks = [(x, r0, min(rows, r0 + step), function, accs[r0:r0 + step], sums64[r0:r0 + step], direct[r0:r0 + step])
             for r0 in range(0, rows, step)]
    run_tasks(_short_rows_task, tasks, threads)
    with np.errstate(over="ignore"):  # a sum past the type's largest value converts to an infinity, as it must
        result = sums64.astype(out_dtype)
    rest = np.flatnonzero(direct == 0)
    if rest.size:
        result[rest] = _finished(accs[rest], x.shape[1], False, out_dtype)
    return result


def _finished(accs: np.ndarray, count: int, average: bool, out_dtype: np.dtype, unit: int = UNIT) -> np.ndarray:
    """The accumulators ``accs`` (units ``2**-unit``) rounded once to ``out_dtype``."""
    precision, base, inf_bits, nan_bits, sign_bit = FORMATS[np.dtype(out_dtype)]
    bits = np.zeros(accs.shape[0], np.int64)
    _finish_rows(accs, bits, count, average, precision, base + unit - UNIT, inf_bits, nan_bits, sign_bit)
    unsigned = np.uint32 if np.dtype(out_dtype).itemsize == 4 else np.uint16
    return bits.astype(unsigned).view(out_dtype)


HALF_BLOCK = 1 << 13  # FLOAT16 elements whose float64 sum is always exact (see ``_half_block``)


@njit(nogil=True, cache=True, fastmath={"reassoc"})
def _half_block(h, absolute):  # type: ignore[no-untyped-def]
    """The float64 sum of FLOAT16 elements (``h``: their bits), at most ``HALF_BLOCK`` of them, and the largest
    magnitude's bits (0x7C00 and above: an infinity or a NaN is among them). Exact whatever the values: every
    finite FLOAT16 is an integer multiple of 2**-24 below 2**16, so every partial sum of 2**13 of them is an
    integer multiple of 2**-24 below 2**53 of it, a float64, in any order."""
    hi = np.uint16(0)
    for i in range(h.shape[0]):
        hi = max(hi, np.uint16(h[i] & np.uint16(0x7FFF)))
    s = -0.0
    if absolute:
        for i in range(h.shape[0]):
            s += abs(np.float64(half_to_float(h[i])))
    else:
        for i in range(h.shape[0]):
            s += np.float64(half_to_float(h[i]))
    return s, hi


@jit
def _half_rows_task(h, r0, r1, i0, i1, function, accs):  # type: ignore[no-untyped-def]
    """Rows ``r0:r1`` of FLOAT16 bits ``h`` (2-D, rows contiguous), elements ``i0:i1`` of each, into
    ``accs[r - r0]``."""
    absolute = function == ABS
    for r in range(r0, r1):
        acc = accs[r - r0]
        for j0 in range(i0, i1, HALF_BLOCK):
            block = h[r, j0:min(i1, j0 + HALF_BLOCK)]
            s, hi = _half_block(block, absolute)
            if hi >= 0x7C00:  # the specials noted, the finite elements summed (still exactly)
                s = -0.0
                for i in range(block.shape[0]):
                    b = block[i] & 0x7FFF if absolute else block[i]
                    if (b & 0x7FFF) > 0x7C00:
                        acc[NAN] = 1
                    elif (b & 0x7FFF) == 0x7C00:
                        acc[NINF if b & 0x8000 else PINF] = 1
                    else:
                        v = np.float64(half_to_float(b))
                        s += v
                    if b != 0x8000:
                        acc[NONNEG] = 1
            if s != 0.0:
                add_double(acc, s, UNIT)
            if not (s == 0.0 and np.signbit(s)):  # -0.0 only where every element is -0.0
                acc[NONNEG] = 1


def sum_half_rows(h: np.ndarray, function: int, average: bool, out_dtype: np.dtype, threads: int) -> np.ndarray:
    """``sum_rows`` of FLOAT16 rows given as their bits (2-D uint16, rows contiguous), read in place."""
    return _finished(half_row_accumulators(h, function, threads), h.shape[1], average, out_dtype)


def half_row_accumulators(h: np.ndarray, function: int, threads: int) -> np.ndarray:
    """``sum_half_rows``' accumulators (rows, ``WORDS``): rows shared among the threads, or a few long rows each
    split between them."""
    return split_rows(_half_rows_task, h, (function,), WORDS, HALF_BLOCK, threads)


SPLIT_MIN = 1 << 16  # elements of a row below which a row is never split between threads


def sum_rows(x: np.ndarray, function: int, average: bool, out_dtype: np.dtype, threads: int) -> np.ndarray:
    """Each row of ``x`` (2-D FLOAT32, rows contiguous) summed exactly and rounded once to ``out_dtype``
    (AVERAGE: the exact quotient by the row's length), on up to ``threads`` threads. Rows are shared among
    the threads; where there are fewer rows than threads, each row is split into segments summed apart and
    merged (exactly: the split never shows)."""
    rows, n = x.shape
    if n <= BLOCK and not average:
        return _short_rows(x, function, out_dtype, threads, np.zeros((rows, WORDS), np.int64))
    return _finished(row_accumulators(x, function, threads), n, average, out_dtype)


def row_accumulators(x: np.ndarray, function: int, threads: int) -> np.ndarray:
    """``sum_rows``' accumulators (rows, ``WORDS``), not yet rounded."""
    return split_rows(_rows_task, x, (function,), WORDS, BLOCK, threads)


def split_rows(task: Callable[..., None], x: np.ndarray, args: tuple[object, ...], words: int, block: int,
               threads: int) -> np.ndarray:
    """The accumulators (rows, ``words``) of ``task(x, r0, r1, i0, i1, *args, accs)`` over the rows of ``x`` on up
    to ``threads`` threads: rows shared among the threads, or, with fewer long rows than threads, each row split
    into segments of whole ``block``s whose accumulators merge exactly."""
    from .threads import run_tasks

    rows, n = x.shape
    accs = np.zeros((rows, words), np.int64)
    if rows >= threads or n < SPLIT_MIN or threads <= 1:
        step = -(-rows // max(1, min(threads, rows)))
        tasks = [(x, r0, min(rows, r0 + step), 0, n, *args, accs[r0:r0 + step]) for r0 in range(0, rows, step)]
        run_tasks(task, tasks, threads)
        return accs
    seg = -(-n // threads)
    seg = -(-seg // block) * block
    partial = np.zeros((threads, rows, words), np.int64)
    tasks = [(x, 0, rows, p * seg, min(n, (p + 1) * seg), *args, partial[p]) for p in range(threads)]
    run_tasks(task, tasks, threads)
    for p in range(threads):
        for r in range(rows):
            merge(accs[r], partial[p, r])
    return accs


@jit
def nearest_double(acc, digits):  # type: ignore[no-untyped-def]
    """The float64 nearest the accumulated sum (units 2**-149; ties to even): NaN, an infinity, the sign of a zero
    as ``finish`` gives them (``digits``: scratch of ``DIGITS + 3`` int64). Every such sum is below 2**(139 + 35)
    and a multiple of 2**-149, so the float64 is normal or zero and no rounding overflows."""
    f = acc.shape[0] - FLAGS
    if acc[f + 0] or (acc[f + 1] and acc[f + 2]):
        return np.nan
    if acc[f + 1]:
        return np.inf
    if acc[f + 2]:
        return -np.inf
    negative = _magnitude(acc, digits)
    top = -1
    for k in range(digits.shape[0] - 1, -1, -1):
        if digits[k] != 0:
            top = 32 * k + _bit_length(digits[k]) - 1
            break
    if top < 0:
        return -0.0 if not acc[f + 3] else 0.0
    s = max(top - 52, 0)  # the lowest bit kept: 53 significant bits
    q = _bits(digits, s, 32) | (_bits(digits, s + 32, 21) << 32)
    if s >= 1 and _bits(digits, s - 1, 1) and ((q & 1) or _any_below(digits, s - 1)):
        q += 1  # to nearest, ties to even (a carry to 2**53 is still exact)
    value = math.ldexp(np.float64(q), s - UNIT)
    return -value if negative else value


@jit
def _nearest_rows(accs, out):  # type: ignore[no-untyped-def]
    digits = np.zeros(accs.shape[1] - FLAGS + 3, np.int64)
    for r in range(accs.shape[0]):
        out[r] = nearest_double(accs[r], digits)


def nearest_doubles(accs: np.ndarray) -> np.ndarray:
    """Each accumulator's exact sum rounded once to float64 (LOG_SUM's argument)."""
    out = np.zeros(accs.shape[0], np.float64)
    _nearest_rows(accs, out)
    return out
