"""POW and ATAN_YX correctly rounded (opendml.rounded.binary): the NumPy evaluation, the Numba functions and the
double-double decision against the independent mpmath model (tests/rounding_oracle.py) on edge values, exact
midpoints and random pairs; the CUDA C spelling of the decision compiled for the host (where a C++ compiler
is there) against the Python one, bit for bit; the decision's error against mpmath."""

from __future__ import annotations

import ctypes
import itertools
import math
import shutil
import subprocess
from pathlib import Path

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opendml.rounded import NEAR, PRECISIONS
from opendml.rounded.binary import BINARY_FUNCTIONS, exact_atan2, exact_pow
from opendml.rounded.evaluate import evaluate_binary
from opendml.rounded.method import midpoint_distances
from tests.rounding_oracle import correctly_rounded_pair

numba = pytest.importorskip("numba", reason="the Numba functions need Numba (the fast extra)")

NAMES = sorted(BINARY_FUNCTIONS)
EDGES = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 0.5, -0.5, 1.5, 0.25, 1e-45, -1e-45, 1.1754944e-38,
         3.4028235e38, -3.4028235e38, 1 + 2**-12, 1 - 2**-24, 100.0, -127.5, math.inf, -math.inf, math.nan]

# Pairs whose exact value is a midpoint of the format (rounded to even) or lies on its grid.
EXACT = [(1 + 2**-12, 2.0), (1 + 2**-8, 3.0), (1 - 2**-12, 2.0), (-(1 + 2**-8), 3.0), (1 + 3 * 2**-12, 2.0),
         (1 + 2**-10 + 2**-22, 0.5), (9.0, 0.5), (4.0, 1.5), (2.0, -149.0), (2.0, -150.0), (-2.0, -149.0),
         (2.0, 127.0), (2.0, 128.0), (65504.0, 1.0), (2049.0, 1.0), (4097.0, 1.0), (3.0, 11.0), (1 + 2**-6, 2.0)]


def _same(got: float, want: float) -> bool:
    return (math.isnan(got) and math.isnan(want)) or (got == want and math.copysign(1, got) == math.copysign(1, want))


def _check(name: str, a: np.ndarray, b: np.ndarray, precision: str, got: np.ndarray, where: str) -> None:
    for x, y, g in zip(a.tolist(), b.tolist(), got.tolist()):
        want = correctly_rounded_pair(name, x, y, precision)
        assert _same(g, want), f"{name} {precision} {where}: ({x!r}, {y!r}) gave {g!r}, expected {want!r}"


