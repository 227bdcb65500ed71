"""opendml.dequantize and opendml.quantize of Dask arrays: the chunks cut at block boundaries, the same bits as one
array's call and as values computed here from the rule, whatever the chunking; 4-bit data, Dask scales."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendml as dml

da = pytest.importorskip("dask.array")
ml_dtypes = pytest.importorskip("ml_dtypes")


def _chunks(draw: st.DrawFn, n: int) -> tuple[int, ...]:
    cuts = sorted(draw(st.sets(st.integers(1, n - 1), max_size=3))) if n > 1 else []
    return tuple(b - a for a, b in itertools.pairwise([0, *cuts, n]))


def _expanded(values: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    for axis, n in enumerate(shape):
        values = np.repeat(values, n // values.shape[axis], axis=axis)
    return values


@st.composite
def cases(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[tuple[int, ...], ...], bool]:
    blocks = (draw(st.sampled_from([1, 2, 3])), draw(st.sampled_from([1, 2, 4, 8])))
    counts = (draw(st.integers(1, 3)), draw(st.integers(1, 6)))
    per_axis = draw(st.sampled_from(["blocks", "row", "column"]))
    q_shape = {"blocks": counts, "row": (1, counts[1]), "column": (counts[0], 1)}[per_axis]
    shape = (blocks[0] * counts[0], blocks[1] * counts[1])
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    x = rng.integers(0, 16, shape).astype(ml_dtypes.uint4)
    scale = rng.uniform(0.1, 4.0, q_shape).astype(np.float32)
    zero = rng.integers(0, 16, q_shape).astype(ml_dtypes.uint4)
    chunks = (_chunks(draw, shape[0]), _chunks(draw, shape[1]))
    return x, scale, zero, chunks, draw(st.booleans())


@settings(max_examples=12, deadline=None)
@given(cases())
def test_dequantize_of_any_chunking_gives_the_bits_of_one_call(case: tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                           tuple[tuple[int, ...], ...], bool]) -> None:
    x, scale, zero, chunks, dask_scale = case
    want = ((x.astype(np.int64) - _expanded(zero, x.shape).astype(np.int64)).astype(np.float32)
            * _expanded(scale, x.shape))
    q = (da.from_array(scale, chunks=1), da.from_array(zero, chunks=1)) if dask_scale else (scale, zero)
    lazy = dml.dequantize(da.from_array(x, chunks=chunks), *q)
    assert isinstance(lazy, da.Array) and lazy.dtype == np.float32
    got = lazy.compute(scheduler="sync")
    assert got.tobytes() == want.astype(np.float32).tobytes()
    assert got.tobytes() == dml.dequantize(x, scale, zero).tobytes()


@settings(max_examples=8, deadline=None)
@given(cases())
def test_quantize_of_any_chunking_gives_the_bits_of_one_call(case: tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                         tuple[tuple[int, ...], ...], bool]) -> None:
    x, scale, zero, chunks, _ = case
    values = np.random.default_rng(1).uniform(-40, 40, x.shape).astype(np.float32)
    lazy = dml.quantize(da.from_array(values, chunks=chunks), scale, zero)
    assert lazy.dtype == ml_dtypes.uint4
    rounded = np.rint(values / _expanded(scale, x.shape)) + _expanded(zero, x.shape).astype(np.float32)
    want = np.clip(rounded, 0, 15).astype(np.uint8)
    got = lazy.compute(scheduler="sync")
    assert got.astype(np.uint8).tolist() == want.tolist()
    assert got.tobytes() == dml.quantize(values, scale, zero).tobytes()


def test_blocks_that_do_not_divide_x_are_refused_on_the_client() -> None:
    x = da.zeros((4, 6), dtype=np.int8, chunks=2)
    with pytest.raises(dml.InvalidArgumentError, match=r"DEQUANTIZE: QuantizationTensors\[0\].Sizes\[1\] must divide "
                                                       r"InputTensor.Sizes\[1\] \(6\)"):
        dml.dequantize(x, np.ones((4, 4), np.float32))
    with pytest.raises(dml.InvalidArgumentError, match="QUANTIZE: output_type must be INT8, INT4, UINT8 or UINT4"):
        dml.quantize(da.zeros((4,), dtype=np.float32), np.float32(1), output_type="INT32")


def test_chunks_are_cut_at_block_boundaries_and_a_per_tensor_axis_is_left_alone() -> None:
    x = da.zeros((6, 16), dtype=np.int8, chunks=(5, 7))
    lazy = dml.dequantize(x, np.ones((1, 4), np.float32))  # blocks of 4 along the last axis, one row value
    assert lazy.chunks == ((5, 1), (4, 8, 4))
    assert lazy.compute(scheduler="sync").tolist() == np.zeros((6, 16), np.float32).tolist()


def test_a_number_beside_blocks_of_dask_arrays(monkeypatch: pytest.MonkeyPatch) -> None:
    """A number zero point beside a blocked scale (a Dask scale too): one value for every block, whatever the
    chunking, the bits of one array's call."""
    from opendml.backends import cpu_kernels

    monkeypatch.setattr(cpu_kernels, "_chosen", cpu_kernels.load("numpy"))
    x = np.array([[0, 200, 17, 255, 128, 3], [9, 90, 100, 110, 1, 250]], np.uint8)
    scale = np.float32([[0.5, 2, 0.25], [1, 0.125, 4]])
    want = ((x.astype(np.int64) - 128).astype(np.float32) * _expanded(scale, x.shape)).astype(np.float32)
    for s in (scale, da.from_array(scale, chunks=1)):
        got = dml.dequantize(da.from_array(x, chunks=(1, 4)), s, 128).compute(scheduler="sync")
        assert got.tobytes() == want.tobytes() == dml.dequantize(x, scale, 128).tobytes()
