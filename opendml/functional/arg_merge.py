"""Two answers of ARGMIN (ARGMAX) over parts of the same reduction, merged into the whole's.

Each part gives, per output element, its winning value and that value's index in the whole reduction
(flattened row-major over the reduced axes): ``values_at`` reads the value. They merge by (value, index),
never by position, under the operator's order (``ops.arg_order.ArgOrder.better``): a total order on the
candidates, so merging is associative and commutative. A part whose elements are all NaN under IGNORE
answers its first (INCREASING) or last (DECREASING) element, so the index order picks the whole's first or
last: DirectML's answer. Used by calls split in two (``reduction_split``) and by the partials of Dask blocks
(``opendml.dask.merge``). NumPy and CuPy arrays alike.
"""

from __future__ import annotations

from typing import Any


def values_at(xp: Any, array: Any, indices: Any, axes: tuple[int, ...]) -> Any:
    """The elements of ``array`` at the winning ``indices`` (flattened row-major over the reduced ``axes``; of
    the output's shape): one gathered element per output, on the array's own device, never a second pass."""
    if array.ndim == 0:
        return array.copy()  # the one element, read as the reduction of one element
    if indices.size == 0:
        return xp.empty(indices.shape, array.dtype)
    remaining = indices.astype(xp.int64)  # every index type holds an index of the reduction: int64 does too
    parts: dict[int, Any] = {}
    for axis in reversed(axes):  # the last reduced axis varies fastest
        parts[axis] = remaining % array.shape[axis]
        remaining = remaining // array.shape[axis]
    # Kept axes index themselves: aranges that broadcast along their own axis against the output's shape.
    where = tuple(parts[k] if k in parts else xp.arange(n).reshape((n,) + (1,) * (array.ndim - 1 - k))
                  for k, n in enumerate(array.shape))
    return array[where]
