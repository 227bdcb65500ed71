"""A model's graph as the planner sees it: values, nodes with their operator versions, topological order."""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from onnx import GraphProto, ModelProto, NodeProto, defs, helper

from ..dtypes import DataType
from ..errors import invalid
from . import types

DEFAULT_DOMAINS = ("", "ai.onnx")

# Where a value comes from, when not from a node (whose label is used instead).
GRAPH_INPUT = "graph input"
CONSTANT = "constant"  # an initializer or a Constant node's output


@dataclass(frozen=True, eq=False)
class Value:
    """A tensor of the graph: its ONNX element type, shape and, when known before running, its values.

    For the static check, ``shape`` may be None (rank unknown) or hold None for an unknown size.
    ``source`` is GRAPH_INPUT, CONSTANT, or the label of the node that computes it.
    """

    name: str
    onnx_type: int
    shape: tuple[int | None, ...] | None
    host: np.ndarray | None = None
    source: str = CONSTANT

    @property
    def data_type(self) -> DataType | None:
        return types.data_type(self.onnx_type)

    @property
    def known_before_running(self) -> bool:
        """Whether the values exist before any node runs (what a DirectML field needs)."""
        return self.source in (GRAPH_INPUT, CONSTANT)

    @property
    def concrete_shape(self) -> tuple[int, ...]:
        """The shape, for planning (where every size is known)."""
        assert self.shape is not None and None not in self.shape
        return self.shape  # type: ignore[return-value]

    def describe_source(self) -> str:
        return {GRAPH_INPUT: f"graph input '{self.name}'",
                CONSTANT: f"constant '{self.name}'"}.get(self.source, f"the output of {self.source}")


@dataclass(frozen=True)
class NodeView:
    """One node, with the version of its operator's schema in force and its attributes decoded."""

    proto: NodeProto
    label: str  # "Clip node 'c1'" (or "Clip node #3" when unnamed), the owner in messages
    version: int | None  # the operator schema's since_version at the model's opset; None when unknown
    attributes: dict[str, Any] = field(default_factory=dict)

    @property
    def op_type(self) -> str:
        return self.proto.op_type

    def attribute(self, name: str, default: Any = None) -> Any:
        return self.attributes.get(name, default)


def opset_version(model: ModelProto) -> int | None:
    """The model's opset version of the default ONNX domain."""
    for entry in model.opset_import:
        if entry.domain in DEFAULT_DOMAINS:
            return int(entry.version)
    return None


def node_views(model: ModelProto) -> list[NodeView]:
    """The graph's nodes in an order where each runs after the nodes whose outputs it reads."""
    opset = opset_version(model)
    return [_view(node, k, opset) for k, node in enumerate(topological_order(model.graph))]


def _view(node: NodeProto, index: int, opset: int | None) -> NodeView:
    label = f"{node.op_type} node " + (f"'{node.name}'" if node.name else f"#{index}")
    version = None
    if node.domain in DEFAULT_DOMAINS and opset is not None:
        try:
            version = int(defs.get_schema(node.op_type, opset, "").since_version)
        except defs.SchemaError:
            version = None
    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    return NodeView(node, label, version, attributes)


def topological_order(graph: GraphProto) -> list[NodeProto]:
    """Kahn's algorithm, taking ready nodes in the file's order (ONNX files are usually sorted already)."""
    available = ({i.name for i in graph.input} | {t.name for t in graph.initializer}
                 | {t.values.name for t in graph.sparse_initializer} | {""})
    nodes = list(graph.node)
    waiting_on: dict[str, list[int]] = defaultdict(list)  # value name -> nodes that still need it
    needs = []
    for k, node in enumerate(nodes):
        missing = {name for name in node.input if name not in available}
        needs.append(len(missing))
        for name in missing:
            waiting_on[name].append(k)
    ready = [k for k, count in enumerate(needs) if count == 0]
    heapq.heapify(ready)
    ordered: list[NodeProto] = []
    while ready:
        k = heapq.heappop(ready)
        ordered.append(nodes[k])
        for name in nodes[k].output:
            for consumer in waiting_on.pop(name, []):
                needs[consumer] -= 1
                if needs[consumer] == 0:
                    heapq.heappush(ready, consumer)
    if len(ordered) < len(nodes):
        produced = {name for node in nodes for name in node.output}
        undefined = sorted(name for name in waiting_on if name not in produced)
        got = f"undefined inputs {', '.join(undefined)}" if undefined else "a cycle"
        raise invalid("ONNX model", "Graph", "must be a graph whose every node input is defined", got)
    return ordered


def optional(inputs: Sequence[Value | None], k: int) -> Value | None:
    return inputs[k] if k < len(inputs) else None
