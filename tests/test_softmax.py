"""SOFTMAX, LOG_SOFTMAX and HARDMAX (and their 1 variants) against the oracle of tests/softmax_oracle.py: edge
rows, axes sets, both CPU kernel modules, thread splits, FLOAT16, the front ends and the descriptions' rules."""

from __future__ import annotations

import math

import numpy as np
import pytest

import opendml as dml
from opendml.backends.cpu_kernels import softmax as kernels
from opendml.ops import BY_NAME
from tests.softmax_oracle import oracle

FUNCTIONS = ("SOFTMAX", "LOG_SOFTMAX", "HARDMAX")
CALLS = {"SOFTMAX": dml.softmax, "LOG_SOFTMAX": dml.log_softmax, "HARDMAX": dml.hardmax}
INF, NAN = math.inf, math.nan


def bits_equal(got: np.ndarray, want: np.ndarray) -> None:
    """Equal bits, every NaN as any NaN."""
    assert got.dtype == want.dtype and got.shape == want.shape
    nan = np.isnan(want)
    assert (np.isnan(got) == nan).all(), (got, want)
    u = f"u{got.dtype.itemsize}"
    mismatch = np.flatnonzero((got.view(u) != want.view(u)) & ~nan)
    assert mismatch.size == 0, (got.reshape(-1)[mismatch[:5]], want.reshape(-1)[mismatch[:5]])


def edge_rows(dtype: type) -> np.ndarray:
    """Rows of 6: all equal, one huge, -inf among numbers, a +inf, a NaN, zeros of both signs, only -inf, ties."""
    big = float(np.finfo(dtype).max)
    rows = [
        [2.5] * 6,
        [big, 0.0, -big, 1.0, big / 2, -1.0],
        [-INF, 1.0, -INF, 3.0, 2.0, -INF],
        [1.0, INF, 0.0, -INF, 2.0, 3.0],
        [1.0, 2.0, NAN, 3.0, 4.0, 5.0],
        [-0.0, 0.0, -0.0, -1.0, -2.0, -0.0],
        [-0.0, -0.0, -0.0, -0.0, -0.0, -0.0],
        [-INF] * 6,
        [NAN, -INF, NAN, -INF, NAN, NAN],
        [NAN] * 6,
        [7.0, -3.0, 7.0, 1e-3, -1e-3, 7.0],
        [0.0, 88.0, -88.0, 1e-30, -150.0, 80.0],
    ]
    return np.array(rows, dtype)


def run_kernel(function: str, x: np.ndarray, axes: tuple[int, ...], numba: bool, threads: int = 1) -> np.ndarray:
    """The CPU kernel modules' run over ``x`` (through the description and its KernelSpec)."""
    op = BY_NAME[f"ACTIVATION_{function}1"]
    desc = op.desc_type(dml.TensorDesc(x.dtype.name.upper(), x.shape), dml.TensorDesc(x.dtype.name.upper(), x.shape),
                        list(axes))
    spec = op.kernel(op.prepare(desc), op.tensors(desc))
    out = np.full_like(x, 99)
    kernels.reduction(spec, numba)(x, out, threads)
    return out


