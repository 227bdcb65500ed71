"""DEQUANTIZE and QUANTIZE fused into compiled graphs: blocked 4-bit weights dequantized inside the kernel of the
node reading them (CLIP, ABS then ARGMAX) and a chain quantized to 4-bit in its own kernel, each one kernel,
against values computed here from the rule (the oracle of tests/test_blocked_quantization.py, element by element)
and bit for bit the graph run unfused.

The value grids run on the NumPy lowering (each fused expression is a Numba kernel of its own, compiled for
seconds cold); one case of each chain runs on the default CPU kernels.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import opendml as dml
from opendml import graph as g
from opendml.backends import cpu_kernels
from opendml.dtypes import DataType as T
from opendml.graphs.compiled import compile_graph
from tests.test_blocked_quantization import (
    NUMPY,
    RANGES,
    _bytes_of,
    _values_of,
    dequantize_oracle,
    quantize_oracle,
)

LOW, HIGH = -3.5, 6.0  # CLIP's bounds: FLOAT16 numbers too


@pytest.fixture
def numpy_kernels() -> Iterator[None]:
    saved = cpu_kernels._chosen
    cpu_kernels._chosen = cpu_kernels.load("numpy")
    try:
        yield
    finally:
        cpu_kernels._chosen = saved


def _run(graph: dml.Graph, outputs: Sequence[g.Expression], inputs: Sequence[tuple[dml.TensorDesc, np.ndarray]],
         fuse: bool, fill: int = 0) -> tuple[list[np.ndarray], tuple[tuple[int, ...], ...]]:
    """The graph's outputs (as values of their descriptions) and its plan's groups, fused or not."""
    device = graph.device
    compiled = compile_graph(device, graph.graph_desc(outputs), "NONE", fuse)
    bindings = [device.buffer_from(_bytes_of(desc, values)) for desc, values in inputs]
    descs = [e.desc for e in outputs]
    outs = [device.buffer_from(np.full(d.total_tensor_size_in_bytes, fill, np.uint8)) for d in descs]
    compiled.execute(bindings, outs)
    return [_read(d, o.to_numpy()) for d, o in zip(descs, outs)], compiled.plan.groups


def _read(desc: dml.TensorDesc, raw: np.ndarray) -> np.ndarray:
    if desc.data_type is T.INT64:  # ARGMAX's indices, packed
        return raw.view(np.int64)[:int(np.prod(desc.sizes))].reshape(desc.sizes)
    return _values_of(desc, raw)


def _both(graph: dml.Graph, outputs: Sequence[g.Expression], inputs: Sequence[tuple[dml.TensorDesc, np.ndarray]],
          fill: int = 0) -> tuple[list[np.ndarray], tuple[tuple[int, ...], ...]]:
    """The fused results, checked bit for bit against the graph run unfused, and the fused plan's groups."""
    fused, groups = _run(graph, outputs, inputs, True, fill)
    unfused, _ = _run(graph, outputs, inputs, False, fill)
    for a, b in zip(fused, unfused):
        assert a.tobytes() == b.tobytes()
    return fused, groups


def _quantization(rng: np.random.Generator, float_type: T, quantized: T, q_sizes: Sequence[int]
                  ) -> tuple[np.ndarray, np.ndarray]:
    count = int(np.prod(q_sizes))
    scale = (rng.choice([0.5, 1.0, 0.25, 3.0, 0.1, 1.5], count) * rng.choice([1, -1], count))
    zero = rng.integers(*RANGES[quantized], count, endpoint=True)
    return scale.astype(NUMPY[float_type]).reshape(q_sizes), zero.astype(NUMPY[quantized]).reshape(q_sizes)


def _dequantized(graph: dml.Graph, x_desc: dml.TensorDesc, q_sizes: Sequence[int], float_type: T, kind: str
                 ) -> tuple[g.Expression, list[dml.TensorDesc]]:
    x = graph.input(0, x_desc)
    tensors = [dml.TensorDesc(float_type, q_sizes), dml.TensorDesc(x_desc.data_type, q_sizes)]
    tensors = tensors[:{"SCALE": 1, "SCALE_ZERO_POINT": 2}[kind]]
    return g.dequantize(x, [graph.input(k + 1, t) for k, t in enumerate(tensors)], kind), [x_desc, *tensors]


