"""Graphs of several nodes, the errors that stop a model before it runs, and the public API around them."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("onnx", reason="the ONNX front end needs the onnx extra (pip install 'opendml[onnx]')")

import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx_models import info, model, reference, single

import opendml as dml
import opendml.onnx
from opendml.backends.cpu import CpuBuffer
from opendml.onnx import Session, UnsupportedModelError, backend, check, run
from opendml.onnx.graph import topological_order
from opendml.onnx.ops import MAPPINGS
from opendml.operator import CompiledOperator

REPO = Path(__file__).resolve().parents[1]
RNG = np.random.default_rng(5)


def pipeline(opset: int = 21) -> onnx.ModelProto:
    """DequantizeLinear (per channel) -> Clip (min from a Constant node, max an initializer) -> ArgMin
    (last index, axis dropped); the clipped tensor is a second graph output."""
    nodes = [
        helper.make_node("DequantizeLinear", ["x", "scale", "zero_point"], ["dq"], name="dq", axis=1),
        helper.make_node("Constant", [], ["low"], name="low", value=numpy_helper.from_array(np.float32(-1.5))),
        helper.make_node("Clip", ["dq", "low", "high"], ["clipped"], name="clip"),
        helper.make_node("ArgMin", ["clipped"], ["index"], name="argmin", axis=2, keepdims=0, select_last_index=1),
    ]
    initializers = {"scale": np.array([0.05, 0.1, 0.25], np.float32),
                    "zero_point": np.array([100, 128, 140], np.uint8), "high": np.float32(2.0)}
    return model(nodes, {"x": np.zeros((4, 3, 8), np.uint8)}, ["index", "clipped"], opset, initializers)


X = RNG.integers(0, 255, (4, 3, 8), dtype=np.uint8, endpoint=True)


def test_pipeline_matches_onnx_reference() -> None:
    got, want = run(pipeline(), {"x": X}), reference(pipeline(), {"x": X})
    assert list(got) == ["index", "clipped"]
    np.testing.assert_array_equal(got["clipped"], want["clipped"])
    np.testing.assert_array_equal(got["index"], want["index"])
    assert got["index"].dtype == np.int64 and got["index"].shape == (4, 3)
    assert (got["clipped"] == -1.5).any()  # the data reaches the bounds: ties for ArgMin to break


def test_pipeline_on_every_backend(device: dml.Device) -> None:
    got, want = run(pipeline(), {"x": X}, device=device), reference(pipeline(), {"x": X})
    for name in want:
        np.testing.assert_array_equal(got[name], want[name])


def test_pipeline_intermediates_stay_on_the_device(monkeypatch: pytest.MonkeyPatch) -> None:
    uploads: list[int] = []
    downloads: list[int] = []
    real_upload, real_download = dml.Device.buffer_from, CpuBuffer.to_numpy
    monkeypatch.setattr(dml.Device, "buffer_from", lambda self, a: uploads.append(a.size) or real_upload(self, a))
    monkeypatch.setattr(CpuBuffer, "to_numpy", lambda self: downloads.append(self.size_in_bytes) or real_download(self))
    session = Session(pipeline())
    session.run({"x": X})
    assert len(uploads) == 3  # x, scale and zero_point; Clip's bounds are fields, never tensors
    assert len(downloads) == 2  # the two graph outputs; DequantizeLinear's output is never read back
    plan = session.plan({"x": X})
    assert [step.inputs[0] for step in plan.steps] == ["x", "dq", "clipped"]  # each reads the last one's buffer
    session.run({"x": X})
    assert len(uploads) == 4  # the constants stay uploaded between runs: only x again


def test_pipeline_through_the_backend_and_from_a_file(tmp_path: Path) -> None:
    want = reference(pipeline(), {"x": X})
    outputs = backend.prepare(pipeline(), "CPU").run([X])
    np.testing.assert_array_equal(outputs[0], want["index"])
    np.testing.assert_array_equal(outputs["clipped"], want["clipped"])
    path = tmp_path / "pipeline.onnx"
    onnx.save(pipeline(), path)
    np.testing.assert_array_equal(run(path, {"x": X})["index"], want["index"])
    np.testing.assert_array_equal(run(str(path), {"x": X}, device="cpu")["index"], want["index"])
    np.testing.assert_array_equal(run(pipeline().SerializeToString(), {"x": X})["index"], want["index"])


def test_blocked_dequantize_relu_argmin_on_a_4d_level() -> None:
    nodes = [helper.make_node("DequantizeLinear", ["x", "scale"], ["dq"], axis=1, block_size=4),
             helper.make_node("Relu", ["dq"], ["relu"]),
             helper.make_node("ArgMin", ["relu"], ["index"], axis=0)]
    x = RNG.integers(-128, 127, (2, 8, 3), dtype=np.int8, endpoint=True)
    scale = RNG.uniform(0.1, 1, (2, 2, 3)).astype(np.float32)
    blocked = model(nodes, {"x": x}, ["index", "relu"], 21, {"scale": scale})
    got, want = run(blocked, {"x": x}, device=dml.Device("cpu", "3_0")), reference(blocked, {"x": x})
    for name in want:
        np.testing.assert_array_equal(got[name], want[name])


MAPPED = ("Abs, Acos, Acosh, Add, And, ArgMax, ArgMin, Asin, Asinh, Atan, Atanh, BitShift, BitwiseAnd, BitwiseNot, "
          "BitwiseOr, BitwiseXor, Cast, Ceil, Celu, Clip, Constant, Cos, Cosh, DequantizeLinear, Div, Elu, Equal, "
          "Erf, Exp, Floor, Gelu, Greater, GreaterOrEqual, HardSigmoid, HardSwish, Hardmax, Identity, IsInf, IsNaN, "
          "LeakyRelu, Less, LessOrEqual, Log, LogSoftmax, Max, Mean, Min, Mod, Mul, Neg, Not, Or, PRelu, Pow, "
          "QuantizeLinear, Reciprocal, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceMax, ReduceMean, "
          "ReduceMin, ReduceProd, ReduceSum, ReduceSumSquare, Relu, Round, Selu, Shrink, Sigmoid, Sign, Sin, Sinh, "
          "Softmax, Softplus, Softsign, Sqrt, Sub, Sum, Tan, Tanh, ThresholdedRelu, TopK, Where, Xor")

def test_every_problem_is_listed_at_once_before_anything_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(CompiledOperator, "execute", lambda *a: pytest.fail("an operator ran"))
    nodes = [
        helper.make_node("Relu", ["t"], ["r"], name="relu"),
        helper.make_node("LpNormalization", ["x"], ["s"], name="lpnorm"),
        helper.make_node("DequantizeLinear", ["q4", "scale"], ["dq"], name="dq4"),
        helper.make_node("Clip", ["x", "r"], ["c"], name="clip"),
        helper.make_node("Gelu", ["x"], ["g"], name="gelu", domain="com.example"),
    ]
    q4 = helper.make_tensor("q4", TensorProto.INT2, [4], [1, 0, -1, -2])
    graph = helper.make_graph(nodes, "bad", [info("x", TensorProto.FLOAT, [4]), info("t", TensorProto.FLOAT, [])],
                              [info(n, TensorProto.FLOAT, [4]) for n in ("s", "dq", "c", "g")],
                              [q4, numpy_helper.from_array(np.float32(2), "scale")])
    bad = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.example", 1)])
    with pytest.raises(UnsupportedModelError) as caught:
        run(bad, {"x": np.zeros(4, np.float32), "t": np.float32(1)})
    assert caught.value.problems == (
        f"LpNormalization node 'lpnorm': Operator must be one of {MAPPED} (default ONNX domain); got LpNormalization.",
        "DequantizeLinear node 'dq4': Input x must have one of the types opendml maps "
        "(INT32, INT16, INT8, INT4, UINT16, UINT8, UINT4); got INT2.",
        "Clip node 'clip': Input min must be known before the graph runs (an initializer, a Constant node or a "
        "graph input) (DirectML's Min and Max are fields of the operator description); got the output of "
        "Relu node 'relu'.",
        f"Gelu node 'gelu': Operator must be one of {MAPPED} (default ONNX domain); got com.example.Gelu.",
    )
    assert str(caught.value).startswith("ONNX model: every node must map onto opendml's operators; got 4 problems:")
    with pytest.raises(UnsupportedModelError):
        check(bad)
    assert not backend.is_compatible(bad)


def test_problems_found_with_the_inputs_are_listed_together(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(CompiledOperator, "execute", lambda *a: pytest.fail("an operator ran"))
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Clip", ["r", "low"], ["c"], name="clip"),
             helper.make_node("Clip", ["big"], ["b"], name="five_d")]
    bounded = model(nodes, {"x": np.zeros((1, 1, 1, 2), np.float32), "low": np.float32(0),
                            "big": np.zeros((1, 1, 1, 1, 2), np.float32)}, ["c", "b"], 13)
    check(bounded)  # nothing wrong is visible without the inputs and the device
    with pytest.raises(UnsupportedModelError) as caught:
        run(bounded, {"x": np.zeros((1, 1, 1, 2), np.float32), "low": np.float32(np.nan),
                      "big": np.zeros((1, 1, 1, 1, 2), np.float32)}, device=dml.Device("cpu", "2_1"))
    first, second = caught.value.problems
    assert first.startswith("Clip node 'clip': min must not be NaN")
    assert second.startswith("Clip node 'five_d': ELEMENT_WISE_CLIP: InputTensor.DimensionCount must be 4 at "
                             "feature level 2_1; got 5.")


@pytest.mark.parametrize(("inputs", "message"), [
    ({}, "ONNX model: inputs must give every graph input without an initializer; got none for x."),
    ({"x": X, "y": X}, "ONNX model: inputs must name graph inputs (x); got y."),
    ({"x": X.astype(np.int8)}, "ONNX model: Input 'x' must have type UINT8; got int8."),
    ({"x": X[:, :, :4]}, "ONNX model: Input 'x' must have shape [4, 3, 8]; got shape [4, 3, 4]."),
])
def test_inputs_are_checked(inputs: dict[str, Any], message: str) -> None:
    with pytest.raises(dml.InvalidArgumentError) as caught:
        run(pipeline(), inputs)
    assert str(caught.value) == message


def test_invalid_models_and_paths(tmp_path: Path) -> None:
    broken = pipeline()
    broken.graph.node[0].input[0] = "nowhere"
    with pytest.raises(dml.InvalidArgumentError, match=r"^ONNX model: Model must pass onnx\.checker; got "):
        run(broken, {"x": X})
    with pytest.raises(dml.InvalidArgumentError, match=r"^ONNX model: Path must name a readable ONNX file; got "):
        run(tmp_path / "missing.onnx", {"x": X})
    with pytest.raises(dml.InvalidArgumentError, match="must be a Device"):
        run(pipeline(), {"x": X}, device=3)  # type: ignore[arg-type]


def test_empty_and_scalar_tensors(monkeypatch: pytest.MonkeyPatch) -> None:
    scalar = single("Relu", 14, {"x": np.float32(-2)})
    assert run(scalar, {"x": np.float32(-2)})["y"].shape == ()
    empty = {"x": np.zeros((0, 3), np.float32)}
    clip = single("Clip", 13, {**empty, "min": np.float32(0)})
    monkeypatch.setattr(CompiledOperator, "execute", lambda *a: pytest.fail("an operator ran on nothing"))
    assert run(clip, {**empty, "min": np.float32(0)})["y"].shape == (0, 3)
    argmin = single("ArgMin", 13, empty, axis=1, keepdims=0)
    assert run(argmin, empty)["y"].shape == (0,)


def test_topological_order_keeps_file_order_among_ready_nodes() -> None:
    nodes = [helper.make_node("Relu", ["b"], ["c"], name="third"),
             helper.make_node("Relu", ["x"], ["a"], name="first"),
             helper.make_node("Relu", ["a"], ["b"], name="second"),
             helper.make_node("Relu", ["x"], ["d"], name="also_ready")]
    graph = helper.make_graph(nodes, "shuffled", [info("x", TensorProto.FLOAT, [1])], [])
    assert [n.name for n in topological_order(graph)] == ["first", "second", "third", "also_ready"]
    cyclic = helper.make_graph([helper.make_node("Relu", ["b"], ["a"]), helper.make_node("Relu", ["a"], ["b"])],
                               "cycle", [], [])
    with pytest.raises(dml.InvalidArgumentError, match="got a cycle"):
        topological_order(cyclic)


def test_backend_interface() -> None:
    assert backend.supports_device("CPU")
    assert not backend.supports_device("CUDA:1") and not backend.supports_device("TPU")
    node = helper.make_node("Clip", ["x", "lo", "hi"], ["y"])
    (y,) = backend.run_node(node, [np.array([-3, 0, 3], np.int32), np.int32(-1), np.int32(2)])
    assert y.tolist() == [-1, 0, 2] and y.dtype == np.int32
    prepared = backend.prepare(pipeline(), "CPU", feature_level="5_0")
    assert prepared.session.device.feature_level == dml.FeatureLevel.FL_5_0
    assert backend.is_compatible(pipeline())
    with pytest.raises(dml.InvalidArgumentError, match="must hold at most 1 arrays"):
        prepared.run([X, X])


def test_the_mappings_cover_every_version_onnx_defines() -> None:
    modules = [m.name for m in pkgutil.iter_modules(importlib.import_module("opendml.onnx.ops").__path__)]
    for name in modules:
        module = importlib.import_module(f"opendml.onnx.ops.{name}")
        if name not in ("base", "quantization"):  # what the mappings share
            listed = [m for value in vars(module).values()
                      for m in (value if isinstance(value, tuple) else (value,)) if m in MAPPINGS]
            assert listed, f"ops/{name}.py's mapping is not listed"
    assert len({m.op_type for m in MAPPINGS}) == len(MAPPINGS)
    for mapping in MAPPINGS:
        defined = {s.since_version for s in onnx.defs.get_all_schemas_with_history()
                   if s.name == mapping.op_type and s.domain == ""}
        assert mapping.versions is None or defined <= set(mapping.versions), mapping.op_type


def test_import_opendml_does_not_import_onnx() -> None:
    code = "import sys, opendml, opendml.onnx, opendml.onnx.cli; assert 'onnx' not in sys.modules, 'onnx imported'"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO, env={"PYTHONPATH": str(REPO)})


def test_missing_onnx_is_one_clear_error() -> None:
    code = ("import sys; sys.modules['onnx'] = None\n"
            "import opendml.onnx\n"
            "try:\n    opendml.onnx.run\nexcept opendml.onnx.OnnxUnavailableError as e:\n    print(e)\n")
    done = subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO, env={"PYTHONPATH": str(REPO)},
                          capture_output=True, text=True)
    assert done.stdout.startswith("opendml.onnx: the onnx package must be installed (pip install 'opendml[onnx]')")
    assert opendml.onnx.OnnxUnavailableError.__mro__[1:3] == (dml.OpenDMLError, ImportError)


def test_constant_nodes_feed_bounds_and_outputs() -> None:
    nodes = [helper.make_node("Constant", [], ["low"], value_float=-1.0),
             helper.make_node("Constant", [], ["high"], value=numpy_helper.from_array(np.float32(0.5))),
             helper.make_node("Constant", [], ["table"], value_ints=[3, 1, 2]),
             helper.make_node("Clip", ["x", "low", "high"], ["y"])]
    built = model(nodes, {"x": np.zeros(9, np.float32)}, ["y", "table"], 13)
    x = np.linspace(-3, 3, 9, dtype=np.float32)
    got, want = run(built, {"x": x}), reference(built, {"x": x})
    np.testing.assert_array_equal(got["y"], want["y"])
    assert got["table"].tolist() == [3, 1, 2] and got["table"].dtype == np.int64


@pytest.mark.parametrize(("op_type", "inputs", "message"), [
    ("Clip", {"x": np.zeros(3, np.float32), "min": np.float16(0)},
     "Clip node #0: Input min must have input's type (FLOAT); got FLOAT16."),
    ("DequantizeLinear", {"x": np.zeros(3, np.uint8), "s": np.float32(1), "zp": np.int8(0)},
     "DequantizeLinear node #0: Input x_zero_point must have x's type (UINT8); got INT8."),
])
def test_inputs_typed_alike_must_match(op_type: str, inputs: dict[str, np.ndarray], message: str) -> None:
    built = single(op_type, 21, inputs, output=(TensorProto.FLOAT, [3]))
    with pytest.raises(UnsupportedModelError) as caught:
        run(built, inputs)
    assert caught.value.problems == (message,)


def test_a_string_constant_is_listed() -> None:
    nodes = [helper.make_node("Constant", [], ["low"], value=helper.make_tensor("t", TensorProto.STRING, [], [b"a"])),
             helper.make_node("Clip", ["x", "low"], ["y"])]
    built = model(nodes, {"x": np.zeros(3, np.float32)}, {"y": (TensorProto.FLOAT, [3])}, 13)
    with pytest.raises(UnsupportedModelError, match="Input min must have input's type \\(FLOAT\\); got STRING"):
        run(built, {"x": np.zeros(3, np.float32)})


def test_a_sparse_initializer_is_listed() -> None:
    values = numpy_helper.from_array(np.array([2.0], np.float32), "low")
    indices = numpy_helper.from_array(np.array([0], np.int64), "low_indices")
    sparse = helper.make_sparse_tensor(values, indices, [1])
    graph = helper.make_graph([helper.make_node("Clip", ["x", "low"], ["y"])], "sparse",
                              [info("x", TensorProto.FLOAT, [3])], [info("y", TensorProto.FLOAT, [3])])
    graph.sparse_initializer.append(sparse)
    with pytest.raises(UnsupportedModelError) as caught:
        run(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), {"x": np.zeros(3, np.float32)})
    assert caught.value.problems == ("ONNX model: Initializer 'low' must be dense; got a sparse initializer.",)