@pytest.mark.parametrize("numba", [False, True], ids=["numpy", "numba"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("function", FUNCTIONS)
def test_edge_rows(function: str, dtype: type, numba: bool) -> None:
    x = edge_rows(dtype)
    bits_equal(run_kernel(function, x, (1,), numba), oracle(x, function, (1,)))


@pytest.mark.parametrize("function", FUNCTIONS)
def test_functional_edge_rows(function: str) -> None:
    x = edge_rows(np.float32)
    bits_equal(CALLS[function](x), oracle(x, function, (1,)))


@pytest.mark.parametrize("axes", [(0,), (1,), (2,), (0, 2), (1, 2), (0, 1, 2)])
@pytest.mark.parametrize("function", FUNCTIONS)
def test_axes(function: str, axes: tuple[int, ...]) -> None:
    """Every set of axes of a 3-D input: each row the elements sharing the other coordinates."""
    rng = np.random.default_rng(len(axes) * 10 + axes[0])
    x = (rng.standard_normal((3, 4, 5)) * 4).astype(np.float32)
    x[1, 2, 3] = x[1, 2, 0]  # a tie
    bits_equal(CALLS[function](x, axis=axes), oracle(x, function, axes))


@pytest.mark.parametrize("numba", [False, True], ids=["numpy", "numba"])
def test_long_rows_and_thread_splits(numba: bool) -> None:
    """Rows longer than the exact sum's block (1024) whose exponentials span many binades (its slow path),
    rows of equal elements (its fast path), and row counts that split among threads; 2 threads, the same bits."""
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((5, 3000)) * 6).astype(np.float32)
    x[1] = 0.5
    x[2, ::7] = -INF
    for function in ("SOFTMAX", "LOG_SOFTMAX"):
        want = oracle(x, function, (1,))
        bits_equal(run_kernel(function, x, (1,), numba, threads=2), want)
    many = (rng.standard_normal((40, 1200)) * 3).astype(np.float32)  # 48000 elements: more than one task
    bits_equal(run_kernel("SOFTMAX", many, (1,), numba, threads=2), run_kernel("SOFTMAX", many, (1,), numba))
    bits_equal(run_kernel("SOFTMAX", many[:3], (1,), numba), oracle(many[:3], "SOFTMAX", (1,)))


def test_both_kernel_modules_agree_on_random_rows() -> None:
    rng = np.random.default_rng(11)
    for scale in (0.1, 3.0, 30.0):
        x = (rng.standard_normal((8, 257)) * scale).astype(np.float16)
        for function in ("SOFTMAX", "LOG_SOFTMAX"):
            bits_equal(run_kernel(function, x, (1,), True), run_kernel(function, x, (1,), False))


def test_float16_rounds_the_float32_result_once() -> None:
    """FLOAT16 runs the FLOAT32 steps on the exactly converted input, then rounds the result once."""
    x = np.array([[0.0, 1.0, 2.0, 3.0, -65504.0, 11.0]], np.float16)
    bits_equal(dml.softmax(x), dml.softmax(x.astype(np.float32)).astype(np.float16))
    bits_equal(dml.softmax(x), oracle(x, "SOFTMAX", (1,)))


def test_old_operators_run_over_the_last_dimension() -> None:
    """SOFTMAX (1_0) normalizes the last dimension of an effective rank of at most 2; a deeper one is refused."""
    device = dml.Device(feature_level="4_0")
    x = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4) / 4
    bits_equal(dml.softmax(x, device=device), oracle(x, "SOFTMAX", (3,)))
    with pytest.raises(dml.OpenDMLError, match=r"ACTIVATION_SOFTMAX.*effective rank"):
        device.create_operator(dml.ActivationSoftmaxDesc(dml.TensorDesc("FLOAT32", [1, 2, 3, 4]),
                                                         dml.TensorDesc("FLOAT32", [1, 2, 3, 4])))
    with pytest.raises(dml.OpenDMLError, match="ACTIVATION_LOG_SOFTMAX1"):  # 5_1's operator at 4_0
        dml.log_softmax(x, axis=2, device=device)


@pytest.mark.parametrize(("desc", "field"), [
    (dml.ActivationSoftmax1Desc(dml.TensorDesc("FLOAT32", [2, 3]), dml.TensorDesc("FLOAT32", [2, 3]), []), "Axes"),
    (dml.ActivationHardmax1Desc(dml.TensorDesc("FLOAT32", [2, 3]), dml.TensorDesc("FLOAT32", [2, 3]), [2]),
     "Axes[0]"),
    (dml.ActivationLogSoftmax1Desc(dml.TensorDesc("FLOAT32", [2, 3]), dml.TensorDesc("FLOAT32", [2, 3]), [1, 1]),
     "Axes"),
    (dml.ActivationSoftmaxDesc(dml.TensorDesc("FLOAT32", [2, 3]), dml.TensorDesc("FLOAT32", [3, 2])),
     "OutputTensor.Sizes"),
    (dml.ActivationHardmaxDesc(dml.TensorDesc("FLOAT32", [2, 3]), dml.TensorDesc("FLOAT16", [2, 3])),
     "OutputTensor"),
    (dml.ActivationSoftmax1Desc(dml.TensorDesc("INT32", [2, 3]), dml.TensorDesc("INT32", [2, 3]), [1]),
     "InputTensor"),
])
def test_description_rules(desc: object, field: str) -> None:
    with pytest.raises(dml.OpenDMLError) as caught:
        dml.Device().create_operator(desc)
    assert field in str(caught.value) and "ACTIVATION_" in str(caught.value)