# (sizes, quantization sizes, x's strides or None): blocks along one axis, along both, an odd count of 4-bit
# elements (rows starting on a high nibble), per tensor, a transposed (strided) input.
LAYOUTS = [
    ((2, 8), (2, 4), None), ((3, 5), (3, 1), None), ((4, 6), (2, 3), None), ((7,), (1,), None),
    ((2, 3, 4), (1, 3, 2), None), ((3, 4), (3, 2), (1, 3)),
]


def _clip_case(quantized: T, float_type: T, kind: str, layout: tuple) -> None:
    sizes, q_sizes, strides = layout
    rng = np.random.default_rng(11)
    device = dml.Device("cpu", "6_3")
    graph = dml.Graph(device)
    x_desc = dml.TensorDesc(quantized, sizes, strides)
    values, descs = _dequantized(graph, x_desc, q_sizes, float_type, kind)
    clipped = g.clip(values, LOW, HIGH)
    x = rng.integers(*RANGES[quantized], int(np.prod(sizes)), endpoint=True).astype(NUMPY[quantized]).reshape(sizes)
    scale, zero = _quantization(rng, float_type, quantized, q_sizes)
    arrays = [x, scale, zero][:len(descs)]
    (got,), groups = _both(graph, [clipped], list(zip(descs, arrays)))
    assert groups == ((0, 1),)  # one kernel
    dequantized = dequantize_oracle(x, scale, zero if kind == "SCALE_ZERO_POINT" else None, kind, quantized,
                                    float_type)
    expected = np.clip(dequantized.astype(np.float32), LOW, HIGH).astype(NUMPY[float_type])
    assert got.tobytes() == expected.tobytes()


@pytest.mark.usefixtures("numpy_kernels")
@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
@pytest.mark.parametrize("kind", ["SCALE", "SCALE_ZERO_POINT"])
@pytest.mark.parametrize("quantized", [T.UINT4, T.INT4, T.INT8], ids=lambda t: t.name)
@pytest.mark.parametrize("float_type", [T.FLOAT32, T.FLOAT16], ids=lambda t: t.name)
def test_dequantize_feeding_clip_is_one_kernel(quantized: T, float_type: T, kind: str, layout: tuple) -> None:
    _clip_case(quantized, float_type, kind, layout)


def test_dequantize_feeding_clip_on_the_compiled_kernels() -> None:
    _clip_case(T.UINT4, T.FLOAT32, "SCALE_ZERO_POINT", LAYOUTS[0])


def _argmax_case(quantized: T, axes: Sequence[int]) -> None:
    rng = np.random.default_rng(5)
    sizes, q_sizes = (3, 8), (3, 2)  # blocks of 4 along the last axis
    device = dml.Device("cpu", "6_3")
    graph = dml.Graph(device)
    values, descs = _dequantized(graph, dml.TensorDesc(quantized, sizes), q_sizes, T.FLOAT32, "SCALE_ZERO_POINT")
    indices = g.argmax(g.abs(values), axes)
    x = rng.integers(*RANGES[quantized], 24, endpoint=True).astype(NUMPY[quantized]).reshape(sizes)
    scale, zero = _quantization(rng, T.FLOAT32, quantized, q_sizes)
    (got,), groups = _both(graph, [indices], list(zip(descs, [x, scale, zero])))
    assert groups == ((0, 1, 2),)  # one kernel: the dequantized magnitudes are the reduction's prologue
    magnitudes = np.abs(dequantize_oracle(x, scale, zero, "SCALE_ZERO_POINT", quantized, T.FLOAT32))
    flat = np.moveaxis(magnitudes, axes, range(len(sizes) - len(axes), len(sizes)))
    flat = flat.reshape(*flat.shape[:len(sizes) - len(axes)], -1)
    expected = np.argmax(flat, axis=-1)  # the first of equal largest: INCREASING's lowest index
    assert got.reshape(-1).tolist() == expected.reshape(-1).tolist()


