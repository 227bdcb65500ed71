"""``opendml.reduce`` of a Dask array: the same bits whatever the chunking.

SUM, AVERAGE and L1 of FLOAT32 and FLOAT16: each block's exact sums as accumulator words
(``cpu_kernels.sum_partials.exact_partials``), added word by word across the blocks (integers: exactly, in any
order) and rounded once (``finish_partials``): the exact sum rounded once, as on one array. MAX and MIN (any
type) and SUM of integers (modulo 2**32): one REDUCE per block, then the same REDUCE over the blocks' results
(these are exact and associative, so the grouping never shows). SUM_SQUARE and L2 of FLOAT32 and FLOAT16: each
block's exact sums of squares as accumulator words (``square_partials``, units of 2**-298), added word by word
and rounded once, or their square root correctly rounded (``finish_square_partials``): one array's bits. ARGMIN
and ARGMAX: ``argmin``'s and ``argmax``'s Dask graphs with REDUCE's rules (INCREASING, NaN ignored). LOG_SUM:
SUM's words merged and finished by REDUCE's ``log_of_units`` (``ln`` of the exact sum, correctly rounded).
MULTIPLY of integers (modulo 2**width, associative): per block, then over the blocks' results. MULTIPLY of floats
and LOG_SUM_EXP depend on the whole row at once (the pairwise tree over the row's index; the terms
``EXP(x - m)`` of the row's largest element): the reduced axes are rechunked to one chunk, and each block's call
gives one array's bits.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ..backends.cpu_kernels.sum_partials import (
    DIGITS,
    SQUARE_WORDS,
    WORDS,
    exact_partials,
    finish_partials,
    finish_square_partials,
    square_partials,
)
from ..device import Device
from ..enums import ReduceFunction
from ..errors import invalid
from ..functional.devices import _resolve_device
from ..functional.reduce import reduce as reduce_array
from ..functional.reductions import _normalize_axes, argmax, argmin
from ..ops.reduce import INDEX_FUNCTIONS, REDUCE_SCHEMA, ReduceDesc, log_of_units
from ..tensor import TensorDesc
from .checks import known_shape, refuse_out, validation_device

F = ReduceFunction
OWNER = "opendml.reduce"
EXACT = frozenset({F.SUM, F.AVERAGE, F.L1})
SQUARES = frozenset({F.SUM_SQUARE, F.L2})
BY_BLOCK = frozenset({F.MAX, F.MIN})
WHOLE_ROWS = frozenset({F.MULTIPLY, F.LOG_SUM_EXP})


def reduce(function: ReduceFunction, x: Any, axes: object, keepdims: bool, output_type: object, out: Any,
           device: Any) -> Any:
    """``opendml.reduce(x, function, axes, keepdims=...)`` of a Dask array ``x``, lazily."""
    refuse_out(OWNER, out)
    name = REDUCE_SCHEMA.name
    shape = known_shape(name, "InputTensor", x)
    reduced = _normalize_axes(axes, max(len(shape), 1), name)
    if function in INDEX_FUNCTIONS:
        call = argmin if function is F.ARGMIN else argmax
        index_type: Any = "INT64" if output_type is None else output_type
        return call(x, reduced, output_type=index_type, device=device, keepdims=keepdims)
    _check_whole(device, function, shape or (1,), reduced, x.dtype)
    if x.ndim == 0:
        x = x[None]
    integer = np.dtype(x.dtype).kind in "iu"
    if function in EXACT | SQUARES | {F.LOG_SUM} and not integer:
        result = _exact(function, x, reduced)
    elif function in WHOLE_ROWS and not integer:
        # The result depends on the whole row at once (MULTIPLY's pairwise tree over the row's index, LOG_SUM_EXP's
        # float64 terms): each row is brought into one block, whose call gives one array's bits.
        whole = x.rechunk({a: -1 for a in reduced})
        result = whole.map_blocks(functools.partial(_per_block, function, reduced, device),
                                  chunks=tuple((1,) if k in reduced else c for k, c in enumerate(whole.chunks)),
                                  dtype=x.dtype)
    elif function in BY_BLOCK or (function in (F.SUM, F.MULTIPLY) and integer):
        per_block = x.map_blocks(functools.partial(_per_block, function, reduced, device),
                                 chunks=tuple((1,) * len(c) if k in reduced else c for k, c in enumerate(x.chunks)),
                                 dtype=x.dtype)
        whole = per_block.rechunk({a: -1 for a in reduced})
        result = whole.map_blocks(functools.partial(reduce_array, function=function, axes=reduced, device=device),
                                  chunks=tuple((1,) if k in reduced else c for k, c in enumerate(whole.chunks)),
                                  dtype=x.dtype)
    else:  # every function has a route above: REDUCE's own rules refused the rest on the client
        raise invalid(OWNER, "Function", "must be a DML_REDUCE_FUNCTION REDUCE takes for this type", function.name)
    if not keepdims:
        result = result.squeeze(axis=reduced)
    return result


def _per_block(function: ReduceFunction, reduced: tuple[int, ...], device: Any, block: Any) -> Any:
    """One REDUCE of a block, the reduced axes kept as 1; a block of no elements along them (a chunk of size 0,
    which Dask allows) gives the function's identity, which the REDUCE over the blocks' results passes over: the
    smallest value of the type for MAX (-inf), the largest for MIN, 0 for an integer SUM, 1 for an integer
    MULTIPLY."""
    if all(block.shape[a] for a in reduced):
        return reduce_array(block, function, reduced, device=device)
    shape = tuple(1 if k in reduced else n for k, n in enumerate(block.shape))
    dtype = np.dtype(block.dtype)
    low, high = (-np.inf, np.inf) if dtype.kind == "f" else (np.iinfo(dtype).min, np.iinfo(dtype).max)
    identity = {F.MAX: low, F.MIN: high, F.MULTIPLY: 1}.get(function, 0)
    return np.full(shape, identity, dtype, like=block)


def _check_whole(device: Any, function: ReduceFunction, shape: tuple[int, ...], reduced: tuple[int, ...],
                 dtype: Any) -> None:
    """REDUCE's rules on the whole array's description, on the client (the errors of one array's call)."""
    checker = validation_device(device)
    if not isinstance(checker, Device):
        checker = _resolve_device(checker, None, REDUCE_SCHEMA.name)
    out_shape = [1 if k in reduced else n for k, n in enumerate(shape)]
    pad = max(0, 4 - len(shape)) if checker.feature_level < checker.feature_level.FL_3_0 else 0
    x = TensorDesc(dtype, [1] * pad + list(shape))
    y = TensorDesc(dtype, [1] * pad + out_shape)
    checker.create_operator(ReduceDesc(function, x, y, [a + pad for a in reduced]))


def _exact(function: ReduceFunction, x: Any, reduced: tuple[int, ...]) -> Any:
    count = math.prod(x.shape[a] for a in reduced)
    words = SQUARE_WORDS if function in SQUARES else WORDS
    chunks = tuple((1,) * len(c) if k in reduced else c for k, c in enumerate(x.chunks)) + ((words,),)
    partials = x.map_blocks(functools.partial(_block_words, reduced, function), chunks=chunks,
                            new_axis=x.ndim, dtype=np.int64)
    merged = partials.rechunk({a: -1 for a in reduced})
    return merged.map_blocks(functools.partial(_finish_block, reduced, count, function, x.dtype),
                             chunks=tuple((1,) if k in reduced else c for k, c in enumerate(x.chunks)),
                             drop_axis=x.ndim, dtype=x.dtype)


def _block_words(reduced: tuple[int, ...], function: ReduceFunction, block: np.ndarray) -> np.ndarray:
    """A block's exact partial sums (of squares for SUM_SQUARE and L2): the accumulator words of each kept element,
    the reduced axes kept as 1."""
    kept = [k for k in range(block.ndim) if k not in reduced]
    n = math.prod(block.shape[a] for a in reduced)
    out_shape = tuple(1 if k in reduced else s for k, s in enumerate(block.shape))
    words = SQUARE_WORDS if function in SQUARES else WORDS
    if n == 0:
        return np.zeros((*out_shape, words), np.int64)
    rows = np.ascontiguousarray(np.transpose(block, kept + list(reduced)).reshape(-1, n))
    partial = square_partials(rows) if function in SQUARES else exact_partials(rows, function is F.L1)
    return partial.reshape(*out_shape, words)


def _finish_block(reduced: tuple[int, ...], count: int, function: ReduceFunction, dtype: Any,
                  words: np.ndarray) -> np.ndarray:
    """The blocks' words along the reduced axes added (exactly), then rounded once (L2: the root of the sum)."""
    total = words.sum(axis=reduced, keepdims=True, dtype=np.int64)
    if function in SQUARES:
        values = finish_square_partials(total.reshape(-1, SQUARE_WORDS), function is F.L2, np.dtype(dtype))
    elif function is F.LOG_SUM:
        values = _log_sums(total.reshape(-1, WORDS), np.dtype(dtype))
    else:
        values = finish_partials(total.reshape(-1, WORDS), count, function is F.AVERAGE, np.dtype(dtype))
    return values.reshape(total.shape[:-1])


def _log_sums(words: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """LOG_SUM of merged words: ``ln`` of the exact sum (the words' integer) correctly rounded to ``dtype`` by
    REDUCE's ``log_of_units``: one array's steps (docs/semantics.md 9c)."""
    values = np.empty(words.shape[0], np.float64)
    for r, w in enumerate(words.tolist()):
        nan, pinf, ninf = (flag != 0 for flag in w[DIGITS:DIGITS + 3])
        if nan or ninf:
            values[r] = math.nan  # a NaN, both infinities, or the log of -inf
        elif pinf:
            values[r] = math.inf
        else:
            values[r] = log_of_units(sum(d << (32 * k) for k, d in enumerate(w[:DIGITS])), 0.0, dtype)
    return values.astype(dtype)