def test_graph_builder() -> None:
    """DirectMLX's ActivationSoftmax / LogSoftmax / Hardmax behind an element-wise node, old and 1 variants."""
    from opendml import graph as g

    device = dml.Device()
    graph = dml.Graph(device)
    x = graph.input(0, dml.TensorDesc("FLOAT32", [3, 4]))
    outputs = [g.softmax(g.relu(x)), g.log_softmax(x, [0]), g.hardmax(x, [0, 1])]
    compiled = graph.compile(outputs)
    data = np.array([[1, -2, 3, 3], [0, 0, 0, 0], [-5, 4, 2, -1]], np.float32)
    buffers = [device.create_buffer(48) for _ in outputs]
    compiled.execute([device.buffer_from(data)], buffers)
    got = [b.to_numpy().view(np.float32).reshape(3, 4) for b in buffers]
    bits_equal(got[0], oracle(np.maximum(data, np.float32(0)), "SOFTMAX", (1,)))
    bits_equal(got[1], oracle(data, "LOG_SOFTMAX", (0,)))
    bits_equal(got[2], oracle(data, "HARDMAX", (0, 1)))


def test_cuda_refuses_by_name() -> None:
    """No CUDA lowering yet: the backend says so, naming the operator (CuPy imported, no GPU needed)."""
    pytest.importorskip("cupy")
    from opendml.backends.cuda.backend import CudaBackend

    op = BY_NAME["ACTIVATION_SOFTMAX1"]
    desc = op.desc_type(dml.TensorDesc("FLOAT32", [2, 3]), dml.TensorDesc("FLOAT32", [2, 3]), [1])
    spec = op.kernel(op.prepare(desc), op.tensors(desc))
    with pytest.raises(dml.OpenDMLError, match=r"ACTIVATION_SOFTMAX1.*SOFTMAX normalization"):
        CudaBackend.compile_spec(None, None, spec, [None], desc.output_tensor)  # type: ignore[arg-type]


def test_dispatch_model(tmp_path) -> None:
    """``opendml dispatch``: SOFTMAX and LOG_SOFTMAX1 (AxisCount, Axes) read from DxDispatch JSON."""
    from tests.dispatch_helpers import assert_printed, run_dispatch, write_model

    x = {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 3]}
    data = [0, 0, 0, 1, 2, -np.inf]
    model = {
        "resources": {
            "x": {"initialValuesDataType": "FLOAT32", "initialValues": [0, 0, 0, 1, 2, -1e30]},
            "y": {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 6, "value": 0}},
        },
        "dispatchables": {
            "soft": {"type": "DML_OPERATOR_ACTIVATION_SOFTMAX", "desc": {"InputTensor": x, "OutputTensor": x}},
            "log": {"type": "ACTIVATION_LOG_SOFTMAX1", "desc": {"InputTensor": x, "OutputTensor": x,
                                                                "AxisCount": 1, "Axes": [2]}},
        },
        "commands": [
            {"type": "dispatch", "dispatchable": "soft", "bindings": {"InputTensor": "x", "OutputTensor": "y"}},
            {"type": "print", "resource": "y"},
            {"type": "dispatch", "dispatchable": "log", "bindings": {"InputTensor": "x", "OutputTensor": "y"}},
            {"type": "print", "resource": "y"},
        ],
    }
    result = run_dispatch(write_model(tmp_path / "softmax.json", model), "--backend", "cpu")
    assert result.returncode == 0, result.stderr
    x_values = np.array(data, np.float32).reshape(1, 1, 2, 3)
    soft = oracle(x_values, "SOFTMAX", (3,)).reshape(-1)
    log = oracle(np.array([0, 0, 0, 1, 2, -1e30], np.float32).reshape(1, 1, 2, 3), "LOG_SOFTMAX", (2,)).reshape(-1)
    lines = [line for line in result.stdout.splitlines() if line.startswith("Resource 'y': ")]
    assert len(lines) == 2
    for line, want in zip(lines, (soft, log)):
        got = np.array([float(v) for v in line.split(": ")[1].split(", ")])
        np.testing.assert_allclose(got, want, rtol=5e-6)
    assert assert_printed is not None


