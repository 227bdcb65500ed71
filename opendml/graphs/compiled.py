"""A compiled graph: checked, planned, its intermediates and constants allocated; executes its plan."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..binding import BoundTensor, bind_tensor, check_overlaps
from ..buffer import Buffer, BufferBinding
from ..enums import ExecutionFlags
from ..errors import binding_error
from ..kernels import notices
from ..kernels.staged import ViewedKernel
from ..operator import (
    _BINDING_CACHE_LIMIT,
    BindingProperties,
    Kernel,
    _binding_key,
    _Checked,
    recall,
    remember,
)
from ..schema import TensorField
from ..shared import Registry, new_token
from ..tensor import TensorDesc
from . import fusion
from .desc import GraphDesc
from .plan import ExecutionPlan, Slot, Step, build_plan
from .validate import CheckedGraph, check_graph

if TYPE_CHECKING:
    from ..device import Device

OWNER = "GRAPH"  # bindings of a compiled graph: Inputs[k] and Outputs[k]

_Bound = list[tuple[Kernel, list[BoundTensor | None], list[BoundTensor]]]
_Arenas = dict[str, tuple[Buffer | None, int]]  # slot kind -> (arena buffer, offset of its first byte)


@dataclass(frozen=True)
class GraphInputs:
    """Graph input bindings checked by ``CompiledGraph.check_inputs``: as given (None for an unread input),
    and each placed once per description reading it (what overlap checks compare)."""

    bindings: list
    checked: list[BoundTensor]

# Compiled graphs unpickled in this process (and those pickled from it), by the name their pickles carry.
_rebuilt: Registry[CompiledGraph] = Registry(limit=64)


def compile_graph(device: Device, graph_desc: object, flags: ExecutionFlags | int | str,
                  fuse: bool | None = None) -> CompiledGraph:
    """IDMLDevice1::CompileGraph: every rule is checked here, then the plan is made (element-wise chains
    fused unless ``fuse`` is False, or None and OPENDML_FUSION is 0; chains feeding a reduction too where the
    backend lowers reduction prologues, and graph outputs written by the kernel computing them where it
    lowers extra outputs) and its memory taken."""
    flags = ExecutionFlags.parse(flags, owner="GraphDesc", field="ExecutionFlags")
    graph = check_graph(device, graph_desc)
    backend = device.backend
    fuse = fusion.enabled() if fuse is None else fuse
    fused = fusion.fuse(graph, backend.reduction_prologues(), backend.fused_outputs()) if fuse else None
    plan = build_plan(graph, fused)
    kernels: dict[int, Kernel] = {}
    for step in plan.steps:
        if step.node not in kernels:
            kernels[step.node] = _compile_step(device, graph, step, flags)
    return CompiledGraph(device, graph, plan, flags, kernels, fuse)


def _compile_step(device: Device, graph: CheckedGraph, step: Step, flags: ExecutionFlags) -> Kernel:
    """A node's operator compiled as on its own, or a fused kernel compiled from its KernelSpec (its extra
    outputs described as their nodes' output tensors)."""
    if step.fused is None:
        return device.compile_operator(graph.operators[step.node], flags).kernel
    fused = step.fused
    inputs = [operand.desc for operand in fused.operands]
    outputs = [graph.output_desc(step.node, 0)] + [graph.output_desc(e.node, e.index) for e in fused.extras]
    with notices.compiling(lambda: notices.describe(f"fused {fused.spec.operator}", fused.operands[0].desc)):
        if fused.layout is None:
            return device.backend.compile_spec(device, fused.spec, inputs, outputs[0], outputs[1:])
        # QUANTIZE or DEQUANTIZE among the nodes: the kernel runs over their layout, 4-bit tensors staged.
        views, targets = fused.layout.operands, fused.layout.outputs
        inner = device.backend.compile_spec(device, fused.spec, [v.desc for v in views], targets[0].desc,
                                            [v.desc for v in targets[1:]])
        return ViewedKernel(device, inner, list(zip(inputs, views)), list(zip(outputs, targets)))


