"""REDUCE's SUM_SQUARE, L2 and LOG_SUM against the oracle of tests/reduce_oracle.py (exact sums by fractions,
L2's root bracketed by its neighbours' midpoints; never opendml's accumulator), on both CPU kernel modules."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendml as dml
from opendml.backends import cpu_kernels
from tests import test_reduce
from tests.reduce_oracle import oracle_l2, oracle_log_sum, oracle_sum_square
from tests.test_reduce import same

kernels = test_reduce.kernels  # the fixture choosing the CPU kernel module (Numba or NumPy)

ORACLES = {"SUM_SQUARE": oracle_sum_square, "L2": oracle_l2}


EDGES = [
    [3.0, 4.0],  # L2 exactly 5
    [1.0, 2.0 ** -12, 2.0 ** -12, 2.0 ** -24],  # sum (1 + 2**-24)**2: L2 on a FLOAT32 midpoint, ties to even: 1
    [1.0, 2.0 ** -12, 2.0 ** -12, 2.0 ** -24, 2.0 ** -60],  # just above it: 1 + 2**-23
    [1.0, 2.0 ** -12, 2.0 ** -12, 2.0 ** -24, 2.0 ** -149],  # above by a square of 2**-298 alone
    [1.0, 2.0 ** -6, 2.0 ** -6, 2.0 ** -12],  # (1 + 2**-11)**2: a FLOAT16 midpoint
    [1.0, 2.0 ** -6, 2.0 ** -6, 2.0 ** -12, 2.0 ** -70],
    [3e38, 3e38],  # squares far past FLOAT32's range: SUM_SQUARE inf; L2 4.2e38: inf too
    [2e38, 2.0 ** -149],  # L2 2e38, finite; the tiny square still counted
    [1.8e19, 1.8e19],  # SUM_SQUARE just past the largest FLOAT32
    [1e-45, 1e-45],  # squares of 2**-298: SUM_SQUARE rounds to +0.0, L2 2**-148.5 rounds to 2**-148
    [1e-45, 1e-45, 1e-45],
    [1e-23, -1e-23],  # subnormal squares that underflow FLOAT32
    [-0.0, -0.0],  # +0.0 for both
    [0.0],
    [np.nan, 1.0],
    [np.inf, 1.0],
    [-np.inf, -np.inf],
    [np.inf, np.nan],
    [-3.0, 1e30, -1e-30, 2.0 ** -140],  # a span of 300 binades of squares: the slow path
]


@pytest.mark.parametrize("function", ["SUM_SQUARE", "L2"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_edge_values_against_the_oracle(kernels: str, function: str, dtype: type) -> None:
    for case in EDGES:
        with np.errstate(over="ignore"):
            x = np.array(case, np.float32).astype(dtype)
        got = dml.reduce(x, function, keepdims=False)
        want = ORACLES[function](x, dtype)
        assert same(got, want), (function, case, got, want)


def test_l2_is_the_correctly_rounded_root() -> None:
    """The exact sum of squares just above (1 + 2**-24)**2: its root is just above a FLOAT32 midpoint and rounds up;
    the square root of the float64 nearest the sum (which drops the 2**-100) lands on the midpoint and rounds down."""
    x = np.array([1.0, 2.0 ** -12, 2.0 ** -12, 2.0 ** -24, 2.0 ** -50], np.float32)
    assert dml.reduce(x, "L2", keepdims=False) == np.float32(1 + 2.0 ** -23)
    assert dml.reduce(x[:4], "L2", keepdims=False) == np.float32(1.0)


@pytest.mark.parametrize("shape,axes", [
    ((3, 1500), (1,)),  # rows longer than a block (1024 elements)
    ((5, 7, 9), (0, 2)),
    ((40, 33), (0,)),  # a first-axis reduction
    ((1, 70000), (1,)),  # one row split between threads, merged
    ((4, 2, 300), None),
    ((2, 1024), (1,)),  # exactly one block
])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_axes_and_sizes_against_the_oracle(kernels: str, shape: tuple[int, ...], axes: tuple[int, ...] | None,
                                           dtype: type) -> None:
    rng = np.random.default_rng(sum(shape))
    scale = 12 if dtype == np.float32 else 3  # blocks that fit the fast path and blocks that do not
    with np.errstate(over="ignore"):
        x = (rng.standard_normal(shape) * np.exp2(rng.integers(-scale, scale + 1, shape))).astype(dtype)
    reduced = tuple(range(len(shape))) if axes is None else axes
    kept = [k for k in range(len(shape)) if k not in reduced]
    rows = np.transpose(x, kept + list(reduced)).reshape(-1, math.prod(shape[a] for a in reduced))
    out_shape = tuple(1 if k in reduced else n for k, n in enumerate(shape))
    for function, oracle in (*ORACLES.items(), ("LOG_SUM", oracle_log_sum)):
        got = dml.reduce(np.abs(x) if function == "LOG_SUM" else x, function, axes)
        want = np.array([oracle(np.abs(r) if function == "LOG_SUM" else r, dtype) for r in rows],
                        dtype).reshape(out_shape)
        assert same(got, want), function


def test_log_sum_of_signed_and_special_rows(kernels: str) -> None:
    x = np.array([[1e30, 1, -1e30, 0], [-1, 0.5, 0, 0], [0, -0.0, 0, 0], [np.inf, 1, 2, 3]], np.float32)
    got = dml.reduce(x, "LOG_SUM", 1).ravel()
    want = np.array([oracle_log_sum(r, np.float32) for r in x], np.float32)
    assert same(got, want)
    assert got[0] == 0.0 and np.isnan(got[1]) and got[2] == -np.inf and got[3] == np.inf


LOG_SUM_EDGES = [
    [1.0, 2.0 ** -140],  # ln(1 + 2**-140): 2**-140, kept by the exact D = V - 2**q
    [1.0, -(2.0 ** -140)],  # just below 1: -2**-140
    [0.5, 0.25, 0.25],  # exactly 1: +0.0
    [1e-45],  # the smallest subnormal: ln(2**-149)
    [3.4e38, 3.4e38, 3.4e38],  # a sum past FLOAT32's range: its ln is finite
    [1.4142135, 0.0],  # just below sqrt(2), where the scaling of 1 + t switches
    [1.4142137],  # just above it
    [0.70710677], [0.7071068],
    [1.0, 2.0 ** -24, 2.0 ** -24, 2.0 ** -60],
    [2.0, -(2.0 ** -40)],
    [65504.0, 65504.0, -1.0],
    [-5.0, np.inf, -3.0],  # +inf among finite elements of a negative sum: +inf, not the NaN of a negative sum
]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_log_sum_is_the_correctly_rounded_ln_of_the_exact_sum(kernels: str, dtype: type) -> None:
    width = max(len(row) for row in LOG_SUM_EDGES)
    x = np.zeros((len(LOG_SUM_EDGES), width), np.float32)
    for r, row in enumerate(LOG_SUM_EDGES):
        x[r, :len(row)] = row
    with np.errstate(over="ignore"):
        x = x.astype(dtype)
    got = dml.reduce(x, "LOG_SUM", 1).ravel()
    assert same(got, np.array([oracle_log_sum(r, dtype) for r in x], dtype))
    assert same(dml.reduce(np.ascontiguousarray(x.T), "LOG_SUM", 0).ravel(), got)  # the columns' path
    if dtype == np.float32:
        assert got[0] == np.float32(2.0 ** -140) and got[1] == np.float32(-(2.0 ** -140)) and got[2] == 0.0


@settings(max_examples=10, deadline=None)
@given(st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), min_size=1, max_size=2500),
       st.integers(1, 3), st.sampled_from(["SUM_SQUARE", "L2"]))
def test_any_values_on_any_thread_count(values: list[float], threads: int, function: str) -> None:
    x = np.array(values, np.float32)
    got = dml.reduce(x, function, keepdims=False, device=dml.Device(threads=threads))
    assert same(got, ORACLES[function](x, np.float32))


def test_a_long_row_split_between_threads_gives_one_rows_bits() -> None:
    """A row past the split threshold: its segments' accumulators merge exactly, whatever the thread count."""
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(150_000) * np.exp2(rng.integers(-40, 40, 150_000))).astype(np.float32)
    for function in ORACLES:
        results = {int(dml.reduce(x, function, keepdims=False, device=dml.Device(threads=t)).view(np.uint32))
                   for t in (1, 2, 3)}
        assert results == {int(ORACLES[function](x, np.float32).view(np.uint32))}, function


