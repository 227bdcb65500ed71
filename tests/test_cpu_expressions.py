"""Random element expressions through the generated CPU kernels, bit for bit against the NumPy lowering.

``tests/expr_strategies.py`` draws well-typed trees of every node; each is compiled by the Numba code
generator (``cpu_kernels.codegen``) and run over the layouts its kernel walks differently: packed runs (the
scalar loop), in place (the loop over one array), other operands of stride 0 (each hoisted out of the loop),
strided operands (element by element) and, with the streaming threshold lowered for the test, the LLVM
vector code of streaming stores between unaligned scalar heads and tails. Every result is compared with
``numpy_lowering.evaluate``, which tests/test_expr.py checks against an element-by-element evaluator.

Each distinct expression compiles a module (about a second, cold), so the drawn examples are few and fixed
(derandomized: a warm kernel cache serves later runs); explicit examples make sure that FLOAT16 data,
Select of FLOAT16 values, integer Subtract and Widen, in-place and hoisted operands are always among them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from opendml import expr as ex
from opendml.backends import cpu_kernels
from opendml.dtypes import DataType
from opendml.kernels.numpy_lowering import evaluate
from opendml.kernels.spec import KernelSpec
from opendml.ops.minimum import pick
from tests.expr_strategies import ExpressionCase, edges, expressions
from tests.helpers import same_values

pytestmark = pytest.mark.skipif(not cpu_kernels.numba_available(),
                                reason="Numba is not installed: the generated kernels are the fast ones")

F32, F16 = DataType.FLOAT32, DataType.FLOAT16
I8, I16, U8, I64, U64 = DataType.INT8, DataType.INT16, DataType.UINT8, DataType.INT64, DataType.UINT64
UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
SHIFT = 3  # elements every input starts after its buffer's first; the output starts 1 after its own


# FLOAT32 values halfway between FLOAT16 neighbours (normal, subnormal, at the overflow threshold): a
# FLOAT16 store rounds each to the even one.
HALF_TIES = [1 + 2.0**-11, 1 + 3 * 2.0**-11, 2049.0, 2.0**-25, 3 * 2.0**-25, 2.0**-14 + 2.0**-25, 65520.0]


def values(t: DataType, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` values of ``t``: its edge values, small ones (ties for Less and Select), any bits."""
    dtype = t.numpy
    ties = [sign * v for v in HALF_TIES for sign in (1, -1)] if t is F32 else []
    edge = np.array(edges(t) + ties, dtype)
    small = np.arange(-3, 4).astype(dtype) if t.is_float or t.is_signed else np.arange(0, 4).astype(dtype)
    raw = rng.integers(0, np.iinfo(UNSIGNED[t.size]).max, count, dtype=UNSIGNED[t.size], endpoint=True)
    kind = rng.integers(0, 3, count)
    out = raw.view(dtype).copy()
    out[kind == 0] = rng.choice(edge, int((kind == 0).sum()))
    out[kind == 1] = rng.choice(small, int((kind == 1).sum()))
    return out


def placed(a: np.ndarray, shift: int, step: int = 1) -> np.ndarray:
    """A writable view of ``a``'s values that starts ``shift`` elements into a buffer, ``step`` apart."""
    buf = np.zeros(shift + a.size * step, a.dtype)
    view = buf[shift::step]
    view[...] = a
    return view


def hoisted(value: np.generic, count: int) -> np.ndarray:
    """``count`` elements of one value: stride 0 over a writable one-element array (as a broadcast
    operand's view is), so its kernel hoists the load out of the loop."""
    one = np.array([value])
    return np.lib.stride_tricks.as_strided(one, shape=(count,), strides=(0,))


