"""The execution plan of a compiled graph: ordered steps over nodes, reading and writing named slots.

Each step runs one kernel: one operator node, or several element-wise nodes fused into one (``fusion``),
which may write several outputs (a composed node's graph outputs); its inputs and outputs are slots: a
graph input or output binding, a constant's data, or a named intermediate buffer. Intermediates that fusion
removes get no slot and no memory: the plan, not the graph, is what executes. ``repr(compiled.plan)``
lists the steps and the nodes each runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .fusion import FusedKernel
from .validate import CheckedGraph, Source

MIN_ALIGNMENT = 16  # DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT: every slot of an arena starts on it


@dataclass(frozen=True)
class Slot:
    """Where a step reads or writes: graph input or output ``index``, constant or intermediate ``index``."""

    kind: Literal["input", "output", "constant", "intermediate"]
    index: int

    def __str__(self) -> str:
        return f"{_SLOT_NAMES[self.kind]}[{self.index}]"


_SLOT_NAMES = {"input": "Inputs", "output": "Outputs", "constant": "Constants", "intermediate": "Intermediates"}


@dataclass(frozen=True)
class Region:
    """A named range of an arena (the temporary buffer for intermediates, the persistent one for constants)."""

    name: str
    offset: int
    size_in_bytes: int
    alignment: int = MIN_ALIGNMENT  # of its offset: what the descriptions reading or writing it guarantee


@dataclass(frozen=True)
class Step:
    """Run operator node ``node``: input k reads ``inputs[k]`` (None: absent), output k writes ``outputs[k]``.

    A fused step (``fused`` given) runs the kernel of several nodes, ``node`` the one it writes the output
    of: input k is its kernel's operand k, and the outputs after ``node``'s are the graph outputs its
    kernel's extras write (``fused.extras``, in order). ``label`` names the nodes for ``repr(plan)``.
    """

    node: int
    inputs: tuple[Slot | None, ...]
    outputs: tuple[Slot, ...]
    fused: FusedKernel | None = None
    label: str = ""

    @property
    def nodes(self) -> tuple[int, ...]:
        """The nodes this step's kernel runs, in graph order."""
        return (self.node,) if self.fused is None else self.fused.nodes

    def __str__(self) -> str:
        reads = ", ".join("absent" if s is None else str(s) for s in self.inputs)
        return f"{self.label or self.node}: {reads} -> {', '.join(map(str, self.outputs))}"


@dataclass(frozen=True, repr=False)  # the repr lists the steps, one a line
class ExecutionPlan:
    steps: tuple[Step, ...]
    intermediates: tuple[Region, ...]  # by Slot("intermediate", k).index
    constants: tuple[Region, ...]  # by Slot("constant", k).index

    @property
    def groups(self) -> tuple[tuple[int, ...], ...]:
        """The nodes of each step's kernel: a group of several is one fused kernel."""
        return tuple(step.nodes for step in self.steps)

    def __repr__(self) -> str:
        lines = [f"step {k}: {step}" for k, step in enumerate(self.steps)]
        lines.append(f"temporary {self.temporary_size} bytes, persistent {self.persistent_size} bytes")
        return "<ExecutionPlan\n  " + "\n  ".join(lines) + ">"

    @property
    def temporary_size(self) -> int:
        return _arena_size(self.intermediates)

    @property
    def persistent_size(self) -> int:
        return _arena_size(self.constants)

    @property
    def temporary_alignment(self) -> int:
        """What the offset of a temporary resource holding the intermediates must be a multiple of, so that
        each region keeps its alignment: the largest of theirs."""
        return _arena_alignment(self.intermediates)

    @property
    def persistent_alignment(self) -> int:
        return _arena_alignment(self.constants)


def _arena_size(regions: tuple[Region, ...]) -> int:
    return max((r.offset + r.size_in_bytes for r in regions), default=0)


def _arena_alignment(regions: tuple[Region, ...]) -> int:
    return max((r.alignment for r in regions), default=MIN_ALIGNMENT)


