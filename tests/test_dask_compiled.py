"""Functions made by opendml.compile, called with Dask arrays: the fused graph per block, reductions merged
across blocks; bit-identical to the same compiled function on the whole NumPy arrays."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendml as dml
from tests.conftest import CUDA_MISSING

da = pytest.importorskip("dask.array", reason="Dask is not installed (pip install 'opendml[dask]')")
import dask  # noqa: E402 (after the skip: only where dask.array imported)

from tests.test_dask import _cuts  # noqa: E402

NEEDS_CUDA = pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")
EXAMPLES = max(1, settings.default.max_examples // 2)  # each traces, compiles and runs a graph per block shape
REDUCTIONS = {"ARGMIN": dml.argmin, "ARGMAX": dml.argmax}


@dml.compile
def _chain(x: Any, scale: Any, zero_point: Any, lo: float, hi: float, kind: str, axes: tuple[int, ...],
           direction: str, policy: str, index_type: str) -> Any:
    """DEQUANTIZE_LINEAR -> CLIP -> ARGMIN (ARGMAX): the clip makes ties of everything at or beyond a bound."""
    clipped = dml.clip(dml.dequantize_linear(x, scale, zero_point), lo, hi)
    return REDUCTIONS[kind](clipped, axes, axis_direction=direction, nan_policy=policy, output_type=index_type)


@dml.compile
def _clipped_and_index(x: Any, lo: float, hi: float) -> Any:
    """Two results: an element-wise one and the reduction of the same value (one fused kernel per block)."""
    clipped = dml.clip(x, lo, hi)
    return clipped, dml.argmin(clipped, (0, 1), axis_direction="DECREASING")


@dml.compile
def _elementwise(x: Any, scale: Any) -> Any:
    return dml.threshold(dml.dequantize_linear(x, scale, None), 0.25)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@st.composite
def _chain_cases(draw: st.DrawFn) -> tuple[Any, ...]:
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 9), min_size=rank, max_size=rank)))
    chunks = tuple(_cuts(draw, n) for n in shape)
    axes = tuple(sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1))))
    seed = draw(st.integers(0, 2**32 - 1))
    kind = draw(st.sampled_from(sorted(REDUCTIONS)))
    direction = draw(st.sampled_from(["INCREASING", "DECREASING"]))
    policy = draw(st.sampled_from(["IGNORE", "PROPAGATE"]))
    index_type = draw(st.sampled_from(["INT64", "INT32", "UINT64", "UINT32"]))
    lo, hi = sorted(draw(st.sampled_from([-1.0, 0.0, 0.5, 2.0, 6.0])) for _ in range(2))
    return shape, chunks, axes, seed, kind, direction, policy, index_type, lo, hi


@settings(max_examples=EXAMPLES, deadline=None)
@given(_chain_cases())
def test_a_compiled_chain_ending_in_a_reduction_gives_one_machines_bits_on_any_chunking(case: tuple[Any, ...]) -> None:
    shape, chunks, axes, seed, kind, direction, policy, index_type, lo, hi = case
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, shape, dtype=np.uint8)
    # Per last-axis scale and zero point, some scales NaN (NaN values: the policy decides) or zero.
    scale = rng.choice(np.array([0.05, 0.5, -0.25, 0.0, np.nan], np.float32), shape[-1])
    zero_point = rng.integers(0, 256, shape[-1], dtype=np.uint8)
    args = (lo, hi, kind, axes, direction, policy, index_type)
    want = _chain(x, scale, zero_point, *args)
    dx = da.from_array(x, chunks=chunks)
    got = _chain(dx, scale, zero_point, *args)
    assert got.shape == want.shape
    (computed,) = dask.compute(got, scheduler="sync")
    assert _same(computed, want), (computed, want)


@pytest.mark.parametrize("scheduler", ["sync", "threads"])
@pytest.mark.parametrize("policy", ["IGNORE", "PROPAGATE"])
def test_blocks_of_nan_only_and_ties_across_blocks(scheduler: str, policy: str) -> None:
    """FLOAT32 elements, CLIP to [0, 1] (ties at both bounds across every block), a block all NaN."""
    rng = np.random.default_rng(3)
    x = rng.normal(0.0, 2.0, (12, 10)).astype(np.float32)
    x[4:8, 0:5] = np.nan
    chunks = ((4, 4, 4), (5, 5))
    for kind in REDUCTIONS:
        for axes in [(0,), (1,), (0, 1)]:
            for direction in ("INCREASING", "DECREASING"):
                @dml.compile
                def f(a: Any) -> Any:
                    return REDUCTIONS[kind](dml.clip(a, 0.0, 1.0), axes, axis_direction=direction,  # noqa: B023
                                            nan_policy=policy)
                want = f(x)
                (got,) = dask.compute(f(da.from_array(x, chunks=chunks)), scheduler=scheduler)
                assert _same(got, want), (kind, axes, direction)


def test_an_all_nan_array_gives_directmls_first_or_last_index() -> None:
    x = np.full((6, 4), np.nan, np.float32)
    for direction, index in (("INCREASING", 0), ("DECREASING", 23)):
        @dml.compile
        def f(a: Any) -> Any:
            return dml.argmin(dml.clip(a, 0.0, 1.0), None, axis_direction=direction)  # noqa: B023
        (got,) = dask.compute(f(da.from_array(x, chunks=(2, 3))), scheduler="sync")
        assert got.tolist() == [[index]]


def test_an_element_wise_result_and_a_reduction_of_it_come_from_one_run_per_block() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(0.0, 3.0, (9, 14)).astype(np.float32)
    want_clipped, want_index = _clipped_and_index(x, -1.0, 1.0)
    clipped, index = _clipped_and_index(da.from_array(x, chunks=(4, 5)), -1.0, 1.0)
    assert clipped.chunks == ((4, 4, 1), (5, 5, 4))
    got_clipped, got_index = dask.compute(clipped, index, scheduler="threads")
    assert _same(got_clipped, want_clipped) and _same(got_index, want_index)
    clipped_here = np.clip(x, np.float32(-1.0), np.float32(1.0))  # no NaN: NumPy's clip is CLIP here
    assert got_index.tolist() == [[int(np.flatnonzero(clipped_here.ravel() == clipped_here.min())[-1])]]


def test_an_element_wise_function_runs_per_block_with_a_dask_operand() -> None:
    rng = np.random.default_rng(6)
    x = rng.integers(-128, 128, (20, 8), dtype=np.int8)
    scale = rng.random(8).astype(np.float32)
    want = _elementwise(x, scale)
    got = _elementwise(da.from_array(x, chunks=(7, 3)), da.from_array(scale, chunks=4))
    assert got.dtype == want.dtype and got.chunks == ((7, 7, 6), (3, 1, 2, 2))
    (computed,) = dask.compute(got, scheduler="sync")
    assert _same(computed, want)


def test_nothing_is_computed_until_asked() -> None:
    """A Dask input whose computation raises: the call builds a graph and runs nothing."""
    def boom(block: np.ndarray) -> np.ndarray:
        raise RuntimeError("computed")

    x = da.zeros((8, 8), dtype=np.uint8, chunks=4).map_blocks(boom, dtype=np.uint8)
    scale = np.full(8, 0.5, np.float32)
    result = _chain(x, scale, np.zeros(8, np.uint8), 0.0, 6.0, "ARGMIN", (1,), "INCREASING", "IGNORE", "INT64")
    assert result.shape == (8, 1)
    with pytest.raises(RuntimeError, match="computed"):
        result.compute(scheduler="sync")


def test_the_index_type_must_hold_the_whole_arrays_reduction() -> None:
    """2^32 + 2^16 elements reduced: UINT32 cannot index them (checked on the client, nothing computed)."""
    x = da.zeros((2**16, 2**16 + 1), dtype=np.uint8, chunks=(2**14, 2**14))
    scale = np.full(2**16 + 1, 0.5, np.float32)
    with pytest.raises(dml.OpenDMLError, match=r"^ARGMIN: OutputTensor\.DataType"):
        _chain(x, scale, np.zeros(2**16 + 1, np.uint8), 0.0, 6.0, "ARGMIN", (0, 1), "INCREASING", "IGNORE",
               "UINT32")
    assert _chain(x, scale, np.zeros(2**16 + 1, np.uint8), 0.0, 6.0, "ARGMIN", (0, 1), "INCREASING", "IGNORE",
                  "INT64").shape == (1, 1)


def test_a_result_computed_from_a_reduction_is_refused() -> None:
    @dml.compile
    def f(a: Any) -> Any:
        return dml.clip(dml.argmin(a, 1), 0, 3)

    with pytest.raises(dml.OpenDMLError, match=r"^opendml\.compile: result must be element-wise or one argmin"):
        f(da.zeros((4, 4), dtype=np.float32, chunks=2))


def test_an_array_held_by_the_function_along_a_reduced_axis_is_refused_where_it_runs() -> None:
    held = np.linspace(0.5, 1.0, 6, dtype=np.float32)

    @dml.compile
    def f(a: Any) -> Any:
        return dml.argmin(dml.dequantize_linear(a, held, None), 1)

    x = np.arange(24, dtype=np.uint8).reshape(4, 6)
    result = f(da.from_array(x, chunks=(2, 6)))
    with pytest.raises(dml.OpenDMLError, match=r"^opendml\.compile: reduction input must be computed from the "
                       r"function's arguments alone"):
        result.compute(scheduler="sync")
    assert math.prod(f(x).shape) == 4  # on NumPy arrays the same function runs


def test_calls_on_other_arrays_computed_together_each_give_their_own_answer() -> None:
    """Each call's tasks have keys of their own: two calls of one function on arrays of the same chunks,
    computed together (or one after the other on a cluster that still holds the first's blocks), each give
    their own arrays' answers, element-wise and reduced."""
    a = np.array([[5, 1], [0, 3]], np.int32)
    b = np.array([[0, 3], [5, 1]], np.int32)
    lazy_a, lazy_b = da.from_array(a, chunks=1), da.from_array(b, chunks=1)
    args = (0.0, 6.0, "ARGMIN", (0,), "INCREASING", "IGNORE", "INT64")
    got_a, got_b = dask.compute(_chain(lazy_a, 1.0, None, *args), _chain(lazy_b, 1.0, None, *args))
    assert got_a.tolist() == [[1, 0]] and got_b.tolist() == [[0, 1]]
    codes_a, codes_b = da.from_array(a.astype(np.uint8), chunks=1), da.from_array(b.astype(np.uint8), chunks=1)
    scaled_a, scaled_b = dask.compute(_elementwise(codes_a, 2.0), _elementwise(codes_b, 2.0))
    assert scaled_a.tolist() == [[10, 2], [0.25, 6]] and scaled_b.tolist() == [[0.25, 6], [10, 2]]


@NEEDS_CUDA
def test_cupy_chunks_run_the_compiled_graph_on_the_gpu() -> None:
    """CuPy chunks: the fused graph on each block on the GPU, the values gathered there, CuPy results with the
    bits of the compiled function on the whole NumPy arrays."""
    import cupy

    rng = np.random.default_rng(8)
    x = rng.integers(0, 256, (40, 24), dtype=np.uint8)
    scale = rng.choice(np.array([0.05, -0.5, np.nan], np.float32), 24)
    zero_point = rng.integers(0, 256, 24, dtype=np.uint8)
    lazy = da.from_array(cupy.asarray(x), chunks=(16, 10))
    for axes, kind, direction, policy in [((1,), "ARGMIN", "INCREASING", "IGNORE"),
                                          ((0, 1), "ARGMAX", "DECREASING", "PROPAGATE")]:
        args = (0.0, 3.0, kind, axes, direction, policy, "INT32")
        result = _chain(lazy, cupy.asarray(scale), cupy.asarray(zero_point), *args)
        assert type(result._meta) is cupy.ndarray
        (got,) = dask.compute(result, scheduler="threads")
        assert isinstance(got, cupy.ndarray) and _same(cupy.asnumpy(got), _chain(x, scale, zero_point, *args))


def test_a_small_array_argument_goes_to_the_tasks_whole_and_a_large_one_block_by_block(monkeypatch) -> None:
    """A per-column scale and zero point given as NumPy arrays are one key each in the graph (sent to a worker
    once and sliced there for each block: a task per block of them was placed apart from the block's data
    and fetched across workers); past blocks.WHOLE_OPERAND_BYTES they are read block by block. Both give
    one machine's bits."""
    from opendml.dask import blocks

    rng = np.random.default_rng(9)
    x = rng.integers(0, 256, (6, 40), dtype=np.uint8)
    scale = rng.choice(np.array([0.05, 0.5, -0.25, 0.0], np.float32), 40)
    zero_point = rng.integers(0, 256, 40, dtype=np.uint8)
    args = (0.0, 2.0, "ARGMIN", (1,), "DECREASING", "IGNORE", "INT64")
    want = _chain(x, scale, zero_point, *args)
    dx = da.from_array(x, chunks=(3, 8))  # 2 x 5 blocks

    whole = _chain(dx, scale, zero_point, *args)
    graph = dict(whole.__dask_graph__())
    operand_keys = [k for k in graph if (k[0] if isinstance(k, tuple) else k).startswith("ndarray-")]
    assert len(operand_keys) == 2  # the scale and the zero point, each whole
    (got,) = dask.compute(whole, scheduler="sync")
    assert _same(got, want)
    monkeypatch.setattr(blocks, "WHOLE_OPERAND_BYTES", 16)  # 40 bytes of zero point: block by block
    by_blocks = _chain(dx, scale, zero_point, *args)
    graph = dict(by_blocks.__dask_graph__())
    assert not [k for k in graph if (k[0] if isinstance(k, tuple) else k).startswith("ndarray-")]
    assert len([k for k in graph if isinstance(k, tuple) and k[0].startswith("array-")]) == 20  # x 10, 5 and 5
    (got,) = dask.compute(by_blocks, scheduler="sync")
    assert _same(got, want)
