"""``opendml.compile``: a function of arrays, traced once per signature into one compiled graph.

A call's signature is each array argument's kind, dtype, shape and strides (and whether a description can
state its layout) and every other argument's exact value. A new signature runs the function once on traced
arrays: the functional API's functions, given one, add a node to a Graph instead of running, with the same
descriptions as on arrays (so results are bit-identical). The graph is compiled once and cached; each call
binds the arrays where they lie (copies where the functional API copies) and returns new arrays.
"""

from __future__ import annotations

import functools
import math
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np

from . import front_ends
from . import functional as fn_api
from .buffer import BufferBinding, host_array
from .dask.detect import any_dask
from .device import Device
from .dtypes import DataType
from .enums import AxisDirection, NanPolicy
from .errors import invalid
from .feature_levels import FeatureLevel
from .graphs.builder import Expression, Graph, reinterpret
from .graphs.compiled import CompiledGraph
from .kernels.spec import ReductionKind
from .ops.definition import OperatorDefinition
from .ops.dequantize_linear import DEQUANTIZE_LINEAR_SCHEMA, ElementWiseDequantizeLinearDesc
from .ops.quantize_linear import QUANTIZE_LINEAR_SCHEMA, ElementWiseQuantizeLinearDesc
from .schema import OperatorSchema
from .shared import Registry, new_token
from .tensor import TensorDesc

OWNER = "opendml.compile"


# What a traced array offers beyond the functional API: facts fixed by the signature a graph is traced for
# (the same for every call that runs it), so exact. Everything else NumPy arrays offer is refused.
STATIC_ATTRIBUTES = ("shape", "ndim", "size", "dtype")

# NumPy array attributes a traced array keeps from ``object`` (or its own): Python's object machinery, none of
# which reads or changes values. Setting and deleting attributes are refused (``x.shape = ...`` reshapes a NumPy
# array in place); repr, str and ``format`` with an empty spec show the traced array, not values.
KEPT_ATTRIBUTES = frozenset({
    "__class__", "__class_getitem__", "__dir__", "__doc__", "__getattribute__", "__init__", "__init_subclass__",
    "__new__", "__repr__", "__sizeof__", "__str__", "__subclasshook__",
})

# Python's own protocols NumPy arrays do not define as such but that would read a value (round(), math.trunc,
# math.floor, math.ceil, the buffer protocol in Python 3.12), refused too.
EXTRA_REFUSED = ("__round__", "__trunc__", "__floor__", "__ceil__", "__buffer__", "__release_buffer__")

_OPERATORS = {
    "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "add": "+", "sub": "-", "mul": "*",
    "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**", "matmul": "@", "and": "&", "or": "|", "xor": "^",
    "lshift": "<<", "rshift": ">>", "divmod": "divmod()", "neg": "unary -", "pos": "unary +", "abs": "abs()",
    "invert": "~",
}

_PROTOCOLS = {
    "__bool__": "bool() (an if, while, and, or, not)", "__len__": "len()", "__iter__": "iteration",
    "__contains__": "the in operator", "__getitem__": "indexing", "__setitem__": "item assignment",
    "__delitem__": "item deletion", "__index__": "use as an index (operator.index, range, slicing)",
    "__int__": "int()", "__float__": "float()", "__complex__": "complex()", "__round__": "round()",
    "__trunc__": "math.trunc()", "__floor__": "math.floor()", "__ceil__": "math.ceil()",
    "__copy__": "copy.copy()", "__deepcopy__": "copy.deepcopy()", "__reduce__": "pickling",
    "__reduce_ex__": "pickling", "__getstate__": "pickling", "__setstate__": "unpickling",
    "__array__": "conversion to a NumPy array", "__array_interface__": "conversion to a NumPy array",
    "__array_struct__": "conversion to a NumPy array", "__buffer__": "the buffer protocol (memoryview, bytes)",
    "__release_buffer__": "the buffer protocol", "__dlpack__": "DLPack export", "__dlpack_device__": "DLPack export",
    "__array_namespace__": "the array API namespace",
}


def _untraceable(what: str) -> NoReturn:
    raise invalid(OWNER, "traced array", "supports only the functional API (opendml.clip, threshold, "
                  "dequantize_linear, quantize_linear, argmin, argmax, the declared operators' functions such as "
                  "relu) and the static attributes " + ", ".join(
                      f".{a}" for a in STATIC_ATTRIBUTES) + ": its values are not known while tracing, so "
                  "do this outside the compiled function (on the arrays it is given or returns)", what)


