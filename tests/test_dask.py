"""The functional API on Dask arrays: lazy graphs of opendml calls per block, bit-identical to single-machine
opendml, on the synchronous and threaded schedulers and on an in-process distributed cluster."""

from __future__ import annotations

import itertools
import math
import os
import pickle
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendml as dml
from opendml.kernels.spec import ReductionKind
from tests.conftest import CUDA_MISSING
from tests.elementwise_oracle import ARGMIN_OUTPUT_TYPES, argmin_tensor
from tests.helpers import edge_values, same_values
from tests.limits import HANG_SECONDS

da = pytest.importorskip("dask.array", reason="Dask is not installed (pip install 'opendml[dask]')")
import dask  # noqa: E402 (after the skip: only where dask.array imported)
from dask.sizeof import sizeof  # noqa: E402

try:
    from distributed.utils_test import gen_cluster
except ImportError:  # the in-process cluster test is skipped, with its reason
    gen_cluster = None

from opendml.dask import blocks, merge  # noqa: E402 (they import Dask's arrays only where they exist)

NEEDS_CUDA = pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")
NEEDS_DISTRIBUTED = pytest.mark.skipif(gen_cluster is None, reason="distributed is not installed "
                                       "(pip install 'opendml[dask]')")
FUNCTIONS = {"ARGMIN": dml.argmin, "ARGMAX": dml.argmax}
EXAMPLES = max(1, settings.default.max_examples * 2 // 3)  # each builds and runs a graph: 13 under the ci profile


def _compute(*arrays: Any, scheduler: str = "sync") -> tuple[Any, ...]:
    return dask.compute(*arrays, scheduler=scheduler)


def _cuts(draw: st.DrawFn, size: int) -> tuple[int, ...]:
    """Uneven chunks of ``size``: one chunk, chunks of 1, or random cuts; sometimes with zero-length chunks
    among them (valid in Dask, as after boolean indexing and compute_chunk_sizes())."""
    form = draw(st.sampled_from(["one", "ones", "random"]))
    if form == "one" or size == 0:
        chunks: list[int] = [size]
    elif form == "ones":
        chunks = [1] * size
    else:
        cuts = sorted(draw(st.sets(st.integers(1, size - 1), max_size=size - 1))) if size > 1 else []
        edges = [0, *cuts, size]
        chunks = [b - a for a, b in itertools.pairwise(edges)]
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):
        chunks.insert(draw(st.integers(0, len(chunks))), 0)
    return tuple(chunks)


def _values(data_type: str, shape: tuple[int, ...], rng: np.random.Generator, ties: bool) -> np.ndarray:
    """Edge values (NaN, infinities, -0.0, limits), or few distinct values (ties everywhere)."""
    dtype = dml.DataType[data_type].numpy
    count = math.prod(shape)
    if ties:
        picks = [-0.0, 0.0, 1.0, np.nan] if np.dtype(dtype).kind == "f" else [0, 1, 2]
        return rng.choice(np.array(picks), count).astype(dtype).reshape(shape)
    return edge_values(dml.DataType[data_type], count, rng).reshape(shape)


def _nan_block(x: np.ndarray, chunks: tuple[tuple[int, ...], ...], rng: np.random.Generator) -> None:
    """Fill one random block with NaN: a chunk whose partial is NaN (under IGNORE: "all NaN")."""
    where = []
    for sizes in chunks:
        k = int(rng.integers(len(sizes)))
        start = sum(sizes[:k])
        where.append(slice(start, start + sizes[k]))
    x[tuple(where)] = np.nan


@st.composite
def reductions(draw: st.DrawFn) -> dict[str, Any]:
    rank = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank)))
    return {
        "shape": shape,
        "chunks": tuple(_cuts(draw, n) for n in shape),
        "axes": tuple(sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1)))),
        "data_type": draw(st.sampled_from(["FLOAT32", "FLOAT16", "INT8", "UINT16", "INT64", "UINT64"])),
        "kind": draw(st.sampled_from(list(FUNCTIONS))),
        "direction": draw(st.sampled_from(["INCREASING", "DECREASING"])),
        "policy": draw(st.sampled_from(["IGNORE", "PROPAGATE"])),
        "output_type": draw(st.sampled_from(ARGMIN_OUTPUT_TYPES)),
        "ties": draw(st.booleans()),
        "nan_block": draw(st.booleans()),
        "seed": draw(st.integers(0, 2**32 - 1)),
    }


def _reduce_both(x: np.ndarray, chunks: Any, axes: Any, kind: str, scheduler: str = "sync", **options: Any
                 ) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """(indices, values) of the reduction on the Dask array of ``x`` and on ``x`` itself."""
    function = FUNCTIONS[kind]
    lazy = function(da.from_array(x, chunks=chunks), axes, return_values=True, **options)
    assert all(dml.dask.is_dask_array(a) for a in lazy)
    got = _compute(*lazy, scheduler=scheduler)
    return (got[0], got[1]), function(x, axes, return_values=True, **options)


def _assert_same(got: tuple[np.ndarray, np.ndarray], expected: tuple[np.ndarray, np.ndarray]) -> None:
    assert got[0].dtype == expected[0].dtype and got[0].shape == expected[0].shape
    assert np.array_equal(got[0], expected[0]), (got[0], expected[0])
    assert got[1].dtype == expected[1].dtype and same_values(got[1], expected[1]), (got[1], expected[1])


# --- ARGMIN and ARGMAX across chunks ------------------------------------------------------------------------


@settings(max_examples=EXAMPLES)
@given(reductions())
def test_reductions_across_chunks_match_one_machine(case: dict[str, Any]) -> None:
    """Random shapes, uneven chunks (one chunk, chunks of 1), axis sets, both reductions, directions and NaN
    policies, every index type, ties and NaN-only chunks: bit-identical to opendml on the whole array."""
    rng = np.random.default_rng(case["seed"])
    x = _values(case["data_type"], case["shape"], rng, case["ties"])
    if case["nan_block"] and x.dtype.kind == "f":
        _nan_block(x, case["chunks"], rng)
    got, expected = _reduce_both(x, case["chunks"], case["axes"], case["kind"], axis_direction=case["direction"],
                                 nan_policy=case["policy"], output_type=case["output_type"])
    _assert_same(got, expected)


