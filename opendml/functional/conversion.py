"""``cast``: DML_OPERATOR_CAST over an array, to the data type a call names (docs/semantics.md 9d)."""

from __future__ import annotations

from typing import Any

from .. import front_ends
from ..dtypes import DataType
from ..ops.cast import CAST_SCHEMA, CastDesc
from ..typing import ArrayInput, ArrayObject, DataTypeLike, DeviceLike
from .devices import _as_array, _resolve_device
from .placement import _leading_ones, _run, _view_as
from .results import _output


def cast(x: ArrayInput, dtype: DataTypeLike, *, out: ArrayObject | None = None, device: DeviceLike = None) -> Any:
    """Each element of ``x`` converted to ``dtype`` (a DataType, its name or a NumPy dtype), by CAST's rules: float
    to float and integer to float rounded to nearest even; float to integer truncated toward zero, saturated at
    the type's limits, NaN giving 0; integer to integer wrapped (its low bits, two's complement).

    >>> import numpy as np
    >>> cast(np.array([np.nan, -2.7, 300.0], np.float32), np.int8).tolist()
    [0, -2, 127]
    >>> cast(np.array([300, -1], np.int32), "UINT8").tolist()
    [44, 255]
    """
    front_end = front_ends.of((x,), out)
    if front_end is not None:
        return front_end.cast(x, dtype, out, device)
    owner = CAST_SCHEMA.name
    device = _resolve_device(device, x, owner)
    array = _as_array(device, x, owner, "InputTensor")
    target = DataType.parse(dtype, owner=owner, field="OutputTensor.DataType")
    result = _output(device, out, tuple(array.shape), target.numpy, owner, x)
    pad = _leading_ones(CAST_SCHEMA, device, max(array.ndim, 1))
    full = (1,) * pad + (tuple(array.shape) or (1,))
    _run(device, CAST_SCHEMA, CastDesc, [_view_as(array, full)], _view_as(result.array, full))
    return result.deliver()
