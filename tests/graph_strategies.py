"""Hypothesis strategies for graphs mixing the element-wise operators old and new, shared by the fusion
property (tests/test_graph_fusion.py) and the fuzz suite's graphs family (tests/fuzz/test_fuzz_graphs.py).

``mixed_graphs(device)`` draws a FLOAT32 or FLOAT16 chain built with ``opendml.graph``: a head (a float graph
input, or DEQUANTIZE_LINEAR of an INT8/UINT8 one with a broadcast scale and perhaps a zero point), one to
six body nodes (unary operators and CLIP/THRESHOLD with random fields, and ELEMENT_WISE_ADD, SUBTRACT,
MULTIPLY, DIVIDE whose other operand is a graph input read full-size or broadcast through zero strides as a
row, a column or a scalar, a ConstantNode, or an earlier value of the chain), then perhaps QUANTIZE_LINEAR or
ARGMIN/ARGMAX. Every value is the chain's own, so the compiled graph must give the bits of its nodes run one
by one; ``chain`` says whether every node's value is read once, by the next (then the plan is one kernel
where the backend fuses the tail).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

import numpy as np
from hypothesis import strategies as st

import opendml as dml
from opendml import graph as g
from tests.graph_helpers import output_desc, run_graph, run_node_by_node
from tests.helpers import edge_values, packed_bytes

F32, F16 = dml.DataType.FLOAT32, dml.DataType.FLOAT16
BINARY = {"ELEMENT_WISE_ADD": g.add, "ELEMENT_WISE_SUBTRACT": g.subtract,  # type: ignore[attr-defined]
          "ELEMENT_WISE_MULTIPLY": g.multiply, "ELEMENT_WISE_DIVIDE": g.divide}  # type: ignore[attr-defined]
SIZES = st.sampled_from([(7,), (3, 5), (2, 3, 4), (17, 33), (1, 9)])
SCALE_BIASES = [None, dml.ScaleBias(0.5, -1.0), dml.ScaleBias(-3.1, 0.7)]
BOUNDS = [-2.0, -0.5, 0.0, 1.0, 6.0, float("inf")]
OPERAND_LAYOUTS = ("full", "row", "column", "scalar", "constant", "earlier value")


def _unary(draw: st.DrawFn) -> tuple[str, Callable[[Any], Any]]:
    """A float operator of one tensor with random fields: its DirectML name and the builder call."""
    sb = draw(st.sampled_from(SCALE_BIASES))
    table: dict[str, Callable[[Any], Any]] = {
        "ACTIVATION_RELU": lambda x: g.relu(x),  # type: ignore[attr-defined]
        "ELEMENT_WISE_ABS": lambda x: g.abs(x, scale_bias=sb),  # type: ignore[attr-defined]
        "ELEMENT_WISE_NEGATE": lambda x: g.negate(x),  # type: ignore[attr-defined]
        "ELEMENT_WISE_IDENTITY": lambda x: g.identity(x, scale_bias=sb),  # type: ignore[attr-defined]
        "ELEMENT_WISE_FLOOR": lambda x: g.floor(x, scale_bias=sb),  # type: ignore[attr-defined]
        "ELEMENT_WISE_ROUND": lambda x: g.round(x),  # type: ignore[attr-defined]
        "ELEMENT_WISE_SIGN": lambda x: g.sign(x),  # type: ignore[attr-defined]
        "ELEMENT_WISE_RECIP": lambda x: g.recip(x, scale_bias=sb),  # type: ignore[attr-defined]
        "ELEMENT_WISE_SQRT": lambda x: g.sqrt(x, scale_bias=sb),  # type: ignore[attr-defined]
        "ACTIVATION_LEAKY_RELU": lambda x: g.leaky_relu(x, draw(st.sampled_from([0.01, -0.5, 3.0]))),  # type: ignore[attr-defined]
        "ACTIVATION_HARD_SIGMOID": lambda x: g.hard_sigmoid(x),  # type: ignore[attr-defined]
        "ACTIVATION_SHRINK": lambda x: g.shrink(x, bias=0.25, threshold=0.5),  # type: ignore[attr-defined]
        "ACTIVATION_LINEAR": lambda x: g.linear(x, draw(st.sampled_from([2.0, -0.3])), 1.5),  # type: ignore[attr-defined]
        "ELEMENT_WISE_CLIP": lambda x: g.clip(x, draw(st.sampled_from(BOUNDS[:4])), draw(st.sampled_from(BOUNDS[3:])),
                                              scale_bias=sb),
        "ELEMENT_WISE_THRESHOLD": lambda x: g.threshold(x, draw(st.sampled_from(BOUNDS)), scale_bias=sb),
    }
    name = draw(st.sampled_from(sorted(table)))
    return name, table[name]


@dataclass
class MixedGraph:
    graph: dml.GraphDesc
    inputs: list[np.ndarray]  # each graph input's bytes, packed and padded to its TotalTensorSizeInBytes
    drawn: list[str] = field(default_factory=list)  # the nodes' DirectML names, and each binary operand's layout
    layouts: list[str] = field(default_factory=list)  # each binary operator's other operand: "row", "constant"...
    chain: bool = True  # every value read once, by the next node, and only the last one a graph output
    reduced: bool = False  # the chain ends in ARGMIN or ARGMAX

    def __repr__(self) -> str:
        return f"MixedGraph({' -> '.join(self.drawn)}, {len(self.inputs)} inputs, chain={self.chain})"


class _Builder:
    def __init__(self, draw: st.DrawFn, device: dml.Device, sizes: tuple[int, ...], t: dml.DataType) -> None:
        self.draw, self.sizes, self.t = draw, sizes, t
        self.graph = dml.Graph(device)
        self.rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        self.arrays: list[np.ndarray] = []
        self.descs: list[dml.TensorDesc] = []
        self.built = MixedGraph(dml.GraphDesc(0, 0, [], [], [], []), [])

    def input(self, t: dml.DataType, shape: tuple[int, ...], values: np.ndarray | None = None) -> Any:
        """A new graph input of ``shape`` (the chain's sizes with some 1s), read broadcast to the chain's sizes."""
        array = edge_values(t, int(np.prod(shape)), self.rng) if values is None else values
        self.arrays.append(array.reshape(shape))
        desc = dml.TensorDesc(t, list(shape))
        self.descs.append(desc)
        x = self.graph.input(len(self.arrays) - 1, desc)
        if shape == self.sizes:
            return x
        strides, step = [0] * len(shape), 1
        for d in range(len(shape) - 1, -1, -1):
            strides[d] = step if shape[d] == self.sizes[d] else 0
            step *= shape[d]
        return g.reinterpret(x, sizes=list(self.sizes), strides=strides)

    def head(self) -> Any:
        if not self.draw(st.booleans()):
            self.built.drawn.append(f"input {self.t.name}")
            return self.input(self.t, self.sizes)
        q = self.draw(st.sampled_from([dml.DataType.INT8, dml.DataType.UINT8]))
        x = self.input(q, self.sizes)
        shape = self._compact("scalar" if self.draw(st.booleans()) else "row")  # per tensor or per channel
        scales = self.draw(st.lists(st.sampled_from([0.125, -0.5, 0.03, 3.0, 0.0]), min_size=int(np.prod(shape)),
                                    max_size=int(np.prod(shape))))
        scale = self.input(self.t, shape, np.array(scales, self.t.numpy))
        zero_point = self.input(q, self._compact("scalar")) if self.draw(st.booleans()) else None
        self.built.drawn.append(f"ELEMENT_WISE_DEQUANTIZE_LINEAR({q.name})")
        return g.dequantize_linear(x, scale, zero_point)

    def _compact(self, layout: str) -> tuple[int, ...]:
        if layout == "scalar" or (layout in ("row", "column") and len(self.sizes) == 1):
            return (1,) * len(self.sizes)
        if layout == "row":  # broadcast along every axis but the last: a bias
            return (1,) * (len(self.sizes) - 1) + (self.sizes[-1],)
        if layout == "column":  # along the last axis only
            return self.sizes[:-1] + (1,)
        return self.sizes

    def operand(self, values: list[Any]) -> tuple[Any, str]:
        layout = self.draw(st.sampled_from(OPERAND_LAYOUTS))
        if layout == "earlier value":
            self.built.chain = False
            return self.draw(st.sampled_from(values)), layout
        if layout == "constant":  # a ConstantNode holds the full tensor (a node's output keeps its sizes)
            return self.graph.constant(edge_values(self.t, int(np.prod(self.sizes)), self.rng).reshape(self.sizes)), \
                layout
        return self.input(self.t, self._compact(layout)), layout

    def body(self, x: Any) -> tuple[Any, list[Any]]:
        values = [x]
        for _ in range(self.draw(st.integers(1, 6))):
            if self.draw(st.booleans()):
                name, build = _unary(self.draw)
                x = build(x)
                self.built.drawn.append(name)
            else:
                name = self.draw(st.sampled_from(sorted(BINARY)))
                other, layout = self.operand(values)
                self.built.layouts.append(layout)
                first = self.draw(st.booleans())  # the chain's value as ATensor or as BTensor
                x = BINARY[name](x, other) if first else BINARY[name](other, x)
                self.built.drawn.append(f"{name}({'chain, ' if first else ''}{layout}{'' if first else ', chain'})")
            values.append(x)
        return x, values

    def tail(self, x: Any) -> Any:
        kind = self.draw(st.sampled_from(["none", "quantize", "argmin", "argmax"]))
        if kind == "quantize":
            scale = self.input(self.t, self._compact("scalar"), np.array([self.draw(st.sampled_from([0.25, -2.0, 0.01]))],
                                                                        self.t.numpy))
            out = self.draw(st.sampled_from(["INT8", "UINT8"]))
            self.built.drawn.append(f"ELEMENT_WISE_QUANTIZE_LINEAR({out})")
            return g.quantize_linear(x, scale, output_type=out)
        if kind in ("argmin", "argmax"):
            axes = sorted(self.draw(st.sets(st.integers(0, len(self.sizes) - 1), min_size=1)))
            policy = self.draw(st.sampled_from(["IGNORE", "PROPAGATE"]))
            self.built.drawn.append(f"{kind.upper()}({axes}, {policy})")
            self.built.reduced = True
            return (g.argmin if kind == "argmin" else g.argmax)(x, axes, nan_policy=policy)
        return x


@st.composite
def mixed_graphs(draw: st.DrawFn, device: dml.Device, sizes: st.SearchStrategy[tuple[int, ...]] = SIZES) -> MixedGraph:
    builder = _Builder(draw, device, draw(sizes), draw(st.sampled_from([F32, F16])))
    x, values = builder.body(builder.head())
    last = builder.tail(x)
    outputs = [last]
    if draw(st.integers(0, 3)) == 0:  # an intermediate value a graph output too
        outputs.append(draw(st.sampled_from(values[1:])))
        builder.built.chain = False
    built = builder.built
    built.graph = builder.graph.graph_desc(outputs)
    built.inputs = [packed_bytes(a, d.total_tensor_size_in_bytes) for a, d in zip(builder.arrays, builder.descs)]
    return built


def fused_unfused_and_node_by_node(device: dml.Device, built: MixedGraph) -> list[tuple[np.ndarray, ...]]:
    """Each graph output's values three ways: the compiled graph fused (the default), compiled with
    OPENDML_FUSION=0 (one kernel a node), and each node through its own compiled operator."""
    graph = built.graph
    outputs = [np.zeros(output_desc(graph, k).total_tensor_size_in_bytes, np.uint8) for k in range(graph.output_count)]
    fused = run_graph(device, graph, built.inputs, outputs)
    with mock.patch.dict(os.environ, {"OPENDML_FUSION": "0"}):
        unfused = run_graph(device, graph, built.inputs, outputs)
    separate = run_node_by_node(device, graph, built.inputs, outputs)
    typed = []
    for k, ways in enumerate(zip(fused, unfused, separate)):
        desc = output_desc(graph, k)
        typed.append(tuple(v[:desc.element_count * desc.data_type.size].view(desc.data_type.numpy) for v in ways))
    return typed
