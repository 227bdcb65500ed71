"""The vector-code evaluations of the correctly rounded functions (``cpu_kernels.fast_functions``) and the
generated kernels that run them in checked blocks: within their error bound, marking what they cannot trust,
and giving the exact path's bits (the independent model of tests/rounding_oracle.py decides)."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

import opendml as dml
from opendml.rounded.evaluate import evaluate
from opendml.rounded.tables import hard_cases
from tests.rounding_oracle import correctly_rounded

numba = pytest.importorskip("numba", reason="the vector-code evaluations are Numba's")

CHUNK = 512  # codegen_names.CHUNK, restated: the block boundaries the kernels below straddle


@pytest.fixture(autouse=True)
def _numba_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled kernels, compiled before the call returns (not the NumPy path while they compile)."""
    monkeypatch.setenv("OPENDML_CPU_KERNELS", "numba")
    monkeypatch.setenv("OPENDML_TIERED", "0")


@dataclass(frozen=True)
class Fast:
    """A function with a vector-code evaluation: its range (open; every 997th FLOAT32 input between is checked),
    a NumPy double reference and that reference's own error bound in ulps, the evaluation's documented bound,
    inputs outside the range (marked), and the operator's functional name."""

    low: float
    high: float
    reference: Callable[[np.ndarray], np.ndarray]
    reference_ulps: int
    bound: int
    outside: tuple[float, ...]
    python: str | None  # None: no operator computes it alone (EXPM1: ELU's, below)


RANGES = {
    "EXP": Fast(-103.0, 88.0, np.exp, 1, 4, (88.0, 88.5, 100.0, -103.0, -104.0, -1e30, 3e38), "exp"),
    "LOG": Fast(1e-45, 3.4028235e38, np.log, 1, 4, (0.0, -0.0, -1e-45, -1.0, -3e38), "log"),
    # From |x| = 44 on TANH's evaluation is +-1 itself, unmarked (the exact value rounds to it): the kernels' tests
    # check those inputs against the model; the bound holds below. A zero is marked (its sign: the exact path).
    "TANH": Fast(-44.0, 44.0, np.tanh, 1, 16, (0.0, -0.0), "tanh"),
    # Past 700 in magnitude SIGMOID's evaluation is clamped, unmarked (it rounds to +0.0 or 1 as the exact value
    # does): the kernels' tests check those inputs against the model; the bound holds between.
    "SIGMOID": Fast(-700.0, 700.0, lambda x: 1.0 / (1.0 + np.exp(-x)), 3, 10, (), "sigmoid"),
    "SINH": Fast(-88.0, 88.0, np.sinh, 1, 12, (88.0, -88.0, 100.0, -1e30), "sinh"),
    "COSH": Fast(-88.0, 88.0, np.cosh, 1, 10, (88.0, -88.0, 100.0, -1e30), "cosh"),
    "EXPM1": Fast(-103.0, 88.0, np.expm1, 1, 14, (88.0, 100.0, -103.0, -104.0, -1e30), None),
    "SIN": Fast(-131072.0, 131072.0, np.sin, 1, 4, (131072.0, -131072.0, 3e5, -1e30, 3e38), "sin"),
    "COS": Fast(-131072.0, 131072.0, np.cos, 1, 5, (131072.0, -131072.0, 3e5, -1e30, 3e38), "cos"),
    "TAN": Fast(-131072.0, 131072.0, np.tan, 1, 10, (131072.0, -131072.0, 3e5, -1e30, 3e38), "tan"),
    "SOFTSIGN": Fast(-3.4028235e38, 3.4028235e38, lambda x: x / (1.0 + np.abs(x)), 2, 2, (), "softsign"),
    "ATAN": Fast(-3.4028235e38, 3.4028235e38, np.arctan, 1, 5, (), "atan"),
    "ASINH": Fast(-3.4028235e38, 3.4028235e38, np.arcsinh, 2, 13, (), "asinh"),
    "ACOSH": Fast(0.99999994, 3.4028235e38, np.arccosh, 2, 7, (0.99999994, 0.5, 0.0, -1.0, -3e38), "acosh"),
    "ATANH": Fast(-1.0, 1.0, np.arctanh, 2, 13, (1.0, -1.0, 1.0000001, 3e38, -3e38), "atanh"),
    "ASIN": Fast(-1.0, 1.0, np.arcsin, 2, 8, (1.0, -1.0, 1.0000001, 3e38, -3e38), "asin"),
    "ACOS": Fast(-1.0, 1.0000001, np.arccos, 2, 8, (-1.0, 1.0000001, -1.0000001, 3e38, -3e38), "acos"),
    "SOFTPLUS": Fast(-100.0, 3.4028235e38, lambda x: np.logaddexp(0.0, x), 2, 16, (-100.0, -1e30, -3e38), "softplus"),
    # From |x| = 4 on, ERF's evaluation is +-1 itself, unmarked (fast_functions.error_function): the kernels' tests
    # check those inputs against the model; the bound holds below.
    "ERF": Fast(-4.0, 4.0, lambda x: np.frompyfunc(math.erf, 1, 1)(x).astype(np.float64), 1, 5, (), "erf"),
    # At and below -14.41 GELU's evaluation is -2**-200 itself, unmarked (the result rounds to -0.0): the kernels'
    # tests check those inputs against the model.
    "GELU": Fast(-14.41, 3.4028235e38, lambda x: _gelu_reference(x), 4, 10, (), "gelu"),
}
def _gelu_reference(x: np.ndarray) -> np.ndarray:
    """``x / 2 * erfc(-x / sqrt(2))`` with the C library's ``erfc``, its argument split in two (``x / sqrt(2)``
    rounded, and what the rounding lost, to first order): within 2 ulps on a wide sample against mpmath; 4 assumed."""
    high = x * float.fromhex("0x1.6a09e66p-1")  # 1 / sqrt(2) to 28 bits: exact
    s = high + x * float.fromhex("0x1.fcef32422cbecp-31")  # and the next 53 bits
    lost = x * float.fromhex("0x1.fcef32422cbecp-31") - (s - high)
    erfc = np.frompyfunc(math.erfc, 1, 1)(-s).astype(np.float64)
    with np.errstate(over="ignore"):
        return (x * 0.5) * (erfc + 2 / math.sqrt(math.pi) * np.exp(-(s * s)) * lost)


