"""What a binding table binds for each kind of dispatchable, checked by the rules ``execute`` checks.

A target adapts one dispatchable (a compiled operator, a compiled graph, an operator initializer) to a
binding table: it checks input and output bindings each on their own (the same functions, and so the same
messages, as ``execute``), checks overlaps between what is bound, places its temporary and persistent
resources, and prepares the dispatch once everything is bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..binding import (
    RESOURCE_ALIGNMENT,
    BoundResource,
    BoundTensor,
    bind_inputs,
    bind_outputs,
    bind_resource,
    check_overlaps,
    other_device,
)
from ..enums import ExecutionFlags
from ..errors import binding_error, invalid
from ..graphs.compiled import OWNER as GRAPH
from ..graphs.compiled import CompiledGraph, GraphInputs
from ..operator import BindingProperties, CompiledOperator
from ..schema import TensorField
from .prepared import Locked, PersistentKey, PreparedDispatch, prepare_kernel

if TYPE_CHECKING:
    from ..device import Device
    from .initializer import OperatorInitializer

TEMPORARY = TensorField("TemporaryResource", "output")
PERSISTENT = TensorField("PersistentResource", "output")


def describe(dispatchable: object) -> str:
    """How messages name a dispatchable."""
    if isinstance(dispatchable, CompiledOperator):
        return dispatchable.operator.name
    if isinstance(dispatchable, CompiledGraph):
        return f"{GRAPH} of {len(dispatchable.graph.desc.nodes)} nodes"
    return repr(dispatchable)


class Target:
    """The binding rules of one dispatchable (subclasses: one per kind)."""

    owner: str  # the name leading binding messages, as ``execute`` spells it
    dispatchable: Any
    temporary_alignment = RESOURCE_ALIGNMENT
    persistent_alignment = RESOURCE_ALIGNMENT

    @property
    def device(self) -> Device:
        raise NotImplementedError

    @property
    def properties(self) -> BindingProperties:
        return self.dispatchable.binding_properties  # type: ignore[no-any-return]

    @property
    def volatile(self) -> bool:
        """Whether a recorded dispatch reads its table's bindings when its list executes
        (DESCRIPTORS_VOLATILE) rather than those the table held when it was recorded."""
        return bool(getattr(self.dispatchable, "flags", ExecutionFlags.NONE) & ExecutionFlags.DESCRIPTORS_VOLATILE)

    @property
    def epoch(self) -> int:
        """Changes when the dispatchable changes what it binds (an initializer's ``reset``)."""
        return 0

    def unbound_inputs(self) -> Any:
        """The inputs a table holds before ``bind_inputs`` (None: they must be bound)."""
        return None

    def unbound_outputs(self) -> Any:
        return None

    def check_inputs(self, bindings: object) -> Any:
        raise NotImplementedError

    def check_outputs(self, bindings: object) -> Any:
        raise NotImplementedError

    def check_overlaps(self, inputs: Any, outputs: Any) -> None:
        raise NotImplementedError

    def read(self, inputs: Any) -> list[BoundTensor]:
        """The ranges a dispatch reads, for the resources' overlap checks."""
        raise NotImplementedError

    def written(self, outputs: Any) -> list[BoundTensor | BoundResource]:
        raise NotImplementedError

    def check_temporary(self, binding: object) -> BoundResource | None:
        return bind_resource(self.owner, self.device, TEMPORARY, binding, self.properties.temporary_resource_size,
                             "TemporaryResourceSize", self.temporary_alignment)

    def check_persistent(self, binding: object) -> BoundResource | None:
        return bind_resource(self.owner, self.device, PERSISTENT, binding, self.properties.persistent_resource_size,
                             "PersistentResourceSize", self.persistent_alignment)

    def initialize(self) -> None:
        """Make the dispatchable ready before its first recorded dispatch (as the first ``execute`` would)."""

    def prepare(self, inputs: Any, outputs: Any, temporary: BoundResource | None,
                persistent: BoundResource | None) -> PreparedDispatch:
        raise NotImplementedError


class OperatorTarget(Target):
    def __init__(self, compiled: CompiledOperator) -> None:
        self.dispatchable = compiled
        self.operator = compiled.operator
        self.owner = compiled.operator.name

    @property
    def device(self) -> Device:
        return self.operator.device

    def check_inputs(self, bindings: object) -> list[BoundTensor | None]:
        return bind_inputs(self.operator, bindings)

    def check_outputs(self, bindings: object) -> list[BoundTensor]:
        return bind_outputs(self.operator, bindings)

    def check_overlaps(self, inputs: list[BoundTensor | None], outputs: list[BoundTensor]) -> None:
        check_overlaps(self.owner, inputs, outputs, self.operator.definition.schema.in_place)

    def read(self, inputs: list[BoundTensor | None]) -> list[BoundTensor]:
        return [b for b in inputs if b is not None]

    def written(self, outputs: list[BoundTensor]) -> list[BoundTensor | BoundResource]:
        return list(outputs)

    def initialize(self) -> None:
        self.dispatchable.initialize()

    def prepare(self, inputs: list[BoundTensor | None], outputs: list[BoundTensor], temporary: BoundResource | None,
                persistent: BoundResource | None) -> PreparedDispatch:
        return PreparedDispatch((prepare_kernel(self.dispatchable.kernel, inputs, outputs),))


class GraphTarget(Target):
    def __init__(self, graph: CompiledGraph) -> None:
        self.dispatchable = graph
        self.graph = graph
        self.owner = GRAPH
        # A resource holding an arena must keep every region's alignment.
        self.temporary_alignment = max(RESOURCE_ALIGNMENT, graph.plan.temporary_alignment)
        self.persistent_alignment = max(RESOURCE_ALIGNMENT, graph.plan.persistent_alignment)

    @property
    def device(self) -> Device:
        return self.graph.device

    def check_inputs(self, bindings: object) -> GraphInputs:
        return self.graph.check_inputs(bindings)

    def check_outputs(self, bindings: object) -> list[BoundTensor]:
        return self.graph.check_outputs(bindings)

    def check_overlaps(self, inputs: GraphInputs, outputs: list[BoundTensor]) -> None:
        # Nodes read graph inputs after other nodes wrote graph outputs: no output may touch an input.
        check_overlaps(self.owner, inputs.checked, outputs, in_place=False)

    def read(self, inputs: GraphInputs) -> list[BoundTensor]:
        return list(inputs.checked)

    def written(self, outputs: list[BoundTensor]) -> list[BoundTensor | BoundResource]:
        return list(outputs)

    def initialize(self) -> None:
        self.graph.initialize()

    def prepare(self, inputs: GraphInputs, outputs: list[BoundTensor], temporary: BoundResource | None,
                persistent: BoundResource | None) -> PreparedDispatch:
        """The graph's steps over its arenas: the bound resources where given (the persistent one must hold
        the constants: ``needs``), else its own."""
        props = self.properties
        temp = (temporary.buffer, temporary.offset) if temporary is not None and props.temporary_resource_size \
            else None
        persist = (persistent.buffer, persistent.offset) if persistent is not None and props.persistent_resource_size \
            else None
        steps = self.graph.place_steps(inputs.bindings, outputs, temp, persist)
        runs = tuple(prepare_kernel(kernel, step_inputs, step_outputs) for kernel, step_inputs, step_outputs in steps)
        if temp is None and props.temporary_resource_size:
            runs = (Locked(self.graph.arena_lock, runs),)
        needs = () if persist is None else (PersistentKey(self.graph, *persist),)
        return PreparedDispatch(runs, needs=needs)


class InitializerTarget(Target):
    """An operator initializer's bindings (IDMLOperatorInitializer): one input per compiled operator, None
    (none of them has an OWNED_BY_DML tensor to initialize), and one output per compiled operator: None, or
    the persistent resource its dispatches will bind (an initializer dispatch writes a graph's constants
    there). Both may be left unbound: all None."""

    owner = "OperatorInitializer"

    def __init__(self, initializer: OperatorInitializer) -> None:
        self.dispatchable = initializer

    @property
    def device(self) -> Device:
        return self.dispatchable.device  # type: ignore[no-any-return]

    @property
    def volatile(self) -> bool:
        return False

    @property
    def epoch(self) -> int:
        return self.dispatchable.epoch  # type: ignore[no-any-return]

    @property
    def _ops(self) -> tuple[CompiledOperator | CompiledGraph, ...]:
        return self.dispatchable.compiled_ops  # type: ignore[no-any-return]

    def unbound_inputs(self) -> list[None]:
        return [None] * len(self._ops)

    def unbound_outputs(self) -> list[BoundResource | None]:
        return [None] * len(self._ops)

    def _group(self, bindings: object, group: str) -> Sequence[object]:
        if isinstance(bindings, (str, bytes)) or not isinstance(bindings, Sequence):
            raise binding_error(self.owner, group, "must be a list of bindings", type(bindings).__name__)
        if len(bindings) != len(self._ops):
            raise binding_error(self.owner, group, f"must hold {len(self._ops)} binding(s), one per compiled "
                                "operator", len(bindings))
        return bindings

    def check_inputs(self, bindings: object) -> list[None]:
        for k, (binding, op) in enumerate(zip(self._group(bindings, "inputs"), self._ops)):
            if binding is not None:
                raise binding_error(self.owner, f"Inputs[{k}]", f"must be bound as None ({describe(op)} has no "
                                    "OWNED_BY_DML tensor to initialize)", type(binding).__name__)
        return [None] * len(self._ops)

    def check_outputs(self, bindings: object) -> list[BoundResource | None]:
        checked: list[BoundResource | None] = []
        for k, (binding, op) in enumerate(zip(self._group(bindings, "outputs"), self._ops)):
            alignment = GraphTarget(op).persistent_alignment if isinstance(op, CompiledGraph) else RESOURCE_ALIGNMENT
            checked.append(bind_resource(self.owner, self.device, TensorField(f"Outputs[{k}]", "output"), binding,
                                         op.binding_properties.persistent_resource_size, "PersistentResourceSize",
                                         alignment))
        check_overlaps(self.owner, [], [b for b in checked if b is not None], in_place=False)
        return checked

    def check_overlaps(self, inputs: list[None], outputs: list[BoundResource | None]) -> None:
        """Nothing to compare: the inputs are all None, and ``check_outputs`` compared the outputs."""

    def read(self, inputs: list[None]) -> list[BoundTensor]:
        return []

    def written(self, outputs: list[BoundResource | None]) -> list[BoundTensor | BoundResource]:
        return [b for b in outputs if b is not None]

    def prepare(self, inputs: list[None], outputs: list[BoundResource | None], temporary: BoundResource | None,
                persistent: BoundResource | None) -> PreparedDispatch:
        """Each compiled operator initialized, and each graph's constants copied into the persistent
        resource bound for it."""
        runs = [op.initialize for op in self._ops]
        writes: list[PersistentKey] = []
        for op, resource in zip(self._ops, outputs):
            if not isinstance(op, CompiledGraph) or resource is None or op.constants_buffer is None:
                continue
            size = op.binding_properties.persistent_resource_size
            runs.append(self.device.backend.prepare_copy(resource.buffer, resource.offset, op.constants_buffer, size))
            writes.append(PersistentKey(op, resource.buffer, resource.offset))
        return PreparedDispatch(tuple(runs), writes=tuple(writes))


def target_of(device: Device, dispatchable: object, owner: str, field: str) -> Target:
    """The target of ``dispatchable``, which must be a compiled operator, a compiled graph or an operator
    initializer of ``device``'s backend."""
    from .initializer import OperatorInitializer

    target: Target
    if isinstance(dispatchable, CompiledOperator):
        target = OperatorTarget(dispatchable)
    elif isinstance(dispatchable, CompiledGraph):
        target = GraphTarget(dispatchable)
    elif isinstance(dispatchable, OperatorInitializer):
        target = InitializerTarget(dispatchable)
    else:
        raise invalid(owner, field, "must be a compiled operator, a compiled graph or an operator initializer",
                      repr(dispatchable))
    if target.device is not device:
        raise invalid(owner, field, f"must be made on {device}",
                      f"{dispatchable!r}, made on {other_device(target.device, device)}")
    return target
