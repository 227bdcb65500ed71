"""One chunking for the arrays a call reads block by block, broadcast NumPy-style (dimensions aligned from the
last), so that each task gets the blocks of every array at the same place of the result.

Dask's ``map_blocks`` pairs blocks by their numbers alone (an array of one chunk along a dimension is taken as
broadcast along it, whatever its size, and the chunks of the array of most blocks are the result's). Here the
result's chunks are chosen once, as Dask's ``blockwise`` chooses them (``result_chunks``: the common refinement
of the chunks of the Dask arrays that span each dimension), every array is made to have them along each
dimension it spans and one chunk of size 1 along each it is broadcast (``lined_up``), and the result's chunks
are given to Dask, which then aligns nothing itself.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import dask.array as da
import numpy as np

from .detect import is_dask_array

Chunks = tuple[tuple[int, ...], ...]


def result_chunks(arrays: Sequence[Any], shape: tuple[int, ...]) -> Chunks:
    """The chunks of a result of ``shape`` broadcast from ``arrays`` (Dask or NumPy, of known shapes): along
    each dimension, the common refinement of the chunks of the Dask arrays that span it (their size is the
    result's): every boundary of each, so that no block is moved, only cut. An array alone, or arrays chunked
    alike, keep their chunks (zero-length ones, valid in Dask, included); one chunk where only NumPy arrays
    span a dimension; (1,) along a dimension of size 1 (a chunking such as (1, 0) is not a broadcast one for
    Dask)."""
    rank = len(shape)
    chunks: list[tuple[int, ...]] = []
    for position, size in enumerate(shape):
        found = set()
        for array in arrays:
            axis = position - (rank - array.ndim)
            if is_dask_array(array) and axis >= 0 and array.shape[axis] == size:
                found.add(tuple(int(n) for n in array.chunks[axis]))
        chunks.append((size,) if size == 1 or not found else _refined(found))
    return tuple(chunks)


def _refined(chunkings: set[tuple[int, ...]]) -> tuple[int, ...]:
    """The common refinement of chunkings of one length: each alone, or every boundary of each."""
    if len(chunkings) == 1:
        return next(iter(chunkings))
    edges = sorted({edge for sizes in chunkings for edge in itertools.accumulate(sizes, initial=0)})
    return tuple(b - a for a, b in itertools.pairwise(edges)) or (0,)  # a length of 0: one empty chunk


def own_chunks(array_shape: tuple[int, ...], chunks: Chunks) -> Chunks:
    """An array's chunks under the result's ``chunks``: the result's along each dimension it spans, one chunk
    of size 1 along each it is broadcast (Dask broadcasts an array of one block along a dimension)."""
    shift = len(chunks) - len(array_shape)
    return tuple((1,) if n == 1 else chunks[shift + k] for k, n in enumerate(array_shape))


def lined_up(array: Any, chunks: Chunks) -> Any:
    """``array`` (Dask or NumPy) as a Dask array of ``own_chunks``: a Dask array chunked otherwise is
    rechunked (its blocks cut), a NumPy array cut into them."""
    wanted = own_chunks(tuple(array.shape), chunks)
    if not is_dask_array(array):
        return da.from_array(array, chunks=wanted)
    if tuple(array.chunks) == wanted:
        return array
    if math.prod(array.shape) == 0:
        # Dask's rechunk returns an array of no elements as it is: a new one of its kind (NumPy, CuPy) then,
        # with nothing to read from the old one.
        return da.from_array(np.empty(array.shape, array.dtype, like=array._meta), chunks=wanted)
    return array.rechunk(wanted)


def first_block(array_shape: tuple[int, ...], chunks: Chunks) -> tuple[int, ...]:
    """The shape of an array's part of the first block of the result that holds elements (a zero-length
    chunk, valid in Dask, is skipped; a dimension of none has length 0): what a task sees first."""
    shift = len(chunks) - len(array_shape)
    return tuple(1 if n == 1 else next((c for c in chunks[shift + k] if c), 0) for k, n in enumerate(array_shape))
