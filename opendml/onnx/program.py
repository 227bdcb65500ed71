"""A plan compiled into DirectML graphs, as ONNX Runtime's DirectML provider compiles a model: one, unless a
REDUCE or TOP_K output is read through other sizes.

Every step that computes something a graph output needs becomes an operator node of a GraphDesc,
compiled by ``Device.compile_graph``. Values known before running (graph inputs, initializers, Constant
outputs, arrays the mappings make) stay bound graph inputs: they work at every level from 2_1
(ConstantNode needs 6_2), the compiled graph does not depend on their values, and a session uploads each
initializer once.

An intermediate edge joins tensors of one DataType and one set of Sizes. Where a node reads another's
output through other sizes, the producer is computed again in the reader's sizes, or the reader is
described in finer sizes (``redescribe.py`` gives the rules and their cost), so every read is an edge.
REDUCE and TOP_K are not computed again (a broadcast would redo the whole reduction for each of its
elements): a reader of their output through other sizes (softmax's broadcast max, a ``keepdims = 0``
output) reads their own output, through its own description, as an input of a later graph
(``_Builder.segments``).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

import numpy as np

from ..device import Device
from ..errors import invalid, message
from ..graphs import CompiledGraph, GraphDesc, InputEdge, IntermediateEdge, OperatorNode, OutputEdge
from ..operator import Operator
from ..tensor import MAX_DIMENSIONS, TensorDesc
from . import redescribe
from .errors import UnsupportedModelError
from .ops import Step
from .plan import Plan

# What a graph input binds: a value by name, or (step, input) for an array the mapping made.
Source = str | tuple[int, int]


@dataclass(frozen=True)
class Segment:
    """One compiled graph: graph input k binds ``inputs[k]``; graph output g is output j of step k, where
    ``outputs[g]`` is (k, j).

    Node k computes step ``nodes[k]``; a step computed again in a reader's sizes has several nodes.
    """

    compiled: CompiledGraph
    steps: tuple[int, ...]  # the plan's steps it computes, in plan order
    nodes: tuple[int, ...]
    inputs: tuple[Source, ...]
    outputs: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Program:
    """The compiled graphs of a plan, in the order they run (none when no step runs; several where a REDUCE or
    TOP_K output is read through other sizes); ``skipped`` lists the steps left out (an empty output, or an
    output that no graph output needs)."""

    segments: tuple[Segment, ...]
    skipped: tuple[int, ...]


def program_key(plan: Plan) -> tuple:
    """What a program depends on: each step's operator description (by repr, as ``Device.compiled``
    looks them up), its wiring, and the graph's outputs; feeds' values matter only through them."""
    steps = tuple((type(s.operator.operator.desc), repr(s.operator.operator.desc), s.outputs, s.runs,
                   tuple(source if source is None or isinstance(source, str) else "array" for source in s.inputs))
                  for s in plan.steps)
    return steps, plan.outputs


def compile_program(plan: Plan, device: Device) -> Program:
    """Compile the steps the graph's outputs need into graphs: one, unless a REDUCE or TOP_K output is read
    through other sizes."""
    producers = {name: (k, j) for k, step in enumerate(plan.steps) if step.runs for j, name in enumerate(step.outputs)}
    live = _live_steps(plan, producers)
    skipped = tuple(k for k in range(len(plan.steps)) if k not in live)
    if not live:
        return Program((), skipped)
    builder = _Builder(plan, device, producers)
    for k in live:  # the plan's order is topological: producers come first
        builder.describe(k)
    outputs = list(dict.fromkeys(producers[name] for name in plan.outputs if name in producers))
    return Program(builder.segments(outputs, live), skipped)


# A computed value's producer: (step, which of its outputs).
Producers = dict[str, tuple[int, int]]


def _read_steps(step: Step, producers: Producers) -> list[tuple[int, int]]:
    """(input index, producing step) for each input computed by a running step."""
    return [(j, producers[source][0]) for j, source in enumerate(step.inputs)
            if isinstance(source, str) and source in producers]


def _live_steps(plan: Plan, producers: Producers) -> list[int]:
    """The running steps a graph output depends on, in plan order."""
    live: set[int] = set()
    pending = [producers[name][0] for name in plan.outputs if name in producers]
    while pending:
        k = pending.pop()
        if k not in live:
            live.add(k)
            pending += [p for _, p in _read_steps(plan.steps[k], producers)]
    return sorted(live)


# Where a node input's bytes come from: a node's output, or a bound graph input.
@dataclass(frozen=True)
class _FromNode:
    node: int
    output: int = 0  # which of the node's outputs (TOP_K's indices: 1)


@dataclass(frozen=True)
class _Bound:
    source: Source


@dataclass(frozen=True)
class _Cut:
    """Output ``output`` of ``step``'s own node, read through other sizes where the step is not computed again in
    them: a graph output of an earlier graph, bound as an input of the reader's."""

    step: int
    output: int = 0


_Source = _FromNode | _Bound | _Cut | None


@dataclass
class _Node:
    step: int
    desc: object
    sources: list[_Source]
    name: str
    operator: Operator | None = None


