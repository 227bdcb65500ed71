"""Graphs in ``opendml dispatch``: DxDispatch's dmlCompileType, and opendml's ``"type": "graph"`` dispatchables.

Every test runs the command through ``opendml.cli.main``; expected values are computed here with NumPy.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest
from dispatch_helpers import printed, write_model

from opendml.cli import main
from opendml.dispatch.catalog import examples_dir

PREFIX = "opendml dispatch: error: "
Q = np.array([90, 200, 128, 255, 140, 10, 130, 129, 131, 127, 126, 132,
              0, 255, 64, 192, 32, 224, 160, 96, 120, 136, 100, 156], dtype=np.uint8).reshape(4, 6)


def _run(capsys: pytest.CaptureFixture[str], *args: str | Path, backend: str = "cpu") -> str:
    status = main(["dispatch", "--backend", backend, *map(str, args)])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return captured.out


def _fails(capsys: pytest.CaptureFixture[str], path: Path, *args: str) -> str:
    """A bad model: exit status 2, no resource printed, one line on stderr."""
    status = main(["dispatch", "--backend", "cpu", str(path), *args])
    captured = capsys.readouterr()
    assert status == 2, captured.out
    assert "Resource" not in captured.out
    assert captured.err.count("\n") == 1 and captured.err.startswith(PREFIX), captured.err
    return captured.err[len(PREFIX):].rstrip("\n")


def _resource_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("Resource ")]


def _graph_example() -> dict:
    return json.loads((examples_dir() / "dequantize_clip_argmin_graph.json").read_text())


def _desc(model: dict) -> dict:
    return model["dispatchables"]["head"]["desc"]


# ---- the bundled example -------------------------------------------------------------------------------

def test_graph_example_prints_what_the_three_dispatches_print(capsys: pytest.CaptureFixture[str],
                                                              backend: str) -> None:
    one_graph = _run(capsys, "--example", "dequantize_clip_argmin_graph", backend=backend)
    three = _run(capsys, "--example", "dequantize_clip_argmin", backend=backend)
    assert _resource_lines(one_graph) == _resource_lines(three)
    assert len(_resource_lines(one_graph)) == 2
    x = np.clip((Q.astype(np.float64) - 128) * 0.25, -8, 8)
    np.testing.assert_array_equal(printed(one_graph, "x"), x.reshape(-1))
    assert printed(one_graph, "index").tolist() == [0, 4, 0, 1]
    assert [line.split("'")[1] for line in one_graph.splitlines() if line.startswith("Dispatch")] == ["head"]


def test_quantize_dequantize_graph_example(capsys: pytest.CaptureFixture[str], backend: str) -> None:
    out = _run(capsys, "--example", "quantize_dequantize_graph", backend=backend)
    # x / 0.25: -4, -1.5 (to even: -2), 0, 0.5 (to even: 0), 1.2, 2.5 (to even: 2), 160, -132; plus 10 into INT8
    assert printed(out, "q").tolist() == [6, 8, 10, 10, 11, 12, 127, -122]
    assert printed(out, "y").tolist() == [-1.0, -0.5, 0.0, 0.0, 0.25, 0.5, 29.25, -33.0]
    assert [line.split("'")[1] for line in out.splitlines() if line.startswith("Dispatch")] == ["round_trip"]


def test_graph_example_is_listed(capsys: pytest.CaptureFixture[str]) -> None:
    listed = {line.split()[0]: line for line in _run(capsys).splitlines()[1:]}
    assert "one graph" in listed["dequantize_clip_argmin_graph"]


def test_graph_example_validates_against_the_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema validates models against the schema")
    from opendml.dispatch.schema import model_schema

    validator = jsonschema.Draft202012Validator(model_schema())
    model = _graph_example()
    assert [e.message for e in validator.iter_errors(model)] == []
    _desc(model)["IntermediateEdges"][0]["ToNode"] = 1  # a misspelt field
    assert len(list(validator.iter_errors(model))) > 0
    model = _graph_example()
    _desc(model)["Outputs"] = []
    assert len(list(validator.iter_errors(model))) > 0


# ---- dmlCompileType ------------------------------------------------------------------------------------

F32_6 = {"DataType": "FLOAT32", "Sizes": [6]}


def _compile_type_model(compile_type: str, bind_in_place: bool = False) -> dict:
    """DEQUANTIZE_LINEAR without its optional ZeroPointTensor, then CLIP; both compiled as ``compile_type``."""
    q = {"DataType": "UINT8", "Sizes": [6]}
    scale = {"DataType": "FLOAT32", "Sizes": [6], "Strides": [0]}
    return {
        "resources": {
            "q": {"initialValuesDataType": "UINT8", "initialValues": [0, 3, 8, 40, 200, 255]},
            "s": {"initialValuesDataType": "FLOAT32", "initialValues": [0.5]},
            "x": {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 6, "value": 0}},
            "y": {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 6, "value": 0}},
        },
        "dispatchables": {
            "dq": {"type": "ELEMENT_WISE_DEQUANTIZE_LINEAR", "dmlCompileType": compile_type,
                   "desc": {"InputTensor": q, "ScaleTensor": scale, "OutputTensor": F32_6}},
            "clip": {"type": "ELEMENT_WISE_CLIP", "dmlCompileType": compile_type,
                     "desc": {"InputTensor": F32_6, "OutputTensor": F32_6, "Min": 1, "Max": 20}},
        },
        "commands": [
            {"type": "dispatch", "dispatchable": "dq",
             "bindings": {"InputTensor": "q", "ScaleTensor": "s", "OutputTensor": "x"}},
            {"type": "dispatch", "dispatchable": "clip",
             "bindings": {"InputTensor": "x", "OutputTensor": "x" if bind_in_place else "y"}},
            {"type": "print", "resource": "x"},
            {"type": "print", "resource": "y"},
        ],
    }


@pytest.mark.parametrize("compile_type", ["DmlCompileOp", "DmlCompileGraph"])
def test_both_compile_types_give_the_same_values(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 backend: str, compile_type: str) -> None:
    out = _run(capsys, write_model(tmp_path / "m.json", _compile_type_model(compile_type)), backend=backend)
    x = np.array([0, 3, 8, 40, 200, 255]) * 0.5
    np.testing.assert_array_equal(printed(out, "x"), x)
    np.testing.assert_array_equal(printed(out, "y"), np.clip(x, 1, 20))


def test_dml_compile_graph_needs_feature_level_2_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CompileGraph arrived at 2_1: below it DmlCompileGraph is refused where it is asked for; DmlCompileOp runs."""
    model = _compile_type_model("DmlCompileGraph")
    f32_4d = {"DataType": "FLOAT32", "Sizes": [1, 1, 1, 6]}  # level 1_0 takes 4-dimensional tensors only
    model["dispatchables"] = {"clip": {"type": "ELEMENT_WISE_CLIP", "dmlCompileType": "DmlCompileGraph",
                                       "desc": {"InputTensor": f32_4d, "OutputTensor": f32_4d, "Min": 1, "Max": 20}}}
    model["commands"] = [model["commands"][1], model["commands"][3]]
    path = write_model(tmp_path / "m.json", model)
    error = _fails(capsys, path, "--feature-level", "1_0")
    assert error.startswith("dispatchables.clip.dmlCompileType: GraphDesc: FeatureLevel must be at least 2_1"), error
    model["dispatchables"]["clip"]["dmlCompileType"] = "DmlCompileOp"
    out = _run(capsys, write_model(tmp_path / "m.json", model), "--feature-level", "1_0")
    np.testing.assert_array_equal(printed(out, "y"), np.ones(6))


