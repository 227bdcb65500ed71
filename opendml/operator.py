"""The operator lifecycle: created (validated) -> compiled -> initialized -> bound and executed."""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from .binding import BoundTensor, bind
from .buffer import Buffer, BufferBinding
from .enums import ExecutionFlags
from .kernels.spec import KernelSpec
from .ops.definition import OperatorDefinition
from .schema import TensorField
from .tensor import TensorDesc

if TYPE_CHECKING:
    from .device import Device


_BINDING_CACHE_LIMIT = 16


def _binding_key(inputs: object, outputs: object) -> tuple | None:
    """What a checked binding depends on (buffers, offsets, sizes), or None when it cannot be cached.

    Buffers and bindings never change after they are made, so bindings checked once stay valid.
    """
    if not isinstance(inputs, (list, tuple)) or not isinstance(outputs, (list, tuple)):
        return None
    key: list[object] = []
    for binding in (*inputs, *outputs):
        if binding is None:
            key.append(None)
        elif type(binding) is BufferBinding:
            if not _hashable_size(binding.offset) or not _hashable_size(binding.size_in_bytes):
                return None  # a list or an array given as an offset: bind() reports it
            key.append((id(binding.buffer), type(binding.offset), binding.offset,
                        type(binding.size_in_bytes), binding.size_in_bytes))
        elif isinstance(binding, Buffer):
            key.append((id(binding),))
        else:
            return None
    return (len(inputs), *key)


def _hashable_size(value: object) -> bool:
    return value is None or isinstance(value, (int, float, str, np.generic))


# A bound tensor with its buffer held weakly, and an operator's (or a graph step's) inputs and outputs so held:
# what a compiled operator or graph remembers of a binding it has checked.
_Detached = tuple[TensorField, TensorDesc, "weakref.ref[Buffer]", int]
Remembered = tuple[list[_Detached | None], list[_Detached | None]]


def remember(inputs: Sequence[BoundTensor | None], outputs: Sequence[BoundTensor]) -> Remembered:
    """Bound tensors as a checked binding is remembered: holding their buffers weakly, so that remembering
    never keeps a caller's memory alive (the functional API binds new arrays at each call, and a device's
    compiled operators live as long as it does)."""
    return _detach(inputs), _detach(outputs)


def recall(remembered: Remembered) -> tuple[list[BoundTensor | None], list[BoundTensor]] | None:
    """The bound tensors again, or None where a buffer is gone. A remembered binding is found by its buffers'
    ids (``_binding_key``): while its buffers live, those ids are theirs, so the buffers bound now are they."""
    inputs, outputs = _attach(remembered[0]), _attach(remembered[1])
    if inputs is None or outputs is None:
        return None
    return inputs, [b for b in outputs if b is not None]  # outputs are never absent


def _detach(bound: Sequence[BoundTensor | None]) -> list[_Detached | None]:
    return [None if b is None else (b.field, b.desc, weakref.ref(b.buffer), b.offset) for b in bound]


def _attach(detached: Sequence[_Detached | None]) -> list[BoundTensor | None] | None:
    bound: list[BoundTensor | None] = []
    for d in detached:
        buffer = None if d is None else d[2]()
        if d is not None and buffer is None:
            return None
        bound.append(None if d is None or buffer is None else BoundTensor(d[0], d[1], buffer, d[3]))
    return bound


class _Checked:
    """A binding ``execute`` has checked: its bound tensors as remembered (buffers held weakly), and, once it is
    executed again, the kernel's call prepared over them (``run``: empty until then, and emptied when any of
    its buffers is freed, so that the prepared views never keep a caller's memory alive)."""

    __slots__ = ("_watch", "remembered", "run")

    def __init__(self, remembered: Remembered) -> None:
        self.remembered = remembered
        self.run: list[Callable[[], None]] = []
        self._watch: tuple[weakref.ref[Buffer], ...] = ()

    def prepare(self, kernel: Kernel, inputs: Sequence[BoundTensor | None], outputs: Sequence[BoundTensor]) -> None:
        """Keep the kernel's prepared call over these bindings (the remembered ones, recalled), where the kernel
        offers one (``prepare``)."""
        prepare = getattr(kernel, "prepare", None)
        if prepare is None:
            return
        run = self.run

        def forget(_: object) -> None:  # a buffer is being freed: drop the views of its memory with it
            run.clear()

        buffers = {id(b.buffer): b.buffer for b in (*inputs, *outputs) if b is not None}
        self._watch = tuple(weakref.ref(buffer, forget) for buffer in buffers.values())
        run.append(prepare(inputs, outputs))


@dataclass(frozen=True)
class BindingProperties:
    """DML_BINDING_PROPERTIES: the device memory, in bytes, that executing needs beyond the bindings.

    opendml allocates it itself (a compiled graph's intermediates are temporary memory, its constants
    persistent memory), so a caller need not provide it; a binding table may bind resources of these sizes
    instead (``BindingTable.bind_temporary_resource``, ``bind_persistent_resource``).
    """

    temporary_resource_size: int
    persistent_resource_size: int