@pytest.mark.usefixtures("numpy_kernels")
@pytest.mark.parametrize("axes", [[1], [0], [0, 1]], ids=str)
@pytest.mark.parametrize("quantized", [T.UINT4, T.INT4], ids=lambda t: t.name)
def test_dequantize_abs_argmax_is_one_kernel(quantized: T, axes: list[int]) -> None:
    _argmax_case(quantized, axes)


def test_dequantize_abs_argmax_on_the_compiled_kernels() -> None:
    _argmax_case(T.INT4, [1])


def _quantize_case(quantized: T, float_type: T, sizes: Sequence[int], q_sizes: Sequence[int]) -> None:
    rng = np.random.default_rng(9)
    device = dml.Device("cpu", "6_3")
    graph = dml.Graph(device)
    x_desc = dml.TensorDesc(float_type, sizes)
    scale_desc, zero_desc = dml.TensorDesc(float_type, q_sizes), dml.TensorDesc(quantized, q_sizes)
    x = graph.input(0, x_desc)
    out = g.quantize(g.relu(x), [graph.input(1, scale_desc), graph.input(2, zero_desc)], "SCALE_ZERO_POINT")
    values = (rng.standard_normal(int(np.prod(sizes))) * 6).astype(NUMPY[float_type]).reshape(sizes)
    values.reshape(-1)[:3] = [2.5, -1.0, 0.75]  # a tie to even, a negative, a fraction
    scale, zero = _quantization(rng, float_type, quantized, q_sizes)
    (got,), groups = _both(graph, [out], [(x_desc, values), (scale_desc, scale), (zero_desc, zero)], fill=0xA5)
    assert groups == ((0, 1),)
    relu = np.maximum(values.astype(np.float32), np.float32(0)).astype(NUMPY[float_type])
    expected = quantize_oracle(relu, scale, zero, "SCALE_ZERO_POINT", quantized)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.usefixtures("numpy_kernels")
@pytest.mark.parametrize(("sizes", "q_sizes"), [((2, 8), (2, 2)), ((3, 5), (1, 5)), ((5,), (1,))], ids=str)
@pytest.mark.parametrize("quantized", [T.UINT4, T.INT4], ids=lambda t: t.name)
@pytest.mark.parametrize("float_type", [T.FLOAT32, T.FLOAT16], ids=lambda t: t.name)
def test_relu_quantize_to_4_bit_is_one_kernel(quantized: T, float_type: T, sizes: tuple, q_sizes: tuple) -> None:
    _quantize_case(quantized, float_type, sizes, q_sizes)


def test_relu_quantize_to_4_bit_on_the_compiled_kernels() -> None:
    _quantize_case(T.UINT4, T.FLOAT32, (2, 8), (2, 2))


def test_the_odd_last_nibble_is_kept() -> None:
    """A fused QUANTIZE writing an odd count of 4-bit elements leaves the last byte's high nibble as it was."""
    device = dml.Device("cpu", "6_3")
    graph = dml.Graph(device)
    x = graph.input(0, dml.TensorDesc("FLOAT32", [3]))
    out = g.quantize(g.relu(x), [graph.input(1, dml.TensorDesc("FLOAT32", [1]))], "SCALE", output_type="UINT4")
    compiled = graph.compile([out])
    assert compiled.plan.groups == ((0, 1),)
    target = device.buffer_from(np.full(4, 0xA5, np.uint8))
    compiled.execute([device.buffer_from(np.float32([1, -2, 3])), device.buffer_from(np.float32([1]))], [target])
    # relu, / 1, + UINT4's midpoint 8: [9, 8, 11]; byte 1's high nibble (0xA) kept
    assert target.to_numpy().tolist() == [0x89, 0xAB, 0xA5, 0xA5]


