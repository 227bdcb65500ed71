"""The command recorder (IDMLCommandRecorder), command lists and command queues (D3D12's, reduced to what
recorded dispatches need): record once, execute many times."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import invalid
from .binding_table import BindingTable
from .executors import Executor, SynchronousExecutor
from .prepared import PersistentKey, PreparedDispatch, Run, mark_written, written
from .targets import Target, describe, target_of

if TYPE_CHECKING:
    from ..device import Device

RECORDER, LIST, QUEUE = "CommandRecorder", "CommandList", "CommandQueue"


@dataclass
class _Record:
    """One recorded dispatch: what it dispatches, with which table, and its prepared calls (None while a
    volatile dispatch waits for its table's bindings, read when the list next executes)."""

    target: Target
    table: BindingTable
    volatile: bool
    prepared: PreparedDispatch | None

    @property
    def dispatchable(self) -> Any:
        return self.target.dispatchable


class CommandRecorder:
    """IDMLCommandRecorder, made by ``Device.create_command_recorder()``."""

    def __init__(self, device: Device) -> None:
        self.device = device

    def record_dispatch(self, command_list: CommandList, dispatchable: object, binding_table: BindingTable) -> None:
        """Record a dispatch of ``dispatchable`` over ``binding_table``'s bindings at the end of the open
        ``command_list``. Everything is checked and prepared here (the dispatchable initialized if it was
        not); a volatile dispatch (DESCRIPTORS_VOLATILE) whose table is not complete yet is prepared when the
        list executes. Dispatches in one list run in order, each seeing the writes of those before it."""
        if not isinstance(command_list, CommandList) or command_list.device is not self.device:
            raise invalid(RECORDER, "command_list", f"must be a command list of {self.device}", repr(command_list))
        if command_list.closed:
            raise invalid(RECORDER, "command_list", "must be open (recording into a closed list is an error, as in "
                          "D3D12: call CommandList.reset() to record it again)", "a closed command list")
        target = target_of(self.device, dispatchable, RECORDER, "dispatchable")
        if not isinstance(binding_table, BindingTable) or binding_table.device is not self.device:
            raise invalid(RECORDER, "binding_table", f"must be a binding table of {self.device}", repr(binding_table))
        volatile = target.volatile
        if volatile and binding_table.dispatchable is dispatchable and not binding_table.complete():
            prepared = None  # bound before the list executes
        else:
            prepared = binding_table.prepare(dispatchable, RECORDER)
        target.initialize()
        command_list._append(_Record(target, binding_table, volatile, prepared))
        binding_table.watch(command_list)


class CommandList:
    """A D3D12 command list of recorded dispatches, made by ``Device.create_command_list()`` (open).

    ``close()`` ends recording (recording into a closed list is an error, as is executing an open one);
    ``reset()`` empties it and opens it again. A closed list may be executed any number of times.
    """

    def __init__(self, device: Device) -> None:
        self.device = device
        self.runs: tuple[Run, ...] = ()
        self.cache: dict[str, object] = {}
        self.captures = 0
        self._records: list[_Record] = []
        self._closed = False
        self._stale: str | None = None  # why it may not execute: a non-volatile dispatch's table changed
        self._dirty = False  # a volatile dispatch's table changed: prepare it again before executing
        self._writes: tuple[PersistentKey, ...] = ()
        self._needs = False
        self._attention = True  # anything for execute_command_lists to do before running it

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def dispatch_count(self) -> int:
        return len(self._records)

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<CommandList of {len(self._records)} dispatch(es), {state}, on {self.device}>"

    def close(self) -> None:
        """End recording: the list may now be executed."""
        if self._closed:
            raise invalid(LIST, "close", "must be called on an open command list (call reset() to record it again)",
                          "a closed command list")
        self._closed = True
        self._rebuild()

    def reset(self) -> None:
        """Empty the list and open it for recording again (D3D12's Reset)."""
        self._records = []
        self._closed = False
        self._stale = None
        self._dirty = False
        self._rebuild()

    def _append(self, record: _Record) -> None:
        self._records.append(record)
        if record.prepared is None:
            self._dirty = True
        self._update()

    def _table_changed(self, table: BindingTable, how: str) -> None:
        """``table`` changed (``how``: the call): a volatile dispatch with it is prepared again before the list
        next executes; a non-volatile one makes executing the list an error."""
        for index, record in enumerate(self._records):
            if record.table is not table:
                continue
            if record.volatile:
                record.prepared = None
                self._dirty = True
            elif self._stale is None:
                self._stale = (f"{table.name}, changed by {how} after dispatch {index} "
                               f"({describe(record.dispatchable)}) was recorded with it")
        self._update()

    def _refresh(self) -> None:
        """Prepare each volatile dispatch whose table changed over the bindings its table holds now (checked
        when they were bound: what is left is that the table is complete and still for that dispatchable)."""
        prepared = [record.prepared or record.table.prepare(record.dispatchable, QUEUE) for record in self._records]
        for record, dispatch in zip(self._records, prepared):
            record.prepared = dispatch
        self._dirty = False
        self._rebuild()

    def _rebuild(self) -> None:
        """The calls an executor runs and the persistent resources they write and read, from the records."""
        dispatches = [record.prepared for record in self._records if record.prepared is not None]
        self.runs = tuple(run for dispatch in dispatches for run in dispatch.runs)
        self._writes = tuple(key for dispatch in dispatches for key in dispatch.writes)
        self._needs = any(dispatch.needs for dispatch in dispatches)
        self.cache.clear()
        self._update()

    def _update(self) -> None:
        self._attention = not self._closed or self._stale is not None or self._dirty or bool(self._writes) \
            or self._needs

    def _persistent_events(self) -> list[tuple[bool, PersistentKey, int]]:
        """(writes, key, dispatch index) in recording order."""
        events = []
        for index, record in enumerate(self._records):
            assert record.prepared is not None  # refreshed before this is asked
            events += [(True, key, index) for key in record.prepared.writes]
            events += [(False, key, index) for key in record.prepared.needs]
        return events


class CommandQueue:
    """A D3D12 command queue, made by ``Device.create_command_queue()``.

    ``execute_command_lists(lists)`` runs closed lists in order; ``wait()`` returns once everything
    submitted has finished. On the CPU, lists run before ``execute_command_lists`` returns; on CUDA they run on
    the queue's own stream, each list captured once into a CUDA graph and replayed by one launch (``cuda_graphs``:
    None follows OPENDML_CUDA_GRAPHS, default 1; False launches the kernels one by one, for debugging).
    """

    def __init__(self, device: Device, cuda_graphs: bool | None = None) -> None:
        if cuda_graphs is not None and not isinstance(cuda_graphs, bool):
            raise invalid("Device", "cuda_graphs", "must be True, False or None (OPENDML_CUDA_GRAPHS decides)",
                          repr(cuda_graphs))
        self.device = device
        make = getattr(device.backend, "queue_executor", None)
        self._executor: Executor = SynchronousExecutor() if make is None else make(cuda_graphs)

    @property
    def cuda_graphs(self) -> bool:
        """Whether lists are captured into CUDA graphs and replayed (never on the CPU)."""
        return self._executor.cuda_graphs

    @property
    def stream(self) -> Any:
        """The CUDA stream its lists run on (a ``cupy.cuda.Stream``), where events timing them are recorded;
        None on the CPU, where lists run in the calling thread."""
        return getattr(self._executor, "stream", None)

    def __repr__(self) -> str:
        return f"<CommandQueue on {self.device}>"

    def execute_command_lists(self, lists: Sequence[CommandList]) -> None:
        """Run ``lists`` in order, each dispatch after the one before it. Everything is checked before anything
        runs: a list that is open, of another device, or stale (a non-volatile dispatch's table changed after
        it was recorded) raises; a volatile dispatch reads its table's bindings now."""
        if type(lists) is not list and type(lists) is not tuple:
            lists = _sequence(lists)
        writes: list[PersistentKey] | None = None
        for command_list in lists:
            if type(command_list) is not CommandList or command_list._attention \
                    or command_list.device is not self.device:
                writes = self._checked(lists)
                break
        execute = self._executor.execute
        for command_list in lists:
            execute(command_list)
        if writes:
            mark_written(writes)

    def wait(self) -> None:
        """Wait until every list executed on this queue has finished (CUDA: its stream is synchronized)."""
        self._executor.wait()

    def _checked(self, lists: Sequence[CommandList]) -> list[PersistentKey]:
        """Every check of ``execute_command_lists``; the persistent resources the lists will write."""
        for k, command_list in enumerate(lists):
            if not isinstance(command_list, CommandList) or command_list.device is not self.device:
                raise invalid(QUEUE, f"lists[{k}]", f"must be a command list of {self.device}", repr(command_list))
            if not command_list.closed:
                raise invalid(QUEUE, f"lists[{k}]", "must be closed (CommandList.close()) before it is executed",
                              "an open command list")
            if command_list._stale is not None:
                raise invalid(QUEUE, f"lists[{k}]", "must run the bindings its dispatches were recorded with: a "
                              "binding table may not change after a dispatch is recorded with it unless the "
                              "dispatchable was compiled with DESCRIPTORS_VOLATILE (record the dispatch again)",
                              command_list._stale)
        for command_list in lists:
            if command_list._dirty:
                command_list._refresh()
        return _check_persistent(lists)


def _sequence(lists: object) -> list[CommandList]:
    if isinstance(lists, (str, bytes)) or not isinstance(lists, Sequence):
        raise invalid(QUEUE, "lists", "must be a list of command lists", type(lists).__name__)
    return list(lists)


def _check_persistent(lists: Sequence[CommandList]) -> list[PersistentKey]:
    """A graph dispatched with a persistent resource reads its constants there: an initializer dispatch must
    have written them, executed before or earlier in these lists."""
    pending: set[PersistentKey] = set()
    for k, command_list in enumerate(lists):
        for writes, key, index in command_list._persistent_events():
            if writes:
                pending.add(key)
            elif key not in pending and not written(key):
                raise invalid(QUEUE, f"lists[{k}]", "must not read a graph's constants from a persistent resource "
                              "before an operator initializer dispatch wrote them there (record one with the "
                              "resource as the graph's output binding, in this list or one executed before)",
                              f"dispatch {index} of {describe(key.graph)} reading bytes at {key.offset} of "
                              f"{key.buffer!r}")
    return list(pending)
