"""The binary family (ELEMENT_WISE_ADD, SUBTRACT, MULTIPLY, DIVIDE on every type the pages list): NumPy broadcasting described with zero
strides (scalar, row, column, both operands), numbers typed by the other operand, ``out=`` and in place, edge
values and wrapping integers against the independent oracle, and ADD fused in an element-wise chain
(DEQUANTIZE -> ADD bias -> RELU -> QUANTIZE) bit-identical to its nodes run one by one."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import opendml as dml
from opendml import graph as g
from opendml.ops import DECLARED
from tests import elementwise_oracle as oracle
from tests.conftest import CUDA_MISSING
from tests.expr_strategies import integer_edges
from tests.graph_helpers import run_graph, run_node_by_node
from tests.helpers import edge_values

ORACLE: dict[str, Callable[..., int | float]] = {
    "add": oracle.add_element, "subtract": oracle.subtract_element, "multiply": oracle.multiply_element,
    "divide": oracle.divide_element, "minimum": oracle.min_element, "maximum": oracle.max_element,
    "mean": oracle.mean_element, "difference_square": oracle.difference_square_element,
    "modulus_floor": oracle.modulus_floor_element, "modulus_truncate": oracle.modulus_truncate_element}
BACKENDS = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(CUDA_MISSING is not None,
                                                                 reason=f"no usable CUDA GPU: {CUDA_MISSING}"))]


def _expected(name: str, a: np.ndarray, b: np.ndarray, type_name: str) -> np.ndarray:
    """The oracle at each element of NumPy's broadcast of ``a`` and ``b`` (the broadcast made here, by NumPy)."""
    a2, b2 = np.broadcast_arrays(a, b)
    values = [ORACLE[name](x.item(), y.item(), type_name) for x, y in zip(a2.reshape(-1), b2.reshape(-1))]
    return np.array(values, dtype=a.dtype).reshape(a2.shape)


def _same(got: np.ndarray, expected: np.ndarray) -> None:
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert all(oracle.same_value(x.item(), y.item()) for x, y in zip(got.reshape(-1), expected.reshape(-1)))


@pytest.mark.parametrize("name", ORACLE)
@pytest.mark.parametrize("type_name", ["FLOAT32", "FLOAT16"])
def test_float_edge_values_match_the_oracle(name: str, type_name: str) -> None:
    t = dml.DataType[type_name]
    a = edge_values(t, 96, np.random.default_rng(1)).reshape(8, 12)
    b = edge_values(t, 96, np.random.default_rng(2)).reshape(8, 12)
    _same(np.asarray(getattr(dml, name)(a, b)), _expected(name, a, b, type_name))


@pytest.mark.parametrize("name", ["add", "subtract", "multiply"])
@pytest.mark.parametrize("type_name", ["INT8", "UINT8", "INT16", "UINT16", "INT32", "UINT32", "INT64", "UINT64"])
def test_integer_sums_wrap_as_twos_complement(name: str, type_name: str) -> None:
    t = dml.DataType[type_name]
    low, high = t.integer_range
    a = np.array([low, low, high, high, 0, 1, -1 if low < 0 else 2, low + 1], t.numpy)
    b = np.array([low, high, 1, high, low, high, low, -1 if low < 0 else high], t.numpy)
    _same(np.asarray(getattr(dml, name)(a, b)), _expected(name, a, b, type_name))


BROADCASTS = {
    "scalar": ((3, 5), ()),
    "row": ((3, 5), (5,)),
    "column": ((3, 5), (3, 1)),
    "both": ((3, 1), (1, 5)),
    "leading": ((2, 3, 5), (3, 5)),
}


@pytest.mark.parametrize("name", ORACLE)
@pytest.mark.parametrize("pattern", BROADCASTS)
def test_numpy_broadcasting_either_way(name: str, pattern: str) -> None:
    a_shape, b_shape = BROADCASTS[pattern]
    rng = np.random.default_rng(5)
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    f = getattr(dml, name)
    _same(np.asarray(f(a, b)), _expected(name, a, b, "FLOAT32"))
    _same(np.asarray(f(b, a)), _expected(name, b, a, "FLOAT32"))


