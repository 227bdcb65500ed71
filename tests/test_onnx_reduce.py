"""ONNX's Reduce operators on REDUCE: every operator at every version, axes as attributes and as inputs,
keepdims, noop_with_empty_axes (which still applies a composite reduction's element function), BOOL
ReduceMax/ReduceMin, exact sums where ONNX's reference rounds as it goes, and the refusals."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

pytest.importorskip("onnx", reason="the ONNX front end needs the onnx extra (pip install 'opendml[onnx]')")

from onnx import TensorProto, helper
from onnx_models import feeds, model, single

from opendml.onnx import UnsupportedModelError, run

RNG = np.random.default_rng(36)


def _float64(op: str, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """The oracle: each function in float64 over exact values (sums as math.fsum's, exact for these sizes), the
    reduced axes kept."""
    v = x.astype(np.float64)
    moved = np.moveaxis(v, axes, tuple(range(-len(axes), 0))).reshape(*[n for k, n in enumerate(x.shape)
                                                                          if k not in axes], -1)
    rows = moved.reshape(-1, moved.shape[-1])

    def each(row: np.ndarray) -> float:
        total = math.fsum(row)
        return {"ReduceSum": total, "ReduceMean": total / row.size, "ReduceMax": row.max(), "ReduceMin": row.min(),
                "ReduceProd": math.prod(row.tolist()), "ReduceL1": math.fsum(np.abs(row)),
                "ReduceL2": math.sqrt(math.fsum(row * row)), "ReduceLogSum": math.log(total),
                "ReduceLogSumExp": math.log(math.fsum(np.exp(row))), "ReduceSumSquare": math.fsum(row * row)}[op]

    out = np.array([each(row) for row in rows]).reshape([1 if k in axes else n for k, n in enumerate(x.shape)])
    return out


OPERATORS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
             "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"]
AXES_INPUT = {"ReduceSum": 13}  # the others' axes are an input from version 18


def _node(op: str, opset: int, x: np.ndarray, axes: list[int] | None, output: Any = None, **attributes: Any) -> Any:
    if axes is not None and opset >= AXES_INPUT.get(op, 18):
        return single(op, opset, {"x": x, "axes": np.array(axes, np.int64)}, constants={"axes"}, output=output,
                      **attributes)
    return single(op, opset, {"x": x}, output=output, **({"axes": axes} if axes is not None else {}), **attributes)


@pytest.mark.parametrize("op", OPERATORS)
@pytest.mark.parametrize(("opset", "axes", "keepdims"), [(11, [1], 1), (13, [-1, 0], 0), (18, None, 1),
                                                         (18, [2, 0], 1)])
def test_each_reduce_operator_gives_the_exact_function_rounded_once(op: str, opset: int, axes: list[int] | None,
                                                                    keepdims: int) -> None:
    x = RNG.uniform(0.25, 2.0, (3, 4, 5)).astype(np.float32)
    got = run(_node(op, opset, x, axes, keepdims=keepdims), {"x": x})["y"]
    reduced = tuple(sorted(a % 3 for a in axes)) if axes else (0, 1, 2)
    want = _float64(op, x, reduced)
    if not keepdims:
        want = want.reshape([n for k, n in enumerate(want.shape) if k not in reduced])
    assert got.dtype == np.float32 and got.shape == want.shape
    if op in ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceSumSquare"):
        np.testing.assert_array_equal(got, want.astype(np.float32))  # exact, rounded once
    else:
        np.testing.assert_allclose(got, want.astype(np.float32), rtol=2 ** -22)


def test_reduce_sum_is_exact_where_rounding_as_one_goes_loses_everything() -> None:
    x = np.array([[1e30, 1.0, -1e30], [3.0, 2.0 ** -30, -3.0]], np.float32)
    got = run(single("ReduceSum", 13, {"x": x}), {"x": x})["y"]
    want = [float(sum(Fraction(float(v)) for v in row)) for row in x]  # the exact sums: 1 and 2^-30
    assert got.reshape(-1).tolist() == [np.float32(w) for w in [sum(want)]]
    by_row = run(_node("ReduceSum", 13, x, [1]), {"x": x})["y"]
    assert by_row.reshape(-1).tolist() == want


@pytest.mark.parametrize(("op", "function"), [
    ("ReduceSum", lambda v: v), ("ReduceMax", lambda v: v), ("ReduceSumSquare", lambda v: v * v),
    ("ReduceL1", np.abs), ("ReduceL2", np.abs), ("ReduceLogSum", np.log), ("ReduceMean", lambda v: v)])
@pytest.mark.parametrize("shape", [(2, 3), (2, 1, 3)])
def test_noop_with_empty_axes_applies_each_element_function(op: str, function: Any, shape: tuple[int, ...]) -> None:
    # ONNX: the reduction over no axis is the identity, but a composite reduction still applies its element
    # function (ReduceLogSum then gives the log of each element).
    x = RNG.uniform(0.5, 3.0, shape).astype(np.float32) * np.where(RNG.random(shape) < 0.5, -1, 1).astype(np.float32)
    if op == "ReduceLogSum":
        x = np.abs(x)
    got = run(_node(op, 18, x, None, noop_with_empty_axes=1), {"x": x})["y"]
    assert got.shape == x.shape
    np.testing.assert_array_equal(got, function(x.astype(np.float64)).astype(np.float32))


def test_empty_axes_without_noop_reduce_every_axis() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = run(_node("ReduceSum", 13, x, [], noop_with_empty_axes=0), {"x": x})["y"]
    assert got.shape == (1, 1) and got.item() == 15.0


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
def test_bool_max_and_min_are_any_and_all(op: str) -> None:
    x = np.array([[True, False, False], [True, True, True], [False, False, False]])
    got = run(_node(op, 20, x, [1], keepdims=0), {"x": x})["y"]
    assert got.dtype == np.bool_
    assert got.tolist() == ([True, True, False] if op == "ReduceMax" else [False, True, False])


@pytest.mark.parametrize(("x", "want"), [
    (np.array([[-5, 7, 2**31 - 1]], np.int32), [2**31 - 1]),
    (np.array([[200, 3, 255]], np.uint8), [255])])
def test_integer_max_over_type_limits(x: np.ndarray, want: list[int]) -> None:
    got = run(_node("ReduceMax", 18, x, [1], keepdims=0), {"x": x})["y"]
    assert got.dtype == x.dtype and got.tolist() == want


def _refusal(proto: Any, arrays: dict[str, np.ndarray]) -> str:
    with pytest.raises(UnsupportedModelError) as caught:
        run(proto, feeds(proto, arrays))
    return str(caught.value)


def test_computed_axes_are_refused_by_name() -> None:
    x = np.ones((2, 3), np.float32)
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("ReduceSum", ["x", "s"], ["y"])]
    message = _refusal(model(nodes, {"x": x}, {"y": (TensorProto.FLOAT, [1, 1])}, 13), {"x": x})
    assert "ReduceSum node #1: Input axes must be known before the graph runs" in message


def test_an_empty_reduced_axis_and_an_unsupported_type_are_refused() -> None:
    x = np.ones((2, 0, 3), np.float32)
    assert "must not be empty along reduced axis 1" in _refusal(_node("ReduceSum", 13, x, [1]), {"x": x})
    mean = np.ones((2, 3), np.int32)
    message = _refusal(_node("ReduceMean", 18, mean, [1]), {"x": mean})
    assert "ReduceMean node #0: Input data must have one of the types opendml maps (FLOAT, FLOAT16); got INT32" in message


def test_out_of_range_and_repeated_axes_are_refused() -> None:
    x = np.ones((2, 3), np.float32)
    typed = (TensorProto.FLOAT, [2, 1])
    message = _refusal(_node("ReduceMax", 18, x, [2], typed), {"x": x})
    assert "axes[0] must be in [-2, 1] for data of rank 2; got 2" in message
    assert "axes must not repeat an axis; got [1, -1]" in _refusal(_node("ReduceMax", 18, x, [1, -1], typed), {"x": x})
