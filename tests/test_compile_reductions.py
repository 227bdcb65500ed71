"""opendml.compile tracing top_k, softmax, log_softmax, hardmax and reduce: one graph node each, the eager
calls' bits (and shapes, dtypes), against expectations computed here; on Dask arrays, what a block can compute
alone runs block by block and the rest is refused by name."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import opendml as dml
from opendml.errors import OpenDMLError
from opendml.functional import default_device
from opendml.graphs.desc import OperatorNode
from opendml.tracing.tracer import Tracer


def _values(shape: tuple[int, ...], dtype: Any = np.float32, seed: int = 0) -> np.ndarray:
    """Normal values with ties, -0.0, NaN and -inf mixed in."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1)
    flat[rng.integers(0, flat.size, 3)] = 1.5
    flat[rng.integers(0, flat.size, 1)] = -0.0
    return x.astype(dtype)


def _same(got: Any, want: Any) -> None:
    assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def _node_names(function: Any, *args: Any) -> list[str]:
    """The operators of the graph ``function`` traces on ``args`` (each node once, in the graph's order)."""
    results, _ = function.build(default_device(), args, {}, list(args))
    nodes: dict[int, str] = {}
    for result in results:
        assert isinstance(result, Tracer)
        nodes.update((id(n), n.operator.definition.schema.name) for n in result.expr.graph.needed(result.expr)
                     if isinstance(n, OperatorNode))
    return list(nodes.values())


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_top_k_traces_to_one_node_with_the_eager_values_and_indices(dtype: Any) -> None:
    x = _values((5, 9), dtype)

    def body(x: Any) -> Any:
        values, indices = dml.top_k(dml.clip(x, -1.0, 1.5), 3, axis=1)
        small = dml.top_k(x, 2, 0, largest=False, index_type="UINT64")
        return values, indices, *small

    compiled = dml.compile(body)
    got = compiled(x)
    for g, w in zip(got, body(x)):
        _same(g, w)
    clipped = np.clip(x.astype(np.float32), -1.0, 1.5).astype(dtype)
    order = np.argsort(-clipped, axis=1, kind="stable")[:, :3]  # decreasing, ties by ascending index
    assert np.array_equal(got[1], order) and got[1].dtype == np.uint32
    assert np.array_equal(got[0], np.take_along_axis(clipped, order, 1))
    assert np.array_equal(got[3], np.argsort(x, axis=0, kind="stable")[:2]) and got[3].dtype == np.uint64
    assert _node_names(compiled, x).count("TOP_K1") == 2


@pytest.mark.parametrize("python", ["softmax", "log_softmax", "hardmax"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("axis", [-1, 0, (0, 2)])
def test_softmax_family_traces_to_one_node_with_the_eager_bits(python: str, dtype: Any, axis: Any) -> None:
    x = _values((3, 4, 6), dtype, seed=1)
    function = getattr(dml, python)
    compiled = dml.compile(lambda x: function(dml.clip(x, -2.0, 2.0), axis))
    got = compiled(x)
    _same(got, function(dml.clip(x, -2.0, 2.0), axis))
    assert _node_names(compiled, x) == ["ELEMENT_WISE_CLIP", f"ACTIVATION_{python.upper()}1"]


def test_softmax_traced_against_a_float64_expectation() -> None:
    x = _values((4, 10), seed=2)
    got = dml.compile(dml.softmax)(x)
    wide = x.astype(np.float64)
    want = np.exp(wide - wide.max(1, keepdims=True))
    want /= want.sum(1, keepdims=True)
    assert np.max(np.abs(got - want) / want) < 2 ** -22  # within about 1.5 FLOAT32 ulps (docs/semantics.md 9g)
    hard = dml.compile(dml.hardmax)(x)
    assert np.array_equal(hard, (np.arange(10) == np.argmax(x, 1)[:, None]).astype(np.float32))


@pytest.mark.parametrize("function", ["SUM", "AVERAGE", "L1", "L2", "SUM_SQUARE", "MAX", "MIN", "MULTIPLY",
                                      "LOG_SUM", "LOG_SUM_EXP", "ARGMIN", "ARGMAX"])
@pytest.mark.parametrize("keepdims", [True, False])
def test_reduce_traces_to_one_node_with_the_eager_bits(function: str, keepdims: bool) -> None:
    x = np.abs(_values((4, 5, 3), seed=3)) + np.float32(0.25)  # positive: LOG_SUM is a number
    compiled = dml.compile(lambda x: dml.reduce(dml.clip(x, 0.5, 2.0), function, (0, 2), keepdims=keepdims))
    got = compiled(x)
    _same(got, dml.reduce(dml.clip(x, 0.5, 2.0), function, (0, 2), keepdims=keepdims))
    assert got.shape == ((1, 5, 1) if keepdims else (5,))
    assert _node_names(compiled, x) == ["ELEMENT_WISE_CLIP", "REDUCE"]


def test_traced_sum_is_the_exact_sum_rounded_once() -> None:
    x = np.array([[1e30, 1.0, -1e30, 3e-8], [2.0 ** -24, 1.0, 2.0 ** -24, 0.0]], np.float32)
    got = dml.compile(lambda x: dml.reduce(x, "SUM", 1, keepdims=False))(x)
    assert got.tolist() == [np.float32(math.fsum(map(float, row))) for row in x]
    assert got[1] == np.float32(1.0 + 2.0 ** -23)  # NumPy's float32 sum gives 1.0


def test_traced_reduce_of_a_zero_dimensional_input_is_zero_dimensional() -> None:
    got = dml.compile(lambda x: dml.reduce(x, "SUM", keepdims=False))(np.array(2.5, np.float32))
    assert got.shape == () and got == np.float32(2.5)


@pytest.mark.parametrize(("body", "phrase"), [
    (lambda x: dml.softmax(x, out=x), "out"),
    (lambda x: dml.reduce(x, "SUM", out=x), "out"),
    (lambda x: dml.top_k(x, 9), "k"),
    (lambda x: dml.softmax(x, (0, 0)), "Axes"),
    (lambda x: dml.reduce(x, "SUM", output_type="FLOAT16"), "OutputTensor.DataType"),
])
def test_traced_calls_refuse_as_eager_calls(body: Any, phrase: str) -> None:
    with pytest.raises(OpenDMLError, match=phrase):
        dml.compile(body)(np.ones((2, 3), np.float32))


def test_compiled_function_on_dask_runs_normalizations_over_whole_axes_and_refuses_the_rest() -> None:
    da = pytest.importorskip("dask.array")
    x = _values((6, 8), seed=4)
    rows = dml.compile(lambda x: dml.log_softmax(dml.clip(x, -1.0, 1.0), 1))
    _same(rows(da.from_array(x, chunks=(2, 8))).compute(), dml.log_softmax(dml.clip(x, -1.0, 1.0), 1))
    refused = [(rows, (2, 4), "several chunks"),
               (dml.compile(lambda x: dml.reduce(x, "SUM", 1)), (2, 8), "opendml.reduce"),
               (dml.compile(lambda x: dml.top_k(x, 2)[1]), (2, 8), "opendml.top_k"),
               (dml.compile(lambda x: dml.argmax(dml.softmax(x), 1)), (2, 8), "argmax's chain")]
    for function, chunks, phrase in refused:
        with pytest.raises(OpenDMLError, match=phrase):
            function(da.from_array(x, chunks=chunks))
