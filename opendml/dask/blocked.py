"""``opendml.dequantize`` and ``opendml.quantize`` on Dask arrays: one functional call per block.

A quantization tensor's value covers a block of ``x`` (``x.shape[k] // scale.shape[k]`` elements along axis k),
so ``x`` is rechunked until every chunk boundary is a block boundary (each boundary moved down to a multiple of
the block size; an axis with one quantization value is left as it is), and the scale and the zero point (NumPy
or Dask arrays, or numbers) are cut into the matching blocks: ``chunk // block`` values along a blocked axis,
the one value repeated for each chunk along the others. Each task then calls the functional API on one block of
each, so the bits are those of single-machine opendml whatever the chunking.

On the client the call is made once on stand-ins of one element a block (every rule of types, ranks and values
of the scale and zero point checked, the output type found; a few elements run on the CPU), and the blocks'
sizes are checked against the whole ``x``'s with DEQUANTIZE's and QUANTIZE's own message.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import dask.array as da
import numpy as np
from dask.array.utils import meta_from_array

from ..errors import invalid
from ..functional.blocked import dequantize as _dequantize
from ..functional.blocked import quantize as _quantize
from .checks import known_shape, validation_device
from .detect import is_dask_array


def dequantize(x: Any, scale: Any, zero_point: Any, data_type: Any, device: Any) -> Any:
    return _blocked(_dequantize, "DEQUANTIZE", x, scale, zero_point, {"data_type": data_type}, device)


def quantize(x: Any, scale: Any, zero_point: Any, output_type: Any, device: Any) -> Any:
    return _blocked(_quantize, "QUANTIZE", x, scale, zero_point, {"output_type": output_type}, device)


def _blocked(function: Callable[..., Any], owner: str, x: Any, scale: Any, zero_point: Any,
             kwargs: dict[str, Any], device: Any) -> Any:
    x = x if is_dask_array(x) else da.from_array(np.asarray(x), chunks=-1)
    shape = known_shape(owner, "x", x)
    params = [p for p in (scale, zero_point) if p is not None and np.ndim(p) > 0]
    values = params[0].shape if params and len(params[0].shape) == len(shape) else (1,) * len(shape)
    quantization = tuple(int(n) for n in values)
    # One element a block: the client's check of every rule but the blocks' sizes, and the output's type.
    stand_ins = [_stand_in(p) for p in (scale, zero_point)]
    empty = function(np.zeros(quantization, x.dtype), *stand_ins, **kwargs, device=validation_device(device))
    blocks = _blocks(owner, shape, quantization) if len(shape) else ()
    x = x.rechunk(tuple(_aligned(c, b) if b > 1 and q > 1 else c
                         for c, b, q in zip(x.chunks, blocks, quantization))) if blocks else x
    operands = [x] + [None if p is None or np.ndim(p) == 0 else _cut(p, x.chunks, blocks) for p in (scale,
                                                                                                     zero_point)]
    task = functools.partial(_block, function, scale if np.ndim(scale) == 0 else None,
                             zero_point if np.ndim(zero_point) == 0 else None, kwargs, device)
    index = tuple(range(len(shape)))
    arrays = [item for a in operands if a is not None for item in (a, index)]
    meta = meta_from_array(x._meta, ndim=len(shape), dtype=empty.dtype)
    present = tuple(a is not None for a in operands[1:])
    return da.blockwise(functools.partial(_call, task, present), index, *arrays, dtype=empty.dtype, meta=meta,
                        align_arrays=False, token=f"opendml-{owner.lower()}")


def _stand_in(param: Any) -> Any:
    """A quantization argument as the client's check takes it: an array of its type and shape (a Dask array's
    zeros, a NumPy array itself), a number as it is."""
    if param is None or np.ndim(param) == 0 or not is_dask_array(param):
        return param
    return np.zeros(tuple(int(n) for n in param.shape), param.dtype)


def _blocks(owner: str, shape: tuple[int, ...], quantization: tuple[int, ...]) -> tuple[int, ...]:
    """The block size along each axis, each quantization size dividing x's (DEQUANTIZE's own rule)."""
    for k, (n, q) in enumerate(zip(shape, quantization)):
        if n % q:
            raise invalid(owner, f"QuantizationTensors[0].Sizes[{k}]", f"must divide InputTensor.Sizes[{k}] ({n}): "
                          "one value for each block of equal size along the axis", q)
    return tuple(n // q for n, q in zip(shape, quantization))


def _aligned(chunks: tuple[int, ...], block: int) -> tuple[int, ...]:
    """Chunk sizes whose boundaries are multiples of ``block``: each boundary moved down to one (at least one
    block a chunk), the last at the axis's end."""
    ends: list[int] = []
    total = 0
    for size in chunks:
        total += size
        end = total // block * block
        if end > (ends[-1] if ends else 0):
            ends.append(end)
    if not ends or ends[-1] != total:
        ends.append(total)
    return tuple(b - a for a, b in zip([0, *ends[:-1]], ends))


def _cut(param: Any, chunks: tuple[tuple[int, ...], ...], blocks: tuple[int, ...]) -> Any:
    """A scale or zero point as a Dask array with a block for each of x's: ``chunk // block`` values along a
    blocked axis, the axis's one value repeated once a chunk where it has one."""
    array = param if is_dask_array(param) else da.from_array(np.asarray(param), chunks=-1)
    given = tuple(int(n) for n in array.shape)
    for k, (sizes, n) in enumerate(zip(chunks, given)):
        if n == 1 and len(sizes) > 1:
            array = da.concatenate([array] * len(sizes), axis=k)
    return array.rechunk(tuple((1,) * len(sizes) if n == 1 else tuple(c // b for c in sizes)
                               for sizes, b, n in zip(chunks, blocks, given)))


def _block(function: Callable[..., Any], scale: Any, zero_point: Any, kwargs: dict[str, Any], device: Any,
           x: Any, block_scale: Any, block_zero_point: Any) -> Any:
    return function(x, scale if block_scale is None else block_scale,
                    zero_point if block_zero_point is None else block_zero_point, **kwargs, device=device)


def _call(task: Callable[..., Any], present: tuple[bool, ...], x: Any, *params: Any) -> Any:
    """One task: the block of x and the blocks of the quantization arrays that are Dask arrays (None else)."""
    given = iter(params)
    return task(x, *(next(given) if p else None for p in present))
