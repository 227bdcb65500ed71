"""Every supported ONNX model compiles into one DirectML graph, even where a node reads another's output
through other sizes, and gets the bytes of ONNX's reference and of node-by-node execution."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("onnx", reason="the ONNX front end needs the onnx extra (pip install 'opendml[onnx]')")

from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import ModelProto, NodeProto, helper
from onnx_models import model, reference

import opendml as dml
from opendml.onnx import Session
from opendml.onnx.runtime import execute
from tests.conftest import BACKENDS

RNG = np.random.default_rng(21)


def one_graph(built: ModelProto, feeds: dict[str, np.ndarray], device: dml.Device | None = None) -> Session:
    """Assert the model is one compiled graph whose outputs are ONNX's reference's and node-by-node's bytes."""
    session = Session(built, device)
    program = session.program(feeds)
    (segment,) = program.segments
    assert set(segment.steps) | set(program.skipped) == set(range(len(session.plan(feeds).steps)))
    got = session.run(feeds)
    want = reference(built, feeds)
    separate = execute(session.plan(feeds), session.device)
    for name, value in want.items():
        assert got[name].dtype == value.dtype and got[name].shape == value.shape, name
        np.testing.assert_array_equal(got[name], value, err_msg=name)
        assert got[name].tobytes() == separate[name].tobytes(), name
    return session


def graph_nodes(session: Session, feeds: dict[str, np.ndarray]) -> list[Any]:
    (segment,) = session.program(feeds).segments
    return list(segment.compiled.graph_desc.nodes)


def test_leading_ones_at_a_four_dimensional_level() -> None:
    # At 2_1 THRESHOLD and CLIP describe [2, 8, 3] as [1, 2, 8, 3] while the blocked DequantizeLinear writes
    # [2, 2, 4, 3]: Relu and Clip take the split sizes, their leading 1 dropped (4-D only).
    nodes = [helper.make_node("DequantizeLinear", ["x", "scale"], ["dq"], axis=1, block_size=4),
             helper.make_node("Relu", ["dq"], ["relu"]),
             helper.make_node("Clip", ["relu", "", "high"], ["y"])]
    x = RNG.integers(-128, 127, (2, 8, 3), dtype=np.int8, endpoint=True)
    initializers = {"scale": RNG.uniform(0.1, 1, (2, 2, 3)).astype(np.float32), "high": np.float32(40)}
    built = model(nodes, {"x": x}, ["y", "relu"], 21, initializers)
    session = one_graph(built, {"x": x}, dml.Device("cpu", "2_1"))
    assert [n.operator.tensor("OutputTensor").sizes for n in graph_nodes(session, {"x": x})] == [(2, 2, 4, 3)] * 3


def test_a_computed_scale_padded_at_a_four_dimensional_level() -> None:
    # Clip's [3] output is described as [1, 1, 1, 3] at 2_1; the DequantizeLinear reads it over [1, 4, 3, 5]
    # with strides [0, 0, 1, 0]: Clip is computed again in those sizes.
    nodes = [helper.make_node("Clip", ["raw", "low"], ["scale"]),
             helper.make_node("DequantizeLinear", ["x", "scale", "zp"], ["y"], axis=1)]
    x = RNG.integers(0, 255, (4, 3, 5), dtype=np.uint8, endpoint=True)
    initializers = {"low": np.float32(0.125), "zp": np.array([3, 128, 250], np.uint8)}
    feeds = {"x": x, "raw": np.array([0.5, -2.0, 0.25], np.float32)}
    session = one_graph(model(nodes, feeds, ["y"], 21, initializers), feeds, dml.Device("cpu", "2_1"))
    clip = graph_nodes(session, feeds)[0].operator
    assert (clip.tensor("InputTensor").sizes, clip.tensor("InputTensor").strides) == ((1, 4, 3, 5), (0, 0, 1, 0))


def test_a_blocked_scale_split_axis_read_by_argmin_over_it() -> None:
    nodes = [helper.make_node("DequantizeLinear", ["x", "scale", "zp"], ["dq"], axis=0, block_size=3),
             helper.make_node("ArgMin", ["dq"], ["first"], axis=0, keepdims=0),
             helper.make_node("ArgMin", ["dq"], ["last"], axis=0, select_last_index=1)]
    x = RNG.integers(0, 3, (6, 4), dtype=np.uint8)  # few values: ties decide which index wins
    initializers = {"scale": np.ones((2, 4), np.float32), "zp": np.zeros((2, 4), np.uint8)}
    one_graph(model(nodes, {"x": x}, ["first", "last"], 21, initializers), {"x": x})


@pytest.mark.parametrize("keepdims", [0, 1])
def test_argmin_read_through_its_dropped_axis(keepdims: int) -> None:
    # ArgMin's [4, 3, 1] output read as [4, 3]: the reader gets a leading 1 and ArgMin reduces there.
    nodes = [helper.make_node("ArgMin", ["x"], ["index"], axis=2, keepdims=0),
             helper.make_node("Relu", ["index"], ["relu"]),
             helper.make_node("ArgMin", ["relu"], ["y"], axis=1, keepdims=keepdims),
             helper.make_node("Clip", ["y", "low"], ["clipped"])]
    x = RNG.standard_normal((4, 3, 8)).astype(np.float32)
    session = one_graph(model(nodes, {"x": x}, ["clipped", "relu"], 14, {"low": np.int64(1)}), {"x": x})
    first = graph_nodes(session, {"x": x})[0].operator
    assert first.tensor("InputTensor").sizes == (8, 4, 3) and tuple(first.desc.axes) == (0,)


