"""Functions made by ``opendml.compile``, called with Dask arrays: the compiled (fused) graph runs on each block.

The function is traced once on the client, on stand-ins of the first blocks' shapes (no data, nothing
compiled), to learn what each result is. An element-wise result is the function's result block by block. A
result of argmin or argmax (nothing else computed from it, one reduction in its chain) is merged across blocks
as ``opendml.argmin`` on a Dask array merges it (``reductions.merged``): each block gives a partial from ONE
run of the compiled function (the winners' indices in the block, turned into indices in the whole array) and
the values the reduction compared at those indices. Those values are not in the graph's outputs (the fused
kernel never stores them); they are found by running the function again on the winning elements alone,
gathered from each argument, with argmin and argmax returning their input
(``functional.reductions.reduced_inputs``): one element per output, each computed by the operators the graph
fuses, whose bits the fused kernel gives (fused equals unfused).

Arguments: Dask arrays and arrays of one or more dimensions (which become Dask arrays chunked like the
others) are read block by block, broadcast NumPy-style; everything else goes to every call as it is.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import dask
import dask.array as da
import numpy as np
from dask.array.utils import meta_from_array

from ..dtypes import from_numpy
from ..enums import AxisDirection, NanPolicy
from ..errors import invalid
from ..functional.devices import _resolve_device
from ..functional.reductions import ARG_REDUCTIONS, reduced_inputs
from ..graphs.desc import OperatorNode
from ..kernels.spec import ReductionKind
from ..ops.arg_reduction import ArgReductionParams, check_index_capacity
from ..ops.reduce import ReduceParams
from ..ops.softmax import NormalizationParams
from ..ops.top_k import TopKParams
from . import align, blocks
from .checks import known_shape, validation_device
from .detect import is_dask_array
from .merge import Partial
from .reductions import merged

if TYPE_CHECKING:
    from ..tracing import CompiledFunction, Tracer

OWNER = "opendml.compile"


@dataclass(frozen=True)
class Reduction:
    """A result that is an argmin or argmax: how its partials merge, and the type of the values compared."""

    kind: ReductionKind
    axes: tuple[int, ...]
    direction: AxisDirection
    policy: NanPolicy
    index_type: np.dtype
    value_type: np.dtype


@dataclass(frozen=True)
class Call:
    """How each block calls the function: the arguments' ``layout`` (blocks.BLOCK, or a ``(value,)`` passed as
    it is), how many of them are positional, the keyword names of the rest, each result's reduction (None for
    an element-wise result) and type."""

    function: CompiledFunction
    layout: tuple[Any, ...]
    positional: int
    keywords: tuple[str, ...]
    reductions: tuple[Reduction | None, ...]
    dtypes: tuple[np.dtype, ...]  # each result's
    single: bool

    def arguments(self, values: list[Any]) -> tuple[list[Any], dict[str, Any]]:
        return values[:self.positional], dict(zip(self.keywords, values[self.positional:]))


def call(function: CompiledFunction, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``function(*args, **kwargs)`` with some Dask arguments: Dask arrays of its results, lazily."""
    values = list(args) + list(kwargs.values())
    arrays = _block_arrays(values)
    if not arrays:
        raise invalid(OWNER, "arguments", "must include an array of one or more dimensions along with the Dask "
                      "ones (a 0-d Dask array is not read by blocks)", "only 0-d arrays and values")
    rank = max(a.ndim for a in arrays.values())
    full = _broadcast(function, values, arrays, len(args), tuple(kwargs))
    # One chunking for every argument read by blocks (align.py: the common refinement of the Dask arguments'
    # chunks, NumPy's broadcasting), so that each task gets every argument's blocks at the same place.
    chunks = align.result_chunks(list(arrays.values()), full)
    read = [a for a in arrays.values() if is_dask_array(a)]
    whole = {k: a for k, a in arrays.items() if not is_dask_array(a) and blocks.goes_whole(a, read)}
    for k, array in arrays.items():
        if k not in whole:
            arrays[k] = align.lined_up(array, chunks)
    # Traced on the first block that holds elements (the shapes the tasks see; an empty block is not run), or,
    # where none does, on the whole arguments: refused as on one machine, with the same message.
    firsts = {k: align.first_block(tuple(a.shape), chunks) if math.prod(full) else tuple(a.shape)
              for k, a in arrays.items()}
    results, single = _probe(function, values, arrays, firsts, len(args), tuple(kwargs))
    for result in results:
        _check_rows_whole(result, chunks)
    reductions = tuple(_reduction(result, rank) for result in results)
    for reduction in reductions:
        if reduction is not None:
            schema, _ = ARG_REDUCTIONS[reduction.kind]
            count = math.prod(full[a] for a in reduction.axes)
            check_index_capacity(schema.name, from_numpy(reduction.index_type), count)
    layout = tuple(blocks.WHOLE if k in whole else blocks.BLOCK if k in arrays else (v,) for k, v in enumerate(values))
    plan = Call(function, layout, len(args), tuple(kwargs), reductions, tuple(np.dtype(r.dtype) for r in results),
                single)
    like = next(a for a in arrays.values() if is_dask_array(a))._meta
    # A small array argument goes to the tasks as one object (blocks.WHOLE_OPERAND_BYTES).
    passed = [dask.delayed(a, pure=True) if k in whole else a for k, a in arrays.items()]
    tuples = da.map_blocks(_Block(plan, full), *passed, chunks=chunks, dtype=object,
                           meta=np.empty((0,) * rank, dtype=object), token="opendml-compiled")
    outputs = [_output(tuples, k, result, reduction, like)
               for k, (result, reduction) in enumerate(zip(results, reductions))]
    return outputs[0] if single else tuple(outputs)


