"""ONNX's TopK on TOP_K and TOP_K1: every version (K an attribute, then an input known before running), largest,
sorted, negative axes, INT64 indices; a model whose TopK feeds other nodes through each of its outputs; the
refusals. Against tests/top_k_oracle.py (Python's ``sorted``) and, where ONNX's reference agrees, its evaluator."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("onnx", reason="the ONNX front end needs the onnx extra (pip install 'opendml[onnx]')")

from onnx import TensorProto, helper
from onnx_models import model, reference

import opendml as dml
from opendml.onnx import Session, UnsupportedModelError, run
from tests.top_k_oracle import assert_same, oracle, random_values

RNG = np.random.default_rng(3636)


def _top_k_model(x: np.ndarray, opset: int, k: int, *, k_source: str = "constant", **attributes: Any) -> Any:
    """One TopK node writing ``values`` and ``indices``; K as TopK-1's attribute, else as an initializer
    (``constant``) or a graph input (``input``)."""
    if opset < 10:
        node = helper.make_node("TopK", ["x"], ["values", "indices"], k=k, **attributes)
        return model([node], {"x": x}, ["values", "indices"], opset)
    node = helper.make_node("TopK", ["x", "k"], ["values", "indices"], **attributes)
    k_array = np.array([k], np.int64)
    if k_source == "input":
        return model([node], {"x": x, "k": k_array}, ["values", "indices"], opset)
    return model([node], {"x": x}, ["values", "indices"], opset, {"k": k_array})


_CASES = [("FLOAT32", -1, 1), ("FLOAT16", 0, 1), ("FLOAT32", 1, 0), ("INT32", -2, 0), ("UINT8", -1, 1),
          ("INT64", 2, 1), ("UINT64", -3, 0)]


@pytest.mark.parametrize(("opset", "type_name", "axis", "largest"), [
    (opset, *case) for opset in (1, 10, 11, 24) for case in _CASES
    if opset >= 11 or (case[0].startswith("FLOAT") and case[2])])  # TopK-1 and -10: floats, the largest only
def test_every_version_against_the_oracle(opset: int, type_name: str, axis: int, largest: int) -> None:
    x = random_values(RNG, type_name, (3, 5, 6), spread=4)
    k = 3
    attributes: dict[str, Any] = {"axis": axis}
    if opset >= 11:
        attributes["largest"] = largest
    got = run(_top_k_model(x, opset, k, **attributes), {"x": x})
    assert got["indices"].dtype == np.int64
    assert_same((got["values"], got["indices"]), oracle(x, axis % 3, k, bool(largest)))


def test_k_as_a_graph_input_and_sorted_zero_still_sorted() -> None:
    x = RNG.standard_normal((4, 9)).astype(np.float32)
    for sorted_ in (0, 1):
        session = Session(_top_k_model(x, 11, 5, k_source="input", sorted=sorted_))
        for k in (1, 5, 9):
            got = session.run({"x": x, "k": np.array([k], np.int64)})
            assert_same((got["values"], got["indices"]), oracle(x, 1, k, True))


def test_a_k_of_zero_gives_empty_outputs() -> None:
    x = RNG.standard_normal((2, 4)).astype(np.float32)
    got = run(_top_k_model(x, 11, 0, k_source="input"), {"x": x, "k": np.array([0], np.int64)})
    assert got["values"].shape == (2, 0) and got["indices"].shape == (2, 0) and got["indices"].dtype == np.int64


def _pipeline(x: np.ndarray, k: int) -> Any:
    """TopK's values -> Abs -> a second TopK (smallest), its indices -> Cast to FLOAT -> Add of the values;
    the first TopK's indices also read by Mul of a constant INT64 2, and its values a graph output as well."""
    nodes = [
        helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=-1),
        helper.make_node("Abs", ["values"], ["absolute"]),
        helper.make_node("Mul", ["indices", "two"], ["doubled"]),
        helper.make_node("TopK", ["absolute", "k2"], ["v2", "i2"], axis=-1, largest=0),
        helper.make_node("Cast", ["i2"], ["i2_float"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["v2", "i2_float"], ["sum"]),
    ]
    return model(nodes, {"x": x}, ["values", "doubled", "sum"], 13,
                 {"k": np.array([k], np.int64), "k2": np.array([2], np.int64), "two": np.array(2, np.int64)})