FUNCTIONS = sorted(RANGES)
OPERATORS = [name for name in FUNCTIONS if RANGES[name].python]  # those with an operator of their own


def _model(x: np.ndarray, name: str = "EXP") -> np.ndarray:
    return np.array([correctly_rounded(name, float(v), "FLOAT32") for v in x], np.float32)


def _bits(a: np.ndarray) -> np.ndarray:
    """The FLOAT32 bits, every NaN as one (NaN payloads are the library's: docs/semantics.md, section 5)."""
    a = np.ascontiguousarray(a, np.float32)
    return np.where(np.isnan(a), np.uint32(0x7FC00000), a.view(np.uint32))


@numba.njit
def _doubles(f, x):  # type: ignore[no-untyped-def]
    """The double evaluation (``fast_functions.NAME``: the double and whether the input is in range)."""
    out = np.empty(x.size, np.float64)
    for i in range(x.size):
        out[i] = f(x[i])[0]
    return out


@numba.njit
def _checked(f, rounding, x):  # type: ignore[no-untyped-def]
    """Each value's evaluation rounded (``fast_functions.to_float32``) and whether it is redone."""
    out = np.empty(x.size, np.float32)
    redo = np.empty(x.size, np.bool_)
    for i in range(x.size):
        y, inside = f(x[i])
        out[i], redo[i] = rounding(y, inside)
    return out, redo


