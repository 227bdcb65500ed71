"""``opendml.top_k``: DML_OPERATOR_TOP_K1 over arrays, the K largest (or smallest) along one axis.

``top_k(x, k, axis=-1, axis_direction="DECREASING")`` returns ``(values, indices)`` as ``torch.topk`` does, with
DirectML's names: ``axis_direction`` as ``argmin``'s (DECREASING: the K largest, in decreasing order;
INCREASING: the K smallest, increasing); ``largest=`` is accepted as torch's and ONNX's spelling of it. The
indices are UINT32 where every index of the axis fits (DirectML's table before 5_0), else UINT64
(``index_type=`` chooses). A Dask array gives Dask arrays (``opendml/dask/top_k.py``: the same answer whatever
its chunking).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import front_ends
from ..dtypes import DataType
from ..enums import AxisDirection
from ..errors import invalid, invalid_type
from ..ops.top_k import TOP_K1_SCHEMA, TopK1Desc
from ..tensor import TensorDesc
from ..typing import ArrayInput, DataTypeLike, DeviceLike
from .devices import _as_array, _resolve_device
from .placement import _padded_empty, _place_input

OWNER = "opendml.top_k"


def top_k(x: ArrayInput, k: int, axis: int = -1, *, axis_direction: AxisDirection | str | int | None = None,
          largest: bool | None = None, index_type: DataTypeLike | None = None,
          device: DeviceLike = None) -> tuple[Any, Any]:
    """The ``k`` largest elements of ``x`` along ``axis`` (``axis_direction="INCREASING"`` or ``largest=False``:
    the smallest) and their indices along it, sorted (DirectML's TOP_K1). Equal values come by ascending
    index, whichever the direction, and of equal values at the K boundary the lowest indices are kept; NaN
    rank after every number in both directions (``k=1`` is ``argmax``'s and ``argmin``'s answer).

    >>> values, indices = top_k(np.array([[1, 5, 3, 5]], np.float32), 2)
    >>> values, indices
    (array([[5., 5.]], dtype=float32), array([[1, 3]], dtype=uint32))
    >>> top_k(np.array([4, 1, 3], np.int32), 2, largest=False)[1]
    array([1, 2], dtype=uint32)
    """
    name = TOP_K1_SCHEMA.name
    direction = _direction(axis_direction, largest)
    front_end = front_ends.of((x,), None)
    if front_end is not None:  # traced (opendml.compile) or Dask
        return front_end.top_k(x, k, axis, direction, index_type, device)  # type: ignore[no-any-return]
    device = _resolve_device(device, x, name)
    array = _as_array(device, x, name, "InputTensor")
    axis, k = checked_axis_and_k(tuple(array.shape), axis, k)
    indices_type = _index_type(index_type, array.shape[axis], name)
    shape = tuple(int(k) if d == axis else n for d, n in enumerate(array.shape))
    placed = _place_input(device, array)
    values, values_raw = _padded_empty(device, shape, array.dtype)
    indices, indices_raw = _padded_empty(device, shape, indices_type.numpy)
    desc = TopK1Desc(placed.desc, TensorDesc(placed.desc.data_type, shape),
                     TensorDesc(indices_type, shape), axis, int(k), direction)
    backend = device.backend
    compiled = device.compiled(desc)
    compiled.execute([placed.binding], [backend.wrap(device, values_raw), backend.wrap(device, indices_raw)])
    return backend.to_caller(values, x), backend.to_caller(indices, x)


def checked_axis_and_k(shape: tuple[int, ...], axis: object, k: object) -> tuple[int, int]:
    """The axis in [0, rank) and K of a call on an array of ``shape``, or the error naming what is wrong."""
    if not shape:
        raise invalid(OWNER, "x", "must have at least one dimension (TOP_K selects along an axis)", "a 0-d array")
    rank = len(shape)
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -rank <= axis < rank:
        raise invalid(OWNER, "axis", f"must be an integer in [{-rank}, {rank - 1}]", repr(axis))
    axis = int(axis) % rank
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise invalid_type(OWNER, "k", "must be an integer", type(k).__name__)
    if not 1 <= k <= shape[axis]:
        raise invalid(OWNER, "k", f"must be in [1, {shape[axis]}] (K: at most the size along the axis)", k)
    return axis, int(k)


def _direction(axis_direction: object, largest: object) -> AxisDirection:
    """DECREASING (the K largest) unless ``axis_direction`` or ``largest`` says otherwise; not both."""
    if axis_direction is not None and largest is not None:
        raise invalid_type(OWNER, "largest", "must not be given with axis_direction (one spelling of the "
                           "direction)", repr(largest))
    if largest is not None:
        if not isinstance(largest, (bool, np.bool_)):
            raise invalid_type(OWNER, "largest", "must be True or False", repr(largest))
        return AxisDirection.DECREASING if largest else AxisDirection.INCREASING
    if axis_direction is None:
        return AxisDirection.DECREASING
    return AxisDirection.parse(axis_direction, owner=OWNER, field="axis_direction")


def _index_type(index_type: object, count: int, owner: str) -> DataType:
    """UINT32 where it holds every index of the axis, else UINT64; or the caller's choice."""
    if index_type is None:
        return DataType.UINT32 if count - 1 <= DataType.UINT32.integer_range[1] else DataType.UINT64
    return DataType.parse(index_type, owner=owner, field="OutputIndexTensor.DataType")