def _describe(name: str) -> str:
    """What using NumPy array attribute ``name`` is, in words, for the error."""
    if name in _PROTOCOLS:
        return _PROTOCOLS[name]
    core = name.strip("_")
    for prefix, kind in (("", ""), ("r", "reflected "), ("i", "in-place ")):
        if core.startswith(prefix) and core[len(prefix):] in _OPERATORS:
            symbol = _OPERATORS[core[len(prefix):]]
            return f"the {kind}operator {symbol}{'=' if prefix == 'i' else ''} ({name})"
    return name if name.startswith("__") else f"the attribute .{name}"


class Tracer:
    """A traced array: an expression of the graph being built, with the shape and dtype of the eager result.

    It offers ``STATIC_ATTRIBUTES``; every other attribute and operation of NumPy arrays raises OpenDMLError
    (a comparison would otherwise compare identities, an attribute raise a bare AttributeError). Hashed by
    identity."""

    _opendml_traced = True

    def __init__(self, expr: Expression, shape: tuple[int, ...], dtype: np.dtype) -> None:
        object.__setattr__(self, "expr", expr)
        object.__setattr__(self, "_shape", tuple(shape))
        object.__setattr__(self, "_dtype", np.dtype(dtype))

    expr: Expression
    _shape: tuple[int, ...]
    _dtype: np.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __repr__(self) -> str:
        return f"Tracer(shape={self.shape}, dtype={self.dtype})"

    __hash__ = object.__hash__  # by identity (defining __eq__ would otherwise remove it)

    def __format__(self, spec: str) -> str:
        if spec:
            _untraceable(f"format() with spec {spec!r} of {self!r}")
        return repr(self)

    def __setattr__(self, name: str, value: object) -> NoReturn:
        _untraceable(f"setting the attribute {name} of {self!r}")

    def __delattr__(self, name: str) -> NoReturn:
        _untraceable(f"deleting the attribute {name} of {self!r}")

    def __getattr__(self, name: str) -> NoReturn:
        # Only names not found otherwise reach this: NumPy's (refused), or none at all (hasattr's probes of
        # other protocols, __dask_graph__ or __cuda_array_interface__, still answer False).
        if name in _NDARRAY_ATTRIBUTES:
            _untraceable(f"{_describe(name)} of {self!r}")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __array_ufunc__(self, ufunc: Any, method: str, *args: object, **kwargs: object) -> NoReturn:
        _untraceable(f"NumPy's {ufunc.__name__} on {self!r}")

    def __array_function__(self, func: Any, types: object, args: object, kwargs: object) -> NoReturn:
        _untraceable(f"NumPy's {func.__name__} on {self!r}")


_NDARRAY_ATTRIBUTES = frozenset(dir(np.ndarray)) - KEPT_ATTRIBUTES - set(STATIC_ATTRIBUTES)


def _refusal(name: str) -> Any:
    """A refusing method (or, for an attribute NumPy has as a value, property) for ``name``."""
    def refuse(self: Tracer, *args: object, **kwargs: object) -> NoReturn:
        _untraceable(f"{_describe(name)} of {self!r}")

    refuse.__name__ = name
    return refuse if callable(getattr(np.ndarray, name, refuse)) else property(refuse)


# Every dunder of NumPy arrays (and of this NumPy, so a new one is covered) that the class does not define is
# a refusal defined on the class: Python looks operators and protocols up on the type, not through __getattr__.
for _name in sorted(_NDARRAY_ATTRIBUTES | set(EXTRA_REFUSED)):
    if _name.startswith("__") and _name not in vars(Tracer) and _name != "__hash__":
        setattr(Tracer, _name, _refusal(_name))


def _graph_of(values: Sequence[Any], device: object, owner: str) -> Graph:
    """The one graph the traced arguments belong to; ``device=`` may only name its device."""
    graphs = {id(v.expr.graph): v.expr.graph for v in values if isinstance(v, Tracer)}
    if len(graphs) > 1:
        raise invalid(owner, "traced arrays", "must come from one traced call", f"{len(graphs)} calls")
    graph = next(iter(graphs.values()))
    if device is not None and fn_api._resolve_device(device, None, owner) is not graph.device:
        raise invalid(owner, "device", f"must be None or the traced call's device ({graph.device!r})", repr(device))
    return graph


