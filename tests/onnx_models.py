"""Small ONNX models for the tests of opendml.onnx, and ONNX's reference evaluator as the oracle."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
from onnx import ModelProto, NodeProto, helper, numpy_helper, shape_inference
from onnx.reference import ReferenceEvaluator


def info(name: str, elem_type: int, shape: Sequence[int | str | None] | None) -> Any:
    return helper.make_tensor_value_info(name, elem_type, shape)


def onnx_type(array: np.ndarray) -> int:
    return helper.np_dtype_to_tensor_dtype(np.asarray(array).dtype)


def model(nodes: Sequence[NodeProto], inputs: dict[str, np.ndarray], outputs: Sequence[str] | dict[str, Any],
          opset: int, initializers: dict[str, np.ndarray] | None = None) -> ModelProto:
    """A model of ``nodes``: graph inputs typed from example arrays, initializers from arrays, and
    outputs typed by ONNX's shape inference (a list of names) or given as name -> (type, shape)."""
    typed = isinstance(outputs, dict)
    graph = helper.make_graph(
        list(nodes), "test",
        [info(name, onnx_type(a), np.asarray(a).shape) for name, a in inputs.items()],
        [info(name, *outputs[name]) if typed else helper.make_empty_tensor_value_info(name)  # type: ignore[call-overload]
         for name in outputs],
        [numpy_helper.from_array(np.asarray(a), name) for name, a in (initializers or {}).items()])
    made = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return made if typed else shape_inference.infer_shapes(made)


def single(op_type: str, opset: int, inputs: dict[str, np.ndarray | None], *, constants: Collection[str] = (),
           output: tuple[int, Sequence[int]] | None = None, **attributes: Any) -> ModelProto:
    """One node reading ``inputs`` in order (None: an absent optional input) and writing ``y``; the
    inputs named in ``constants`` are initializers, the others graph inputs. ``y`` is typed by shape
    inference, or by ``output`` = (element type, shape)."""
    names = [name if value is not None else "" for name, value in inputs.items()]
    node = helper.make_node(op_type, names, ["y"], **attributes)
    given = {name: value for name, value in inputs.items() if value is not None}
    fed = {name: value for name, value in given.items() if name not in constants}
    initializers = {name: value for name, value in given.items() if name in constants}
    return model([node], fed, ["y"] if output is None else {"y": output}, opset, initializers)


def feeds(model_proto: ModelProto, arrays: dict[str, np.ndarray | None]) -> dict[str, np.ndarray]:
    """The arrays that are graph inputs of the model (initializers and absent inputs left out)."""
    names = {i.name for i in model_proto.graph.input} - {t.name for t in model_proto.graph.initializer}
    return {name: value for name, value in arrays.items() if name in names and value is not None}


def reference(model_proto: ModelProto, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """ONNX's reference evaluator's outputs, by name."""
    names = [o.name for o in model_proto.graph.output]
    return dict(zip(names, ReferenceEvaluator(model_proto).run(None, feeds)))

