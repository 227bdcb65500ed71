"""Fusion: nodes of a compiled graph that run as one generated kernel.

A node's output is fused into the node that reads it (the intermediate is never written, nor allocated)
when all of these hold:

- the producer is element-wise (its KernelSpec has no reduction), and so is the reader, or the reader is a
  reduction (ARGMIN) and the backend lowers reduction prologues (``Backend.reduction_prologues``): the
  chain's value is then computed where the reduction loads an element, and compared there;
- that one node input is the output's only reader: an output read by two consumers is materialised once
  (recomputing it in each would read its inputs twice; which is cheaper depends on their bytes, a later
  choice) and an output that is also a graph output is written there by its own step;
- the reader reads it with the producer's layout (the same strides on every dimension larger than 1), so
  element i of the consumer is element i of the producer; a transposed or broadcast read keeps the buffer.

The fused nodes form a tree whose root is the one node whose output leaves the group. Its kernel's
expression is the root's, each fused Load replaced by the producer's expression read back as its
intermediate's type (``opendml.kernels.compose``): the same bits as the nodes run one by one (a reduction
compares exactly the values its input would have held). ``OPENDML_FUSION=0`` turns fusion off, every node
its own step.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .. import expr as ex
from ..dtypes import DataType
from ..errors import invalid
from ..kernels.compose import Composer, read_back
from ..kernels.spec import KernelSpec
from ..tensor import TensorDesc
from .validate import CheckedGraph, Source

ENV_FUSION = "OPENDML_FUSION"


def enabled() -> bool:
    """Whether compiled graphs fuse: OPENDML_FUSION is 1 (the default) or 0."""
    value = os.environ.get(ENV_FUSION, "1").strip() or "1"
    if value not in ("0", "1"):
        raise invalid("Device", ENV_FUSION, "must be 0 or 1", repr(value))
    return value == "1"


@dataclass(frozen=True)
class Operand:
    """An input of a fused kernel: what it reads, through which description, and the first node input
    reading it (whose field names the binding in messages)."""

    source: Source
    desc: TensorDesc
    reader: tuple[int, int]


@dataclass(frozen=True)
class FusedKernel:
    """Several element-wise nodes as one kernel: ``nodes`` in graph order, the root (whose output the kernel
    writes) last; ``spec`` reads ``operands`` in order."""

    nodes: tuple[int, ...]
    operands: tuple[Operand, ...]
    spec: KernelSpec

    @property
    def root(self) -> int:
        return self.nodes[-1]


def fuse(graph: CheckedGraph, prologues: bool = False) -> dict[int, FusedKernel]:
    """The fused kernel of every group of two or more nodes, by its root; reductions take element-wise
    prologues where ``prologues`` (the backend lowers them)."""
    rules = _Rules(graph, prologues)
    inner = {source.node for (node, index), source in graph.sources.items() if rules.fusable(node, index)}
    kernels: dict[int, FusedKernel] = {}
    for node in graph.order:
        if node in graph.operators and node not in inner and rules.may_root(node):
            members = _members(rules, node)
            if len(members) > 1:
                kernels[node] = _FusedBuilder(rules, members).build(node)
    return kernels


def _single_output(graph: CheckedGraph, node: int) -> bool:
    operator = graph.operators.get(node)
    return operator is not None and len(operator.definition.schema.outputs) == 1


def _elementwise(graph: CheckedGraph, node: int) -> bool:
    return _single_output(graph, node) and graph.operators[node].kernel_spec.reduction is None


@dataclass(frozen=True)
class _Rules:
    graph: CheckedGraph
    prologues: bool

    def may_root(self, node: int) -> bool:
        """Whether ``node`` can be the last node of a fused kernel."""
        return _elementwise(self.graph, node) or (self.prologues and _single_output(self.graph, node))

    def fusable(self, node: int, index: int) -> bool:
        return _fusable(self, node, index)


def _fusable(rules: _Rules, node: int, index: int) -> bool:
    """Whether input ``index`` of ``node`` reads an intermediate that fuses into it (the module's rules)."""
    graph = rules.graph
    source = graph.sources[(node, index)]
    producer = source.node
    if producer is None or not (_elementwise(graph, producer) and rules.may_root(node)):
        return False
    if graph.readers.get((producer, source.index)) != [(node, index)] or graph.graph_outputs.get((producer, 0)):
        return False
    if index not in ex.loads(graph.operators[node].kernel_spec.element):
        return False
    written, read = graph.output_desc(producer, 0), graph.input_desc(node, index)
    return written.sizes == read.sizes and all(
        a == b for n, a, b in zip(written.sizes, written.effective_strides, read.effective_strides) if n > 1)


def _members(rules: _Rules, root: int) -> tuple[int, ...]:
    """The nodes fused into ``root`` (transitively) and the root, in graph order."""
    graph = rules.graph
    found = {root}
    pending = [root]
    while pending:
        node = pending.pop()
        for index in range(len(graph.operators[node].definition.schema.inputs)):
            source = graph.sources.get((node, index))
            if source is not None and rules.fusable(node, index):
                found.add(source.node)  # type: ignore[arg-type]
                pending.append(source.node)  # type: ignore[arg-type]
    return tuple(n for n in graph.order if n in found)


class _FusedBuilder:
    def __init__(self, rules: _Rules, members: tuple[int, ...]) -> None:
        self.rules, self.graph, self.members = rules, rules.graph, members
        self.composer = Composer()
        self.operands: list[Operand] = []

    def build(self, root: int) -> FusedKernel:
        element = self._value(root)
        name = "+".join(self.graph.operators[n].name for n in self.members)
        spec = self.graph.operators[root].kernel_spec
        if spec.reduction is None:
            return FusedKernel(self.members, tuple(self.operands), self.composer.spec(name, element))
        return FusedKernel(self.members, tuple(self.operands), self.composer.reduction_spec(name, element, spec))

    def _value(self, node: int) -> ex.Expr:
        """``node``'s expression over the kernel's operands, its fused inputs composed first (in input
        order, so the kernel's first operand is the chain's first InputTensor)."""
        spec = self.graph.operators[node].kernel_spec
        values: list[ex.Expr | None] = []
        for index, data_type in enumerate(spec.inputs):
            source = self.graph.sources.get((node, index))
            if data_type is None or source is None:
                values.append(None)
            elif source.node in self.members and self.rules.fusable(node, index):
                values.append(read_back(self._value(source.node)))  # type: ignore[arg-type]
            else:
                values.append(self._operand(source, node, index, data_type))
        return self.composer.add(spec, values)

    def _operand(self, source: Source, node: int, index: int, data_type: DataType) -> ex.Load:
        desc = self.graph.input_desc(node, index)
        before = len(self.composer.inputs)
        load = self.composer.operand((source, desc), data_type)
        if len(self.composer.inputs) > before:
            self.operands.append(Operand(source, desc, (node, index)))
        return load