def _pairs(name: str, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Random pairs: for POW, bases of every size and exponents that keep most powers finite and nonzero."""
    rng = np.random.default_rng(seed)
    sign = rng.choice([-1.0, 1.0], count)
    if name == "POW":
        x = np.exp(rng.uniform(-80, 80, count))
        x[: count // 4] = rng.uniform(0.5, 2.0, count // 4)
        e = rng.uniform(-100, 100, count) / np.maximum(np.abs(np.log(x)), 0.05)
        e[::3] = np.round(e[::3])  # integral exponents: negative bases too
        return (x * np.where(np.arange(count) % 3 == 0, sign, 1.0)).astype(np.float32), e.astype(np.float32)
    magnitude = 10.0 ** rng.uniform(-40, 38, (2, count))
    return (magnitude[0] * sign).astype(np.float32), (magnitude[1] * rng.choice([-1.0, 1.0], count)).astype(np.float32)


def _numba(name: str, precision: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    from opendml.backends.cpu_kernels import rounded

    f = getattr(rounded, f"{name}_{precision}")
    return np.array([f(x, y) for x, y in zip(a, b)], np.float32)


@pytest.mark.parametrize("precision", ["FLOAT32", "FLOAT16"])
@pytest.mark.parametrize("name", NAMES)
def test_edge_and_exact_pairs_are_correctly_rounded(name: str, precision: str) -> None:
    pairs = list(itertools.product(EDGES, EDGES)) + EXACT
    a, b = (np.array(column, np.float32) for column in zip(*pairs))
    _check(name, a, b, precision, evaluate_binary(name, a, b, precision), "NumPy")
    _check(name, a, b, precision, _numba(name, precision, a, b), "Numba")


@pytest.mark.parametrize("precision", ["FLOAT32", "FLOAT16"])
@pytest.mark.parametrize("name", NAMES)
def test_random_pairs_are_correctly_rounded_and_numba_agrees(name: str, precision: str) -> None:
    a, b = _pairs(name, 400, 3)
    got = evaluate_binary(name, a, b, precision)
    _check(name, a, b, precision, got, "NumPy")
    a, b = _pairs(name, 20_000, 4)
    assert np.array_equal(_numba(name, precision, a, b), evaluate_binary(name, a, b, precision), equal_nan=True)


@pytest.mark.parametrize("precision", ["FLOAT32", "FLOAT16"])
@pytest.mark.parametrize("name", NAMES)
def test_the_decision_alone_is_correctly_rounded(name: str, precision: str) -> None:
    """The double-double decision, which the few flagged pairs take, on random pairs and the exact ones (it is
    valid for every finite pair with a finite nonzero value, flagged or not)."""
    grid = PRECISIONS[precision]
    decided = BINARY_FUNCTIONS[name].decided
    a, b = _pairs(name, 300, 5)
    pairs = [(x, y) for x, y in zip(a.tolist(), b.tolist())] + (EXACT if name == "POW" else [])
    for x, y in pairs:
        want = correctly_rounded_pair(name, x, y, precision)
        if not math.isfinite(want) or want == 0:
            continue  # the double function's own cases, never decided
        got = decided(x, y, grid.base, grid.lowest, grid.top)
        assert _same(float(np.float32(got)), want), (name, precision, x, y, got, want)


def test_the_double_double_error_is_below_the_bound() -> None:
    """The error the decision's argument assumes (2**-95 of the value), with the largest products of exponent and
    logarithm a FLOAT32 result allows."""
    worst = 0.0
    with mpmath.workprec(300):
        a, b = _pairs("POW", 200, 6)
        for x, e in zip(a.tolist(), b.tolist()):
            value = mpmath.power(abs(mpmath.mpf(x)), mpmath.mpf(e))
            if not 2.0**-160 < value < 2.0**130 or (x < 0 and e != math.floor(e)):
                continue
            hi, lo = exact_pow(abs(x), e)
            worst = max(worst, float(abs((mpmath.mpf(hi) + lo - value) / value)))
        a, b = _pairs("ATAN_YX", 200, 7)
        for y, x in zip(a.tolist(), b.tolist()):
            value = mpmath.atan2(y, x)
            hi, lo = exact_atan2(y, x)
            worst = max(worst, float(abs((mpmath.mpf(hi) + lo - value) / value)))
    assert worst < 2.0**-95


@settings(max_examples=40, deadline=None)
@given(x=st.floats(width=32, min_value=0.5, max_value=2.0), k=st.integers(2, 5))
def test_integral_powers_near_one_are_exact_or_ties(x: float, k: int) -> None:
    """Powers of values of few bits land on the grid or on a midpoint: the tie rounds to even, as the model says."""
    x = float(np.float32(round(x * 2**8) / 2**8))
    a, b = np.float32([x]), np.float32([k])
    for precision in ("FLOAT32", "FLOAT16"):
        assert _same(float(evaluate_binary("POW", a, b, precision)[0]), correctly_rounded_pair("POW", x, k, precision))


def test_flagged_pairs_take_the_decision() -> None:
    """A pair whose double value is a midpoint itself is flagged (distance 0) and decided: the tie to even, not
    the double rounded (which NumPy's cast would do alike, so the value is chosen odd-below: it rounds up)."""
    a, b = np.float32([1 + 2**-8]), np.float32([3.0])
    y = np.power(a.astype(np.float64), b.astype(np.float64))
    assert midpoint_distances(y, PRECISIONS["FLOAT32"])[0] <= NEAR
    assert evaluate_binary("POW", a, b, "FLOAT32")[0] == np.float32(correctly_rounded_pair("POW", float(a[0]), 3.0,
                                                                                           "FLOAT32"))


# --- the CUDA C of the decision, compiled for the host --------------------------------------------------------

_SHIMS = r"""
#include <math.h>
#include <string.h>
#define __device__
#define __forceinline__ inline
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dsub_rn(double a, double b) { return a - b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __ddiv_rn(double a, double b) { return a / b; }
static inline double __dsqrt_rn(double a) { return sqrt(a); }
static inline double __longlong_as_double(long long v) { double d; memcpy(&d, &v, 8); return d; }
"""


@pytest.fixture(scope="module")
def host_c(tmp_path_factory: pytest.TempPathFactory) -> ctypes.CDLL:
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no C++ compiler for the host build of the CUDA C")
    from opendml.backends.cuda.rounded_binary_c import DOUBLE_DOUBLE

    folder = tmp_path_factory.mktemp("binary_c")
    source = folder / "decided.cpp"
    source.write_text(_SHIMS + DOUBLE_DOUBLE + 'extern "C" {\n' + "".join(
        f"double host_{f}(double a, double b, int base, int lowest, double top) "
        f"{{ return opendml_{f}_decided(a, b, base, lowest, top); }}\n" for f in ("pow", "atan2")) + "}\n")
    library = folder / "decided.so"
    # -ffp-contract=off: every product and sum rounded on its own, as __dmul_rn and __dadd_rn are
    subprocess.run([compiler, "-O2", "-ffp-contract=off", "-shared", "-fPIC", str(source), "-o", str(library)],
                   check=True, capture_output=True)
    compiled = ctypes.CDLL(str(Path(library)))
    for f in ("pow", "atan2"):
        getattr(compiled, f"host_{f}").restype = ctypes.c_double
        getattr(compiled, f"host_{f}").argtypes = [ctypes.c_double, ctypes.c_double, ctypes.c_int, ctypes.c_int,
                                                   ctypes.c_double]
    return compiled


@pytest.mark.parametrize("precision", ["FLOAT32", "FLOAT16"])
@pytest.mark.parametrize("name", NAMES)
def test_the_cuda_c_decision_is_the_pythons(host_c: ctypes.CDLL, name: str, precision: str) -> None:
    grid = PRECISIONS[precision]
    c = getattr(host_c, "host_pow" if name == "POW" else "host_atan2")
    decided = BINARY_FUNCTIONS[name].decided
    a, b = _pairs(name, 2000, 8)
    pairs = [(x, y) for x, y in zip(a.tolist(), b.tolist())] + (EXACT if name == "POW" else [])
    for x, y in pairs:
        if not (math.isfinite(x) and math.isfinite(y) and x != 0 and y != 0):
            continue
        with np.errstate(all="ignore"):
            value = np.power(x, y) if name == "POW" else np.arctan2(x, y)
        if not np.isfinite(value) or value == 0:
            continue
        want = decided(x, y, grid.base, grid.lowest, grid.top)
        got = c(x, y, grid.base, grid.lowest, grid.top)
        assert got == want or (math.isnan(got) and math.isnan(want)), (name, precision, x, y, got, want)
