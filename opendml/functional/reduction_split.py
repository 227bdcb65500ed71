"""ARGMIN and ARGMAX of a tensor short of DirectML's 4-byte rounding, run in two parts along a reduced axis.

``placement`` runs a short tensor's last indices apart along an axis the call keeps; when every axis of more
than one index is reduced (all axes of an odd-sized UINT8 array, say), no such axis exists. Then the head
(the first indices of the outermost such axis) is reduced where it lies, its rounding reaching into the
tail's bytes, the tail (a few indices, copied) apart, and the two answers merge by (value, index)
(``arg_merge``), as the partials of Dask blocks do: the whole array is never copied.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..device import Device
from ..dtypes import from_numpy
from ..enums import AxisDirection, NanPolicy
from ..kernels.spec import ReductionKind
from ..ops.arg_order import ArgOrder
from ..schema import OperatorSchema
from ..tensor import TensorDesc
from . import placement
from .arg_merge import values_at


def split_axis(array: Any, axes: tuple[int, ...]) -> tuple[int, int] | None:
    """(axis, count): the outermost axis of more than one index, reduced, whose last ``count`` indices run
    apart let the rest be bound where it lies; None where the call is left whole (``placement`` splits along a
    kept axis, or copies a small or unplaceable array)."""
    if not placement._splits_tails([array]) or not placement._short(array):
        return None
    axis = next((k for k, n in enumerate(array.shape) if n > 1), None)
    if axis is None or axis not in axes:
        return None
    if any(n > 1 and k not in axes for k, n in enumerate(array.shape)):
        return None  # a kept axis of more than one index: placement runs its tail apart, no merge needed
    count = placement._tail_count([array], axis, array.shape[axis])
    return None if count is None else (axis, count)


def run_in_two(device: Device, schema: OperatorSchema, make_desc: Callable[..., object], kind: ReductionKind,
               policy: NanPolicy, direction: AxisDirection, array: Any, out: Any, axes: tuple[int, ...],
               split: tuple[int, int]) -> None:
    """The reduction of ``array`` over ``axes`` into ``out`` as a head and a tail along ``split``'s axis,
    merged. The whole call's description is validated first, as ``_run`` would."""
    axis, count = split
    device.create_operator(make_desc(placement._describe(array), TensorDesc(from_numpy(out.dtype), out.shape)))
    xp = device.backend.xp
    n = array.shape[axis]
    head, tail = array[placement._along(axis, 0, n - count)], xp.ascontiguousarray(
        array[placement._along(axis, n - count, n)])
    answers = []
    for part, room in ((head, placement._room(array)), (tail, None)):
        indices = placement._padded_empty(device, out.shape, out.dtype)[0]
        placement._run_placed(device, schema, make_desc, [part], indices, [room])
        answers.append((values_at(xp, part, indices, axes), indices.astype(xp.int64)))
    (head_values, head_indices), (tail_values, tail_indices) = answers
    # Flattened row-major over the reduced axes; those before ``axis`` have one index: the tail's index along
    # ``axis`` moves by the head's length, times the reduced sizes after it.
    tail_indices += (n - count) * math.prod(array.shape[a] for a in axes if a > axis)
    head_wins = ArgOrder(kind, policy, direction).better(head_values, head_indices, tail_values, tail_indices)
    out[...] = xp.where(head_wins, head_indices, tail_indices).astype(out.dtype)
