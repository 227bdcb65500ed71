"""The functional API's calls on traced arrays (the "traced" front end of ``opendml.front_ends``): each adds a
node to the graph being traced instead of running, with the same description the functional API makes on arrays
(its rules, through ``opendml.functional``'s helpers), so a compiled function's results are bit-identical to the
calls it traces.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import functional as fn_api
from ..buffer import host_array
from ..device import Device
from ..dtypes import DataType
from ..enums import AxisDirection, NanPolicy, ReduceFunction
from ..errors import invalid
from ..feature_levels import FeatureLevel
from ..functional import blocked as fn_blocked
from ..functional import declared as fn_declared
from ..functional.reduce import reduced_type
from ..functional.softmax import NORMALIZATIONS, _chosen
from ..functional.top_k import _index_type, checked_axis_and_k
from ..graphs.builder import Expression, Graph, reinterpret
from ..graphs.builder import dequantize as g_dequantize
from ..graphs.builder import quantize as g_quantize
from ..kernels.spec import ReductionKind
from ..ops.cast import CAST_SCHEMA, CastDesc
from ..ops.definition import OperatorDefinition
from ..ops.dequantize_linear import DEQUANTIZE_LINEAR_SCHEMA, ElementWiseDequantizeLinearDesc
from ..ops.quantize_linear import QUANTIZE_LINEAR_SCHEMA, ElementWiseQuantizeLinearDesc
from ..ops.reduce import REDUCE_SCHEMA, ReduceDesc
from ..ops.top_k import TOP_K1_SCHEMA, TopK1Desc
from ..schema import OperatorSchema
from ..tensor import TensorDesc
from .tracer import OWNER, Tracer


def _begin(owner: str, x: Any, out: Any, device: object, operands: Sequence[Any] = ()) -> tuple[Tracer, Graph]:
    """A traced call's input, and the one graph it and its traced ``operands`` belong to: ``device=`` may only
    name that graph's device, and ``out=`` is refused (a compiled function returns new arrays)."""
    if not isinstance(x, Tracer):
        raise invalid(owner, "InputTensor", "must be a traced array while tracing (an array argument of the compiled "
                      "function, or a result computed from one)", type(x).__name__)
    graphs = {id(v.expr.graph): v.expr.graph for v in (x, *operands) if isinstance(v, Tracer)}
    if len(graphs) > 1:
        raise invalid(owner, "traced arrays", "must come from one traced call", f"{len(graphs)} calls")
    graph = x.expr.graph
    if device is not None and fn_api._resolve_device(device, None, owner) is not graph.device:
        raise invalid(owner, "device", f"must be None or the traced call's device ({graph.device!r})", repr(device))
    if out is not None:
        raise invalid(owner, "out", "must be None while tracing (a compiled function returns new arrays)",
                      type(out).__name__)
    return x, graph


def _check_rank(schema: OperatorSchema, device: Device, rank: int) -> None:
    """Levels whose rows take only 4-D tensors pad with leading 1s, which a node's output cannot take on."""
    if fn_api._leading_ones(schema, device, rank):
        raise invalid(OWNER, f"{schema.name} rank", f"must be one the device's feature level "
                      f"{device.feature_level.label} takes without padding", rank)


def _packed(desc: TensorDesc, data_type: DataType | None = None, sizes: Sequence[int] | None = None) -> TensorDesc:
    return TensorDesc(desc.data_type if data_type is None else data_type, desc.sizes if sizes is None else sizes)


