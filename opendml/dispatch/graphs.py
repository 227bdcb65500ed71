"""Graph dispatchables: DML_GRAPH_DESC in a model, its nodes being the model's operator dispatchables.

``{"type": "graph", "desc": {...}}`` mirrors DML_GRAPH_DESC with DirectML's field names. The counts come
from the arrays, and the graph's inputs and outputs are named: a dispatch command binds them by these
names, as it binds an operator's tensors by its field names.

>>> import json
>>> from opendml.dispatch.reader import parse_json
>>> text = '''{"type": "graph", "desc": {"Inputs": ["X"], "Outputs": ["Y"], "Nodes": ["clip"],
...     "InputEdges": [{"GraphInputIndex": 0, "ToNodeIndex": 0, "ToNodeInputIndex": 0}],
...     "OutputEdges": [{"FromNodeIndex": 0, "FromNodeOutputIndex": 0, "GraphOutputIndex": 0}]}}'''
>>> graph = parse_any_dispatchable("g", parse_json(text, "m.json"), "dispatchables.g")
>>> graph.tensor_names, graph.nodes, graph.input_edges
(('X', 'Y'), ('clip',), (InputEdge(graph_input_index=0, to_node_index=0, to_node_input_index=0, name=''),))
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .. import ExecutionFlags, GraphDesc, InputEdge, IntermediateEdge, OperatorNode, OutputEdge
from ..operator import Operator
from .dispatchables import (
    COMPILE_GRAPH,
    DISPATCHABLE_FIELDS,
    Dispatchable,
    is_graph_type,
    parse_common,
    parse_dispatchable,
)
from .errors import child, describe, model_error
from .fields import expect_object, expect_string, expect_uint, wrong_type
from .reader import JsonObject

NAME_LISTS = ("Inputs", "Outputs", "Nodes")
# Each edge array, with its edge type and fields (DirectML's, in C order; Name may be left out).
EDGES: dict[str, tuple[type, tuple[str, ...]]] = {
    "InputEdges": (InputEdge, ("GraphInputIndex", "ToNodeIndex", "ToNodeInputIndex", "Name")),
    "OutputEdges": (OutputEdge, ("FromNodeIndex", "FromNodeOutputIndex", "GraphOutputIndex", "Name")),
    "IntermediateEdges": (IntermediateEdge, ("FromNodeIndex", "FromNodeOutputIndex", "ToNodeIndex",
                                             "ToNodeInputIndex", "Name")),
}
GRAPH_DESC_FIELDS = (*NAME_LISTS, *EDGES)
GRAPH_DESC_REQUIRED = ("Inputs", "Outputs", "Nodes", "InputEdges", "OutputEdges")  # one node has no intermediates


@dataclass(frozen=True)
class GraphDispatchable:
    """A graph of the model: nodes name operator dispatchables; checked by ``Device.compile_graph``."""

    name: str
    path: str
    desc_path: str
    desc_json: JsonObject
    execution_flags: ExecutionFlags
    inputs: tuple[str, ...]  # graph input k is bound by the name inputs[k]
    outputs: tuple[str, ...]
    nodes: tuple[str, ...]
    input_edges: tuple[InputEdge, ...]
    output_edges: tuple[OutputEdge, ...]
    intermediate_edges: tuple[IntermediateEdge, ...]

    @property
    def tensor_names(self) -> tuple[str, ...]:
        return self.inputs + self.outputs

    @property
    def input_names(self) -> tuple[str | None, ...]:
        return self.inputs

    @property
    def output_names(self) -> tuple[str, ...]:
        return self.outputs

    def graph_desc(self, operators: Mapping[str, Operator]) -> GraphDesc:
        """The GraphDesc, each node the operator created for the dispatchable it names."""
        nodes = [OperatorNode(operators[name], name) for name in self.nodes]
        return GraphDesc(len(self.inputs), len(self.outputs), nodes, self.input_edges, self.output_edges,
                         self.intermediate_edges)


AnyDispatchable = Dispatchable | GraphDispatchable


def parse_any_dispatchable(name: str, value: object, path: str) -> AnyDispatchable:
    """An operator dispatchable, or a graph (``"type": "graph"``) whose node names are checked later."""
    if isinstance(value, JsonObject) and is_graph_type(value.get("type")):
        return parse_graph(name, value, path)
    return parse_dispatchable(name, value, path)


def parse_graph(name: str, value: object, path: str) -> GraphDispatchable:
    obj = expect_object(value, path, DISPATCHABLE_FIELDS, required=("type",))
    common = parse_common(obj, path, "graph's DML_GRAPH_DESC")
    if "dmlCompileType" in obj and common.compile_type != COMPILE_GRAPH:
        raise model_error(child(path, "dmlCompileType"), f"must be {COMPILE_GRAPH} for a graph (or left out)",
                          repr(common.compile_type))
    desc_path = common.desc_path
    desc = expect_object(obj[common.desc_key], desc_path, GRAPH_DESC_FIELDS, required=GRAPH_DESC_REQUIRED)
    inputs = _names(desc["Inputs"], child(desc_path, "Inputs"))
    outputs = _names(desc["Outputs"], child(desc_path, "Outputs"), at_least_one=True)
    _check_distinct(inputs, outputs, desc_path)
    nodes = _names(desc["Nodes"], child(desc_path, "Nodes"), at_least_one=True, distinct=False)
    edges = {key: _edges(desc.get(key, []), child(desc_path, key), key) for key in EDGES}
    _check_inputs_read(inputs, edges["InputEdges"], desc_path)
    return GraphDispatchable(name, path, desc_path, desc, common.execution_flags, inputs, outputs, nodes,
                             edges["InputEdges"], edges["OutputEdges"], edges["IntermediateEdges"])


def _check_inputs_read(inputs: tuple[str, ...], input_edges: tuple[InputEdge, ...], desc_path: str) -> None:
    """Every graph input is read by an edge: the commands bind every name, and an unread one would bind nothing.

    DirectML allows an unread graph input; a model naming one is most likely missing an edge. An edge's index
    out of range is left to ``Device.compile_graph``, which reports it (the likelier mistake) first.
    """
    read = {edge.graph_input_index for edge in input_edges}
    if any(index >= len(inputs) for index in read):
        return
    for k, item in enumerate(inputs):
        if k not in read:
            raise model_error(child(child(desc_path, "Inputs"), k), "must be read by an InputEdge (a graph input "
                              "that no edge reads has nothing to bind)", describe(item))


def _names(value: object, path: str, *, at_least_one: bool = False, distinct: bool = True) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise wrong_type(path, "an array of names", value)
    if at_least_one and not value:
        raise model_error(path, "must hold at least one name", "[]")
    names = tuple(expect_string(item, child(path, k)) for k, item in enumerate(value))
    for k, item in enumerate(names):
        if not item:
            raise model_error(child(path, k), "must not be empty", '""')
        if distinct and item in names[:k]:
            raise model_error(child(path, k), "must differ from the names before it", f"{describe(item)} again")
    return names


def _check_distinct(inputs: tuple[str, ...], outputs: tuple[str, ...], desc_path: str) -> None:
    """A dispatch command binds inputs and outputs by name: one name cannot be both."""
    for k, item in enumerate(outputs):
        if item in inputs:
            raise model_error(child(child(desc_path, "Outputs"), k),
                              f"must differ from every name of Inputs (Inputs[{inputs.index(item)}])",
                              describe(item))


def _edges(value: object, path: str, key: str) -> tuple:  # type: ignore[type-arg]
    kind, fields = EDGES[key]
    if not isinstance(value, list):
        raise wrong_type(path, f"an array of {key[:-1]} objects", value)
    edges = []
    for k, item in enumerate(value):
        at = child(path, k)
        obj = expect_object(item, at, fields, required=fields[:-1])
        indices = [expect_uint(obj[field], child(at, field)) for field in fields[:-1]]
        edge_name = expect_string(obj.get("Name", ""), child(at, "Name"))
        edges.append(kind(*indices, name=edge_name))
    return tuple(edges)


def check_nodes(graph: GraphDispatchable, dispatchables: Mapping[str, AnyDispatchable]) -> None:
    """Every node names an operator dispatchable of the model (graphs do not nest)."""
    for k, node in enumerate(graph.nodes):
        at = child(child(graph.desc_path, "Nodes"), k)
        found = dispatchables.get(node)
        if found is None:
            known = ", ".join(repr(n) for n, d in dispatchables.items() if isinstance(d, Dispatchable)) or "none"
            raise model_error(at, f"must name an operator dispatchable of the model (known: {known})", repr(node))
        if isinstance(found, GraphDispatchable):
            raise model_error(at, "must name an operator dispatchable (a graph cannot be a node of another graph)",
                              f"the graph {node!r}")


def one_node_graph(operator: Operator, name: str) -> GraphDesc:
    """DmlCompileGraph: the operator as the one node of a graph, its present inputs and its outputs in order."""
    schema = operator.definition.schema
    present = [k for k, field in enumerate(schema.inputs) if operator.tensors[field.name] is not None]
    return GraphDesc(len(present), len(schema.outputs), [OperatorNode(operator, name)],
                     input_edges=[InputEdge(g, 0, k) for g, k in enumerate(present)],
                     output_edges=[OutputEdge(0, k, k) for k in range(len(schema.outputs))])