@pytest.mark.parametrize("name", FUNCTIONS)
def test_the_double_evaluation_is_within_its_bound_over_its_range(name: str) -> None:
    """Against a NumPy double reference (within its own few ulps of the exact value), on every 997th FLOAT32 input
    of the range (both signs where it has them) and the range's ends: within the documented bound plus the
    reference's, far inside the rounding test's 32 ulps."""
    from opendml.backends.cpu_kernels import fast_functions

    fast = RANGES[name]
    low, high = np.float32(fast.low), np.float32(fast.high)
    ends = np.array([np.nextafter(low, high), np.nextafter(high, low)]).view(np.uint32)  # just inside
    if fast.low < 0:
        x = np.concatenate([np.arange(np.uint32(0x80000000), ends[0], 997, dtype=np.uint32),
                            np.arange(0, ends[1], 997, dtype=np.uint32), ends])
    else:
        x = np.concatenate([np.arange(ends[0], ends[1], 997, dtype=np.uint32), ends])
    x = x.view(np.float32)
    got = _doubles(getattr(fast_functions, name), x)
    ulps = np.abs(got.view(np.int64) - fast.reference(x.astype(np.float64)).view(np.int64))
    assert ulps.max() <= fast.bound + fast.reference_ulps, (x[ulps.argmax()], ulps.max())


@pytest.mark.parametrize("name", FUNCTIONS)
def test_the_checked_evaluation_marks_what_it_cannot_trust(name: str) -> None:
    """Outside its range (NaN, the infinities, overflow, underflow, a logarithm's zero and negatives) the
    evaluation is marked; inside, an unmarked result is the model's, the function's hard cases included."""
    from opendml.backends.cpu_kernels import fast_functions

    evaluation = getattr(fast_functions, name)
    fast = RANGES[name]
    low, high = fast.low, fast.high
    assert _checked(evaluation, fast_functions.to_float32, np.array([np.nan, np.inf, -np.inf, *fast.outside], np.float32))[1].all()
    rng = np.random.default_rng(8)
    hard = hard_cases(name, "FLOAT32").inputs.view(np.float32)
    x = np.concatenate([hard[rng.permutation(len(hard))[:300]], _spread(rng, 300, name),
                        np.array([1.0, 1e-30, 87.99999, 1.0000001, 0.99999994], np.float32)])
    x = x[(x > low) & (x < high)]
    got, redo = _checked(evaluation, fast_functions.to_float32, x)
    assert redo.sum() < len(x) // 2  # most hard cases are far enough from a midpoint for a 4-ulp evaluation
    np.testing.assert_array_equal(_bits(got[~redo]), _bits(_model(x[~redo], name)))
    # Those whose reference double lies within 32 - (bound + reference's) ulps of a FLOAT32 midpoint: the
    # evaluation's lies within NEAR, so every one is marked (whichever way it would have rounded).
    y = fast.reference(hard.astype(np.float64))
    normal = (np.abs(y) > 2.0**-126) & (np.abs(y) < 2.0**127)
    distance = np.abs((y.view(np.int64) & ((1 << 29) - 1)) - (1 << 28))
    near = hard[normal & (distance <= 32 - fast.bound - fast.reference_ulps)]
    assert len(near) >= 5
    assert _checked(evaluation, fast_functions.to_float32, near)[1].all()


def _spread(rng: np.random.Generator, n: int, name: str) -> np.ndarray:
    if name in ("ATANH", "ACOSH", "ASIN", "ACOS"):  # their domains, every magnitude of |x| and of x - 1, and 5 % outside
        u = rng.uniform(-1, 1, n)
        u = np.where(rng.random(n) < 0.3, np.ldexp(u, -rng.integers(1, 140, n)), u)
        inside = u if name != "ACOSH" else 1.0 + np.abs(np.where(rng.random(n) < 0.5, u, np.ldexp(u, 60)))
        return np.where(rng.random(n) < 0.05, rng.uniform(-3, 3, n), inside).astype(np.float32)
    if name != "LOG":
        wide = rng.uniform(-110, 110, n) if name not in ("ERF", "GELU") else rng.uniform(-16, 16, n)
        return np.where(rng.random(n) < 0.3, np.ldexp(wide, -rng.integers(6, 140, n)), wide).astype(np.float32)
    magnitude = np.ldexp(rng.uniform(0.5, 1.0, n), rng.integers(-149, 129, n)).astype(np.float32)
    return np.where(rng.random(n) < 0.05, -magnitude, magnitude)  # a few negatives: NaN, by the exact path