def test_dml_compile_graph_does_not_run_in_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A graph's outputs may not overlap its inputs (docs/graphs.md), even for a node that could run in place."""
    _run(capsys, write_model(tmp_path / "op.json", _compile_type_model("DmlCompileOp", bind_in_place=True)))
    error = _fails(capsys, write_model(tmp_path / "graph.json", _compile_type_model("DmlCompileGraph", True)))
    assert error == ("commands[1].bindings.OutputTensor: resource 'x' (24 bytes) from byte 0: GRAPH: OutputTensor "
                     "binding must not overlap InputTensor; got bytes [0, 24) against [0, 24).")


def test_dml_compile_type_must_be_one_of_directmls(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    error = _fails(capsys, write_model(tmp_path / "m.json", _compile_type_model("DmlCompileGraphs")))
    assert error == "dispatchables.dq.dmlCompileType: must be DmlCompileOp or DmlCompileGraph; got 'DmlCompileGraphs'."


# ---- graph dispatchables: how they run ------------------------------------------------------------------

def test_nodes_may_follow_the_graph_and_repeat(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A node may name a dispatchable written after the graph, and one dispatchable may be several nodes."""
    model = _compile_type_model("DmlCompileOp")
    intermediate = {"FromNodeIndex": 0, "FromNodeOutputIndex": 0, "ToNodeIndex": 1, "ToNodeInputIndex": 0}
    twice = {"type": "graph", "executionFlags": "NONE", "Desc": {
        "Inputs": ["X"], "Outputs": ["Y"], "Nodes": ["half", "half"],
        "InputEdges": [{"GraphInputIndex": 0, "ToNodeIndex": 0, "ToNodeInputIndex": 0}],
        "OutputEdges": [{"FromNodeIndex": 1, "FromNodeOutputIndex": 0, "GraphOutputIndex": 0, "Name": "out"}],
        "IntermediateEdges": [intermediate]}}
    half = {"type": "ELEMENT_WISE_CLIP", "desc": {"InputTensor": F32_6, "OutputTensor": F32_6, "Min": -100,
                                                  "Max": 100, "ScaleBias": {"Scale": 0.5, "Bias": 0}}}
    model["dispatchables"] = {"twice": twice, "dq": model["dispatchables"]["dq"], "half": half}
    model["commands"] = [model["commands"][0], {"type": "dispatch", "dispatchable": "twice",
                                                 "bindings": {"X": "x", "Y": "y"}}, model["commands"][3]]
    out = _run(capsys, write_model(tmp_path / "m.json", model))
    np.testing.assert_array_equal(printed(out, "y"), np.array([0, 3, 8, 40, 200, 255]) * 0.125)


def test_graph_output_writes_only_when_the_run_succeeds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A graph dispatch that breaks a binding rule after a writeFile: no file appears."""
    model = _graph_example()
    model["commands"].insert(1, {"type": "writeFile", "resource": "index", "targetPath": "index.npy"})
    bad = copy.deepcopy(model["commands"][0])
    bad["bindings"]["IndexTensor"] = "x"  # also the graph output ClippedTensor
    model["commands"].insert(2, bad)
    error = _fails(capsys, write_model(tmp_path / "m.json", model), "--output-path", str(tmp_path))
    assert error == ("commands[2].bindings.IndexTensor: resource 'x' (96 bytes) from byte 0: GRAPH: IndexTensor "
                     "binding must not overlap ClippedTensor; got bytes [0, 32) against [0, 96).")
    assert not (tmp_path / "index.npy").exists()


# ---- graph dispatchables: errors, each at its JSON path --------------------------------------------------

def _graph_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], change: object) -> str:
    model = _graph_example()
    change(model)  # type: ignore[operator]
    return _fails(capsys, write_model(tmp_path / "m.json", model))


