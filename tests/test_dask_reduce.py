"""opendml.reduce of Dask arrays: the same bits as one array's call and as the oracle, whatever the chunking."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendml as dml
from opendml.backends import cpu_kernels
from opendml.backends.cpu_kernels import sum_partials
from tests.reduce_oracle import oracle_l2, oracle_log_sum, oracle_sum, oracle_sum_square

da = pytest.importorskip("dask.array")


def same(got: np.ndarray, want: np.ndarray) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    return got.shape == want.shape and bool(np.all((got.view(f"u{got.itemsize}") == want.view(f"u{want.itemsize}"))
                                                   | (np.isnan(got) & np.isnan(want))))


def _chunks(draw: st.DrawFn, n: int) -> tuple[int, ...]:
    cuts = sorted(draw(st.sets(st.integers(1, n - 1), max_size=4))) if n > 1 else []
    edges = [0, *cuts, n]
    return tuple(b - a for a, b in itertools.pairwise(edges))


@st.composite
def chunked(draw: st.DrawFn) -> tuple[np.ndarray, tuple[tuple[int, ...], ...]]:
    shape = (draw(st.integers(1, 9)), draw(st.integers(1, 300)))
    dtype = draw(st.sampled_from([np.float32, np.float16]))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    spread = 60 if dtype == np.float32 else 10
    x = (rng.standard_normal(shape) * np.exp2(rng.integers(-spread, spread, shape))).astype(dtype)
    if draw(st.booleans()):
        x.flat[rng.integers(0, x.size)] = draw(st.sampled_from([np.inf, -np.inf, np.nan, -0.0, 0.0]))
    return x, (_chunks(draw, shape[0]), _chunks(draw, shape[1]))


@settings(max_examples=25, deadline=None)
@given(chunked(), st.sampled_from(["SUM", "AVERAGE", "L1", "MAX", "MIN"]), st.sampled_from([0, 1, None]))
def test_any_chunking_gives_one_arrays_bits(case: tuple[np.ndarray, tuple[tuple[int, ...], ...]], function: str,
                                            axes: int | None) -> None:
    x, chunks = case
    got = dml.reduce(da.from_array(x, chunks=chunks), function, axes).compute()
    assert same(got, dml.reduce(x, function, axes))
    if function in ("SUM", "AVERAGE", "L1") and axes == 1:
        want = [oracle_sum(row, x.dtype.type, function == "AVERAGE", function == "L1") for row in x]
        assert same(got.ravel(), np.array(want, x.dtype))


@settings(max_examples=20, deadline=None)
@given(chunked(), st.sampled_from(["SUM_SQUARE", "L2"]), st.sampled_from([0, 1, None]))
def test_sums_of_squares_of_any_chunking_give_one_arrays_bits(
        case: tuple[np.ndarray, tuple[tuple[int, ...], ...]], function: str, axes: int | None) -> None:
    x, chunks = case
    got = dml.reduce(da.from_array(x, chunks=chunks), function, axes).compute()
    assert same(got, dml.reduce(x, function, axes))
    if axes == 1:
        oracle = oracle_l2 if function == "L2" else oracle_sum_square
        assert same(got.ravel(), np.array([oracle(row, x.dtype.type) for row in x], x.dtype))


@pytest.mark.parametrize("function", ["SUM_SQUARE", "L2"])
def test_sums_of_squares_across_chunks_at_the_edges(function: str) -> None:
    # a tie that chunks split ([1, 2**-12] | [2**-12, 2**-24]: L2 on a FLOAT32 midpoint, to even), a tiny element
    # past a huge one, an infinity and a NaN in chunks of their own, a chunk of zeros
    rows = np.array([[1.0, 2.0 ** -12, 2.0 ** -12, 2.0 ** -24, 0.0, 0.0],
                     [1.0, 2.0 ** -12, 2.0 ** -12, 2.0 ** -24, 2.0 ** -60, 0.0],
                     [1e19, 0.0, 0.0, 0.0, 0.0, 1e-45],
                     [1.0, 2.0, 0.0, np.inf, 0.0, 3.0],
                     [np.nan, 1.0, 0.0, np.inf, 0.0, 0.0],
                     [0.0, -0.0, 0.0, 0.0, -0.0, 0.0]], np.float32)
    oracle = oracle_l2 if function == "L2" else oracle_sum_square
    want = np.array([oracle(row, np.float32) for row in rows], np.float32)
    for chunks in ((6, (2, 2, 2)), (6, (1, 4, 1)), (3, (3, 3)), (6, 6)):
        got = dml.reduce(da.from_array(rows, chunks=chunks), function, 1, keepdims=False).compute()
        assert same(got, want), chunks


def test_the_python_square_words_are_numbas(monkeypatch: pytest.MonkeyPatch) -> None:
    if not cpu_kernels.numba_available():
        pytest.skip("Numba is not installed: only the Python words exist")
    rng = np.random.default_rng(6)
    rows = (rng.standard_normal((6, 300)) * np.exp2(rng.integers(-70, 60, (6, 300)))).astype(np.float32)
    rows[1] = -0.0
    rows[2, 7] = np.inf
    rows[4, 9] = np.nan
    fast = sum_partials.square_partials(rows)
    monkeypatch.setattr(cpu_kernels, "numba_available", lambda: False)
    slow = sum_partials.square_partials(rows)
    digits = sum_partials.SQUARE_DIGITS
    assert (fast[:, :digits] == slow[:, :digits]).all()
    assert ((fast[:, digits:] != 0) == (slow[:, digits:] != 0)).all()
    for root in (False, True):
        for dtype in (np.dtype(np.float32), np.dtype(np.float16)):
            python = sum_partials.finish_square_partials(slow, root, dtype)
            monkeypatch.undo()
            assert same(python, sum_partials.finish_square_partials(fast, root, dtype)), (root, dtype)
            monkeypatch.setattr(cpu_kernels, "numba_available", lambda: False)


def test_the_python_words_are_numbas(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without Numba, the partial sums are made and rounded with Python's integers: the same words, the same
    rounding."""
    if not cpu_kernels.numba_available():
        pytest.skip("Numba is not installed: only the Python words exist")
    rng = np.random.default_rng(5)
    rows = (rng.standard_normal((6, 500)) * np.exp2(rng.integers(-100, 100, (6, 500)))).astype(np.float32)
    rows[1] = -0.0
    rows[2, 7] = np.inf
    rows[3, :250] = -rows[3, 250:]
    for absolute in (False, True):
        fast = sum_partials.exact_partials(rows, absolute)
        monkeypatch.setattr(cpu_kernels, "numba_available", lambda: False)
        slow = sum_partials.exact_partials(rows, absolute)
        assert (fast[:, :sum_partials.DIGITS] == slow[:, :sum_partials.DIGITS]).all()
        assert ((fast[:, sum_partials.DIGITS:] != 0) == (slow[:, sum_partials.DIGITS:] != 0)).all()
        for average in (False, True):
            python = sum_partials.finish_partials(slow, 500, average, np.dtype(np.float32))
            monkeypatch.undo()
            assert same(python, sum_partials.finish_partials(fast, 500, average, np.dtype(np.float32)))
            monkeypatch.setattr(cpu_kernels, "numba_available", lambda: False)
        monkeypatch.undo()