def _no_out(out: Any, owner: str) -> None:
    if out is not None:
        raise invalid(owner, "out", "must be None while tracing (a compiled function returns new arrays)",
                      type(out).__name__)


def _check_rank(schema: OperatorSchema, device: Device, rank: int) -> None:
    """Levels whose rows take only 4-D tensors pad with leading 1s, which a node's output cannot take on."""
    if fn_api._leading_ones(schema, device, rank):
        raise invalid(OWNER, f"{schema.name} rank", f"must be one the device's feature level "
                      f"{device.feature_level.label} takes without padding", rank)


def _traced_tensor(x: Any, owner: str, field: str) -> Tracer:
    if not isinstance(x, Tracer):
        raise invalid(owner, field, "must be a traced array while tracing (an array argument of the compiled "
                      "function, or a result computed from one)", type(x).__name__)
    return x


def _packed(desc: TensorDesc, data_type: DataType | None = None, sizes: Sequence[int] | None = None) -> TensorDesc:
    return TensorDesc(desc.data_type if data_type is None else data_type, desc.sizes if sizes is None else sizes)


def declared(op: OperatorDefinition, x: Any, values: tuple[Any, ...], out: Any, device: object) -> Tracer:
    """A declared operator's function (``opendml.functional.declared``), traced: one node of the operator it runs
    (its adapter's choice, as on arrays: the same description, so the same bits)."""
    assert op.api is not None
    owner = op.schema.name
    tracer = _traced_tensor(x, owner, "InputTensor")
    graph = _graph_of([tracer], device, owner)
    _no_out(out, owner)
    schema, describe = op.over_arrays(graph.device.feature_level, tracer.dtype, values)
    _check_rank(schema, graph.device, len(tracer.expr.desc.sizes))
    output = op.api.output or tracer.expr.desc.data_type
    desc = describe(tracer.expr.desc, _packed(tracer.expr.desc, output))
    return Tracer(graph.node(desc, [tracer.expr]), tracer.shape, output.numpy)


def dequantize_linear(x: Any, scale: Any, zero_point: Any, out: Any, device: object) -> Tracer:
    owner = DEQUANTIZE_LINEAR_SCHEMA.name
    tracer = _traced_tensor(x, owner, "InputTensor")
    graph = _graph_of([x, scale, zero_point], device, owner)
    _no_out(out, owner)
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
    tracer = _traced_tensor(x, owner, "InputTensor")
    graph = _graph_of([x, scale, zero_point], device, owner)
    _no_out(out, owner)
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


class _TracedGraph(Graph):
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
    """A value known while tracing, as a graph input bound to a copy of it (``_TracedGraph``)."""
    values = host_array(fn_api._to_host(array) if fn_api._on_gpu(array) else array)
    assert isinstance(graph, _TracedGraph)
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
                  return_values: bool) -> Tracer:
    """argmin and argmax, traced: one node of ARGMIN or ARGMAX (``kind``), the indices alone."""
    schema, desc_type = fn_api.ARG_REDUCTIONS[kind]
    owner = schema.name
    if return_values:  # a traced graph has no gather node to read the values with
        raise invalid(owner, "return_values", "must be False in a function traced by opendml.compile", True)
    tracer = _traced_tensor(x, owner, "InputTensor")
    graph = _graph_of([tracer], device, owner)
    _no_out(out, owner)
    rank = len(tracer.expr.desc.sizes)
    reduced = fn_api._normalize_axes(axes, rank, owner)
    direction = AxisDirection.parse(axis_direction, owner=owner)
    policy = NanPolicy.parse(nan_policy, owner=owner)
    out_type = DataType.parse(output_type, owner=owner, field="OutputTensor.DataType")
    out_sizes = tuple(1 if k in reduced else n for k, n in enumerate(tracer.expr.desc.sizes))
    _check_rank(schema, graph.device, rank)
    desc = desc_type(tracer.expr.desc, _packed(tracer.expr.desc, out_type, out_sizes), reduced, direction, policy)
    return Tracer(graph.node(desc, [tracer.expr]), tracer.shape and out_sizes, out_type.numpy)