def _oracle(x: np.ndarray, axes: tuple[int, ...], direction: str, kind: str, policy: str) -> np.ndarray:
    read = {index: float(v) if x.dtype.kind == "f" else int(v) for index, v in np.ndenumerate(x)}
    found = argmin_tensor(read, x.shape, axes, direction, kind == "ARGMAX", policy == "PROPAGATE")
    result = np.zeros(tuple(1 if k in axes else n for k, n in enumerate(x.shape)), np.int64)
    for index, value in found.items():
        result[index] = value
    return result


@pytest.mark.parametrize("scheduler", ["sync", "threads"])
def test_ties_across_chunk_boundaries(scheduler: str) -> None:
    """Equal minima (and -0.0 beside +0.0) in different chunks: INCREASING takes the first index of the whole
    array, DECREASING the last, wherever the chunks cut; against the oracle."""
    x = np.array([[3.0, 0.0, 5.0, -0.0, 7.0, 0.0],
                  [1.0, 9.0, 1.0, 9.0, 1.0, 9.0],
                  [8.0, 2.0, 8.0, 2.0, 8.0, 8.0]], np.float32)
    for chunks, axes, kind, direction in itertools.product([(1, 1), (2, 4), (3, (1, 2, 3)), (3, 6)],
                                                           [(1,), (0, 1), (0,)], FUNCTIONS,
                                                           ["INCREASING", "DECREASING"]):
        got, expected = _reduce_both(x, chunks, axes, kind, scheduler, axis_direction=direction)
        _assert_same(got, expected)
        assert np.array_equal(got[0], _oracle(x, axes, direction, kind, "IGNORE"))
    (first, first_value), _ = _reduce_both(x[:1], (1, 2), 1, "ARGMIN")
    (last, last_value), _ = _reduce_both(x[:1], (1, 2), 1, "ARGMIN", axis_direction="DECREASING")
    assert first.item() == 1 and not np.signbit(first_value.item())  # +0.0 at 1, in the first chunk
    assert last.item() == 5 and not np.signbit(last_value.item())  # +0.0 at 5; -0.0 at 3 lies between


@pytest.mark.parametrize("policy", ["IGNORE", "PROPAGATE"])
def test_nan_only_chunks(policy: str) -> None:
    """Chunks of NaN only beside chunks of numbers, and an array of NaN only (IGNORE: index 0 or count - 1, as
    DirectML; PROPAGATE: the first or last NaN), against the oracle."""
    nan = np.nan
    x = np.array([[nan, nan, 4.0, 2.0], [nan, nan, 2.0, nan], [nan, nan, nan, nan]], np.float32)
    for chunks, axes, kind, direction in itertools.product([(1, 2), (3, 2), (2, 1)], [(0,), (1,), (0, 1)],
                                                           FUNCTIONS, ["INCREASING", "DECREASING"]):
        got, expected = _reduce_both(x, chunks, axes, kind, axis_direction=direction, nan_policy=policy)
        _assert_same(got, expected)
        assert np.array_equal(got[0], _oracle(x, axes, direction, kind, policy))
    every = np.full((4, 6), nan, np.float16)
    for direction, index in [("INCREASING", 0), ("DECREASING", 23)]:
        (indices, values), _ = _reduce_both(every, (3, 4), None, "ARGMIN", axis_direction=direction,
                                            nan_policy=policy)
        assert indices.item() == index and np.isnan(values.item())


@pytest.mark.parametrize("output_type", ARGMIN_OUTPUT_TYPES)
def test_every_index_type_over_several_axes(output_type: str) -> None:
    x = np.random.default_rng(5).permutation(4 * 5 * 6 * 3).astype(np.float32).reshape(4, 5, 6, 3)
    for axes in [(0, 2), (1, 2, 3), (0, 1, 2, 3), (3,)]:
        got, expected = _reduce_both(x, (3, 2, 4, 2), axes, "ARGMAX", output_type=output_type)
        assert got[0].dtype == dml.DataType[output_type].numpy
        _assert_same(got, expected)


def test_results_keep_the_rank_and_the_kept_axes_chunks() -> None:
    x = da.zeros((6, 8, 5), chunks=(2, 3, 5), dtype=np.int16)
    indices, values = dml.argmin(x, (0, 2), output_type="UINT32", return_values=True)
    assert indices.shape == values.shape == (1, 8, 1)
    assert indices.chunks == values.chunks == ((1,), (3, 3, 2), (1,))
    assert indices.dtype == np.uint32 and values.dtype == np.int16
    assert type(indices._meta) is np.ndarray and indices._meta.dtype == np.uint32
    scalar = dml.argmax(da.from_array(np.float32(-3.5)), return_values=True)
    assert [a.shape for a in scalar] == [(), ()]
    got = _compute(*scalar)
    assert got[0].shape == () and got[0].item() == 0 and got[1].item() == -3.5


def test_empty_arrays_as_on_one_machine() -> None:
    """An empty result is empty (checked with sizes of 1 standing in); an empty reduction is refused as on one
    machine, with the same message."""
    for shape, axes in [((0, 5), 1), ((3, 0), 0), ((0, 0), 1)]:
        x = np.zeros(shape, np.float32)
        got, expected = _reduce_both(x, 2, axes, "ARGMIN")
        _assert_same(got, expected)
        assert got[0].size == 0
    x = np.zeros((0, 5), np.float32)
    for axes in [0, None]:
        message = _same_error(lambda: dml.argmax(da.from_array(x), axes), lambda: dml.argmax(x, axes))  # noqa: B023
        assert message == "DML_BUFFER_TENSOR_DESC: Sizes[0] must be in [1, 4294967295]; got 0."