def _inputs(name: str, n: int, seed: int) -> np.ndarray:
    """Every magnitude, the function's hard cases at and around every block boundary, and the values its
    evaluation leaves to the exact path."""
    rng = np.random.default_rng(seed)
    x = _spread(rng, n, name)
    hard = hard_cases(name, "FLOAT32").inputs.view(np.float32)
    for start in range(0, n, CHUNK):
        at = slice(max(0, start - 2), min(n, start + 2))
        x[at] = hard[rng.integers(0, len(hard), at.stop - at.start)]
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, 88.72283, 88.72284, -103.97208, -103.972084, 1e-45],
                       np.float32)
    x[rng.integers(0, n, len(special))] = special
    return x


def _function(name: str) -> object:
    return getattr(dml, RANGES[name].python)


@pytest.mark.thin("name", "n")  # each function and each size; every pair under --slow
@pytest.mark.parametrize("name", OPERATORS)
@pytest.mark.parametrize("n", [1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 7])
def test_the_checked_kernel_gives_the_models_bits(name: str, n: int) -> None:
    x = _inputs(name, n, n)
    np.testing.assert_array_equal(_bits(_function(name)(x)), _bits(_model(x, name)))  # type: ignore[operator]


@pytest.mark.parametrize("name", OPERATORS)
def test_the_checked_kernel_in_place_strided_and_with_scale_and_bias(name: str) -> None:
    """In place (a redone element reads its operand after its block was computed), through a strided view
    (element by element), and with ScaleBias where the operator has one (the affine step before the function, one
    FLOAT32 rounding each)."""
    f = _function(name)
    x = _inputs(name, 2 * CHUNK + 3, 11)
    want = _model(x, name)
    y = x.copy()
    f(y, out=y)  # type: ignore[operator]
    np.testing.assert_array_equal(_bits(y), _bits(want))
    wide = np.zeros((x.size, 2), np.float32)
    wide[:, 0] = x
    np.testing.assert_array_equal(_bits(f(wide[:, 0])), _bits(want))  # type: ignore[operator]
    if "scale_bias" not in inspect.signature(f).parameters:  # type: ignore[arg-type]
        return  # an activation: no ScaleBias
    affine = (x * np.float32(0.5)).astype(np.float32) + np.float32(1.25)
    np.testing.assert_array_equal(_bits(f(x, scale_bias=(0.5, 1.25))),  # type: ignore[operator]
                                  _bits(_model(affine.astype(np.float32), name)))


# The threads' shares are the same code for every function: one function of each evaluation module by default (FUSED,
# below), every function under --slow.
@pytest.mark.parametrize("name", [name if name in ("EXP", "TANH", "ASINH", "SIN", "SOFTPLUS") else
                                  pytest.param(name, marks=pytest.mark.slow) for name in OPERATORS])
def test_a_large_array_on_threads_against_the_model_and_the_numpy_path(name: str) -> None:
    """2**19 elements (twice the threads' threshold) shared out to threads: every element equal to the NumPy path's
    (the C library's double function and the table), and 2000 of them with 500 of those left to the exact path to
    the model."""
    x = _inputs(name, 1 << 19, 5)
    got = _function(name)(x)  # type: ignore[operator]
    np.testing.assert_array_equal(_bits(got), _bits(evaluate(name, x, "FLOAT32")))
    low, high = RANGES[name].low, RANGES[name].high
    rng = np.random.default_rng(6)
    outside = np.flatnonzero(~((x > low) & (x < high)))  # left to the exact path: 500 of them
    sample = np.concatenate([rng.integers(0, x.size, 2000), rng.permutation(outside)[:500]])
    np.testing.assert_array_equal(_bits(got[sample]), _bits(_model(x[sample], name)))


# One function of each module of fast_functions by default (the fused kernel's checked blocks are the same code for
# every function); every function under --slow.
FUSED = ("EXP", "TANH", "ASINH", "SIN", "SOFTPLUS")


