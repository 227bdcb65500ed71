"""ACTIVATION_PARAMETERIZED_RELU, ACTIVATION_RELU_GRAD, ELEMENT_WISE_CLIP_GRAD and CLIP_GRAD1 against the
independent oracle (written from their pages): edge values of every type their pages list, the boundary rules
(the gradient stopped at x == Min and x == Max, passed at a NaN input; RELU_GRAD's -0.0 and NaN), broadcast
slopes and gradients, ``out=`` and in place, and PARAMETERIZED_RELU fused in an element-wise chain bit-identical
to its nodes run one by one."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendml as dml
from opendml import graph as g
from opendml.ops import BY_NAME
from tests import elementwise_oracle as oracle
from tests.graph_helpers import run_graph, run_node_by_node
from tests.helpers import edge_values


def _types(name: str, field: str = "InputTensor") -> list[str]:
    """The types the operator takes at the newest level (its page's top row)."""
    row = BY_NAME[name].schema.row_at(dml.Device("cpu").feature_level)
    assert row is not None
    return sorted(t.name for t in row.types[field])


def _same(got: object, expected: np.ndarray) -> None:
    got = np.asarray(got)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert all(oracle.same_value(x.item(), y.item()) for x, y in zip(got.reshape(-1), expected.reshape(-1)))


def _expected(element: object, a: np.ndarray, b: np.ndarray, *rest: object) -> np.ndarray:
    """The oracle at each element of NumPy's broadcast of ``a`` and ``b``."""
    a2, b2 = np.broadcast_arrays(a, b)
    values = [element(x.item(), y.item(), *rest) for x, y in zip(a2.reshape(-1), b2.reshape(-1))]  # type: ignore
    return np.array(values, dtype=a.dtype).reshape(a2.shape)


@pytest.mark.parametrize("type_name", _types("ACTIVATION_PARAMETERIZED_RELU"))
def test_parameterized_relu_edge_values_match_the_oracle(type_name: str) -> None:
    """Every type of the 5_1 row: -0.0 kept, NaN stays NaN, integer products wrapping (INT8's -128 * -1)."""
    t = dml.DataType[type_name]
    x = edge_values(t, 96, np.random.default_rng(1)).reshape(8, 12)
    slope = edge_values(t, 96, np.random.default_rng(2)).reshape(8, 12)
    _same(dml.parameterized_relu(x, slope), _expected(oracle.parameterized_relu_element, x, slope, type_name))
    row = slope[0]  # one slope a channel, broadcast along the rows (zero strides)
    _same(dml.parameterized_relu(x, row), _expected(oracle.parameterized_relu_element, x, row, type_name))


def test_parameterized_relu_decisions() -> None:
    x = np.array([-0.0, 0.0, np.nan, -np.inf, -2.0, 3.0], np.float32)
    got = np.asarray(dml.parameterized_relu(x, np.float32(0.5)))
    assert np.signbit(got[0]) and not np.signbit(got[1])  # -0.0 >= 0: kept as it is
    assert np.isnan(got[2]) and got[3] == -np.inf and got[4] == -1.0 and got[5] == 3.0
    wrapped = dml.parameterized_relu(np.array([-128, -3], np.int8), np.array([-1, 50], np.int8))
    assert np.asarray(wrapped).tolist() == [-128, 106]  # -128 * -1 and -3 * 50 wrap modulo 2**8


@pytest.mark.parametrize("type_name", _types("ACTIVATION_RELU_GRAD"))
def test_relu_grad_edge_values_match_the_oracle(type_name: str) -> None:
    t = dml.DataType[type_name]
    x = edge_values(t, 96, np.random.default_rng(3)).reshape(8, 12)
    dy = edge_values(t, 96, np.random.default_rng(4)).reshape(8, 12)
    _same(dml.relu_grad(x, dy), _expected(oracle.relu_grad_element, x, dy, type_name))


def test_relu_grad_passes_only_above_zero() -> None:
    """``X > 0 ? dY : 0``: -0.0, +0.0 and NaN inputs give +0.0; the gradient's own bits pass (a NaN too)."""
    x = np.array([-0.0, 0.0, np.nan, 1e-45, -1.0, np.inf], np.float32)
    dy = np.array([5.0, 5.0, 5.0, -0.0, 5.0, np.nan], np.float32)
    got = np.asarray(dml.relu_grad(x, dy))
    assert got[:3].tolist() == [0.0, 0.0, 0.0] and not np.signbit(got[:3]).any()
    assert np.signbit(got[3]) and got[4] == 0.0 and np.isnan(got[5])


@pytest.mark.parametrize("type_name", _types("ELEMENT_WISE_CLIP_GRAD"))
def test_clip_grad_edge_values_match_the_oracle(type_name: str) -> None:
    """Every type of the 5_0 row; integers run CLIP_GRAD1 (exact bounds), floats CLIP_GRAD (FLOAT bounds typed
    as CLIP's)."""
    t = dml.DataType[type_name]
    x = edge_values(t, 96, np.random.default_rng(5)).reshape(8, 12)
    grad = edge_values(t, 96, np.random.default_rng(6)).reshape(8, 12)
    low, high = (-1.5, 2.5) if t.is_float else (0, 2)
    bounds = (oracle.float_field_bound(low, type_name), oracle.float_field_bound(high, type_name))
    _same(dml.clip_grad(x, grad, low, high), _expected(oracle.clip_grad_element, x, grad, type_name, *bounds))


@pytest.mark.parametrize("type_name", ["FLOAT32", "FLOAT16", "INT32", "UINT8"])
def test_clip_grad_stops_at_the_bounds_themselves(type_name: str) -> None:
    """The page: "If x is at or below this value [Min], then the gradient result is 0", and at or above Max."""
    t = dml.DataType[type_name]
    x = np.array([1, 2, 3, 4, 5], t.numpy)
    got = np.asarray(dml.clip_grad(x, np.full(5, 7, t.numpy), 2, 4))
    assert got.tolist() == [0, 0, 7, 0, 0]


def test_clip_grad_at_nan_and_signed_zeros() -> None:
    """A NaN input compares false with both bounds: its gradient is passed. -0.0 <= 0 stops it; a NaN bound
    stops nothing on its side; the typed bound (FLOAT16: Min rounded to the tensor's type) is what x meets."""
    x = np.array([np.nan, -0.0, 0.0, 0.5, np.inf, -np.inf], np.float32)
    grad = np.arange(1, 7, dtype=np.float32)
    assert np.asarray(dml.clip_grad(x, grad, 0.0, 1.0)).tolist() == [1.0, 0.0, 0.0, 4.0, 0.0, 0.0]
    assert np.asarray(dml.clip_grad(x, grad, np.nan, 1.0)).tolist() == [1.0, 2.0, 3.0, 4.0, 0.0, 6.0]
    h = np.array([0.1], np.float16)  # 0.1 in FLOAT16 is the bound 0.1 rounds to: x == Min
    assert np.asarray(dml.clip_grad(h, np.ones(1, np.float16), 0.1, 1.0)).tolist() == [0.0]


def test_clip_grad1_takes_exact_bounds_and_its_type() -> None:
    big = 2**62 + 1  # no float32: CLIP_GRAD would round it, CLIP_GRAD1 keeps it
    x = np.array([big - 1, big, big + 1, -5], np.int64)
    assert np.asarray(dml.clip_grad(x, np.ones(4, np.int64), -5, big)).tolist() == [1, 0, 0, 0]  # 2**62 < Max
    device = dml.Device("cpu")
    t = dml.TensorDesc("INT32", [4])
    with pytest.raises(dml.InvalidArgumentError, match=r"ELEMENT_WISE_CLIP_GRAD1: MinMaxDataType must equal "
                                                      r"OutputGradientTensor\.DataType \(INT32\); got INT16"):
        device.create_operator(dml.ElementWiseClipGrad1Desc(t, t, t, "INT16", 0, 1))
    with pytest.raises(dml.InvalidArgumentError, match="ELEMENT_WISE_CLIP_GRAD: Min must not be NaN"):
        device.create_operator(dml.ElementWiseClipGradDesc(t, t, t, float("nan"), 1.0))


def test_the_gradient_operators_refuse_tensors_of_two_types() -> None:
    with pytest.raises(dml.InvalidArgumentError, match=r"ACTIVATION_RELU_GRAD: InputGradientTensor\.DataType "
                                                      r"must equal InputTensor\.DataType \(FLOAT32\); got FLOAT16"):
        dml.relu_grad(np.ones(3, np.float32), np.ones(3, np.float16))
    with pytest.raises(dml.InvalidArgumentError, match=r"ACTIVATION_RELU_GRAD: InputTensor\.DataType must be one of"):
        dml.relu_grad(np.ones(3, np.int32), np.ones(3, np.int32))


def test_broadcast_gradient_out_and_in_place() -> None:
    x = np.array([[-2.0, 0.5, 3.0], [0.25, -1.0, 9.0]], np.float32)
    grad = np.array([10.0, 20.0, 30.0], np.float32)  # a row, broadcast along x's rows
    expected = _expected(oracle.clip_grad_element, x, grad, "FLOAT32", -1.0, 3.0)
    out = np.empty_like(x)
    assert dml.clip_grad(x, grad, -1.0, 3.0, out=out) is out
    _same(out, expected)
    dml.clip_grad(x, grad, -1.0, 3.0, out=x)  # in place over InputTensor, as the page allows
    _same(x, expected)


def test_dequantize_parameterized_relu_relu_grad_quantize_fuses_bit_for_bit() -> None:
    """DEQUANTIZE -> PARAMETERIZED_RELU (a slope a column) -> RELU_GRAD -> QUANTIZE: one kernel, the bits of its
    nodes run one by one, and the oracle's."""
    shape = (4, 5)
    device = dml.Device("cpu")
    graph = dml.Graph(device)
    q = edge_values(dml.DataType.INT8, 20, np.random.default_rng(8)).reshape(shape)
    slope = np.array([0.5, -1.0, 2.0, 0.0, 0.25], np.float32)
    x = graph.input(0, dml.TensorDesc("INT8", list(shape)))
    s = g.reinterpret(graph.input(1, dml.TensorDesc("FLOAT32", [1])), sizes=list(shape), strides=[0, 0])
    k = g.reinterpret(graph.input(2, dml.TensorDesc("FLOAT32", [shape[1]])), sizes=list(shape), strides=[0, 1])
    value = g.dequantize_linear(x, s)
    result = g.quantize_linear(g.relu_grad(value, g.parameterized_relu(value, k)), s, output_type="INT8")
    desc = graph.graph_desc([result])
    compiled = device.compile_graph(desc)
    assert len(compiled.plan.groups) == 1, compiled.plan
    raw = [np.ascontiguousarray(a).reshape(-1).view(np.uint8) for a in (q, np.array([0.125], np.float32), slope)]
    empty = [np.zeros(20, np.uint8)]
    fused = run_graph(device, desc, raw, empty)
    assert all((f == a).all() for f, a in zip(fused, run_node_by_node(device, desc, raw, empty)))
    expected = []
    for i, v in enumerate(q.reshape(-1)):
        d = oracle.dequantize_element(int(v), 0.125, None, "FLOAT32")
        p = oracle.parameterized_relu_element(d, float(slope[i % shape[1]]), "FLOAT32")
        expected.append(oracle.quantize_element(oracle.relu_grad_element(d, p, "FLOAT32"), 0.125, None, "INT8"))
    assert fused[0].view(np.int8).tolist() == expected


_FLOATS = st.sampled_from(["FLOAT32", "FLOAT16"])


@settings(max_examples=10, deadline=None)
@given(_FLOATS, st.integers(0, 2**32 - 1), st.floats(-4, 4, width=32), st.floats(-4, 4, width=32))
def test_clip_grad_property(type_name: str, seed: int, low: float, high: float) -> None:
    """Random bounds (Min above Max too: every gradient stopped) over edge values: the oracle's answer."""
    t = dml.DataType[type_name]
    rng = np.random.default_rng(seed)
    x, grad = edge_values(t, 40, rng), edge_values(t, 40, rng)
    bounds = (oracle.float_field_bound(low, type_name), oracle.float_field_bound(high, type_name))
    _same(dml.clip_grad(x, grad, low, high), _expected(oracle.clip_grad_element, x, grad, type_name, *bounds))
