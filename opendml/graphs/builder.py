"""A DirectMLX-style builder: expressions over a Graph, each operator created at the line that asks for it.

The builder only produces a GraphDesc; ``Graph.compile`` hands it to ``Device.compile_graph``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..buffer import host_array
from ..dtypes import DataType, from_numpy
from ..enums import AxisDirection, ExecutionFlags, NanPolicy, QuantizationType, ReduceFunction
from ..errors import UnsupportedFeatureLevelError, invalid, message
from ..ops import DECLARED
from ..ops.argmax import ArgMaxDesc
from ..ops.argmin import ArgMinDesc
from ..ops.cast import CastDesc
from ..ops.clip import ElementWiseClip1Desc
from ..ops.definition import OperatorDefinition
from ..ops.dequantize import DequantizeDesc
from ..ops.dequantize_linear import ElementWiseDequantizeLinearDesc
from ..ops.elementwise import ScaleBias
from ..ops.quantize import QuantizeDesc
from ..ops.quantize_linear import ElementWiseQuantizeLinearDesc
from ..ops.quantized_linear_add import ElementWiseQuantizedLinearAddDesc
from ..ops.reduce import INDEX_FUNCTIONS, ReduceDesc
from ..ops.signature import arguments, define
from ..ops.softmax import (
    ActivationHardmax1Desc,
    ActivationHardmaxDesc,
    ActivationLogSoftmax1Desc,
    ActivationLogSoftmaxDesc,
    ActivationSoftmax1Desc,
    ActivationSoftmaxDesc,
)
from ..ops.top_k import TopK1Desc
from ..tensor import TensorDesc
from .compiled import CompiledGraph
from .desc import ConstantNode, GraphDesc, InputEdge, IntermediateEdge, OperatorNode, OutputEdge
from .validate import CONSTANT_LEVEL

if TYPE_CHECKING:
    from ..device import Device


@dataclass(frozen=True, eq=False)
class Expression:
    """A tensor of a Graph: graph input ``index`` (``node`` None) or output ``index`` of ``node``, read as ``desc``."""

    graph: Graph
    node: int | None
    index: int
    desc: TensorDesc


class Graph:
    """DirectMLX's ``dml::Graph`` over a device.

    >>> import numpy as np, opendml as dml
    >>> from opendml import graph as g
    >>> device = dml.Device()
    >>> graph = dml.Graph(device)
    >>> x = graph.input(0, dml.TensorDesc("FLOAT32", [3]))
    >>> y = g.threshold(g.clip(x, -2.0, 2.0), 0.0)
    >>> compiled = graph.compile([y])
    >>> data, out = device.buffer_from(np.array([-5, 1, 9], np.float32)), device.create_buffer(12)
    >>> compiled.execute([data], [out])
    >>> out.to_numpy().view(np.float32)
    array([0., 1., 2.], dtype=float32)
    """

    def __init__(self, device: Device) -> None:
        self.device = device
        self._inputs: dict[int, TensorDesc] = {}
        self._nodes: list[OperatorNode | ConstantNode] = []
        self._reads: list[list[Expression | None]] = []  # per node, what each input reads

    def input(self, index: int, desc: TensorDesc) -> Expression:
        """Graph input ``index``, described by ``desc`` (asking twice gives the same input)."""
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or index < 0:
            raise invalid("Graph", "input index", "must be a non-negative integer", repr(index))
        if not isinstance(desc, TensorDesc):
            raise invalid("Graph", f"input {index} desc", "must be a TensorDesc", repr(desc))
        known = self._inputs.setdefault(int(index), desc)
        if known != desc:
            raise invalid("Graph", f"input {index} desc", f"must be the one it was first given ({known})", desc)
        return Expression(self, None, int(index), desc)

    def constant(self, array: Any) -> Expression:
        """A ConstantNode (feature level 6_2) holding the array, described packed row-major."""
        if self.device.feature_level < CONSTANT_LEVEL:
            raise UnsupportedFeatureLevelError(message(
                "Graph", "constant", f"needs feature level {CONSTANT_LEVEL} (ConstantNode)",
                self.device.feature_level.label), CONSTANT_LEVEL)
        values = host_array(array)
        desc = TensorDesc(from_numpy(values.dtype), values.shape or (1,))
        data = np.zeros(desc.total_tensor_size_in_bytes, np.uint8)
        raw = values.reshape(-1).view(np.uint8)
        data[:raw.size] = raw
        return Expression(self, self._add(ConstantNode(data.tobytes()), []), 0, desc)

    def node(self, desc: object, reads: Sequence[Expression | None]) -> Expression:
        """Create the operator ``desc`` now (so a bad description fails here); its inputs read ``reads``."""
        for expr in reads:
            if expr is not None and expr.graph is not self:
                raise invalid("Graph", "expression", "must belong to this graph", repr(expr))
        operator = self.device.create_operator(desc)
        node = self._add(OperatorNode(operator), list(reads))
        return Expression(self, node, 0, operator.tensor(operator.definition.schema.outputs[0].name))

    def constant_data(self, expr: Expression) -> bytes | None:
        """The bytes of the ConstantNode ``expr`` reads, or None when it reads anything else."""
        node = None if expr.node is None else self._nodes[expr.node]
        return node.data if isinstance(node, ConstantNode) else None

    def _add(self, node: OperatorNode | ConstantNode, reads: list[Expression | None]) -> int:
        self._nodes.append(node)
        self._reads.append(reads)
        return len(self._nodes) - 1

    def graph_desc(self, outputs: Sequence[Expression]) -> GraphDesc:
        """The GraphDesc computing ``outputs`` (graph outputs in this order), with only the nodes they need."""
        for k, expr in enumerate(outputs):
            if not isinstance(expr, Expression) or expr.graph is not self:
                raise invalid("Graph", f"outputs[{k}]", "must be an expression of this graph", repr(expr))
            if expr.node is None or isinstance(self._nodes[expr.node], ConstantNode):
                what = f"graph input {expr.index}" if expr.node is None else "a constant"
                raise invalid("Graph", f"outputs[{k}]", "must be computed by an operator (a graph output wired "
                              "straight to a graph input or a constant is refused, as DirectML does)", what)
        kept = self._needed([e.node for e in outputs])  # type: ignore[misc]
        renumber = {old: new for new, old in enumerate(kept)}
        input_edges, intermediate_edges = [], []
        for old in kept:
            for index, read in enumerate(self._reads[old]):
                if read is None:
                    continue
                if read.node is None:
                    input_edges.append(InputEdge(read.index, renumber[old], index))
                else:
                    intermediate_edges.append(IntermediateEdge(renumber[read.node], read.index, renumber[old], index))
        output_edges = [OutputEdge(renumber[e.node], e.index, k) for k, e in enumerate(outputs)]  # type: ignore[index]
        input_count = max(self._inputs, default=-1) + 1
        return GraphDesc(input_count, len(outputs), [self._nodes[old] for old in kept], input_edges, output_edges,
                         intermediate_edges)

    def needed(self, expr: Expression) -> list[OperatorNode | ConstantNode]:
        """The nodes ``expr`` is computed from, its own included (none for a graph input)."""
        return [] if expr.node is None else [self._nodes[k] for k in self._needed([expr.node])]

    def _needed(self, roots: list[int]) -> list[int]:
        needed, stack = set(), list(roots)
        while stack:
            node = stack.pop()
            if node not in needed:
                needed.add(node)
                stack.extend(e.node for e in self._reads[node] if e is not None and e.node is not None)
        return sorted(needed)

    def compile(self, outputs: Sequence[Expression], flags: ExecutionFlags | int | str = ExecutionFlags.NONE
                ) -> CompiledGraph:
        """``Device.compile_graph`` of ``graph_desc(outputs)``: the one path a graph is compiled by."""
        return self.device.compile_graph(self.graph_desc(outputs), flags)


def _packed(desc: TensorDesc, data_type: DataType | str | None = None, sizes: Sequence[int] | None = None
            ) -> TensorDesc:
    return TensorDesc(desc.data_type if data_type is None else data_type, desc.sizes if sizes is None else sizes)


def _expression(x: object, name: str) -> Expression:
    if not isinstance(x, Expression):
        raise invalid("opendml.graph", name, "must be an Expression (from Graph.input, Graph.constant or an "
                      "opendml.graph function)", type(x).__name__)
    return x


def clip1(x: Expression, min: float, max: float, scale_bias: ScaleBias | None = None) -> Expression:
    """ELEMENT_WISE_CLIP1 of ``x`` (MinMaxDataType is x's data type), written packed."""
    x = _expression(x, "x")
    desc = ElementWiseClip1Desc(x.desc, _packed(x.desc), x.desc.data_type, min, max, scale_bias)
    return x.graph.node(desc, [x])


def node_function(op: OperatorDefinition) -> Callable[..., Expression]:
    """A declared operator's builder function, ``f(x, *fields)`` (each field by position or keyword, as
    DirectMLX's): its node over ``x``, written packed; the operator as it is named (no adapter)."""
    api = op.api
    assert api is not None

    def build(tensors: tuple[Expression, ...], values: tuple[Any, ...]) -> Expression:
        inputs = [_expression(t, name) for t, name in zip(tensors, api.arrays)]
        output = api.output or inputs[api.typed].desc.data_type  # IF's: ATensor's, not its condition's
        desc = op.describe([e.desc for e in inputs], _packed(inputs[0].desc, output), values)
        return inputs[0].graph.node(desc, inputs)  # the graph refuses an input of another graph

    arrays = ", ".join(api.arrays)
    annotations = {**{a: "Expression" for a in api.arrays}, **{f.python: f.annotation for f in api.keywords},
                   "return": "Expression"}
    function = define(api.python, api.keywords, f"return _build(({arrays}, ), {arguments(api.keywords)})\n",
                      globals(), {"_build": build}, every_positional=True, annotations=annotations, arrays=api.arrays)
    function.__module__ = "opendml.graph"  # which exports it
    keywords = ", ".join(f.python for f in api.keywords) or "no"
    same = "" if len(api.arrays) == 1 else " (of one type and the same sizes, as DirectML's description takes them)"
    function.__doc__ = f"{op.schema.name} of ``{arrays}``{same}, written packed; {keywords} fields."
    return function


# The declared operators' builder functions, by DirectML operator name (``opendml.graph`` exports each under
# its ``Api.python`` name: ``opendml.graph.clip``, ``opendml.graph.relu``).
NODE_FUNCTIONS: dict[str, Callable[..., Expression]] = {op.schema.name: node_function(op) for op in DECLARED}
clip = NODE_FUNCTIONS["ELEMENT_WISE_CLIP"]
threshold = NODE_FUNCTIONS["ELEMENT_WISE_THRESHOLD"]


def dequantize_linear(x: Expression, scale: Expression, zero_point: Expression | None = None) -> Expression:
    """ELEMENT_WISE_DEQUANTIZE_LINEAR; the output has the scale's data type and x's sizes, packed."""
    x, scale = _expression(x, "x"), _expression(scale, "scale")
    zp = None if zero_point is None else _expression(zero_point, "zero_point")
    desc = ElementWiseDequantizeLinearDesc(x.desc, scale.desc, None if zp is None else zp.desc,
                                           _packed(x.desc, scale.desc.data_type))
    return x.graph.node(desc, [x, scale, zp])


def quantize_linear(x: Expression, scale: Expression, zero_point: Expression | None = None,
                    output_type: DataType | str | None = None) -> Expression:
    """ELEMENT_WISE_QUANTIZE_LINEAR; the output has x's sizes, packed, and the zero point's data type, else
    ``output_type``, else UINT8 (as ONNX's QuantizeLinear)."""
    x, scale = _expression(x, "x"), _expression(scale, "scale")
    zp = None if zero_point is None else _expression(zero_point, "zero_point")
    chosen = output_type if output_type is not None else (DataType.UINT8 if zp is None else zp.desc.data_type)
    desc = ElementWiseQuantizeLinearDesc(x.desc, scale.desc, None if zp is None else zp.desc, _packed(x.desc, chosen))
    return x.graph.node(desc, [x, scale, zp])


def dequantize(x: Expression, quantization_tensors: Sequence[Expression],
               quantization_type: QuantizationType | str | int) -> Expression:
    """DirectMLX's Dequantize (feature level 6_3): DEQUANTIZE of ``x`` with its quantization tensors (the scale;
    the scale and the zero point), their sizes dividing x's into blocks; the output has the scale's data type
    (FLOAT32 for QuantizationType NONE) and x's sizes, packed."""
    x, tensors = _expression(x, "x"), _quantization_tensors(quantization_tensors)
    output_type = tensors[0].desc.data_type if tensors else DataType.FLOAT32
    desc = DequantizeDesc(x.desc, quantization_type, [t.desc for t in tensors], _packed(x.desc, output_type))
    return x.graph.node(desc, [x, *tensors])


def quantize(x: Expression, quantization_tensors: Sequence[Expression], quantization_type: QuantizationType | str | int,
             output_type: DataType | str | None = None) -> Expression:
    """QUANTIZE (feature level 6_3; DirectMLX has no builder of it), ``dequantize``'s counterpart: the output has
    x's sizes, packed, and the zero point's data type, else ``output_type``, else UINT8."""
    x, tensors = _expression(x, "x"), _quantization_tensors(quantization_tensors)
    if output_type is None:
        output_type = tensors[1].desc.data_type if len(tensors) > 1 else DataType.UINT8
    desc = QuantizeDesc(x.desc, quantization_type, [t.desc for t in tensors], _packed(x.desc, output_type))
    return x.graph.node(desc, [x, *tensors])


def _quantization_tensors(tensors: object) -> list[Expression]:
    if not isinstance(tensors, Sequence) or isinstance(tensors, str):
        raise invalid("opendml.graph", "quantization_tensors", "must be a sequence of Expressions (none; the scale; "
                      "the scale and the zero point)", type(tensors).__name__)
    return [_expression(t, f"quantization_tensors[{k}]") for k, t in enumerate(tensors)]
def cast(x: Expression, output_type: DataType | str) -> Expression:
    """CAST of ``x`` to ``output_type`` (docs/semantics.md 9d); the output has x's sizes, packed."""
    x = _expression(x, "x")
    return x.graph.node(CastDesc(x.desc, _packed(x.desc, DataType.parse(output_type, owner="CAST",
                                                                        field="OutputTensor.DataType"))), [x])
def quantized_linear_add(a: Expression, a_scale: Expression, a_zero_point: Expression | None, b: Expression,
                         b_scale: Expression, b_zero_point: Expression | None, output_scale: Expression,
                         output_zero_point: Expression | None = None,
                         output_type: DataType | str | None = None) -> Expression:
    """ELEMENT_WISE_QUANTIZED_LINEAR_ADD; the output has a's sizes, packed, and the output zero point's data type,
    else ``output_type``, else UINT8 (as ``quantize_linear``). b has a's sizes; each scale and zero point has them
    too (a single value through ``reinterpret`` with zero strides) or every size 1 (one element, its page's form)."""
    names = ("a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "output_scale", "output_zero_point")
    given = (a, a_scale, a_zero_point, b, b_scale, b_zero_point, output_scale, output_zero_point)
    operands = [None if e is None else _expression(e, name) for e, name in zip(given, names)]
    x, x_scale, x_zero, y, y_scale, y_zero, scale, zero = (None if e is None else e.desc for e in operands)
    assert x is not None and x_scale is not None and y is not None and y_scale is not None and scale is not None
    chosen = output_type if output_type is not None else (DataType.UINT8 if zero is None else zero.data_type)
    desc = ElementWiseQuantizedLinearAddDesc(x, x_scale, x_zero, y, y_scale, y_zero, scale, zero, _packed(x, chosen))
    assert operands[0] is not None
    return operands[0].graph.node(desc, operands)


def argmin(x: Expression, axes: Sequence[int], axis_direction: AxisDirection | str = "INCREASING",
           output_type: DataType | str = "INT64", nan_policy: NanPolicy | str = "IGNORE") -> Expression:
    """ARGMIN of ``x`` over ``axes``; the output keeps the rank, 1 on the reduced axes, packed. ``nan_policy``
    (an opendml extension): IGNORE, DirectML's, or PROPAGATE, a NaN winning (NumPy's and ONNX Runtime's)."""
    return _arg_reduction(ArgMinDesc, x, axes, axis_direction, output_type, nan_policy)


def argmax(x: Expression, axes: Sequence[int], axis_direction: AxisDirection | str = "INCREASING",
           output_type: DataType | str = "INT64", nan_policy: NanPolicy | str = "IGNORE") -> Expression:
    """ARGMAX of ``x`` over ``axes``, as ``argmin`` (the largest element's index)."""
    return _arg_reduction(ArgMaxDesc, x, axes, axis_direction, output_type, nan_policy)


def _arg_reduction(desc_type: type[ArgMinDesc] | type[ArgMaxDesc], x: Expression, axes: Sequence[int],
                   axis_direction: AxisDirection | str, output_type: DataType | str,
                   nan_policy: NanPolicy | str) -> Expression:
    x = _expression(x, "x")
    reduced = set(axes) if isinstance(axes, Sequence) and not isinstance(axes, str) else set()
    sizes = [1 if k in reduced else n for k, n in enumerate(x.desc.sizes)]
    desc = desc_type(x.desc, _packed(x.desc, output_type, sizes), axes, axis_direction, nan_policy)
    return x.graph.node(desc, [x])


def reduce(x: Expression, function: ReduceFunction | str | int, axes: Sequence[int],
           output_type: DataType | str | None = None) -> Expression:
    """DirectMLX's Reduce: REDUCE ``function`` of ``x`` over ``axes``; the output keeps the rank, 1 on the
    reduced axes, packed, of x's type (``output_type``: INT64 unless given, for ARGMIN and ARGMAX)."""
    x = _expression(x, "x")
    parsed = ReduceFunction.parse(function, owner="REDUCE")
    reduced = set(axes) if isinstance(axes, Sequence) and not isinstance(axes, str) else set()
    sizes = [1 if k in reduced else n for k, n in enumerate(x.desc.sizes)]
    if output_type is None:
        output_type = DataType.INT64 if parsed in INDEX_FUNCTIONS else x.desc.data_type
    desc = ReduceDesc(parsed, x.desc, _packed(x.desc, output_type, sizes), axes)
    return x.graph.node(desc, [x])


def top_k(x: Expression, axis: int, k: int, axis_direction: AxisDirection | str = "DECREASING",
          output_index_type: DataType | str = "UINT32") -> tuple[Expression, Expression]:
    """DirectMLX's TopK: TOP_K1 of ``x`` along ``axis``, its two outputs (values, indices) as expressions, both
    packed with K along ``axis``; the values of x's type, the indices of ``output_index_type``. DECREASING: the
    K largest; INCREASING: the K smallest (docs/semantics.md, **TOP_K**)."""
    x = _expression(x, "x")
    sizes = list(x.desc.sizes)
    if isinstance(axis, (int, np.integer)) and not isinstance(axis, bool) and 0 <= axis < len(sizes):
        sizes[axis] = k  # a bad axis or K is refused by the operator's own checks
    indices = _packed(x.desc, output_index_type, sizes)
    values = x.graph.node(TopK1Desc(x.desc, _packed(x.desc, None, sizes), indices, axis, k, axis_direction), [x])
    return values, Expression(x.graph, values.node, 1, indices)


def softmax(x: Expression, axes: Sequence[int] | None = None) -> Expression:
    """DirectMLX's ActivationSoftmax: SOFTMAX over the last dimension (axes None), or SOFTMAX1 over ``axes``
    (feature level 5_1); the output has x's type and sizes, packed (docs/semantics.md 9g)."""
    return _normalization(ActivationSoftmaxDesc, ActivationSoftmax1Desc, x, axes)


def log_softmax(x: Expression, axes: Sequence[int] | None = None) -> Expression:
    """DirectMLX's ActivationLogSoftmax: LOG_SOFTMAX over the last dimension (axes None), or LOG_SOFTMAX1."""
    return _normalization(ActivationLogSoftmaxDesc, ActivationLogSoftmax1Desc, x, axes)


def hardmax(x: Expression, axes: Sequence[int] | None = None) -> Expression:
    """DirectMLX's ActivationHardmax: HARDMAX over the last dimension (axes None), or HARDMAX1 over ``axes``."""
    return _normalization(ActivationHardmaxDesc, ActivationHardmax1Desc, x, axes)


def _normalization(old: type, new: type, x: Expression, axes: Sequence[int] | None) -> Expression:
    x = _expression(x, "x")
    desc = old(x.desc, _packed(x.desc)) if axes is None else new(x.desc, _packed(x.desc), axes)
    return x.graph.node(desc, [x])


def reinterpret(x: Expression, sizes: Sequence[int] | None = None, strides: Sequence[int] | None = None,
                data_type: DataType | str | None = None) -> Expression:
    """DirectMLX's Reinterpret: no node, a new description of the same bytes (zero strides broadcast).

    Sizes and data type default to x's; strides to x's when the sizes are kept, else packed. The new
    description may not reach past x's TotalTensorSizeInBytes; a node's output keeps its sizes and data
    type (an intermediate edge joins tensors of the same DataType and Sizes).
    """
    x = _expression(x, "x")
    if strides is None and sizes is None:
        strides = x.desc.strides
    desc = TensorDesc(x.desc.data_type if data_type is None else data_type,
                      x.desc.sizes if sizes is None else sizes, strides)
    if desc.total_tensor_size_in_bytes > x.desc.total_tensor_size_in_bytes:
        raise invalid("reinterpret", "TotalTensorSizeInBytes",
                      f"must be at most x's ({x.desc.total_tensor_size_in_bytes})", desc.total_tensor_size_in_bytes)
    if x.node is not None and (desc.data_type != x.desc.data_type or desc.sizes != x.desc.sizes):
        raise invalid("reinterpret", "Sizes and DataType", f"must stay {list(x.desc.sizes)} "
                      f"{x.desc.data_type.name} for a node's output (an intermediate edge joins tensors of the "
                      "same DataType and Sizes)", f"{list(desc.sizes)} {desc.data_type.name}")
    return Expression(x.graph, x.node, x.index, desc)
