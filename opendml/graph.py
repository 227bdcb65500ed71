"""The graph builder's functions, DirectMLX style: each takes and returns expressions of an ``opendml.Graph``.

>>> import numpy as np, opendml as dml
>>> from opendml import graph as g
>>> graph = dml.Graph(dml.Device())
>>> q = graph.input(0, dml.TensorDesc("UINT8", [2, 2]))
>>> scale = g.reinterpret(graph.input(1, dml.TensorDesc("FLOAT32", [1])), sizes=[2, 2], strides=[0, 0])
>>> g.argmin(g.clip(g.dequantize_linear(q, scale), 0.0, 1.0), [1]).desc.sizes
(2, 1)
"""

from __future__ import annotations

from .graphs.builder import (
    NODE_FUNCTIONS,
    Expression,
    Graph,
    argmax,
    argmin,
    cast,
    clip,
    clip1,
    dequantize,
    dequantize_linear,
    hardmax,
    log_softmax,
    quantize,
    quantize_linear,
    quantized_linear_add,
    reduce,
    reinterpret,
    softmax,
    threshold,
    top_k,
)

__all__ = ["Expression", "Graph", "argmax", "argmin", "cast", "clip", "clip1", "dequantize", "dequantize_linear",
           "quantize", "quantize_linear", "quantized_linear_add", "reduce", "reinterpret", "threshold", "top_k"]
__all__ += ["hardmax", "log_softmax", "softmax"]

# The declared operators' builder functions (graphs.builder.node_function): relu, leaky_relu, ...
globals().update({f.__name__: f for f in NODE_FUNCTIONS.values()})
__all__ += sorted(f.__name__ for f in NODE_FUNCTIONS.values() if f.__name__ not in __all__)