def test_a_broadcast_operand_is_described_with_zero_strides_never_copied(monkeypatch: pytest.MonkeyPatch) -> None:
    from opendml.functional import declared

    seen: list[tuple[int, ...]] = []
    run = declared._run

    def spy(device: dml.Device, schema: object, make: object, inputs: list[np.ndarray], out: np.ndarray) -> object:
        seen.extend(tuple(a.strides) for a in inputs)
        assert all(np.shares_memory(a, b) for a, b in zip(inputs, (x, bias)))  # the callers' own memory
        return run(device, schema, make, inputs, out)  # type: ignore[arg-type]

    monkeypatch.setattr(declared, "_run", spy)
    x, bias = np.ones((4, 6), np.float32), np.arange(6, dtype=np.float32)
    dml.add(x, bias)
    assert seen == [(24, 4), (0, 4)]


def test_a_number_takes_the_other_operands_type() -> None:
    x = np.array([1, 2, 250], np.uint8)
    assert np.asarray(dml.add(x, 10)).tolist() == [11, 12, 4]  # wrapped in UINT8
    assert np.asarray(dml.subtract(10, x)).tolist() == [9, 8, 16]
    h = np.array([1.0, 2.0], np.float16)
    result = np.asarray(dml.multiply(h, 0.1))
    assert result.dtype == np.float16  # 0.1 in float16, the product in float32 rounded to FLOAT16 once
    assert result.tolist() == [oracle.multiply_element(1.0, float(np.float16(0.1)), "FLOAT16"),
                               oracle.multiply_element(2.0, float(np.float16(0.1)), "FLOAT16")]
    with pytest.raises(dml.InvalidArgumentError, match=r"ELEMENT_WISE_ADD: BTensor must be in \[0, 255\]"):
        dml.add(x, 256)
    with pytest.raises(dml.InvalidArgumentError, match="ELEMENT_WISE_ADD: BTensor must be an integer"):
        dml.add(x, 1.5)
    with pytest.raises(dml.InvalidArgumentError, match=r"ELEMENT_WISE_ADD: ATensor\.DataType"):
        dml.add(1.0, 2.0)  # two numbers: a Python float is FLOAT64, which no operator takes


def test_operands_of_two_types_or_unbroadcastable_shapes_are_refused() -> None:
    with pytest.raises(dml.InvalidArgumentError, match=r"ELEMENT_WISE_SUBTRACT: BTensor\.DataType must equal ATensor"):
        dml.subtract(np.ones(3, np.float32), np.ones(3, np.float16))
    with pytest.raises(dml.InvalidArgumentError, match="ELEMENT_WISE_ADD: BTensor shape must broadcast"):
        dml.add(np.ones((2, 3), np.float32), np.ones(4, np.float32))


def test_out_and_in_place() -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([10.0, 20.0, 30.0], np.float32)
    expected = a + b
    out = np.empty_like(a)
    assert dml.add(a, b, out=out) is out and (out == expected).all()
    dml.add(a, b, out=a)  # in place over ATensor, as DirectML's page allows
    assert (a == expected).all()


def _admitted(name: str) -> list[str]:
    """The integer types ``opendml.<name>``'s operator takes at the newest level (its page's top row)."""
    op = next(op for op in DECLARED if op.api is not None and op.api.python == name)
    row = op.schema.row_at(dml.Device("cpu").feature_level)
    assert row is not None
    return sorted(t.name for t in row.types["ATensor"] if t.is_integer)


@pytest.mark.parametrize(("name", "type_name"), [(n, t) for n in ORACLE for t in _admitted(n)])
def test_integer_edge_values_match_the_oracle(name: str, type_name: str) -> None:
    """Every pair of the type's edge values (its limits, 0, +-1, +-2, half-limits, 64-bit values a double
    rounds): wrapping sums, differences and products, truncated quotients, x / 0 and INT_MIN / -1, means without
    overflow, remainders by 0 and -1."""
    t = dml.DataType[type_name]
    edges = np.array(integer_edges(t), t.numpy)
    a, b = np.repeat(edges, edges.size), np.tile(edges, edges.size)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NumPy's integer division by zero or overflow never shows
        got = np.asarray(getattr(dml, name)(a, b))
    _same(got, _expected(name, a, b, type_name))


