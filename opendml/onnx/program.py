"""A plan compiled into DirectML graphs, as ONNX Runtime's DirectML provider compiles a model.

Every step that computes something a graph output needs becomes an operator node of a GraphDesc, and
the steps are compiled together by ``Device.compile_graph``. Values known before running (graph inputs,
initializers, Constant outputs, arrays the mappings make) stay bound graph inputs: they work at every
level from 2_1 (ConstantNode needs 6_2), the compiled graph does not depend on their values, and a
session uploads each initializer once.

An intermediate edge joins tensors of one DataType and one set of Sizes. Where a node reads another's
output through other sizes (leading 1s another operator's support row needs, a blocked scale's split
axis, ArgMin's dropped axis, a computed scale broadcast by zero strides), no edge can join them: the
model is cut there, the value becoming an output of one compiled graph and an input of the next. A model
without such a read compiles into one graph.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..device import Device
from ..graphs import CompiledGraph, GraphDesc, InputEdge, IntermediateEdge, OperatorNode, OutputEdge
from .ops import Step
from .plan import Plan

# What a graph input binds: a value by name, or (step, input) for an array the mapping made.
Source = str | tuple[int, int]


@dataclass(frozen=True)
class Segment:
    """One compiled graph: graph input k binds ``inputs[k]``, graph output k is step ``outputs[k]``'s output."""

    compiled: CompiledGraph
    steps: tuple[int, ...]  # the plan's steps that are its nodes, in order (node k is steps[k])
    inputs: tuple[Source, ...]
    outputs: tuple[int, ...]


@dataclass(frozen=True)
class Program:
    """The compiled graphs of a plan, in the order they run; ``skipped`` lists the steps left out
    (an empty output, or an output that no graph output needs)."""

    segments: tuple[Segment, ...]
    skipped: tuple[int, ...]


def program_key(plan: Plan) -> tuple:
    """What a program depends on: each step's operator description (by repr, as ``Device.compiled``
    looks them up), its wiring, and the graph's outputs; feeds' values matter only through them."""
    steps = tuple((type(s.operator.operator.desc), repr(s.operator.operator.desc), s.output, s.runs,
                   tuple(source if source is None or isinstance(source, str) else "array" for source in s.inputs))
                  for s in plan.steps)
    return steps, plan.outputs


def compile_program(plan: Plan, device: Device) -> Program:
    """Group the needed steps into as few graphs as the edge rule allows, and compile each."""
    producers = {step.output: k for k, step in enumerate(plan.steps) if step.runs}
    live = _live_steps(plan, producers)
    segment_of: dict[int, int] = {}
    for k in live:  # the plan's order is topological: producers come first
        step = plan.steps[k]
        segment_of[k] = max((segment_of[p] + (0 if _joins(plan.steps[p], step, j) else 1)
                             for j, p in _read_steps(step, producers)), default=0)
    exported = {producers[name] for name in plan.outputs if name in producers}
    for k in live:
        exported |= {p for _, p in _read_steps(plan.steps[k], producers) if segment_of[p] != segment_of[k]}
    segments = [_compile_segment(plan, device, [k for k in live if segment_of[k] == n], producers, exported)
                for n in range(max(segment_of.values(), default=-1) + 1)]
    skipped = tuple(k for k in range(len(plan.steps)) if k not in segment_of)
    return Program(tuple(segments), skipped)


def _read_steps(step: Step, producers: dict[str, int]) -> list[tuple[int, int]]:
    """(input index, producing step) for each input computed by a running step."""
    return [(j, producers[source]) for j, source in enumerate(step.inputs)
            if isinstance(source, str) and source in producers]


def _live_steps(plan: Plan, producers: dict[str, int]) -> list[int]:
    """The running steps a graph output depends on, in plan order."""
    live: set[int] = set()
    pending = [producers[name] for name in plan.outputs if name in producers]
    while pending:
        k = pending.pop()
        if k not in live:
            live.add(k)
            pending += [p for _, p in _read_steps(plan.steps[k], producers)]
    return sorted(live)


def _joins(producer: Step, consumer: Step, index: int) -> bool:
    """Whether an intermediate edge may join the producer's output to the consumer's input ``index``:
    the graph's rule (docs/graphs.md), same DataType and Sizes, reading no further than was written."""
    writer_op, reader_op = producer.operator.operator, consumer.operator.operator
    writer = writer_op.tensor(writer_op.definition.schema.outputs[0].name)
    reader = reader_op.tensors[reader_op.definition.schema.inputs[index].name]
    return (reader is not None and reader.data_type == writer.data_type and reader.sizes == writer.sizes
            and reader.total_tensor_size_in_bytes <= writer.total_tensor_size_in_bytes)


def _compile_segment(plan: Plan, device: Device, steps: list[int], producers: dict[str, int],
                     exported: set[int]) -> Segment:
    node_of = {k: n for n, k in enumerate(steps)}
    sources: dict[Source, int] = {}  # what each graph input binds -> its index
    input_edges: list[InputEdge] = []
    intermediate_edges: list[IntermediateEdge] = []
    for k in steps:
        for j, source in enumerate(plan.steps[k].inputs):
            if source is None:
                continue
            producer = producers.get(source) if isinstance(source, str) else None
            if producer in node_of:
                intermediate_edges.append(IntermediateEdge(node_of[producer], 0, node_of[k], j))
                continue
            key: Source = source if isinstance(source, str) else (k, j)
            input_edges.append(InputEdge(sources.setdefault(key, len(sources)), node_of[k], j))
    outputs = [k for k in steps if k in exported]
    output_edges = [OutputEdge(node_of[k], 0, g) for g, k in enumerate(outputs)]
    nodes = [OperatorNode(plan.steps[k].operator.operator, plan.steps[k].label) for k in steps]
    desc = GraphDesc(len(sources), len(outputs), nodes, input_edges, output_edges, intermediate_edges)
    return Segment(device.compile_graph(desc), tuple(steps), tuple(sources), tuple(outputs))