def test_output_type_too_small_for_the_global_count() -> None:
    """The rule holds for the whole reduction, not a chunk's: refused on the client with the message
    single-machine opendml gives for the same shape (a zero-stride NumPy view of it, never run)."""
    shape = (65536, 32769)  # 2^31 + 2^16 elements: more than INT32 counts; chunks of 2^26
    lazy = da.zeros(shape, dtype=np.uint8, chunks=(2048, 32769))
    with pytest.raises(dml.InvalidArgumentError) as on_dask:
        dml.argmin(lazy, output_type="INT32")
    with pytest.raises(dml.InvalidArgumentError) as on_numpy:
        dml.argmin(np.broadcast_to(np.uint8(0), shape), output_type="INT32")
    assert str(on_dask.value) == str(on_numpy.value) == ("ARGMIN: OutputTensor.DataType must hold every index of "
                                                         "a reduction over 2147549184 elements; got INT32.")
    assert dml.argmin(lazy, 1, output_type="INT32").shape == (65536, 1)  # a row's count fits
    # More elements than one tensor may hold (2^33): each chunk is a tensor; the global count is checked.
    huge = da.zeros((2**17, 2**16), dtype=np.uint8, chunks=(2**11, 2**16))
    with pytest.raises(dml.InvalidArgumentError, match=r"^ARGMAX: OutputTensor\.DataType must hold every index of "
                       r"a reduction over 8589934592 elements; got UINT32\.$"):
        dml.argmax(huge, output_type="UINT32")
    assert dml.argmax(huge, output_type="UINT64").shape == (1, 1)


def _same_error(on_dask: Callable[[], Any], on_numpy: Callable[[], Any]) -> str:
    """Both calls raise the same error, word for word: the Dask call's is raised on the client."""
    with pytest.raises(dml.OpenDMLError) as lazy:
        on_dask()
    with pytest.raises(dml.OpenDMLError) as eager:
        on_numpy()
    assert type(lazy.value) is type(eager.value) and str(lazy.value) == str(eager.value)
    return str(lazy.value)


def test_reduction_errors_are_the_usual_ones_on_the_client() -> None:
    x = np.zeros((4, 6), np.float32)
    lazy = da.from_array(x, chunks=2)
    cases: list[tuple[Callable[[Any], Any], str]] = [
        (lambda a: dml.argmin(a, 2), r"^ARGMIN: Axes\[0\] must be an integer in \[-2, 1\]; got 2\.$"),
        (lambda a: dml.argmax(a, 1, output_type="INT16"), r"^ARGMAX: OutputTensor\.DataType must be one of"),
        (lambda a: dml.argmin(a.astype(np.float64)), r"^ARGMIN: .*FLOAT64"),
        (lambda a: dml.argmax(a, device=dml.Device("cpu", "2_1")), r"^ARGMAX: "),
        (lambda a: dml.argmax(a.astype(np.int64), device=dml.Device("cpu", "4_0")), r"^ARGMAX: .*INT64"),
        (lambda a: dml.argmin(a, device="tpu"), r"^ARGMIN: device must be a Device"),
        (lambda a: dml.argmin(a, nan_policy="SOMETIMES"), r"^ARGMIN: NanPolicy must be one of"),
        (lambda a: dml.argmin(a, return_values=1), r"^ARGMIN: return_values must be True or False; got 1\.$"),
    ]
    for call, pattern in cases:
        assert re.match(pattern, _same_error(lambda: call(lazy), lambda: call(x)))  # noqa: B023 (called at once)
    unknown = lazy[lazy[:, 0] > 0]  # rows of unknown count
    with pytest.raises(dml.InvalidArgumentError, match=r"^ARGMIN: InputTensor shape must be known "):
        dml.argmin(unknown, 1)


def test_global_indices_past_two_to_the_32() -> None:
    """A block's local index becomes the whole array's, in int64, right past 2^32 elements (checked with
    Python's integers, not NumPy's)."""
    sizes = (3 * 2**20, 5, 2**16)  # reduced axes 0, 2 and 3 of some array: 2^36 * 15 elements
    starts = (3 * 2**20 - 7, 0, 2**15)
    block = (7, 4, 5, 2**15)  # the block's shape (axis 1 is kept)
    local = np.array([[[[0]], [[7 * 5 * 2**15 - 1]], [[3 * 5 * 2**15 + 2 * 2**15 + 11]]]], np.int64).reshape(1, 3, 1, 1)
    got = blocks.global_indices(local, block, (0, 2, 3), starts, sizes)
    for k in range(3):
        flat = int(local.reshape(-1)[k])
        i0, rest = divmod(flat, 5 * 2**15)
        i2, i3 = divmod(rest, 2**15)
        expected = ((i0 + starts[0]) * 5 + i2 + starts[1]) * 2**16 + i3 + starts[2]
        assert int(got.reshape(-1)[k]) == expected and expected > 2**32
    assert got.dtype == np.int64


def test_partials_count_their_arrays_for_dask_memory_accounting() -> None:
    part = merge.Partial(np.zeros(1000, np.float32), np.zeros(1000, np.int64))
    assert sizeof(part) >= 12000


def _merge_fan_ins(lazy: Any) -> list[int]:
    """How many inputs each merge task of ``lazy``'s graph takes (Dask names them ``<name>-partial`` and
    ``<name>-aggregate``)."""
    from dask.core import get_dependencies

    graph = dict(lazy.__dask_graph__())
    name = re.compile(r"opendml-arg(min|max)-(partial|aggregate)-")
    return [len(get_dependencies(graph, key)) for key in graph if name.match(key[0] if isinstance(key, tuple) else key)]


def test_small_partials_merge_many_at_a_time() -> None:
    """64 blocks along one of two reduced axes: a merge task takes many partials (Dask's default would take 2
    along each axis: 63 tasks, six levels, each a round trip through the scheduler), and the answer is the
    oracle's."""
    rng = np.random.default_rng(21)
    x = rng.integers(-3, 3, (8, 1024)).astype(np.float32)  # many ties, across blocks
    lazy = da.from_array(x, chunks=(8, 16))  # blocks of 512 bytes, partials of 12: many fit in a block's bytes
    for kind, direction in (("ARGMIN", "INCREASING"), ("ARGMAX", "DECREASING")):
        indices = FUNCTIONS[kind](lazy, None, axis_direction=direction)
        fan_ins = _merge_fan_ins(indices)
        assert len(fan_ins) <= 3 and max(fan_ins) <= 32, fan_ins
        (got,) = _compute(indices)
        assert np.array_equal(got, _oracle(x, (0, 1), direction, kind, "IGNORE"))
    with dask.config.set(split_every=4):  # Dask's setting, where made, is taken as it is: 2 along each axis
        indices = dml.argmin(lazy, None)
    assert max(_merge_fan_ins(indices)) == 2
    assert np.array_equal(_compute(indices)[0], _oracle(x, (0, 1), "INCREASING", "ARGMIN", "IGNORE"))