def test_a_first_axis_reduction_across_tiles(kernels: str) -> None:
    """Columns summed side by side in tiles (512 columns by 256 rows): a tile holding a tiny element or an infinity
    is summed by bins, the others on the fast path; every column against the oracle."""
    rng = np.random.default_rng(13)
    x = rng.standard_normal((600, 530)).astype(np.float32)
    x[17, 5] = np.float32(3e-38)
    x[300, 520] = np.float32(-np.inf)
    x[590, 7] = np.float32(np.nan)
    for function, oracle in ORACLES.items():
        got = dml.reduce(x, function, 0).ravel()
        want = np.array([oracle(x[:, c], np.float32) for c in range(x.shape[1])], np.float32)
        assert same(got, want), function


def test_first_axis_blocks_whose_scale_moves(kernels: str) -> None:
    """Each column's span checked against the boundary the block before left: a block of smaller elements (most
    columns miss, the block is split again against its own boundary), one column with an element far above it
    (that column alone by bins), subnormals; every thread count against the oracle."""
    rng = np.random.default_rng(17)
    x = rng.standard_normal((900, 300)).astype(np.float32)
    x[300, 3] = np.float32(1.2345 * 2.0 ** 20)  # the second block: one column far above the first block's boundary
    x[512:768] *= np.float32(2.0 ** -40)  # the third block far smaller: most columns miss
    x[800:810, 8] = np.float32(1e-44)  # subnormals beside normal numbers
    for function, oracle in ORACLES.items():
        want = np.array([oracle(x[:, c], np.float32) for c in range(x.shape[1])], np.float32)
        for threads in (1, 2, 3):
            got = dml.reduce(x, function, 0, device=dml.Device(threads=threads)).ravel()
            assert same(got, want), (function, threads)
    if cpu_kernels.numba_available():  # the accumulators before rounding: the exact integer sums of squares
        from opendml.backends.cpu_kernels import squares

        words = squares.column_accumulators(x, 2)
        for c in (3, 8, 100):
            value = sum(int(d) << (32 * k) for k, d in enumerate(words[c, :squares.DIGITS]))
            assert value == sum(int(Fraction(float(v)) * 2 ** 149) ** 2 for v in x[:, c]), c
