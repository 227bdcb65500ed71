"""opendml as an ONNX backend (``onnx.backend.base.Backend``), which ``onnx.backend.test.BackendTest`` drives.

>>> import numpy as np
>>> from onnx import helper
>>> node = helper.make_node("ArgMin", ["x"], ["i"], axis=1, keepdims=0, select_last_index=1)
>>> run_node(node, [np.array([[3, 1, 1], [0, 2, 0]], np.float32)])[0]
array([2, 2])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import ModelProto, NodeProto, helper, shape_inference
from onnx.backend.base import Backend, BackendRep, DeviceType, namedtupledict
from onnx.backend.base import Device as OnnxDevice

from ..device import Device
from ..errors import OpenDMLError, invalid
from . import types
from .runtime import Session

_BACKENDS = {DeviceType.CPU: "cpu", DeviceType.CUDA: "cuda"}


def _device(device: str, feature_level: object = None) -> Device:
    """The opendml device of an ONNX device string ("CPU", "CUDA", "CUDA:0")."""
    try:
        parsed = OnnxDevice(device)
    except (AttributeError, ValueError):
        raise invalid("OpenDMLBackend", "device", "must be CPU or CUDA", repr(device)) from None
    if parsed.type not in _BACKENDS or parsed.device_id != 0:
        raise invalid("OpenDMLBackend", "device", "must be CPU, CUDA or CUDA:0 (one GPU)", repr(device))
    name = _BACKENDS[parsed.type]
    return Device(name) if feature_level is None else Device(name, feature_level)  # type: ignore[arg-type]


def _with_output_types(model: ModelProto) -> ModelProto:
    """The model with its outputs typed by ONNX's shape inference (onnx.checker needs them typed)."""
    try:
        return shape_inference.infer_shapes(model)
    except Exception:  # an untyped output is then reported by the model check
        return model


class OpenDMLBackendRep(BackendRep):
    """A prepared model: ``run`` takes inputs by position (graph inputs without initializers) or by name."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def run(self, inputs: Any, **kwargs: Any) -> tuple[Any, ...]:
        if isinstance(inputs, Mapping):
            feeds = dict(inputs)
        else:
            listed = [inputs] if isinstance(inputs, np.ndarray) else list(inputs)
            names = self.session.input_names
            if len(listed) > len(names):
                raise invalid("OpenDMLBackendRep", "inputs", f"must hold at most {len(names)} arrays", len(listed))
            feeds = dict(zip(names, listed))
        outputs = self.session.run(feeds)
        return namedtupledict("Outputs", list(outputs))(*outputs.values())


class OpenDMLBackend(Backend):
    """ONNX's backend interface over opendml; ``feature_level=`` picks the device's DirectML feature level."""

    @classmethod
    def is_compatible(cls, model: ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        try:
            Session(model, _device(device, kwargs.get("feature_level")))
        except OpenDMLError:
            return False
        return True

    @classmethod
    def prepare(cls, model: ModelProto, device: str = "CPU", **kwargs: Any) -> OpenDMLBackendRep:
        return OpenDMLBackendRep(Session(model, _device(device, kwargs.get("feature_level"))))

    @classmethod
    def run_model(cls, model: ModelProto, inputs: Any, device: str = "CPU", **kwargs: Any) -> tuple[Any, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node: NodeProto, inputs: Any, device: str = "CPU",
                 outputs_info: Sequence[tuple[Any, tuple[int, ...]]] | None = None,
                 **kwargs: Any) -> tuple[Any, ...]:
        """Run one node on arrays given in the order of its (non-empty) inputs."""
        opset = kwargs.pop("opset_version", onnx.defs.onnx_opset_version())
        arrays = [np.asarray(a) for a in inputs]
        names = [name for name in node.input if name]
        graph_inputs = [helper.make_tensor_value_info(name, types.onnx_type_of(a.dtype), a.shape)
                        for name, a in zip(names, arrays)]
        if outputs_info is not None:
            graph_outputs = [helper.make_tensor_value_info(name, types.onnx_type_of(np.dtype(dtype)), shape)
                             for name, (dtype, shape) in zip(node.output, outputs_info)]
        else:
            graph_outputs = [helper.make_empty_tensor_value_info(name) for name in node.output]
        model = helper.make_model(helper.make_graph([node], "run_node", graph_inputs, graph_outputs),
                                  opset_imports=[helper.make_opsetid("", opset)])
        if outputs_info is None:
            model = _with_output_types(model)
        return cls.run_model(model, dict(zip(names, arrays)), device, **kwargs)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        try:
            _device(device)
        except OpenDMLError:
            return False
        return True


prepare = OpenDMLBackend.prepare
run_model = OpenDMLBackend.run_model
run_node = OpenDMLBackend.run_node
supports_device = OpenDMLBackend.supports_device
is_compatible = OpenDMLBackend.is_compatible
