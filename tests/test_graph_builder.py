"""The DirectMLX-style builder: expressions, operators created at once, one GraphDesc, compiled by compile_graph."""

from __future__ import annotations

import re

import numpy as np
import pytest

import opendml as dml
from opendml import TensorDesc
from opendml import graph as g


def test_quantized_head_end_to_end(device: dml.Device) -> None:
    graph = dml.Graph(device)
    q = graph.input(0, TensorDesc("INT8", [2, 3]))
    scale = g.reinterpret(graph.input(1, TensorDesc("FLOAT32", [3])), sizes=[2, 3], strides=[0, 1])  # per column
    zero_point = g.reinterpret(graph.input(2, TensorDesc("INT8", [1])), sizes=[2, 3], strides=[0, 0])
    clipped = g.clip(g.dequantize_linear(q, scale, zero_point), -1.0, 4.0)
    index = g.argmin(clipped, [1], "DECREASING", "UINT32")
    assert index.desc == TensorDesc("UINT32", [2, 1])
    compiled = graph.compile([index, clipped])
    assert isinstance(compiled, dml.CompiledGraph)
    assert [type(n.operator.desc).__name__ for n in compiled.graph_desc.nodes] == [  # type: ignore[union-attr]
        "ElementWiseDequantizeLinearDesc", "ElementWiseClipDesc", "ArgMinDesc"]
    buffers = [device.buffer_from(np.array([1, 5, -3, 9, 0, 2, 0, 0], np.int8)),
               device.buffer_from(np.array([1.0, 0.5, 2.0], np.float32)), device.buffer_from(np.array([1], np.int32))]
    out_index, out_clipped = device.create_buffer(8), device.create_buffer(24)
    compiled.execute(buffers, [out_index, out_clipped])
    # (q - 1) * scale: [[0, 2, -8], [8, -0.5, 2]] -> clipped [[0, 2, -1], [4, -0.5, 2]]
    assert out_clipped.to_numpy().view(np.float32).tolist() == [0.0, 2.0, -1.0, 4.0, -0.5, 2.0]
    assert out_index.to_numpy().view(np.uint32).tolist() == [2, 1]


def test_quantize_linear_output_type_is_the_zero_points_else_asked_else_uint8() -> None:
    device = dml.Device("cpu")
    graph = dml.Graph(device)
    x = graph.input(0, TensorDesc("FLOAT32", [4]))
    scale = g.reinterpret(graph.input(1, TensorDesc("FLOAT32", [1])), sizes=[4], strides=[0])
    zero_point = g.reinterpret(graph.input(2, TensorDesc("INT8", [1])), sizes=[4], strides=[0])
    assert g.quantize_linear(x, scale).desc == TensorDesc("UINT8", [4])
    assert g.quantize_linear(x, scale, output_type="INT8").desc == TensorDesc("INT8", [4])
    with_zero_point = g.quantize_linear(x, scale, zero_point)
    assert with_zero_point.desc == TensorDesc("INT8", [4])
    with pytest.raises(dml.InvalidArgumentError, match=re.escape(
            "ZeroPointTensor.DataType must equal OutputTensor.DataType (UINT8); got INT8.")):
        g.quantize_linear(x, scale, zero_point, output_type="UINT8")
    compiled = graph.compile([with_zero_point])
    out = device.create_buffer(4)
    compiled.execute([device.buffer_from(np.array([2.5, -2.5, 300.0, np.nan], np.float32)),
                      device.buffer_from(np.array([0.5], np.float32)), device.buffer_from(np.array([-3, 0, 0, 0], np.int8))],
                     [out])
    assert out.to_numpy().view(np.int8).tolist() == [2, -8, 127, -3]  # 5 - 3, -5 - 3, 600 - 3 saturated, NaN