def _onnx_model(nodes: list, inputs: list, outputs: list, opset: int) -> object:
    from onnx import helper

    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize(("opset", "axis", "axes"), [
    (12, None, (1, 2)), (12, 0, (0, 1, 2)), (11, -1, (2,)), (13, None, (2,)), (13, 1, (1,)), (13, -3, (0,))])
@pytest.mark.parametrize(("op_type", "function"), [("Softmax", "SOFTMAX"), ("LogSoftmax", "LOG_SOFTMAX"),
                                                    ("Hardmax", "HARDMAX")])
def test_onnx_axis_before_and_from_version_13(op_type: str, function: str, opset: int, axis: int | None,
                                              axes: tuple[int, ...]) -> None:
    """Up to version 12 the input is coerced to 2-D at ``axis`` (default 1): SOFTMAX1 over ``axis`` and every later
    axis; from 13 over ``axis`` alone (default -1)."""
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    from opendml.onnx import backend

    attributes = {} if axis is None else {"axis": axis}
    node = helper.make_node(op_type, ["x"], ["y"], **attributes)
    info = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3, 4]) for n in ("x", "y")]
    x = (np.random.default_rng(opset).standard_normal((2, 3, 4)) * 3).astype(np.float32)
    (got,) = backend.run_model(_onnx_model([node], info[:1], info[1:], opset), [x])
    bits_equal(np.asarray(got), oracle(x, function, axes))


def test_onnx_reduce_read_through_a_broadcast() -> None:
    """ONNX's expanded Softmax: ReduceMax and ReduceSum (keepdims) read by Sub and Div through a broadcast. REDUCE is
    computed again in the reader's sizes as ARGMAX is (it failed with an AssertionError before)."""
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    from opendml.onnx import backend

    nodes = [helper.make_node("ReduceMax", ["x"], ["m"], axes=[1]), helper.make_node("Sub", ["x", "m"], ["d"]),
             helper.make_node("ReduceSum", ["d"], ["s"], axes=[1]), helper.make_node("Div", ["d", "s"], ["y"])]
    info = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3, 4]) for n in ("x", "y")]
    x = np.array([[1, 2, 3, 4], [0, 0, 0, 1], [-1, 5, 2, 2]], np.float32)
    (got,) = backend.run_model(_onnx_model(nodes, info[:1], info[1:], 12), [x])
    d = x - x.max(axis=1, keepdims=True)
    np.testing.assert_array_equal(np.asarray(got), d / d.sum(axis=1, keepdims=True))


def test_onnx_softmax_read_through_a_broadcast_is_refused() -> None:
    """SOFTMAX's rows would change if it were described anew in a reader's sizes: refused before anything runs."""
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    from opendml.onnx import UnsupportedModelError, backend

    nodes = [helper.make_node("Softmax", ["x"], ["s"]), helper.make_node("Add", ["s", "b"], ["y"])]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4]),
              helper.make_tensor_value_info("b", TensorProto.FLOAT, [3, 4])]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])]
    with pytest.raises(UnsupportedModelError, match="ACTIVATION_SOFTMAX1: OutputTensor must be read in its own"):
        backend.run_model(_onnx_model(nodes, inputs, outputs, 13), [np.zeros((1, 4), np.float32),
                                                                    np.ones((3, 4), np.float32)])