class CompiledGraph:
    """A compiled graph (the IDMLCompiledOperator CompileGraph returns): bind and execute like an operator.

    ``execute(inputs, outputs)`` takes one binding per graph input and per graph output, in graph index
    order; a graph input that no edge reads is bound as None.
    """

    def __init__(self, device: Device, graph: CheckedGraph, plan: ExecutionPlan, flags: ExecutionFlags,
                 kernels: dict[int, Kernel], fuse: bool = True) -> None:
        self.device = device
        self.graph = graph
        self.plan = plan
        self.flags = flags
        self.fuse = fuse  # whether element-wise chains were fused (a copy sent elsewhere is planned the same)
        self._token: str | None = None  # the name its pickles carry (opendml.shared), given when first pickled
        self._kernels = kernels
        self._initialized = False
        self._temporary: Buffer | None = device.create_buffer(plan.temporary_size) if plan.temporary_size else None
        self._persistent: Buffer | None = self._upload_constants()
        self._readers = self._graph_input_readers()
        self._bound: dict[tuple, list[tuple[Kernel, _Checked]]] = {}
        # Executions share the intermediates' arena (and the binding cache): from several threads they
        # take turns, as DirectML's temporary resource would need a fence between them.
        self._lock = threading.Lock()

    @property
    def graph_desc(self) -> GraphDesc:
        return self.graph.desc

    @property
    def initialized(self) -> bool:
        return self._initialized

    @property
    def binding_properties(self) -> BindingProperties:
        """The intermediates' arena is temporary memory; the constants' arena is persistent."""
        return BindingProperties(self.plan.temporary_size, self.plan.persistent_size)

    def _upload_constants(self) -> Buffer | None:
        if not self.plan.constants:
            return None
        arena = np.zeros(self.plan.persistent_size, np.uint8)
        for region, data in zip(self.plan.constants, self.graph.constants.values()):
            arena[region.offset:region.offset + region.size_in_bytes] = np.frombuffer(data, np.uint8)
        return self.device.buffer_from(arena)

    def _graph_input_readers(self) -> dict[int, list[TensorDesc]]:
        """Each graph input's descriptions, one per node input reading it: its binding must suit them all."""
        readers: dict[int, list[TensorDesc]] = {}
        for (node, index), source in self.graph.sources.items():
            if source.node is None:
                readers.setdefault(source.index, []).append(self.graph.input_desc(node, index))
        return readers

    def initialize(self) -> None:
        """IDMLOperatorInitializer: the nodes' kernels are made ready (done by the first execute otherwise)."""
        if not self._initialized:
            for kernel in self._kernels.values():
                kernel.initialize()
            self._initialized = True

    def execute(self, inputs: Sequence[BufferBinding | Buffer | None],
                outputs: Sequence[BufferBinding | Buffer | None]) -> None:
        """Run the plan once over these bindings (checked as an operator's are); calls from several
        threads run one at a time."""
        with self._lock:
            self._execute(inputs, outputs)

    def _execute(self, inputs: Sequence[BufferBinding | Buffer | None],
                 outputs: Sequence[BufferBinding | Buffer | None]) -> None:
        """Bindings checked once are remembered by their buffers and ranges; executed again, each step runs its
        kernel's call prepared over them (as ``CompiledOperator.execute`` does), while all their buffers live."""
        key = _binding_key(inputs, outputs)
        steps = self._bound.get(key) if key is not None else None
        if steps is not None and self._initialized and all(checked.run for _, checked in steps):
            for _, checked in steps:
                checked.run[0]()
            return
        bound = None if steps is None else self._recall(steps)
        if bound is None:
            bound = self._bind(inputs, outputs)
            if key is not None:
                if len(self._bound) >= _BINDING_CACHE_LIMIT:
                    self._bound.clear()
                self._bound[key] = [(kernel, _Checked(remember(ins, outs))) for kernel, ins, outs in bound]
        self.initialize()
        for kernel, step_inputs, step_outputs in bound:
            kernel.execute(step_inputs, step_outputs)

    @staticmethod
    def _recall(steps: list[tuple[Kernel, _Checked]]) -> _Bound | None:
        """A binding checked before over the same buffers, bound again, and each step's call prepared over it
        for the executions after this one; None where a buffer is gone."""
        bound: _Bound = []
        for kernel, checked in steps:
            placed = recall(checked.remembered)
            if placed is None:
                return None
            bound.append((kernel, *placed))
        for (kernel, checked), (_, step_inputs, step_outputs) in zip(steps, bound):
            checked.prepare(kernel, step_inputs, step_outputs)
        return bound

    def _bind(self, inputs: object, outputs: object) -> _Bound:
        input_bindings = _group(inputs, "inputs", self.graph.desc.input_count, "graph input")
        output_bindings = _group(outputs, "outputs", self.graph.desc.output_count, "graph output")
        checked_inputs = self._check_input_bindings(input_bindings)
        checked_outputs = self._check_output_bindings(output_bindings)
        # Nodes read graph inputs after other nodes wrote graph outputs: no output may touch an input.
        check_overlaps(OWNER, checked_inputs, checked_outputs, in_place=False)
        return self.place_steps(input_bindings, checked_outputs)

    def check_inputs(self, inputs: object) -> GraphInputs:
        """The input bindings checked alone (count, then each against every description reading it), as a
        binding table binds them."""
        bindings = _group(inputs, "inputs", self.graph.desc.input_count, "graph input")
        return GraphInputs(bindings, self._check_input_bindings(bindings))

    def check_outputs(self, outputs: object) -> list[BoundTensor]:
        """The output bindings checked alone (count, then each binding's rules)."""
        return self._check_output_bindings(_group(outputs, "outputs", self.graph.desc.output_count, "graph output"))

    def _check_input_bindings(self, input_bindings: list) -> list[BoundTensor]:
        checked_inputs: list[BoundTensor] = []
        for k, binding in enumerate(input_bindings):
            field = TensorField(f"Inputs[{k}]", "input")
            if k not in self._readers:
                if binding is not None:
                    raise binding_error(OWNER, field.name, "must be bound as None (no edge reads this graph "
                                        "input)", type(binding).__name__)
                continue
            for desc in self._readers[k]:
                checked_inputs.append(bind_tensor(OWNER, self.device, field, desc, binding))  # type: ignore[arg-type]
        return checked_inputs

    def _check_output_bindings(self, output_bindings: list) -> list[BoundTensor]:
        checked_outputs: list[BoundTensor] = []
        output_descs = {k: self.graph.output_desc(*key)
                        for key, graph_outputs in self.graph.graph_outputs.items() for k in graph_outputs}
        for k, binding in enumerate(output_bindings):
            field = TensorField(f"Outputs[{k}]", "output")
            checked_outputs.append(bind_tensor(OWNER, self.device, field, output_descs[k], binding))  # type: ignore[arg-type]
        return checked_outputs

    def place_steps(self, input_bindings: list, checked_outputs: list[BoundTensor],
                    temporary: tuple[Buffer, int] | None = None, persistent: tuple[Buffer, int] | None = None
                    ) -> _Bound:
        """Each step's kernel and tensors over checked bindings; the intermediates in ``temporary`` (a buffer
        and the offset where the arena starts) or the graph's own arena, the constants in ``persistent`` (which
        must hold them: an operator initializer writes them there) or its own."""
        arenas = {"intermediate": temporary or (self._temporary, 0), "constant": persistent or (self._persistent, 0)}
        return [self._bind_step(step, input_bindings, checked_outputs, arenas) for step in self.plan.steps]

    def _bind_step(self, step: Step, input_bindings: list, checked_outputs: list[BoundTensor], arenas: _Arenas
                   ) -> tuple[Kernel, list[BoundTensor | None], list[BoundTensor]]:
        operator = self.graph.operators[step.node]
        schema = operator.definition.schema
        step_inputs: list[BoundTensor | None] = []
        if step.fused is not None:  # the fused kernel's operands, each read through its own description
            for operand, slot in zip(step.fused.operands, step.inputs):
                reader, index = operand.reader
                field = self.graph.operators[reader].definition.schema.inputs[index]
                step_inputs.append(self._place(field, operand.desc, slot, input_bindings, checked_outputs,  # type: ignore[arg-type]
                                               arenas))
        else:
            for field, slot in zip(schema.inputs, step.inputs):
                desc = operator.tensors[field.name]
                step_inputs.append(None if slot is None or desc is None
                                   else self._place(field, desc, slot, input_bindings, checked_outputs, arenas))
        step_outputs = [self._place(field, operator.tensor(field.name), slot, input_bindings, checked_outputs, arenas)
                        for field, slot in zip(schema.outputs, step.outputs)]
        if step.fused is not None:  # extra outputs: each its node's output tensor, placed in its graph output
            for extra, slot in zip(step.fused.extras, step.outputs[len(schema.outputs):]):
                field = self.graph.operators[extra.node].definition.schema.outputs[extra.index]
                step_outputs.append(self._place(field, self.graph.output_desc(extra.node, extra.index), slot,
                                                input_bindings, checked_outputs, arenas))
        return self._kernels[step.node], step_inputs, step_outputs

    def _place(self, field: TensorField, desc: TensorDesc, slot: Slot, input_bindings: list,
               checked_outputs: list[BoundTensor], arenas: _Arenas) -> BoundTensor:
        """The node's tensor ``field`` placed where ``slot`` lives, read through the node's own description."""
        if slot.kind == "input":
            binding = input_bindings[slot.index]
            binding = binding if isinstance(binding, BufferBinding) else BufferBinding(binding)
            return BoundTensor(field, desc, binding.buffer, int(binding.offset))
        if slot.kind == "output":
            out = checked_outputs[slot.index]
            return BoundTensor(field, desc, out.buffer, out.offset)
        (arena, base), regions = arenas[slot.kind], (self.plan.intermediates if slot.kind == "intermediate"
                                                     else self.plan.constants)
        assert arena is not None  # a plan with such a slot has a region in that arena
        return BoundTensor(field, desc, arena, base + regions[slot.index].offset)

    @property
    def arena_lock(self) -> threading.Lock:
        """Held by a run over the graph's own intermediates' arena (``execute``, and a recorded dispatch
        using it), so that runs on several threads take turns."""
        return self._lock

    @property
    def constants_buffer(self) -> Buffer | None:
        """The graph's own constants' arena (None without constants): what an operator initializer copies
        into a persistent resource bound for this graph."""
        return self._persistent

    def __repr__(self) -> str:
        return f"<CompiledGraph of {len(self.graph.desc.nodes)} nodes on {self.device}>"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its device, graph description, flags and fusion choice (never its kernels or arenas),
        with a name: a process compiles it once however many copies it receives (opendml.shared)."""
        if self._token is None:
            self._token = new_token()
        _rebuilt.remember(self._token, self)  # in this process it unpickles to itself
        return _recompiled, (self._token, self.device, self.graph.desc, self.flags, self.fuse)


def _recompiled(token: str, device: Device, graph_desc: GraphDesc, flags: ExecutionFlags, fuse: bool
                ) -> CompiledGraph:
    def make() -> CompiledGraph:
        compiled = compile_graph(device, graph_desc, flags, fuse)
        compiled._token = token  # so that a copy pickled again here (a scheduler relaying it) keeps the name
        return compiled

    return _rebuilt.get(token, make)


def _group(bindings: object, group: str, count: int, what: str) -> list:
    if isinstance(bindings, (str, bytes)) or not isinstance(bindings, Sequence):
        raise binding_error(OWNER, group, "must be a list of bindings", type(bindings).__name__)
    if len(bindings) != count:
        raise binding_error(OWNER, group, f"must hold {count} binding(s), one per {what}", len(bindings))
    return list(bindings)
