"""The rounding of a double evaluation (FLOAT32, FLOAT16) and its test: whether the double lies within ``NEAR``
ulps of a rounding midpoint (``opendml.rounded.method``'s test, without branches), and the helpers every
evaluation shares."""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from ....kernels.cache import use_for_numba
from ....rounded import NEAR, PRECISIONS
from ..halves import round_double_to_half
from ..rounded import _double_bits

use_for_numba()  # before the decorators: Numba picks each function's cache directory then
# The evaluations are inlined by Numba, not left to LLVM, whose inliner finds the larger ones too costly and
# leaves a call in the kernel's loop, which then cannot vectorize. Inlined, they take the caller's error model,
# whose float division checks the divisor (a branch raising ZeroDivisionError, which also keeps a loop from
# vectorizing): they divide with ``arithmetic.divide``, IEEE's division alone (their divisors are never zero).
inline = njit(nogil=True, cache=True, inline="always")

_FLOAT32 = PRECISIONS["FLOAT32"]
_BASE, _LOWEST = _FLOAT32.base, _FLOAT32.lowest
_BASE16, _LOWEST16 = PRECISIONS["FLOAT16"].base, PRECISIONS["FLOAT16"].lowest
_SMALLEST, _SMALLEST16 = 2.0 ** (_LOWEST - 1023), 2.0 ** (_LOWEST16 - 1023)  # the formats' smallest normal values
FRACTION = (1 << 52) - 1  # a double's fraction field
MAGIC = 1.5 * 2.0**52  # adding it rounds to an integer kept in the low bits
MAGIC_BITS = int(np.float64(MAGIC).view(np.int64))


@inline
def _near(y, base, lowest):  # type: ignore[no-untyped-def]
    """Whether the double ``y`` (finite, nonzero) lies within NEAR ulps of a midpoint of the grid ``base``,
    ``lowest`` (``opendml.rounded.method.Precision``): ``opendml.rounded.method``'s test, without branches."""
    bits = _double_bits(y)
    field = (bits >> 52) & 2047
    significand = (bits & FRACTION) | (1 << 52)
    shift = min(base + max(0, lowest - field), 60)
    return abs((significand & ((1 << shift) - 1)) - (1 << (shift - 1))) <= NEAR


@inline
def _near_grid(y, base, smallest):  # type: ignore[no-untyped-def]
    """Whether the double ``y`` may lie within NEAR ulps of a midpoint of a format of ``53 - base`` significant bits
    whose smallest normal value is ``smallest``: ``_near``'s test, in a handful of vector operations. Where ``|y| >=
    smallest`` it is ``_near``'s: the low ``base`` bits of ``y``'s fraction against a half (``(L + NEAR - half) mod
    2**base <= 2 NEAR`` is ``|L - half| <= NEAR``). Below, ``smallest`` is added first: the sum lies in the first
    binade, whose ulp at the format's precision is the subnormals' own, so its low bits measure the distance to the
    subnormals' midpoints in ulps of that binade's doubles, at least twice ``y``'s (the addition's rounding moves it
    by at most half of one): a ``y`` within NEAR of its own ulps of a midpoint is still flagged, and a zero is not.
    Past the format's top, the low bits say nothing, and the result (an infinity) needs no test."""
    a = abs(y)
    z = a + (smallest if a < smallest else 0.0)
    half = 1 << (base - 1)
    return ((_double_bits(z) + (NEAR - half)) & ((1 << base) - 1)) <= 2 * NEAR


@inline
def near_float32(y):  # type: ignore[no-untyped-def]
    """Whether the double ``y`` (finite) may lie within NEAR ulps of a FLOAT32 midpoint (``_near_grid``)."""
    return _near_grid(y, _BASE, _SMALLEST)


@inline
def to_float32(y, inside):  # type: ignore[no-untyped-def]
    """The evaluation ``y`` rounded to FLOAT32, and whether to redo it (outside the range, or near a midpoint)."""
    return np.float32(y), near_float32(y) | (not inside)


@inline
def to_float16(y, inside):  # type: ignore[no-untyped-def]
    """The evaluation ``y`` rounded once to FLOAT16 and held as a float32 (at or past FLOAT16's top, an infinity:
    such a double is past the last midpoint or near it), and whether to redo it."""
    return round_double_to_half(y), _near_grid(y, _BASE16, _SMALLEST16) | (not inside)


SPLIT = 134217729.0  # 2**27 + 1, Veltkamp's constant


@inline
def fast_two_sum(a, b):  # type: ignore[no-untyped-def]
    """``a + b`` rounded and what the rounding lost, exactly (Fast2Sum: ``|a| >= |b|``, or ``a`` 0)."""
    s = a + b
    return s, b - (s - a)


@inline
def two_sum(a, b):  # type: ignore[no-untyped-def]
    """``a + b`` rounded and what the rounding lost, exactly, whatever their magnitudes (Knuth's TwoSum)."""
    s = a + b
    back = s - a
    return s, (a - (s - back)) + (b - back)


@inline
def split(a):  # type: ignore[no-untyped-def]
    """``a`` as ``top + rest`` exactly, each of 26 significant bits at most (Veltkamp's split; no overflow below
    ``2**996``)."""
    t = a * SPLIT
    top = t - (t - a)
    return top, a - top


@intrinsic
def fma(typingctx, a, b, c):  # type: ignore[no-untyped-def]
    """``a * b + c`` of float64s rounded once (LLVM's ``llvm.fma``: the CPU's fused multiply-add where it has one,
    which vectorizes, else a correctly rounded library call). One rounding where ``a * b + c`` written out has two:
    an evaluation in them is at least as accurate as its bound, proven for the written-out form, allows (the bounds
    add the roundings' errors; a fused step leaves one of them out), and takes half the operations. Never for the
    error-free transformations (``two_sum``, ``split``...), whose exactness rests on each rounding as written."""
    if not (a == b == c == types.float64):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        double = ir.DoubleType()
        function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(double, [double] * 3),
                                                  "llvm.fma.f64")
        return builder.call(function, args)

    return types.float64(types.float64, types.float64, types.float64), codegen


@intrinsic
def prefer_wide_vectors(typingctx):  # type: ignore[no-untyped-def]
    """Asks LLVM to vectorize the calling function's loops with 512-bit vectors where the CPU has them: its function
    attribute ``"prefer-vector-width"="512"`` (x86 targets with AVX-512 otherwise prefer 256 bits; a CPU without
    them keeps its widest). The checked runs' double evaluations are bound by arithmetic, not memory: twice the
    lanes a vector."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        attributes = builder.function.attributes
        if isinstance(attributes, set):  # llvmlite's AttributeSet; its add() takes no key-value attribute
            set.add(attributes, '"prefer-vector-width"="512"')
        return context.get_dummy_value()

    return types.none(), codegen