def declared(op: OperatorDefinition, tensors: tuple[Any, ...], values: tuple[Any, ...], out: Any,
             device: object) -> Tracer:
    """A declared operator's function (``opendml.functional.declared``), traced: one node of the operator it runs
    (its adapter's choice, as on arrays: the same description, so the same bits)."""
    assert op.api is not None
    if len(tensors) > 1:
        return _declared_of_arrays(op, tensors, values, out, device)
    (x,) = tensors
    owner = op.schema.name
    tracer, graph = _begin(owner, x, out, device)
    schema, describe = op.over_arrays(graph.device.feature_level, tracer.dtype, values)
    _check_rank(schema, graph.device, len(tracer.expr.desc.sizes))
    output = op.api.output or tracer.expr.desc.data_type
    desc = describe(tracer.expr.desc, _packed(tracer.expr.desc, output))
    return Tracer(graph.node(desc, [tracer.expr]), tracer.shape, output.numpy)


def _declared_of_arrays(op: OperatorDefinition, tensors: tuple[Any, ...], values: tuple[Any, ...], out: Any,
                        device: object) -> Tracer:
    """An operator of several tensors (ADD), traced: its operands broadcast as the functional API broadcasts
    them, each read through zero strides; one known now (a number, an array of the closure) goes through the
    eager rules (a number takes the traced operand's type) and becomes a held graph input."""
    assert op.api is not None
    owner, names = op.schema.name, op.api.tensors
    first = next(t for t in tensors if isinstance(t, Tracer))  # this front end is taken for a traced operand
    _, graph = _begin(owner, first, out, device, tensors)
    stand_ins = [np.empty(0, t.dtype) if isinstance(t, Tracer) else t for t in tensors]
    eager = fn_declared.operand_arrays(graph.device, op, stand_ins)
    operands = [t if isinstance(t, Tracer) else _constant(graph, a) for t, a in zip(tensors, eager)]
    shape: tuple[int, ...] = tuple(operands[0].shape)
    for k in range(1, len(operands)):
        shape = fn_api._broadcast(owner, shape, " and ".join(names[:k]), tuple(operands[k].shape), names[k])
    full = shape or (1,)
    schema, describe = op.over_arrays(graph.device.feature_level, operands[op.api.typed].dtype, values)
    _check_rank(schema, graph.device, len(full))
    reads = [_broadcast_to(t, full, owner, name) for t, name in zip(operands, names)]
    output = op.api.output or reads[op.api.typed].desc.data_type
    desc = describe(*(r.desc for r in reads), _packed(reads[0].desc, output))
    return Tracer(graph.node(desc, reads), shape, output.numpy)


def cast(x: Any, dtype: Any, out: Any, device: object) -> Tracer:
    """``opendml.cast``, traced: one CAST node to the type the call names."""
    owner = CAST_SCHEMA.name
    tracer, graph = _begin(owner, x, out, device)
    _check_rank(CAST_SCHEMA, graph.device, len(tracer.expr.desc.sizes))
    target = DataType.parse(dtype, owner=owner, field="OutputTensor.DataType")
    desc = CastDesc(tracer.expr.desc, _packed(tracer.expr.desc, target))
    return Tracer(graph.node(desc, [tracer.expr]), tracer.shape, target.numpy)


def dequantize_linear(x: Any, scale: Any, zero_point: Any, out: Any, device: object) -> Tracer:
    owner = DEQUANTIZE_LINEAR_SCHEMA.name
    tracer, graph = _begin(owner, x, out, device, (scale, zero_point))
    dev = graph.device
    # Values known now go through the eager rules (a number scale is FLOAT32, a zero point takes x's type).
    scale_t = scale if isinstance(scale, Tracer) else _constant(graph, fn_api._scale(dev, scale, owner))
    if zero_point is None and dev.feature_level < FeatureLevel.FL_6_2:
        zero_point = 0
    zp_t = zero_point if zero_point is None or isinstance(zero_point, Tracer) else _constant(
        graph, fn_api._zero_point(dev, zero_point, tracer.dtype, owner))
    if isinstance(zp_t, Tracer) and zp_t.dtype != tracer.dtype:
        raise invalid(owner, "ZeroPointTensor", f"must hold values of the input's type {tracer.dtype} while "
                      "tracing (a traced zero point is not converted)", zp_t.dtype)
    return _quantization_node(DEQUANTIZE_LINEAR_SCHEMA, ElementWiseDequantizeLinearDesc, tracer, scale_t, zp_t,
                              scale_t.dtype)


