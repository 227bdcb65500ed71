"""ELEMENT_WISE_QUANTIZED_LINEAR_ADD against the independent oracle (its page's equations with DEQUANTIZE_LINEAR's
and QUANTIZE_LINEAR's rounding): every type pairing, zero points given and absent, edge scales, broadcast
operands, bit for bit DEQUANTIZE_LINEAR twice, ADD and QUANTIZE_LINEAR run as operators, its kernels on every
CPU lowering, and fused with its neighbours in a graph equal to its nodes run one by one."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendml as dml
from opendml import graph as g
from opendml.backends import cpu_kernels
from tests import elementwise_oracle as oracle
from tests.graph_helpers import run_graph, run_node_by_node
from tests.helpers import edge_values, run

BYTES = ["INT8", "UINT8"]
SHAPE = [3, 20]


def _expected(a: np.ndarray, a_scale: float, a_zero: int | None, b: np.ndarray, b_scale: float,
              b_zero: int | None, out_scale: float, out_zero: int | None, out_type: str) -> np.ndarray:
    a2, b2 = np.broadcast_arrays(a, b)
    values = [oracle.quantized_linear_add_element(int(x), a_scale, a_zero, int(y), b_scale, b_zero, out_scale,
                                                  out_zero, out_type) for x, y in zip(a2.reshape(-1), b2.reshape(-1))]
    return np.array(values, dml.DataType[out_type].numpy).reshape(a2.shape)


@contextlib.contextmanager
def numpy_lowering() -> Iterator[None]:
    """The NumPy lowering of the operator's expression for the value checks below, which test its math; its
    compiled kernels (8 operands: one generic loop each) run in ``test_its_kernels_on_every_cpu_lowering`` and
    tests/test_kernel_specs.py (--slow)."""
    saved = cpu_kernels._chosen
    cpu_kernels._chosen = cpu_kernels.load("numpy")
    try:
        yield
    finally:
        cpu_kernels._chosen = saved


@pytest.fixture
def numpy_kernels() -> Iterator[None]:
    with numpy_lowering():
        yield


@pytest.mark.parametrize(("a_type", "b_type", "out_type"), list(itertools.product(BYTES, BYTES, BYTES)))
@pytest.mark.parametrize("zero_points", [True, False])
@pytest.mark.usefixtures("numpy_kernels")
def test_every_type_pairing_matches_the_oracle(a_type: str, b_type: str, out_type: str, zero_points: bool) -> None:
    rng = np.random.default_rng(3)
    a = edge_values(dml.DataType[a_type], 60, rng).reshape(SHAPE)
    b = edge_values(dml.DataType[b_type], 60, rng).reshape(SHAPE)
    zeros = (np.array(-3 if a_type == "INT8" else 3, a.dtype), np.array(7, b.dtype),
             np.array(-1 if out_type == "INT8" else 128, dml.DataType[out_type].numpy)) if zero_points else (None,) * 3
    got = dml.quantized_linear_add(a, 0.05, zeros[0], b, np.float32(0.75), zeros[1], 0.3, zeros[2],
                                   output_type=out_type)
    ints = [None if z is None else int(z) for z in zeros]
    _check(got, _expected(a, oracle.float_field(0.05), ints[0], b, 0.75, ints[1], oracle.float_field(0.3),
                          ints[2], out_type))


def _check(got: object, expected: np.ndarray) -> None:
    got = np.asarray(got)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.tolist() == expected.tolist()


@pytest.mark.usefixtures("numpy_kernels")
def test_rounding_saturation_and_edge_scales() -> None:
    """Half to even on the float32 quotient; sums beyond the output's range saturate; a NaN sum (an infinite
    scale times 0) gives the output zero point; an infinite quotient the output's limit."""
    a = np.array([1, 3, 5, 127, -128, 0, 2], np.int8)
    b = np.zeros(7, np.int8)
    got = np.asarray(dml.quantized_linear_add(a, 0.5, None, b, 1.0, None, 1.0, np.int8(10)))
    assert got.tolist() == [10, 12, 12, 74, -54, 10, 11]  # 0.5 -> 0, 1.5 -> 2, 2.5 -> 2 (ties to even)
    big = np.asarray(dml.quantized_linear_add(a, 100.0, None, b, 1.0, None, 1.0, None, output_type="UINT8"))
    assert big.tolist() == [100, 255, 255, 255, 0, 0, 200]
    nan = np.asarray(dml.quantized_linear_add(np.zeros(2, np.uint8), np.inf, None, np.ones(2, np.uint8), 1.0, None,
                                              1.0, np.uint8(9)))
    assert nan.tolist() == [9, 9]  # (0 - 0) * inf is NaN: the sum NaN, the quotient NaN, the zero point
    inf = np.asarray(dml.quantized_linear_add(np.ones(2, np.uint8), np.inf, None, np.ones(2, np.uint8), 1.0, None,
                                              1.0, np.uint8(9)))
    assert inf.tolist() == [255, 255]


