"""Every rule of DML_GRAPH_DESC is checked at compile_graph, each failure naming the node or edge."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

import opendml as dml
from opendml import TensorDesc
from tests.graph_helpers import head

F = TensorDesc("FLOAT32", [2, 3])


@pytest.fixture
def cpu() -> dml.Device:
    return dml.Device("cpu")


def refused(device: dml.Device, graph: object, text: str, error: type = dml.InvalidArgumentError) -> None:
    with pytest.raises(error, match=f"^{re.escape(text)}$"):
        device.compile_graph(graph)  # type: ignore[arg-type]


def clip_node(device: dml.Device, desc: TensorDesc = F) -> dml.OperatorNode:
    return dml.OperatorNode(device.create_operator(dml.ElementWiseClipDesc(desc, desc, -1.0, 1.0)))


def test_edge_into_an_input_the_operator_does_not_have(cpu: dml.Device) -> None:
    graph = head(cpu)
    bad = dataclasses.replace(graph, intermediate_edges=[graph.intermediate_edges[0], dml.IntermediateEdge(1, 0, 2, 3)])
    refused(cpu, bad, "GraphDesc: IntermediateEdges[1].ToNodeInputIndex must be < 1 (ARGMIN has 1 input); got 3.")


def test_indices_in_range(cpu: dml.Device) -> None:
    graph = head(cpu)
    refused(cpu, dataclasses.replace(graph, input_edges=[*graph.input_edges[:2], dml.InputEdge(3, 0, 2)]),
            "GraphDesc: InputEdges[2].GraphInputIndex must be < 3 (InputCount); got 3.")
    refused(cpu, dataclasses.replace(graph, input_edges=[*graph.input_edges[:2], dml.InputEdge(2, 7, 2)]),
            "GraphDesc: InputEdges[2].ToNodeIndex must be < 3 (the node count); got 7.")
    refused(cpu, dataclasses.replace(graph, input_edges=[*graph.input_edges[:2], dml.InputEdge(2, 0, 3)]),
            "GraphDesc: InputEdges[2].ToNodeInputIndex must be < 3 (ELEMENT_WISE_DEQUANTIZE_LINEAR has 3 inputs); "
            "got 3.")
    refused(cpu, dataclasses.replace(graph, output_edges=[dml.OutputEdge(2, 1, 0), graph.output_edges[1]]),
            "GraphDesc: OutputEdges[0].FromNodeOutputIndex must be < 1 (ARGMIN has 1 output); got 1.")
    refused(cpu, dataclasses.replace(graph, output_edges=[dml.OutputEdge(2, 0, 2), graph.output_edges[1]]),
            "GraphDesc: OutputEdges[0].GraphOutputIndex must be < 2 (OutputCount); got 2.")
    refused(cpu, dataclasses.replace(graph, intermediate_edges=[dml.IntermediateEdge(-1, 0, 1, 0)]),
            "GraphDesc: IntermediateEdges[0].FromNodeIndex must not be negative; got -1.")
    refused(cpu, dataclasses.replace(graph, intermediate_edges=[dml.IntermediateEdge(0, 0, 1.0, 0)]),
            "GraphDesc: IntermediateEdges[0].ToNodeIndex must be an integer; got 1.0.")


def test_every_required_input_has_exactly_one_edge(cpu: dml.Device) -> None:
    graph = head(cpu)
    refused(cpu, dataclasses.replace(graph, intermediate_edges=graph.intermediate_edges[:1]),
            "GraphDesc: Nodes[2].InputTensor must have exactly one incoming edge (required); got 0.")
    refused(cpu, dataclasses.replace(graph, input_edges=[*graph.input_edges, dml.InputEdge(0, 1, 0)]),
            "GraphDesc: Nodes[1].InputTensor must have exactly one incoming edge (required); "
            "got 2 (InputEdges[3], IntermediateEdges[0]).")


def test_an_optional_input_has_one_edge_when_given_and_none_when_absent(cpu: dml.Device) -> None:
    graph = head(cpu)
    refused(cpu, dataclasses.replace(graph, input_edges=graph.input_edges[:2]),
            "GraphDesc: Nodes[0].ZeroPointTensor must have exactly one incoming edge (an optional input the "
            "operator was created with); got 0.")
    x = TensorDesc("UINT8", [2, 3])
    no_zero_point = cpu.create_operator(dml.ElementWiseDequantizeLinearDesc(x, TensorDesc("FLOAT32", [2, 3], [0, 0]),
                                                                             None, F))
    bad = dataclasses.replace(graph, nodes=[dml.OperatorNode(no_zero_point), *graph.nodes[1:]])
    refused(cpu, bad, "GraphDesc: Nodes[0].ZeroPointTensor must have no incoming edge (the operator was created "
            "without it); got 1 (InputEdges[2]).")
    cpu.compile_graph(dataclasses.replace(bad, input_edges=graph.input_edges[:2]))  # at most one: none is fine


def test_every_graph_output_has_exactly_one_edge(cpu: dml.Device) -> None:
    graph = head(cpu)
    refused(cpu, dataclasses.replace(graph, output_edges=graph.output_edges[:1]),
            "GraphDesc: Outputs[1] must have exactly one OutputEdge; got 0.")
    refused(cpu, dataclasses.replace(graph, output_edges=[*graph.output_edges, dml.OutputEdge(1, 0, 0)]),
            "GraphDesc: Outputs[0] must have exactly one OutputEdge; got 2 (OutputEdges[0], OutputEdges[2]).")


def test_the_graph_is_a_dag(cpu: dml.Device) -> None:
    nodes = [clip_node(cpu), clip_node(cpu), clip_node(cpu)]
    graph = dml.GraphDesc(0, 1, nodes, output_edges=[dml.OutputEdge(2, 0, 0)],
                          intermediate_edges=[dml.IntermediateEdge(0, 0, 1, 0), dml.IntermediateEdge(1, 0, 0, 0),
                                              dml.IntermediateEdge(1, 0, 2, 0)])
    refused(cpu, graph, "GraphDesc: Nodes must form a DAG (no cycle of edges); got the cycle "
            "Nodes[0] -> Nodes[1] -> Nodes[0].")
    loop = dml.GraphDesc(0, 1, nodes[:1], output_edges=[dml.OutputEdge(0, 0, 0)],
                         intermediate_edges=[dml.IntermediateEdge(0, 0, 0, 0)])
    refused(cpu, loop, "GraphDesc: Nodes must form a DAG (no cycle of edges); got the cycle Nodes[0] -> Nodes[0].")


def test_an_intermediate_edge_joins_one_data_type_and_sizes(cpu: dml.Device) -> None:
    half = TensorDesc("FLOAT16", [2, 3])
    graph = dml.GraphDesc(1, 1, [clip_node(cpu, half), clip_node(cpu)], [dml.InputEdge(0, 0, 0)],
                          [dml.OutputEdge(1, 0, 0)], [dml.IntermediateEdge(0, 0, 1, 0)])
    refused(cpu, graph, "GraphDesc: IntermediateEdges[0] must join tensors of the same DataType "
            "(Nodes[0].OutputTensor is FLOAT16); got Nodes[1].InputTensor FLOAT32.")
    graph = dataclasses.replace(graph, nodes=[clip_node(cpu, TensorDesc("FLOAT32", [3, 2])), clip_node(cpu)])
    refused(cpu, graph, "GraphDesc: IntermediateEdges[0] must join tensors of the same Sizes "
            "(Nodes[0].OutputTensor has [3, 2]); got Nodes[1].InputTensor [2, 3].")


def test_a_reader_stays_inside_the_intermediate(cpu: dml.Device) -> None:
    wide = TensorDesc("FLOAT32", [2, 3], [4, 1])  # padded: 28 bytes where the producer wrote 24
    reader = cpu.create_operator(dml.ElementWiseClipDesc(wide, F, -1.0, 1.0))
    graph = dml.GraphDesc(1, 1, [clip_node(cpu), dml.OperatorNode(reader)], [dml.InputEdge(0, 0, 0)],
                          [dml.OutputEdge(1, 0, 0)], [dml.IntermediateEdge(0, 0, 1, 0)])
    refused(cpu, graph, "GraphDesc: IntermediateEdges[0] must not read past Nodes[0].OutputTensor "
            "(TotalTensorSizeInBytes 24); got Nodes[1].InputTensor.TotalTensorSizeInBytes 28.")
    transposed = cpu.create_operator(dml.ElementWiseClipDesc(TensorDesc("FLOAT32", [2, 3], [1, 2]), F, -1.0, 1.0))
    cpu.compile_graph(dataclasses.replace(graph, nodes=[graph.nodes[0], dml.OperatorNode(transposed)]))


def test_operators_of_another_device_or_level_are_refused(cpu: dml.Device) -> None:
    graph = head(cpu)
    older = head(dml.Device("cpu", "6_2"))
    refused(cpu, dataclasses.replace(graph, nodes=[older.nodes[0], *graph.nodes[1:]]),
            "GraphDesc: Nodes[0].Operator must be created on Device('cpu', '6_4'), the device compiling the graph; "
            "got an operator created on Device('cpu', '6_2').")
    twin = head(dml.Device("cpu", threads=1))  # prints as `cpu` does: said to be another object
    refused(cpu, dataclasses.replace(graph, nodes=[twin.nodes[0], *graph.nodes[1:]]),
            "GraphDesc: Nodes[0].Operator must be created on Device('cpu', '6_4'), the device compiling the graph; "
            "got an operator created on another Device object (1 thread).")
    refused(cpu, dataclasses.replace(graph, nodes=[graph.nodes[0], dml.OperatorNode("CLIP"), graph.nodes[2]]),  # type: ignore[arg-type]
            "GraphDesc: Nodes[1].Operator must be an Operator from Device.create_operator; got 'CLIP'.")


def test_compile_graph_needs_feature_level_2_1() -> None:
    device = dml.Device("cpu", "2_0")
    graph = dml.GraphDesc(1, 1, [clip_node(device, TensorDesc("FLOAT32", [1, 1, 2, 3]))], [dml.InputEdge(0, 0, 0)],
                          [dml.OutputEdge(0, 0, 0)])
    with pytest.raises(dml.UnsupportedFeatureLevelError, match=re.escape(
            "GraphDesc: FeatureLevel must be at least 2_1, where CompileGraph was introduced; got 2_0.")) as caught:
        device.compile_graph(graph)
    assert caught.value.required_level == dml.FeatureLevel.FL_2_1
    at_2_1 = dml.Device("cpu", "2_1")
    at_2_1.compile_graph(dataclasses.replace(graph, nodes=[clip_node(at_2_1, TensorDesc("FLOAT32", [1, 1, 2, 3]))]))


def test_constant_nodes_need_feature_level_6_2() -> None:
    device = dml.Device("cpu", "6_1")
    graph = dml.GraphDesc(0, 1, [dml.ConstantNode(np.zeros(6, np.float32)), clip_node(device)],
                          output_edges=[dml.OutputEdge(1, 0, 0)], intermediate_edges=[dml.IntermediateEdge(0, 0, 1, 0)])
    with pytest.raises(dml.UnsupportedFeatureLevelError, match=re.escape(
            "GraphDesc: Nodes[0] must be an OperatorNode below feature level 6_2, where ConstantNode was "
            "introduced; got a ConstantNode at 6_1.")):
        device.compile_graph(graph)


def test_constant_nodes_feed_inputs_and_never_outputs(cpu: dml.Device) -> None:
    graph = dml.GraphDesc(0, 1, [dml.ConstantNode(np.zeros(5, np.float32)), clip_node(cpu)],
                          output_edges=[dml.OutputEdge(1, 0, 0)], intermediate_edges=[dml.IntermediateEdge(0, 0, 1, 0)])
    refused(cpu, graph, "GraphDesc: IntermediateEdges[0] must not read past the data of Nodes[0] (20 bytes); "
            "got Nodes[1].InputTensor.TotalTensorSizeInBytes 24.")
    refused(cpu, dataclasses.replace(graph, output_edges=[dml.OutputEdge(0, 0, 0)]),
            "GraphDesc: OutputEdges[0].FromNodeIndex must name an operator node (Nodes[0] is a ConstantNode; a "
            "graph output is computed by an operator); got 0.")
    refused(cpu, dataclasses.replace(graph, intermediate_edges=[dml.IntermediateEdge(1, 0, 0, 0)]),
            "GraphDesc: IntermediateEdges[0].ToNodeIndex must name an operator node (Nodes[0] is a ConstantNode, "
            "which has no inputs); got 0.")
    refused(cpu, dataclasses.replace(graph, nodes=[dml.ConstantNode(b""), graph.nodes[1]]),
            "GraphDesc: Nodes[0].Data must hold at least one byte; got 0 bytes.")
    refused(cpu, dataclasses.replace(graph, nodes=[dml.ConstantNode(["a"]), graph.nodes[1]]),
            "GraphDesc: Nodes[0].Data must be bytes or an array of a DirectML data type; got list.")


def test_counts_and_lists(cpu: dml.Device) -> None:
    graph = head(cpu)
    refused(cpu, dataclasses.replace(graph, output_count=0), "GraphDesc: OutputCount must be an integer of at least 1; "
            "got 0.")
    refused(cpu, dataclasses.replace(graph, input_count=-1), "GraphDesc: InputCount must be an integer of at least 0; "
            "got -1.")
    refused(cpu, dataclasses.replace(graph, nodes=[]), "GraphDesc: Nodes must hold at least one node; got none.")
    refused(cpu, dataclasses.replace(graph, input_edges=[dml.OutputEdge(0, 0, 0)]),
            "GraphDesc: InputEdges[0] must be an InputEdge; got OutputEdge.")
    refused(cpu, "graph", "Device: graph_desc must be a GraphDesc; got str.")
