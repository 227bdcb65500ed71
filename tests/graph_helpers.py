"""Helpers of the graph tests: a small graph of three nodes, and node-by-node execution (the reference)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import opendml as dml
from opendml import TensorDesc


def head(device: dml.Device, scale: TensorDesc | None = None) -> dml.GraphDesc:
    """DEQUANTIZE_LINEAR -> CLIP -> ARGMIN over UINT8 [2, 3], the CLIP's result a second graph output."""
    x, f = TensorDesc("UINT8", [2, 3]), TensorDesc("FLOAT32", [2, 3])
    scale = TensorDesc("FLOAT32", [2, 3], [0, 0]) if scale is None else scale
    nodes = [
        dml.OperatorNode(device.create_operator(dml.ElementWiseDequantizeLinearDesc(x, scale, x, f))),
        dml.OperatorNode(device.create_operator(dml.ElementWiseClipDesc(f, f, -1.0, 2.0))),
        dml.OperatorNode(device.create_operator(dml.ArgMinDesc(f, TensorDesc("INT64", [2, 1]), [1]))),
    ]
    return dml.GraphDesc(3, 2, nodes,
                         [dml.InputEdge(0, 0, 0), dml.InputEdge(1, 0, 1), dml.InputEdge(2, 0, 2)],
                         [dml.OutputEdge(2, 0, 0), dml.OutputEdge(1, 0, 1)],
                         [dml.IntermediateEdge(0, 0, 1, 0), dml.IntermediateEdge(1, 0, 2, 0)])


def output_desc(graph: dml.GraphDesc, k: int) -> TensorDesc:
    """The description of graph output ``k``: its producer's output tensor."""
    edge = next(e for e in graph.output_edges if e.graph_output_index == k)
    operator = graph.nodes[edge.from_node_index].operator  # type: ignore[union-attr]
    return operator.tensor(operator.definition.schema.outputs[edge.from_node_output_index].name)


def run_node_by_node(device: dml.Device, graph: dml.GraphDesc, inputs: Sequence[np.ndarray | None],
                     outputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Each node through its own compiled operator, in index order of a topological sort, over separate
    buffers: a node output feeding graph outputs lives in (a copy of) each of them, any other in a
    zero-filled buffer of its TotalTensorSizeInBytes. Returns the graph outputs' bytes."""
    in_buffers = [None if raw is None else device.buffer_from(raw) for raw in inputs]
    out_buffers = [device.buffer_from(raw) for raw in outputs]
    values: dict[tuple[int, int], dml.Buffer] = {}
    readers = {(e.to_node_index, e.to_node_input_index): e for e in (*graph.input_edges, *graph.intermediate_edges)}
    pending = list(range(len(graph.nodes)))
    while pending:
        for node in pending:
            edges = [e for (n, _), e in readers.items() if n == node and isinstance(e, dml.IntermediateEdge)]
            if all((e.from_node_index, e.from_node_output_index) in values for e in edges):
                break
        pending.remove(node)
        item = graph.nodes[node]
        if isinstance(item, dml.ConstantNode):
            data = item.data if isinstance(item.data, bytes) else np.ascontiguousarray(item.data).tobytes()
            values[(node, 0)] = device.buffer_from(np.frombuffer(data, np.uint8))
            continue
        operator = item.operator
        compiled = device.compile_operator(operator)
        schema = operator.definition.schema
        bindings: list[dml.Buffer | None] = []
        for index in range(len(schema.inputs)):
            edge = readers.get((node, index))
            if edge is None:
                bindings.append(None)
            elif isinstance(edge, dml.InputEdge):
                bindings.append(in_buffers[edge.graph_input_index])
            else:
                bindings.append(values[(edge.from_node_index, edge.from_node_output_index)])
        sinks = sorted(e.graph_output_index for e in graph.output_edges if e.from_node_index == node)
        if sinks:
            for k in sinks:
                compiled.execute(bindings, [out_buffers[k]])
            values[(node, 0)] = out_buffers[sinks[0]]
        else:
            out = device.create_buffer(operator.tensor(schema.outputs[0].name).total_tensor_size_in_bytes)
            compiled.execute(bindings, [out])
            values[(node, 0)] = out
    return [b.to_numpy() for b in out_buffers]


def run_graph(device: dml.Device, graph: dml.GraphDesc, inputs: Sequence[np.ndarray | None],
              outputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The graph compiled and executed once over copies of these bytes; returns the outputs' bytes."""
    compiled = device.compile_graph(graph)
    out_buffers = [device.buffer_from(raw) for raw in outputs]
    compiled.execute([None if raw is None else device.buffer_from(raw) for raw in inputs], out_buffers)
    return [b.to_numpy() for b in out_buffers]