@pytest.mark.usefixtures("numpy_kernels")
def test_blocks_of_different_sizes_on_one_axis_are_not_one_kernel() -> None:
    """Two DEQUANTIZEs cutting one axis into blocks of 2 and of 4 have no common layout: the ADD reading both
    composes neither, and the values are the rule's."""
    rng = np.random.default_rng(2)
    device = dml.Device("cpu", "6_3")
    graph = dml.Graph(device)
    descs = [dml.TensorDesc("UINT4", [8]), dml.TensorDesc("FLOAT32", [4]), dml.TensorDesc("FLOAT32", [2])]
    x, s4, s2 = (graph.input(k, d) for k, d in enumerate(descs))
    total = g.add(g.dequantize(x, [s4], "SCALE"), g.dequantize(x, [s2], "SCALE"))
    q = rng.integers(0, 16, 8).astype(np.uint8)
    scales = [np.float32([0.5, 1, 2, 4]), np.float32([3, 0.25])]
    (got,), groups = _both(graph, [total], list(zip(descs, [q, *scales])))
    assert len(groups) == 3 or groups[-1] != (0, 1, 2)
    expected = np.add(dequantize_oracle(q, scales[0], None, "SCALE", T.UINT4, T.FLOAT32),
                      dequantize_oracle(q, scales[1], None, "SCALE", T.UINT4, T.FLOAT32), dtype=np.float32)
    assert got.tobytes() == expected.tobytes()


@st.composite
def _blocked_chains(draw: st.DrawFn) -> tuple:
    rank = draw(st.integers(1, 3))
    sizes = tuple(draw(st.sampled_from([1, 2, 3, 4, 6])) for _ in range(rank))
    q_sizes = tuple(draw(st.sampled_from([d for d in range(1, n + 1) if n % d == 0])) for n in sizes)
    quantized = draw(st.sampled_from([T.UINT4, T.INT4, T.UINT8, T.INT8]))
    float_type = draw(st.sampled_from([T.FLOAT32, T.FLOAT16]))
    kind = draw(st.sampled_from(["SCALE", "SCALE_ZERO_POINT"]))
    requantize = draw(st.booleans())
    return sizes, q_sizes, quantized, float_type, kind, requantize, draw(st.integers(0, 2**16))


@pytest.mark.usefixtures("numpy_kernels")
@settings(max_examples=max(1, settings().max_examples // 2), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(_blocked_chains())
def test_fused_blocked_chains_match_the_rule(case: tuple) -> None:
    """DEQUANTIZE -> CLIP (-> QUANTIZE with the same quantization tensors) over drawn sizes, blocks and types:
    one kernel, bit for bit the graph run unfused and the rule."""
    sizes, q_sizes, quantized, float_type, kind, requantize, seed = case
    rng = np.random.default_rng(seed)
    device = dml.Device("cpu", "6_3")
    graph = dml.Graph(device)
    values, descs = _dequantized(graph, dml.TensorDesc(quantized, sizes), q_sizes, float_type, kind)
    clipped = g.clip(values, LOW, HIGH)
    tensors = [graph.input(k, d) for k, d in enumerate(descs)][1:]
    out = g.quantize(clipped, tensors, kind, output_type=quantized) if requantize else clipped
    x = rng.integers(*RANGES[quantized], int(np.prod(sizes)), endpoint=True).astype(NUMPY[quantized]).reshape(sizes)
    scale, zero = _quantization(rng, float_type, quantized, q_sizes)
    arrays = [x, scale, zero][:len(descs)]
    (got,), groups = _both(graph, [out], list(zip(descs, arrays)))
    assert len(groups) == 1
    zp = zero if kind == "SCALE_ZERO_POINT" else None
    expected = np.clip(dequantize_oracle(x, scale, zp, kind, quantized, float_type).astype(np.float32), LOW, HIGH)
    expected = expected.astype(NUMPY[float_type])
    if requantize:
        expected = quantize_oracle(expected, scale, zp, kind, quantized)
    assert got.tobytes() == expected.tobytes()
