"""NumPy arrays as callers make them: views of every layout over guard-filled memory the test owns.

Each array is a ``View``: a dtype, a shape, byte strides and an offset into an ``owner`` (a 1-D uint8
array). The owner's bytes are recorded before a call, so that afterwards every byte that is not an
element of ``out=`` can be checked unchanged, whatever the view's strides (negative, zero, not a
multiple of the item size as for a structured array's field) or alignment.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

from tests.elementwise_oracle import TYPES

from .values import guard_bytes, values_of

Index = tuple[int, ...]

# Layouts of a view. Outputs take only those whose elements never share a byte.
OUTPUT_LAYOUTS = ("C", "C", "F", "padded", "negative", "field", "unaligned")
INPUT_LAYOUTS = (*OUTPUT_LAYOUTS, "broadcast", "repeated")


@dataclass
class View:
    """An array over ``owner``'s bytes; ``readonly`` clears its writeable flag."""

    owner: np.ndarray
    dtype: np.dtype
    shape: tuple[int, ...]
    offset: int
    strides: tuple[int, ...]
    layout: str
    readonly: bool = False
    _array: np.ndarray | None = field(default=None, repr=False)

    def array(self) -> np.ndarray:
        """The view (the same object every time, as a caller holds one array)."""
        if self._array is None:
            a = np.ndarray(self.shape, self.dtype, buffer=self.owner, offset=self.offset, strides=self.strides)
            if self.readonly:
                a.flags.writeable = False
            self._array = a
        return self._array

    def twin(self) -> np.ndarray:
        """Another array object over exactly the same elements (an exact alias)."""
        return np.ndarray(self.shape, self.dtype, buffer=self.owner, offset=self.offset, strides=self.strides)

    def element_bytes(self) -> np.ndarray:
        """A mask of the owner's bytes that are elements of this view."""
        mask = np.zeros(self.owner.size, dtype=bool)
        size = self.dtype.itemsize
        for index in np.ndindex(*self.shape):
            start = self.offset + sum(i * s for i, s in zip(index, self.strides))
            mask[start:start + size] = True
        return mask

    def __repr__(self) -> str:
        flags = ", read-only" if self.readonly else ""
        return (f"View({self.dtype.str} {self.shape}, {self.layout}, byte strides {self.strides}, "
                f"offset {self.offset} in {self.owner.size} bytes{flags})")


def type_of(dtype: np.dtype) -> str | None:
    """The DataType name of a NumPy dtype (either byte order), or None."""
    for name, t in TYPES.items():
        if np.dtype(dtype).newbyteorder("=") == np.dtype(t.numpy).newbyteorder("="):
            return name
    return None


@st.composite
def shapes(draw: st.DrawFn, max_rank: int = 4, empty: bool = True) -> tuple[int, ...]:
    rank = draw(st.integers(0, max_rank))
    low = 0 if empty and draw(st.integers(0, 9)) == 0 else 1
    sizes, budget = [], 48
    for _ in range(rank):
        n = draw(st.integers(low, max(low, min(4, budget))))
        sizes.append(n)
        budget = max(1, budget // max(n, 1))
    return tuple(sizes)


def _strides(draw: st.DrawFn, shape: tuple[int, ...], itemsize: int, layout: str) -> tuple[int, ...]:
    """Byte strides of a layout. Every layout but broadcast and repeated keeps elements apart."""
    rank = len(shape)
    if layout == "broadcast":
        base = _strides(draw, shape, itemsize, "C")
        zero = draw(st.sets(st.sampled_from(range(rank)))) if rank else set()
        return tuple(0 if k in zero else s for k, s in enumerate(base))
    if layout == "repeated":  # elements read more than once: strides smaller than the inner reach
        return tuple(itemsize * draw(st.integers(0, 2)) for _ in shape)
    order = list(range(rank - 1, -1, -1))
    if layout == "F":
        order = list(range(rank))
    elif layout in ("padded", "negative", "field"):
        order = draw(st.permutations(range(rank))) if rank else []
    step = itemsize + (draw(st.integers(1, 3)) if layout == "field" else 0)
    strides = [0] * rank
    reach = 0
    for k in order:
        gap = itemsize * draw(st.integers(0, 2)) if layout in ("padded", "negative") else 0
        stride = max(step, reach + itemsize) + gap if reach else step + gap
        strides[k] = stride
        reach += (shape[k] - 1) * stride if shape[k] else 0
    if layout == "negative" and rank:
        flipped = draw(st.sets(st.sampled_from(range(rank)), min_size=1))
        strides = [-s if k in flipped else s for k, s in enumerate(strides)]
    return tuple(strides)


def make_view(draw: st.DrawFn, dtype: np.dtype, shape: tuple[int, ...], layout: str, seed: int) -> View:
    """A view of ``shape`` in its own guard-filled owner, placed with room before and after."""
    itemsize = dtype.itemsize
    strides = _strides(draw, shape, itemsize, layout)
    count = math.prod(shape)
    low = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0 and n) if count else 0
    high = sum((n - 1) * s for n, s in zip(shape, strides) if s > 0 and n) if count else 0
    lead = itemsize * draw(st.integers(0, 3)) + (draw(st.integers(1, itemsize)) if layout in ("unaligned", "field") else 0)
    offset = lead - low
    size = offset + high + itemsize + draw(st.integers(0, 12))
    owner = np.frombuffer(bytes(guard_bytes(size, seed)), np.uint8).copy()
    return View(owner, dtype, shape, offset, strides, layout)


def fill(draw: st.DrawFn, view: View, type_name: str, palette: Sequence[int | float] = ()) -> None:
    """Write drawn values into the view's elements, in row-major order (the last write wins)."""
    count = math.prod(view.shape)
    if not count:
        return
    values = draw(st.lists(values_of(type_name, palette), min_size=count, max_size=count))
    writable = view.twin()
    for index, value in zip(np.ndindex(*view.shape), values):
        writable[index] = value


def element_values(array: np.ndarray, type_name: str) -> dict[Index, int | float]:
    """What each element holds, as exact Python numbers."""
    convert = float if TYPES[type_name].is_float else int
    return {index: convert(array[index]) for index in np.ndindex(*array.shape)}
