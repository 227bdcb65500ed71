"""Running a plan: compiled into one graph (``program.py``) once per set of operators and reused, graph
inputs uploaded, constants uploaded once per session, outputs read back. Below feature level 2_1, where
CompileGraph is missing, each step is bound and executed in order instead, intermediates kept on the
device in buffers released after their last reader."""

from __future__ import annotations

import hashlib
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..buffer import Buffer, BufferBinding
from ..device import Device
from ..dtypes import DataType, from_numpy
from ..errors import invalid
from ..functional import default_device
from ..graphs.validate import GRAPH_LEVEL
from ..packing import pack4, unpack4
from ..tensor import calc_buffer_tensor_size
from . import types
from .graph import CONSTANT, Value, node_views
from .model import ModelLike, check_feeds, load_model
from .plan import Plan, build_plan, check_model, constant_values
from .program import Program, Source, compile_program, program_key

Progress = Callable[[int, int, str], None]  # (steps done, steps in all, label of the step just run)

_PROGRAM_CACHE_LIMIT = 16  # compiled programs a session keeps (one per set of operators its runs needed)
_SESSION_CACHE_LIMIT = 8  # sessions ``run`` keeps per device, the most recently used
_SESSIONS: weakref.WeakKeyDictionary[Device, OrderedDict[bytes, Session]] = weakref.WeakKeyDictionary()


def resolve_device(device: Device | str | None) -> Device:
    """None: the CPU device at the newest feature level; a name: a new Device on that backend."""
    if device is None:
        return default_device()
    if isinstance(device, Device):
        return device
    if isinstance(device, str):
        return Device(device)
    raise invalid("opendml.onnx", "device", "must be a Device, a backend name ('cpu', 'cuda') or None",
                  repr(device))


class Session:
    """A model loaded, checked and bound to a device; ``run`` plans and executes it on given inputs.

    >>> from onnx import TensorProto, helper
    >>> graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu",
    ...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
    ...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    >>> session = Session(helper.make_model(graph))
    >>> session.run({"x": np.array([-1.0, 0.5, 2.0], np.float32)})
    {'y': array([0. , 0.5, 2. ], dtype=float32)}
    """

    def __init__(self, model: ModelLike, device: Device | str | None = None) -> None:
        self.model = load_model(model)
        self.device = resolve_device(device)
        self._nodes = node_views(self.model)
        check_model(self.model, self._nodes)
        self._constants = constant_values(self.model)
        self._uploaded: dict[str, Buffer] = {}  # constants on the device, uploaded on first use
        self._programs: dict[tuple, Program] = {}

    @property
    def input_names(self) -> list[str]:
        initialized = set(self._constants)
        return [i.name for i in self.model.graph.input if i.name not in initialized]

    @property
    def output_names(self) -> list[str]:
        return [o.name for o in self.model.graph.output]

    def plan(self, inputs: Mapping[str, Any]) -> Plan:
        """Every node lowered onto a compiled operator for these inputs (nothing runs)."""
        return build_plan(self.model, self._nodes, check_feeds(self.model, inputs), self._constants, self.device)

    def program(self, inputs: Mapping[str, Any]) -> Program:
        """The plan for these inputs compiled into graphs (feature level 2_1 or later; one, unless a REDUCE or TOP_K
        output is read through other sizes); compiled once per set of operators, so runs on inputs of the same
        shapes and types reuse it."""
        return self._program(self.plan(inputs))

    def _program(self, plan: Plan) -> Program:
        key = program_key(plan)
        program = self._programs.get(key)
        if program is None:
            program = compile_program(plan, self.device)
            if len(self._programs) >= _PROGRAM_CACHE_LIMIT:
                self._programs.clear()
            self._programs[key] = program
        return program

    def run(self, inputs: Mapping[str, Any], progress: Progress | None = None) -> dict[str, np.ndarray]:
        """The graph's outputs by name, as NumPy arrays."""
        plan = self.plan(inputs)
        if self.device.feature_level < GRAPH_LEVEL:
            return execute(plan, self.device, self._uploaded, progress)
        return execute_program(plan, self._program(plan), self.device, self._uploaded, progress)


def check(model: ModelLike) -> None:
    """Raise UnsupportedModelError listing everything in the model that opendml cannot run, if anything.

    Shapes and bounds given as graph inputs are checked again, with their values, when the model runs.
    """
    check_model(load_model(model))


def run(model: ModelLike, inputs: Mapping[str, Any], *, device: Device | str | None = None
        ) -> dict[str, np.ndarray]:
    """Run an ONNX model (a ModelProto or a path) on opendml; inputs and outputs by name.

    Sessions are kept per device and model, so running a model again on inputs of the same shapes and
    types reuses its compiled graphs.
    """
    return session_for(model, resolve_device(device)).run(inputs)


def session_for(model: ModelLike, device: Device) -> Session:
    """The kept session of this model (by its serialized bytes) on this device, or a new one."""
    proto = load_model(model)
    digest = hashlib.sha256(proto.SerializeToString()).digest()
    sessions = _SESSIONS.setdefault(device, OrderedDict())
    session = sessions.get(digest)
    if session is None:
        session = Session(proto, device)
        if len(sessions) >= _SESSION_CACHE_LIMIT:
            sessions.popitem(last=False)
        sessions[digest] = session
    sessions.move_to_end(digest)
    return session


