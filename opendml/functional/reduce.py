"""``opendml.reduce``: DML_OPERATOR_REDUCE over arrays, every DML_REDUCE_FUNCTION by name.

``reduce(x, "SUM", axes=...)`` keeps DirectML's name and its one operator: the function is an argument, as
DirectMLX's ``dml::Reduce(input, DML_REDUCE_FUNCTION_SUM, axes)`` takes it. NumPy's spellings (``axis=``,
``keepdims=False``) are accepted as ``argmin``'s are.
"""

from __future__ import annotations

from typing import Any

import numpy as np  # noqa: F401 (the docstring's examples run in this module's namespace)

from .. import front_ends
from ..dtypes import DataType
from ..enums import ReduceFunction
from ..errors import invalid
from ..ops.reduce import INDEX_FUNCTIONS, REDUCE_SCHEMA, ReduceDesc
from ..tensor import TensorDesc
from ..typing import ArrayInput, ArrayObject, Axes, DataTypeLike, DeviceLike
from .devices import _as_array, _resolve_device
from .fastpath import _exact
from .placement import _run
from .reductions import _normalize_axes, axis_alias, check_keepdims, direct_call, reduced_layout, remember_call

OWNER = "opendml.reduce"


def reduce(x: ArrayInput, function: ReduceFunction | str | int, axes: Axes = None, *,
           keepdims: bool = True, output_type: DataTypeLike | None = None, out: ArrayObject | None = None,
           device: DeviceLike = None, axis: Axes = None) -> Any:
    """REDUCE ``function`` (a DML_REDUCE_FUNCTION: "SUM", "AVERAGE", "L1", "L2", "SUM_SQUARE", "LOG_SUM",
    "LOG_SUM_EXP", "MAX", "MIN", "MULTIPLY", "ARGMIN", "ARGMAX") of ``x`` over ``axes`` (None: all). The rank is
    kept, as in DirectML (``keepdims=False``: the reduced axes dropped, as NumPy does). The output type is the
    input's, or ``output_type`` (INT64 by default) for ARGMIN and ARGMAX.

    Floating-point sums (SUM, AVERAGE, L1, SUM_SQUARE) are the exact sum of the elements rounded once to the
    output type (AVERAGE: the exact quotient): the same bits whatever the layout or thread count.

    >>> reduce(np.array([[1, 2, 3], [3, 0, 4], [2, 4, 2]], np.float32), "SUM", 1)
    array([[6.],
           [7.],
           [8.]], dtype=float32)
    >>> reduce(np.array([1e30, 1, -1e30], np.float32), "SUM", keepdims=False)
    array(1., dtype=float32)
    """
    name = REDUCE_SCHEMA.name
    if axis is not None:
        axes = axis_alias(name, axes, axis)
    key = None
    if keepdims is True:  # DirectML's shape: a layout seen before runs its kernel at once (fastpath)
        key = (name, _exact(function), _exact(axes), _exact(output_type))
        done = direct_call(device, key, x, out)
        if done is not None:
            return done
    parsed = ReduceFunction.parse(function, owner=name)
    check_keepdims(name, keepdims)
    front_end = front_ends.of((x,), out)
    if front_end is not None:  # traced (opendml.compile) or Dask
        return front_end.reduce(parsed, x, axes, bool(keepdims), output_type, out, device)
    device = _resolve_device(device, x, name)
    array = _as_array(device, x, name, "InputTensor")
    reduced = _normalize_axes(axes, max(array.ndim, 1), name)
    out_type = reduced_type(parsed, array.dtype, output_type)
    layout = reduced_layout(device, REDUCE_SCHEMA, x, array, reduced, bool(keepdims), out, out_type, name)

    def make(i: TensorDesc, o: TensorDesc) -> object:
        return ReduceDesc(parsed, i, o, layout.shifted)

    compiled = _run(device, REDUCE_SCHEMA, make, [layout.in_view], layout.out_view)
    if key is not None:
        remember_call(device, key, x, out, array, layout, compiled)
    return layout.delivered(out)


def reduced_type(function: ReduceFunction, dtype: Any, output_type: object) -> DataType:
    """REDUCE's output type for an input of ``dtype``: the input's own, or ``output_type`` (INT64 unless given)
    for ARGMIN and ARGMAX; another type given for a value function is refused (every front end's rule)."""
    name = REDUCE_SCHEMA.name
    if function in INDEX_FUNCTIONS:
        return DataType.parse("INT64" if output_type is None else output_type, owner=name,
                              field="OutputTensor.DataType")
    out_type = DataType.parse(dtype, owner=name, field="InputTensor.DataType")
    if output_type is not None and DataType.parse(output_type, owner=name) != out_type:
        raise invalid(name, "OutputTensor.DataType", f"must be InputTensor.DataType ({out_type.name}) with "
                      f"Function {function.name}", DataType.parse(output_type, owner=name).name)
    return out_type