class _Arena:
    """Lays regions out one after another, each aligned for every description that reads or writes it."""

    def __init__(self) -> None:
        self.regions: list[Region] = []
        self.end = 0

    def add(self, name: str, size: int, alignment: int) -> int:
        alignment = max(MIN_ALIGNMENT, alignment)
        offset = -(-self.end // alignment) * alignment
        self.regions.append(Region(name, offset, size, alignment))
        self.end = offset + size
        return len(self.regions) - 1


def build_plan(graph: CheckedGraph, fused: dict[int, FusedKernel] | None = None) -> ExecutionPlan:
    """One step per operator node in dependency order (and one more per extra graph output it feeds), or
    per fused kernel (``fused``, by root node: ``fusion.fuse``) at its root's place.

    A node output that feeds graph outputs is written straight into the first of them, and nodes that
    read it read it there; any other node output gets its own intermediate region, allocated once, unless
    it is fused away (then it has none). A fused step's outputs are its root's, then the graph outputs of
    its kernel's extras (``FusedKernel.extras``), in order. Steps run in graph order of their roots: a
    value a step reads is written by a step of an earlier root (a composed value is read by no step).
    """
    fused = fused or {}
    inside = {node for kernel in fused.values() for node in kernel.nodes[:-1]}
    temporary, persistent = _Arena(), _Arena()
    written: dict[tuple[int, int], Slot] = {}  # (node, output) -> where its value lives
    for node, data in graph.constants.items():
        alignment = max((graph.input_desc(*reader).guaranteed_base_offset_alignment
                         for reader in graph.readers.get((node, 0), [])), default=0)
        written[(node, 0)] = Slot("constant", persistent.add(_label(graph, node, "Data"), len(data), alignment))
    steps: list[Step] = []
    for node in graph.order:
        operator = graph.operators.get(node)
        if operator is None or node in inside:
            continue
        kernel = fused.get(node)
        extras = () if kernel is None else kernel.extras
        covered = {extra.graph_output for extra in extras}  # written by the kernel as extra outputs
        schema = operator.definition.schema
        destinations: list[list[Slot]] = []
        for index, field in enumerate(schema.outputs):
            outs = [Slot("output", k) for k in graph.graph_outputs.get((node, index), []) if k not in covered]
            if not outs:
                desc = graph.output_desc(node, index)
                alignment = max([desc.guaranteed_base_offset_alignment]
                                + [graph.input_desc(*r).guaranteed_base_offset_alignment
                                   for r in graph.readers.get((node, index), [])])
                region = temporary.add(_label(graph, node, field.name), desc.total_tensor_size_in_bytes, alignment)
                outs = [Slot("intermediate", region)]
            written[(node, index)] = outs[0]
            destinations.append(outs)
        if kernel is None:
            inputs = tuple(_read(graph, written, node, index) for index in range(len(schema.inputs)))
            label = _name(graph, node)
        else:
            inputs = tuple(_slot(written, operand.source) for operand in kernel.operands)
            label = " + ".join(_name(graph, n) for n in kernel.nodes) + " (fused)"
        more = tuple(Slot("output", extra.graph_output) for extra in extras)
        # An output feeding several graph outputs (not written as extras) is computed again for each:
        # bit-identical, and no copy has to know the layout.
        for run in range(max(len(outs) for outs in destinations)):
            outputs = tuple(outs[min(run, len(outs) - 1)] for outs in destinations)
            steps.append(Step(node, inputs, outputs + more, kernel, label))
    return ExecutionPlan(tuple(steps), tuple(temporary.regions), tuple(persistent.regions))


def _read(graph: CheckedGraph, written: dict[tuple[int, int], Slot], node: int, index: int) -> Slot | None:
    source = graph.sources.get((node, index))
    return None if source is None else _slot(written, source)


def _slot(written: dict[tuple[int, int], Slot], source: Source) -> Slot:
    if source.node is None:
        return Slot("input", source.index)
    return written[(source.node, source.index)]


def _node_name(graph: CheckedGraph, node: int) -> str:
    nodes = graph.desc.nodes
    return nodes[node].name if isinstance(nodes[node].name, str) and nodes[node].name else f"Nodes[{node}]"


def _name(graph: CheckedGraph, node: int) -> str:
    """A node as ``repr(plan)`` shows it: its name (or ``Nodes[k]``) and its operator."""
    return f"{_node_name(graph, node)} {graph.operators[node].name}"


def _label(graph: CheckedGraph, node: int, field: str) -> str:
    return f"{_node_name(graph, node)}.{field}"
