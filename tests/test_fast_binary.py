"""The vector-code evaluations of the functions of two values (``cpu_kernels.fast_functions``: POW in ``power``,
ATAN_YX in ``trigonometric``) and the checked kernels of ELEMENT_WISE_POW, ELEMENT_WISE_CONSTANT_POW and
ELEMENT_WISE_ATAN_YX that run them: within their bounds, marking what they cannot trust (C99's special values, a
negative base with a non-integral exponent, overflow, the bottom of the format, powers on a rounding midpoint), and
giving the exact path's bits (the independent mpmath model of tests/rounding_oracle.py decides)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import opendml as dml
from opendml.rounded.evaluate import evaluate_binary
from tests.rounding_oracle import correctly_rounded_pair
from tests.test_rounded_binary import EDGES, EXACT

numba = pytest.importorskip("numba", reason="the vector-code evaluations are Numba's")

CHUNK = 512  # codegen_names.CHUNK, restated: the block boundaries the kernels below straddle
# Each evaluation's documented bound (its module's docstring) in double ulps, and its double reference (NumPy's,
# within an ulp of the exact value).
BOUNDS = {"POW": 8, "ATAN_YX": 15}
REFERENCES = {"POW": np.power, "ATAN_YX": np.arctan2}
NAMES = sorted(BOUNDS)
# The edge pairs and the pairs on or beside the grid are test_rounded_binary's.
MIDPOINTS = [(1 + 2**-12, 2.0), (1 + 2**-8, 3.0), (-(1 + 2**-8), 3.0), (1 + 3 * 2**-12, 2.0)]


@pytest.fixture(autouse=True)
def _numba_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled kernels, compiled before the call returns (not the NumPy path while they compile)."""
    monkeypatch.setenv("OPENDML_CPU_KERNELS", "numba")
    monkeypatch.setenv("OPENDML_TIERED", "0")


@numba.njit
def _evaluations(f, x, y):  # type: ignore[no-untyped-def]
    """The double evaluation and whether each pair is in range (``f``: ``fast_functions.POW``)."""
    out = np.empty(x.size, np.float64)
    inside = np.empty(x.size, np.bool_)
    for i in range(x.size):
        out[i], inside[i] = f(x[i], y[i])
    return out, inside


@numba.njit
def _roundings(f, rounding, x, y):  # type: ignore[no-untyped-def]
    """Each pair's evaluation rounded (``rounding``: ``fast_functions.to_float32``) and whether it is redone."""
    out = np.empty(x.size, np.float32)
    redo = np.empty(x.size, np.bool_)
    for i in range(x.size):
        v, inside = f(x[i], y[i])
        out[i], redo[i] = rounding(v, inside)
    return out, redo