def _broadcast(function: CompiledFunction, values: list[Any], arrays: dict[int, Any], positional: int,
               keywords: tuple[str, ...]) -> tuple[int, ...]:
    """The broadcast shape of the arguments read block by block (NumPy's rule), which must be known. Shapes
    that do not broadcast are refused as on one machine: the function traced on stand-ins of the whole
    arguments gives the usual message where an operator combines them, and this one otherwise."""
    shapes = {k: known_shape(OWNER, f"argument {k}", a) for k, a in arrays.items()}
    try:
        return tuple(int(n) for n in np.broadcast_shapes(*shapes.values()))
    except ValueError:
        _probe(function, values, arrays, shapes, positional, keywords)
        raise invalid(OWNER, "arguments", "must have shapes that broadcast together (read block by block)",
                      ", ".join(f"{k}: {s}" for k, s in shapes.items())) from None


def _block_arrays(values: list[Any]) -> dict[int, Any]:
    """The arguments read block by block, by position: Dask arrays and other arrays of one or more dimensions."""
    found = {}
    for k, value in enumerate(values):
        if is_dask_array(value) or (hasattr(value, "shape") and hasattr(value, "dtype") and len(value.shape) > 0):
            found[k] = value
    return found


def _probe(function: CompiledFunction, values: list[Any], arrays: dict[int, Any], firsts: dict[int, tuple[int, ...]],
           positional: int, keywords: tuple[str, ...]) -> tuple[list[Tracer], bool]:
    """The function traced on stand-ins of the first blocks (``firsts``: zero strides, no memory), on the device
    the rules are checked on (a CUDA device's rules are the CPU's: the client needs no GPU)."""
    device = _resolve_device(validation_device(function.device), None, OWNER)
    stand_ins = list(values)
    for k, array in arrays.items():
        stand_ins[k] = np.broadcast_to(np.zeros((), np.dtype(array.dtype)), firsts[k])
    traced = [stand_ins[k] if k in arrays else None for k in range(len(values))]
    return function.build(device, tuple(stand_ins[:positional]), dict(zip(keywords, stand_ins[positional:])),
                          traced)