def test_large_partials_merge_two_at_a_time() -> None:
    """Partials as large as their blocks (blocks of one row, reduced along the rows): a merge task holds about
    what a block's task holds, two partials, however many blocks there are."""
    rng = np.random.default_rng(22)
    x = rng.integers(-3, 3, (40, 64)).astype(np.float32)
    indices = dml.argmin(da.from_array(x, chunks=(1, 64)), 0, axis_direction="DECREASING")
    fan_ins = _merge_fan_ins(indices)
    assert max(fan_ins) == 2, fan_ins
    (got,) = _compute(indices, scheduler="threads")
    assert np.array_equal(got, _oracle(x, (0,), "DECREASING", "ARGMIN", "IGNORE"))


def test_merge_is_associative_and_commutative() -> None:
    """Partials merged in every order and grouping give one answer (the merge orders candidates totally); a
    partial of no candidate (a block of a zero-length chunk) loses, though its placeholder (0.0 at index 0)
    would win as a candidate."""
    nan = np.nan
    candidates = [(1.0, 7), (-0.0, 3), (0.0, 9), (nan, 1), (nan, 12), (0.0, 2), (-5.0, 40), (-5.0, 6)]
    kinds = itertools.product(list(ReductionKind), list(dml.NanPolicy), list(dml.AxisDirection))
    nothing = pickle.loads(pickle.dumps(merge.Partial.none(np.empty(0), (1,), np.float32)))  # as moved
    assert nothing.empty and nothing.values.tolist() == [0.0] and nothing.indices.tolist() == [0]
    for kind, policy, direction in kinds:
        parts = [merge.Partial(np.array([v], np.float32), np.array([i], np.int64)) for v, i in candidates]
        best = merge.combine(kind, policy, direction, parts)
        answers = set()
        for order in itertools.islice(itertools.permutations([*parts, nothing]), 0, None, 997 * 9):
            left = merge.combine(kind, policy, direction, list(order))
            nested = merge.combine(kind, policy, direction, [list(order[:3]), [list(order[3:5]), list(order[5:])]])
            answers |= {(left.indices.item(), str(left.values.item())), (nested.indices.item(), str(nested.values.item()))}
        assert answers == {(best.indices.item(), str(best.values.item()))}, (kind, policy, direction, answers)


# --- element-wise operators per chunk -----------------------------------------------------------------------