@pytest.mark.parametrize("feature_level", ["6_4", "5_0", "4_1"])
def test_top_k_feeds_other_nodes_through_each_output(feature_level: str) -> None:
    """Below 5_0 TOP_K writes UINT32 indices; the CAST to INT64 is the same either way."""
    x = random_values(RNG, "FLOAT32", (3, 10), spread=5)
    x[np.isnan(x)] = 0.5  # ONNX's reference ranks NaN otherwise
    built = _pipeline(x, 4)
    got = run(built, {"x": x}, device=dml.Device("cpu", feature_level))
    values, indices = oracle(x, 1, 4, True)
    v2, i2 = oracle(np.abs(values), 1, 2, False)
    assert_same((got["values"], got["doubled"]), (values, indices * 2))
    np.testing.assert_array_equal(got["sum"], v2 + i2.astype(np.float32))
    want = reference(built, {"x": x})
    for name in ("values", "doubled", "sum"):
        np.testing.assert_array_equal(got[name], want[name])


def test_only_one_output_read() -> None:
    """The indices unread: their CAST is left out; the values unread: the indices still come."""
    x = RNG.standard_normal((2, 7)).astype(np.float32)
    node = helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=1)
    k = {"k": np.array([3], np.int64)}
    values = run(model([node], {"x": x}, ["values"], 11, k), {"x": x})
    indices = run(model([node], {"x": x}, ["indices"], 11, k), {"x": x})
    want = oracle(x, 1, 3, True)
    assert_same((values["values"], indices["indices"]), want)


def test_a_k_computed_by_another_node_is_refused_naming_it() -> None:
    x = RNG.standard_normal((2, 7)).astype(np.float32)
    nodes = [helper.make_node("Identity", ["k"], ["k2"], name="copy"),
             helper.make_node("TopK", ["x", "k2"], ["values", "indices"], name="top")]
    built = model(nodes, {"x": x, "k": np.array([3], np.int64)}, ["values", "indices"], 11)
    with pytest.raises(UnsupportedModelError, match="TopK node 'top': Input K must be known before the graph runs "
                       r".*got the output of Identity node 'copy'"):
        run(built, {"x": x, "k": np.array([3], np.int64)})


@pytest.mark.parametrize(("k", "attributes", "match"), [
    (8, {"axis": 1}, r"TopK node #0: K must be in \[0, 7\] \(X's size along axis 1\); got 8"),
    (2, {"axis": 2}, r"TopK node #0: axis must be in \[-2, 1\] for X of rank 2; got 2"),
])
def test_refusals(k: int, attributes: dict[str, Any], match: str) -> None:
    x = RNG.standard_normal((2, 7)).astype(np.float32)
    node = helper.make_node("TopK", ["x", "k"], ["values", "indices"], **attributes)
    typed = {"values": (TensorProto.FLOAT, [2, k]), "indices": (TensorProto.INT64, [2, k])}
    built = model([node], {"x": x, "k": np.array([k], np.int64)}, typed, 11)
    with pytest.raises(UnsupportedModelError, match=match):
        run(built, {"x": x, "k": np.array([k], np.int64)})


def test_double_is_refused_by_type() -> None:
    x = RNG.standard_normal((2, 3))
    with pytest.raises(UnsupportedModelError, match="Input X must have one of the types opendml maps"):
        run(_top_k_model(x, 11, 1), {"x": x})


@pytest.mark.parametrize(("producer", "attributes"), [("TopK", {}), ("ReduceSum", {"keepdims": 0})])
def test_an_output_of_a_selection_or_reduction_read_through_other_sizes_runs(
        producer: str, attributes: dict[str, Any]) -> None:
    """TopK's values broadcast by Add, or ReduceSum's kept axis dropped, are read from the producer's own output
    through the reader's view, in a later graph: ONNX's reference's bytes (the math is exact here)."""
    x = RNG.standard_normal((3, 1)).astype(np.float32)
    outputs = ["r", "unused"] if producer == "TopK" else ["r"]
    nodes = [helper.make_node(producer, ["x", "k"], outputs, name="first", **attributes),
             helper.make_node("Add", ["r", "b"], ["y"], name="reader")]
    b = RNG.standard_normal((2, 3, 1) if producer == "TopK" else (3,)).astype(np.float32)
    constant = np.array([1], np.int64)  # TopK's K, ReduceSum's axes
    built = model(nodes, {"x": x, "b": b}, ["y"], 13, {"k": constant})
    got = run(built, {"x": x, "b": b})["y"]
    want = reference(built, {"x": x, "b": b})["y"]
    assert got.shape == want.shape and got.tobytes() == want.tobytes()
    alone = x if producer == "TopK" else x.reshape(3)  # one element a row: the value itself
    assert got.tobytes() == (alone + b).tobytes()