def _evaluate(name: str, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from opendml.backends.cpu_kernels import fast_functions

    return _evaluations(getattr(fast_functions, name), x, y)  # type: ignore[no-any-return]


def _checked(name: str, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from opendml.backends.cpu_kernels import fast_functions

    return _roundings(getattr(fast_functions, name), fast_functions.to_float32, x, y)  # type: ignore[no-any-return]


def _pairs(name: str, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """POW: bases of every size, exponents that keep most powers in range (a third integral, with negative bases),
    and bases near 1 with large exponents (where the logarithm's error is scaled the most). ATAN_YX: values of
    every size and sign, a third of the pairs of magnitudes within a factor 4 (angles of every size)."""
    rng = np.random.default_rng(seed)
    if name == "ATAN_YX":
        a, b = rng.choice([-1.0, 1.0], (2, count)) * 10.0 ** rng.uniform(-44, 37, (2, count))
        b[::3] = a[::3] * rng.uniform(-4, 4, len(a[::3]))
        return a.astype(np.float32), b.astype(np.float32)
    x = np.exp(rng.uniform(-80, 80, count))
    x[: count // 4] = rng.uniform(0.5, 2.0, count // 4)
    e = rng.uniform(-100, 100, count) / np.maximum(np.abs(np.log(x)), 0.05)
    e[::3] = np.round(e[::3])
    x[::3] *= rng.choice([-1.0, 1.0], len(x[::3]))
    near = slice(1, None, 5)
    x[near] = 1 + rng.uniform(-2e-3, 2e-3, len(x[near]))
    e[near] = rng.uniform(-4e4, 4e4, len(e[near]))
    return x.astype(np.float32), e.astype(np.float32)


def _bits(a: np.ndarray) -> np.ndarray:
    """The FLOAT32 bits, every NaN as one (NaN payloads are the library's: docs/semantics.md, section 5)."""
    a = np.ascontiguousarray(a, np.float32)
    return np.where(np.isnan(a), np.uint32(0x7FC00000), a.view(np.uint32))


def _model(name: str, x: np.ndarray, y: np.ndarray, precision: str = "FLOAT32") -> np.ndarray:
    return np.array([correctly_rounded_pair(name, float(a), float(b), precision) for a, b in zip(x, y)], np.float32)


def _function(name: str) -> object:
    return dml.pow if name == "POW" else dml.atan_yx


@pytest.mark.parametrize("name", NAMES)
def test_the_double_evaluation_is_within_its_bound(name: str) -> None:
    """Against NumPy's double function (within an ulp of the exact value) on pairs in range: within the documented
    bound plus the reference's, far inside the rounding test's 32 ulps."""
    x, y = _pairs(name, 200_000, 1)
    got, inside = _evaluate(name, x, y)
    with np.errstate(all="ignore"):
        want = REFERENCES[name](x.astype(np.float64), y.astype(np.float64))
    assert inside.mean() > 0.9
    ulps = np.abs(got[inside].view(np.int64) - want[inside].view(np.int64))
    assert ulps.max() <= BOUNDS[name] + 1, (x[inside][ulps.argmax()], y[inside][ulps.argmax()], ulps.max())


SPECIAL = {
    "POW": [(0.0, 2.0), (-0.0, 3.0), (math.inf, 0.5), (-math.inf, 2.0), (math.nan, 1.0), (2.0, math.nan),
            (2.0, math.inf), (0.5, -math.inf), (-2.0, 0.5), (-8.0, 1.0 / 3.0), (10.0, 39.0), (2.0, 128.0),
            (2.0, -149.0), (1e-30, 4.0), *MIDPOINTS],
    "ATAN_YX": [(0.0, 1.0), (-0.0, -1.0), (1.0, 0.0), (1.0, -0.0), (0.0, 0.0), (math.inf, 1.0), (1.0, -math.inf),
                (math.inf, -math.inf), (math.nan, 1.0), (1.0, math.nan)],
}


@pytest.mark.parametrize("name", NAMES)
def test_the_checked_evaluation_marks_what_it_cannot_trust(name: str) -> None:
    """POW: zeros, infinities, NaN, a negative base with a non-integral exponent, powers past the top or near the
    bottom of FLOAT32 and powers on a midpoint; ATAN_YX: zeros, infinities and NaN. They are marked, and an
    unmarked result is the model's."""
    a, b = (np.array(column, np.float32) for column in zip(*SPECIAL[name]))
    assert _checked(name, a, b)[1].all()
    x, y = _pairs(name, 400, 2)
    got, redo = _checked(name, x, y)
    assert redo.sum() < 40
    np.testing.assert_array_equal(_bits(got[~redo]), _bits(_model(name, x[~redo], y[~redo])))


def _inputs(name: str, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Random pairs with the edge pairs and the exact ones at and around every block boundary."""
    x, y = _pairs(name, n, seed)
    edges = list(itertools.product(EDGES, EDGES)) + EXACT
    rng = np.random.default_rng(seed)
    for start in range(0, n, CHUNK):
        for k in range(max(0, start - 3), min(n, start + 3)):
            x[k], y[k] = edges[rng.integers(0, len(edges))]
    return x, y


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n", [1, CHUNK + 1, 3 * CHUNK + 7])
def test_the_checked_kernel_gives_the_models_bits(name: str, n: int) -> None:
    x, y = _inputs(name, n, n)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(_bits(_function(name)(x, y)), _bits(_model(name, x, y)))  # type: ignore[operator]


@pytest.mark.parametrize("name", NAMES)
def test_every_edge_pair_in_a_kernel_gives_the_models_bits(name: str) -> None:
    pairs = list(itertools.product(EDGES, EDGES)) + EXACT
    x, y = (np.array(column, np.float32) for column in zip(*pairs))
    np.testing.assert_array_equal(_bits(_function(name)(x, y)), _bits(_model(name, x, y)))  # type: ignore[operator]


@pytest.mark.parametrize("name", NAMES)
def test_in_place_strided_and_float16(name: str) -> None:
    """In place over either operand (a redone element reads its operands as they were), through a strided view,
    and FLOAT16 data (rounded once to FLOAT16)."""
    f = _function(name)
    x, y = _inputs(name, 2 * CHUNK + 3, 11)
    want = _model(name, x, y)
    for into in ("x", "y"):
        a, b = x.copy(), y.copy()
        out = a if into == "x" else b
        np.testing.assert_array_equal(_bits(f(a, b, out=out)), _bits(want))  # type: ignore[operator]
    wide = np.zeros((x.size, 2), np.float32)
    wide[:, 0] = x
    np.testing.assert_array_equal(_bits(f(wide[:, 0], y)), _bits(want))  # type: ignore[operator]
    with np.errstate(all="ignore"):  # the values past FLOAT16's range become infinities
        h, e = x.astype(np.float16), (y % 16 if name == "POW" else y).astype(np.float16)
        got = np.asarray(f(h, e)).astype(np.float32)  # type: ignore[operator]
    np.testing.assert_array_equal(_bits(got), _bits(_model(name, h.astype(np.float32), e.astype(np.float32),
                                                           "FLOAT16")))


def test_constant_pow_runs_the_same_evaluation() -> None:
    """CONSTANT_POW: the same node with one exponent (a kernel scalar)."""
    x, _ = _inputs("POW", 2 * CHUNK + 3, 12)
    for exponent in (2.5, -3.0, 0.5):
        np.testing.assert_array_equal(_bits(dml.constant_pow(x, exponent=exponent)),
                                      _bits(_model("POW", x, np.full_like(x, exponent))))


@pytest.mark.parametrize("name", NAMES)
def test_a_large_array_on_threads_against_the_numpy_path_and_the_model(name: str) -> None:
    """2**19 pairs (twice the threads' threshold): every one equal to the NumPy path's (the C library's double
    function and the double-double decision), and 1000 of them to the model."""
    x, y = _inputs(name, 1 << 19, 5)
    with np.errstate(all="ignore"):
        got = _function(name)(x, y)  # type: ignore[operator]
        np.testing.assert_array_equal(_bits(got), _bits(evaluate_binary(name, x, y, "FLOAT32")))
    sample = np.random.default_rng(6).integers(0, x.size, 1000)
    np.testing.assert_array_equal(_bits(got[sample]), _bits(_model(name, x[sample], y[sample])))