def quantize_linear(x: Any, scale: Any, zero_point: Any, output_type: DataType | str | None, out: Any,
                    device: object) -> Tracer:
    owner = QUANTIZE_LINEAR_SCHEMA.name
    tracer, graph = _begin(owner, x, out, device, (scale, zero_point))
    dev = graph.device
    # Values known now go through the eager rules (a number scale takes the input's scale type, a number zero
    # point the output type); a traced zero point's type is the output type.
    scale_t = scale if isinstance(scale, Tracer) else _constant(
        graph, fn_api._quantize_scale(dev, scale, tracer.dtype, owner))
    if isinstance(zero_point, Tracer):
        fn_api._check_output_type(zero_point.dtype, output_type, owner)
        zp_t: Tracer | None = zero_point
        out_dtype = zero_point.dtype
    else:
        zp, out_dtype = fn_api._quantize_zero_point(dev, zero_point, output_type, owner)
        if zp is None and dev.feature_level < FeatureLevel.FL_6_2:
            zp = fn_api._zero_point(dev, 0, out_dtype, owner)
        zp_t = None if zp is None else _constant(graph, zp)
    return _quantization_node(QUANTIZE_LINEAR_SCHEMA, ElementWiseQuantizeLinearDesc, tracer, scale_t, zp_t, out_dtype)


def _quantization_node(schema: OperatorSchema, desc_type: type, x: Tracer, scale: Tracer, zero_point: Tracer | None,
                       out_dtype: np.dtype) -> Tracer:
    """A node of InputTensor, ScaleTensor, ZeroPointTensor and OutputTensor over their broadcast shape, the
    operands read through zero strides as the functional API reads them."""
    owner = schema.name
    shape = fn_api._broadcast(owner, x.shape, "InputTensor", scale.shape, "ScaleTensor")
    if zero_point is not None:
        shape = fn_api._broadcast(owner, shape, "InputTensor and ScaleTensor", zero_point.shape, "ZeroPointTensor")
    full = shape or (1,)
    graph = x.expr.graph
    _check_rank(schema, graph.device, len(full))
    reads = [_broadcast_to(t, full, owner, field) if t is not None else None
             for t, field in ((x, "InputTensor"), (scale, "ScaleTensor"), (zero_point, "ZeroPointTensor"))]
    descs = [None if r is None else r.desc for r in reads]
    assert descs[0] is not None and descs[1] is not None
    out_type = DataType.parse(out_dtype, owner=owner, field="OutputTensor.DataType")
    desc = desc_type(descs[0], descs[1], descs[2], _packed(descs[0], out_type))
    return Tracer(graph.node(desc, reads), shape, np.dtype(out_dtype))


class TracedGraph(Graph):
    """The graph a trace builds. Values the function holds (numbers, arrays of its closure) become graph
    inputs after the arguments', bound at every call to buffers made once, not ConstantNodes: a graph input is
    read through any strides, so a scale of one value broadcast over a large tensor stays one value, where a
    ConstantNode's output, which no node may read through other strides, had to hold the broadcast copy (a
    number's scale over a [65536, 4096] input was 1 GiB)."""

    def __init__(self, device: Device, first: int) -> None:
        super().__init__(device)
        self.held: list[tuple[int, np.ndarray]] = []  # (graph input index, values)
        self._next = first

    def held_value(self, values: np.ndarray) -> Expression:
        index, self._next = self._next, self._next + 1
        self.held.append((index, values))
        return self.input(index, TensorDesc(DataType.parse(values.dtype, owner=OWNER), values.shape or (1,)))