@pytest.mark.usefixtures("numpy_kernels")
def test_is_dequantize_add_quantize_bit_for_bit() -> None:
    rng = np.random.default_rng(5)
    a = edge_values(dml.DataType.UINT8, 60, rng).reshape(SHAPE)
    b = edge_values(dml.DataType.INT8, 20, rng)  # a row, broadcast
    fused = dml.quantized_linear_add(a, 0.1, np.uint8(128), b, 0.02, np.int8(-4), 0.07, np.int8(3))
    apart = dml.quantize_linear(dml.add(dml.dequantize_linear(a, np.float32(0.1), np.uint8(128)),
                                        dml.dequantize_linear(b, np.float32(0.02), np.int8(-4))),
                                np.float32(0.07), np.int8(3))
    assert np.asarray(fused).tobytes() == np.asarray(apart).tobytes()


def test_refusals_name_the_tensor() -> None:
    device = dml.Device("cpu")
    x, y = dml.TensorDesc("INT8", [2, 2]), dml.TensorDesc("UINT8", [2, 2])
    one = dml.TensorDesc("FLOAT32", [2, 2], [0, 0])
    with pytest.raises(dml.InvalidArgumentError, match=r"ELEMENT_WISE_QUANTIZED_LINEAR_ADD: AZeroPointTensor\."
                                                      r"DataType must equal ATensor\.DataType \(INT8\); got UINT8"):
        device.create_operator(dml.ElementWiseQuantizedLinearAddDesc(x, one, y, x, one, None, one, None, y))
    with pytest.raises(dml.InvalidArgumentError, match=r"ELEMENT_WISE_QUANTIZED_LINEAR_ADD: BScaleTensor"):
        device.create_operator(dml.ElementWiseQuantizedLinearAddDesc(
            x, one, None, x, dml.TensorDesc("FLOAT32", [2, 1]), None, one, None, y))
    with pytest.raises(dml.UnsupportedFeatureLevelError, match="4_0"):
        dml.Device("cpu", "3_1").create_operator(dml.ElementWiseQuantizedLinearAddDesc(
            x, one, None, x, one, None, one, None, y))
    with pytest.raises(dml.InvalidArgumentError, match=r"AZeroPointTensor must hold values of the input's type"):
        dml.quantized_linear_add(np.ones(2, np.int8), 1.0, 300, np.ones(2, np.int8), 1.0, None, 1.0)


NUMBA = pytest.mark.skipif(not cpu_kernels.numba_available(), reason="Numba is not installed")