def test_integer_division_decisions() -> None:
    """docs/semantics.md 9b: truncated toward zero, x / 0 is 0, INT_MIN / -1 is INT_MIN."""
    a = np.array([7, -7, 7, -7, 5, -128, -128, 0], np.int8)
    b = np.array([2, 2, -2, -2, 0, -1, 1, 0], np.int8)
    assert np.asarray(dml.divide(a, b)).tolist() == [3, -3, -3, 3, 0, -128, -128, 0]
    big = np.iinfo(np.int64).min
    assert np.asarray(dml.divide(np.array([big, big], np.int64), np.array([-1, 0], np.int64))).tolist() == [big, 0]
    u = np.array([2**64 - 1, 2**64 - 1, 5], np.uint64)
    assert np.asarray(dml.divide(u, np.array([2, 0, 7], np.uint64))).tolist() == [2**63 - 1, 0, 0]
    assert np.asarray(dml.multiply(np.array([2**63], np.uint64), np.array([2], np.uint64))).tolist() == [0]


def test_compile_and_dask_give_the_functional_bits() -> None:
    import dask.array as da

    rng = np.random.default_rng(9)
    x = rng.standard_normal((6, 8)).astype(np.float32)
    bias = rng.standard_normal(8).astype(np.float32)
    eager = np.asarray(dml.relu(dml.add(dml.multiply(x, 0.5), bias)))
    traced = dml.compile(lambda v, w: dml.relu(dml.add(dml.multiply(v, 0.5), w)))(x, bias)
    lazy = dml.relu(dml.add(dml.multiply(da.from_array(x, chunks=(2, 3)), 0.5), bias)).compute(scheduler="sync")
    _same(np.asarray(traced), eager)
    _same(np.asarray(lazy), eager)
    _same(eager, np.maximum(((x * np.float32(0.5)) + bias), np.float32(0)))


SHAPE = (4, 32)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dequantize_add_bias_relu_quantize_fuses_bit_for_bit(backend: str) -> None:
    device = dml.Device(backend)
    graph = dml.Graph(device)
    x = edge_values(dml.DataType.INT8, int(np.prod(SHAPE)), np.random.default_rng(11)).reshape(SHAPE)
    scale = np.array([0.125], np.float32)
    bias = np.random.default_rng(12).standard_normal(SHAPE[1]).astype(np.float32) * 4
    q = graph.input(0, dml.TensorDesc("INT8", SHAPE))
    s = g.reinterpret(graph.input(1, dml.TensorDesc("FLOAT32", [1])), sizes=SHAPE, strides=[0, 0])
    b = g.reinterpret(graph.input(2, dml.TensorDesc("FLOAT32", [SHAPE[1]])), sizes=SHAPE, strides=[0, 1])
    out_scale = g.reinterpret(graph.input(3, dml.TensorDesc("FLOAT32", [1])), sizes=SHAPE, strides=[0, 0])
    result = g.quantize_linear(g.relu(g.add(g.dequantize_linear(q, s), b)), out_scale, output_type="INT8")
    desc = graph.graph_desc([result])
    compiled = device.compile_graph(desc)
    assert len(compiled.plan.groups) == 1, compiled.plan  # one fused kernel
    inputs = [x, scale, bias, np.array([0.25], np.float32)]
    raw = [np.ascontiguousarray(a).reshape(-1).view(np.uint8) for a in inputs]
    empty = [np.zeros(int(np.prod(SHAPE)), np.uint8)]
    fused = run_graph(device, desc, raw, empty)
    alone = run_node_by_node(device, desc, raw, empty)
    assert all((f == a).all() for f, a in zip(fused, alone))
    expected = [oracle.quantize_element(max(oracle.add_element(oracle.dequantize_element(int(v), 0.125, None,
                                                                                         "FLOAT32"),
                                                               float(bias[k % SHAPE[1]]), "FLOAT32"), 0.0),
                                        0.25, None, "INT8") for k, v in enumerate(x.reshape(-1))]
    assert fused[0].view(np.int8).tolist() == expected


def test_min_max_decisions() -> None:
    """docs/semantics.md 9b: a NaN operand gives the other (NaN only when both are); -0.0 < +0.0, either order."""
    nan = np.float32(np.nan)
    a = np.array([nan, 1.0, nan, -0.0, 0.0, -0.0], np.float32)
    b = np.array([2.0, nan, nan, 0.0, -0.0, -0.0], np.float32)
    low, high = np.asarray(dml.minimum(a, b)), np.asarray(dml.maximum(a, b))
    assert low[:2].tolist() == [2.0, 1.0] and np.isnan(low[2]) and high[:2].tolist() == [2.0, 1.0]
    assert np.signbit(low[3:]).tolist() == [True, True, True]
    assert np.signbit(high[3:]).tolist() == [False, False, True]


