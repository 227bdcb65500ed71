"""The index reductions ``argmin`` and ``argmax``, and ``unravel_index`` for their multi-axis results.

Both functions build one description type or the other through ``_arg_reduction``: ARGMIN and ARGMAX share
their fields, rules and support table, and differ only in which element wins.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import front_ends
from ..device import Device
from ..dtypes import INTEGERS_32, INTEGERS_64, DataType
from ..enums import AxisDirection, NanPolicy
from ..errors import invalid, invalid_type
from ..kernels.spec import ReductionKind
from ..ops.argmax import ARGMAX_SCHEMA, ArgMaxDesc
from ..ops.argmin import ARGMIN_SCHEMA, ArgMinDesc
from ..schema import OperatorSchema
from ..tensor import TensorDesc
from ..typing import ArrayInput, ArrayObject, Axes, DataTypeLike, DeviceLike
from . import reduction_split, tensors
from .arg_merge import values_at
from .devices import _as_array, _resolve_device
from .fastpath import _direct, _exact, _remember_reduction
from .placement import _leading_ones, _run, _view_as
from .results import _Output, _output

# Each kind's schema and description type: the one difference between the two operators' calls.
ARG_REDUCTIONS: dict[ReductionKind, tuple[OperatorSchema, type[ArgMinDesc] | type[ArgMaxDesc]]] = {
    ReductionKind.ARGMIN: (ARGMIN_SCHEMA, ArgMinDesc),
    ReductionKind.ARGMAX: (ARGMAX_SCHEMA, ArgMaxDesc),
}

UNRAVEL_OWNER = "opendml.unravel_index"

# While set (in this thread or task), argmin and argmax return their input unchanged: opendml.dask runs a
# compiled function that way on the elements a reduction picked, to learn the values it compared there.
reduced_inputs: ContextVar[bool] = ContextVar("opendml_reduced_inputs", default=False)


def argmin(x: ArrayInput, axes: Axes = None, *,
           axis_direction: AxisDirection | str = "INCREASING", output_type: DataTypeLike = "INT64",
           out: ArrayObject | None = None, device: DeviceLike = None, nan_policy: NanPolicy | str = "IGNORE",
           return_values: bool = False, axis: Axes = None, keepdims: bool = True) -> Any:
    """Indices of the smallest elements over ``axes`` (None: all); the rank is kept, as in DirectML.
    ``out``, if given, receives them: an array of the result's shape and of ``output_type``. Over several
    axes an index is flattened row-major over them (``unravel_index`` splits it). ``nan_policy``: IGNORE
    (DirectML's) skips NaN elements; PROPAGATE returns the first NaN's index, as NumPy does.

    ``return_values=True`` returns ``(indices, values)``: the values, of the indices' shape, the input's dtype
    and the indices' kind of array, are read at the winning indices, one element per output (not a second
    pass over the data). Under IGNORE a NaN value means every element of that reduction was NaN; under
    PROPAGATE it means a NaN won. With ``out``, ``out`` receives the indices.

    NumPy's spellings: ``axis=`` is an alias of ``axes`` (not both); ``keepdims=False`` drops the reduced axes
    from the result (and from ``out``'s and the values' shape), as NumPy does; True, DirectML's, keeps them.

    >>> argmin(np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], np.float32), 1)
    array([[0],
           [1],
           [0]])
    >>> argmin(np.array([[1, 2, 3], [3, 0, 4]], np.float32), 1, return_values=True)
    (array([[0],
           [1]]), array([[1.],
           [0.]], dtype=float32))
    """
    return _arg_reduction(ReductionKind.ARGMIN, x, axes, axis_direction, output_type, out, device, nan_policy,
                          return_values, axis, keepdims)


def argmax(x: ArrayInput, axes: Axes = None, *,
           axis_direction: AxisDirection | str = "INCREASING", output_type: DataTypeLike = "INT64",
           out: ArrayObject | None = None, device: DeviceLike = None, nan_policy: NanPolicy | str = "IGNORE",
           return_values: bool = False, axis: Axes = None, keepdims: bool = True) -> Any:
    """Indices of the largest elements over ``axes``: ``argmin``'s twin (same arguments and rules).

    >>> argmax(np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], np.float32), 1)
    array([[2],
           [2],
           [1]])
    >>> argmax(np.array([1.0, np.nan, 3.0], np.float32), nan_policy="PROPAGATE")
    array([1])
    >>> argmax(np.array([1.0, np.nan, 3.0], np.float32), return_values=True)
    (array([2]), array([3.], dtype=float32))
    """
    return _arg_reduction(ReductionKind.ARGMAX, x, axes, axis_direction, output_type, out, device, nan_policy,
                          return_values, axis, keepdims)


def _arg_reduction(kind: ReductionKind, x: Any, axes: object, axis_direction: object, output_type: object,
                   out: Any, device: Any, nan_policy: object, return_values: object = False, axis: object = None,
                   keepdims: object = True) -> Any:
    if reduced_inputs.get():
        return x
    if axis is not None:
        axes = axis_alias(ARG_REDUCTIONS[kind][0].name, axes, axis)
    key = None
    if return_values is False and keepdims is True:  # the indices alone, as DirectML shapes them: a layout seen
        # before runs its kernel at once (fastpath); a call dropping the reduced axes takes the ordinary path
        key = (kind, _exact(axes), _exact(axis_direction), _exact(output_type), _exact(nan_policy), keepdims)
        done = direct_call(device, key, x, out)
        if done is not None:
            return done
    schema, desc_type = ARG_REDUCTIONS[kind]
    owner = schema.name
    if not isinstance(return_values, (bool, np.bool_)):
        raise invalid_type(owner, "return_values", "must be True or False", repr(return_values))
    check_keepdims(owner, keepdims)
    front_end = front_ends.of((x,), out)
    if front_end is not None:
        return front_end.arg_reduction(kind, x, axes, axis_direction, output_type, out, device, nan_policy,
                                       bool(return_values), bool(keepdims))
    device = _resolve_device(device, x, owner)
    array = _as_array(device, x, owner, "InputTensor")
    reduced = _normalize_axes(axes, max(array.ndim, 1), owner)
    direction = AxisDirection.parse(axis_direction, owner=owner)
    policy = NanPolicy.parse(nan_policy, owner=owner)
    out_type = DataType.parse(output_type, owner=owner, field="OutputTensor.DataType")
    layout = reduced_layout(device, schema, x, array, reduced, bool(keepdims), out, out_type, owner)

    def make(i: TensorDesc, o: TensorDesc) -> object:
        return desc_type(i, o, layout.shifted, direction, policy)

    split = reduction_split.split_axis(layout.in_view, layout.shifted)
    if split is None:
        compiled = _run(device, schema, make, [layout.in_view], layout.out_view)
        if key is not None:
            remember_call(device, key, x, out, array, layout, compiled)
    else:
        reduction_split.run_in_two(device, schema, make, kind, policy, direction, layout.in_view, layout.out_view,
                                   layout.shifted, split)
    indices = layout.delivered(out)
    if not return_values:
        return indices
    values = values_at(device.backend.xp, array, layout.result.array, reduced)
    values = values if layout.dropped is None else values.reshape(layout.dropped)
    return indices, device.backend.to_caller(values, indices)


def direct_call(device: Any, key: Any, x: Any, out: Any) -> Any:
    """A reduction's result through the kernel remembered for ``key`` and these arrays' layouts (NumPy or CuPy
    arrays: ``fastpath``; PyTorch's tensors: ``tensors``), or None where the checked path must take the call."""
    done = _direct(device, key, x, out)
    return tensors.direct(device, key, x, out) if done is None else done


def remember_call(device: Device, key: Any, x: Any, out: Any, array: Any, layout: Any, compiled: Any) -> None:
    """Remember a reduction's checked call for ``direct_call``: by ``fastpath`` where it ran on ``x`` itself (NumPy,
    CuPy), by ``tensors`` where ``array`` is a PyTorch tensor's memory (each decides what it can take)."""
    if compiled is None:
        return
    if array is x:
        _remember_reduction(device, key, x, out, layout.result.array, compiled, layout.pad)
    else:
        tensors.remember(device, key, x, out, array, layout.result.array, compiled, layout.pad)


def axis_alias(owner: str, axes: object, axis: Any) -> Any:
    """NumPy's ``axis=``, an alias of ``axes``: giving both is a TypeError, as a repeated argument is."""
    if axes is not None:
        raise invalid_type(owner, "axis", "must not be given beside axes (its alias)", f"axes={axes!r}, axis={axis!r}")
    return axis


def check_keepdims(owner: str, keepdims: object) -> None:
    if not isinstance(keepdims, (bool, np.bool_)):
        raise invalid_type(owner, "keepdims", "must be True or False", repr(keepdims))


@dataclass(frozen=True)
class ReducedLayout:
    """A reduction's operands as its description sees them: the result array, the input and output viewed with
    ``pad`` leading axes of size 1 (the operator's smallest rank), the reduced axes shifted by it, and the
    shape NumPy's ``keepdims=False`` gives (None: the reduced axes kept)."""

    result: _Output
    in_view: Any
    out_view: Any
    pad: int
    shifted: tuple[int, ...]
    dropped: tuple[int, ...] | None

    def delivered(self, out: Any) -> Any:
        """The result as the caller receives it: keepdims=False's shape, ``out`` itself where given."""
        values = self.result.deliver()
        if self.dropped is not None:
            values = values.reshape(self.dropped) if out is None else out
        return values


def reduced_layout(device: Device, schema: OperatorSchema, x: Any, array: Any, reduced: tuple[int, ...],
                   keepdims: bool, out: Any, out_type: DataType, owner: str) -> ReducedLayout:
    """The output (``out``, viewed with the reduced axes kept where keepdims=False, or a new array) and the
    views of a reduction of ``array`` (``x`` on the device) over ``reduced``, the rank kept."""
    out_shape = tuple(1 if k in reduced else n for k, n in enumerate(array.shape or (1,)))
    dropped = None if keepdims or not array.ndim else tuple(n for k, n in enumerate(array.shape) if k not in reduced)
    given = out if dropped is None or out is None else _kept_view(out, dropped, reduced, out_type, owner)
    result = _output(device, given, array.shape and out_shape, out_type.numpy, owner, x)
    pad = _leading_ones(schema, device, max(array.ndim, 1))
    in_view = _view_as(array, (1,) * pad + (array.shape or (1,)))
    out_view = _view_as(result.array, (1,) * pad + out_shape)
    return ReducedLayout(result, in_view, out_view, pad, tuple(a + pad for a in reduced), dropped)


def _kept_view(out: Any, dropped: tuple[int, ...], reduced: Sequence[int], out_type: DataType, owner: str) -> Any:
    """``keepdims=False``'s ``out``, of NumPy's shape, viewed with the reduced axes kept as size 1 (a view of any
    array kind: indexing by None), which the operator writes; one of another shape is refused with that shape."""
    shape = getattr(out, "shape", None)
    if shape is None:
        return out  # no array: refused by ``_output`` as such
    if tuple(shape) != dropped:
        raise invalid(owner, "out", f"must have shape {dropped} and dtype {out_type.numpy} (keepdims=False)",
                      f"{tuple(shape)} {getattr(out, 'dtype', '')}")
    rank = len(dropped) + len(reduced)
    return out[tuple(None if k in reduced else slice(None) for k in range(rank))]


def _normalize_axes(axes: object, rank: int, owner: str) -> tuple[int, ...]:
    if axes is None:
        return tuple(range(rank))
    if isinstance(axes, np.ndarray) and axes.ndim <= 1:
        listed: list[object] = axes.reshape(-1).tolist() if axes.ndim else [axes.item()]
    elif isinstance(axes, (int, np.integer)):
        listed = [axes]
    elif isinstance(axes, Sequence) and not isinstance(axes, (str, bytes)):
        listed = list(axes)
    else:
        raise invalid_type(owner, "Axes", "must be an integer, a sequence of integers or None", repr(axes))
    normalized = []
    for k, axis in enumerate(listed):
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -rank <= axis < rank:
            wrong_type = isinstance(axis, bool) or not isinstance(axis, (int, np.integer))  # NumPy: TypeError
            refuse = invalid_type if wrong_type else invalid
            raise refuse(owner, f"Axes[{k}]", f"must be an integer in [{-rank}, {rank - 1}]", repr(axis))
        normalized.append(int(axis) % rank)
    if len(set(normalized)) != len(normalized):
        raise invalid(owner, "Axes", "must not repeat an axis", listed)
    return tuple(sorted(normalized))


def unravel_index(indices: ArrayInput, shape: int | np.integer[Any] | Sequence[int | np.integer[Any]],
                  axes: Axes = None) -> tuple[Any, ...]:
    """The flattened indices ``argmin``/``argmax`` return over several ``axes`` of an input of ``shape``,
    as one index array per reduced axis, in increasing axis order (the flattening runs row-major over the
    reduced axes in that order). Each array has the shape and dtype of ``indices`` and its kind (NumPy,
    CuPy, ...); ``axes`` are those given to the reduction (None: all).

    >>> x = np.array([[[5, 1], [0, 7]], [[2, 2], [9, -1]]], np.int32)
    >>> unravel_index(argmin(x, (0, 2)), x.shape, (0, 2))
    (array([[[0],
            [1]]]), array([[[1],
            [1]]]))
    """
    if front_ends.kind_of((indices,)) == front_ends.DASK:  # (a traced array's values are not known)
        return tuple(front_ends.load(front_ends.DASK).unravel_index(indices, shape, axes))
    device = _resolve_device(None, indices, UNRAVEL_OWNER)
    array = _as_array(device, indices, UNRAVEL_OWNER, "indices", INTEGERS_32 | INTEGERS_64)
    if array.dtype.kind not in "iu":
        raise invalid(UNRAVEL_OWNER, "indices.DataType", "must be an integer type (an ARGMIN or ARGMAX result)",
                      array.dtype)
    sizes = _shape(shape)
    reduced = _normalize_axes(axes, len(sizes), UNRAVEL_OWNER)
    sub_shape = tuple(sizes[a] for a in reduced)
    _check_range(array, math.prod(sub_shape), sub_shape)
    parts = []
    remaining = array.reshape(-1)  # 1-D: NumPy's arithmetic on a 0-d array gives scalars, not arrays
    for size in reversed(sub_shape):  # the last reduced axis varies fastest
        parts.append((remaining % size).reshape(array.shape))
        remaining = remaining // size
    backend = device.backend
    return tuple(backend.to_caller(part, indices) for part in reversed(parts))


def _shape(shape: object) -> tuple[int, ...]:
    """The reduced input's shape (a 0-d input reads as one element of one dimension, as the reductions read it)."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, Sequence) or isinstance(shape, (str, bytes)):
        raise invalid_type(UNRAVEL_OWNER, "shape", "must be a sequence of sizes (the reduced input's shape)",
                           repr(shape))
    for k, n in enumerate(shape):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise invalid(UNRAVEL_OWNER, f"shape[{k}]", "must be a positive integer", repr(n))
    return tuple(int(n) for n in shape) or (1,)


def _check_range(array: Any, count: int, sub_shape: tuple[int, ...]) -> None:
    """Every index names one of the ``count`` elements of the reduced axes (reductions on the array's own
    device; only their results come to the host)."""
    if array.size == 0:
        return
    low, high = int(array.min()), int(array.max())
    if low < 0 or high >= count:
        wrong = low if low < 0 else high
        raise invalid(UNRAVEL_OWNER, "indices", f"must lie in [0, {count - 1}] (the {count} elements of the "
                      f"reduced axes' sizes {sub_shape})", wrong)