HEAD = "dispatchables.head.desc"
CYCLE = {"Inputs": [], "Outputs": ["Y"], "Nodes": ["clip", "clip"], "InputEdges": [],
         "OutputEdges": [{"FromNodeIndex": 1, "FromNodeOutputIndex": 0, "GraphOutputIndex": 0}],
         "IntermediateEdges": [{"FromNodeIndex": 0, "FromNodeOutputIndex": 0, "ToNodeIndex": 1, "ToNodeInputIndex": 0},
                               {"FromNodeIndex": 1, "FromNodeOutputIndex": 0, "ToNodeIndex": 0, "ToNodeInputIndex": 0}]}


def _set(*keys: str | int, value: object) -> object:
    def change(model: dict) -> None:
        target = model["dispatchables"]["head"]["desc"]
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value
    return change


def _nest(model: dict) -> None:
    model["dispatchables"]["outer"] = {"type": "graph", "desc": {**_desc(model), "Nodes": ["dequantize", "head", "argmin"]}}


def _unread(model: dict) -> None:
    _desc(model)["Inputs"].append("Spare")


def _no_edge(model: dict) -> None:
    _desc(model)["InputEdges"][1]["ToNodeInputIndex"] = 2  # ScaleTensor has none, ZeroPointTensor two


def _cycle(model: dict) -> None:
    model["dispatchables"]["head"]["desc"] = CYCLE
    model["commands"][0]["bindings"] = {"Y": "x"}