@pytest.mark.parametrize("name", [name if name in FUSED else pytest.param(name, marks=pytest.mark.slow)
                                  for name in OPERATORS])
def test_a_fused_chain_with_an_extra_output_gives_the_operators_bits(name: str) -> None:
    """CLIP -> the function -> ADD compiled into one kernel that also writes the CLIP's result (a kernel of two
    roots, checked in blocks): both outputs equal to the operators called one by one (the model's bits for the
    function's step), over blocks holding the values left to the exact path."""
    f = _function(name)
    x = _inputs(name, 3 * CHUNK + 5, 21)

    @dml.compile
    def chain(v: np.ndarray) -> tuple[object, object]:
        c = dml.clip(v, -1e30, 1e30)
        return c, dml.add(f(c), c)  # type: ignore[operator]

    clipped, total = chain(x)
    c = np.clip(x, np.float32(-1e30), np.float32(1e30))
    np.testing.assert_array_equal(_bits(clipped), _bits(c))
    np.testing.assert_array_equal(_bits(total), _bits((_model(c, name) + c).astype(np.float32)))


@pytest.mark.parametrize("name", OPERATORS)
def test_float16_data_every_input_against_the_numpy_path_and_a_sample_against_the_model(name: str) -> None:
    """FLOAT16 tensors: the function rounded once to FLOAT16 from the evaluation (through float32 rounded to odd),
    marked near a FLOAT16 midpoint. Every one of the 65,536 inputs equal to the NumPy path's bits (the C library's
    double function and the table), and 1500 of them to the model (``benchmarks/rounding.py --verify --precision
    FLOAT16`` checks every one against its reference)."""
    x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    got = np.asarray(_function(name)(x))  # type: ignore[operator]
    assert got.dtype == np.float16
    wide = x.astype(np.float32)
    np.testing.assert_array_equal(_bits(got.astype(np.float32)), _bits(evaluate(name, wide, "FLOAT16")))
    picked = np.random.default_rng(12).integers(0, x.size, 1500)
    want = np.array([correctly_rounded(name, float(v), "FLOAT16") for v in wide[picked]], np.float32)
    np.testing.assert_array_equal(_bits(got[picked].astype(np.float32)), _bits(want))


def test_expm1_through_elu_against_the_model() -> None:
    """EXPM1 has no operator of its own: ELU of Alpha 1 is it on x <= 0 (1.0 times it, exactly), over blocks
    holding its hard cases, the values left to the exact path and both zeros."""
    x = -np.abs(_inputs("EXPM1", 3 * CHUNK + 9, 31))
    np.testing.assert_array_equal(_bits(dml.elu(x, alpha=1.0)), _bits(_model(x, "EXPM1")))


@pytest.mark.parametrize("into", ["a", "b"])
def test_a_kernel_of_two_operands_into_either_gives_the_operators_bits(into: str) -> None:
    """ADD1 with a fused SIGMOID (one kernel of two operands, checked in blocks) written over its first or its
    second operand: every redone element (NaN, the infinities, values past the evaluation's range, hard cases)
    still reads both operands as they were, so the result is ADD's then SIGMOID's bits."""
    a = _inputs("SIGMOID", 3 * CHUNK + 5, 41)
    b = np.random.default_rng(42).uniform(-1, 1, a.size).astype(np.float32)
    b[::7] = np.inf  # a + b infinite (or NaN): redone by the exact path
    want = dml.sigmoid(dml.add(a, b))
    out = a if into == "a" else b
    got = dml.add1(a, b, fused_activation=dml.ActivationSigmoidDesc(None, None), out=out)
    assert got is out
    np.testing.assert_array_equal(_bits(got), _bits(want))