def test_clip1_threshold_and_constants() -> None:
    device = dml.Device()
    graph = dml.Graph(device)
    x = graph.input(0, TensorDesc("INT32", [4]))
    y = g.threshold(g.clip1(x, -2147483645, 2147483645), 0.0)
    bounds = graph.constant(np.array([0.0, 0.5, 1.0, 8.0], np.float32))
    z = g.clip(bounds, 0.25, 2.0, scale_bias=(2.0, 0.0))
    compiled = graph.compile([y, z])
    assert compiled.binding_properties == dml.BindingProperties(0, 16)  # CLIP1 -> THRESHOLD fused: no intermediate
    out_y, out_z = device.create_buffer(16), device.create_buffer(16)
    compiled.execute([device.buffer_from(np.array([-2**31, -7, 5, 2**31 - 1], np.int32))], [out_y, out_z])
    assert out_y.to_numpy().view(np.int32).tolist() == [0, 0, 5, 2147483645]
    assert out_z.to_numpy().view(np.float32).tolist() == [0.25, 1.0, 2.0, 2.0]


def test_a_bad_description_fails_at_its_line() -> None:
    graph = dml.Graph(dml.Device("cpu", "3_0"))
    x = graph.input(0, TensorDesc("INT64", [4]))
    with pytest.raises(dml.UnsupportedFeatureLevelError, match=r"^ELEMENT_WISE_CLIP: InputTensor.DataType"):
        g.clip(x, 0.0, 1.0)
    with pytest.raises(dml.UnsupportedFeatureLevelError, match=re.escape(
            "Graph: constant needs feature level 6_2 (ConstantNode); got 3_0.")):
        graph.constant(np.zeros(4, np.float32))
    y = graph.input(1, TensorDesc("FLOAT32", [2, 3]))
    with pytest.raises(dml.InvalidArgumentError, match=re.escape("ARGMIN: Axes[0] must be an integer in [0, 1]; got 2.")):
        g.argmin(y, [2])


def test_reinterpret_rules() -> None:
    graph = dml.Graph(dml.Device())
    x = graph.input(0, TensorDesc("FLOAT32", [2, 3]))
    assert g.reinterpret(x, sizes=[3, 2]).desc == TensorDesc("FLOAT32", [3, 2])
    assert g.reinterpret(x, data_type="INT32").desc == TensorDesc("INT32", [2, 3])
    with pytest.raises(dml.InvalidArgumentError, match=re.escape(
            "reinterpret: TotalTensorSizeInBytes must be at most x's (24); got 28.")):
        g.reinterpret(x, sizes=[7])
    y = g.clip(x, 0.0, 1.0)
    assert g.reinterpret(y, strides=[1, 2]).desc.strides == (1, 2)  # a node's output, read transposed
    with pytest.raises(dml.InvalidArgumentError, match=re.escape(
            "reinterpret: Sizes and DataType must stay [2, 3] FLOAT32 for a node's output (an intermediate edge "
            "joins tensors of the same DataType and Sizes); got [6] FLOAT32.")):
        g.reinterpret(y, sizes=[6])


def test_outputs_must_be_computed_by_an_operator() -> None:
    graph = dml.Graph(dml.Device())
    x = graph.input(0, TensorDesc("FLOAT32", [2]))
    with pytest.raises(dml.InvalidArgumentError, match=re.escape(
            "Graph: outputs[0] must be computed by an operator (a graph output wired straight to a graph input or "
            "a constant is refused, as DirectML does); got graph input 0.")):
        graph.compile([x])
    other = dml.Graph(graph.device)
    with pytest.raises(dml.InvalidArgumentError, match=r"^Graph: expression must belong to this graph"):
        other.node(dml.ElementWiseClipDesc(x.desc, x.desc, 0.0, 1.0), [x])
    with pytest.raises(dml.InvalidArgumentError, match=re.escape(
            "Graph: input 0 desc must be the one it was first given")):
        graph.input(0, TensorDesc("FLOAT16", [2]))


def test_only_the_nodes_the_outputs_need_are_kept() -> None:
    graph = dml.Graph(dml.Device())
    x = graph.input(0, TensorDesc("FLOAT32", [2]))
    g.threshold(x, 0.0)  # never an output: left out
    y = g.clip(x, 0.0, 1.0)
    desc = graph.graph_desc([y])
    assert len(desc.nodes) == 1 and desc.input_edges == [dml.InputEdge(0, 0, 0)]
    assert desc.output_edges == [dml.OutputEdge(0, 0, 0)]