def layouts(case: ExpressionCase, count: int, rng: np.random.Generator,
            hoist: int) -> Iterator[tuple[str, list[np.ndarray], np.ndarray]]:
    """(name, operands, output) of each layout the generated kernel walks apart."""
    data = [values(t, count, rng) for t in case.inputs]
    out_type = case.expr.type.numpy
    yield "packed", [a.copy() for a in data], np.empty(count, out_type)
    yield "unaligned", [placed(a, SHIFT) for a in data], placed(np.zeros(count, out_type), 1)
    if len(data) > 1:
        chosen = [k for k in range(1, len(data)) if hoist >> k & 1] or [len(data) - 1]
        operands = [hoisted(a[0], count) if k in chosen else placed(a, SHIFT) for k, a in enumerate(data)]
        yield f"operands {chosen} of stride 0", operands, placed(np.zeros(count, out_type), 1)
    yield "strided", [placed(a, 1, 2) for a in data], placed(np.zeros(count, out_type), 0, 3)
    yield "lead of stride 0", [hoisted(data[0][0], count), *data[1:]], np.empty(count, out_type)
    if case.inputs[0] is case.expr.type:
        alias = placed(data[0], 1)
        yield "in place", [alias, *(placed(a, SHIFT) for a in data[1:])], alias


def check(case: ExpressionCase, counts: tuple[int, ...], seed: int, hoist: int, streaming: bool) -> None:
    spec = KernelSpec("TEST", case.inputs, case.expr.type, case.expr, case.scalars)
    run = cpu_kernels.load("numba").elementwise(spec)
    rng = np.random.default_rng(seed)
    for count in counts:
        for name, operands, out in layouts(case, count, rng, hoist):
            expected = np.broadcast_to(evaluate(case.expr, operands, case.scalars), (count,)).copy()
            run(*operands, out, 1)
            assert same_values(out, expected), (f"{case.expr!r} {case.scalars}, {name}, {count} elements"
                                                f"{', streamed' if streaming else ''}: {first_difference(out, expected)}")


def first_difference(got: np.ndarray, expected: np.ndarray) -> str:
    """Where two results first differ (NaN equal to NaN), with both values."""
    for k in range(got.size):
        if not same_values(got[k:k + 1], expected[k:k + 1]):
            return f"element {k}: got {got[k]!r}, expected {expected[k]!r}"
    return "no element differs"


def _case(value: ex.Expr, stored: DataType, inputs: tuple[DataType, ...], *scalars: np.generic) -> ExpressionCase:
    return ExpressionCase(ex.Store(value, stored), inputs, scalars)


def _f32(k: int) -> ex.Expr:
    return ex.ToFloat32(ex.Load(k, F16))


# Always run, whatever is drawn: FLOAT16 loads, Select of FLOAT16 values and a FLOAT16 store, in place.
HALVES = _case(ex.Select(ex.Less(_f32(0), ex.Multiply(_f32(1), ex.Param(0, F32))), ex.Load(0, F16), ex.Load(1, F16)),
               F16, (F16, F16), np.float32(-1.5))
# FLOAT32 values rounded once to a FLOAT16 output (x * -1 + -0, exact: the operand's values, ties included).
TO_HALF = _case(ex.Add(ex.Multiply(ex.Load(0, F32), ex.Param(0, F32)), ex.Param(1, F32)), F16, (F32,),
                np.float32(-1.0), np.float32(-0.0))
# DEQUANTIZE_LINEAR's shape: an exact UINT8 - INT8 difference in INT16, to float32, times a scale operand.
_DIFFERENCE = ex.Subtract(ex.Widen(ex.Load(0, U8), I16), ex.Widen(ex.Load(1, I8), I16))
DIFFERENCE = _case(ex.Multiply(ex.ToFloat32(_DIFFERENCE), ex.Load(2, F32)), F32, (U8, I8, F32))
# An integer Subtract stored as itself, through a Select of two widened operands.
WIDENED = _case(ex.Select(ex.Less(ex.Widen(ex.Load(0, I8), I64), ex.Param(0, I64)), ex.Widen(ex.Load(1, U8), I64),
                          ex.Subtract(ex.Widen(ex.Load(0, I8), I64), ex.Widen(ex.Load(1, U8), I64))),
                I64, (I8, U8), np.int64(-2))
# 64-bit unsigned comparisons and conversions (2**63 and up), in place; the IsNumber is false for 0 * inf.
_BIG = ex.ToFloat32(ex.Load(0, U64))
UNSIGNED_64 = _case(ex.Select(ex.IsNumber(ex.Multiply(_BIG, ex.Param(1, F32))),
                              ex.Select(ex.Less(ex.Load(0, U64), ex.Param(0, U64)), ex.Param(0, U64), ex.Load(0, U64)),
                              ex.Load(0, U64)), U64, (U64,), np.uint64(2**63 + 2**40 + 1), np.float32(np.inf))
