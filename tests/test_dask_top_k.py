"""opendml.top_k of Dask arrays: the same values (bit for bit) and indices as one array's call and as the oracle
of tests/top_k_oracle.py, whatever the chunking, along a chunked axis or not."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendml as dml
from tests.top_k_oracle import assert_same, oracle, random_values

da = pytest.importorskip("dask.array")


def _chunks(draw: st.DrawFn, n: int) -> tuple[int, ...]:
    """Cuts anywhere, and now and then a chunk of size 0 (Dask allows them)."""
    cuts = sorted(draw(st.sets(st.integers(1, n - 1), max_size=5))) if n > 1 else []
    sizes = [b - a for a, b in itertools.pairwise([0, *cuts, n])]
    if draw(st.booleans()):
        sizes.insert(draw(st.integers(0, len(sizes))), 0)
    return tuple(sizes)


@st.composite
def cases(draw: st.DrawFn) -> tuple[np.ndarray, tuple[tuple[int, ...], ...], int, int, bool]:
    shape = (draw(st.integers(1, 5)), draw(st.integers(1, 60)))
    type_name = draw(st.sampled_from(["FLOAT32", "FLOAT16", "INT32", "UINT8"]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    x = random_values(rng, type_name, shape, spread=draw(st.sampled_from([2, 8, 60])))  # ties, NaN, -0.0
    axis = draw(st.integers(0, 1))
    k = draw(st.integers(1, shape[axis]))
    return x, (_chunks(draw, shape[0]), _chunks(draw, shape[1])), axis, k, draw(st.booleans())


@settings(max_examples=20, deadline=None)
@given(cases())
def test_any_chunking_gives_one_arrays_answer(case: tuple[np.ndarray, tuple[tuple[int, ...], ...], int, int, bool]
                                              ) -> None:
    x, chunks, axis, k, largest = case
    values, indices = dml.top_k(da.from_array(x, chunks=chunks), k, axis, largest=largest)
    assert isinstance(values, da.Array) and isinstance(indices, da.Array)
    assert values.shape == indices.shape == tuple(k if d == axis else n for d, n in enumerate(x.shape))
    got = (values.compute(), indices.compute())
    want = dml.top_k(x, k, axis, largest=largest)
    assert got[1].dtype == want[1].dtype
    assert_same(got, want)
    assert_same(got, oracle(x, axis, k, largest))


def test_ties_and_nan_across_chunks_keep_the_lowest_global_indices() -> None:
    """Every chunk holds the same values: the K first are the earliest chunk's, then the next one's."""
    row = np.array([2.0, np.nan, 2.0, -0.0, 0.0, 1.0], np.float32)
    x = np.tile(row, (2, 4))
    for k in (1, 3, 7, 24):
        for largest in (True, False):
            got = dml.top_k(da.from_array(x, chunks=(1, 6)), k, largest=largest)
            assert_same(tuple(a.compute() for a in got), oracle(x, 1, k, largest))


def test_an_unchunked_axis_is_blockwise_and_index_type_is_kept() -> None:
    x = random_values(np.random.default_rng(2), "FLOAT16", (12, 30), spread=5)
    values, indices = dml.top_k(da.from_array(x, chunks=(5, 30)), 4, index_type="UINT64")
    assert values.chunks == ((5, 5, 2), (4,)) and indices.dtype == np.uint64
    assert_same((values.compute(), indices.compute()), oracle(x, 1, 4, True))


@pytest.mark.parametrize(("call", "field"), [
    (lambda d: dml.top_k(d, 31), "k"),
    (lambda d: dml.top_k(d, 2, axis=2), "axis"),
    (lambda d: dml.top_k(d.astype(np.float64), 2), "DataType"),
])
def test_refused_on_the_client_as_one_arrays_call(call: object, field: str) -> None:
    d = da.zeros((4, 30), np.float32, chunks=(2, 7))
    with pytest.raises(dml.OpenDMLError, match=field):
        call(d)  # type: ignore[operator]
