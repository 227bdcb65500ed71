"""ONNX Runtime's habits: ``InferenceSession`` (``get_inputs()``, ``get_outputs()``, ``run(None, feeds)``), and
a model that cannot be read being one opendml error, whichever format onnx read it as and whichever entry
point loaded it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("onnx", reason="the ONNX front end needs the onnx extra (pip install 'opendml[onnx]')")

import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx_models import info, model, reference

import opendml as dml
import opendml.onnx
from opendml.onnx import InferenceSession, NodeArg, Session
from opendml.onnx.session import type_string

RNG = np.random.default_rng(33)


def two_outputs() -> onnx.ModelProto:
    """DequantizeLinear then ArgMin, both outputs kept: the ArgMin's first, a name with odd characters."""
    nodes = [helper.make_node("DequantizeLinear", ["x", "scale"], ["values"]),
             helper.make_node("ArgMin", ["values"], ["out/index:0"], axis=1)]
    return model(nodes, {"x": np.zeros((2, 5), np.int8)}, ["out/index:0", "values"], 21,
                 {"scale": np.float32(0.5)})


X = RNG.integers(-128, 127, (2, 5), dtype=np.int8, endpoint=True)


# ------------------------------------------------------------------------------------ InferenceSession

def test_run_none_gives_every_output_in_graph_order() -> None:
    built = two_outputs()
    want = reference(built, {"x": X})
    got = InferenceSession(built).run(None, {"x": X})
    assert isinstance(got, list) and len(got) == 2
    np.testing.assert_array_equal(got[0], want["out/index:0"])
    np.testing.assert_array_equal(got[1], want["values"])
    assert got[0].dtype == np.int64 and got[1].dtype == np.float32


def test_run_agrees_with_opendml_onnx_run(device: dml.Device) -> None:
    built = two_outputs()
    by_name = opendml.onnx.run(built, {"x": X}, device=device)
    session = InferenceSession(built, device=device)
    assert session.device is device
    for names in (None, [], ["out/index:0", "values"]):
        listed = session.run(names, {"x": X})
        assert [a.tolist() for a in listed] == [by_name["out/index:0"].tolist(), by_name["values"].tolist()]
    (values,) = session.run(["values"], {"x": X})
    np.testing.assert_array_equal(values, X.astype(np.float32) * np.float32(0.5))
    backwards = session.run(["values", "out/index:0"], {"x": X})
    np.testing.assert_array_equal(backwards[1], np.argmin(X, axis=1, keepdims=True))


def test_a_device_by_name_and_the_session_underneath() -> None:
    session = InferenceSession(two_outputs(), device="cpu")
    assert session.device.backend.name == "cpu"
    assert isinstance(session.session, Session)
    assert list(session.session.run({"x": X})) == ["out/index:0", "values"]


