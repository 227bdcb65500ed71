"""The declared operators' functions (clip, threshold, relu, ...), dequantize_linear and quantize_linear on Dask
arrays: one functional call per block.

On the client, the call itself is made once on empty stand-ins of the operands' types (every rule checked,
the output type found, no kernel compiled or run), and the operands' shapes are broadcast with the usual
messages. Each task then calls the same function on one block of each operand, so the bits are those of
single-machine opendml. The arrays read by blocks are lined up with the result's chunks (``align``: the
common refinement of the Dask arrays' chunks, the input's where its operands are chunked alike or not Dask
arrays; NumPy and CuPy operands cut into them; broadcast dimensions in one chunk); a small NumPy operand goes
to the tasks whole instead, and numbers and 0-d arrays as they are. Checks of an operand's values (a zero
point exactly representable in its type) run where the values are, at compute time.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import dask
import dask.array as da
import numpy as np
from dask.array.utils import meta_from_array

from ..dtypes import from_numpy
from ..functional.conversion import cast as _cast
from ..functional.declared import FUNCTIONS, is_number
from ..functional.operands import _broadcast
from ..functional.quantization import _operands_shape
from ..functional.quantization import dequantize_linear as _dequantize_linear
from ..functional.quantization import quantize_linear as _quantize_linear
from ..ops.definition import OperatorDefinition
from ..ops.dequantize_linear import DEQUANTIZE_LINEAR_SCHEMA
from ..ops.elementwise import exact_scalar
from ..ops.quantize_linear import QUANTIZE_LINEAR_SCHEMA
from . import align, blocks
from .checks import known_shape, refuse_out, validation_device
from .detect import is_dask_array

_FIELDS = ("InputTensor", "ScaleTensor", "ZeroPointTensor")

ShapeRule = Callable[[Sequence[tuple[int, ...] | None]], tuple[int, ...]]


def declared(op: OperatorDefinition, tensors: tuple[Any, ...], values: tuple[Any, ...], out: Any, device: Any) -> Any:
    """Every declared operator's function (``opendml.functional.declared``): one call per block; the operands of
    an operator of several tensors (ADD) broadcast as NumPy's, a number passed to every block as it is."""
    assert op.api is not None
    kwargs = {f.python: v for f, v in zip(op.api.keywords, values)}
    if len(tensors) == 1:
        return _blockwise(FUNCTIONS[op.schema.name], f"opendml.{op.api.python}", list(tensors), kwargs, out, device)
    rule = functools.partial(_broadcast_shape, op.schema.name, op.api.tensors)
    return _blockwise(FUNCTIONS[op.schema.name], f"opendml.{op.api.python}", _typed_numbers(op, tensors), kwargs,
                      out, device, rule)


def _typed_numbers(op: OperatorDefinition, tensors: tuple[Any, ...]) -> list[Any]:
    """Numbers as 0-d NumPy arrays of the first array's type, as the functional API types them (the blocks
    are read from arrays: a number first would otherwise become a FLOAT64 array)."""
    assert op.api is not None
    first = op.api.typed  # the operands before it (IF's condition) have a type of their own
    typed = next((t for t in tensors[first:] if not is_number(t)), None)
    if typed is None:
        return list(tensors)
    data_type = from_numpy(np.dtype(typed.dtype))
    return [np.asarray(exact_scalar(t, data_type, op.schema.name, name)) if is_number(t) and k >= first else t
            for k, (t, name) in enumerate(zip(tensors, op.api.tensors))]


def _broadcast_shape(owner: str, names: Sequence[str], shapes: Sequence[tuple[int, ...] | None]) -> tuple[int, ...]:
    shape: tuple[int, ...] = ()
    for k, other in enumerate(shapes):
        assert other is not None  # every tensor is a required argument (a number: shape ())
        shape = other if k == 0 else _broadcast(owner, shape, " and ".join(names[:k]), other, names[k])
    return shape


def cast(x: Any, dtype: Any, out: Any, device: Any) -> Any:
    return _blockwise(_cast, "opendml.cast", [x], {"dtype": dtype}, out, device)


def dequantize_linear(x: Any, scale: Any, zero_point: Any, out: Any, device: Any) -> Any:
    rule = functools.partial(_quantization_shape, DEQUANTIZE_LINEAR_SCHEMA.name)
    return _blockwise(_dequantize_linear, "opendml.dequantize_linear", [x, scale, zero_point], {}, out, device,
                      rule)


def quantize_linear(x: Any, scale: Any, zero_point: Any, output_type: Any, out: Any, device: Any) -> Any:
    rule = functools.partial(_quantization_shape, QUANTIZE_LINEAR_SCHEMA.name)
    return _blockwise(_quantize_linear, "opendml.quantize_linear", [x, scale, zero_point],
                      {"output_type": output_type}, out, device, rule)


