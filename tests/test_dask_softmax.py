"""opendml.softmax, log_softmax and hardmax of Dask arrays: the same bits as one array's call and as the oracle of
tests/softmax_oracle.py (fractions and mpmath), whatever the chunking, over chunked axes or whole ones."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendml as dml
from opendml.errors import OpenDMLError
from tests.softmax_oracle import oracle

da = pytest.importorskip("dask.array")

FUNCTIONS = {"SOFTMAX": dml.softmax, "LOG_SOFTMAX": dml.log_softmax, "HARDMAX": dml.hardmax}


def _same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes(), (got, want)


def _chunks(draw: st.DrawFn, n: int) -> tuple[int, ...]:
    """Cuts anywhere, and now and then a chunk of size 0 (Dask allows them)."""
    cuts = sorted(draw(st.sets(st.integers(1, n - 1), max_size=4))) if n > 1 else []
    sizes = [b - a for a, b in itertools.pairwise([0, *cuts, n])]
    if draw(st.booleans()):
        sizes.insert(draw(st.integers(0, len(sizes))), 0)
    return tuple(sizes)


def _values(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any, spread: float) -> np.ndarray:
    """Values with ties (a small spread), now and then NaN, +-inf, -0.0 and a row's huge element."""
    x = np.round(rng.standard_normal(shape) * spread).astype(np.float32) / 4
    specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 80.0, -80.0], np.float32)
    flat = x.reshape(-1)
    picked = rng.random(flat.size) < 0.08
    flat[picked] = rng.choice(specials, int(picked.sum()))
    return x.astype(dtype)


@st.composite
def cases(draw: st.DrawFn) -> tuple[np.ndarray, tuple[tuple[int, ...], ...], tuple[int, ...], str]:
    shape = (draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(1, 12)))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    x = _values(rng, shape, draw(st.sampled_from([np.float32, np.float16])), draw(st.sampled_from([1, 8, 60])))
    axes = draw(st.sampled_from([(2,), (1,), (0, 2), (1, 2), (0, 1, 2)]))
    return x, tuple(_chunks(draw, n) for n in shape), axes, draw(st.sampled_from(sorted(FUNCTIONS)))


@settings(max_examples=25, deadline=None)
@given(cases())
def test_any_chunking_gives_one_arrays_bits(case: tuple[np.ndarray, tuple[tuple[int, ...], ...], tuple[int, ...],
                                                        str]) -> None:
    x, chunks, axes, function = case
    got = FUNCTIONS[function](da.from_array(x, chunks=chunks), axes)
    assert isinstance(got, da.Array) and got.dtype == x.dtype and got.chunks == da.from_array(x, chunks=chunks).chunks
    computed = got.compute()
    _same(computed, FUNCTIONS[function](x, axes))
    _same(computed, oracle(x, function, axes))


def test_a_row_split_across_chunks_against_float64() -> None:
    """A long row in many chunks: the exact sum of the exponentials across the blocks, rounded once."""
    x = (np.random.default_rng(1).standard_normal((2, 3000)) * 4).astype(np.float32)
    got = dml.softmax(da.from_array(x, chunks=(1, 257)), 1).compute()
    _same(got, dml.softmax(x, 1))
    d = (x - x.max(1, keepdims=True)).astype(np.float64)  # step 2 is one FLOAT32 subtraction, then exact steps
    want = np.exp(d) / np.exp(d).sum(1, keepdims=True)
    assert np.max(np.abs(got - want) / want) < 2 ** -22  # about 1.5 FLOAT32 ulps (docs/semantics.md 9g)


def test_hardmax_ties_and_nan_across_chunks_pick_the_first() -> None:
    x = np.array([[np.nan, 1.0, 3.0, 3.0, 3.0, np.nan], [np.nan] * 6, [-np.inf, np.nan, -np.inf, 0, 0, 0]],
                 np.float32)
    got = dml.hardmax(da.from_array(x, chunks=(2, 2)), 1).compute()
    assert got.tolist() == [[0, 0, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0], [0, 0, 0, 1, 0, 0]]


def test_whole_axes_run_block_by_block() -> None:
    x = _values(np.random.default_rng(2), (6, 10), np.float32, 8)
    got = dml.log_softmax(da.from_array(x, chunks=(4, 10)))
    assert len(got.dask) == len(da.from_array(x, chunks=(4, 10)).dask) * 2  # one call per block
    _same(got.compute(), dml.log_softmax(x))


@pytest.mark.parametrize(("call", "phrase"), [
    (lambda x: dml.softmax(x, 2), "Axes"),
    (lambda x: dml.hardmax(x[0, 0]), "at least one dimension"),
    (lambda x: dml.log_softmax(x, out=x), "out"),
    (lambda x: dml.softmax(x.astype(np.int32)), "DataType"),
])
def test_refused_on_the_client_as_one_array_is(call: Any, phrase: str) -> None:
    with pytest.raises(OpenDMLError, match=phrase):
        call(da.from_array(np.ones((3, 4), np.float32), chunks=2))