def test_a_run_asks_llvm_for_512_bit_vectors() -> None:
    """``prefer_wide_vectors`` (called by every generated run) puts the function attribute on the function that
    calls it, so LLVM vectorizes its loops at 512 bits where the CPU has AVX-512."""
    from opendml.backends.cpu_kernels import fast_functions

    @numba.njit
    def scaled(x, out):  # type: ignore[no-untyped-def]
        fast_functions.prefer_wide_vectors()
        for i in range(x.size):
            out[i] = x[i] * 2.0

    x = np.arange(8, dtype=np.float64)
    out = np.empty_like(x)
    scaled(x, out)
    np.testing.assert_array_equal(out, x * 2.0)
    (ir,) = scaled.inspect_llvm().values()
    assert '"prefer-vector-width"="512"' in ir


def test_gelus_erfcx_table_is_the_taylor_coefficients_rounded_once() -> None:
    """GELU's table (``error_function._erfcx_table``: 420-bit fixed point, each coefficient rounded once) against
    mpmath's Taylor coefficients of ``exp(v**2) erfc(v)`` at centers across it, the last one included."""
    mpmath = pytest.importorskip("mpmath")
    from opendml.backends.cpu_kernels.fast_functions import error_function

    table = error_function._erfcx_table()
    with mpmath.workdps(60):
        for j in (0, 1, 17, 64, 200, table.shape[0] - 1):
            wanted = mpmath.taylor(lambda v: mpmath.exp(v * v) * mpmath.erfc(v), mpmath.mpf(j) / 32, table.shape[1] - 1)
            assert [float(c) for c in wanted] == table[j].tolist(), j


def _midpoint_distance(y: float, precision: int, emin: int) -> float:
    """The distance from the double ``y`` to the nearest midpoint of a format of ``precision`` significant bits and
    smallest normal ``2**emin``, in ulps of ``y`` (exact: fractions)."""
    from fractions import Fraction

    v = abs(Fraction(y))
    exponent = max(math.frexp(abs(y))[1] - 1, emin)
    step = Fraction(2) ** (exponent - precision + 1)  # the format's spacing at v (the subnormals': the first binade's)
    offset = v / step - math.floor(v / step)
    return float(abs(offset - Fraction(1, 2)) * step / Fraction(math.ulp(y)))


@pytest.mark.parametrize(("precision", "emin"), [(24, -126), (11, -14)], ids=["FLOAT32", "FLOAT16"])
def test_the_rounding_test_flags_every_double_near_a_midpoint(precision: int, emin: int) -> None:
    """The checked runs' test (``to_float32``, ``to_float16``) against the exact distance to the nearest midpoint:
    every double within NEAR ulps of one is flagged, subnormal results too (a test of the fraction's low bits alone
    misses them); at or above the smallest normal value it flags exactly those, and a zero never."""
    from opendml.backends.cpu_kernels import fast_functions
    from opendml.rounded import NEAR

    flag = (lambda y: fast_functions.to_float32(y, True)[1]) if precision == 24 else (
        lambda y: fast_functions.to_float16(y, True)[1])
    rng = np.random.default_rng(precision)
    cases = []
    for exponent in list(range(emin - precision + 1, emin + 3)) + list(rng.integers(emin, 16, 12)):
        step = 2.0 ** (max(int(exponent), emin) - precision + 1)
        for _ in range(4):
            grid = float(rng.integers(1 << (precision - 1), 1 << precision)) * step if exponent >= emin else \
                float(rng.integers(0, 1 << (precision - 1))) * 2.0 ** (emin - precision + 1)
            midpoint = grid + step / 2 if exponent >= emin else grid + 2.0 ** (emin - precision)
            for k in (0, 1, 7, NEAR - 1, NEAR, NEAR + 1, NEAR + 2, 3 * NEAR, 1000):
                for sign in (1, -1):
                    y = midpoint
                    for _ in range(k):
                        y = math.nextafter(y, sign * math.inf)
                    cases.append(y)
    cases += [0.0, -0.0, 2.0 ** (emin - 60), 2.0**emin, 2.0 ** (emin - 1)]
    for y in cases:
        near = _midpoint_distance(y, precision, emin) <= NEAR if y else False
        got = bool(flag(np.float64(y)))
        assert got or not near, y  # never a miss
        if abs(y) >= 2.0**emin or y == 0:
            assert got == near, y