def test_computed_scales_broadcast_over_x() -> None:
    # A per-axis scale computed by a Clip, and a per-tensor one computed by a DequantizeLinear.
    nodes = [helper.make_node("Clip", ["raw", "low"], ["scale"]),
             helper.make_node("DequantizeLinear", ["x", "scale", "zp"], ["per_axis"], axis=1),
             helper.make_node("DequantizeLinear", ["q", "step"], ["one"]),
             helper.make_node("DequantizeLinear", ["x", "one"], ["per_tensor"])]
    x = RNG.integers(0, 255, (2, 3, 4), dtype=np.uint8, endpoint=True)
    feeds = {"x": x, "raw": np.array([0.5, -1.0, 2.0], np.float32), "q": np.array([7], np.uint8)}
    initializers = {"low": np.float32(0.25), "zp": np.array([1, 128, 255], np.uint8), "step": np.float32(0.03125)}
    one_graph(model(nodes, feeds, ["per_axis", "per_tensor"], 21, initializers), feeds)


def test_a_computed_blocked_scale_is_recomputed_in_the_split_sizes() -> None:
    nodes = [helper.make_node("DequantizeLinear", ["scale_q", "unit"], ["scale"]),
             helper.make_node("DequantizeLinear", ["x", "scale"], ["y"], axis=-1, block_size=2)]
    x = RNG.integers(-128, 127, (3, 8), dtype=np.int8, endpoint=True)
    feeds = {"x": x, "scale_q": RNG.integers(1, 20, (3, 4), dtype=np.int8)}
    session = one_graph(model(nodes, feeds, ["y"], 21, {"unit": np.float32(0.125)}), feeds)
    scale = graph_nodes(session, feeds)[0].operator
    assert (scale.tensor("InputTensor").sizes, scale.tensor("InputTensor").strides) == ((3, 4, 2), (4, 1, 0))


# Random chains: DequantizeLinear (scale per tensor, per axis or blocked, computed or not) -> Clip -> Relu
# -> ArgMin (keepdims 0 or 1) -> Clip, some values graph outputs; at 2_1 (4-D only, no ARGMIN) up to Relu.
Chain = tuple[ModelProto, dict[str, np.ndarray], dml.Device]


@st.composite
def chains(draw: st.DrawFn) -> Chain:
    level = draw(st.sampled_from(["2_1", "6_4"]))
    four_d = level == "2_1"
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3 if four_d else 4)))
    axis = draw(st.integers(0, len(shape) - 1))
    kind = draw(st.sampled_from(["tensor", "axis", "blocked"]))
    if kind == "blocked":
        block = draw(st.sampled_from([b for b in (1, 2, 3, 4) if shape[axis] % b == 0]))
        scale_shape: tuple[int, ...] = (*shape[:axis], shape[axis] // block, *shape[axis + 1:])
        attributes: dict[str, Any] = {"axis": axis, "block_size": block}
    else:
        scale_shape = (1,) if kind == "tensor" else (shape[axis],)
        attributes = {"axis": axis} if kind == "axis" else {}
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    feeds = {"x": rng.integers(0, 4, shape, dtype=np.uint8)}  # few values: ties decide ArgMin
    initializers: dict[str, np.ndarray] = {"low": np.float32(0.5), "high": np.float32(2.5),
                                           "zero": np.int64(0)}
    nodes: list[NodeProto] = []
    scale_from = draw(st.sampled_from(["initializer", "clip", "dequantize"]))
    raw = rng.integers(1, 8, scale_shape).astype(np.float32) * np.float32(0.25)
    if scale_from == "initializer":
        initializers["scale"] = raw
    elif scale_from == "clip":
        feeds["raw"] = raw - np.float32(1)
        nodes.append(helper.make_node("Clip", ["raw", "low"], ["scale"]))
    else:
        feeds["raw"] = rng.integers(1, 8, scale_shape, dtype=np.uint8)
        initializers["quarter"] = np.float32(0.25)
        nodes.append(helper.make_node("DequantizeLinear", ["raw", "quarter"], ["scale"]))
    keepdims = draw(st.integers(0, 1))
    reduced = draw(st.integers(0, len(shape) - 1))
    nodes += [helper.make_node("DequantizeLinear", ["x", "scale"], ["dq"], **attributes),
              helper.make_node("Clip", ["dq", "low", "high"], ["clipped"]),
              helper.make_node("Relu", ["clipped"], ["relu"])]
    if not four_d:
        nodes += [helper.make_node("ArgMin", ["relu"], ["index"], axis=reduced, keepdims=keepdims),
                  helper.make_node("Clip", ["index", "zero"], ["y"])]
    values = ["dq", "clipped", "relu"] + ([] if four_d else ["index", "y"])
    outputs = draw(st.lists(st.sampled_from(values), min_size=1, max_size=3, unique=True))
    return model(nodes, feeds, outputs, 21, initializers), feeds, dml.Device("cpu", level)


@pytest.mark.parametrize("backend", BACKENDS)
@given(chains())
@settings(max_examples=max(1, settings.default.max_examples // 2))  # each chain compiles its kernels: 10 (ci)
def test_random_chains_are_one_graph(backend: str, chain: Chain) -> None:
    # Recomputed nodes read strided and transposed descriptions: every backend must get the same bytes.
    built, feeds, device = chain
    one_graph(built, feeds, dml.Device(backend, device.feature_level))