# QUANTIZE_LINEAR's shape: a division by a scalar, rounded, saturated to INT16, plus an INT8 operand in
# INT32, saturated to UINT8 (in place: the input is not the output's type, so never aliased).
_ROUNDED = ex.Saturate(ex.Round(ex.Divide(ex.Load(0, F32), ex.Param(0, F32))), I16)
QUANTIZED = _case(ex.Saturate(ex.Add(ex.Widen(_ROUNDED, DataType.INT32), ex.Widen(ex.Load(1, I8), DataType.INT32)),
                              U8), U8, (F32, I8), np.float32(0.5))
# Float to 64-bit integers (NaN, infinities and 2**63 and up among the values) and a 64-bit one narrowed.
SATURATED_64 = _case(ex.Select(ex.Less(ex.Saturate(ex.Load(0, F32), I64), ex.Param(0, I64)),
                               ex.Saturate(ex.Load(1, U64), I64), ex.Saturate(ex.Divide(ex.Load(0, F32), ex.Param(1, F32)),
                                                                         I64)), I64, (F32, U64),
                     np.int64(-5), np.float32(-0.0))
# Bits counted in three widths (a negative INT8's eight, never a sign-extension's), compared and stored as UINT8.
_COUNTS = [ex.BitCount(ex.Load(k, t)) for k, t in enumerate((I8, I64, DataType.UINT16))]
BIT_COUNTS = _case(ex.Select(ex.Less(_COUNTS[0], _COUNTS[1]), _COUNTS[2], _COUNTS[0]), U8, (I8, I64, DataType.UINT16))


def _integer_arithmetic(t: DataType) -> ExpressionCase:
    """The binary family's integer nodes in one type (a signed 8-bit one held wider by Numba, a 64-bit one with no
    wider type): a truncated quotient against a remainder choosing a wrapping product or difference."""
    a, b = ex.Load(0, t), ex.Load(1, t)
    return _case(ex.Select(ex.Less(ex.Divide(a, b), ex.Remainder(a, b)), ex.Wrapping(a, b, "*"),
                           ex.Wrapping(a, b, "-")), t, (t, t))


def _bitwise(t: DataType, other: DataType) -> ExpressionCase:
    """Every Bitwise operation in one type (counts of the width and more among the values: masked), and a Wrap
    through ``other`` and back (a narrower one keeps the low bits, a wider one extends by the sign)."""
    a, b = ex.Load(0, t), ex.Load(1, t)
    shifted = ex.Select(ex.Less(ex.Bitwise(a, b, "<<"), ex.Bitwise(a, b, ">>")), ex.Bitwise(a, b, "&"),
                        ex.Bitwise(a, b, "|"))
    return _case(ex.Bitwise(shifted, ex.Wrap(ex.Wrap(b, other), t), "^"), t, (t, t))


# MIN's float selection (SignBit telling -0.0 from +0.0, NaN operands) and MODULUS_FLOOR's shape (a Remainder moved
# by the divisor, a zero signed as it).
_MIN = pick(ex.Load(0, F32), ex.Load(1, F32), True)
_R = ex.Remainder(ex.Load(0, F32), ex.Load(1, F32))
SIGNED_ZEROS = _case(ex.Select(ex.SignBit(_R), ex.Add(_R, ex.Load(1, F32)), _MIN), F32, (F32, F32))

EXAMPLES = {"signed zeros": SIGNED_ZEROS, "integer arithmetic INT8": _integer_arithmetic(I8), "integer arithmetic INT64": _integer_arithmetic(I64),
            "integer arithmetic UINT64": _integer_arithmetic(U64), "FLOAT16 select": HALVES, "to FLOAT16": TO_HALF, "difference": DIFFERENCE, "widened": WIDENED,
            "UINT64": UNSIGNED_64, "quantized": QUANTIZED, "saturated to 64 bits": SATURATED_64,
            "bit counts": BIT_COUNTS, "bitwise INT8": _bitwise(I8, U64), "bitwise UINT64": _bitwise(U64, I8),
            "bitwise UINT8": _bitwise(U8, DataType.INT16)}

