"""ONNX Reduce outputs read through other sizes: a keepdims = 1 output broadcast by a later node (softmax written
by hand: x - ReduceMax(x), Exp, ReduceSum, Div) and keepdims = 0 outputs read by later nodes. Each such read is of
the reduction's own output in a later graph; the answers against float64/fsum expectations computed here, ONNX's
reference where the math is exact, and node-by-node execution."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("onnx", reason="the ONNX front end needs the onnx extra (pip install 'opendml[onnx]')")

from onnx import ModelProto, helper
from onnx_models import model, reference

from opendml.onnx import Session
from opendml.onnx.runtime import execute

RNG = np.random.default_rng(3636)


def _softmax_model(x: np.ndarray, axis: int, outputs: list[str]) -> ModelProto:
    nodes = [helper.make_node("ReduceMax", ["x"], ["m"], axes=[axis], keepdims=1),
             helper.make_node("Sub", ["x", "m"], ["d"]),
             helper.make_node("Exp", ["d"], ["e"]),
             helper.make_node("ReduceSum", ["e", "axes"], ["s"], keepdims=1),
             helper.make_node("Div", ["e", "s"], ["y"])]
    return model(nodes, {"x": x}, outputs, 13, {"axes": np.array([axis], np.int64)})


def _softmax64(x: np.ndarray, axis: int) -> np.ndarray:
    """Softmax in float64, each row's sum by math.fsum."""
    v = np.moveaxis(x.astype(np.float64), axis, -1)
    e = np.exp(v - v.max(axis=-1, keepdims=True))
    sums = np.array([math.fsum(row) for row in e.reshape(-1, e.shape[-1])]).reshape(*e.shape[:-1], 1)
    return np.moveaxis(e / sums, -1, axis)


def _same_as_node_by_node(session: Session, feeds: dict[str, np.ndarray], got: dict[str, np.ndarray]) -> None:
    separate = execute(session.plan(feeds), session.device)
    for name, value in got.items():
        assert value.tobytes() == separate[name].tobytes(), name


@pytest.mark.parametrize("axis", [1, 0])
def test_softmax_by_hand_runs_and_is_softmax(axis: int) -> None:
    x = (RNG.standard_normal((6, 9)) * 3).astype(np.float32)
    session = Session(_softmax_model(x, axis, ["y"]))
    got = session.run({"x": x})
    assert got["y"].dtype == np.float32 and got["y"].shape == x.shape
    np.testing.assert_allclose(got["y"], _softmax64(x, axis), rtol=2e-6, atol=0)
    np.testing.assert_allclose(got["y"].sum(axis=axis, dtype=np.float64), 1.0, rtol=1e-6)
    _same_as_node_by_node(session, {"x": x}, got)


def test_softmax_by_hand_each_exact_step_has_its_exact_bits() -> None:
    """ReduceMax and Sub are exact (ONNX's reference's bits); the sum is the exact sum of the Exp values rounded
    once; Div is float32 division of the two."""
    x = (RNG.standard_normal((5, 7)) * 4).astype(np.float32)
    built = _softmax_model(x, 1, ["m", "d", "e", "s", "y"])
    session = Session(built)
    got = session.run({"x": x})
    want = reference(built, {"x": x})
    for name in ("m", "d"):
        assert got[name].shape == want[name].shape and got[name].tobytes() == want[name].tobytes(), name
    assert got["m"].tobytes() == x.max(axis=1, keepdims=True).tobytes()
    e = got["e"]
    # e in (0, 1] with exponents a few binades apart: fsum's double is the exact sum, rounded once to float32
    sums = np.array([[np.float32(math.fsum(row.astype(np.float64).tolist()))] for row in e], np.float32)
    assert got["s"].tobytes() == sums.tobytes()
    assert got["y"].tobytes() == (e / sums).tobytes()
    _same_as_node_by_node(session, {"x": x}, got)