def compile(fn: Callable[..., Any] | None = None, *, device: Device | str | None = None) -> Any:
    """Decorate ``fn``, a function of arrays calling the functional API, to run as one compiled graph.

    Array arguments (NumPy, CuPy, PyTorch) are traced; every other argument must be hashable and is part of
    the signature a graph is compiled and cached for. ``device`` defaults to the first array's. Called with
    Dask arrays, it returns Dask arrays, the graph run on each block (``opendml.dask.compiled``, docs/dask.md).

    >>> import numpy as np, opendml
    >>> @opendml.compile
    ... def relu6(x):
    ...     return opendml.clip(x, 0.0, 6.0)
    >>> relu6(np.array([-1.0, 3.0, 9.0], np.float32))
    array([0., 3., 6.], dtype=float32)
    """
    if fn is None:
        return functools.partial(compile, device=device)
    return CompiledFunction(fn, device)


@dataclass
class _Traced:
    """A graph compiled for one signature: where its inputs come from and what its outputs are."""

    compiled: CompiledGraph
    used: frozenset[int]  # graph inputs some edge reads (the others are bound as None)
    outputs: list[tuple[tuple[int, ...], tuple[int, ...], np.dtype]]  # shape, sizes, dtype
    single: bool
    held: dict[int, BufferBinding]  # graph inputs bound to the values the function holds


class CompiledFunction:
    """``fn`` compiled per signature; call it like ``fn``.

    It pickles by reference where it is a module's attribute (a decorated module-level function), else as
    ``fn`` (by reference where importable; a lambda or a nested function needs cloudpickle, which Dask uses
    for what pickle cannot take) and ``device``, never as its compiled graphs: a process receiving it traces
    and compiles again, once however many copies it receives.
    """

    def __init__(self, fn: Callable[..., Any], device: Device | str | None) -> None:
        self.fn = fn
        self.device = device
        self._cache: dict[Any, _Traced] = {}
        self._lock = threading.Lock()  # one trace and compile per signature, whichever thread comes first
        self._token: str | None = None  # the name its pickles carry (opendml.shared), given when first pickled
        functools.update_wrapper(self, fn)

    def __reduce__(self) -> str | tuple[Any, ...]:
        if _importable(self):  # pickle saves a reference to the module's attribute, as for a function
            return str(self.__qualname__)  # type: ignore[attr-defined]
        if self._token is None:
            self._token = new_token()
        _rebuilt.remember(self._token, self)  # in this process it unpickles to itself
        return _recompiled_function, (self._token, self.fn, self.device)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if any_dask(*args, *kwargs.values()):
            return front_ends.load(front_ends.DASK).compiled(self, args, kwargs)
        named = [(f"argument {k}", a) for k, a in enumerate(args)] + [(f"argument {n!r}", a) for n, a in kwargs.items()]
        first = next((a for _, a in named if _is_array(a)), None)
        device = fn_api._resolve_device(self.device, first, OWNER)
        arrays = [fn_api._as_array(device, a, OWNER, name) if _is_array(a) else None for name, a in named]
        key = (device, len(args), tuple(kwargs), tuple(
            _array_key(a, arr) if arr is not None else _value_key(name, a) for (name, a), arr in zip(named, arrays)))
        traced = self._cache.get(key)
        if traced is None:
            with self._lock:
                traced = self._cache.get(key)
                if traced is None:
                    traced = self._cache[key] = self._trace(device, args, kwargs, arrays)
        return _execute(device, traced, [a for a in arrays if a is not None], first)

    def _trace(self, device: Device, args: tuple[Any, ...], kwargs: dict[str, Any], arrays: list[Any]) -> _Traced:
        results, single = self.build(device, args, kwargs, arrays)
        graph = results[0].expr.graph
        assert isinstance(graph, _TracedGraph)
        compiled = graph.compile([r.expr for r in results])
        used = frozenset(e.graph_input_index for e in compiled.graph_desc.input_edges)
        outputs = [(r.shape, tuple(r.expr.desc.sizes), r.dtype) for r in results]
        held = {index: _held_binding(device, values) for index, values in graph.held if index in used}
        return _Traced(compiled, used, outputs, single, held)

    def build(self, device: Device, args: tuple[Any, ...], kwargs: dict[str, Any], arrays: list[Any]
              ) -> tuple[list[Tracer], bool]:
        """The function traced into a Graph on ``device`` (not compiled): its results, and whether it returned
        one array rather than a tuple. ``arrays``: each argument (positional, then keyword) as an array, or
        None where it is passed as it is."""
        graph = _TracedGraph(device, sum(a is not None for a in arrays))
        index = 0
        values = list(args) + list(kwargs.values())
        for k, array in enumerate(arrays):
            if array is None:
                continue
            if array.size == 0:
                raise invalid(OWNER, f"argument {k}", "must have at least one element", array.shape)
            desc = fn_api._place_input(device, _at_least_1d(array)).desc
            values[k] = Tracer(graph.input(index, desc), tuple(array.shape), array.dtype)
            index += 1
        result = self.fn(*values[:len(args)], **dict(zip(kwargs, values[len(args):])))
        single = isinstance(result, Tracer)
        results = [result] if single else result
        if not isinstance(results, (tuple, list)) or not results or not all(isinstance(r, Tracer) for r in results):
            raise invalid(OWNER, "result", "must be an array computed by the functional API, or a tuple of them",
                          repr(result))
        return list(results), single