def test_mean_and_modulus_decisions() -> None:
    """docs/semantics.md 9b: MEAN of integers truncated toward zero without overflow; MODULUS_FLOOR with the
    divisor's sign (Python's %), MODULUS_TRUNCATE with the dividend's (C's fmod and %); x % 0 is 0 on integers,
    NaN on floats."""
    big = np.int32(2**31 - 1)
    assert np.asarray(dml.mean(np.array([-3, big, 3], np.int32), np.array([0, big, 0], np.int32))).tolist() == \
        [-1, big, 1]
    x, y = np.array([7, -7, 7, -7, 7, -128], np.int8), np.array([3, 3, -3, -3, 0, -1], np.int8)
    assert np.asarray(dml.modulus_floor(x, y)).tolist() == [1, 2, -2, -1, 0, 0]
    assert np.asarray(dml.modulus_truncate(x, y)).tolist() == [1, -1, 1, -1, 0, 0]
    f, g = np.array([-4.0, 4.0, -1.0, 1.0], np.float32), np.array([2.0, -2.0, np.inf, 0.0], np.float32)
    floor, trunc = np.asarray(dml.modulus_floor(f, g)), np.asarray(dml.modulus_truncate(f, g))
    assert floor[:3].tolist() == [0.0, -0.0, np.inf] and np.signbit(floor[:2]).tolist() == [False, True]
    assert trunc[:3].tolist() == [-0.0, 0.0, -1.0] and np.signbit(trunc[:2]).tolist() == [True, False]
    assert np.isnan(floor[3]) and np.isnan(trunc[3])


@pytest.mark.parametrize("backend", BACKENDS)
def test_dequantize_multiply_min_modulus_argmax_fuses_bit_for_bit(backend: str) -> None:
    """DEQUANTIZE -> MULTIPLY by a row -> MIN with a column -> MODULUS_FLOOR by a number -> ARGMAX: one fused
    kernel (the chain the ARGMAX's prologue), bit-identical to the nodes run one by one and to the oracle."""
    device = dml.Device(backend)
    graph = dml.Graph(device)
    rng = np.random.default_rng(13)
    x = edge_values(dml.DataType.INT8, int(np.prod(SHAPE)), rng).reshape(SHAPE)
    row = rng.standard_normal(SHAPE[1]).astype(np.float32) * 3
    column = np.array([np.nan, -0.0, 1.5, 40.0], np.float32)  # a NaN and a -0.0 among MIN's operands
    divisor = np.array([-2.5], np.float32)
    q = graph.input(0, dml.TensorDesc("INT8", SHAPE))
    scale = g.reinterpret(graph.input(1, dml.TensorDesc("FLOAT32", [1])), sizes=SHAPE, strides=[0, 0])
    r = g.reinterpret(graph.input(2, dml.TensorDesc("FLOAT32", [SHAPE[1]])), sizes=SHAPE, strides=[0, 1])
    c = g.reinterpret(graph.input(3, dml.TensorDesc("FLOAT32", [SHAPE[0]])), sizes=SHAPE, strides=[1, 0])
    d = g.reinterpret(graph.input(4, dml.TensorDesc("FLOAT32", [1])), sizes=SHAPE, strides=[0, 0])
    value = g.modulus_floor(g.minimum(g.multiply(g.dequantize_linear(q, scale), r), c), d)
    desc = graph.graph_desc([g.argmax(value, [1])])
    compiled = device.compile_graph(desc)
    assert len(compiled.plan.groups) == 1, compiled.plan
    inputs = [x, np.array([0.125], np.float32), row, column, divisor]
    raw = [np.ascontiguousarray(a).reshape(-1).view(np.uint8) for a in inputs]
    empty = [np.zeros(SHAPE[0] * 8, np.uint8)]
    fused = run_graph(device, desc, raw, empty)
    alone = run_node_by_node(device, desc, raw, empty)
    assert all((f == a).all() for f, a in zip(fused, alone))
    values = [[oracle.modulus_floor_element(oracle.min_element(oracle.multiply_element(
        oracle.dequantize_element(int(x[i, j]), 0.125, None, "FLOAT32"), float(row[j]), "FLOAT32"),
        float(column[i]), "FLOAT32"), -2.5, "FLOAT32") for j in range(SHAPE[1])] for i in range(SHAPE[0])]
    expected = [oracle.arg_of(v, "INCREASING", largest=True) for v in values]
    assert fused[0].view(np.int64).tolist() == expected