@pytest.mark.parametrize(("change", "expected"), [
    (_set("Nodes", 1, value="clp"), f"{HEAD}.Nodes[1]: must name an operator dispatchable of the model (known: "
                                    "'dequantize', 'clip', 'argmin'); got 'clp'."),
    (_nest, "dispatchables.outer.desc.Nodes[1]: must name an operator dispatchable (a graph cannot be a node of "
            "another graph); got the graph 'head'."),
    (_set("Nodes", 0, value="head"), f"{HEAD}.Nodes[0]: must name an operator dispatchable (a graph cannot be a "
                                     "node of another graph); got the graph 'head'."),
    (_cycle, f"{HEAD}.Nodes: GraphDesc: Nodes must form a DAG (no cycle of edges); got the cycle Nodes[0] -> "
             "Nodes[1] -> Nodes[0]."),
    (_set("IntermediateEdges", 1, "ToNodeInputIndex", value=3),
     f"{HEAD}.IntermediateEdges[1].ToNodeInputIndex: GraphDesc: IntermediateEdges[1].ToNodeInputIndex must be < 1 "
     "(ARGMIN has 1 input); got 3."),
    (_set("OutputEdges", 1, "GraphOutputIndex", value=2),
     f"{HEAD}.OutputEdges[1].GraphOutputIndex: GraphDesc: OutputEdges[1].GraphOutputIndex must be < 2 (OutputCount); "
     "got 2."),
    (_set("InputEdges", 2, "ToNodeIndex", value=9),
     f"{HEAD}.InputEdges[2].ToNodeIndex: GraphDesc: InputEdges[2].ToNodeIndex must be < 3 (the node count); got 9."),
    (_no_edge, f"{HEAD}.Nodes[0]: GraphDesc: Nodes[0].ScaleTensor must have exactly one incoming edge (required); "
               "got 0."),
    (_set("OutputEdges", 1, "GraphOutputIndex", value=0),
     f"{HEAD}.Outputs[0]: GraphDesc: Outputs[0] must have exactly one OutputEdge; got 2 (OutputEdges[0], "
     "OutputEdges[1])."),
    (_unread, f"{HEAD}.Inputs[3]: must be read by an InputEdge (a graph input that no edge reads has nothing to "
              "bind); got \"Spare\"."),
    (_set("InputEdges", 0, "GraphInputIndex", value=-1),
     f"{HEAD}.InputEdges[0].GraphInputIndex: must be in [0, 4294967295]; got -1."),
    (_set("InputEdges", 0, value={"GraphInputIndex": 0, "ToNodeIndex": 0}),
     f"{HEAD}.InputEdges[0].ToNodeInputIndex: is required; got nothing."),
    (_set("Outputs", 1, value="ScaleTensor"),
     f"{HEAD}.Outputs[1]: must differ from every name of Inputs (Inputs[1]); got \"ScaleTensor\"."),
    (_set("Inputs", 2, value="QuantizedTensor"),
     f"{HEAD}.Inputs[2]: must differ from the names before it; got \"QuantizedTensor\" again."),
    (_set("Outputs", value=[]), f"{HEAD}.Outputs: must hold at least one name; got []."),
    (_set("Nodes", value="dequantize"), f"{HEAD}.Nodes: must be an array of names; got string \"dequantize\"."),
    (_set("Edges", value=[]), f"{HEAD}.Edges: is not a known field here (known: Inputs, Outputs, Nodes, InputEdges, "
                              "OutputEdges, IntermediateEdges); got an unknown field."),
], ids=["unknown node", "nested graph", "graph names itself", "cycle", "node input index", "graph output index",
        "node index", "input without edge", "output with two edges", "unread input", "negative index", "missing index",
        "input and output share a name", "repeated input name", "no output", "nodes not an array", "unknown field"])
def test_bad_graphs_name_their_json_path(tmp_path: Path, capsys: pytest.CaptureFixture[str], change: object,
                                         expected: str) -> None:
    assert _graph_error(tmp_path, capsys, change) == expected


def test_graph_dispatchable_fields(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def compile_op(model: dict) -> None:
        model["dispatchables"]["head"]["dmlCompileType"] = "DmlCompileOp"

    def bad_type(model: dict) -> None:
        model["dispatchables"]["clip"]["type"] = "graf"

    assert _graph_error(tmp_path, capsys, compile_op) == (
        "dispatchables.head.dmlCompileType: must be DmlCompileGraph for a graph (or left out); got 'DmlCompileOp'.")
    refused = _graph_error(tmp_path, capsys, bad_type)
    assert "ELEMENT_WISE_DEQUANTIZE_LINEAR, DML_OPERATOR_ARGMIN, DML_OPERATOR_ARGMAX, " in refused  # the registry's order
    from opendml.dispatch.operators import OPERATORS

    last = OPERATORS[-1].name  # the registry's last
    assert refused.endswith(f"DML_OPERATOR_{last} (with or without DML_OPERATOR_), or \"graph\"; got 'graf'.")


def test_graph_bindings_are_its_input_and_output_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def unbound(model: dict) -> None:
        del model["commands"][0]["bindings"]["IndexTensor"]

    def operator_name(model: dict) -> None:
        model["commands"][0]["bindings"]["InputTensor"] = "q"

    assert _graph_error(tmp_path, capsys, unbound) == (
        "commands[0].bindings.IndexTensor: must be bound to a resource; got no binding.")
    assert _graph_error(tmp_path, capsys, operator_name) == (
        "commands[0].bindings.InputTensor: must be a tensor of 'head' (tensors: QuantizedTensor, ScaleTensor, "
        "ZeroPointTensor, ClippedTensor, IndexTensor); got a tensor it does not have.")
