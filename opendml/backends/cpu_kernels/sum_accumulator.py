"""The exact sums' accumulator (REDUCE's SUM, AVERAGE and L1 of FLOAT32 and FLOAT16): a sum kept exactly as
integer digits, and runs of FLOAT32 elements added to it block by block.

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

A block that fails by a span of at most ``2 * SPAN + 1`` binades (no NaN or infinity) is read again as two
groups split at the field ``t = emax - SPAN`` (``_split_block``): the elements of fields ``t .. emax`` span ``SPAN``
binades, the nonzero others ``emin .. t - 1`` span ``t - 1 - emin <= SPAN``, so each group's float64 sum is exact as
above, and both enter the accumulator. Random data of one scale meets this where it fails the first test (one
block in about 300 of normal samples holds an element below ``2**-18``), at the cost of one more vector pass
instead of a scalar pass by bins. Any other block (a wider range, or a NaN or an infinity in it) is summed again
by exponent: bin ``e >> 4`` (16 binades: elements below ``2**40`` of the bin's unit, so ``2**13`` of them sum
exactly in float64) collects its elements, and each bin's float64 enters the accumulator. Every path is exact,
so which one a block takes never shows in the result.

Where the rest went: the rounding of an accumulator (``finish``) is in ``sum_rounding``, LOG_SUM's ``ln`` of it in
``log_sums``; the sums of FLOAT32 rows in ``sums``, of columns in ``sum_columns``, of FLOAT16 rows in ``sum_halves``.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from .fast_functions.checks import prefer_wide_vectors
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


@intrinsic
def bit_length(typingctx, value):  # type: ignore[no-untyped-def]
    """The bit length of a nonnegative int64, as Python's ``int.bit_length`` (one count-leading-zeros instruction,
    where a loop of shifts would take up to 63 steps)."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        i64 = ir.IntType(64)
        zeros = builder.ctlz(args[0], ir.Constant(ir.IntType(1), 0))
        return builder.sub(ir.Constant(i64, 64), zeros)
    return types.int64(types.int64), codegen


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


@njit(nogil=True, cache=True, fastmath={"reassoc"})
def _split_block(x, xb, t, absolute):  # type: ignore[no-untyped-def]
    """The float64 sums of the block ``x``'s elements (``xb``: their bits) of exponent field ``t`` or more, and of
    the others: each exact where its group's span allows (the module's docstring), in any order."""
    prefer_wide_vectors()
    big = 0.0
    small = 0.0
    for i in range(x.shape[0]):
        v = abs(np.float64(x[i])) if absolute else np.float64(x[i])
        upper = ((xb[i] >> np.uint32(23)) & np.uint32(0xFF)) >= t
        big += v if upper else 0.0
        small += 0.0 if upper else v
    return big, small


@jit
def add_wide_block(x, xb, i0, i1, function, acc, bins, emax, emin):  # type: ignore[no-untyped-def]
    """``x[i0:i1]``, a block of nonzero elements whose span ``emax - emin`` (fields, ``emin`` at least 1) is past
    ``SPAN``, added to ``acc``: as two groups where the span is at most ``2 * SPAN + 1`` and no element is a NaN or
    an infinity, else by bins."""
    if emax == 255 or emax - emin > 2 * SPAN + 1:
        _slow_block(x, xb, i0, i1, function, acc, bins)
        return
    acc[NONNEG] = 1
    big, small = _split_block(x[i0:i1], xb[i0:i1], np.uint32(emax - SPAN), function == ABS)
    if big != 0.0:
        add_double(acc, big, UNIT)
    if small != 0.0:
        add_double(acc, small, UNIT)


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
            add_wide_block(x, xb, j0, j1, function, acc, bins, emax, emin)
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
def _carry(digits):  # type: ignore[no-untyped-def]
    n = digits.shape[0]
    for k in range(n - 1):
        c = digits[k] >> 32  # arithmetic: floor division by 2**32
        digits[k] -= c << 32
        digits[k + 1] += c