def _quantization_shape(owner: str, shapes: Sequence[tuple[int, ...] | None]) -> tuple[int, ...]:
    x, scale, zero_point = shapes
    assert x is not None and scale is not None  # both are required arguments (a number: shape ())
    return _operands_shape(owner, x, scale, zero_point)


def _blockwise(function: Callable[..., Any], owner: str, operands: list[Any], kwargs: dict[str, Any], out: Any,
               device: Any, shape_rule: ShapeRule | None = None) -> Any:
    """``function`` over the blocks of the operands (the first is the input), as a new Dask array."""
    refuse_out(owner, out)
    if not (is_dask_array(operands[0]) or hasattr(operands[0], "shape")):
        operands[0] = np.asarray(operands[0])  # a list or a number as the input, beside a Dask operand
    arrays = [operands[0]] + [_array_operand(a) for a in operands[1:]]  # the input is always read by blocks
    stand_ins = [_stand_in(a, o, first=k == 0) for k, (a, o) in enumerate(zip(arrays, operands))]
    # The call on empty stand-ins: every rule of the call is checked and its output type found, nothing runs.
    empty = function(*stand_ins, **kwargs, device=validation_device(device))
    rank = arrays[0].ndim
    chunks = None  # an input alone keeps its chunks (of unknown sizes, maybe, as after Dask's boolean indexing)
    present = [a for a in arrays if a is not None]
    if shape_rule is not None and len(present) > 1:
        # Operands broadcast against the input: their shapes must be known, and every array read by blocks is
        # lined up with the result's chunks (align.py: Dask would pair blocks by their numbers alone).
        shapes = [known_shape(owner, field, a) if a is not None else (None if o is None else ())
                  for a, o, field in zip(arrays, operands, _FIELDS)]
        shape = shape_rule(shapes)
        rank = len(shape)
        chunks = align.result_chunks(present, shape)
    first = operands[0]
    # The meta is made from an empty view of the input's kind of array (NumPy, CuPy), never from values: a
    # NumPy input's, or a 0-d Dask input's meta (a value, not empty), would be cast to the result's type.
    like = first._meta if is_dask_array(first) else first
    meta = meta_from_array(like[None][:0], ndim=rank, dtype=empty.dtype)
    layout: list[Any] = []
    args: list[Any] = []
    read = [a for k, a in enumerate(arrays) if a is not None and (k == 0 or is_dask_array(a))]
    for k, (array, operand) in enumerate(zip(arrays, operands)):
        if array is None:
            layout.append((operand,))
        elif k > 0 and not is_dask_array(array) and blocks.goes_whole(array, read):
            layout.append(blocks.WHOLE)  # one graph key, sliced on the worker (blocks.WHOLE_OPERAND_BYTES)
            args.append(dask.delayed(array, pure=True))
        else:
            layout.append(blocks.BLOCK)
            args.append(array if chunks is None else align.lined_up(array, chunks))
    task = functools.partial(blocks.elementwise_block, function, tuple(layout), {**kwargs, "device": device})
    token = owner.replace(".", "-").replace("_", "-")
    # The arrays are lined up already: Dask is told the result's chunks, and aligns nothing itself.
    if blocks.WHOLE not in layout:
        indexed = [x for a in args for x in (a, tuple(range(rank - a.ndim, rank)))]
        return da.blockwise(task, tuple(range(rank)), *indexed, dtype=meta.dtype, meta=meta, align_arrays=False,
                            adjust_chunks=None if chunks is None else dict(enumerate(chunks)), token=token)
    # (map_blocks' token= is deprecated under query planning)
    return da.map_blocks(task, *args, chunks=chunks, dtype=meta.dtype, meta=meta)


def _array_operand(value: Any) -> Any:
    """An operand read block by block (a Dask array, or an array of one or more dimensions), else None: it
    goes to every task as it is (None, a number, a 0-d array)."""
    if is_dask_array(value):
        return value
    if value is None or not hasattr(value, "shape") or len(value.shape) == 0:
        return None
    return value


def _stand_in(array: Any, operand: Any, first: bool) -> Any:
    """An empty array of the operand's type (NumPy, whatever the blocks' kind: the client checks types and
    rules, not data); a 0-d Dask array stands as a zero. The input's always has a dimension of size 0, so that
    the result is empty and nothing runs."""
    if array is None:
        return operand
    dtype = np.dtype(array.dtype)
    if array.ndim == 0:
        return np.empty((0,), dtype) if first else np.zeros((), dtype)
    return np.empty((0,) * array.ndim, dtype)
