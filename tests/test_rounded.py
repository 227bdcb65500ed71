"""The correctly rounded functions (opendml.rounded): the rounding steps against NumPy's own casts, every
function against the independent mpmath model (tests/rounding_oracle.py) on edge values, random values and
the hard cases of its table, through the NumPy evaluation, the Numba functions and (where nvcc or a GPU is
there) the CUDA ones, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from opendml.rounded import FUNCTIONS, NEAR, PRECISIONS
from opendml.rounded.evaluate import evaluate
from opendml.rounded.method import midpoint_distance, midpoint_distances, round_to, rounds_to
from opendml.rounded.tables import hard_cases
from tests.conftest import CUDA_MISSING
from tests.rounding_oracle import correctly_rounded

numba = pytest.importorskip("numba", reason="the Numba functions need Numba (the fast extra)")

FORMATS = {"FLOAT32": np.float32, "FLOAT16": np.float16}


def _doubles(count: int, seed: int) -> np.ndarray:
    """Doubles over the formats' ranges: normal, subnormal and beyond the largest value, both signs."""
    rng = np.random.default_rng(seed)
    return np.ldexp(rng.uniform(1, 2, count), rng.integers(-160, 130, count)) * rng.choice([-1.0, 1.0], count)


@pytest.mark.parametrize("precision", ["FLOAT32", "FLOAT16"])
def test_the_rounding_is_numpys_conversion(precision: str) -> None:
    """NumPy converts a double to float32 and float16 rounding once, to nearest even."""
    y = _doubles(200_000, 1)
    fmt = FORMATS[precision]
    with np.errstate(over="ignore"):
        assert (rounds_to(y, PRECISIONS[precision]).astype(fmt) == y.astype(fmt)).all()


@pytest.mark.parametrize("precision", ["FLOAT32", "FLOAT16"])
def test_the_midpoint_distance_is_the_distance_to_the_nearest_midpoint(precision: str) -> None:
    """In ulps of the double: against the midpoint computed from the neighbours NumPy's conversion gives."""
    fmt = FORMATS[precision]
    y = _doubles(50_000, 2)
    # 2**-7 of the smallest subnormal and below: the shift is capped, the value far from every midpoint
    tiny = np.abs(y) < {"FLOAT32": 2.0**-157, "FLOAT16": 2.0**-32}[precision]
    assert (midpoint_distances(y[tiny], PRECISIONS[precision]) > 2**50).all()
    y = y[(np.abs(y) < float(np.finfo(fmt).max)) & ~tiny]
    r = y.astype(fmt)
    other = np.nextafter(r, np.where(y > r.astype(np.float64), fmt(np.inf), fmt(-np.inf)))
    other = np.where(y == r.astype(np.float64), r, other)  # exact: the nearest midpoint is half an ulp away
    mid = (r.astype(np.float64) + other.astype(np.float64)) / 2
    near = np.abs(y - mid) / np.spacing(np.abs(y))
    exact = y == r.astype(np.float64)
    grid = PRECISIONS[precision]
    distance = midpoint_distances(y, grid)
    assert (distance[~exact] == near[~exact]).all()
    assert (distance[exact] > 2**(grid.base - 2)).all()


def test_the_scalar_steps_are_the_array_steps() -> None:
    y = _doubles(2000, 3)
    for grid in PRECISIONS.values():
        bits = y.view(np.int64)
        assert [midpoint_distance(int(b), grid.base, grid.lowest, grid.top) for b in bits] == list(midpoint_distances(y, grid))
        assert [round_to(float(v), int(b), grid.base, grid.lowest, grid.top) for v, b in zip(y, bits)] == list(
            rounds_to(y, grid))


# --- every function against the model --------------------------------------------------------------------

EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, 1e-45, -1e-45, 1.1754942e-38,
                  3.4028235e38, -3.4028235e38, 1e-8, 0.1, 3.1415927, 1.5707964, 88.72283, 88.72284, -87.33655,
                  -103.97208, -103.972084, 11.089866, 11.0898676, -17.32868, 709.0, 1e10, -1e10, 1.0000001,
                  0.99999994, 7.0, -7.0, 3.9, 4.0, 9.0, 10.0, 0.88137358], np.float32)


def _inputs(name: str, count: int, seed: int) -> np.ndarray:
    """Edge values, random values of every magnitude and the table's hard cases (a sample of ``count``)."""
    rng = np.random.default_rng(seed)
    spread = np.ldexp(rng.uniform(-2, 2, count), rng.integers(-30, 10, count)).astype(np.float32)
    cases = [hard_cases(name, p).inputs for p in PRECISIONS]
    hard = np.concatenate([c[rng.permutation(len(c))[:count]] for c in cases]).view(np.float32)
    return np.concatenate([EDGES, spread, hard])


