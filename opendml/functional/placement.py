"""Arrays placed as tensors in buffers, and one operator run over them.

Views are described by their strides, never copied, except where no description can say where their
elements lie (negative strides, strides that are not a multiple of the element size, misaligned data),
tensors whose last bytes would fall short of DirectML's 4-byte rounding of a tensor's size, and an ``out``
that shares memory with an input other than as an exact in-place alias. Such an input is read through a
packed copy; such an output is computed into a packed array and copied into exactly its own elements
(decided in ``_run``, once for the whole call). A call of a short tensor runs its last indices along an axis
it does not reduce apart (``_tail_apart``): only they are copied.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..buffer import BufferBinding
from ..device import Device
from ..dtypes import from_numpy
from ..errors import invalid
from ..operator import CompiledOperator
from ..schema import OperatorSchema
from ..tensor import TensorDesc, calc_buffer_tensor_size, element_offsets


@dataclass
class _Placed:
    """An array described as a tensor in a buffer.

    ``source`` is the caller's array when it is bound where it lies (None when a copy is bound);
    ``staged`` is the packed array an output is computed into, then copied from, if any.
    """

    desc: TensorDesc
    binding: BufferBinding
    source: Any = None
    staged: Any = None


def _plain(array: Any) -> bool:
    """Whether a description can say where every element lies: strides (of dimensions larger than 1) that
    are non-negative multiples of the element size, and data aligned to the element size."""
    itemsize = array.itemsize
    if any(n > 1 and (s < 0 or s % itemsize) for n, s in zip(array.shape, array.strides)):
        return False
    if isinstance(array, np.ndarray):
        return bool(array.flags.aligned)
    return array.data.ptr % itemsize == 0  # CuPy


def _describe(array: Any) -> TensorDesc:
    """The array's layout as a description (a size-1 dimension's stride, whatever its sign, is moot: 0)."""
    itemsize = array.itemsize
    strides = tuple(0 if n == 1 else s // itemsize for n, s in zip(array.shape, array.strides))
    return TensorDesc(from_numpy(array.dtype), array.shape, strides)


def _padded_empty(device: Device, shape: tuple[int, ...], dtype: np.dtype) -> tuple[Any, Any]:
    """A new packed array and the raw bytes under it, rounded up to DirectML's 4-byte sizes."""
    xp = device.backend.xp
    nbytes = math.prod(shape) * dtype.itemsize
    raw = xp.zeros(calc_buffer_tensor_size(from_numpy(dtype), shape, None), dtype=xp.uint8)
    return raw[:nbytes].view(dtype).reshape(shape), raw


def _place_input(device: Device, array: Any, room: int | None = None) -> _Placed:
    """Describe an input where it lies, or bind a packed copy where that cannot be described or bound.
    ``room``: the bytes of the array's memory from its first element on, where more than it spans (the head of
    a call whose tail runs apart: its 4-byte rounding reaches into the tail's elements)."""
    backend = device.backend
    copied = not _plain(array)
    if copied:  # a copy, never the array itself (``ascontiguousarray`` keeps a contiguous misaligned one)
        array = array.copy(order="C")
    desc = _describe(array)
    if max(desc.span_in_bytes, 0 if copied or room is None else room) >= desc.total_tensor_size_in_bytes:
        raw = backend.byte_range(array, desc.total_tensor_size_in_bytes)
        return _Placed(desc, BufferBinding(backend.wrap(device, raw)), None if copied else array)
    # Too short for the 4-byte rounding: copy only the bytes it spans (a broadcast scalar: one).
    raw = backend.xp.zeros(desc.total_tensor_size_in_bytes, dtype=backend.xp.uint8)
    raw[:desc.span_in_bytes] = backend.byte_range(array, desc.span_in_bytes)
    return _Placed(desc, BufferBinding(backend.wrap(device, raw)))


def _place_output(device: Device, out: Any, room: int | None = None) -> _Placed:
    """Describe ``out`` where it lies, or (where that cannot be) a packed array to copy from.
    ``room`` as for inputs: only where the bytes past ``out``'s span are its own tail's, written after it."""
    backend = device.backend
    if _plain(out):
        desc = _describe(out)
        if max(desc.span_in_bytes, room or 0) >= desc.total_tensor_size_in_bytes:
            raw = backend.byte_range(out, desc.total_tensor_size_in_bytes)
            return _Placed(desc, BufferBinding(backend.wrap(device, raw)), out)
    staged, raw = _padded_empty(device, out.shape, out.dtype)
    return _Placed(_describe(staged), BufferBinding(backend.wrap(device, raw)), None, staged)


def _exact_alias(a: Any, b: Any) -> bool:
    """Whether two arrays are one view: same first element, type and layout (the in-place rule)."""
    return (a.dtype == b.dtype and a.shape == b.shape and _plain(a) and _plain(b)
            and _describe(a) == _describe(b) and _address(a) == _address(b))