def described() -> onnx.ModelProto:
    """Inputs with a symbolic, an unknown and no dimension, two of them with initializers of their names (defaults),
    and outputs of which one dimension is left unknown."""
    graph = helper.make_graph(
        [helper.make_node("Clip", ["x", "low", "high"], ["y"]), helper.make_node("ArgMax", ["y"], ["i"], axis=1),
         helper.make_node("DequantizeLinear", ["q", "s"], ["d"])],
        "described",
        [info("x", TensorProto.FLOAT16, ["batch", 3]), info("low", TensorProto.FLOAT16, []),
         info("high", TensorProto.FLOAT16, []), info("q", TensorProto.UINT8, [None]), info("s", TensorProto.FLOAT, [])],
        [info("y", TensorProto.FLOAT16, ["batch", None]), info("i", TensorProto.INT64, ["batch", 1]),
         info("d", TensorProto.FLOAT, [None])],
        [numpy_helper.from_array(np.float16(-1.0), "low"), numpy_helper.from_array(np.float16(1.0), "high")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def test_inputs_and_outputs_described_as_onnx_runtime_does() -> None:
    session = InferenceSession(described())
    # An input with an initializer of its name has a default: ONNX Runtime leaves it out of get_inputs().
    assert session.get_inputs() == [NodeArg("x", "tensor(float16)", ["batch", 3]),
                                    NodeArg("q", "tensor(uint8)", [None]), NodeArg("s", "tensor(float)", [])]
    # An output dimension the graph leaves unknown is refined by shape inference, as ONNX Runtime refines it
    # (Clip keeps its input's shape); one inference cannot know stays None.
    assert session.get_outputs() == [NodeArg("y", "tensor(float16)", ["batch", 3]),
                                     NodeArg("i", "tensor(int64)", ["batch", 1]), NodeArg("d", "tensor(float)", [None])]
    first = session.get_inputs()[0]
    assert (first.name, first.type, first.shape) == ("x", "tensor(float16)", ["batch", 3])
    assert repr(first) == "NodeArg(name='x', type='tensor(float16)', shape=['batch', 3])"


def test_type_strings_of_other_kinds() -> None:
    tensor = helper.make_tensor_type_proto(TensorProto.FLOAT, [2])
    assert type_string(tensor) == "tensor(float)"
    assert type_string(helper.make_tensor_type_proto(TensorProto.BOOL, None)) == "tensor(bool)"
    assert type_string(helper.make_tensor_type_proto(TensorProto.BFLOAT16, None)) == "tensor(bfloat16)"
    assert type_string(helper.make_sequence_type_proto(tensor)) == "seq(tensor(float))"
    assert type_string(helper.make_optional_type_proto(tensor)) == "optional(tensor(float))"
    assert type_string(helper.make_map_type_proto(TensorProto.INT64, tensor)) == "map(int64,tensor(float))"
    assert type_string(helper.make_sparse_tensor_type_proto(TensorProto.INT8, [3])) == "sparse_tensor(int8)"
    assert type_string(onnx.TypeProto()) == "undefined"


@pytest.mark.parametrize(("names", "message"), [
    (["nothing"], "InferenceSession.run: output_names must name graph outputs (out/index:0, values); got 'nothing'."),
    (["values", "a", "b"], "InferenceSession.run: output_names must name graph outputs (out/index:0, values); "
                           "got 'a', 'b'."),
    ("values", "InferenceSession.run: output_names must be a list of output names or None; got 'values'."),
    (3, "InferenceSession.run: output_names must be a list of output names or None; got 3."),
])
def test_bad_output_names(names: Any, message: str) -> None:
    with pytest.raises(dml.InvalidArgumentError) as caught:
        InferenceSession(two_outputs()).run(names, {"x": X})
    assert str(caught.value) == message


def test_bad_feeds_and_devices_are_opendml_errors() -> None:
    session = InferenceSession(two_outputs())
    with pytest.raises(dml.InvalidArgumentError, match=r"^ONNX model: Input 'x' must have type INT8; got uint8\.$"):
        session.run(None, {"x": X.view(np.uint8)})
    with pytest.raises(dml.InvalidArgumentError, match="must give every graph input without an initializer"):
        session.run(None, {})
    with pytest.raises(dml.InvalidArgumentError, match="must be a Device"):
        InferenceSession(two_outputs(), device=3)  # type: ignore[arg-type]


def test_from_a_path_and_from_bytes(tmp_path: Path) -> None:
    built = two_outputs()
    onnx.save(built, tmp_path / "model.onnx")
    want = reference(built, {"x": X})["values"]
    for source in (tmp_path / "model.onnx", str(tmp_path / "model.onnx"), built.SerializeToString()):
        np.testing.assert_array_equal(InferenceSession(source).run(["values"], {"x": X})[0], want)


# ------------------------------------------------------------------------------------ loading, every format

@pytest.mark.parametrize("name", ["model.json", "model.textproto", "model.onnxtxt", "model.onnx"])
def test_every_format_onnx_writes_loads(tmp_path: Path, name: str) -> None:
    """onnx picks the format from the extension, on saving as on loading: each runs as the ModelProto does."""
    built = two_outputs()
    onnx.save(built, tmp_path / name)
    got = InferenceSession(tmp_path / name).run(None, {"x": X})
    np.testing.assert_array_equal(got[0], reference(built, {"x": X})["out/index:0"])


ENTRY_POINTS: dict[str, Callable[[Any], object]] = {
    "run": lambda source: opendml.onnx.run(source, {}),
    "check": opendml.onnx.check,
    "Session": Session,
    "InferenceSession": InferenceSession,
    "load_model": opendml.onnx.load_model,
    "backend.prepare": lambda source: opendml.onnx.backend.prepare(source),
}

UNREADABLE = [  # file name, contents, format read as, start of the reason
    ("model.json", b'{"a": 1}', "json (from its extension '.json')",
     'ParseError: Message type "onnx.ModelProto" has no field named "a" at "ModelProto". Available Fields'),
    ("model.json", b"", "json (from its extension '.json')", "ParseError: Failed to load JSON: Expecting value"),
    ("model.json", b"\x8b\x00\xff", "json (from its extension '.json')",
     "UnicodeDecodeError: 'utf-8' codec can't decode byte 0x8b in position 0"),
    ("model.textproto", b"garbage\n", "textproto (from its extension '.textproto')",
     'ParseError: 1:1 : Message type "onnx.ModelProto" has no field named "garbage"'),
    ("model.onnxtxt", b"not a model <", "onnxtxt (from its extension '.onnxtxt')",
     "ParseError: [ParseError at position (line: 1 column: 5)] Error context: not a model <"),
    ("model.onnx", b"junk\n", "protobuf", "DecodeError: Error parsing message"),
    ("model", b"junk\n", "protobuf", "DecodeError: Error parsing message"),
]


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
@pytest.mark.parametrize(("name", "contents", "read_as", "reason"), UNREADABLE,
                         ids=["json-field", "json-empty", "json-binary", "textproto", "onnxtxt", "onnx", "no-extension"])
def test_an_unreadable_file_is_one_opendml_error(tmp_path: Path, entry: str, name: str, contents: bytes,
                                                 read_as: str, reason: str) -> None:
    path = tmp_path / name
    path.write_bytes(contents)
    with pytest.raises(dml.InvalidArgumentError) as caught:
        ENTRY_POINTS[entry](str(path))
    message = str(caught.value)
    assert message.startswith(f"ONNX model: Path must name a readable ONNX file; got {str(path)!r} read as "
                              f"{read_as}: {reason}")
    assert "\n" not in message and message.endswith(".") and not message.endswith("..")


def test_a_missing_file_names_it_once(tmp_path: Path) -> None:
    path = tmp_path / "missing.onnx"
    with pytest.raises(dml.InvalidArgumentError) as caught:
        InferenceSession(path)
    assert str(caught.value) == (f"ONNX model: Path must name a readable ONNX file; got {str(path)!r} read as "
                                 "protobuf: FileNotFoundError: No such file or directory.")


def test_a_file_that_fails_the_checker_is_named(tmp_path: Path) -> None:
    path = tmp_path / "model.textproto"
    path.write_text("ir_version: 7\n")  # parses, but names no opset
    with pytest.raises(dml.InvalidArgumentError) as caught:
        opendml.onnx.run(path, {})
    assert str(caught.value) == ("ONNX model: Model must pass onnx.checker; got model with IR version >= 3 must "
                                 f"specify opset_import for ONNX (read from {str(path)!r} as textproto).")


def test_bytes_that_are_no_model() -> None:
    with pytest.raises(dml.InvalidArgumentError) as caught:
        InferenceSession(b"junk\n")
    assert str(caught.value).startswith("ONNX model: Bytes must be a serialized ModelProto (protobuf); got "
                                        "DecodeError: Error parsing message")


# ------------------------------------------------------------------------------------ ONNX Runtime itself

def test_node_args_match_onnx_runtime() -> None:
    """Where ONNX Runtime is installed (the bench extra): the same names, types and shapes as its session's,
    and the same outputs."""
    onnxruntime = pytest.importorskip("onnxruntime", reason="the comparison needs onnxruntime (the bench extra)")
    batched = two_outputs()
    batched.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    x = RNG.integers(-128, 127, (3, 5), dtype=np.int8, endpoint=True)
    half = np.array([[0.5, 2.0, -3.0], [1.0, 0.25, -0.5]], np.float16)  # no NaN: ArgMax parts there (docs/semantics.md)
    cases = [(batched, {"x": x}),
             (described(), {"x": half, "q": np.array([1, 200], np.uint8), "s": np.array(0.5, np.float32)})]
    for built, feed in cases:
        built.ir_version = helper.find_min_ir_version_for(list(built.opset_import))
        theirs = onnxruntime.InferenceSession(built.SerializeToString(), providers=["CPUExecutionProvider"])
        ours = InferenceSession(built)
        pairs = [*zip(ours.get_inputs(), theirs.get_inputs()), *zip(ours.get_outputs(), theirs.get_outputs())]
        assert len(pairs) == len(theirs.get_inputs()) + len(theirs.get_outputs())
        for mine, its in pairs:
            assert (mine.name, mine.type, mine.shape) == (its.name, its.type, its.shape)
        for got, want in zip(ours.run(None, feed), theirs.run(None, feed)):
            np.testing.assert_array_equal(got, want)