def test_dask_refuses_what_reduce_refuses() -> None:
    x = da.ones((4, 4), chunks=2, dtype=np.float32)
    assert dml.reduce(x, "MULTIPLY", 1, keepdims=False).compute().tolist() == [1.0] * 4
    with pytest.raises(dml.OpenDMLError, match=r"REDUCE.*InputTensor.DataType"):
        dml.reduce(da.ones((4,), chunks=2, dtype=np.int32), "AVERAGE")
    assert dml.reduce(x, "ARGMAX", 1, keepdims=False).compute().tolist() == [0, 0, 0, 0]


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("function", ["MAX", "MIN", "SUM"])
def test_chunks_of_size_zero_along_the_reduced_axis_are_passed_over(dtype: type, function: str) -> None:
    """A block with no element along the reduced axis gives the function's identity (it was a zero-sized REDUCE
    description, refused)."""
    x = np.array([[3, -1, 2, 0], [-5, 7, 7, -2]], dtype)
    if dtype is np.float32:
        x[0, 3] = -0.0
    got = dml.reduce(da.from_array(x, chunks=((2,), (0, 2, 0, 2, 0))), function, 1, keepdims=False).compute()
    want = {"MAX": np.max, "MIN": np.min, "SUM": np.sum}[function](x, axis=1)
    assert got.dtype == x.dtype and got.tolist() == want.tolist()


