"""ONNX Runtime's session, on opendml: code written for ``onnxruntime.InferenceSession`` runs unchanged.

``InferenceSession(model, device=...)`` loads and checks a model once (a path, a ModelProto or serialized
bytes); ``get_inputs()`` and ``get_outputs()`` describe its graph's inputs and outputs as ONNX Runtime's
NodeArgs do, and ``run(output_names, feeds)`` returns the outputs asked for (every one for None), as a list
in that order. It runs through a :class:`~opendml.onnx.runtime.Session`, so a model is compiled into one
DirectML graph per set of operators and reused by later runs, as ``opendml.onnx.run`` does.

>>> import numpy as np
>>> from onnx import TensorProto, helper
>>> graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])],
...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])])
>>> session = InferenceSession(helper.make_model(graph), device="cpu")
>>> session.get_inputs()
[NodeArg(name='x', type='tensor(float)', shape=['batch', 3])]
>>> session.run(None, {"x": np.array([[-1.0, 0.5, 2.0]], np.float32)})
[array([[0. , 0.5, 2. ]], dtype=float32)]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from onnx import ModelProto, TensorProto, TypeProto, ValueInfoProto, shape_inference

from ..device import Device
from ..errors import invalid
from .model import ModelLike
from .runtime import Session

_OWNER = "InferenceSession.run"


@dataclass(frozen=True)
class NodeArg:
    """A graph input or output as ONNX Runtime's NodeArg describes it.

    ``shape`` holds an int for each known dimension, the dimension's name for a symbolic one and None for an
    unknown one (an empty list where the graph declares no shape); ``type`` is ONNX Runtime's type string,
    such as ``tensor(float)`` or ``tensor(uint8)``.
    """

    name: str
    type: str
    shape: list[int | str | None]


class InferenceSession:
    """A model loaded, checked and bound to a device, run as ONNX Runtime's InferenceSession runs one.

    ``device`` is a :class:`~opendml.Device`, a backend name (``"cpu"``, ``"cuda"``) or None (the CPU at
    the newest feature level).
    """

    def __init__(self, path_or_model: ModelLike, device: Device | str | None = None) -> None:
        self._session = Session(path_or_model, device)
        graph = self._session.model.graph
        required = set(self._session.input_names)
        self._inputs = [node_arg(i) for i in graph.input if i.name in required]
        inferred = {o.name: node_arg(o) for o in _inferred_outputs(self._session.model)}
        self._outputs = [_refined(node_arg(o), inferred.get(o.name)) for o in graph.output]

    @property
    def device(self) -> Device:
        return self._session.device

    @property
    def session(self) -> Session:
        """The opendml session underneath (its ``run`` returns a dict of outputs by name)."""
        return self._session

    def get_inputs(self) -> list[NodeArg]:
        """The graph inputs a run must be given (an input with an initializer of its name has a default)."""
        return list(self._inputs)

    def get_outputs(self) -> list[NodeArg]:
        return list(self._outputs)

    def run(self, output_names: Sequence[str] | None, input_feed: Mapping[str, Any]) -> list[np.ndarray]:
        """The outputs named (every output for None or an empty list), in that order, as NumPy arrays."""
        wanted = self._wanted(output_names)
        outputs = self._session.run(input_feed)
        return [outputs[name] for name in wanted]

    def _wanted(self, output_names: Sequence[str] | None) -> list[str]:
        every = [o.name for o in self._outputs]
        if output_names is None:
            return every
        if isinstance(output_names, (str, bytes)) or not isinstance(output_names, Sequence):
            raise invalid(_OWNER, "output_names", "must be a list of output names or None", repr(output_names))
        unknown = [name for name in output_names if name not in every]
        if unknown:
            raise invalid(_OWNER, "output_names", f"must name graph outputs ({', '.join(every)})",
                          ", ".join(map(repr, unknown)))
        return list(output_names) or every


def node_arg(info: ValueInfoProto) -> NodeArg:
    return NodeArg(info.name, type_string(info.type), _shape(info.type))


def _inferred_outputs(model: ModelProto) -> list[ValueInfoProto]:
    """The graph outputs as ONNX's shape inference types them (none where inference fails)."""
    try:
        return list(shape_inference.infer_shapes(model).graph.output)
    except Exception:  # inference only refines what the graph declares: without it, the declared shapes stand
        return []


def _refined(declared: NodeArg, inferred: NodeArg | None) -> NodeArg:
    """The declared output with the dimensions it leaves unknown taken from shape inference, as ONNX Runtime
    reports them: a number, or a name the inputs gave (not the ``unk__N`` names inference makes up)."""
    if inferred is None or len(inferred.shape) != len(declared.shape):
        return declared
    shape = [d if d is not None or (isinstance(i, str) and i.startswith("unk__")) else i
             for d, i in zip(declared.shape, inferred.shape)]
    return NodeArg(declared.name, declared.type, shape)


def type_string(type_proto: TypeProto) -> str:
    """ONNX Runtime's name of a type: ``tensor(float)``, ``seq(tensor(int64))``, ``map(string,tensor(float))``."""
    kind = type_proto.WhichOneof("value")
    if kind == "tensor_type":
        return f"tensor({_element(type_proto.tensor_type.elem_type)})"
    if kind == "sparse_tensor_type":
        return f"sparse_tensor({_element(type_proto.sparse_tensor_type.elem_type)})"
    if kind == "sequence_type":
        return f"seq({type_string(type_proto.sequence_type.elem_type)})"
    if kind == "optional_type":
        return f"optional({type_string(type_proto.optional_type.elem_type)})"
    if kind == "map_type":
        return f"map({_element(type_proto.map_type.key_type)},{type_string(type_proto.map_type.value_type)})"
    return "undefined"


def _element(elem_type: int) -> str:
    """ONNX's element type name in lower case, as ONNX Runtime writes it: ``float``, ``float16``, ``uint8``."""
    try:
        return TensorProto.DataType.Name(elem_type).lower()
    except ValueError:
        return "undefined"


def _shape(type_proto: TypeProto) -> list[int | str | None]:
    kind = type_proto.WhichOneof("value")
    if kind not in ("tensor_type", "sparse_tensor_type"):
        return []
    tensor = getattr(type_proto, kind)
    if not tensor.HasField("shape"):
        return []
    return [d.dim_value if d.HasField("dim_value") else d.dim_param if d.HasField("dim_param") else None
            for d in tensor.shape.dim]