def _constant(graph: Graph, array: Any) -> Tracer:
    """A value known while tracing, as a graph input bound to a copy of it (``TracedGraph``)."""
    values = host_array(fn_api._to_host(array) if fn_api._on_gpu(array) else array)
    assert isinstance(graph, TracedGraph)
    return Tracer(graph.held_value(values), values.shape, values.dtype)


def _broadcast_to(t: Tracer, full: tuple[int, ...], owner: str, field: str) -> Expression:
    """``t`` read as ``full`` through zero strides (as the functional API's broadcast_to), nothing copied."""
    sizes = t.expr.desc.sizes
    if tuple(sizes) == full:
        return t.expr
    if t.expr.node is not None:  # a graph cannot reinterpret a node's output
        raise invalid(owner, f"{field} shape", f"must be the broadcast shape {full} when it is computed in the "
                      "traced function (a node's output is not broadcast)", t.shape)
    strides = t.expr.desc.effective_strides
    shift = len(full) - len(sizes)
    new = [0 if k < shift or sizes[k - shift] == 1 else strides[k - shift] for k in range(len(full))]
    return reinterpret(t.expr, sizes=full, strides=new)


def arg_reduction(kind: ReductionKind, x: Any, axes: int | Sequence[int] | None, axis_direction: AxisDirection | str,
                  output_type: DataType | str, out: Any, device: object, nan_policy: NanPolicy | str,
                  return_values: bool, keepdims: bool = True) -> Tracer:
    """argmin and argmax, traced: one node of ARGMIN or ARGMAX (``kind``), the indices alone; ``keepdims=False``
    drops the reduced axes from the traced shape (the node's packed output holds the same elements in order)."""
    schema, desc_type = fn_api.ARG_REDUCTIONS[kind]
    owner = schema.name
    if return_values:  # a traced graph has no gather node to read the values with
        raise invalid(owner, "return_values", "must be False in a function traced by opendml.compile", True)
    tracer, graph = _begin(owner, x, out, device)
    rank = len(tracer.expr.desc.sizes)
    reduced = fn_api._normalize_axes(axes, rank, owner)
    direction = AxisDirection.parse(axis_direction, owner=owner)
    policy = NanPolicy.parse(nan_policy, owner=owner)
    out_type = DataType.parse(output_type, owner=owner, field="OutputTensor.DataType")
    out_sizes = tuple(1 if k in reduced else n for k, n in enumerate(tracer.expr.desc.sizes))
    _check_rank(schema, graph.device, rank)
    desc = desc_type(tracer.expr.desc, _packed(tracer.expr.desc, out_type, out_sizes), reduced, direction, policy)
    dropped = tuple(n for k, n in enumerate(tracer.shape) if k not in reduced)
    shape = tracer.shape and (out_sizes if keepdims else dropped)
    return Tracer(graph.node(desc, [tracer.expr]), shape, out_type.numpy)



def reduce(function: ReduceFunction, x: Any, axes: object, keepdims: bool, output_type: object, out: Any,
           device: object) -> Tracer:
    """``opendml.reduce``, traced: one REDUCE node of ``function`` (the output type by the eager rule:
    ``reduced_type``); ``keepdims=False`` drops the reduced axes from the traced shape, as argmin's."""
    tracer, graph = _begin(REDUCE_SCHEMA.name, x, out, device)
    name = REDUCE_SCHEMA.name
    rank = len(tracer.expr.desc.sizes)
    reduced = fn_api._normalize_axes(axes, rank, name)
    out_type = reduced_type(function, tracer.dtype, output_type)
    _check_rank(REDUCE_SCHEMA, graph.device, rank)
    out_sizes = tuple(1 if k in reduced else n for k, n in enumerate(tracer.expr.desc.sizes))
    desc = ReduceDesc(function, tracer.expr.desc, _packed(tracer.expr.desc, out_type, out_sizes), reduced)
    dropped = tuple(n for k, n in enumerate(tracer.shape) if k not in reduced)
    shape = tracer.shape and (out_sizes if keepdims else dropped)
    return Tracer(graph.node(desc, [tracer.expr]), shape, out_type.numpy)


