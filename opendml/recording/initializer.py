"""The operator initializer (IDMLOperatorInitializer): a dispatchable that initializes compiled operators."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import invalid
from ..graphs.compiled import CompiledGraph
from ..operator import BindingProperties, CompiledOperator

if TYPE_CHECKING:
    from ..device import Device

OWNER = "OperatorInitializer"


class OperatorInitializer:
    """IDMLOperatorInitializer, made by ``Device.create_operator_initializer(compiled_ops)``.

    Dispatching it (recorded like any dispatchable, its binding table made for it) runs the initialization
    of each compiled operator or graph: what the first ``execute`` does otherwise, so initializing explicitly
    is optional. Its binding table's outputs are, per compiled operator, None or the persistent resource its
    dispatches will bind: the dispatch writes a graph's constants there (``docs/recording.md``).
    """

    def __init__(self, device: Device, compiled_ops: object) -> None:
        self.device = device
        self._ops = _checked_ops(device, compiled_ops, "Device")
        self._epoch = 0

    @property
    def compiled_ops(self) -> tuple[CompiledOperator | CompiledGraph, ...]:
        return self._ops

    @property
    def epoch(self) -> int:
        """How many times ``reset`` changed the operators (a binding table made before must be reset)."""
        return self._epoch

    @property
    def binding_properties(self) -> BindingProperties:
        """Initializing these operators needs no temporary memory, and an initializer has no persistent
        memory (DirectML's PersistentResourceSize of an initializer is always 0)."""
        return BindingProperties(0, 0)

    def reset(self, compiled_ops: object) -> None:
        """IDMLOperatorInitializer::Reset: initialize these operators instead. A bad list changes nothing."""
        ops = _checked_ops(self.device, compiled_ops, OWNER)
        self._ops = ops
        self._epoch += 1

    def __repr__(self) -> str:
        return f"<OperatorInitializer of {len(self._ops)} compiled operator(s) on {self.device}>"


def _checked_ops(device: Device, compiled_ops: object, owner: str) -> tuple[CompiledOperator | CompiledGraph, ...]:
    if isinstance(compiled_ops, (str, bytes)) or not isinstance(compiled_ops, Sequence):
        raise invalid(owner, "compiled_ops", "must be a list of compiled operators", type(compiled_ops).__name__)
    for k, op in enumerate(compiled_ops):
        if not isinstance(op, (CompiledOperator, CompiledGraph)) or _device(op).backend is not device.backend:
            raise invalid(owner, f"compiled_ops[{k}]", f"must be a compiled operator or graph of {device}", repr(op))
    return tuple(compiled_ops)


def _device(op: CompiledOperator | CompiledGraph) -> Any:
    return op.operator.device if isinstance(op, CompiledOperator) else op.device