@dataclass
class _Builder:
    """Describes each step so that every read of a computed value is an edge, then builds the graph."""

    plan: Plan
    device: Device
    producers: Producers
    own: dict[int, int] = field(default_factory=dict)  # step -> its node in its own (possibly refined) sizes
    # step -> its own description before its reads were resolved: every computed input read through a
    # view of its producer's own output, what a recomputation composes with
    space: dict[int, object] = field(default_factory=dict)
    nodes: list[_Node] = field(default_factory=list)
    views: dict[tuple, int] = field(default_factory=dict)  # (step, sizes, strides) -> its recomputed node

    def describe(self, k: int) -> None:
        """The step's own node: its description refined (split axes, leading 1s) until every read joins."""
        desc = self.plan.steps[k].operator.operator.desc
        for _ in range(2 * MAX_DIMENSIONS + 1):  # each retry adds an axis: a few at most
            try:
                resolved, sources = self._resolve(k, desc, top=True)
            except redescribe.NeedsOnes as needed:
                desc = redescribe.with_leading_ones(desc, needed.count)
            except _Refine as refined:
                desc = self._fit(redescribe.refine(desc, refined.parts))
            else:
                self.space[k] = desc
                self.own[k] = self._add(k, resolved, sources, self.plan.steps[k].label)
                return
        raise invalid(self.plan.steps[k].label, "Sizes", "must fit one compiled graph", "too many axes")

    def _fit(self, desc: object) -> object:
        """Drop size-1 axes a 4-D-only support row has no room for (they change no element order)."""
        row = redescribe.definition(desc).schema.row_at(self.device.feature_level)
        extra = len(redescribe.output_of(desc).sizes) - (row.dimensions[1] if row is not None else MAX_DIMENSIONS)
        return redescribe.without_ones(desc, extra) if extra > 0 else desc

    def _resolve(self, k: int, desc: object, top: bool) -> tuple[object, list[_Source]]:
        """Where each input of step k's (re-described) operator reads from; a computed value read through
        other sizes than its producer's output is read from the producer computed in those sizes."""
        step = self.plan.steps[k]
        schema = redescribe.definition(desc).schema
        tensors = redescribe.tensors(desc)
        sources: list[_Source] = []
        replaced: dict[str, TensorDesc | None] = {}
        for j, (tensor_field, source) in enumerate(zip(schema.inputs, step.inputs)):
            tensor = tensors[tensor_field.name]
            if source is None or tensor is None:
                sources.append(None)
            elif isinstance(source, np.ndarray) or source not in self.producers:
                sources.append(_Bound(source if isinstance(source, str) else (k, j)))
            else:
                producer, output = self.producers[source]
                written = redescribe.output_of(self.nodes[self.own[producer]].desc, output)
                if tensor.sizes == written.sizes:
                    sources.append(_FromNode(self.own[producer], output))
                    continue
                if not redescribe.recomputable(self.space[producer]):
                    # REDUCE, TOP_K: the reader reads the producer's own output through its view (a broadcast's
                    # zero strides, a dropped axis), bound as an input of a later graph
                    sources.append(_Cut(producer, output))
                    continue
                sources.append(_FromNode(self._view(k, tensor_field.name, producer, tensor, written, top)))
                replaced[tensor_field.name] = TensorDesc(tensor.data_type, tensor.sizes, flags=tensor.flags)
        return (redescribe.with_tensors(desc, replaced) if replaced else desc), sources

    def _view(self, k: int, field_name: str, producer: int, tensor: TensorDesc, written: TensorDesc,
              top: bool) -> int:
        """The node computing ``producer`` packed in ``tensor``'s sizes, as step k's ``field_name`` reads its
        output."""
        sizes, strides = tensor.sizes, tensor.effective_strides
        steps = redescribe.affine_steps(sizes, strides, written.sizes)
        if steps is None:
            parts = redescribe.split_parts(sizes, strides, written.sizes) if top else None
            if parts is None:  # two blocked nodes splitting one axis into blocks that do not nest
                raise UnsupportedModelError([message(
                    self.plan.steps[k].label, field_name,
                    f"must read {self.plan.steps[producer].label}'s output through an edge of one compiled graph "
                    "(where two blocked nodes split one axis, one block size must divide the other)",
                    f"Sizes {list(sizes)} with Strides {list(strides)} over Sizes {list(written.sizes)}")])
            raise _Refine(parts)
        key = (producer, sizes, strides)
        if key not in self.views:
            desc = redescribe.recompute(self.space[producer], sizes, steps)
            desc, sources = self._resolve(producer, desc, top=False)
            self.views[key] = self._add(producer, desc, sources, f"{self.plan.steps[producer].label} as {list(sizes)}")
        return self.views[key]

    def _add(self, k: int, desc: object, sources: list[_Source], name: str) -> int:
        self.nodes.append(_Node(k, desc, sources, name))
        return len(self.nodes) - 1

    def segments(self, outputs: list[tuple[int, int]], live: list[int]) -> tuple[Segment, ...]:
        """The compiled graphs computing the outputs ((step, output) pairs), in the order they run.

        A node's level is the number of cut reads (``_Cut``) on its longest path from the graph inputs; the
        nodes of one level are one graph. A graph's inputs are bound values, the cut reads and the own nodes of
        earlier levels it reads by an edge (a step's own output is a named value: the same bytes, bound); a
        recomputed node of an earlier level is computed again in the graph that reads it. Levels are planned
        from the last down, since each read of an earlier level makes that value an output of its graph."""
        level = self._levels()
        wanted: dict[int, list[tuple[int, int]]] = {}  # level -> the (step, output) pairs its graph outputs
        for k, j in outputs:
            wanted.setdefault(level[self.own[k]], []).append((k, j))
        planned: list[tuple[list[tuple[int, int]], list[int]]] = []
        for at in range(max(wanted), -1, -1):
            roots = list(dict.fromkeys(wanted.get(at, [])))
            if roots:
                nodes, reads = self._closure([self.own[k] for k, _ in roots], at, level)
                for k, j in reads:
                    wanted.setdefault(level[self.own[k]], []).append((k, j))
                planned.append((roots, nodes))
        reported: set[int] = set()
        built = []
        for roots, nodes in reversed(planned):
            steps = tuple(k for k in live if k not in reported and any(self.nodes[n].step == k for n in nodes))
            reported.update(steps)
            built.append(self._segment(roots, nodes, steps))
        return tuple(built)

    def _levels(self) -> list[int]:
        level: list[int] = []
        for node in self.nodes:  # creation order is topological
            level.append(max([level[s.node] for s in node.sources if isinstance(s, _FromNode)]
                             + [level[self.own[s.step]] + 1 for s in node.sources if isinstance(s, _Cut)],
                             default=0))
        return level

    def _own(self, n: int) -> bool:
        return self.own[self.nodes[n].step] == n

    def _crosses(self, source: _Source, nodes: Collection[int]) -> tuple[int, int] | None:
        """The (step, output) a node's source binds from an earlier graph, where it does."""
        if isinstance(source, _Cut):
            return source.step, source.output
        if isinstance(source, _FromNode) and source.node not in nodes:
            return self.nodes[source.node].step, source.output
        return None

    def _closure(self, roots: list[int], at: int, level: list[int]) -> tuple[list[int], list[tuple[int, int]]]:
        """The nodes of level ``at``'s graph (in creation order, which is topological) and the (step, output)
        pairs it reads from earlier graphs."""
        needed: set[int] = set()
        pending = list(roots)
        while pending:
            n = pending.pop()
            if n not in needed:
                needed.add(n)
                pending += [s.node for s in self.nodes[n].sources if isinstance(s, _FromNode)
                            and (level[s.node] == at or not self._own(s.node))]
        reads = [pair for n in needed for s in self.nodes[n].sources
                 if (pair := self._crosses(s, needed)) is not None]
        return sorted(needed), list(dict.fromkeys(reads))

    def _segment(self, outputs: list[tuple[int, int]], order: list[int], steps: tuple[int, ...]) -> Segment:
        """``order``'s nodes compiled as one graph whose outputs are ``outputs`` ((step, output) pairs)."""
        index = {n: i for i, n in enumerate(order)}
        bound: dict[Source, int] = {}  # what each graph input binds -> its index
        input_edges: list[InputEdge] = []
        intermediate_edges: list[IntermediateEdge] = []
        for n in order:
            for j, source in enumerate(self.nodes[n].sources):
                crossing = self._crosses(source, index.keys())
                if crossing is not None:  # a value an earlier graph computed, bound by its name
                    name = self.plan.steps[crossing[0]].outputs[crossing[1]]
                    input_edges.append(InputEdge(bound.setdefault(name, len(bound)), index[n], j))
                elif isinstance(source, _FromNode):
                    intermediate_edges.append(IntermediateEdge(index[source.node], source.output, index[n], j))
                elif isinstance(source, _Bound):
                    input_edges.append(InputEdge(bound.setdefault(source.source, len(bound)), index[n], j))
        output_edges = [OutputEdge(index[self.own[k]], j, g) for g, (k, j) in enumerate(outputs)]
        graph_nodes = [OperatorNode(self._operator(self.nodes[n]), self.nodes[n].name) for n in order]
        desc = GraphDesc(len(bound), len(outputs), graph_nodes, input_edges, output_edges, intermediate_edges)
        return Segment(self.device.compile_graph(desc), steps, tuple(self.nodes[n].step for n in order),
                       tuple(bound), tuple(outputs))

    def _operator(self, node: _Node) -> Operator:
        """The step's own operator where its description is unchanged, else a new one (validated)."""
        operator = self.plan.steps[node.step].operator.operator
        if repr(node.desc) == repr(operator.desc):
            return operator
        return self.device.create_operator(node.desc)


class _Refine(Exception):
    """The reader must split its axes as ``parts`` says (caught by ``_Builder.describe``)."""

    def __init__(self, parts: redescribe.Parts) -> None:
        super().__init__(parts)
        self.parts = parts