def _address(array: Any) -> int:
    if isinstance(array, np.ndarray):
        return int(array.__array_interface__["data"][0])
    return int(array.data.ptr)  # CuPy


# Above this many elements an exact check of a staged ``out``'s own elements is too costly (as TensorDesc's).
_EXACT_COLLISION_LIMIT = 1 << 22


def _check_writes_once(owner: str, out: Any) -> None:
    """A staged ``out`` is never described to the operator, so its own elements are checked here: no two
    may share a byte (a write must have one meaning). Mirroring a dimension does not change which bytes it
    covers, so absolute byte strides tell; they need not be multiples of the element size."""
    itemsize = out.itemsize
    dims = sorted((abs(s), n) for n, s in zip(out.shape, out.strides) if n > 1)
    reach = itemsize  # bytes from the first element's start to the end of the last, over the dimensions seen
    for stride, size in dims:
        if stride < reach:
            break
        reach += (size - 1) * stride
    else:
        return  # each stride jumps past everything smaller: provably disjoint
    starts = None
    if out.size <= _EXACT_COLLISION_LIMIT:
        starts = np.sort(element_offsets(out.shape, [abs(s) for s in out.strides]))
    if starts is None or bool((np.diff(starts) < itemsize).any()):
        raise invalid(owner, "out", "must address each element once (no two elements sharing a byte)",
                      f"strides {tuple(out.strides)} (bytes) for {out.dtype} elements")


def _run(device: Device, schema: OperatorSchema, make_desc: Callable[..., object], inputs: Sequence[Any],
         out: Any) -> CompiledOperator | None:
    """Describe, validate and run one operator over arrays, writing ``out`` (which may alias an input).

    Returns the compiled operator when it ran on the arrays themselves (nothing copied), else None.
    """
    if out.size == 0:
        stand_ins = [None if a is None else np.zeros((1,) * a.ndim, a.dtype) for a in inputs]
        device.create_operator(make_desc(*[None if a is None else _describe(a) for a in stand_ins],
                                         _describe(np.zeros((1,) * out.ndim, out.dtype))))
        return None
    if _shares_with_an_input(device, schema, inputs, out):
        # NumPy's rule: the result is as if every input were read before any element of ``out`` is written.
        # Decided here, once for the whole call: a call run in parts (a short tensor's head and tail) writes
        # one part's result before it reads the next part's inputs, so a part cannot decide it alone.
        _check_writes_once(schema.name, out)
        staged = _padded_empty(device, out.shape, out.dtype)[0]
        _run_unshared(device, schema, make_desc, inputs, staged)
        out[...] = staged
        return None
    return _run_unshared(device, schema, make_desc, inputs, out)


def _shares_with_an_input(device: Device, schema: OperatorSchema, inputs: Sequence[Any], out: Any) -> bool:
    """Whether ``out`` may share memory with an input other than as the exact alias in-place operators take
    (the same view). May: NumPy's and CuPy's bounds test, which sees interleaved views as sharing too."""
    xp = device.backend.xp
    return any(a is not None and xp.may_share_memory(out, a) and not (schema.in_place and _exact_alias(out, a))
               for a in inputs)


def _run_unshared(device: Device, schema: OperatorSchema, make_desc: Callable[..., object], inputs: Sequence[Any],
                  out: Any) -> CompiledOperator | None:
    """``_run`` over an ``out`` that shares no memory with an input, or is an in-place operator's input."""
    split = _tail_apart(inputs, out)
    if split is not None:
        _run_head_and_tail(device, schema, make_desc, inputs, out, *split)
        return None
    return _run_placed(device, schema, make_desc, inputs, out)


# A short operand of fewer bytes is copied whole (a copy that small costs less than a second call).
TAIL_APART_FROM_BYTES = 1 << 16


def _short(array: Any) -> bool:
    """Whether a plain array's elements end before DirectML's 4-byte rounding of its size does."""
    if array.size == 0 or not _plain(array):
        return False
    desc = _describe(array)
    return desc.span_in_bytes < desc.total_tensor_size_in_bytes


def _room(array: Any) -> int | None:
    """The bytes a plain array's memory spans from its first element (None for one a copy replaces)."""
    return _describe(array).span_in_bytes if _plain(array) else None


