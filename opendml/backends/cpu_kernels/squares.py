"""Exact sums of squares of FLOAT32 elements (REDUCE's SUM_SQUARE and L2; FLOAT16 through its exact FLOAT32
copy): the exact sum of the exact squares, rounded once; L2 its square root, correctly rounded.

The accumulator
---------------
A finite FLOAT32 ``x`` is ``m * 2**(e - 150)`` with ``m < 2**24`` and ``e`` its exponent field (a subnormal's
field counted as 1). Its square ``m**2 * 2**(2e - 300)`` has at most 48 significant bits, so it is exact in
float64, an integer multiple of ``2**-298`` below ``2**(2e - 252) <= 2**256``. A row's sum of squares is kept
as that integer in ``DIGITS`` int64 digits of base ``2**32`` in units of ``2**-298`` (``sum_accumulator``'s
accumulator with more digits: 640 bits hold ``2**35`` squares below ``2**256`` with headroom), then
``sum_accumulator.FLAGS`` words (NaN seen, +inf seen; -inf is never seen, a square being positive; an element
seen). Partial accumulators (threads, segments of a row, Dask's chunks) merge digit by digit
(``sum_accumulator.merge``): the result is the same bits whatever the split.

The fast block (why two float64 sums of a block are exact)
-----------------------------------------------------------
A float64 sum of squares is rarely exact (48 of float64's 53 bits are taken by one square). Each square ``v`` is
split instead against the block's boundary ``sigma = 2**(K + b - 1)``, where ``2**K = 2**(2 emax - 252)``
bounds every square of the block (``emax``: its largest exponent field) and ``2**b`` bounds its length
(``BLOCK = 2**10``): ``q = (sigma + v) - sigma``, ``r = v - q`` (Rump, Ogita and Oishi's ExtractScalar).

- ``sigma + v`` lies in ``[2**(K+b-1), 2**(K+b))`` where float64's spacing is ``G = 2**(K + b - 53)``: its
  rounding is ``sigma + q`` with ``q`` the multiple of ``G`` nearest ``v``, and the subtraction of ``sigma`` is
  exact. So ``0 <= q <= 2**K``: ``q / G <= 2**(53 - b)``, and every partial sum of at most ``2**b`` of them,
  in any order, is a multiple of ``G`` at most ``2**53 G``: a float64, exactly.
- ``r = v - q`` is exact: ``|r| <= G / 2``, and both ``v`` and ``q`` are multiples of ``U = 2**(2 emin - 300)``
  (``emin``: the block's smallest nonzero field; ``G / U = 2**(2D + b - 5) >= 1`` with ``D = emax - emin``), so
  ``r`` is a multiple of ``U`` no larger than ``v``. In units of ``U``, ``|r| <= 2**(2D + b - 6)``, so
  every partial sum of ``2**b`` of them is at most ``2**(2D + 2b - 6)``: exact where that is at most ``2**53``,
  that is ``D <= SPAN = 19`` (the span ``sum_accumulator`` allows a block of plain sums; random data of one scale meets
  it almost always).

``sigma`` and every value stay far from float64's subnormals (``U >= 2**-298``) and overflow (``sigma <= 2**265``).
The split runs in a function compiled without fastmath (``_split``: evaluated as written, so
``(sigma + v) - sigma`` is never simplified to ``v``); only the two sums (``_sum_pair``) may be reordered into
vector lanes (``fastmath={"reassoc"}``), which the argument above allows. Each block's two sums enter the
digits once.

A block that spans more than ``SPAN`` binades, or holds a NaN or an infinity, is split element by element
against the boundary of its exponent's bin (``_slow_block``: bins of 8 fields, ``D <= 7``, each bin's two sums
exact by the same argument) and its bins' sums enter the digits. Both paths are exact, so which one a block
takes never shows.

The rounding
------------
SUM_SQUARE: ``sum_rounding.finish`` rounds the digits once, its formats' smallest ulps counted in units of ``2**-298``
(FLOAT32 ``2**-149 = 2**149`` units). L2: the square root of the exact sum ``V * 2**-298`` is
``sqrt(V) * 2**-149``; with ``j`` chosen so that ``W = floor(V / 4**j)`` has 61 or 62 bits (``j`` negative
multiplies), ``S = isqrt(W) = floor(sqrt(V) / 2**j)`` has at least 30 bits, and ``sqrt(V) / 2**j`` exceeds ``S``
exactly where ``S**2 != W`` or a bit of ``V`` below ``4**j`` is set. ``S`` with that sticky bit is rounded once,
to nearest even, as ``finish`` rounds (its guard bit lies in ``S``; a value strictly between ``S`` and ``S + 1``
rounds as any other in between, no grid point or midpoint lying there): the correctly rounded square root of the
exact sum of squares.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from . import sum_rounding
from .jit import jit
from .sum_accumulator import BLOCK, FLAGS, SPAN, add_double, bit_length
from .sum_rounding import FORMATS
from .sums import split_rows

UNIT = 298  # the accumulator's unit: 2**-298, the smallest square's
DIGITS = 20  # 640 bits: 2**-298 .. 2**256, 2**35 squares and headroom for carries
WORDS = DIGITS + FLAGS
NAN, INF, SEEN = DIGITS, DIGITS + 1, DIGITS + 3  # the flags as ``sum_accumulator`` lays them out (-inf never set)
BIN_FIELDS = 3  # the slow path's bins: 8 exponent fields each
# sigma of a block whose largest field is e: 2**(2e - 252 + 10 - 1); of a slow bin j: its largest field's.
SIGMAS = np.array([2.0 ** (2 * max(e, 1) - 243) for e in range(256)], np.float64)
BIN_SIGMAS = np.array([SIGMAS[min(255, ((j + 1) << BIN_FIELDS) - 1)] for j in range(256 >> BIN_FIELDS)],
                      np.float64)


@njit(nogil=True, cache=True, fastmath={"reassoc"})
def _bounds(xb):  # type: ignore[no-untyped-def]
    """The largest and smallest ``(bits << 1) - 1`` of the block (``sum_accumulator._fast_block``'s bounds alone)."""
    hi = np.uint32(0)
    lo = np.uint32(0xFFFFFFFF)
    for i in range(xb.shape[0]):
        a = np.uint32(xb[i] << np.uint32(1))
        hi = np.uint32(max(hi, a))
        lo = np.uint32(min(lo, np.uint32(a - np.uint32(1))))
    return hi, lo


@njit(nogil=True, cache=True)
def _split(x, sigma, q, r):  # type: ignore[no-untyped-def]
    """``q[i]``, ``r[i]``: the square of ``x[i]`` split against ``sigma`` (no fastmath: as written)."""
    for i in range(x.shape[0]):
        v = np.float64(x[i]) * np.float64(x[i])
        t = (sigma + v) - sigma
        q[i] = t
        r[i] = v - t


@njit(nogil=True, cache=True, fastmath={"reassoc"})
def _sum_pair(q, r):  # type: ignore[no-untyped-def]
    """The float64 sums of ``q`` and of ``r`` (exact in any order: the module's docstring)."""
    a = 0.0
    b = 0.0
    for i in range(q.shape[0]):
        a += q[i]
        b += r[i]
    return a, b


@jit
def _slow_block(x, xb, i0, i1, acc, bins):  # type: ignore[no-untyped-def]
    """The squares of ``x[i0:i1]`` added to ``acc`` by exponent bins (any span; NaN and infinities noted);
    ``bins``: scratch of ``2 * len(BIN_SIGMAS)`` float64."""
    nbins = BIN_SIGMAS.shape[0]
    bins[:] = 0.0
    for i in range(i0, i1):
        b = xb[i]
        e = (b >> np.uint32(23)) & np.uint32(0xFF)
        if e == 255:
            if (b & np.uint32(0x7FFFFF)) != 0:
                acc[NAN] = 1
            else:
                acc[INF] = 1
            continue
        v = np.float64(x[i]) * np.float64(x[i])
        j = e >> BIN_FIELDS
        sigma = BIN_SIGMAS[j]
        t = (sigma + v) - sigma
        bins[j] += t
        bins[nbins + j] += v - t
    for j in range(2 * nbins):
        if bins[j] != 0.0:
            add_double(acc, bins[j], UNIT)


@jit
def accumulate(x, xb, i0, i1, acc, q, r, bins):  # type: ignore[no-untyped-def]
    """The squares of ``x[i0:i1]`` (a contiguous FLOAT32 run; ``xb``: its bits) added to ``acc`` (``q``, ``r``:
    scratch of ``BLOCK`` float64; ``bins``: the slow path's)."""
    if i1 > i0:
        acc[SEEN] = 1
    for j0 in range(i0, i1, BLOCK):
        j1 = min(j0 + BLOCK, i1)
        hi, lo = _bounds(xb[j0:j1])
        if hi == 0:  # zeros only
            continue
        emax = hi >> 24
        if emax == 255 or emax - max((lo + 1) >> 24, 1) > SPAN:
            _slow_block(x, xb, j0, j1, acc, bins)
            continue
        n = j1 - j0
        _split(x[j0:j1], SIGMAS[emax], q[:n], r[:n])
        a, b = _sum_pair(q[:n], r[:n])
        if a != 0.0:
            add_double(acc, a, UNIT)
        if b != 0.0:
            add_double(acc, b, UNIT)


@jit
def _rows_task(x, r0, r1, i0, i1, accs):  # type: ignore[no-untyped-def]
    """Rows ``r0:r1`` of ``x`` (2-D FLOAT32, rows contiguous), elements ``i0:i1`` of each, into
    ``accs[r - r0]``."""
    xb = x.view(np.uint32)
    q = np.zeros(BLOCK, np.float64)
    r = np.zeros(BLOCK, np.float64)
    bins = np.zeros(2 * BIN_SIGMAS.shape[0], np.float64)
    for k in range(r0, r1):
        accumulate(x[k], xb[k], i0, i1, accs[k - r0], q, r, bins)


def row_accumulators(x: np.ndarray, threads: int) -> np.ndarray:
    """Each row's exact sum of squares (2-D FLOAT32, rows contiguous) as accumulator words (rows, ``WORDS``), on
    up to ``threads`` threads."""
    return split_rows(_rows_task, x, (), WORDS, BLOCK, threads)


TILE = 512  # columns side by side when the reduced axis is the first (``_columns_task``)
COLUMN_BLOCK = 1 << 8  # rows of a tile: b = 8, so a column's span may be 21 binades (2 D <= 59 - 2 b)
COLUMN_SPAN = 21
COLUMN_SIGMAS = np.array([2.0 ** (2 * max(e, 1) - 252 + 8 - 1) for e in range(256)], np.float64)


@jit
def _split_rows(x, xb, j0, j1, c0, c1, sq, sr, his, los, sigma):  # type: ignore[no-untyped-def]
    """Each column's squares of rows ``j0:j1`` split against ``sigma`` into its two sums (``sq``, ``sr``), and each
    column's largest and smallest ``(bits << 1) - 1`` (``his``, ``los``), in one loop along the columns (vectorised
    with each column's additions in order; no fastmath: the split is evaluated as written)."""
    n = c1 - c0
    sq[:n] = 0.0
    sr[:n] = 0.0
    his[:n] = 0
    los[:n] = 0xFFFFFFFF
    for i in range(j0, j1):
        row = x[i, c0:c1]
        bits = xb[i, c0:c1]
        for c in range(n):
            a = np.uint32(bits[c] << np.uint32(1))
            his[c] = max(his[c], a)
            los[c] = min(los[c], np.uint32(a - np.uint32(1)))
            v = np.float64(row[c]) * np.float64(row[c])
            t = (sigma + v) - sigma
            sq[c] += t
            sr[c] += v - t


@jit
def _largest_field(his, los, n):  # type: ignore[no-untyped-def]
    """The largest exponent field below 255 among the columns' bounds (0: none)."""
    top = np.uint32(0)
    for c in range(n):
        e = his[c] >> np.uint32(24)
        if e != 255:
            top = max(top, e)
    return top


@jit
def _block_field(xb, j0, j1, c0, c1):  # type: ignore[no-untyped-def]
    """The largest exponent field below 255 among rows ``j0:j1`` of columns ``c0:c1`` (0: none)."""
    top = np.uint32(0)
    for i in range(j0, j1):
        bits = xb[i, c0:c1]
        for c in range(c1 - c0):
            e = (bits[c] >> np.uint32(23)) & np.uint32(0xFF)
            top = max(top, e if e != np.uint32(255) else np.uint32(0))
    return top


@jit
def _misses(his, los, n, guess):  # type: ignore[no-untyped-def]
    """How many columns (not all zeros) the boundary of field ``guess`` does not take exactly: an element above
    it, a NaN or an infinity, or a span below it wider than ``COLUMN_SPAN``."""
    count = 0
    for c in range(n):
        if his[c] and not _fits_guess(his[c], los[c], guess):
            count += 1
    return count


@jit
def _fits_guess(hi, lo, guess):  # type: ignore[no-untyped-def]
    emax = hi >> np.uint32(24)
    return emax != 255 and emax <= guess and guess - max((lo + np.uint32(1)) >> np.uint32(24), np.uint32(1)) \
        <= COLUMN_SPAN


@jit
def _columns_block(x, xb, j0, j1, c0, c1, acc, sq, sr, his, los, bins, guess):  # type: ignore[no-untyped-def]
    """The squares of rows ``j0:j1`` of columns ``c0:c1`` into ``acc[c - c0]``; returns the next block's guess.

    The block is split in one pass against the boundary of ``guess`` (the largest exponent field of the block before;
    the first block's own, from a pass of its bounds), each column's bounds taken in the same pass: a column's two
    sums are kept where the guess bounds every element of it and its span below the guess is at most ``COLUMN_SPAN``
    (the module's argument, for a column's ``COLUMN_BLOCK`` elements and any boundary above its largest square).
    Where more than one column in eight misses, the block is split again against its own largest field; a column
    that still misses (a NaN, an infinity, a span too wide) goes alone, by bins."""
    n = c1 - c0
    if not guess:
        guess = max(_block_field(xb, j0, j1, c0, c1), np.uint32(1))  # 1: zeros only (or specials, which bins note)
        _split_rows(x, xb, j0, j1, c0, c1, sq, sr, his, los, COLUMN_SIGMAS[guess])
    else:
        _split_rows(x, xb, j0, j1, c0, c1, sq, sr, his, los, COLUMN_SIGMAS[guess])
        if 8 * _misses(his, los, n, guess) > n:
            own = _largest_field(his, los, n)
            if own != guess and own != 0:
                guess = own
                _split_rows(x, xb, j0, j1, c0, c1, sq, sr, his, los, COLUMN_SIGMAS[guess])
    for c in range(n):
        if not his[c]:  # zeros only: nothing to add
            continue
        if _fits_guess(his[c], los[c], guess):
            if sq[c] != 0.0:
                add_double(acc[c], sq[c], UNIT)
            if sr[c] != 0.0:
                add_double(acc[c], sr[c], UNIT)
        else:
            _slow_block(x[:, c0 + c], xb[:, c0 + c], j0, j1, acc[c], bins)
    return max(_largest_field(his, los, n), np.uint32(1))


@jit
def _columns_task(x, r0, r1, c0, c1, accs):  # type: ignore[no-untyped-def]
    """Rows ``r0:r1`` of columns ``c0:c1`` of ``x`` (2-D FLOAT32, rows contiguous: the reduced axis first) into
    ``accs[c - c0]``, tiles of ``TILE`` columns by ``COLUMN_BLOCK`` rows."""
    xb = x.view(np.uint32)
    sq = np.zeros(TILE, np.float64)
    sr = np.zeros(TILE, np.float64)
    his = np.zeros(TILE, np.uint32)
    los = np.zeros(TILE, np.uint32)
    bins = np.zeros(2 * BIN_SIGMAS.shape[0], np.float64)
    if r1 > r0:
        for c in range(c0, c1):
            accs[c - c0, SEEN] = 1
    for t0 in range(c0, c1, TILE):
        t1 = min(t0 + TILE, c1)
        guess = np.uint32(0)
        for j0 in range(r0, r1, COLUMN_BLOCK):
            guess = np.uint32(_columns_block(x, xb, j0, min(j0 + COLUMN_BLOCK, r1), t0, t1, accs[t0 - c0:t1 - c0],
                                             sq, sr, his, los, bins, guess))


def column_accumulators(x: np.ndarray, threads: int) -> np.ndarray:
    """Each column's exact sum of squares (2-D FLOAT32, rows contiguous) as accumulator words (columns,
    ``WORDS``): columns shared among up to ``threads`` threads (whole tiles where there are enough)."""
    from .threads import run_tasks

    n, cols = x.shape
    accs = np.zeros((cols, WORDS), np.int64)
    step = -(-cols // max(1, threads))
    step = -(-step // 16) * 16  # whole 64-byte lines of a row per thread
    run_tasks(_columns_task, [(x, 0, n, c0, min(cols, c0 + step), accs[c0:c0 + step])
                              for c0 in range(0, cols, step)], threads)
    return accs


def sum_squares(x: np.ndarray, out_dtype: np.dtype, threads: int) -> np.ndarray:
    """SUM_SQUARE of each row: the exact sum of squares rounded once to ``out_dtype``."""
    return sum_rounding._finished(row_accumulators(x, threads), x.shape[1], False, out_dtype, UNIT, threads)


@jit
def _isqrt(w):  # type: ignore[no-untyped-def]
    """floor(sqrt(w)) of an integer ``0 <= w < 2**62``: float64's root, corrected."""
    s = np.int64(math.sqrt(np.float64(w)))
    while s * s > w:
        s -= 1
    while (s + 1) * (s + 1) <= w:
        s += 1
    return s


@jit
def finish_root(acc, precision, base, inf_bits, nan_bits, digits, root):  # type: ignore[no-untyped-def]
    """The format's bits of the square root of the accumulated sum, correctly rounded (``base``: the format's
    smallest ulp in units of 2**-149, as ``sum_rounding.FORMATS``; ``digits``: scratch of ``DIGITS + 3`` int64,
    ``root``: of 4)."""
    if acc[NAN]:
        return nan_bits
    if acc[INF]:
        return inf_bits
    sum_rounding._magnitude(acc, digits)  # a sum of squares is never negative
    top = -1
    for k in range(digits.shape[0] - 1, -1, -1):
        if digits[k] != 0:
            top = 32 * k + bit_length(digits[k]) - 1
            break
    if top < 0:
        return 0  # +0.0: every square is +0.0
    j = (top + 1 - 61) // 2  # W = floor(V / 4**j) has 61 or 62 bits
    if j >= 0:
        w = sum_rounding._bits(digits, 2 * j, 32) | (sum_rounding._bits(digits, 2 * j + 32, 30) << 32)
        sticky = sum_rounding._any_below(digits, 2 * j)
    else:
        w = (sum_rounding._bits(digits, 0, 32) | (sum_rounding._bits(digits, 32, 30) << 32)) << (-2 * j)
        sticky = False
    s = _isqrt(w)
    sticky = sticky or s * s != w
    root[:] = 0
    root[0] = s & 0xFFFFFFFF
    root[1] = s >> 32
    bits, _ = sum_rounding._round(root, sticky, precision, base - j)  # S in units of 2**(j - 149)
    return min(bits, inf_bits)


@jit
def _finish_roots(accs, out, precision, base, inf_bits, nan_bits):  # type: ignore[no-untyped-def]
    digits = np.zeros(DIGITS + 3, np.int64)
    root = np.zeros(4, np.int64)
    for k in range(accs.shape[0]):
        out[k] = finish_root(accs[k], precision, base, inf_bits, nan_bits, digits, root)


def roots(accs: np.ndarray, out_dtype: np.dtype) -> np.ndarray:
    """L2 of each accumulator (rows, ``WORDS``): the square root of its exact sum, correctly rounded."""
    precision, base, inf_bits, nan_bits, _ = FORMATS[np.dtype(out_dtype)]
    bits = np.zeros(accs.shape[0], np.int64)
    _finish_roots(accs, bits, precision, base, inf_bits, nan_bits)
    unsigned = np.uint32 if np.dtype(out_dtype).itemsize == 4 else np.uint16
    return bits.astype(unsigned).view(out_dtype)

