"""The binding table (IDMLBindingTable): a dispatchable's bindings, checked when they are bound."""

from __future__ import annotations

import itertools
import weakref
from typing import TYPE_CHECKING, Any

from ..binding import BoundResource, check_overlaps
from ..errors import invalid
from .prepared import PreparedDispatch
from .targets import Target, describe, target_of

if TYPE_CHECKING:
    from ..device import Device
    from .commands import CommandList

OWNER = "BindingTable"

_serial = itertools.count(1)


class BindingTable:
    """IDMLBindingTable, made by ``Device.create_binding_table(dispatchable)``.

    Each ``bind_*`` call checks its bindings by every rule ``execute`` checks, with the same messages: each
    binding on its own, then overlaps against what the table holds already (so to move inputs and outputs to
    places that overlap their old ones, ``reset`` the table first). A call that raises changes nothing.

    Without DESCRIPTORS_VOLATILE (ExecutionFlags 0x4, given when the dispatchable was compiled) a recorded
    dispatch runs the bindings the table held when it was recorded, and changing the table afterwards makes
    executing that command list an error; with it, the list reads the table's bindings when it executes.
    ``name`` (settable) is how messages name the table.
    """

    def __init__(self, device: Device, dispatchable: object) -> None:
        self.device = device
        self.name = f"BindingTable #{next(_serial)}"
        self._lists: weakref.WeakSet[CommandList] = weakref.WeakSet()  # lists holding dispatches recorded with it
        self._set(target_of(device, dispatchable, "Device", "dispatchable"))

    def _set(self, target: Target) -> None:
        self._target = target
        self._epoch = target.epoch
        self._inputs: Any = target.unbound_inputs()
        self._outputs: Any = target.unbound_outputs()
        self._temporary: BoundResource | None = None
        self._persistent: BoundResource | None = None

    @property
    def dispatchable(self) -> Any:
        return self._target.dispatchable

    @property
    def target(self) -> Target:
        return self._target

    def __repr__(self) -> str:
        return f"<{self.name} of {describe(self.dispatchable)} on {self.device}>"

    def bind_inputs(self, bindings: object) -> None:
        """One binding per input tensor (an operator's, in DirectML's order; a graph's, in index order)."""
        self._check_epoch()
        inputs = self._target.check_inputs(bindings)
        self._check(inputs, self._outputs, self._temporary, self._persistent)
        self._inputs = inputs
        self._changed("bind_inputs")

    def bind_outputs(self, bindings: object) -> None:
        self._check_epoch()
        outputs = self._target.check_outputs(bindings)
        self._check(self._inputs, outputs, self._temporary, self._persistent)
        self._outputs = outputs
        self._changed("bind_outputs")

    def bind_temporary_resource(self, binding: object) -> None:
        """A buffer range of at least the dispatchable's TemporaryResourceSize (a graph keeps its intermediates
        there), or None to use the dispatchable's own memory."""
        self._check_epoch()
        temporary = self._target.check_temporary(binding)
        self._check(self._inputs, self._outputs, temporary, self._persistent)
        self._temporary = temporary
        self._changed("bind_temporary_resource")

    def bind_persistent_resource(self, binding: object) -> None:
        """A buffer range of at least the dispatchable's PersistentResourceSize (a graph's constants, written
        there by an operator initializer dispatch), or None to use the dispatchable's own memory."""
        self._check_epoch()
        persistent = self._target.check_persistent(binding)
        self._check(self._inputs, self._outputs, self._temporary, persistent)
        self._persistent = persistent
        self._changed("bind_persistent_resource")

    def reset(self, dispatchable: object) -> None:
        """IDMLBindingTable::Reset: an empty table for ``dispatchable`` (the same one or another)."""
        self._set(target_of(self.device, dispatchable, OWNER, "dispatchable"))
        self._changed("reset")

    def _check_epoch(self) -> None:
        if self._epoch != self._target.epoch:
            raise invalid(OWNER, "dispatchable", f"must not have been reset since {self.name} was made for it "
                          "(call BindingTable.reset(initializer) first)", repr(self.dispatchable))

    def _check(self, inputs: Any, outputs: Any, temporary: BoundResource | None,
               persistent: BoundResource | None) -> None:
        """The rules between bindings: outputs against inputs, resources against both and each other."""
        target = self._target
        if inputs is not None and outputs is not None:
            target.check_overlaps(inputs, outputs)
        resources = [r for r in (temporary, persistent) if r is not None]
        if resources:
            tensors = ([] if inputs is None else target.read(inputs)) + ([] if outputs is None else
                                                                            target.written(outputs))
            check_overlaps(target.owner, tensors, resources, in_place=False)

    def _changed(self, how: str) -> None:
        for command_list in list(self._lists):
            command_list._table_changed(self, how)

    def prepare(self, dispatchable: object, owner: str) -> PreparedDispatch:
        """The dispatch of ``dispatchable`` over the bindings held now; ``owner`` (the recorder, or the queue
        for a volatile dispatch) names the error when the table is not for it or lacks bindings."""
        if dispatchable is not self._target.dispatchable:
            raise invalid(owner, "binding_table", "must be a binding table of the dispatchable "
                          f"({describe(dispatchable)})", f"{self.name}, a table of {describe(self.dispatchable)}")
        self._check_epoch()
        for what, value in (("inputs", self._inputs), ("outputs", self._outputs)):
            if value is None:
                raise invalid(owner, f"{self.name} {what}", f"must be bound (bind_{what}) before "
                              f"{describe(dispatchable)} is dispatched", "none bound")
        return self._target.prepare(self._inputs, self._outputs, self._temporary, self._persistent)

    def complete(self) -> bool:
        return self._inputs is not None and self._outputs is not None and self._epoch == self._target.epoch

    def watch(self, command_list: CommandList) -> None:
        """``command_list`` holds a dispatch recorded with this table: tell it when the table changes."""
        self._lists.add(command_list)
