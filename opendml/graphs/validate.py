"""Every rule of DML_GRAPH_DESC, checked at ``Device.compile_graph``; failures name the node or edge.

Messages follow opendml's one pattern, owned by ``GraphDesc``:
``GraphDesc: IntermediateEdges[2].ToNodeInputIndex must be < 1 (ARGMIN has 1 input); got 3.``
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..binding import other_device
from ..buffer import host_array
from ..errors import OpenDMLError, UnsupportedFeatureLevelError, invalid, message
from ..feature_levels import FeatureLevel
from ..operator import Operator
from ..tensor import TensorDesc
from .desc import ConstantNode, GraphDesc, InputEdge, IntermediateEdge, OperatorNode, OutputEdge

if TYPE_CHECKING:
    from ..device import Device

OWNER = "GraphDesc"
GRAPH_LEVEL = FeatureLevel.FL_2_1  # IDMLDevice1::CompileGraph
CONSTANT_LEVEL = FeatureLevel.FL_6_2  # DML_GRAPH_NODE_TYPE_CONSTANT

Edge = InputEdge | OutputEdge | IntermediateEdge


@dataclass(frozen=True)
class Source:
    """Where a node input reads: graph input ``index`` (``node`` is None), or output ``index`` of ``node``."""

    node: int | None
    index: int


@dataclass(frozen=True)
class CheckedGraph:
    """A graph that passed every rule, with its edges resolved into lookups."""

    desc: GraphDesc
    operators: dict[int, Operator]  # node index -> operator (operator nodes only)
    constants: dict[int, bytes]  # node index -> data (constant nodes only)
    sources: dict[tuple[int, int], Source]  # (node, input index) -> what it reads
    graph_outputs: dict[tuple[int, int], list[int]]  # (node, output index) -> graph outputs, increasing
    readers: dict[tuple[int, int], list[tuple[int, int]]]  # (node, output index) -> (node, input index)
    order: tuple[int, ...]  # the nodes, each after every node it reads

    def input_desc(self, node: int, index: int) -> TensorDesc:
        return self.operators[node].tensor(self.operators[node].definition.schema.inputs[index].name)

    def output_desc(self, node: int, index: int) -> TensorDesc:
        return self.operators[node].tensor(self.operators[node].definition.schema.outputs[index].name)


def check_graph(device: Device, desc: object) -> CheckedGraph:
    """Check ``desc`` against every rule at ``device``'s feature level."""
    if device.feature_level < GRAPH_LEVEL:
        raise UnsupportedFeatureLevelError(message(
            OWNER, "FeatureLevel", f"must be at least {GRAPH_LEVEL}, where CompileGraph was introduced",
            device.feature_level.label), GRAPH_LEVEL)
    if not isinstance(desc, GraphDesc):
        raise invalid("Device", "graph_desc", "must be a GraphDesc", type(desc).__name__)
    input_count = _count(desc.input_count, "InputCount", 0)
    output_count = _count(desc.output_count, "OutputCount", 1)
    nodes = _items(desc.nodes, "Nodes", (OperatorNode, ConstantNode))
    if not nodes:
        raise invalid(OWNER, "Nodes", "must hold at least one node", "none")
    operators, constants = _check_nodes(device, nodes)
    input_edges = _items(desc.input_edges, "InputEdges", (InputEdge,))
    output_edges = _items(desc.output_edges, "OutputEdges", (OutputEdge,))
    intermediate_edges = _items(desc.intermediate_edges, "IntermediateEdges", (IntermediateEdge,))
    edges = _Edges(nodes, operators, input_count, output_count)
    sources = edges.incoming(input_edges, intermediate_edges)
    graph_outputs = edges.outgoing(output_edges)
    readers: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for k, edge in enumerate(intermediate_edges):
        _check_intermediate(k, edge, operators, constants)
        readers.setdefault((edge.from_node_index, edge.from_node_output_index), []).append(
            (edge.to_node_index, edge.to_node_input_index))
    order = _topological_order(len(nodes), sources)
    return CheckedGraph(desc, operators, constants, sources, graph_outputs, readers, order)