def upload(device: Device, array: np.ndarray, data_type: DataType) -> Buffer:
    """A packed copy of ``array`` on the device, padded to DirectML's 4-byte tensor sizes."""
    if data_type.is_sub_byte:  # INT4, UINT4: two elements a byte (ml_dtypes' arrays hold one a byte)
        data = pack4(array, data_type)
        raw = np.zeros(calc_buffer_tensor_size(data_type, np.shape(array) or (1,), None), np.uint8)
        raw[:data.size] = data
        return device.buffer_from(raw)
    packed = np.ascontiguousarray(array, dtype=data_type.numpy)
    raw = np.zeros(calc_buffer_tensor_size(data_type, packed.shape or (1,), None), np.uint8)
    raw[:packed.nbytes] = packed.reshape(-1).view(np.uint8)
    return device.buffer_from(raw)


def _last_readers(plan: Plan) -> dict[int, list[str]]:
    """Step index -> the values no later step reads, to release after it (graph outputs are kept)."""
    last: dict[str, int] = {}
    for k, step in enumerate(plan.steps):
        for source in step.inputs:
            if isinstance(source, str):
                last[source] = k
        for name in step.outputs:
            last.setdefault(name, k)  # an output nothing reads goes at once
    released: dict[int, list[str]] = {}
    for name, k in last.items():
        if name not in plan.outputs:
            released.setdefault(k, []).append(name)
    return released


class _Buffers:
    """The device buffers of a plan's values during one run; ``cache`` keeps uploaded constants between runs."""

    def __init__(self, plan: Plan, device: Device, cache: dict[str, Buffer] | None) -> None:
        self.plan = plan
        self.device = device
        self.cache = {} if cache is None else cache
        self.buffers: dict[str, Buffer] = {}

    def of(self, source: str | np.ndarray) -> Buffer:
        if isinstance(source, np.ndarray):  # made by the mapping (a zero point, an expanded scale)
            return upload(self.device, source, from_numpy(source.dtype))
        if source in self.buffers:
            return self.buffers[source]
        value = self.plan.values[source]
        if value.source == CONSTANT and source in self.cache:
            return self.cache[source]
        assert value.host is not None and value.data_type is not None
        buffer = upload(self.device, value.host, value.data_type)
        if value.source == CONSTANT:
            self.cache[source] = buffer
        self.buffers[source] = buffer
        return buffer

    def outputs(self) -> dict[str, np.ndarray]:
        return {name: _read(self.plan.values[name], self.buffers.get(name)) for name in self.plan.outputs}


def execute(plan: Plan, device: Device, cache: dict[str, Buffer] | None = None,
            progress: Progress | None = None) -> dict[str, np.ndarray]:
    """Run the plan's steps one by one, each through its own compiled operator."""
    values = _Buffers(plan, device, cache)
    released = _last_readers(plan)
    for k, step in enumerate(plan.steps):
        outputs = [device.create_buffer(size) for size in step.output_bytes]
        if step.runs:
            bindings = [None if s is None else BufferBinding(values.of(s)) for s in step.inputs]
            step.operator.execute(bindings, [BufferBinding(output) for output in outputs])
        values.buffers.update(zip(step.outputs, outputs))
        for name in released.get(k, []):
            values.buffers.pop(name, None)
        if progress is not None:
            progress(k + 1, len(plan.steps), step.label)
    return values.outputs()


def execute_program(plan: Plan, program: Program, device: Device, cache: dict[str, Buffer] | None = None,
                    progress: Progress | None = None) -> dict[str, np.ndarray]:
    """Run the plan's compiled graphs in order. Progress reports the skipped steps first (nothing to run),
    then each graph's nodes once the graph has run."""
    values = _Buffers(plan, device, cache)
    done = 0

    def report(steps: tuple[int, ...]) -> None:
        nonlocal done
        for k in steps:
            done += 1
            if progress is not None:
                progress(done, len(plan.steps), plan.steps[k].label)

    for k in program.skipped:  # an empty output reads as zeros, as one that ran on nothing
        step = plan.steps[k]
        values.buffers.update({name: device.create_buffer(size) for name, size in zip(step.outputs, step.output_bytes)})
    report(program.skipped)
    for segment in program.segments:
        inputs = [BufferBinding(values.of(_bound(plan, source))) for source in segment.inputs]
        outputs = [device.create_buffer(plan.steps[k].output_bytes[j]) for k, j in segment.outputs]
        segment.compiled.execute(inputs, [BufferBinding(buffer) for buffer in outputs])
        values.buffers.update({plan.steps[k].outputs[j]: buffer for (k, j), buffer in zip(segment.outputs, outputs)})
        report(segment.steps)
    return values.outputs()


def _bound(plan: Plan, source: Source) -> str | np.ndarray:
    """A graph input's value: a name, or the array the mapping made for input ``j`` of step ``k``."""
    if isinstance(source, str):
        return source
    k, j = source
    made = plan.steps[k].inputs[j]
    assert made is not None
    return made


def _read(value: Value, buffer: Buffer | None) -> np.ndarray:
    if value.host is not None:
        return np.array(value.host)
    assert buffer is not None and value.data_type is not None
    shape = value.concrete_shape
    dtype = value.data_type.numpy
    count = int(np.prod(shape, dtype=np.int64))
    if value.data_type.is_sub_byte:  # unpacked as ONNX holds them: ml_dtypes' int4 and uint4
        values = unpack4(buffer.to_numpy(), value.data_type, count).reshape(shape)
        return values.astype(types.numpy_dtype(value.onnx_type))
    array = buffer.to_numpy()[:count * dtype.itemsize].view(dtype).reshape(shape)
    return array.astype(np.bool_) if value.onnx_type == types.BOOL else array  # held as UINT8 0 and 1
