"""Run ONNX models of Clip, Relu, ArgMin, ArgMax, DequantizeLinear and QuantizeLinear on opendml (needs the
``onnx`` extra).

Each node maps onto one opendml operator with ONNX's semantics kept, and the operators are compiled
together into one DirectML graph on the chosen device (``Device.compile_graph``; see docs/graphs.md),
compiled once per set of operators and reused. Anything the model needs that opendml lacks is reported,
all of it in one UnsupportedModelError, before anything is compiled or runs.

>>> import numpy as np, opendml.onnx
>>> from onnx import TensorProto, helper
>>> node = helper.make_node("Clip", ["x", "lo", "hi"], ["y"])
>>> graph = helper.make_graph([node], "clip", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
...     [helper.make_tensor("lo", TensorProto.FLOAT, [], [2.0]),
...      helper.make_tensor("hi", TensorProto.FLOAT, [], [1.0])])
>>> opendml.onnx.run(helper.make_model(graph), {"x": np.array([-2.0, 0.0, 6.0], np.float32)})  # min > max: max
{'y': array([1., 1., 1.], dtype=float32)}

``InferenceSession`` runs a model as ONNX Runtime's session does (``get_inputs()``, ``get_outputs()``,
``run(None, feeds)`` returning a list in output order); a model that cannot be read is one
InvalidArgumentError naming the file, the format it was read as and the reason.

Importing this package needs nothing beyond NumPy; its functions import ``onnx`` when first used, and
raise OnnxUnavailableError (with the install command) where it is missing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import OnnxUnavailableError, UnsupportedModelError, require_onnx

if TYPE_CHECKING:  # imported on first use at run time (``__getattr__``): type checkers read them here
    from . import backend as backend
    from .model import load_model as load_model
    from .runtime import Session as Session
    from .runtime import check as check
    from .runtime import run as run
    from .session import InferenceSession as InferenceSession
    from .session import NodeArg as NodeArg

# Public name -> the submodule defining it, imported on first use (they import onnx).
_LAZY = {"run": "runtime", "check": "runtime", "Session": "runtime", "load_model": "model",
         "InferenceSession": "session", "NodeArg": "session"}

__all__ = ["InferenceSession", "NodeArg", "OnnxUnavailableError", "Session", "UnsupportedModelError", "backend",
           "check", "load_model", "run"]


def __getattr__(name: str) -> Any:
    if name == "backend" or name in _LAZY:
        require_onnx()
        module = importlib.import_module(f".{_LAZY.get(name, name)}", __name__)
        return module if name == "backend" else getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
