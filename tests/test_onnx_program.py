"""The ONNX front end compiles a model into DirectML graphs (Device.compile_graph), caches them, and gets
the bytes that running each node through its own compiled operator gets."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("onnx", reason="the ONNX front end needs the onnx extra (pip install 'opendml[onnx]')")

import onnx
from onnx import TensorProto, helper
from onnx_models import info, model, reference

import opendml as dml
import opendml.onnx
from opendml.graphs import CompiledGraph
from opendml.onnx import Session, UnsupportedModelError
from opendml.onnx.runtime import execute

RNG = np.random.default_rng(12)
X = RNG.integers(0, 255, (4, 3, 8), dtype=np.uint8, endpoint=True)


def chain(scale_type: type = np.float32, outputs: tuple[str, ...] = ("index",)) -> onnx.ModelProto:
    """DequantizeLinear (per channel) -> Clip -> ArgMin: three nodes, two intermediates of x's shape."""
    nodes = [helper.make_node("DequantizeLinear", ["x", "scale", "zero_point"], ["dq"], axis=1),
             helper.make_node("Clip", ["dq", "low", "high"], ["clipped"]),
             helper.make_node("ArgMin", ["clipped"], ["index"], axis=2)]
    initializers = {"scale": np.array([0.05, 0.1, 0.25], scale_type),
                    "zero_point": np.array([100, 128, 140], np.uint8),
                    "low": scale_type(-1.5), "high": scale_type(2.0)}
    return model(nodes, {"x": X}, list(outputs), 21, initializers)