def _reduction(result: Tracer, rank: int) -> Reduction | None:
    """What ``result`` is: element-wise (None), or an argmin or argmax its Dask array merges across blocks."""
    graph = result.expr.graph
    nodes = graph.needed(result.expr)
    reducing = [n for n in nodes if isinstance(n, OperatorNode) and isinstance(n.operator.params, ArgReductionParams)]
    if len(result.shape) != rank:
        raise invalid(OWNER, "result shape", f"must have the rank {rank} of the array arguments on Dask arrays "
                      "(every result is computed block by block)", result.shape)
    if not reducing:
        return None
    last = nodes[-1] if result.expr.node is not None else None
    if len(reducing) > 1 or reducing[0] is not last:
        raise invalid(OWNER, "result", "must be element-wise or one argmin or argmax of an element-wise chain on "
                      "Dask arrays (nothing computed from a reduction, one reduction per result)",
                      f"{len(reducing)} reductions")
    params: ArgReductionParams = reducing[0].operator.params  # type: ignore[assignment]
    value_type = reducing[0].operator.tensors["InputTensor"].data_type.numpy  # type: ignore[union-attr]
    return Reduction(params.kind, params.axes, params.axis_direction, params.nan_policy,
                     np.dtype(params.output_type.numpy), np.dtype(value_type))


def _check_rows_whole(result: Tracer, chunks: tuple[tuple[int, ...], ...]) -> None:
    """Refuse what a block cannot compute alone: REDUCE and TOP_K (their results are not the blocks' shapes:
    ``opendml.reduce`` and ``opendml.top_k`` of the Dask results merge across chunks), and SOFTMAX, LOG_SOFTMAX
    or HARDMAX over an axis of several chunks, or in an argmin's chain (whose values are found again on the
    winning elements alone). A normalization over axes of one chunk each sees whole rows in every block."""
    nodes = [n for n in result.expr.graph.needed(result.expr) if isinstance(n, OperatorNode)]
    reducing = any(isinstance(n.operator.params, ArgReductionParams) for n in nodes)
    for node in nodes:
        params, name = node.operator.params, node.operator.definition.schema.name
        if isinstance(params, (ReduceParams, TopKParams)):
            python = "opendml.reduce" if isinstance(params, ReduceParams) else "opendml.top_k"
            raise invalid(OWNER, "result", f"must not be computed from {name} on Dask arrays in a compiled "
                          f"function (call {python} on the Dask arrays outside it: it merges across chunks)", name)
        if not isinstance(params, NormalizationParams):
            continue
        shift = len(chunks) - node.operator.tensors["InputTensor"].dimension_count  # type: ignore[union-attr]
        split = [a + shift for a in params.axes if len(chunks[a + shift]) > 1]
        python = f"opendml.{params.function.lower()}"
        if reducing:
            raise invalid(OWNER, "result", f"must not use {name} in an argmin's or argmax's chain on Dask arrays "
                          f"in a compiled function (call {python} on the Dask arrays outside it)", name)
        if split:
            raise invalid(OWNER, "result", f"must not use {name} over axes of several chunks on Dask arrays in a "
                          f"compiled function (rechunk them to one chunk, or call {python} on the Dask arrays "
                          "outside it: it merges across chunks)", f"axes {split}")


def _output(tuples: Any, k: int, result: Tracer, reduction: Reduction | None, like: Any) -> Any:
    """Result ``k`` as a Dask array: the blocks' own (element-wise), or their partials merged."""
    pick = operator.itemgetter(k)
    if reduction is None:
        return tuples.map_blocks(pick, dtype=result.dtype, meta=meta_from_array(like, ndim=tuples.ndim,
                                                                                dtype=result.dtype))
    chunks = tuple((1,) * len(c) if a in reduction.axes else c for a, c in enumerate(tuples.chunks))
    partials = tuples.map_blocks(pick, chunks=chunks, dtype=np.int64,
                                 meta=meta_from_array(like, ndim=tuples.ndim, dtype=np.int64))
    indices, _ = merged(partials, reduction.kind, reduction.policy, reduction.direction, reduction.axes,
                        reduction.index_type, reduction.value_type, like, tuples.chunks)
    return indices


