"""Fusion: nodes of a compiled graph that run as one generated kernel.

A node's output is *composed* into the nodes that read it (its value computed inside their kernels, the
intermediate never written to a buffer of its own) when all of these hold:

- the producer is element-wise (its KernelSpec has no reduction), and so is each reader, or the reader is a
  reduction (ARGMIN) and the backend lowers reduction prologues (``Backend.reduction_prologues``): the
  chain's value is then computed where the reduction loads an element, and compared there (REDUCE's value
  reductions, SUM and the rest, take no prologue yet: their producer keeps its buffer);
- each reader reads it with the producer's layout (the same strides on every dimension larger than 1), so
  element i of the consumer is element i of the producer; a transposed or broadcast read keeps the buffer;
- an output that is also a graph output is composed only where the backend writes several outputs from one
  kernel (``Backend.fused_outputs``): the fused kernel that computes it writes it there as an extra output
  (``FusedKernel.extras``), so the graph output is written once and nothing else reads a buffer for it;
  elsewhere it is written by its own step, as is every output feeding a node that cannot fuse it;
- read by one node, it is composed; read by k >= 2 nodes (each of which could compose it), it is
  recomputed in each of them or materialised once, whichever moves fewer bytes per element:

      materialise = P + W + k * W        (the producer's chain reads its operands once, writes the value,
                                          each of the k readers reads it back)
      recompute   = k * P (+ W where the value is also a graph output: one of the kernels writes it)

  P is the bytes per element of the external operands of the producer's chain (what recomputing it reads:
  each distinct operand once, its element size, 0 for a broadcast operand, one with a zero stride on a
  dimension larger than 1), W the value's element size. The value is recomputed when that is strictly
  fewer bytes; a tie materialises (one kernel fewer to compile, and the value computed once). Recomputing
  is bit-exact: every kernel composes the same expression. (Counted in bits: a 4-bit operand is half a byte.)

QUANTIZE and DEQUANTIZE fuse too: a kernel holding one runs over their layout (``blocked_layout``: blocked axes
cut in two for every tensor, 4-bit tensors staged one element a byte). Where a group's nodes have no common
layout (one axis cut into blocks of two sizes, more than 8 axes), the nodes composed into its root are barred
from composition and the plan is made again: each then runs as a step of its own.

The nodes composed into a root form its group; a recomputed node belongs to the group of each of its
readers. The root is the one node whose output the kernel writes (besides its extras). Its kernel's
expression is the root's, each composed Load replaced by the producer's expression read back as its
intermediate's type (``opendml.kernels.compose``): the same bits as the nodes run one by one (a reduction
compares exactly the values its input would have held). A composed node that is a graph output is written by
exactly one kernel, the first in graph order that computes it, once for each graph output it feeds; a fused
element-wise kernel writes its root's further graph outputs as extras too (a step that is not fused runs
again for each, as before). ``OPENDML_FUSION=0`` turns fusion off, every node its own step.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .. import expr as ex
from .. import settings
from ..dtypes import DataType
from ..kernels.compose import Composer, read_back
from ..kernels.spec import KernelSpec
from ..tensor import TensorDesc
from .blocked_layout import FusedLayout, fused_layout, holds_layout
from .validate import CheckedGraph, Source

ENV_FUSION = settings.FUSION.name


def enabled() -> bool:
    """Whether compiled graphs fuse: OPENDML_FUSION on (the default) or off."""
    return settings.FUSION.get()


@dataclass(frozen=True)
class Operand:
    """An input of a fused kernel: what it reads, through which description, and the first node input
    reading it (whose field names the binding in messages)."""

    source: Source
    desc: TensorDesc
    reader: tuple[int, int]


@dataclass(frozen=True)
class ExtraOutput:
    """An output a fused kernel writes besides its root's: output ``index`` of node ``node``, into graph
    output ``graph_output`` (the kernel's spec stores it as ``spec.extra[k]`` for ``extras[k]``)."""

    node: int
    index: int
    graph_output: int


@dataclass(frozen=True)
class FusedKernel:
    """Several nodes as one kernel: ``nodes`` in graph order, the root (whose output the kernel writes) last;
    ``spec`` reads ``operands`` in order and writes the root's output, then ``extras`` in order."""

    nodes: tuple[int, ...]
    operands: tuple[Operand, ...]
    spec: KernelSpec
    extras: tuple[ExtraOutput, ...] = ()
    layout: FusedLayout | None = None  # a QUANTIZE's or DEQUANTIZE's (``blocked_layout``): ``spec`` runs over it

    @property
    def root(self) -> int:
        return self.nodes[-1]


def fuse(graph: CheckedGraph, prologues: bool = False, outputs: bool = False) -> dict[int, FusedKernel]:
    """The fused kernel of every group of two or more nodes, by its root; reductions take element-wise
    prologues where ``prologues``, and kernels write composed graph outputs where ``outputs`` (the backend
    lowers them). A group holding QUANTIZE or DEQUANTIZE runs over their layout (``blocked_layout``); where
    its nodes have none, the nodes composed into its root are composed no more, and the planning is redone."""
    rules = _Rules(graph, prologues, outputs)
    barred: set[int] = set()
    while True:
        kernels = _planned(rules, frozenset(barred))
        refused = {n for kernel in kernels.values() if isinstance(kernel, tuple) for n in kernel}
        if not refused:
            return {root: kernel for root, kernel in kernels.items() if isinstance(kernel, FusedKernel)}
        barred |= refused


def _planned(rules: _Rules, barred: frozenset[int]) -> dict[int, FusedKernel | tuple[int, ...]]:
    """Each group's fused kernel by its root, or the nodes composed into it where the group has no layout."""
    graph = rules.graph
    composed = _composed(rules, barred)
    groups: dict[int, tuple[int, ...]] = {}
    for node in graph.order:
        if node in graph.operators and node not in composed and rules.may_root(node):
            members = _members(graph, composed, node)
            if len(members) > 1:
                groups[node] = members
    extras = _extras(rules, groups)
    kernels: dict[int, FusedKernel | tuple[int, ...]] = {}
    for root, members in groups.items():
        kernel = _FusedBuilder(graph, composed, members).build(root, extras[root])
        kernels[root] = members[:-1] if kernel is None else kernel
    return kernels


def _single_output(graph: CheckedGraph, node: int) -> bool:
    """Whether ``node`` is an operator of one output."""
    operator = graph.operators.get(node)
    return operator is not None and len(operator.definition.schema.outputs) == 1


def _elementwise(graph: CheckedGraph, node: int) -> bool:
    return _single_output(graph, node) and not graph.operators[node].kernel_spec.is_reduction


@dataclass(frozen=True)
class _Rules:
    graph: CheckedGraph
    prologues: bool
    outputs: bool

    def may_root(self, node: int) -> bool:
        """Whether ``node`` can be the last node of a fused kernel."""
        return _elementwise(self.graph, node) or (self.prologues and _single_output(self.graph, node)
                                                  and self.graph.operators[node].kernel_spec.reduction is not None)

    def edge(self, node: int, index: int) -> bool:
        """Whether input ``index`` of ``node`` could compute its producer's value itself: the producer is
        element-wise, ``node`` may root a kernel, loads that input, and reads it as it was written."""
        graph = self.graph
        producer = graph.sources[(node, index)].node
        if producer is None or not (_elementwise(graph, producer) and self.may_root(node)):
            return False
        if index not in ex.loads(graph.operators[node].kernel_spec.element):
            return False
        written, read = graph.output_desc(producer, 0), graph.input_desc(node, index)
        return written.sizes == read.sizes and all(
            a == b for n, a, b in zip(written.sizes, written.effective_strides, read.effective_strides) if n > 1)


def _composed(rules: _Rules, barred: frozenset[int] = frozenset()) -> frozenset[int]:
    """The nodes whose value their readers compute (the module's rules), decided in graph order: a
    producer's cost depends on which of its own producers are composed into it. ``barred`` nodes are not."""
    graph = rules.graph
    composed: set[int] = set()
    for node in graph.order:
        readers = graph.readers.get((node, 0), [])
        if node in barred or not readers or not _elementwise(graph, node) or not all(rules.edge(*r) for r in readers):
            continue
        output = bool(graph.graph_outputs.get((node, 0)))
        if output and not rules.outputs:
            continue
        if len({r for r, _ in readers}) == 1 or recompute_cheaper(graph, composed, node):
            composed.add(node)
    return frozenset(composed)


def broadcast(desc: TensorDesc) -> bool:
    """Whether a description reads one element for many: a zero stride on a dimension larger than 1."""
    return any(n > 1 and s == 0 for n, s in zip(desc.sizes, desc.effective_strides))


def chain_bits(graph: CheckedGraph, composed: set[int] | frozenset[int], node: int) -> int:
    """P of the module's rule, in bits (a 4-bit operand is half a byte): per element, what computing
    ``node``'s value (its composed producers included) reads, each distinct external operand once, a broadcast
    one as 0."""
    operands: dict[tuple[Source, TensorDesc], int] = {}
    pending, seen = [node], {node}
    while pending:
        member = pending.pop()
        for index in ex.loads(graph.operators[member].kernel_spec.element):
            source = graph.sources.get((member, index))
            if source is None:
                continue
            if source.node in composed:
                if source.node not in seen:
                    seen.add(source.node)  # type: ignore[arg-type]
                    pending.append(source.node)  # type: ignore[arg-type]
                continue
            desc = graph.input_desc(member, index)
            operands[(source, desc)] = 0 if broadcast(desc) else desc.data_type.bits
    return sum(operands.values())


def recompute_cheaper(graph: CheckedGraph, composed: set[int] | frozenset[int], node: int) -> bool:
    """The module's rule for a value read by several nodes: recompute it in each when that moves strictly
    fewer bytes per element than writing it once and reading it back in each."""
    k = len({r for r, _ in graph.readers[(node, 0)]})
    p, w = chain_bits(graph, composed, node), graph.output_desc(node, 0).data_type.bits
    output = bool(graph.graph_outputs.get((node, 0)))
    return k * p + (w if output else 0) < p + w + k * w


def _members(graph: CheckedGraph, composed: frozenset[int], root: int) -> tuple[int, ...]:
    """The nodes composed into ``root`` (transitively) and the root, in graph order."""
    found = {root}
    pending = [root]
    while pending:
        node = pending.pop()
        for index in range(len(graph.operators[node].definition.schema.inputs)):
            source = graph.sources.get((node, index))
            if source is not None and source.node in composed and source.node not in found:
                found.add(source.node)
                pending.append(source.node)
    return tuple(n for n in graph.order if n in found)


def _extras(rules: _Rules, groups: dict[int, tuple[int, ...]]) -> dict[int, tuple[ExtraOutput, ...]]:
    """The graph outputs each kernel writes besides its root's first: every composed member's, by the first
    kernel in graph order computing it; an element-wise root's further ones."""
    graph = rules.graph
    claimed: set[int] = set()
    extras: dict[int, tuple[ExtraOutput, ...]] = {}
    for root, members in groups.items():  # in graph order
        found: list[ExtraOutput] = []
        for node in members[:-1]:
            if node not in claimed and graph.graph_outputs.get((node, 0)):
                claimed.add(node)
                found += [ExtraOutput(node, 0, k) for k in graph.graph_outputs[(node, 0)]]
        if rules.outputs and _elementwise(graph, root):
            found += [ExtraOutput(root, 0, k) for k in graph.graph_outputs.get((root, 0), [])[1:]]
        extras[root] = tuple(found)
    return extras


def _stored(value: ex.Expr) -> ex.Store:
    """An element-wise node's composed value: the Store of its output (what an extra output writes)."""
    if not isinstance(value, ex.Store):
        raise ex.ExpressionError(f"an element-wise node stores its value; got {value!r}")
    return value


class _FusedBuilder:
    def __init__(self, graph: CheckedGraph, composed: frozenset[int], members: tuple[int, ...]) -> None:
        self.graph, self.composed, self.members = graph, composed, members
        self.composer = Composer()
        self.operands: list[Operand] = []
        self.values: dict[int, ex.Expr] = {}

    def build(self, root: int, extras: tuple[ExtraOutput, ...]) -> FusedKernel | None:
        """The group's kernel; None where it holds QUANTIZE or DEQUANTIZE and has no layout to run over."""
        element = self._value(root)
        stores = tuple(_stored(self._value(extra.node)) for extra in extras)
        name = "+".join(self.graph.operators[n].name for n in self.members)
        spec = self.graph.operators[root].kernel_spec
        operands = tuple(self.operands)
        if spec.reduction is None:
            fused = self.composer.spec(name, element, stores)
        else:
            fused = self.composer.reduction_spec(name, element, spec, stores)
        if not holds_layout(self.graph, self.members):
            return FusedKernel(self.members, operands, fused, extras)
        outputs = [self.graph.output_desc(root, 0)] + [self.graph.output_desc(e.node, e.index) for e in extras]
        axes = None if fused.reduction is None else fused.reduction.axes
        layout = fused_layout(self.graph, self.members, [o.desc for o in operands], outputs, axes)
        if layout is None:
            return None
        if fused.reduction is not None:
            fused = replace(fused, reduction=replace(fused.reduction, axes=layout.axes))
        return FusedKernel(self.members, operands, fused, extras, layout)

    def _value(self, node: int) -> ex.Expr:
        """``node``'s expression over the kernel's operands, its composed inputs first (in input order, so
        the kernel's first operand is the chain's first InputTensor); each node composed once, so a value
        read twice in one kernel is one subtree and its scalars are taken once."""
        found = self.values.get(node)
        if found is not None:
            return found
        spec = self.graph.operators[node].kernel_spec
        values: list[ex.Expr | None] = []
        for index, data_type in enumerate(spec.inputs):
            source = self.graph.sources.get((node, index))
            if data_type is None or source is None:
                values.append(None)
            elif source.node in self.composed:
                values.append(read_back(self._value(source.node)))  # type: ignore[arg-type]
            else:
                values.append(self._operand(source, node, index, data_type))
        found = self.values[node] = self.composer.add(spec, values)
        return found

    def _operand(self, source: Source, node: int, index: int, data_type: DataType) -> ex.Load:
        desc = self.graph.input_desc(node, index)
        before = len(self.composer.inputs)
        load = self.composer.operand((source, desc), data_type)
        if len(self.composer.inputs) > before:
            self.operands.append(Operand(source, desc, (node, index)))
        return load