def _float32_inputs(rng: np.random.Generator, count: int) -> np.ndarray:
    """FLOAT32 values in [-104, 0]: random bits of every binade, both ends, and the hard cases of EXP's table."""
    from opendml.rounded.tables import hard_cases

    bits = rng.integers(0x80000000, 0xC2D00000, count, dtype=np.uint64).astype(np.uint32)
    table = np.array(hard_cases("EXP", "FLOAT32").inputs, np.uint32)
    hard = table[(table >= 0x80000000) & (table <= 0xC2D00000)]
    ends = np.array([0.0, -0.0, -1e-45, -103.97, -103.972, -104.0], np.float32).view(np.uint32)
    return np.concatenate([bits, hard, ends]).view(np.float32)


def test_vector_exp_is_within_four_ulps_and_rounds_as_exp() -> None:
    """The kernel's own double ``exp`` (``softmax_rows``) against NumPy's float64 ``exp`` on [-104, 0] (within 4
    double ulps, well inside the rounding test's 8), and its FLOAT32 results, marked ones redone, equal to
    ``EXP``'s correctly rounded ones on every input, EXP's hard cases among them (``benchmarks/softmax_cpu.py
    --verify`` checks every FLOAT32 input there)."""
    from opendml.backends.cpu_kernels import rounded
    from opendml.backends.cpu_kernels.softmax_rows import exp_double, exp_float32

    d = _float32_inputs(np.random.default_rng(3), 1 << 20)
    fast = exp_double()
    wide = d.astype(np.float64)
    got = np.array([fast(v) for v in wide[:20000]])
    want = np.exp(wide[:20000])
    ulps = np.abs(got.view(np.int64) - want.view(np.int64))
    assert ulps.max() <= 4, ulps.max()
    out = np.empty_like(d)
    exp_float32()(d, np.float32(0), out)
    exact = np.array([rounded.EXP_FLOAT32(v) for v in d[-5000:]], np.float32)
    bits_equal(out[-5000:], exact)
    from opendml.rounded.evaluate import evaluate

    bits_equal(out, evaluate("EXP", d, "FLOAT32"))


@pytest.mark.parametrize("n", [1, 5, 4095, 4097, 70000])
def test_exact_sum_by_levels(n: int) -> None:
    """The levels' sum of FLOAT32 values in [0, 1] is the exact sum rounded once: rows on a midpoint of FLOAT32
    (ties to even) and just past it by a subnormal, many tiny values, blocks of 4096 crossed."""
    from fractions import Fraction

    from opendml.backends.cpu_kernels import sum_accumulator, sum_rounding
    from opendml.backends.cpu_kernels.softmax_rows import BLOCK, exact_sum_levels
    from tests.reduce_oracle import rounded

    rng = np.random.default_rng(n)
    cases = [np.exp(-rng.uniform(0, 100, n)).astype(np.float32),
             np.full(n, np.float32(2.0**-149))]
    tie = np.zeros(n, np.float32)
    tie[0] = 1.0
    tie[-1] = np.float32(2.0**-24) if n > 1 else 1.0  # 1 + 2**-24: a midpoint, rounded to even (1.0)
    past = tie.copy()
    if n > 2:
        past[n // 2] = np.float32(2.0**-149)  # just past it: rounded up
    cases += [tie, past]
    acc = np.zeros(sum_accumulator.WORDS, np.int64)
    digits = np.zeros(sum_accumulator.DIGITS + 3, np.int64)
    for e in cases:
        acc[:] = 0
        acc[sum_accumulator.NONNEG] = 1
        exact_sum_levels(e, acc, np.empty(BLOCK), np.empty(BLOCK))
        got = np.uint32(sum_rounding.finish(acc, n, False, *sum_rounding.FORMATS[np.dtype(np.float32)], digits)).view(np.float32)
        want = rounded(sum((Fraction(float(v)) for v in e), Fraction(0)), np.float32)
        assert got == want and np.signbit(got) == np.signbit(want), (got, want)