def _tail_apart(inputs: Sequence[Any], out: Any) -> tuple[int, int] | None:
    """(axis, count): a call of a tensor that ends short of the 4-byte rounding runs its last ``count`` indices
    along ``axis`` apart, so that the rest (the head) is bound where it lies, its rounding reaching into the
    tail's bytes, and only the tail is copied. ``axis`` is the output's outermost of more than one index, where
    every operand has as many: the call's outputs there depend on those inputs alone (an element-wise axis, or
    one a reduction keeps). Operands broadcast along ``axis`` are the same in the head: short, they are copied
    whole as before (only the bytes they span). None where no operand that varies along ``axis`` is short and
    holds ``TAIL_APART_FROM_BYTES``, or no tail of up to 4 indices makes room for all of them."""
    operands = [a for a in [*inputs, out] if a is not None]
    if not _splits_tails(operands):
        return None
    axis = next((k for k, n in enumerate(out.shape) if n > 1), None)
    if axis is None or any(a.ndim != out.ndim or a.shape[axis] != out.shape[axis] for a in operands):
        return None
    varying = [a for a in operands if a.strides[axis] != 0 and _short(a)]
    if not any(a.nbytes >= TAIL_APART_FROM_BYTES for a in varying):
        return None
    count = _tail_count(varying, axis, out.shape[axis])
    return None if count is None else (axis, count)


def _splits_tails(arrays: Sequence[Any]) -> bool:
    """Whether a call over ``arrays`` may run a tail apart: some array is worth it (the common small call pays
    this and no more)."""
    return any(a.nbytes >= TAIL_APART_FROM_BYTES for a in arrays)


def _tail_count(arrays: Sequence[Any], axis: int, n: int) -> int | None:
    """The fewest last indices along ``axis`` (of ``n``; up to 4) to run apart so that each array's head,
    rounded, fits in the array's own memory; None where none does."""
    for count in range(1, min(4, n - 1) + 1):
        head = _along(axis, 0, n - count)
        if all(_fits(a[head], _room(a)) for a in arrays):
            return count
    return None


def _fits(head: Any, room: int | None) -> bool:
    return room is not None and room >= _describe(head).total_tensor_size_in_bytes


def _along(axis: int, start: int, stop: int) -> tuple[slice, ...]:
    return (slice(None),) * axis + (slice(start, stop),)


def _run_head_and_tail(device: Device, schema: OperatorSchema, make_desc: Callable[..., object],
                       inputs: Sequence[Any], out: Any, axis: int, count: int) -> None:
    """The call on the head where it lies, then on packed copies of the tail, copied into ``out``'s tail.

    The tail's inputs are copied before the head runs (copies, never views: ``ascontiguousarray`` hands a
    contiguous tail back as it is): a kernel may write the bytes of the head's rounding, which are the tail's
    first ones (an in-place call's input among them); ``out``'s tail is written last. The head of an ``out``
    that is not C-contiguous is staged as before: the bytes past its span need not be its own."""
    n = out.shape[axis]
    head, tail = _along(axis, 0, n - count), _along(axis, n - count, n)
    tail_inputs = [None if a is None else a[tail].copy() for a in inputs]  # C order, NumPy's and CuPy's
    out_room = _room(out) if _contiguous(out) else None
    _run_placed(device, schema, make_desc, [None if a is None else a[head] for a in inputs], out[head],
                [None if a is None else _room(a) for a in inputs], out_room)
    tail_out = _padded_empty(device, out[tail].shape, out.dtype)[0]
    _run_placed(device, schema, make_desc, tail_inputs, tail_out)
    out[tail] = tail_out


def _contiguous(array: Any) -> bool:
    return bool(array.flags.c_contiguous)


def _run_placed(device: Device, schema: OperatorSchema, make_desc: Callable[..., object], inputs: Sequence[Any],
                out: Any, rooms: Sequence[int | None] | None = None, out_room: int | None = None
                ) -> CompiledOperator | None:
    """``_run`` over the arrays as they are (``rooms``: see ``_place_input``), ``out`` sharing no memory with
    an input other than as an in-place operator's exact alias (``_run`` stages any other)."""
    rooms = rooms or [None] * len(inputs)
    placed_inputs = [None if a is None else _place_input(device, a, r) for a, r in zip(inputs, rooms)]
    placed_out = _place_output(device, out, out_room)
    if placed_out.staged is not None:
        _check_writes_once(schema.name, out)
    descs = [None if p is None else p.desc for p in placed_inputs]
    compiled = device.compiled(make_desc(*descs, placed_out.desc))
    compiled.execute([None if p is None else p.binding for p in placed_inputs], [placed_out.binding])
    if placed_out.staged is not None:
        out[...] = placed_out.staged
        return None
    return None if any(p is not None and p.source is None for p in placed_inputs) else compiled


def _view_as(array: Any, shape: tuple[int, ...]) -> Any:
    """``array`` with leading dimensions of size 1 added to reach ``shape``: always a view, never a copy
    (an output written through it must reach the caller's memory)."""
    count = len(shape) - array.ndim
    return array[(None,) * count] if count else array


def _leading_ones(schema: OperatorSchema, device: Device, rank: int) -> int:
    """How many leading 1s the device's support row needs (4-D-only levels), as ONNX Runtime pads."""
    row = schema.row_at(device.feature_level)
    return max(0, row.dimensions[0] - rank) if row is not None else 0
