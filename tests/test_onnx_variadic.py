"""ONNX's variadic Min, Max, Sum and Mean, and PRelu: chained binary operators left to right (one input: its
value), Mean as chained ADD and one DIVIDE by the count, bit for bit ONNX's reference evaluator for 1 to 4
inputs; PRelu's slope broadcast unidirectionally to X."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx", reason="the ONNX front end needs the onnx extra (pip install 'opendml[onnx]')")

from onnx import helper
from onnx_models import model, reference

import opendml as dml
from opendml.onnx import Session, UnsupportedModelError, run
from tests import elementwise_oracle as oracle
from tests.helpers import edge_values, same_values

SHAPES = [(3, 4), (4,), (1, 4), (3, 1)]


def _model(op_type: str, arrays: dict[str, np.ndarray]) -> object:
    node = helper.make_node(op_type, list(arrays), ["y"])
    return model([node], arrays, ["y"], 13)


@pytest.mark.parametrize("count", [1, 2, 3, 4])
@pytest.mark.parametrize("op_type", ["Sum", "Min", "Max", "Mean"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_variadic_operators_equal_onnx_s_reference(op_type: str, count: int, dtype: type) -> None:
    """Mixed shapes broadcast together; Mean of 3 divides once by 3 (a product by 1/3 would differ), of 2 and 4
    halves and quarters exactly."""
    rng = np.random.default_rng(count)
    arrays = {f"x{k}": (rng.standard_normal(SHAPES[k]) * 3).astype(dtype) for k in range(count)}
    built = _model(op_type, arrays)
    got = run(built, arrays)["y"]
    expected = reference(built, arrays)["y"]
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert same_values(got, expected), (got, expected)


def test_mean_of_three_is_the_sum_divided_once() -> None:
    """The oracle's float32 sum, left to right, then one division by 3, rounded once."""
    xs = [edge_values(dml.DataType.FLOAT32, 12, np.random.default_rng(k)) for k in range(3)]
    arrays = {f"x{k}": x for k, x in enumerate(xs)}
    got = run(_model("Mean", arrays), arrays)["y"]
    for i, value in enumerate(got):
        total = oracle.add_element(oracle.add_element(float(xs[0][i]), float(xs[1][i]), "FLOAT32"),
                                   float(xs[2][i]), "FLOAT32")
        assert oracle.same_value(float(value), oracle.divide_element(total, 3.0, "FLOAT32"))


def test_a_chain_is_one_step_a_link_and_one_compiled_graph() -> None:
    arrays = {f"x{k}": np.full((2, 3), k, np.float32) for k in range(4)}
    built = _model("Sum", arrays)
    plan = Session(built).plan(arrays)
    assert [s.operator.operator.definition.schema.name for s in plan.steps] == ["ELEMENT_WISE_ADD"] * 3
    assert run(built, arrays)["y"].tolist() == [[6.0] * 3] * 2


def test_mean_refuses_integers_and_prelu_a_slope_that_widens_x() -> None:
    ints = {"x0": np.ones(3, np.int32), "x1": np.ones(3, np.int32)}
    with pytest.raises(UnsupportedModelError, match=r"Mean node #0: Input data_0 must have one of the types opendml maps \(FLOAT, FLOAT16\); got INT32"):
        run(_model("Mean", ints), ints)
    arrays = {"x": np.ones((1, 3), np.float32), "slope": np.ones((2, 3), np.float32)}
    node = helper.make_node("PRelu", ["x", "slope"], ["y"])
    with pytest.raises(UnsupportedModelError, match="slope shape must broadcast to X's shape"):
        run(model([node], arrays, {"y": (1, (2, 3))}, 16), arrays)


@pytest.mark.parametrize("slope_shape", [(), (1,), (5,), (4, 1), (3, 4, 5)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_prelu_equals_onnx_s_reference(slope_shape: tuple[int, ...], dtype: type) -> None:
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((3, 4, 5)) * 4).astype(dtype)
    slope = (rng.standard_normal(slope_shape) * 2).astype(dtype)
    arrays = {"x": x, "slope": slope}
    built = model([helper.make_node("PRelu", ["x", "slope"], ["y"])], arrays, ["y"], 16)
    got = run(built, arrays)["y"]
    expected = reference(built, arrays)["y"]
    assert got.dtype == expected.dtype and same_values(got, expected)
