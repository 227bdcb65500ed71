"""Running a plan: graph inputs and constants uploaded once, each step bound and executed in order,
intermediates kept on the device in buffers (released after their last reader), outputs read back."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..buffer import Buffer, BufferBinding
from ..device import Device
from ..dtypes import DataType, from_numpy
from ..errors import invalid
from ..functional import default_device
from ..tensor import calc_buffer_tensor_size
from .graph import CONSTANT, Value, node_views
from .model import ModelLike, check_feeds, load_model
from .plan import Plan, build_plan, check_model, constant_values

Progress = Callable[[int, int, str], None]  # (steps done, steps in all, label of the step just run)


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

    def run(self, inputs: Mapping[str, Any], progress: Progress | None = None) -> dict[str, np.ndarray]:
        """The graph's outputs by name, as NumPy arrays."""
        return execute(self.plan(inputs), self.device, self._uploaded, progress)


def check(model: ModelLike) -> None:
    """Raise UnsupportedModelError listing everything in the model that opendml cannot run, if anything.

    Shapes and bounds given as graph inputs are checked again, with their values, when the model runs.
    """
    check_model(load_model(model))


def run(model: ModelLike, inputs: Mapping[str, Any], *, device: Device | str | None = None
        ) -> dict[str, np.ndarray]:
    """Run an ONNX model (a ModelProto or a path) on opendml; inputs and outputs by name."""
    return Session(model, device).run(inputs)


def upload(device: Device, array: np.ndarray, data_type: DataType) -> Buffer:
    """A packed copy of ``array`` on the device, padded to DirectML's 4-byte tensor sizes."""
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
        last.setdefault(step.output, k)  # an output nothing reads goes at once
    released: dict[int, list[str]] = {}
    for name, k in last.items():
        if name not in plan.outputs:
            released.setdefault(k, []).append(name)
    return released


def execute(plan: Plan, device: Device, cache: dict[str, Buffer] | None = None,
            progress: Progress | None = None) -> dict[str, np.ndarray]:
    """Run the plan's steps in order; ``cache`` keeps uploaded constants between runs."""
    cache = {} if cache is None else cache
    buffers: dict[str, Buffer] = {}

    def buffer_of(source: str | np.ndarray) -> Buffer:
        if isinstance(source, np.ndarray):  # made by the mapping (a zero point, an expanded scale)
            return upload(device, source, from_numpy(source.dtype))
        if source in buffers:
            return buffers[source]
        value = plan.values[source]
        if value.source == CONSTANT and source in cache:
            return cache[source]
        assert value.host is not None and value.data_type is not None
        buffer = upload(device, value.host, value.data_type)
        if value.source == CONSTANT:
            cache[source] = buffer
        buffers[source] = buffer
        return buffer

    released = _last_readers(plan)
    for k, step in enumerate(plan.steps):
        output = device.create_buffer(step.output_bytes)
        if step.runs:
            bindings = [None if s is None else BufferBinding(buffer_of(s)) for s in step.inputs]
            step.operator.execute(bindings, [BufferBinding(output)])
        buffers[step.output] = output
        for name in released.get(k, []):
            buffers.pop(name, None)
        if progress is not None:
            progress(k + 1, len(plan.steps), step.label)
    return {name: _read(plan.values[name], buffers.get(name)) for name in plan.outputs}


def _read(value: Value, buffer: Buffer | None) -> np.ndarray:
    if value.host is not None:
        return np.array(value.host)
    assert buffer is not None and value.data_type is not None
    shape = value.concrete_shape
    dtype = value.data_type.numpy
    count = int(np.prod(shape, dtype=np.int64))
    return buffer.to_numpy()[:count * dtype.itemsize].view(dtype).reshape(shape)