# Compiled functions unpickled in this process (and those pickled from it), by the name their pickles carry.
_rebuilt: Registry[CompiledFunction] = Registry(limit=256)


def _recompiled_function(token: str, fn: Callable[..., Any], device: Device | str | None) -> CompiledFunction:
    def make() -> CompiledFunction:
        compiled = CompiledFunction(fn, device)
        compiled._token = token  # so that a copy pickled again here (a scheduler relaying it) keeps the name
        return compiled

    return _rebuilt.get(token, make)


def _importable(compiled: CompiledFunction) -> bool:
    """Whether ``compiled`` is what its module's attribute of its qualified name holds, in a module another
    process can import: a script's ``__main__`` is not one (a Dask worker's ``__main__`` is another)."""
    name = getattr(compiled, "__module__", None) or "__main__"
    module = None if name == "__main__" else sys.modules.get(name)
    target: Any = module
    for part in getattr(compiled, "__qualname__", "<locals>").split("."):
        target = getattr(target, part, None)
    return target is compiled


def _is_array(value: Any) -> bool:
    if isinstance(value, (np.generic, Tracer)):
        return False
    return any(hasattr(value, a) for a in ("__array_interface__", "__cuda_array_interface__", "__dlpack__"))


def _array_key(value: Any, array: Any) -> Any:
    """What the compiled graph depends on: the layout, and how the result is handed back (the kind)."""
    return (type(value), array.dtype, tuple(array.shape), tuple(array.strides), fn_api._plain(array))


def _value_key(name: str, value: Any) -> Any:
    """A non-array argument by exact value (-0.0 is not 0.0, 1 is not 1.0 or True); it must be hashable."""
    if isinstance(value, tuple):
        return (tuple, tuple(_value_key(f"{name}[{k}]", v) for k, v in enumerate(value)))
    try:
        hash(value)
    except TypeError:
        raise invalid(OWNER, name, "must be an array or a hashable value (a number, a string, a tuple, None)",
                      type(value).__name__) from None
    return (type(value), repr(value), value)


def _at_least_1d(array: Any) -> Any:
    """A 0-d array as one element of 1 dimension (a view, as the functional API reads it)."""
    return fn_api._view_as(array, array.shape or (1,))


def _held_binding(device: Device, values: np.ndarray) -> BufferBinding:
    """A buffer holding ``values`` for the graph input that reads them (16-byte rounded, as bound ranges are)."""
    raw = np.zeros(-(-max(values.nbytes, 4) // 16) * 16, np.uint8)
    raw[:values.nbytes] = values.reshape(-1).view(np.uint8)
    return BufferBinding(device.buffer_from(raw))


def _execute(device: Device, traced: _Traced, arrays: list[Any], like: Any) -> Any:
    placed = [fn_api._place_input(device, _at_least_1d(a)) if k in traced.used else None for k, a in enumerate(arrays)]
    results = [fn_api._padded_empty(device, sizes, dtype) for _, sizes, dtype in traced.outputs]
    bindings = [fn_api.BufferBinding(device.backend.wrap(device, raw)) for _, raw in results]
    inputs: list[BufferBinding | None] = [None if p is None else p.binding for p in placed]
    inputs += [traced.held.get(k) for k in range(len(inputs), traced.compiled.graph_desc.input_count)]
    traced.compiled.execute(inputs, bindings)
    backend = device.backend
    arrays_out = tuple(backend.to_caller(array.reshape(shape), like)
                       for (array, _), (shape, _, _) in zip(results, traced.outputs))
    return arrays_out[0] if traced.single else arrays_out
