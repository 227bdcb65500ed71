"""DML_GRAPH_DESC as data: nodes (operators, constants) and the edges that join them.

Node input and output indices count an operator's input and output tensors in DirectML's field order,
absent optional tensors included (DEQUANTIZE_LINEAR's ZeroPointTensor is input 2 even when absent).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..operator import Operator


@dataclass(frozen=True)
class OperatorNode:
    """DML_OPERATOR_GRAPH_NODE_DESC: an operator from ``Device.create_operator``."""

    operator: Operator
    name: str = ""


@dataclass(frozen=True, eq=False)
class ConstantNode:
    """DML_CONSTANT_DATA_GRAPH_NODE_DESC (feature level 6_2): bytes, or an array copied in row-major order.

    It has no inputs and one output, which node inputs read through their own descriptions.
    """

    data: Any
    name: str = ""


Node = OperatorNode | ConstantNode


@dataclass(frozen=True)
class InputEdge:
    """DML_INPUT_GRAPH_EDGE_DESC: graph input -> node input."""

    graph_input_index: int
    to_node_index: int
    to_node_input_index: int
    name: str = ""


@dataclass(frozen=True)
class OutputEdge:
    """DML_OUTPUT_GRAPH_EDGE_DESC: node output -> graph output."""

    from_node_index: int
    from_node_output_index: int
    graph_output_index: int
    name: str = ""


@dataclass(frozen=True)
class IntermediateEdge:
    """DML_INTERMEDIATE_GRAPH_EDGE_DESC: node output -> node input."""

    from_node_index: int
    from_node_output_index: int
    to_node_index: int
    to_node_input_index: int
    name: str = ""


@dataclass(frozen=True)
class GraphDesc:
    """DML_GRAPH_DESC: ``input_count`` graph inputs, ``output_count`` graph outputs, nodes and edges.

    Checked by ``Device.compile_graph``, not here, so that every rule is reported the same way.
    """

    input_count: int
    output_count: int
    nodes: Sequence[Node]
    input_edges: Sequence[InputEdge] = ()
    output_edges: Sequence[OutputEdge] = ()
    intermediate_edges: Sequence[IntermediateEdge] = ()