@settings(max_examples=EXAMPLES)
@given(st.data())
def test_elementwise_per_chunk_match_one_machine(data: st.DataObject) -> None:
    """clip, threshold, dequantize_linear and quantize_linear on random shapes and uneven chunks, with scale
    and zero point as numbers, NumPy arrays (broadcast) or Dask arrays chunked otherwise: bit-identical."""
    rank = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank)))
    chunks = tuple(_cuts(data.draw, n) for n in shape)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    operand_shape = tuple(n if rng.random() < 0.5 else 1 for n in shape)[rng.integers(rank + 1):]
    form = data.draw(st.sampled_from(["number", "numpy", "dask"]))

    def operand(values: np.ndarray) -> Any:
        if form == "number":
            return values.reshape(-1)[0]  # a NumPy scalar: its type is the operand's
        if form == "numpy":
            return values
        return da.from_array(values, chunks=tuple(max(1, n // 2) for n in values.shape))

    op = data.draw(st.sampled_from(["clip", "threshold", "dequantize_linear", "quantize_linear"]))
    if op in ("clip", "threshold"):
        x = edge_values(dml.DataType[data.draw(st.sampled_from(["FLOAT32", "FLOAT16", "INT8", "UINT64"]))],
                        math.prod(shape), rng).reshape(shape)
        bias = (1.5, -0.25) if x.dtype.kind == "f" else None
        call: Callable[[Any], Any] = ((lambda a: dml.clip(a, -2.0, 3.0, scale_bias=bias)) if op == "clip"
                                      else (lambda a: dml.threshold(a, -1.0, scale_bias=bias)))
        lazy = call(da.from_array(x, chunks=chunks))
        expected = call(x)
    elif op == "dequantize_linear":
        x = rng.integers(0, 256, shape).astype(np.uint8)
        scale = rng.uniform(-2, 2, operand_shape).astype(np.float32)
        zero_point = rng.integers(0, 256, operand_shape).astype(np.uint8)
        lazy = dml.dequantize_linear(da.from_array(x, chunks=chunks), operand(scale), operand(zero_point))
        expected = dml.dequantize_linear(x, operand(scale) if form == "number" else scale,
                                         operand(zero_point) if form == "number" else zero_point)
    else:
        x = edge_values(dml.DataType.FLOAT32, math.prod(shape), rng).reshape(shape)
        scale = rng.uniform(0.01, 2, operand_shape).astype(np.float32)
        zero_point = rng.integers(-128, 128, operand_shape).astype(np.int8)
        lazy = dml.quantize_linear(da.from_array(x, chunks=chunks), operand(scale), operand(zero_point))
        expected = dml.quantize_linear(x, operand(scale) if form == "number" else scale,
                                       operand(zero_point) if form == "number" else zero_point)
    assert dml.dask.is_dask_array(lazy) and lazy.dtype == expected.dtype and lazy.shape == expected.shape
    assert type(lazy._meta) is np.ndarray and lazy._meta.dtype == expected.dtype
    (got,) = _compute(lazy)
    assert got.dtype == expected.dtype and same_values(got, expected)


def test_operands_broadcast_beyond_the_input_and_align_with_its_chunks() -> None:
    """The scale may grow the result (an input of size 1 along an axis); a NumPy operand is chunked like the
    input; a Dask operand of other chunks is aligned; a 0-d Dask operand and a 0-d input work too."""
    rng = np.random.default_rng(3)
    x = rng.integers(0, 256, (1, 6)).astype(np.uint8)
    scale = rng.uniform(0.5, 1.5, (5, 1)).astype(np.float32)
    lazy = dml.dequantize_linear(da.from_array(x, chunks=(1, 4)), scale, np.uint8(7))
    assert lazy.shape == (5, 6) and lazy.chunks[1] == (4, 2)
    assert np.array_equal(_compute(lazy)[0], dml.dequantize_linear(x, scale, np.uint8(7)))
    y = rng.integers(0, 256, (4, 6)).astype(np.uint8)
    per_column = rng.integers(0, 256, 6).astype(np.uint8)
    lazy = dml.dequantize_linear(da.from_array(y, chunks=(3, 2)), da.from_array(np.float32(0.5)),
                                 da.from_array(per_column, chunks=5))
    assert np.array_equal(_compute(lazy, scheduler="threads")[0], dml.dequantize_linear(y, np.float32(0.5), per_column))
    alone = dml.clip(da.from_array(np.float32(7.5)), 0, 1)
    assert alone.shape == () and _compute(alone)[0].item() == 1.0


def test_elementwise_rules_are_checked_on_the_client() -> None:
    """Every rule of a call is checked when its graph is built, with the usual message."""
    x = np.zeros((4, 6), np.float32)
    lazy = da.from_array(x, chunks=2)
    cases: list[Callable[[Any], Any]] = [
        lambda a: dml.dequantize_linear(a, np.float32(1.0), 0),  # a FLOAT32 input
        lambda a: dml.quantize_linear(a, np.float32(1.0), np.zeros(6, np.int8), output_type="UINT8"),
        lambda a: dml.quantize_linear(a, 1.0, 300),
        lambda a: dml.quantize_linear(a, np.float16(1.0)),
        lambda a: dml.clip(a.astype(np.int32), 0, 1, scale_bias=(2.0, 0.0)),
        lambda a: dml.clip(a.astype(np.int32), np.nan, 1),
        lambda a: dml.threshold(a.astype(np.int32), 0, device=dml.Device("cpu", "1_0")),
        lambda a: dml.clip(a.astype(np.float64), 0, 1),
        lambda a: dml.clip(a, 0, 1, device=3),
        lambda a: dml.dequantize_linear(a.astype(np.uint8), np.ones(5, np.float32), 0),
        lambda a: dml.dequantize_linear(a.astype(np.uint8), np.float32(1), np.zeros((3, 1), np.uint8)),
    ]
    for call in cases:
        _same_error(lambda: call(lazy), lambda: call(x))  # noqa: B023 (called at once)
    with pytest.raises(dml.InvalidArgumentError, match=r"^ELEMENT_WISE_QUANTIZE_LINEAR: output_type must equal"):
        dml.quantize_linear(lazy, np.float32(1.0), da.zeros(6, dtype=np.int8, chunks=3), output_type="UINT8")
    with pytest.raises(dml.InvalidArgumentError, match=r"^ELEMENT_WISE_DEQUANTIZE_LINEAR: ScaleTensor shape must "
                       r"broadcast with the shape \(4, 6\) of InputTensor; got \(5,\)\.$"):
        dml.dequantize_linear(lazy.astype(np.uint8), da.ones(5, chunks=2, dtype=np.float32), 0)
    quantized = dml.quantize_linear(lazy, np.float32(0.5), output_type="INT8")
    assert quantized.dtype == np.int8 and dml.dequantize_linear(quantized, np.float32(2.0)).dtype == np.float32
    # A zero point's values are checked where they are: at compute time, by the same rule.
    wrong = dml.dequantize_linear(lazy.astype(np.uint8), np.float32(1.0), da.full(6, 300, dtype=np.int16, chunks=3))
    with pytest.raises(dml.InvalidArgumentError, match=r"ZeroPointTensor must hold values of the input's type uint8"):
        _compute(wrong)


def test_input_of_unknown_chunk_sizes() -> None:
    """An input alone may have chunks of unknown size (after boolean indexing): each block gives its own."""
    x = np.arange(-6, 6, dtype=np.float32)
    lazy = da.from_array(x, chunks=5)
    selected = lazy[lazy > -3]
    assert math.isnan(selected.shape[0])
    assert np.array_equal(_compute(dml.clip(selected, 0, 2))[0], dml.clip(x[x > -3], 0, 2))


# --- out=, laziness, tasks ----------------------------------------------------------------------------------


ROUTES: dict[str, Callable[..., Any]] = {
    "clip": lambda x, **k: dml.clip(x, 0, 1, **k),
    "threshold": lambda x, **k: dml.threshold(x, 0, **k),
    "dequantize_linear": lambda x, **k: dml.dequantize_linear(x.astype(np.uint8), np.float32(0.5), 3, **k),
    "quantize_linear": lambda x, **k: dml.quantize_linear(x, np.float32(0.5), np.int8(1), **k),
    "argmin": lambda x, **k: dml.argmin(x, (0, 1), **k),
    "argmax": lambda x, **k: dml.argmax(x, 1, return_values=True, **k),
}


@pytest.mark.parametrize("name", list(ROUTES))
def test_out_is_refused_with_dask_arguments(name: str) -> None:
    lazy = da.zeros((4, 6), chunks=2, dtype=np.float32)
    message = rf"^opendml\.{name}: out must be None when an argument is a Dask array \(the result is a new Dask array\); got "
    with pytest.raises(dml.InvalidArgumentError, match=message + r"ndarray\.$"):
        ROUTES[name](lazy, out=np.zeros((4, 6), np.float32))
    with pytest.raises(dml.InvalidArgumentError, match=message + r"Array\.$"):
        ROUTES[name](np.zeros((4, 6), np.float32), out=lazy)


def _explode(block: np.ndarray) -> np.ndarray:
    raise AssertionError("a Dask input was computed")


def test_dask_inputs_are_never_computed_and_nothing_runs_on_the_client(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every function on inputs whose graph raises if computed builds its graph without computing them, and
    compiles or runs no kernel on the client (the checks run on descriptions only)."""
    lazy = da.zeros((4, 6), chunks=(3, 4), dtype=np.float32).map_blocks(_explode, meta=np.empty((0, 0), np.float32))
    real_compiled = dml.Device.compiled

    def no_kernel(self: dml.Device, desc: object) -> object:
        raise AssertionError(f"a kernel was compiled on the client for {type(desc).__name__}")

    monkeypatch.setattr(dml.Device, "compiled", no_kernel)
    results = [route(lazy) for route in ROUTES.values()]
    results.append(dml.dequantize_linear(lazy.astype(np.uint8), lazy, lazy.astype(np.uint8)))
    results.append(dml.unravel_index(dml.argmin(lazy, (0, 1)), (4, 6), (0, 1)))
    monkeypatch.setattr(dml.Device, "compiled", real_compiled)
    for result in results:
        with pytest.raises(AssertionError, match="a Dask input was computed"):
            _compute(result)


def test_unravel_index_on_dask_indices() -> None:
    x = np.random.default_rng(1).permutation(4 * 5 * 6).astype(np.int32).reshape(4, 5, 6)
    lazy = dml.argmin(da.from_array(x, chunks=(3, 2, 4)), (0, 2), output_type="UINT32")
    parts = dml.unravel_index(lazy, x.shape, (0, 2))
    assert len(parts) == 2 and all(dml.dask.is_dask_array(p) and p.dtype == np.uint32 for p in parts)
    expected = dml.unravel_index(dml.argmin(x, (0, 2), output_type="UINT32"), x.shape, (0, 2))
    assert all(np.array_equal(g, e) for g, e in zip(_compute(*parts), expected))
    with pytest.raises(dml.InvalidArgumentError, match=r"^opendml\.unravel_index: Axes\[1\] must be an integer"):
        dml.unravel_index(lazy, x.shape, (0, 3))


def test_tasks_pickle_with_plain_pickle() -> None:
    """Every task of every graph pickles with the standard library's pickle (no closures), and a task
    unpickled runs as the original: what a worker receives."""
    lazy = da.from_array(np.arange(24, dtype=np.float32).reshape(4, 6), chunks=(3, 4))
    results = [route(lazy) for route in ROUTES.values()]
    results.append(dml.argmin(lazy, 0, device=dml.Device("cpu", "5_0")))
    for result in results:
        for array in result if isinstance(result, tuple) else (result,):
            graph = dict(array.__dask_graph__())
            restored = pickle.loads(pickle.dumps(graph))
            assert restored.keys() == graph.keys()
    indices = dml.argmax(lazy, 1)
    graph = pickle.loads(pickle.dumps(dict(indices.__dask_graph__())))
    got = dask.get(graph, indices.__dask_keys__())
    assert np.concatenate([block for row in got for block in row]).reshape(-1).tolist() == [5, 5, 5, 5]


def test_threaded_scheduler_many_blocks() -> None:
    """Many blocks at once on Dask's thread pool: the same bits as one machine."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((64, 48, 6)).astype(np.float32)
    x[rng.random(x.shape) < 0.05] = np.nan
    for axes, kind, policy in [((0,), "ARGMIN", "IGNORE"), ((0, 2), "ARGMAX", "PROPAGATE"), (None, "ARGMIN", "IGNORE")]:
        got, expected = _reduce_both(x, (8, 12, 4), axes, kind, "threads", nan_policy=policy)
        _assert_same(got, expected)
    lazy = dml.clip(da.from_array(x, chunks=(8, 12, 4)), -0.5, 0.5, scale_bias=(2.0, 0.25))
    assert same_values(_compute(lazy, scheduler="threads")[0], dml.clip(x, -0.5, 0.5, scale_bias=(2.0, 0.25)))


def test_query_planning() -> None:
    """With Dask's array query planning (set before dask.array is imported: a process of its own), combine and
    aggregate take computing_meta=True and the results are the same."""
    script = textwrap.dedent("""
        import numpy as np, dask, dask.array as da, opendml as dml
        assert da.array_expr_enabled()
        x = np.random.default_rng(0).standard_normal((9, 7, 5)).astype(np.float32)
        x[2:5, :3] = np.nan
        lazy = da.from_array(x, chunks=(2, 3, 4))
        for axes, policy in [((0, 2), "IGNORE"), ((1,), "PROPAGATE"), (None, "IGNORE")]:
            got = dask.compute(*dml.argmax(lazy, axes, nan_policy=policy, return_values=True), scheduler="sync")
            expected = dml.argmax(x, axes, nan_policy=policy, return_values=True)
            assert np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1], equal_nan=True)
        parts = dml.unravel_index(dml.argmin(lazy, (0, 2), output_type="INT32"), x.shape, (0, 2))
        expected = dml.unravel_index(dml.argmin(x, (0, 2), output_type="INT32"), x.shape, (0, 2))
        assert all(np.array_equal(g, e) for g, e in zip(dask.compute(*parts), expected))
        q = np.arange(63, dtype=np.uint8).reshape(9, 7)
        got = dml.dequantize_linear(da.from_array(q, chunks=4), np.linspace(0.5, 1, 7).astype(np.float32), 2)
        assert np.array_equal(got.compute(), dml.dequantize_linear(q, np.linspace(0.5, 1, 7).astype(np.float32), 2))
        assert dml.argmin(da.from_array(np.float32(2.0)), return_values=True)[1].compute() == 2.0
        scale, zero_point = np.full(6, 0.5, np.float32), np.arange(6, dtype=np.uint8)  # a Dask operand, other chunks
        got = dml.dequantize_linear(da.from_array(q[:2, :6], chunks=(2, 6)), scale, da.from_array(zero_point, chunks=1))
        assert got.shape == (2, 6) and np.array_equal(got.compute(), dml.dequantize_linear(q[:2, :6], scale, zero_point))
        gaps = da.from_array(x[:, 0, 0], chunks=((3, 0, 6),))  # a zero-length chunk
        assert dml.argmax(gaps).compute().item() == dml.argmax(x[:, 0, 0]).item()
        print("ok")
        """)
    root = str(Path(__file__).resolve().parents[1])  # this checkout's opendml, as the tests import it
    env = {**os.environ, "DASK_ARRAY__QUERY_PLANNING": "True",
           "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-W", "error", "-c", script], env=env, capture_output=True, text=True,
                          timeout=HANG_SECONDS)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


# --- an in-process distributed cluster ----------------------------------------------------------------------


def _on_workers(shape: tuple[int, ...], chunks: tuple[int, ...]) -> Any:
    """FLOAT32 data made on the workers from its indices (with ties, -0.0 and NaN), never shipped."""
    index = da.arange(math.prod(shape), chunks=math.prod(chunks), dtype=np.int64).reshape(shape).rechunk(chunks)
    values = ((index * 7919) % 211 - 105).astype(np.float32) / 4
    values = da.where(index % 97 == 0, np.float32(np.nan), values)
    return da.where(index % 89 == 0, np.float32(-0.0), values)


def _cluster(test: Callable[..., Any]) -> Any:
    if gen_cluster is None:
        return NEEDS_DISTRIBUTED(test)
    return NEEDS_DISTRIBUTED(gen_cluster(client=True, nthreads=[("127.0.0.1", 1), ("127.0.0.1", 1)])(test))


@_cluster
async def test_on_an_in_process_cluster(c: Any, s: Any, a: Any, b: Any) -> None:
    """Reductions over several axes and an element-wise chain on two workers, the data made there: the same
    bits as one machine on the same data (fetched only to compute the expectation)."""
    x = _on_workers((24, 10, 12), (5, 10, 7))
    host = await c.compute(x)
    for axes, kind, direction, policy in [((0,), "ARGMIN", "INCREASING", "IGNORE"),
                                          ((0, 2), "ARGMAX", "DECREASING", "PROPAGATE"),
                                          (None, "ARGMIN", "DECREASING", "IGNORE")]:
        lazy = FUNCTIONS[kind](x, axes, axis_direction=direction, nan_policy=policy, return_values=True)
        got = await c.gather(c.compute(list(lazy)))
        _assert_same((got[0], got[1]), FUNCTIONS[kind](host, axes, axis_direction=direction, nan_policy=policy,
                                                       return_values=True))
    codes = dml.quantize_linear(x, np.float32(0.25), np.uint8(128))
    chain = dml.clip(dml.dequantize_linear(codes, np.float32(0.25), np.uint8(128)), -3.0, 3.0)
    got = await c.compute(chain)
    expected = dml.clip(dml.dequantize_linear(dml.quantize_linear(host, np.float32(0.25), np.uint8(128)),
                                              np.float32(0.25), np.uint8(128)), -3.0, 3.0)
    assert same_values(got, expected)


# --- CuPy chunks --------------------------------------------------------------------------------------------


@NEEDS_CUDA
def test_cupy_chunks_run_on_the_gpu() -> None:
    """Dask arrays of CuPy chunks: CuPy metas, CuPy results, the bits of opendml on the whole NumPy array."""
    import cupy

    rng = np.random.default_rng(4)
    x = rng.standard_normal((12, 10, 6)).astype(np.float32)
    x[3:5, :, 2] = np.nan
    x[7, 1:4] = -0.0
    lazy = da.from_array(cupy.asarray(x), chunks=(5, 4, 6))
    assert type(lazy._meta) is cupy.ndarray
    for axes, kind, direction, policy in [((0,), "ARGMIN", "INCREASING", "IGNORE"),
                                          ((0, 2), "ARGMAX", "DECREASING", "PROPAGATE"),
                                          (None, "ARGMIN", "DECREASING", "IGNORE")]:
        options = {"axis_direction": direction, "nan_policy": policy, "output_type": "UINT32"}
        indices, values = FUNCTIONS[kind](lazy, axes, return_values=True, **options)
        assert type(indices._meta) is cupy.ndarray and type(values._meta) is cupy.ndarray
        got = _compute(indices, values, scheduler="threads")
        assert all(isinstance(g, cupy.ndarray) for g in got)
        _assert_same((cupy.asnumpy(got[0]), cupy.asnumpy(got[1])),
                     FUNCTIONS[kind](x, axes, return_values=True, **options))
    scale = np.linspace(0.1, 1, 6).astype(np.float32)  # a NumPy operand beside CuPy chunks, as on one machine

    def chain(a: Any) -> Any:
        codes = dml.quantize_linear(a, np.float32(0.25), np.uint8(128))
        return dml.clip(dml.dequantize_linear(codes, scale, np.uint8(128)), -3.0, 3.0)

    result = chain(lazy)
    assert type(result._meta) is cupy.ndarray and result.dtype == np.float32
    (got,) = _compute(result, scheduler="threads")
    assert isinstance(got, cupy.ndarray) and same_values(cupy.asnumpy(got), chain(x))


# --- partials moved between workers ---------------------------------------------------------------------------


def test_host_partials_pickle_as_they_are_and_merge_on_the_host() -> None:
    part = merge.Partial.made(np.array([1.5, -2.0], np.float32), np.array([7, 3], np.int64))
    back = pickle.loads(pickle.dumps(part))
    assert back.ready is None and not back.on_gpu
    assert np.array_equal(back.values, part.values) and np.array_equal(back.indices, part.indices)
    other = merge.Partial.made(np.array([1.5, -3.0], np.float32), np.array([2, 9], np.int64))
    best = merge.aggregate(ReductionKind.ARGMIN, dml.NanPolicy.IGNORE, dml.AxisDirection.INCREASING,
                           np.dtype(np.int32), [back, other])
    assert type(best.values) is np.ndarray and best.indices.dtype == np.int32
    assert best.indices.tolist() == [2, 9] and best.values.tolist() == [1.5, -3.0]


@NEEDS_CUDA
def test_gpu_partials_move_through_the_host_and_merge_back_on_the_gpu() -> None:
    """A CuPy partial pickles to host arrays (marked as the GPU's), waiting for its own kernels; merged with a
    GPU partial it is uploaded, two moved partials merge on the host, and the aggregate is on the GPU again,
    with the answer of merging the GPU partials directly."""
    import cupy

    steps = (ReductionKind.ARGMIN, dml.NanPolicy.IGNORE, dml.AxisDirection.INCREASING)
    rng = np.random.default_rng(4)
    values = [rng.integers(-3, 3, 4096).astype(np.float32) for _ in range(3)]
    parts = [merge.Partial.made(cupy.asarray(v), cupy.arange(4096, dtype=cupy.int64) * 3 + k)
             for k, v in enumerate(values)]
    moved = [pickle.loads(pickle.dumps(p)) for p in parts]
    assert all(type(m.values) is np.ndarray and m.on_gpu and m.ready is None for m in moved)
    assert all(np.array_equal(m.values, v) for m, v in zip(moved, values))
    direct = merge.aggregate(*steps, np.dtype(np.int64), parts)
    for mixed in ([moved[0], parts[1], parts[2]], [moved[0], moved[1], parts[2]], moved):
        got = merge.aggregate(*steps, np.dtype(np.int64), mixed)
        assert type(got.values) is cupy.ndarray and type(got.indices) is cupy.ndarray
        assert cupy.array_equal(got.indices, direct.indices) and cupy.array_equal(got.values, direct.values)
    host_merge = merge.combine(*steps, moved[:2])
    assert type(host_merge.values) is np.ndarray and host_merge.on_gpu


@NEEDS_CUDA
def test_partials_made_on_another_stream_are_waited_for_before_a_merge_reads_them() -> None:
    """A worker's threads each queue work on their own stream (CuPy's per-thread default streams, or a stream
    of each thread): a partial made on one stream, behind a backlog there, then merged and aggregated on
    another. Without waiting for the partial's event, the merge reads its arrays before they are written."""
    import cupy

    steps = (ReductionKind.ARGMIN, dml.NanPolicy.IGNORE, dml.AxisDirection.INCREASING)
    rng = np.random.default_rng(13)
    maker, merger = cupy.cuda.Stream(non_blocking=True), cupy.cuda.Stream(non_blocking=True)
    busy = cupy.ones(2**28, np.float32)
    for trial in range(20):
        values = [rng.integers(-50, 50, 2**16).astype(np.float32) for _ in range(2)]
        sources = [cupy.asarray(v) for v in values]
        cupy.cuda.Device().synchronize()
        with maker:
            for _ in range(8):
                busy *= 1.0000001  # a backlog on the maker's stream
            late = merge.Partial.made(sources[0] + 0, cupy.arange(2**16, dtype=cupy.int64) * 2)
        with merger:
            early = merge.Partial.made(sources[1] + 0, cupy.arange(2**16, dtype=cupy.int64) * 2 + 1)
            got = merge.aggregate(*steps, np.dtype(np.int64), [late, early])
            indices = merge.indices_of(got).get()  # copied on the merger's stream
        winner = np.where(values[1] < values[0], 1, 0)  # ties: the smaller index, the first part's
        assert np.array_equal(indices, np.arange(2**16) * 2 + winner), trial
        alone = merge.aggregate(*steps, np.dtype(np.int64), [late])  # one partial: no merge, still waited for
        with merger:
            assert np.array_equal(merge.indices_of(alone).get(), np.arange(2**16) * 2), trial


@NEEDS_CUDA
def test_moved_partials_merge_right_behind_a_busy_gpu() -> None:
    """Merges of moved partials queued behind a long backlog of GPU work, many times over: an upload whose
    memory another stream could reuse while the queued merges still read it gives wrong winners here."""
    import cupy

    steps = (ReductionKind.ARGMAX, dml.NanPolicy.IGNORE, dml.AxisDirection.DECREASING)
    rng = np.random.default_rng(11)
    busy = cupy.ones(2**28, np.float32)
    for trial in range(30):
        values = [rng.integers(-50, 50, 2**16).astype(np.float32) for _ in range(4)]
        indices = [np.arange(2**16, dtype=np.int64) * 4 + k for k in range(4)]
        moved = [pickle.loads(pickle.dumps(merge.Partial.made(cupy.asarray(v), cupy.asarray(i))))
                 for v, i in zip(values, indices)]
        for _ in range(8):
            busy *= 1.0000001  # queued work that the merges below wait behind
        local = merge.Partial.made(cupy.asarray(values[0]), cupy.asarray(indices[0]))
        got = merge.aggregate(*steps, np.dtype(np.int64), [local, *moved[1:]])
        stacked = np.stack(values)
        winner = stacked.shape[0] - 1 - np.argmax(stacked[::-1], axis=0)  # ties: the larger index, the later part
        expected = np.take_along_axis(np.stack(indices), winner[None], 0)[0]
        assert np.array_equal(cupy.asnumpy(got.indices), expected), trial


def test_a_small_numpy_operand_is_one_key_sliced_for_each_block() -> None:
    """A per-column scale and zero point given as NumPy arrays go to the tasks whole (blocks.goes_whole): one
    graph key each, not a task per block; an operand that grows the result's shape (here the scale) is still
    read by blocks, beside a zero point that goes whole."""
    rng = np.random.default_rng(12)
    x = rng.integers(0, 256, (6, 40), dtype=np.uint8)
    scale = rng.uniform(0.01, 2, 40).astype(np.float32)
    zero_point = rng.integers(0, 256, (1, 40), dtype=np.uint8)
    lazy = dml.dequantize_linear(da.from_array(x, chunks=(4, 16)), scale, zero_point)
    keys = {(k[0] if isinstance(k, tuple) else k).split("-")[0] for k in dict(lazy.__dask_graph__())}
    assert sum(1 for k in dict(lazy.__dask_graph__()) if not isinstance(k, tuple) and k.startswith("ndarray-")) == 2
    assert "array" in keys  # x's blocks
    assert same_values(_compute(lazy)[0], dml.dequantize_linear(x, scale, zero_point))
    grown = dml.dequantize_linear(da.from_array(x[:1], chunks=(1, 16)), scale[None, :].repeat(3, 0), zero_point)
    assert len([k for k in dict(grown.__dask_graph__()) if not isinstance(k, tuple) and k.startswith("ndarray-")]) == 1
    assert same_values(_compute(grown)[0], dml.dequantize_linear(x[:1], scale[None, :].repeat(3, 0), zero_point))