def top_k(x: Any, k: object, axis: object, direction: AxisDirection, index_type: object, device: object
          ) -> tuple[Tracer, Tracer]:
    """``opendml.top_k``, traced: one TOP_K1 node, its two outputs (values, then indices) two traced arrays of
    K along the axis; the index type by the eager rule (UINT32 where every index of the axis fits)."""
    name = TOP_K1_SCHEMA.name
    tracer, graph = _begin(name, x, None, device)
    axis, k = checked_axis_and_k(tracer.shape, axis, k)
    indices_type = _index_type(index_type, tracer.shape[axis], name)
    shape = tuple(k if d == axis else n for d, n in enumerate(tracer.shape))
    values_desc, indices_desc = _packed(tracer.expr.desc, None, shape), _packed(tracer.expr.desc, indices_type, shape)
    values = graph.node(TopK1Desc(tracer.expr.desc, values_desc, indices_desc, axis, k, direction), [tracer.expr])
    indices = Expression(graph, values.node, 1, indices_desc)
    return Tracer(values, shape, tracer.dtype), Tracer(indices, shape, indices_type.numpy)


def normalized(python: str, x: Any, axis: object, out: Any, device: object) -> Tracer:
    """``opendml.softmax``, ``log_softmax`` and ``hardmax`` (``python``), traced: one node of the operator the
    eager call runs (the 1 variant from 5_1; below it the old operator where it is the same operation)."""
    newer, older = NORMALIZATIONS[python]
    tracer, graph = _begin(newer.schema.name, x, out, device)
    if not tracer.shape:
        raise invalid(f"opendml.{python}", "x", "must have at least one dimension (the normalization runs along "
                      "an axis)", "a 0-d array")
    axes = fn_api._normalize_axes(axis, len(tracer.shape), newer.schema.name)
    op = _chosen(newer, older, graph.device.feature_level, tracer.shape, axes)
    _check_rank(op.schema, graph.device, len(tracer.shape))
    packed = _packed(tracer.expr.desc)
    desc = op.desc_type(tracer.expr.desc, packed) if op is older else op.desc_type(tracer.expr.desc, packed, axes)
    return Tracer(graph.node(desc, [tracer.expr]), tracer.shape, tracer.dtype)


def dequantize(x: Any, scale: Any, zero_point: Any, data_type: Any, device: object) -> Tracer:
    """``opendml.dequantize``, traced: one DEQUANTIZE node of whole-byte data (INT8, UINT8), its scale and zero
    point traced arrays of x's rank or values known now (graph inputs bound to copies of them). 4-bit data is
    refused by name: a compiled function's arrays are whole bytes."""
    owner = "DEQUANTIZE"
    tracer, graph = _begin(owner, x, None, device, (scale, zero_point))
    quantized = _whole_bytes(owner, "x", tracer.dtype, data_type)
    if zero_point is not None and scale is None:
        raise invalid(owner, "zero_point", "must come with a scale (QuantizationType SCALE_ZERO_POINT)", "no scale")
    rank = len(tracer.expr.desc.sizes)
    scale_t = scale if scale is None or isinstance(scale, Tracer) else _constant(
        graph, fn_blocked._scale(scale, rank, owner))
    zp_t = zero_point if zero_point is None or isinstance(zero_point, Tracer) else _constant(
        graph, fn_blocked._zero_point(zero_point, quantized, rank, owner))
    if isinstance(zp_t, Tracer):
        _whole_bytes(owner, "zero_point", zp_t.dtype, quantized)
    return _blocked_node(owner, g_dequantize, tracer, scale_t, zp_t)


