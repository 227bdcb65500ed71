"""A declared operator fuses with the existing ones with no code of its own: DEQUANTIZE_LINEAR -> ABS -> ARGMAX
and RELU -> QUANTIZE_LINEAR compile to one kernel each, bit-identical to their nodes run one by one (the CPU
here; the CUDA cases run where a GPU is)."""

from __future__ import annotations

import numpy as np
import pytest

import opendml as dml
from opendml import graph as g
from tests.conftest import CUDA_MISSING
from tests.graph_helpers import run_graph, run_node_by_node
from tests.helpers import edge_values, same_values

BACKENDS = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(CUDA_MISSING is not None,
                                                                 reason=f"no usable CUDA GPU: {CUDA_MISSING}"))]
SHAPE = (4, 32)


def _compare(device: dml.Device, outputs: list[g.Expression], inputs: list[np.ndarray], out_bytes: list[int]) -> None:
    graph = outputs[0].graph
    desc = graph.graph_desc(outputs)
    compiled = device.compile_graph(desc)
    assert len(compiled.plan.groups) == 1, compiled.plan  # one fused kernel
    raw = [np.ascontiguousarray(a).reshape(-1).view(np.uint8) for a in inputs]
    empty = [np.zeros(n, np.uint8) for n in out_bytes]
    fused = run_graph(device, desc, raw, empty)
    alone = run_node_by_node(device, desc, raw, empty)
    for a, b in zip(fused, alone):
        assert (a == b).all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_dequantize_abs_argmax_fuses_bit_for_bit(backend: str) -> None:
    device = dml.Device(backend)
    graph = dml.Graph(device)
    rng = np.random.default_rng(3)
    x = edge_values(dml.DataType.INT8, int(np.prod(SHAPE)), rng).reshape(SHAPE)
    scale = np.array([-0.5], np.float32)
    q = graph.input(0, dml.TensorDesc("INT8", SHAPE))
    s = g.reinterpret(graph.input(1, dml.TensorDesc("FLOAT32", [1])), sizes=SHAPE, strides=[0, 0])
    index = g.argmax(g.abs(g.dequantize_linear(q, s), scale_bias=dml.ScaleBias(1.0, -3.0)), [1])
    _compare(device, [index], [x, scale], [SHAPE[0] * 8])


@pytest.mark.parametrize("backend", BACKENDS)
def test_relu_quantize_fuses_bit_for_bit(backend: str) -> None:
    device = dml.Device(backend)
    graph = dml.Graph(device)
    x = edge_values(dml.DataType.FLOAT16, int(np.prod(SHAPE)), np.random.default_rng(4)).reshape(SHAPE)
    scale = np.array([0.25, 0.0], np.float16)  # one value read, four bytes bound
    inp = graph.input(0, dml.TensorDesc("FLOAT16", SHAPE))
    s = g.reinterpret(graph.input(1, dml.TensorDesc("FLOAT16", [1])), sizes=SHAPE, strides=[0, 0])
    relu = g.relu(inp)
    quantized = g.quantize_linear(relu, s, output_type="INT8")
    _compare(device, [quantized, relu], [x, scale], [int(np.prod(SHAPE)), int(np.prod(SHAPE)) * 2])
    assert same_values(np.asarray(dml.relu(x)), np.where(x < 0, np.float16(0), x))  # NaN and -0.0 kept


@pytest.mark.parametrize("backend", BACKENDS)
def test_bit_count_dequantize_shrink_argmax_fuses_bit_for_bit(backend: str) -> None:
    """ELEMENT_WISE_BIT_COUNT's UINT8 counts dequantized, through ACTIVATION_SHRINK, into ARGMAX: one kernel."""
    device = dml.Device(backend)
    graph = dml.Graph(device)
    x = edge_values(dml.DataType.INT32, int(np.prod(SHAPE)), np.random.default_rng(5)).reshape(SHAPE)
    scale = np.array([0.75], np.float32)
    q = graph.input(0, dml.TensorDesc("INT32", SHAPE))
    s = g.reinterpret(graph.input(1, dml.TensorDesc("FLOAT32", [1])), sizes=SHAPE, strides=[0, 0])
    shrunk = g.shrink(g.dequantize_linear(g.bit_count(q), s), bias=0.5, threshold=12.0)
    _compare(device, [g.argmax(shrunk, [1]), shrunk], [x, scale], [SHAPE[0] * 8, int(np.prod(SHAPE)) * 4])