class Kernel(Protocol):
    """What a backend compiles an operator into.

    Kernels may also offer ``prepare(inputs, outputs)``: a call taking no arguments that runs the kernel
    over these (checked) bindings with everything resolved once, what a recorded dispatch replays
    (``opendml.recording``) and what ``CompiledOperator.execute`` runs for bindings it executes again;
    without it a recorded dispatch calls ``execute``. Prepared calls may be made from several threads at
    once, each on its own CUDA stream: one that holds state (a CUDA split reduction's partial results) orders
    its calls itself.
    """

    def initialize(self) -> None: ...

    def execute(self, inputs: Sequence[BoundTensor | None], outputs: Sequence[BoundTensor]) -> None: ...


class Operator:
    """A validated operator description on a device (IDMLOperator). Made by ``Device.create_operator``."""

    def __init__(self, device: Device, definition: OperatorDefinition, desc: object, params: Any) -> None:
        self.device = device
        self.definition = definition
        self.desc = desc
        self.params = params
        self.tensors: dict[str, TensorDesc | None] = definition.tensors(desc)

    @property
    def name(self) -> str:
        return self.definition.schema.name

    @functools.cached_property
    def kernel_spec(self) -> KernelSpec:
        """What backends compile: the operator's element expression, operand types and scalars."""
        return self.definition.kernel(self.params, self.tensors)

    @property
    def kernel_tensors(self) -> tuple[list[TensorDesc | None], TensorDesc]:
        """The descriptions a kernel of ``kernel_spec`` runs over: the inputs in DirectML's order (None for an
        absent one), then the output."""
        schema = self.definition.schema
        return [self.tensors[f.name] for f in schema.inputs], self.tensor(schema.outputs[0].name)

    def tensor(self, name: str) -> TensorDesc:
        """A tensor the operator has (a required one, or an optional one known to be given)."""
        desc = self.tensors[name]
        if desc is None:
            raise KeyError(f"{self.name} has no {name}")
        return desc

    def __repr__(self) -> str:
        return f"<Operator {self.name} on {self.device}>"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its device and description; created again (validated, not compiled) on arrival."""
        return _created, (self.device, self.desc)


class CompiledOperator:
    """A compiled operator (IDMLCompiledOperator): bind buffers and execute.

    >>> import numpy as np, opendml as dml
    >>> device = dml.Device()
    >>> desc = dml.TensorDesc("FLOAT32", [4])
    >>> op = device.compile_operator(device.create_operator(dml.ElementWiseClipDesc(desc, desc, -1.0, 1.0)))
    >>> buffer = device.buffer_from(np.array([-3, 0.5, 2, 1], np.float32))
    >>> op.execute([dml.BufferBinding(buffer)], [dml.BufferBinding(buffer)])  # in place
    >>> buffer.to_numpy().view(np.float32)
    array([-1. ,  0.5,  1. ,  1. ], dtype=float32)
    """

    def __init__(self, operator: Operator, flags: ExecutionFlags, kernel: Kernel) -> None:
        self.operator = operator
        self.flags = flags
        self._kernel = kernel
        self._initialized = False
        self._bound: dict[tuple, _Checked] = {}

    @property
    def initialized(self) -> bool:
        return self._initialized

    @property
    def binding_properties(self) -> BindingProperties:
        """GetBindingProperties: the operators keep no temporary or persistent memory."""
        return BindingProperties(0, 0)

    def initialize(self) -> None:
        """What an operator initializer does for this operator (done by the first execute otherwise)."""
        if not self._initialized:
            self._kernel.initialize()
            self._initialized = True

    @property
    def kernel(self) -> Kernel:
        """What the backend compiled: ``execute`` checks the bindings, then runs it."""
        return self._kernel

    def execute(self, inputs: Sequence[BufferBinding | Buffer | None],
                outputs: Sequence[BufferBinding | Buffer | None]) -> None:
        """Run once. ``inputs``/``outputs`` hold one binding per tensor in DirectML's order.

        Bindings checked once are remembered by their buffers and ranges (``_binding_key``: buffers and
        bindings never change); executed again, they run the kernel's call prepared over them, as a
        recorded dispatch does. A prepared call exists only while all its buffers do, so the buffers bound
        now, of the same ids, are those it was prepared over.
        """
        key = _binding_key(inputs, outputs)
        checked = self._bound.get(key) if key is not None else None
        if checked is not None:
            run = checked.run
            if run and self._initialized:
                run[0]()
                return
            bound = recall(checked.remembered)
            if bound is not None:
                checked.prepare(self._kernel, *bound)
        else:
            bound = None
        if bound is None:
            bound = bind(self.operator, inputs, outputs)
            if key is not None:
                if len(self._bound) >= _BINDING_CACHE_LIMIT:
                    self._bound.clear()
                self._bound[key] = _Checked(remember(*bound))
        bound_inputs, bound_outputs = bound
        if not self._initialized:
            self._kernel.initialize()
            self._initialized = True
        self._kernel.execute(bound_inputs, bound_outputs)

    def __repr__(self) -> str:
        return f"<CompiledOperator {self.operator.name} on {self.operator.device}>"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its device, description and execution flags, never as its compiled kernel; unpickled
        through the receiving device's compile cache (``Device.compiled``), so a process compiles it once."""
        device = self.operator.device
        device.remember_compiled(self)  # in this process it unpickles to itself
        return _compiled, (device, self.operator.desc, self.flags)


def _created(device: Device, desc: object) -> Operator:
    return device.create_operator(desc)


def _compiled(device: Device, desc: object, flags: ExecutionFlags) -> CompiledOperator:
    return device.compiled(desc, flags)