def quantize(x: Any, scale: Any, zero_point: Any, output_type: Any, device: object) -> Tracer:
    """``opendml.quantize``, traced: one QUANTIZE node to INT8 or UINT8 (the zero point's type, else
    ``output_type``, else UINT8), as ``dequantize``; a 4-bit output is refused by name."""
    owner = "QUANTIZE"
    tracer, graph = _begin(owner, x, None, device, (scale, zero_point))
    if tracer.dtype not in (np.float32, np.float16):
        raise invalid(owner, "x", "must be a FLOAT32 or FLOAT16 array", tracer.dtype)
    if zero_point is not None and scale is None:
        raise invalid(owner, "zero_point", "must come with a scale (QuantizationType SCALE_ZERO_POINT)", "no scale")
    if isinstance(zero_point, Tracer):
        quantized = _whole_bytes(owner, "zero_point", zero_point.dtype, output_type)
    else:
        quantized = _whole_bytes(owner, "output_type", None, fn_blocked._output_type(zero_point, output_type, owner))
    rank = len(tracer.expr.desc.sizes)
    float_type = DataType.parse(tracer.dtype, owner=owner)
    scale_t = scale if scale is None or isinstance(scale, Tracer) else _constant(
        graph, fn_blocked._scale(scale, rank, owner, float_type))
    zp_t = zero_point if zero_point is None or isinstance(zero_point, Tracer) else _constant(
        graph, fn_blocked._zero_point(zero_point, quantized, rank, owner))
    return _blocked_node(owner, g_quantize, tracer, scale_t, zp_t, quantized)


def _whole_bytes(owner: str, name: str, dtype: np.dtype | None, data_type: Any = None) -> DataType:
    """INT8 or UINT8, what the traced call quantizes to or from: ``data_type`` where given, else the type of an
    array of ``dtype`` (which must hold it); 4-bit types refused by name."""
    wanted = DataType.parse(data_type if data_type is not None else dtype, owner=owner, field=name)
    if wanted in (DataType.INT4, DataType.UINT4):
        raise invalid(owner, name, "must be INT8 or UINT8 while tracing (opendml.compile does not take or give "
                      "4-bit arrays yet: call opendml.dequantize and opendml.quantize on arrays)", wanted.name)
    if wanted not in (DataType.INT8, DataType.UINT8) or (dtype is not None and np.dtype(dtype) != wanted.numpy):
        raise invalid(owner, name, "must be an INT8 or UINT8 array while tracing",
                      wanted.name if dtype is None else np.dtype(dtype))
    return wanted


def _widened(t: Tracer, sizes: tuple[int, ...], owner: str, name: str) -> Expression:
    """A quantization tensor of a single value read as ``sizes`` through zero strides; any other as it is (sizes
    unlike the other tensor's are the operator's to refuse)."""
    if all(n == 1 for n in t.expr.desc.sizes):
        return _broadcast_to(t, sizes, owner, name)
    return t.expr


def _blocked_node(owner: str, build: Any, x: Tracer, scale: Tracer | None, zero_point: Tracer | None,
                  output_type: DataType | None = None) -> Tracer:
    """The DEQUANTIZE or QUANTIZE node of the graph builder (``build``), its QuantizationType what is given; a
    scale or zero point of a single value beside the other's blocks read as their shape through zero strides
    (the eager rule: ``quantization_shape``)."""
    tensors = [t.expr for t in (scale, zero_point) if t is not None]
    if scale is not None and zero_point is not None:
        sizes = fn_blocked.quantization_shape(tuple(scale.expr.desc.sizes), tuple(zero_point.expr.desc.sizes))
        tensors = [_widened(t, sizes, owner, name) for t, name in ((scale, "scale"), (zero_point, "zero_point"))]
    kind = ("NONE", "SCALE", "SCALE_ZERO_POINT")[len(tensors)]
    if output_type is None:
        node = build(x.expr, tensors, kind)
    else:
        node = build(x.expr, tensors, kind, output_type)
    return Tracer(node, x.shape, node.desc.data_type.numpy)
