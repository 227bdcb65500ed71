"""The types of the functional API's arguments, for annotating code that calls it (as ``numpy.typing``).

The functions take every kind of array the front ends take (NumPy, CuPy, PyTorch and Dask arrays, a value traced
by ``opendml.compile``, nested lists and scalars), NumPy's scalars wherever a number is taken, and NumPy's
spellings of a data type where one is named (``output_type=np.int32``). A call on a NumPy array (``device``
left out) returns a NumPy array; on another kind of array, that kind (typed ``Any``).

>>> import numpy as np
>>> from opendml.typing import ArrayInput, Axes
>>> def smallest(x: ArrayInput, axis: Axes = None) -> object:
...     import opendml
...     return opendml.argmin(x, axis)
>>> smallest(np.array([[3, 1], [0, 2]], np.float32), np.int64(1)).ravel()
array([1, 0])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeAlias

import numpy as np
import numpy.typing as npt

from .device import Device
from .dtypes import DataType

__all__ = ["ArrayInput", "ArrayObject", "Axes", "DataTypeLike", "DeviceLike", "Scalar"]


class ArrayObject(Protocol):
    """Any array object: a shape and a dtype (CuPy, PyTorch, Dask arrays, ``opendml.compile``'s traced values)."""

    @property
    def shape(self) -> Sequence[int]: ...

    @property
    def dtype(self) -> Any: ...


# What a function takes as an array: NumPy's array-likes (arrays, scalars, nested sequences) or any array object.
ArrayInput: TypeAlias = npt.ArrayLike | ArrayObject
# A number given as a field (a bound, an alpha): Python's or NumPy's (np.float32(0.5), np.int64(3)).
Scalar: TypeAlias = float | np.number[Any] | np.bool_
# The axes of a reduction: one, several, or None (all); NumPy's integers too.
Axes: TypeAlias = int | np.integer[Any] | Sequence[int | np.integer[Any]] | None
# A data type: DataType.INT32, "INT32" or "int32", or NumPy's np.int32 / np.dtype("int32").
DataTypeLike: TypeAlias = DataType | str | type[np.generic] | np.dtype[Any]
# A device: a Device, a backend's name ("cpu", "cuda"), or None (the array's).
DeviceLike: TypeAlias = Device | str | None