def assert_same_bytes(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    assert list(got) == list(want)
    for name in want:
        assert got[name].dtype == want[name].dtype and got[name].shape == want[name].shape, name
        assert got[name].tobytes() == want[name].tobytes(), name


def node_by_node(session: Session, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Each node through its own compiled operator, its output in a buffer of its own."""
    return execute(session.plan(inputs), session.device)


def count_compiles(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = dml.Device.compile_graph

    def counting(self: dml.Device, desc: Any, *args: Any) -> CompiledGraph:
        calls.append(len(desc.nodes))
        return real(self, desc, *args)

    monkeypatch.setattr(dml.Device, "compile_graph", counting)
    return calls


def test_a_three_node_model_is_one_compiled_graph() -> None:
    session = Session(chain())
    program = session.program({"x": X})
    (segment,) = program.segments
    assert isinstance(segment.compiled, CompiledGraph)
    assert [node.name for node in segment.compiled.graph_desc.nodes] == [
        "DequantizeLinear node #0", "Clip node #1", "ArgMin node #2"]
    assert segment.inputs == ("x", "scale", "zero_point")  # initializers stay bound graph inputs
    # DequantizeLinear and Clip run as ArgMin's prologue: one fused kernel, no intermediate written.
    assert segment.compiled.plan.groups == ((0, 1, 2),)
    assert segment.compiled.binding_properties == dml.BindingProperties(0, 0)


@pytest.mark.parametrize("scale_type", [np.float32, np.float16])
def test_the_graph_gets_the_bytes_of_node_by_node_execution(scale_type: type) -> None:
    built = chain(scale_type, outputs=("index", "clipped"))
    session = Session(built)
    got = session.run({"x": X})
    assert_same_bytes(got, node_by_node(session, {"x": X}))
    want = reference(built, {"x": X})
    np.testing.assert_array_equal(got["clipped"], want["clipped"])
    np.testing.assert_array_equal(got["index"], want["index"])


def test_runs_with_the_same_shapes_compile_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = count_compiles(monkeypatch)
    device = dml.Device("cpu")
    first = opendml.onnx.run(chain(), {"x": X}, device=device)
    again = opendml.onnx.run(chain(), {"x": X[::-1].copy()}, device=device)
    assert calls == [3]
    assert again["index"].tolist() == reference(chain(), {"x": X[::-1].copy()})["index"].tolist()
    assert first["index"].tolist() != again["index"].tolist()  # new data, not a stale result
    opendml.onnx.run(chain(), {"x": X}, device=dml.Device("cpu"))  # another device compiles its own
    assert calls == [3, 3]


def test_new_shapes_and_new_bound_values_compile_anew(monkeypatch: pytest.MonkeyPatch) -> None:
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Clip", ["r", "low"], ["y"])]
    graph = helper.make_graph(nodes, "dynamic", [info("x", TensorProto.FLOAT, ["n", 3]), info("low", TensorProto.FLOAT, [])],
                              [info("y", TensorProto.FLOAT, ["n", 3])])
    session = Session(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
    calls = count_compiles(monkeypatch)
    x = np.array([[-2.0, 0.5, 3.0]], np.float32)
    assert session.run({"x": x, "low": np.float32(0)})["y"].tolist() == [[0.0, 0.5, 3.0]]
    assert session.run({"x": x, "low": np.float32(1)})["y"].tolist() == [[1.0, 1.0, 3.0]]  # Min is a field
    assert session.run({"x": x, "low": np.float32(0)})["y"].tolist() == [[0.0, 0.5, 3.0]]
    assert calls == [2, 2]
    assert session.run({"x": np.tile(x, (2, 1)), "low": np.float32(0)})["y"].tolist() == [[0.0, 0.5, 3.0]] * 2
    assert calls == [2, 2, 2]


def test_a_read_through_other_sizes_is_still_one_graph() -> None:
    # The blocked scale splits x's axis 1 into (2, 4): DequantizeLinear's output is described as [2, 2, 4, 3],
    # Relu reads it as [2, 8, 3]. An intermediate edge joins equal Sizes only, so Relu and ArgMin are
    # described in the split sizes too (ArgMin reducing over both parts of axis 1).
    nodes = [helper.make_node("DequantizeLinear", ["x", "scale"], ["dq"], axis=1, block_size=4),
             helper.make_node("Relu", ["dq"], ["relu"]),
             helper.make_node("ArgMin", ["relu"], ["index"], axis=1)]
    x = RNG.integers(-128, 127, (2, 8, 3), dtype=np.int8, endpoint=True)
    built = model(nodes, {"x": x}, ["index"], 21, {"scale": RNG.uniform(0.1, 1, (2, 2, 3)).astype(np.float32)})
    session = Session(built)
    (segment,) = session.program({"x": x}).segments
    assert segment.steps == segment.nodes == (0, 1, 2)
    assert segment.inputs == ("x", "scale")
    argmin = segment.compiled.graph_desc.nodes[2].operator.desc
    assert argmin.input_tensor.sizes == (2, 2, 4, 3) and tuple(argmin.axes) == (1, 2)
    got = session.run({"x": x})
    assert_same_bytes(got, node_by_node(session, {"x": x}))
    np.testing.assert_array_equal(got["index"], reference(built, {"x": x})["index"])


def test_nodes_no_output_needs_are_left_out() -> None:
    nodes = [helper.make_node("Relu", ["x"], ["unused"]), helper.make_node("Relu", ["x"], ["y"])]
    x = np.array([-1.0, 2.0], np.float32)
    program = Session(model(nodes, {"x": x}, ["y"], 14)).program({"x": x})
    assert program.skipped == (0,)
    assert [segment.steps for segment in program.segments] == [(1,)]


def test_below_level_2_1_the_nodes_run_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = count_compiles(monkeypatch)
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Clip", ["r"], ["y"], max=1.0)]
    x = np.array([-2.0, 0.5, 3.0], np.float32)
    got = opendml.onnx.run(model(nodes, {"x": x}, ["y"], 6), {"x": x}, device=dml.Device("cpu", "1_0"))
    assert calls == []  # CompileGraph arrived with 2_1
    assert got["y"].tolist() == [0.0, 0.5, 1.0]


def test_a_refused_model_compiles_and_runs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = count_compiles(monkeypatch)
    monkeypatch.setattr(CompiledGraph, "execute", lambda *a: pytest.fail("a graph ran"))
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Clip", ["r", "low"], ["y"])]
    built = model(nodes, {"x": np.zeros(3, np.float32), "low": np.float32(0)}, ["y"], 13)
    with pytest.raises(UnsupportedModelError, match="min must not be NaN"):
        opendml.onnx.run(built, {"x": np.zeros(3, np.float32), "low": np.float32(np.nan)})
    assert calls == []


def test_big_endian_feeds_are_their_values() -> None:
    """A feed in big-endian byte order is read by its values, as every array entering opendml is."""
    x = np.array([[-3.0, 0.5, 7.25], [1.5, -0.75, 2.0]], np.float32)
    clip = model([helper.make_node("Clip", ["x", "low", "high"], ["y"])], {"x": x}, ["y"], 13,
                 {"low": np.float32(-1.0), "high": np.float32(2.0)})
    got = opendml.onnx.run(clip, {"x": x.astype(">f4")}, device="cpu")
    assert got["y"].dtype == np.float32 and got["y"].tolist() == [[-1.0, 0.5, 2.0], [1.5, -0.75, 2.0]]