def test_softmax_by_hand_is_three_graphs_each_reading_the_reductions_own_output() -> None:
    x = RNG.standard_normal((4, 8)).astype(np.float32)
    program = Session(_softmax_model(x, 1, ["y"])).program({"x": x})
    assert [segment.steps for segment in program.segments] == [(0,), (1, 2, 3), (4,)]
    assert [segment.inputs for segment in program.segments] == [("x",), ("x", "m"), ("e", "s")]
    assert [segment.outputs for segment in program.segments] == [((0, 0),), ((2, 0), (3, 0)), ((4, 0),)]
    sub = program.segments[1].compiled.graph_desc.nodes[0].operator.desc
    assert sub.b_tensor.sizes == (4, 8) and tuple(sub.b_tensor.strides) == (1, 0)  # m broadcast by zero strides


@pytest.mark.parametrize(("op", "axes", "reader"), [("ReduceMax", [1], "Add"), ("ReduceMin", [0, 2], "Mul"),
                                                    ("ReduceSum", [2], "Sub"), ("ReduceMax", [-1], "Relu")])
def test_keepdims_0_outputs_read_by_later_nodes(op: str, axes: list[int], reader: str) -> None:
    x = RNG.integers(-64, 64, (2, 3, 4)).astype(np.float32)  # small integers: every sum exact
    kept = [n for k, n in enumerate(x.shape) if k not in [a % 3 for a in axes]]
    c = RNG.integers(-8, 8, kept).astype(np.float32)
    axes_input = op == "ReduceSum"
    nodes = [helper.make_node(op, ["x", "axes"] if axes_input else ["x"], ["r"], keepdims=0,
                              **({} if axes_input else {"axes": axes})),
             helper.make_node(reader, ["r"] if reader == "Relu" else ["r", "c"], ["y"])]
    feeds = {"x": x} if reader == "Relu" else {"x": x, "c": c}
    built = model(nodes, feeds, ["y", "r"], 13, {"axes": np.array(axes, np.int64)} if axes_input else None)
    session = Session(built)
    got = session.run(feeds)
    want = reference(built, feeds)
    for name in ("y", "r"):
        assert got[name].shape == want[name].shape == tuple(kept) and got[name].tobytes() == want[name].tobytes()
    _same_as_node_by_node(session, feeds, got)


def test_an_integer_sum_broadcast_and_a_graph_output_in_its_own_sizes() -> None:
    # x - ReduceSum(x, keepdims=1) in INT32, the sum also a graph output: wrapped as INT32 arithmetic does
    x = RNG.integers(-2**30, 2**30, (3, 5), dtype=np.int32)
    nodes = [helper.make_node("ReduceSum", ["x", "axes"], ["s"], keepdims=1),
             helper.make_node("Sub", ["x", "s"], ["y"])]
    built = model(nodes, {"x": x}, ["y", "s"], 13, {"axes": np.array([1], np.int64)})
    got = Session(built).run({"x": x})
    s = (x.astype(np.int64).sum(axis=1, keepdims=True) + 2**31) % 2**32 - 2**31
    y = (x.astype(np.int64) - s + 2**31) % 2**32 - 2**31
    assert got["s"].tobytes() == s.astype(np.int32).tobytes()
    assert got["y"].tobytes() == y.astype(np.int32).tobytes()


def test_a_reduction_of_a_reduction_read_through_a_broadcast() -> None:
    # ReduceMean over the rows of (x - max of each row), broadcast again: four graphs in a row
    x = RNG.integers(-16, 16, (4, 6)).astype(np.float32)
    nodes = [helper.make_node("ReduceMax", ["x"], ["m"], axes=[1], keepdims=1),
             helper.make_node("Sub", ["x", "m"], ["d"]),
             helper.make_node("ReduceMean", ["d"], ["a"], axes=[0], keepdims=0),
             helper.make_node("Add", ["d", "a"], ["y"])]
    built = model(nodes, {"x": x}, ["y"], 13)
    session = Session(built)
    got = session.run({"x": x})
    d = x.astype(np.float64) - x.max(axis=1, keepdims=True)
    want = (d + d.mean(axis=0)).astype(np.float32)  # the mean of 4 small integers is exact in float32
    assert got["y"].tobytes() == want.tobytes()
    assert got["y"].tobytes() == reference(built, {"x": x})["y"].tobytes()
    assert len(session.program({"x": x}).segments) == 3