@pytest.mark.parametrize("type_name", ["FLOAT32", "FLOAT16"])
@pytest.mark.parametrize("activation", [None, ("RELU", 0.0), ("LEAKY_RELU", 0.1)])
def test_add1_is_add_then_its_fused_activation(type_name: str, activation: tuple[str, float] | None) -> None:
    """ELEMENT_WISE_ADD1: FusedActivation(a + b), the sum rounded to the tensors' type first: the oracle's, and
    the bits of ADD then the activation run as operators of their own."""
    t = dml.DataType[type_name]
    a = edge_values(t, 96, np.random.default_rng(3)).reshape(8, 12)
    b = edge_values(t, 12, np.random.default_rng(4))  # a row, broadcast
    fused = None if activation is None else (dml.ActivationReluDesc(None, None) if activation[0] == "RELU"
                                             else dml.ActivationLeakyReluDesc(None, None, activation[1]))
    got = np.asarray(dml.add1(a, b, fused_activation=fused))
    a2, b2 = np.broadcast_arrays(a, b)
    expected = [oracle.add1_element(x.item(), y.item(), type_name, activation)
                for x, y in zip(a2.reshape(-1), b2.reshape(-1))]
    _same(got, np.array(expected, t.numpy).reshape(a2.shape))
    total = dml.add(a, b)
    apart = total if activation is None else (dml.relu(total) if activation[0] == "RELU"
                                              else dml.leaky_relu(total, activation[1]))
    assert np.asarray(apart).tobytes() == got.tobytes()


def test_add1_refuses_what_is_no_fused_activation() -> None:
    x = np.ones(3, np.float32)
    with pytest.raises(dml.InvalidArgumentError, match=r"ELEMENT_WISE_ADD1: FusedActivation must be an activation's "
                                                      r"description .*ACTIVATION_RELU.*; got ELEMENT_WISE_ABS"):
        dml.add1(x, x, fused_activation=dml.ElementWiseAbsDesc(None, None))
    with pytest.raises(dml.InvalidArgumentError, match=r"ELEMENT_WISE_ADD1: FusedActivation\.InputTensor must be "
                                                      r"None"):
        dml.add1(x, x, fused_activation=dml.ActivationReluDesc(dml.TensorDesc("FLOAT32", [3]), None))
    with pytest.raises(dml.InvalidArgumentError, match=r"ELEMENT_WISE_ADD1: ATensor\.DataType must be one of "
                                                      r"FLOAT32, FLOAT16"):
        dml.add1(x.astype(np.int32), x.astype(np.int32))


def test_a_fused_activation_outside_directmls_list_is_refused_naming_the_list(tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """ADD1's FusedActivation takes DirectML's fused activations (every one implemented now): another name is
    refused with DirectML's list; ACTIVATION_LEAKY_RELU prints DirectML's answer."""
    from opendml.cli import main

    model = {
        "resources": {"A": {"initialValuesDataType": "FLOAT32", "initialValues": [1, 2, 3]},
                      "B": {"initialValuesDataType": "FLOAT32", "initialValues": [5, 8, -5]},
                      "Out": {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 3, "value": 0}}},
        "dispatchables": {"add": {"type": "DML_OPERATOR_ELEMENT_WISE_ADD1", "desc": {
            "ATensor": {"DataType": "FLOAT32", "Sizes": [3]}, "BTensor": {"DataType": "FLOAT32", "Sizes": [3]},
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [3]},
            "FusedActivation": {"Type": "ACTIVATION_GEMM", "Alpha": 0.5}}}},
        "commands": [{"type": "dispatch", "dispatchable": "add",
                      "bindings": {"ATensor": "A", "BTensor": "B", "OutputTensor": "Out"}},
                     {"type": "print", "resource": "Out"}]}
    path = tmp_path / "add1.json"
    path.write_text(json.dumps(model))
    assert main(["dispatch", str(path)]) != 0
    assert "FusedActivation.Type: must be one of DirectML's fused activations" in capsys.readouterr().err
    model["dispatchables"]["add"]["desc"]["FusedActivation"] = {"Type": "ACTIVATION_LEAKY_RELU", "Alpha": 0.5}
    path.write_text(json.dumps(model))
    assert main(["dispatch", str(path)]) == 0
    assert "Resource 'Out': 6, 10, -1" in capsys.readouterr().out