def _expected(name: str, x: np.ndarray, precision: str) -> np.ndarray:
    return np.array([correctly_rounded(name, float(v), precision) for v in x], np.float64)


def _same(got: np.ndarray, want: np.ndarray, x: np.ndarray, what: str) -> None:
    got64 = got.astype(np.float64)
    differ = ~((got64 == want) & (np.signbit(got64) == np.signbit(want)) | (np.isnan(got64) & np.isnan(want)))
    assert not differ.any(), f"{what}: {[(x[i], got64[i], want[i]) for i in np.flatnonzero(differ)[:5]]}"


@numba.njit
def _each(function, x):  # type: ignore[no-untyped-def]
    out = np.empty_like(x)
    for i in range(x.size):
        out[i] = function(x[i])
    return out


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_function_is_correctly_rounded_on_the_cpu(name: str) -> None:
    """The NumPy evaluation and the Numba function, at both precisions, against the model."""
    from opendml.backends.cpu_kernels import rounded

    x = _inputs(name, 60, sum(map(ord, name)))
    for precision in PRECISIONS:
        want = _expected(name, x, precision)
        _same(evaluate(name, x, precision), want, x, f"{name} {precision} NumPy")
        _same(_each(getattr(rounded, f"{name}_{precision}"), x), want, x, f"{name} {precision} Numba")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_hard_case_is_correctly_rounded(name: str) -> None:
    """Every input of every table (thousands a function), through the NumPy evaluation, against the model."""
    for precision in PRECISIONS:
        x = hard_cases(name, precision).inputs.view(np.float32)
        _same(evaluate(name, x, precision), _expected(name, x, precision), x, f"{name} {precision}")


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_each_table_holds_its_near_inputs_sorted(name: str) -> None:
    """Sorted, distinct inputs whose double value lies near a midpoint; results of the format (a FLOAT16 result
    held as a FLOAT32 is a FLOAT16 value)."""
    for precision, grid in PRECISIONS.items():
        cases = hard_cases(name, precision)
        assert (np.diff(cases.inputs.astype(np.int64)) > 0).all()
        x = cases.inputs.view(np.float32)
        with np.errstate(all="ignore"):
            y = FUNCTIONS[name].numpy(x.astype(np.float64))
        assert (midpoint_distances(y, grid) <= 1024).all()  # the builder's 256, and any library's few ulps
        held = cases.results.view(np.float32)
        with np.errstate(over="ignore"):
            assert (held.astype(FORMATS[precision]).astype(np.float32) == held)[~np.isnan(held)].all()


def test_only_values_near_a_midpoint_are_looked_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """A table entry (here a planted one) replaces the result of an input whose double value is within NEAR ulps
    of a midpoint, and of no other input."""
    from opendml.rounded import evaluate as module
    from opendml.rounded.tables import HardCases

    x = np.concatenate([hard_cases("EXP", "FLOAT32").inputs.view(np.float32), np.float32([0.5, 2.5])])
    distance = midpoint_distances(np.exp(x.astype(np.float64)), PRECISIONS["FLOAT32"])
    near, far = x[np.argmin(distance)], x[np.argmax(distance)]
    assert distance.min() <= NEAR < distance.max()
    planted = np.sort(np.array([near, far], np.float32).view(np.uint32))
    monkeypatch.setattr(module, "hard_cases", lambda name, precision: HardCases(planted, planted))
    got = evaluate("EXP", np.array([near, far], np.float32), "FLOAT32")
    assert got[0] == near  # the planted result: the input itself
    assert got[1] == np.float32(np.exp(np.float64(far)))


@pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_function_is_correctly_rounded_on_the_gpu(name: str) -> None:
    import cupy

    import opendml as dml

    fn = getattr(dml, name.lower(), None)
    if fn is None:
        pytest.skip(f"ELEMENT_WISE_{name} is not declared yet")
    x = _inputs(name, 200, 7)
    for precision, fmt in FORMATS.items():
        with np.errstate(over="ignore"):  # FLOAT32 inputs beyond FLOAT16's range are FLOAT16 infinities
            data = x.astype(fmt)
        got = cupy.asnumpy(fn(cupy.asarray(data)))
        want = _expected(name, data.astype(np.float32), precision)
        _same(got.astype(np.float32), want, data, f"{name} {precision} CUDA")