def _count(value: object, field: str, lower: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < lower:
        raise invalid(OWNER, field, f"must be an integer of at least {lower}", repr(value))
    return int(value)


def _items(values: object, field: str, kinds: tuple[type, ...]) -> list:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise invalid(OWNER, field, "must be a list", type(values).__name__)
    wanted = " or ".join(kind.__name__ for kind in kinds)
    for k, item in enumerate(values):
        if not isinstance(item, kinds):
            raise invalid(OWNER, f"{field}[{k}]", f"must be an {wanted}", type(item).__name__)
    return list(values)


def _check_nodes(device: Device, nodes: list) -> tuple[dict[int, Operator], dict[int, bytes]]:
    operators: dict[int, Operator] = {}
    constants: dict[int, bytes] = {}
    for k, node in enumerate(nodes):
        if isinstance(node, OperatorNode):
            operators[k] = _check_operator(device, k, node.operator)
        else:
            constants[k] = _check_constant(device, k, node.data)
    return operators, constants


def _check_operator(device: Device, k: int, operator: object) -> Operator:
    field = f"Nodes[{k}].Operator"
    if not isinstance(operator, Operator):
        raise invalid(OWNER, field, "must be an Operator from Device.create_operator", repr(operator))
    if operator.device is not device:
        raise invalid(OWNER, field, f"must be created on {device}, the device compiling the graph",
                      f"an operator created on {other_device(operator.device, device)}")
    return operator


def _check_constant(device: Device, k: int, data: object) -> bytes:
    if device.feature_level < CONSTANT_LEVEL:
        raise UnsupportedFeatureLevelError(message(
            OWNER, f"Nodes[{k}]", f"must be an OperatorNode below feature level {CONSTANT_LEVEL}, where "
            "ConstantNode was introduced", f"a ConstantNode at {device.feature_level}"), CONSTANT_LEVEL)
    try:
        raw = host_array(data)
    except OpenDMLError as error:
        raise invalid(OWNER, f"Nodes[{k}].Data", "must be bytes or an array of a DirectML data type",
                      type(data).__name__) from error
    if raw.nbytes == 0:
        raise invalid(OWNER, f"Nodes[{k}].Data", "must hold at least one byte", "0 bytes")
    return raw.tobytes()


class _Edges:
    """The index rules of edges, and the one-edge-per-input and one-edge-per-output rules."""

    def __init__(self, nodes: list, operators: dict[int, Operator], input_count: int, output_count: int) -> None:
        self.nodes = nodes
        self.operators = operators
        self.input_count = input_count
        self.output_count = output_count

    def incoming(self, input_edges: list[InputEdge], intermediate_edges: list[IntermediateEdge]
                 ) -> dict[tuple[int, int], Source]:
        """Each operator input's one source, after checking every index of the edges into nodes."""
        into: dict[tuple[int, int], list[tuple[str, Source]]] = {}
        for k, edge in enumerate(input_edges):
            name = f"InputEdges[{k}]"
            graph_input = _index(edge.graph_input_index, f"{name}.GraphInputIndex", self.input_count, "InputCount")
            target = self._target(name, edge.to_node_index, edge.to_node_input_index)
            into.setdefault(target, []).append((name, Source(None, graph_input)))
        for k, between in enumerate(intermediate_edges):
            name = f"IntermediateEdges[{k}]"
            node, output = self._origin(name, between.from_node_index, between.from_node_output_index)
            target = self._target(name, between.to_node_index, between.to_node_input_index)
            into.setdefault(target, []).append((name, Source(node, output)))
        sources: dict[tuple[int, int], Source] = {}
        for node, operator in self.operators.items():
            for index, field in enumerate(operator.definition.schema.inputs):
                edges = into.get((node, index), [])
                names = f"{len(edges)} ({', '.join(name for name, _ in edges)})" if edges else "0"
                if operator.tensors[field.name] is None:
                    if edges:
                        raise invalid(OWNER, f"Nodes[{node}].{field.name}", "must have no incoming edge (the "
                                      "operator was created without it)", names)
                    continue
                if len(edges) != 1:
                    why = "an optional input the operator was created with" if field.optional else "required"
                    raise invalid(OWNER, f"Nodes[{node}].{field.name}", f"must have exactly one incoming edge "
                                  f"({why})", names)
                sources[(node, index)] = edges[0][1]
        return sources

    def outgoing(self, output_edges: list[OutputEdge]) -> dict[tuple[int, int], list[int]]:
        """Each node output's graph outputs, after checking that every graph output has one edge."""
        into: dict[int, list[str]] = {}
        graph_outputs: dict[tuple[int, int], list[int]] = {}
        for k, edge in enumerate(output_edges):
            name = f"OutputEdges[{k}]"
            node, output = self._origin(name, edge.from_node_index, edge.from_node_output_index)
            if node not in self.operators:
                raise invalid(OWNER, f"{name}.FromNodeIndex", f"must name an operator node (Nodes[{node}] is a "
                              "ConstantNode; a graph output is computed by an operator)", node)
            graph_output = _index(edge.graph_output_index, f"{name}.GraphOutputIndex", self.output_count,
                                  "OutputCount")
            into.setdefault(graph_output, []).append(name)
            graph_outputs.setdefault((node, output), []).append(graph_output)
        for k in range(self.output_count):
            edges = into.get(k, [])
            if len(edges) != 1:
                got = f"{len(edges)} ({', '.join(edges)})" if edges else "0"
                raise invalid(OWNER, f"Outputs[{k}]", "must have exactly one OutputEdge", got)
        return {key: sorted(value) for key, value in graph_outputs.items()}

    def _target(self, name: str, node: object, index: object) -> tuple[int, int]:
        to_node = _index(node, f"{name}.ToNodeIndex", len(self.nodes), "the node count")
        operator = self.operators.get(to_node)
        if operator is None:
            raise invalid(OWNER, f"{name}.ToNodeIndex", f"must name an operator node (Nodes[{to_node}] is a "
                          "ConstantNode, which has no inputs)", to_node)
        count = len(operator.definition.schema.inputs)
        return to_node, _index(index, f"{name}.ToNodeInputIndex", count,
                               f"{operator.name} has {_plural(count, 'input')}")

    def _origin(self, name: str, node: object, index: object) -> tuple[int, int]:
        from_node = _index(node, f"{name}.FromNodeIndex", len(self.nodes), "the node count")
        operator = self.operators.get(from_node)
        count = 1 if operator is None else len(operator.definition.schema.outputs)
        what = "a ConstantNode" if operator is None else operator.name
        return from_node, _index(index, f"{name}.FromNodeOutputIndex", count, f"{what} has {_plural(count, 'output')}")


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _index(value: object, field: str, bound: int, why: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise invalid(OWNER, field, "must be an integer", repr(value))
    if value < 0 or value >= bound:
        requirement = f"must be < {bound} ({why})" if value >= 0 else "must not be negative"
        raise invalid(OWNER, field, requirement, int(value))
    return int(value)


def _check_intermediate(k: int, edge: IntermediateEdge, operators: dict[int, Operator],
                        constants: dict[int, bytes]) -> None:
    """The consumer reads the producer's bytes through its own description: same DataType and Sizes,
    strides free, and never past the producer's TotalTensorSizeInBytes (or a constant's data)."""
    name = f"IntermediateEdges[{k}]"
    consumer = operators[edge.to_node_index]
    field = consumer.definition.schema.inputs[edge.to_node_input_index].name
    reader = consumer.tensor(field)
    to = f"Nodes[{edge.to_node_index}].{field}"
    if edge.from_node_index in constants:
        size = len(constants[edge.from_node_index])
        if reader.total_tensor_size_in_bytes > size:
            raise invalid(OWNER, name, f"must not read past the data of Nodes[{edge.from_node_index}] ({size} "
                          "bytes)", f"{to}.TotalTensorSizeInBytes {reader.total_tensor_size_in_bytes}")
        return
    producer = operators[edge.from_node_index]
    out_field = producer.definition.schema.outputs[edge.from_node_output_index].name
    writer = producer.tensor(out_field)
    source = f"Nodes[{edge.from_node_index}].{out_field}"
    if reader.data_type != writer.data_type:
        raise invalid(OWNER, name, f"must join tensors of the same DataType ({source} is {writer.data_type.name})",
                      f"{to} {reader.data_type.name}")
    if reader.sizes != writer.sizes:
        raise invalid(OWNER, name, f"must join tensors of the same Sizes ({source} has {list(writer.sizes)})",
                      f"{to} {list(reader.sizes)}")
    if reader.total_tensor_size_in_bytes > writer.total_tensor_size_in_bytes:
        raise invalid(OWNER, name, f"must not read past {source} (TotalTensorSizeInBytes "
                      f"{writer.total_tensor_size_in_bytes})",
                      f"{to}.TotalTensorSizeInBytes {reader.total_tensor_size_in_bytes}")


def _topological_order(node_count: int, sources: dict[tuple[int, int], Source]) -> tuple[int, ...]:
    """The nodes, each after the nodes it reads (the lowest ready index first); a cycle is refused."""
    after: dict[int, set[int]] = {n: set() for n in range(node_count)}
    for (node, _), source in sources.items():
        if source.node is not None:
            after[node].add(source.node)
    readers: dict[int, list[int]] = {n: [] for n in range(node_count)}
    for node, producers in after.items():
        for producer in producers:
            readers[producer].append(node)
    waiting = {n: len(producers) for n, producers in after.items()}
    ready = [n for n, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        node = heapq.heappop(ready)
        order.append(node)
        for reader in readers[node]:
            waiting[reader] -= 1
            if waiting[reader] == 0:
                heapq.heappush(ready, reader)
    if len(order) < node_count:
        raise invalid(OWNER, "Nodes", "must form a DAG (no cycle of edges)",
                      f"the cycle {_cycle(after, set(order))}")
    return tuple(order)


def _cycle(after: dict[int, set[int]], done: set[int]) -> str:
    """One cycle among the nodes not yet ordered, as ``Nodes[a] -> Nodes[b] -> Nodes[a]``."""
    node = min(n for n in after if n not in done)
    path: list[int] = []
    while node not in path:
        path.append(node)
        node = min(after[node] - done)
    cycle = [*path[path.index(node):], node]
    cycle.reverse()  # ``after`` points from reader to producer; a cycle reads in the data's direction
    return " -> ".join(f"Nodes[{n}]" for n in cycle)