@st.composite
def positive(draw: st.DrawFn) -> tuple[np.ndarray, tuple[tuple[int, ...], ...]]:
    """Positive values near 1 (products stay finite), now and then a special value, in any chunking."""
    shape = (draw(st.integers(1, 5)), draw(st.integers(1, 200)))
    dtype = draw(st.sampled_from([np.float32, np.float16]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    x = np.exp2(rng.uniform(-0.5, 0.5, shape) * draw(st.sampled_from([0.01, 1.0]))).astype(dtype)
    if draw(st.booleans()):
        x.flat[rng.integers(0, x.size)] = draw(st.sampled_from([np.inf, np.nan, 0.0, -1.5, 60000.0]))
    return x, (_chunks(draw, shape[0]), _chunks(draw, shape[1]))


@settings(max_examples=20, deadline=None)
@given(positive(), st.sampled_from(["LOG_SUM", "LOG_SUM_EXP", "MULTIPLY"]), st.sampled_from([0, 1, None]))
def test_log_sum_log_sum_exp_and_multiply_of_any_chunking_give_one_arrays_bits(
        case: tuple[np.ndarray, tuple[tuple[int, ...], ...]], function: str, axes: int | None) -> None:
    x, chunks = case
    got = dml.reduce(da.from_array(x, chunks=chunks), function, axes).compute()
    assert same(got, dml.reduce(x, function, axes))
    if function == "LOG_SUM" and axes == 1:  # ln of the exact sum, correctly rounded
        assert same(got.ravel(), np.array([oracle_log_sum(row, x.dtype.type) for row in x], x.dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_log_sum_of_chunked_rows_is_the_oracles(dtype: type) -> None:
    rng = np.random.default_rng(77)
    x = np.exp2(rng.uniform(-8, 8, (5, 37))).astype(dtype)
    x[1, 3] = -x[1, 3] * 2  # a sum of either sign
    x[2] = -x[2]
    got = dml.reduce(da.from_array(x, chunks=(2, (5, 11, 21))), "LOG_SUM", 1, keepdims=False).compute()
    assert same(got, np.array([oracle_log_sum(row, dtype) for row in x], dtype))


def test_log_sum_across_chunks_is_the_log_of_the_exact_sum() -> None:
    """[1e30, 1, -1e30] split by chunks: the exact sum is 1, its LOG 0 (a float64 sum in any order gives 0 or 1)."""
    x = np.array([[1e30, 1.0, -1e30, 1.0]], np.float32)
    got = dml.reduce(da.from_array(x, chunks=(1, 1)), "LOG_SUM", 1, keepdims=False).compute()
    assert got.tolist() == [np.float32(math.log(2.0))]


@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_integer_multiply_across_chunks_wraps_as_one_array(dtype: type) -> None:
    x = np.random.default_rng(5).integers(1, 1000, (3, 40)).astype(dtype)
    got = dml.reduce(da.from_array(x, chunks=((3,), (0, 7, 33))), "MULTIPLY", 1, keepdims=False).compute()
    wide = [math.prod(int(v) for v in row) % (1 << 32) for row in x]
    assert got.tolist() == np.array(wide, np.uint64).astype(np.uint32).astype(dtype).tolist()
