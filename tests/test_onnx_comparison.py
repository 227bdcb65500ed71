"""ONNX's Equal, Greater, GreaterOrEqual, Less, LessOrEqual, And, Or, Xor and Where, each onto its one DirectML
operator, against ONNX's reference evaluator: NaN, infinities and signed zeros, NumPy broadcasting described by zero
strides, BOOL tensors held as UINT8, and a Less -> Where chain."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx", reason="the ONNX front end needs the onnx extra (pip install 'opendml[onnx]')")

from onnx import TensorProto, helper
from onnx_models import model, single
from test_onnx_ops import check_against_reference, first_step, unsupported

X = np.array([-np.inf, -3.5, -1.0, -0.0, 0.0, 0.75, 2.5, np.inf, np.nan], np.float32)
COMPARISONS = {"Equal": "ELEMENT_WISE_LOGICAL_EQUALS", "Greater": "ELEMENT_WISE_LOGICAL_GREATER_THAN",
               "GreaterOrEqual": "ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL",
               "Less": "ELEMENT_WISE_LOGICAL_LESS_THAN", "LessOrEqual": "ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL"}
LOGICAL = {"And": "ELEMENT_WISE_LOGICAL_AND", "Or": "ELEMENT_WISE_LOGICAL_OR", "Xor": "ELEMENT_WISE_LOGICAL_XOR"}


@pytest.mark.parametrize("op", COMPARISONS)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_comparisons_of_every_pair_of_edge_values(op: str, dtype: type) -> None:
    """X against every element of X (a column against a row: both broadcast, zero strides), into BOOL."""
    a, b = X.astype(dtype)[:, None], X.astype(dtype)[None, :]
    onnx_model = single(op, 16, {"a": a, "b": b})
    check_against_reference(onnx_model, {"a": a, "b": b})
    operator = first_step(onnx_model, {"a": a, "b": b}).operator.operator
    assert operator.definition.schema.name == COMPARISONS[op]
    assert operator.tensors["OutputTensor"].data_type.name == "UINT8"  # ONNX's BOOL, held as UINT8
    assert 0 in operator.tensors["ATensor"].effective_strides and 0 in operator.tensors["BTensor"].effective_strides


@pytest.mark.parametrize("op", COMPARISONS)
@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int64, np.uint64])
def test_comparisons_of_integers(op: str, dtype: type) -> None:
    info = np.iinfo(dtype)
    a = np.array([info.min, info.max, 0, 1, info.max - 1], dtype)
    b = np.array([info.min + 1, info.max, 0, 0, info.max], dtype)
    check_against_reference(single(op, 16, {"a": a, "b": b}), {"a": a, "b": b})


def test_equal_of_bools() -> None:
    a, b = np.array([[True], [False]]), np.array([True, False, True])
    check_against_reference(single("Equal", 19, {"a": a, "b": b}), {"a": a, "b": b})


@pytest.mark.parametrize("op", LOGICAL)
def test_and_or_xor_of_bools_broadcast(op: str) -> None:
    a = np.array([[True, False, True], [False, False, True]])
    b = np.array([True, False, False])
    onnx_model = single(op, 7, {"a": a, "b": b})
    check_against_reference(onnx_model, {"a": a, "b": b})
    assert first_step(onnx_model, {"a": a, "b": b}).operator.operator.definition.schema.name == LOGICAL[op]


def test_and_of_numbers_is_refused_naming_the_type() -> None:
    """An And node over FLOAT inputs (ONNX allows BOOL only): refused before anything runs, naming BOOL."""
    a = np.ones(3, np.float32)
    node = helper.make_node("And", ["a", "b"], ["y"])
    message = unsupported(model([node], {"a": a, "b": a}, {"y": (TensorProto.BOOL, [3])}, 7), {"a": a, "b": a})
    assert "And" in message and "BOOL" in message


@pytest.mark.parametrize(("x_dtype", "shapes"), [(np.float32, ((2, 1), (2, 3), (3,))), (np.float16, ((3,), (), (2, 3))),
                                                  (np.int64, ((2, 3), (2, 3), (1,))), (np.bool_, ((2, 1), (3,), (2, 3)))])
def test_where_broadcasts_its_three_inputs(x_dtype: type, shapes: tuple[tuple[int, ...], ...]) -> None:
    rng = np.random.default_rng(4)
    condition = rng.integers(0, 2, shapes[0]).astype(bool)
    x = (rng.standard_normal(shapes[1]) * 4).astype(x_dtype)
    count = int(np.prod(shapes[2]))
    if x_dtype is np.bool_:
        y = rng.integers(0, 2, shapes[2]).astype(bool)
    elif x_dtype is np.int64:  # the type's limits
        y = np.resize(np.array([-(2**63), 2**63 - 1, 0], np.int64), count).reshape(shapes[2])
    else:  # NaN, infinities and signed zeros
        y = X[:count].reshape(shapes[2]).astype(x_dtype)
    onnx_model = single("Where", 16, {"cond": condition, "a": x, "b": y})
    check_against_reference(onnx_model, {"cond": condition, "a": x, "b": y})
    assert first_step(onnx_model, {"cond": condition, "a": x, "b": y}).operator.operator.definition.schema.name == \
        "ELEMENT_WISE_IF"


def test_less_then_where_is_a_leaky_relu() -> None:
    """LeakyRelu(x) = Where(Less(x, 0), Mul(x, alpha), x): DirectML's IF page's own example, as a graph."""
    nodes = [helper.make_node("Less", ["x", "zero"], ["negative"]),
             helper.make_node("Mul", ["x", "alpha"], ["scaled"]),
             helper.make_node("Where", ["negative", "scaled", "x"], ["y"])]
    x = X.reshape(3, 3)
    onnx_model = model(nodes, {"x": x}, ["y"], 16, {"zero": np.float32(0), "alpha": np.float32(0.1)})
    check_against_reference(onnx_model, {"x": x})