@pytest.mark.parametrize("kernels", ["numpy", pytest.param("numba", marks=NUMBA)])
def test_its_kernels_on_every_cpu_lowering(kernels: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Zero points given (of one element, every size 1: the page's form), single scales through zero strides,
    through each CPU lowering (both forms are one kernel: the zero points read through zero strides too)."""
    monkeypatch.setattr(cpu_kernels, "_chosen", cpu_kernels.load(kernels))
    device = dml.Device("cpu")
    rng = np.random.default_rng(9)
    one = dml.TensorDesc("FLOAT32", SHAPE, [0, 0])
    # Zero points present (their Loads), mixed types; absent ones and the other pairings: the NumPy lowering
    # above, and every combination in tests/test_kernel_specs.py (--slow).
    for a_type, b_type, present in [("INT8", "UINT8", True)]:
        a, b = dml.TensorDesc(a_type, SHAPE), dml.TensorDesc(b_type, SHAPE)
        out = dml.TensorDesc(a_type, SHAPE)
        za, zb, zo = (dml.TensorDesc(t, [1, 1]) if present else None for t in (a_type, b_type, a_type))
        desc = dml.ElementWiseQuantizedLinearAddDesc(a, one, za, b, one, zb, one, zo, out)
        xa, xb = (edge_values(dml.DataType[t], 60, rng).reshape(SHAPE) for t in (a_type, b_type))
        scales = [np.float32(s) for s in (0.25, 1.5, 0.5)]
        zeros = [np.array(v, dml.DataType[t].numpy) if present else None
                 for v, t in ((2, a_type), (5, b_type), (1, a_type))]
        got = run(device, desc, [xa, scales[0], zeros[0], xb, scales[1], zeros[1], scales[2], zeros[2]])
        ints = [None if z is None else int(z) for z in zeros]
        _check(got, _expected(xa, 0.25, ints[0], xb, 1.5, ints[1], 0.5, ints[2], a_type))
    # The A scale per element (stride 1) beside the single B and output scales and zero points (stride 0): the
    # compiled kernel's one loop reads each operand through its own stride.
    a, b = dml.TensorDesc("INT8", SHAPE), dml.TensorDesc("UINT8", SHAPE)
    zeros = [np.array(2, np.int8), np.array(5, np.uint8), np.array(1, np.int8)]
    za, zb, zo = (dml.TensorDesc(t, [1, 1]) for t in ("INT8", "UINT8", "INT8"))
    desc = dml.ElementWiseQuantizedLinearAddDesc(a, dml.TensorDesc("FLOAT32", SHAPE), za, b, one, zb, one, zo,
                                                 dml.TensorDesc("INT8", SHAPE))
    xa, xb = edge_values(dml.DataType.INT8, 60, rng).reshape(SHAPE), edge_values(dml.DataType.UINT8, 60, rng).reshape(SHAPE)
    a_scales = rng.choice(np.array([0.25, 0.5, 3.0, 0.0078125], np.float32), SHAPE)
    got = run(device, desc, [xa, a_scales, zeros[0], xb, np.float32(1.5), zeros[1], np.float32(0.5), zeros[2]])
    want = [oracle.quantized_linear_add_element(int(x), float(s), 2, int(y), 1.5, 5, 0.5, 1, "INT8")
            for x, s, y in zip(xa.reshape(-1), a_scales.reshape(-1), xb.reshape(-1))]
    _check(got, np.array(want, np.int8).reshape(SHAPE))


def test_fused_with_its_neighbours_equals_node_by_node() -> None:
    """QUANTIZED_LINEAR_ADD -> DEQUANTIZE_LINEAR -> ACTIVATION_PARAMETERIZED_RELU -> QUANTIZE_LINEAR: one kernel,
    the bits of its nodes run one by one."""
    device = dml.Device("cpu")
    graph = dml.Graph(device)
    rng = np.random.default_rng(11)
    xa, xb = (edge_values(dml.DataType.INT8, 60, rng).reshape(SHAPE) for _ in range(2))
    a = graph.input(0, dml.TensorDesc("INT8", SHAPE))
    b = graph.input(1, dml.TensorDesc("INT8", SHAPE))
    s = g.reinterpret(graph.input(2, dml.TensorDesc("FLOAT32", [1])), sizes=SHAPE, strides=[0, 0])
    slope = g.reinterpret(graph.input(3, dml.TensorDesc("FLOAT32", [SHAPE[1]])), sizes=SHAPE, strides=[0, 1])
    total = g.quantized_linear_add(a, s, None, b, s, None, s, None, output_type="INT8")
    result = g.quantize_linear(g.parameterized_relu(g.dequantize_linear(total, s), slope), s, output_type="INT8")
    desc = graph.graph_desc([result])
    assert len(device.compile_graph(desc).plan.groups) == 1
    slopes = np.linspace(-1, 1, SHAPE[1], dtype=np.float32)
    raw = [np.ascontiguousarray(v).reshape(-1).view(np.uint8) for v in (xa, xb, np.float32([0.25]), slopes)]
    empty = [np.zeros(60, np.uint8)]
    fused = run_graph(device, desc, raw, empty)
    assert all((f == n).all() for f, n in zip(fused, run_node_by_node(device, desc, raw, empty)))
    expected = []
    for k, (x, y) in enumerate(zip(xa.reshape(-1), xb.reshape(-1))):
        q = oracle.quantized_linear_add_element(int(x), 0.25, None, int(y), 0.25, None, 0.25, None, "INT8")
        v = oracle.parameterized_relu_element(oracle.dequantize_element(q, 0.25, None, "FLOAT32"),
                                              float(slopes[k % SHAPE[1]]), "FLOAT32")
        expected.append(oracle.quantize_element(v, 0.25, None, "INT8"))
    assert fused[0].view(np.int8).tolist() == expected


@settings(max_examples=8, deadline=None)
@given(st.sampled_from(BYTES), st.sampled_from(BYTES), st.integers(0, 2**32 - 1),
       st.floats(0.0625, 10, width=32), st.floats(0.0625, 10, width=32), st.floats(0.0625, 10, width=32),
       st.booleans())
def test_property_against_the_oracle(a_type: str, out_type: str, seed: int, a_scale: float, b_scale: float,
                                     out_scale: float, zero_points: bool) -> None:
    with numpy_lowering():
        rng = np.random.default_rng(seed)
        a = edge_values(dml.DataType[a_type], 24, rng).reshape(4, 6)
        b = edge_values(dml.DataType[a_type], 6, rng)
        out_dtype = dml.DataType[out_type].numpy
        zeros = (a[0, 0], b[1], np.array(rng.integers(-5, 6) % 100, out_dtype)) if zero_points else (None,) * 3
        got = dml.quantized_linear_add(a, np.float32(a_scale), zeros[0], b, np.float32(b_scale), zeros[1],
                                       np.float32(out_scale), zeros[2], output_type=out_type)
        ints = [None if z is None else int(z) for z in zeros]
        _check(got, _expected(a, a_scale, ints[0], b, b_scale, ints[1], out_scale, ints[2], out_type))


# The page's form of a scale or zero point: one element, every size 1 (the output's DimensionCount).
ONE = [1, 1]


@pytest.mark.usefixtures("numpy_kernels")
@pytest.mark.parametrize("mixed", [False, True])
def test_single_element_scales_and_zero_points(mixed: bool) -> None:
    """Each scale and zero point described with all sizes 1, as the page expects them, broadcast over the output
    (``mixed``: the A side's in the output's Sizes with zero strides, the rest of one element)."""
    device = dml.Device("cpu")
    rng = np.random.default_rng(21)
    a, b, out = dml.TensorDesc("UINT8", SHAPE), dml.TensorDesc("INT8", SHAPE), dml.TensorDesc("INT8", SHAPE)
    broadcast = [dml.TensorDesc(t, SHAPE, [0, 0]) for t in ("FLOAT32", "UINT8")]
    a_scale, a_zero = broadcast if mixed else [dml.TensorDesc(t, ONE) for t in ("FLOAT32", "UINT8")]
    desc = dml.ElementWiseQuantizedLinearAddDesc(a, a_scale, a_zero, b, dml.TensorDesc("FLOAT32", ONE),
                                                 dml.TensorDesc("INT8", ONE), dml.TensorDesc("FLOAT32", ONE),
                                                 dml.TensorDesc("INT8", ONE), out)
    xa, xb = (edge_values(dml.DataType[t], 60, rng).reshape(SHAPE) for t in ("UINT8", "INT8"))
    values = [xa, np.float32([[0.125]]), np.uint8([[130]]), xb, np.float32([[0.75]]), np.int8([[-6]]),
              np.float32([[0.4]]), np.int8([[3]])]
    _check(run(device, desc, values), _expected(xa, 0.125, 130, xb, 0.75, -6, oracle.float_field(0.4), 3, "INT8"))


def test_single_element_refusals_name_the_tensor() -> None:
    """A scale or zero point of another DimensionCount, or of sizes neither all 1 nor the output's, is refused."""
    device = dml.Device("cpu")
    x, one = dml.TensorDesc("INT8", SHAPE), dml.TensorDesc("FLOAT32", ONE)
    with pytest.raises(dml.InvalidArgumentError, match=r"ELEMENT_WISE_QUANTIZED_LINEAR_ADD: OutputScaleTensor\."
                                                      r"DimensionCount must equal OutputTensor\.DimensionCount \(2\)"
                                                      r"; got 1"):
        device.create_operator(dml.ElementWiseQuantizedLinearAddDesc(
            x, one, None, x, one, None, dml.TensorDesc("FLOAT32", [1]), None, x))
    with pytest.raises(dml.InvalidArgumentError, match=r"AZeroPointTensor\.Sizes must be all 1 \(one element, for "
                                                      r"every output element\) or equal OutputTensor\.Sizes "
                                                      r"\(\[3, 20\]\); got \[1, 20\]"):
        device.create_operator(dml.ElementWiseQuantizedLinearAddDesc(
            x, one, dml.TensorDesc("INT8", [1, 20]), x, one, None, one, None, x))
    with pytest.raises(dml.InvalidArgumentError, match=r"BTensor\.Sizes\[1\] must equal OutputTensor\.Sizes\[1\]"):
        device.create_operator(dml.ElementWiseQuantizedLinearAddDesc(
            x, one, None, dml.TensorDesc("INT8", [3, 1]), one, None, one, None, x))


@pytest.mark.usefixtures("numpy_kernels")
def test_single_element_tensors_fused_with_blocked_quantize() -> None:
    """QUANTIZE (blocks of 5 along the rows) -> QUANTIZED_LINEAR_ADD -> QUANTIZED_LINEAR_ADD, every scale and
    zero point of the additions one element (graph inputs of sizes [1, 1]): one kernel, the bits of its nodes
    run one by one, and the oracle's values."""
    device = dml.Device("cpu", "6_3")
    graph = dml.Graph(device)
    rng = np.random.default_rng(23)
    x = rng.normal(0, 4, SHAPE).astype(np.float32)
    xb = edge_values(dml.DataType.INT8, 60, rng).reshape(SHAPE)
    blocks = np.float32([[0.5, 0.25, 1.0, 2.0], [0.125, 0.75, 1.5, 3.0], [1.0, 1.0, 0.5, 0.0625]])
    gx = graph.input(0, dml.TensorDesc("FLOAT32", SHAPE))
    gb = graph.input(1, dml.TensorDesc("INT8", SHAPE))
    gblocks = graph.input(2, dml.TensorDesc("FLOAT32", [3, 4]))
    scale = graph.input(3, dml.TensorDesc("FLOAT32", ONE))
    zero = graph.input(4, dml.TensorDesc("INT8", ONE))
    q = g.quantize(gx, [gblocks], "SCALE", output_type="INT8")
    first = g.quantized_linear_add(q, scale, zero, gb, scale, None, scale, zero)
    result = g.quantized_linear_add(first, scale, None, gb, scale, zero, scale, None, output_type="INT8")
    desc = graph.graph_desc([result])
    assert len(device.compile_graph(desc).plan.groups) == 1
    raw = [np.ascontiguousarray(v).reshape(-1).view(np.uint8)
           for v in (x, xb, blocks, np.float32([[0.3]]), np.int8([-2, 0, 0, 0]))]  # 4 bytes: its TotalTensorSizeInBytes
    empty = [np.zeros(60, np.uint8)]
    fused = run_graph(device, desc, raw, empty)
    assert all((f == n).all() for f, n in zip(fused, run_node_by_node(device, desc, raw, empty)))
    s = oracle.float_field(0.3)
    expected = []
    for (i, j), value in np.ndenumerate(x):
        y = int(xb[i, j])
        quantized = oracle.quantize_element(float(value), float(blocks[i, j // 5]), None, "INT8")
        total = oracle.quantized_linear_add_element(quantized, s, -2, y, s, None, s, -2, "INT8")
        expected.append(oracle.quantized_linear_add_element(total, s, None, y, s, -2, s, None, "INT8"))
    assert fused[0].view(np.int8).tolist() == expected