@dataclass(frozen=True)
class _Block:
    """The task of one block: the compiled function on it, each reduction's result made a partial."""

    plan: Call
    full: tuple[int, ...]  # the whole arrays' broadcast shape

    def __call__(self, *arrays: Any, block_info: Any = None) -> tuple[Any, ...]:
        plan = self.plan
        location = block_info[None]["array-location"]
        values = blocks.arguments(plan.layout, arrays, block_info)
        shape = tuple(np.broadcast_shapes(*(v.shape for v, entry in zip(values, plan.layout)
                                            if entry in (blocks.BLOCK, blocks.WHOLE))))
        if math.prod(shape) == 0:  # a block of a zero-length chunk (valid in Dask): nothing to run
            block = next(v for v, entry in zip(values, plan.layout) if entry == blocks.BLOCK)  # NumPy or CuPy
            return _empty_results(plan, block, shape)
        positional, keywords = plan.arguments(values)
        results = plan.function(*positional, **keywords)
        results = (results,) if plan.single else tuple(results)
        parts = []
        for k, (result, reduction) in enumerate(zip(results, plan.reductions)):
            if reduction is None:
                parts.append(result)
                continue
            local = result.astype(np.int64)
            compared = _compared_values(plan, values, k, local, reduction.axes, shape)
            starts = tuple(location[a][0] for a in reduction.axes)
            sizes = tuple(self.full[a] for a in reduction.axes)
            parts.append(Partial.made(compared, blocks.global_indices(local, shape, reduction.axes, starts, sizes)))
        return tuple(parts)


def _empty_results(plan: Call, like: Any, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """The results of an empty block (a compiled function refuses empty arguments, as on one machine): empty
    arrays of the blocks' kind (``like``), and partials of no candidate for the reductions (merge.Partial.none)."""
    parts: list[Any] = []
    for dtype, reduction in zip(plan.dtypes, plan.reductions):
        if reduction is None:
            parts.append(np.zeros(shape, dtype, like=like))
        else:
            kept = tuple(1 if a in reduction.axes else n for a, n in enumerate(shape))
            parts.append(Partial.none(like, kept, reduction.value_type))
    return tuple(parts)


def _compared_values(plan: Call, values: list[Any], k: int, local: Any, axes: tuple[int, ...],
                     shape: tuple[int, ...]) -> Any:
    """The values result ``k``'s reduction compared at its winners ``local`` (indices flattened over the
    block's ``axes``): the function run on the winning elements alone, reductions returning their input."""
    where = _winners(local, axes, shape)
    gathered = [np.broadcast_to(v, shape)[where] if entry in (blocks.BLOCK, blocks.WHOLE) else v
                for v, entry in zip(values, plan.layout)]
    positional, keywords = plan.arguments(gathered)
    token = reduced_inputs.set(True)
    try:
        results = plan.function.fn(*positional, **keywords)
    finally:
        reduced_inputs.reset(token)
    compared = results if plan.single else results[k]
    if tuple(compared.shape) != tuple(local.shape):  # an array the function holds, broadcast along a reduced axis
        raise invalid(OWNER, "reduction input", "must be computed from the function's arguments alone on Dask "
                      "arrays where it varies along the reduced axes (pass such arrays as arguments: they are read "
                      "block by block)", f"values of shape {tuple(compared.shape)} at the winners of shape "
                      f"{tuple(local.shape)}")
    return compared


def _winners(local: Any, axes: tuple[int, ...], shape: tuple[int, ...]) -> tuple[Any, ...]:
    """An index (one integer array per dimension, of the result's shape) of the elements ``local`` names:
    the kept dimensions' own positions, the reduced ones unravelled from the flattened index."""
    rank = len(shape)
    where: list[Any] = [None] * rank
    remaining = local
    for axis in reversed(axes):  # the last reduced axis varies fastest
        where[axis] = remaining % shape[axis]
        remaining = remaining // shape[axis]
    for axis in range(rank):
        if where[axis] is None:
            where[axis] = np.arange(shape[axis], like=local).reshape([-1 if d == axis else 1 for d in range(rank)])
    return tuple(where)
