"""Planning: every node checked and lowered onto compiled opendml operators before anything runs.

``check_model`` finds what the model's declared types show (unknown operators, unmapped types,
bounds computed by other nodes); ``build_plan`` does the rest with the real inputs (shapes, attribute
values against them, the device's feature level). Both collect every problem and raise them together
as one UnsupportedModelError.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from onnx import ModelProto, numpy_helper

from ..device import Device
from ..errors import OpenDMLError
from . import types
from .errors import UnsupportedModelError
from .graph import CONSTANT, DEFAULT_DOMAINS, GRAPH_INPUT, NodeView, Value, node_views
from .model import inferred_types, tensor_type
from .ops import BY_OP_TYPE, Step


@dataclass(frozen=True)
class Plan:
    steps: tuple[Step, ...]
    values: Mapping[str, Value]  # every value of the graph, by name
    outputs: tuple[str, ...]  # the graph's outputs, in order


def _node_problems(node: NodeView, inputs: Sequence[Value | None]) -> list[str]:
    """What keeps a node from mapping: its operator, its version, then the mapping's own check."""
    mapping = BY_OP_TYPE.get(node.op_type)
    if node.proto.domain not in DEFAULT_DOMAINS or mapping is None:
        name = node.op_type if node.proto.domain in DEFAULT_DOMAINS else f"{node.proto.domain}.{node.op_type}"
        return [f"{node.label}: Operator must be one of {', '.join(sorted(BY_OP_TYPE))} "
                f"(default ONNX domain); got {name}."]
    if node.version is None:
        return [f"{node.label}: Operator must have a schema at the model's opset; got none."]
    if mapping.versions is not None and node.version not in mapping.versions:
        known = ", ".join(str(v) for v in mapping.versions)
        return [f"{node.label}: Operator version must be one of {known}; got {node.op_type}-{node.version}."]
    return mapping.check(node, inputs)


def check_model(model: ModelProto, nodes: Sequence[NodeView] | None = None) -> None:
    """Raise UnsupportedModelError listing everything the declared types show opendml cannot run."""
    nodes = node_views(model) if nodes is None else nodes
    typed = inferred_types(model)
    problems: list[str] = []
    for info in model.graph.input:
        if tensor_type(info.type) is None:
            problems.append(f"ONNX model: Input '{info.name}' must be a tensor; got {info.type.WhichOneof('value')}.")
    for sparse in model.graph.sparse_initializer:
        problems.append(f"ONNX model: Initializer '{sparse.values.name}' must be dense; got a sparse initializer.")
    initialized = {t.name for t in model.graph.initializer} | {t.values.name for t in model.graph.sparse_initializer}
    values = {name: Value(name, *typed.get(name, (0, None)), source=CONSTANT if name in initialized else GRAPH_INPUT)
              for name in [i.name for i in model.graph.input] + list(initialized)}
    for node in nodes:
        problems += _node_problems(node, [values.get(name) if name else None for name in node.proto.input])
        source = CONSTANT if node.op_type == "Constant" else node.label
        values.update({name: Value(name, *typed.get(name, (0, None)), source=source) for name in node.proto.output})
    if problems:
        raise UnsupportedModelError(problems)


def constant_values(model: ModelProto) -> dict[str, Value]:
    """The initializers, as values known before running."""
    return {t.name: Value(t.name, t.data_type, tuple(t.dims), numpy_helper.to_array(t), CONSTANT)
            for t in model.graph.initializer}


def build_plan(model: ModelProto, nodes: Sequence[NodeView], feeds: Mapping[str, np.ndarray],
               constants: Mapping[str, Value], device: Device) -> Plan:
    """Lower every node onto the device, in order; raise every problem at once, before running."""
    values: dict[str, Value] = dict(constants)
    for name, array in feeds.items():  # a given input overrides its initializer
        values[name] = Value(name, types.onnx_type_of(array.dtype), array.shape, array, GRAPH_INPUT)
    steps: list[Step] = []
    problems: list[str] = []
    for node in nodes:
        if any(name and name not in values for name in node.proto.input):
            continue  # fed by a node that could not be lowered: that node's problem is listed
        inputs = [values[name] if name else None for name in node.proto.input]
        node_problems = _node_problems(node, inputs)
        if not node_problems:
            try:
                lowered = BY_OP_TYPE[node.op_type].lower(node, inputs, device)
            except OpenDMLError as error:
                text = str(error)
                node_problems = [text if text.startswith(node.label) else f"{node.label}: {text}"]
            else:
                values.update({v.name: v for v in lowered.outputs})
                steps += lowered.before
                if lowered.step is not None:
                    steps.append(lowered.step)
        problems += node_problems
    if problems:
        raise UnsupportedModelError(problems)
    return Plan(tuple(steps), values, tuple(o.name for o in model.graph.output))
