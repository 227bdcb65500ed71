"""TOP_K's Numba kernel: each row scanned once, the K best (value, index) pairs so far kept in a bounded heap.

The heap's root is the worst of the K kept, in TOP_K's order (``_after``: the value, decreasing for the largest,
then the index; NaN after every number; -0.0 equal to +0.0). An element enters only where the root ranks after
it, so on most data a row costs one load and one comparison an element, and a heap update for the few that enter
(about K * log(n / K) of n in random order; at worst n * log K). The K are then taken from the heap worst first,
which sorts them. Ties need no special care: a row is scanned by ascending index, and an element equal to the root
ranks after it (its index is higher), so of tied elements the lowest indices stay, as the order says.

Every element becomes an INT64 rank key (``_key``: floats from their bits, so FLOAT16 needs no conversion), so
comparisons are integer ones and, on a contiguous row, each block's least key is found by a vectorisable loop
first: a block whose least key does not beat the root is passed over. One compiled kernel per storage type
(FLOAT16 as UINT16, FLOAT32 as INT32, each integer type as itself); every layout is a 1-D view of the input's
memory, a row offset per row and one element step along the axis.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from .jit import jit

_LAST = np.iinfo(np.int64).max  # NaN's key: after every number, in both directions
BLOCK = 256  # elements whose least key is found first (a vectorised loop); most blocks then hold no new entry


def _key(data, i, sign_bit, inf_bits, largest):  # type: ignore[no-untyped-def]  # the stand-in; Numba calls the overload
    raise NotImplementedError


@overload(_key, jit_options={"nogil": True})
def _key_typed(data, i, sign_bit, inf_bits, largest):  # type: ignore[no-untyped-def]
    """Element ``i``'s rank key, an INT64, smaller first and equal exactly where the values tie.

    Floats come as their bits (FLOAT16 as UINT16, FLOAT32 as INT32; ``sign_bit`` and ``inf_bits`` say which):
    the magnitude's bits order the magnitudes, so the key is the magnitude, negated where the sign is set (-0.0
    and +0.0 both 0), bits inverted for the largest (the order reversed without overflow), and NaN of any sign
    and payload the greatest key. Integers (``sign_bit`` None) are their value, inverted for the largest.
    Branch-free, so the block minimum below vectorises."""
    if isinstance(sign_bit, types.NoneType):
        def integer(data, i, sign_bit, inf_bits, largest):  # type: ignore[no-untyped-def]
            v = np.int64(data[i])
            return ~v if largest else v
        return integer

    def floating(data, i, sign_bit, inf_bits, largest):  # type: ignore[no-untyped-def]
        bits = np.int64(data[i]) & (2 * sign_bit - 1)  # the bits as an unsigned number (INT32's sign bit too)
        magnitude = bits & (sign_bit - 1)
        v = -magnitude if bits & sign_bit else magnitude
        v = ~v if largest else v
        return _LAST if magnitude > inf_bits else v
    return floating


@jit
def _after(a, ia, b, ib):  # type: ignore[no-untyped-def]
    """Whether (key a, index ia) ranks after (key b, index ib)."""
    return a > b or (a == b and ia > ib)


@jit
def _sift_down(keys, index, k, p):  # type: ignore[no-untyped-def]
    """Restore the heap (the root ranks after both children) below position ``p`` of the first ``k``."""
    while True:
        c = 2 * p + 1
        if c >= k:
            return
        if c + 1 < k and _after(keys[c + 1], index[c + 1], keys[c], index[c]):
            c += 1
        if not _after(keys[c], index[c], keys[p], index[p]):
            return
        keys[p], keys[c] = keys[c], keys[p]
        index[p], index[c] = index[c], index[p]
        p = c


@jit
def select_rows(data, sign_bit, inf_bits, offsets, step, n, k, largest, values, indices, start, stop):  # type: ignore[no-untyped-def]
    """Rows ``[start, stop)``: row r's elements are ``data[offsets[r] + j * step]`` for j in [0, n); its K best in
    order go to ``values[r]`` (the elements themselves, bits unchanged) and ``indices[r]``."""
    keys = np.empty(k, np.int64)
    index = np.empty(k, np.int64)
    for r in range(start, stop):
        base = offsets[r]
        for j in range(k):  # the first K, then a heap of them
            keys[j] = _key(data, base + j * step, sign_bit, inf_bits, largest)
            index[j] = j
        for p in range(k // 2 - 1, -1, -1):
            _sift_down(keys, index, k, p)
        worst = keys[0]
        for block in range(k, n, BLOCK):
            end = min(block + BLOCK, n)
            least = _LAST
            if step == 1:  # contiguous: the block's least key in a vectorised loop
                for j in range(block, end):
                    least = min(least, _key(data, base + j, sign_bit, inf_bits, largest))
                if least >= worst:  # an equal key has a higher index than the root's: it ranks after it
                    continue
            for j in range(block, end):  # an element enters where its key is lower than the root's
                key = _key(data, base + j * step, sign_bit, inf_bits, largest)
                if key < worst:
                    keys[0] = key
                    index[0] = j
                    _sift_down(keys, index, k, 0)
                    worst = keys[0]
        for last in range(k - 1, -1, -1):  # the worst first: sorted from the back
            indices[r, last] = index[0]
            values[r, last] = data[base + index[0] * step]
            keys[0], index[0] = keys[last], index[last]
            _sift_down(keys, index, last, 0)