F64 = DataType.FLOAT64
_D = ex.Load(0, F64)
# FLOAT64 values (CAST's, IF's): a Select of a loaded double and an INT8 widened exactly, in place (streamed: eight
# doubles a vector); doubles saturated to three integer types (NaN, infinities, 2**63 and past among the values);
# a double rounded once to FLOAT16 (scalar code) and to FLOAT32 beside a FLOAT32 and a UINT64 widened.
DOUBLES = {
    "FLOAT64 select": _case(ex.Select(ex.Less(ex.Load(1, I8), ex.Param(0, I8)), _D, ex.ToFloat64(ex.Load(1, I8))),
                            F64, (F64, I8), np.int8(3)),
    "FLOAT64 saturated": _case(ex.Select(ex.Less(ex.Saturate(_D, I64), ex.Param(0, I64)),
                                         ex.Widen(ex.Saturate(_D, DataType.UINT32), I64),
                                         ex.Widen(ex.Saturate(_D, I8), I64)), I64, (F64,), np.int64(-7)),
    "FLOAT64 to FLOAT16": _case(ex.Select(ex.SignBit(ex.Store(_D, F32)), _D, ex.Load(1, F64)), F16, (F64, F64)),
    "FLOAT64 to FLOAT32": _case(ex.Select(ex.SignBit(ex.Load(1, F32)), ex.ToFloat64(ex.Load(0, U64)),
                                          ex.ToFloat64(ex.Load(1, F32))), F32, (U64, F32)),
}


@pytest.mark.parametrize("case", [pytest.param(case, id=name, marks=() if name == "FLOAT64 select" else pytest.mark.slow)
                                  for name, case in DOUBLES.items()])  # a module each: one by default
def test_float64_expressions_match_the_numpy_lowering(case: ExpressionCase) -> None:
    """Each FLOAT64 node in the generated kernels over every layout, scalar and (where streamable) streamed."""
    from opendml.backends.cpu_kernels import fast, vectors

    check(case, (7, 300), 5, 0b10, streaming=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fast, "STREAM_MIN_BYTES", 1)
        check(case, (300, 1003), 6, 0b10, vectors.streamable(case.expr))


def interesting(case: ExpressionCase) -> bool:
    """Trees of a few nodes (derandomized drawing favours the smallest), of at most three operands (as
    DEQUANTIZE_LINEAR: each subset of hoisted operands is a loop of its own, so four operands compile eight)."""
    return len(list(ex.nodes(case.expr))) >= 5 and len(case.inputs) <= 3


DRAWN = settings(max_examples=max(1, settings().max_examples // 5),  # 4 under the ci profile
                 derandomize=True, deadline=None)


def _examples(test: Callable[..., None]) -> Callable[..., None]:
    for case in EXAMPLES.values():
        test = example(case=case, small=5, seed=len(case.inputs), hoist=0b10)(test)
    return test


@_examples
@DRAWN
@given(case=expressions(max_depth=4).filter(interesting), small=st.integers(1, 40), seed=st.integers(0, 2**32 - 1),
       hoist=st.integers(0, 15))
def test_random_expressions_match_the_numpy_lowering(case: ExpressionCase, small: int, seed: int,
                                                     hoist: int) -> None:
    """Below the streaming threshold (the scalar loops and the element-by-element walk), then with every
    output streamed (the threshold lowered to one byte, so a few hundred elements take the vector code);
    expressions with FLOAT16 data are never streamed, and run the scalar code again. One compiled module
    serves both: the entry decides at each call."""
    from opendml.backends.cpu_kernels import codegen, fast, vectors

    check(case, (small, 300), seed, hoist, streaming=False)
    streaming = vectors.streamable(case.expr)
    if streaming:  # the threshold patched below is the one the generated entry reads
        assert "o.nbytes >= host.STREAM_MIN_BYTES" in codegen.source(case.expr)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fast, "STREAM_MIN_BYTES", 1)
        check(case, (small, 300, 1000 + small), seed + 1, hoist, streaming)
