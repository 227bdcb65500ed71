"""DML_BUFFER_TENSOR_DESC: sizes and strides in elements over a byte range, checked at construction."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .dtypes import DataType
from .enums import TensorFlags
from .errors import invalid, invalid_type
from .packing import nibbles_at, store_nibbles

MAX_DIMENSIONS = 8  # DML_TENSOR_DIMENSION_COUNT_MAX1
UINT32_MAX = 2**32 - 1
UINT64_MAX = 2**64 - 1
_OWNER = "DML_BUFFER_TENSOR_DESC"
_CALC = "DMLCalcBufferTensorSize"

# Above this many elements an exact self-overlap check (which lists every offset) is too costly.
_EXACT_OVERLAP_LIMIT = 1 << 22


def packed_strides(sizes: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides, in elements, of a packed tensor."""
    strides = [1] * len(sizes)
    for k in range(len(sizes) - 2, -1, -1):
        strides[k] = strides[k + 1] * sizes[k + 1]
    return tuple(strides)


def calc_buffer_tensor_size(data_type: DataType | str, sizes: Sequence[int], strides: Sequence[int] | None) -> int:
    """DMLCalcBufferTensorSize: the fewest bytes a tensor of this description occupies, rounded up to 4
    (counted in bits, so that 4-bit elements take half a byte each, a last odd one a whole byte).

    >>> calc_buffer_tensor_size(DataType.FLOAT16, [5], None), calc_buffer_tensor_size(DataType.UINT4, [9], None)
    (12, 8)
    """
    data_type = DataType.parse(data_type, owner=_CALC)
    sizes = _int_tuple(sizes, "Sizes", lower=0, owner=_CALC)
    if strides is not None:
        strides = _int_tuple(strides, "Strides", lower=0, owner=_CALC)
        _check_stride_count(strides, sizes, _CALC)
    return _minimum_size(data_type, sizes, strides)


def _minimum_size(data_type: DataType, sizes: Sequence[int], strides: Sequence[int] | None) -> int:
    if strides is None:
        elements = math.prod(sizes)
    else:
        elements = sum((n - 1) * s for n, s in zip(sizes, strides)) + 1
    return ((elements * data_type.bits + 7) // 8 + 3) // 4 * 4


def _alignment_unit(data_type: DataType) -> int:
    """The smallest GuaranteedBaseOffsetAlignment a type admits: its element's bytes (a byte for 4-bit data)."""
    return max(1, data_type.bits // 8)


def _check_stride_count(strides: tuple[int, ...], sizes: tuple[int, ...], owner: str) -> None:
    if len(strides) != len(sizes):
        raise invalid(owner, "Strides", f"must have DimensionCount ({len(sizes)}) entries", len(strides))


def _check_uint(value: object, field: str, upper: int, lower: int = 0, owner: str = _OWNER) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise invalid_type(owner, field, "must be an integer", repr(value))
    value = int(value)
    if not lower <= value <= upper:
        raise invalid(owner, field, f"must be in [{lower}, {upper}]", value)
    return value


def sequence_items(values: object, owner: str, field: str, what: str) -> list[object]:
    """The items of a list, tuple or 1-D array, unchecked; anything else is refused naming ``field``.

    A 0-d array has no items to iterate, and a set or dict has no order: neither is a DirectML array.
    """
    if isinstance(values, np.ndarray) and values.ndim == 1:
        return list(values)
    if isinstance(values, Sequence) and not isinstance(values, (str, bytes, bytearray)):
        return list(values)
    raise invalid_type(owner, field, f"must be a sequence of {what} (a list, tuple or 1-D array)", repr(values))


def _int_tuple(values: object, field: str, lower: int, owner: str = _OWNER) -> tuple[int, ...]:
    items = sequence_items(values, owner, field, "integers")
    return tuple(_check_uint(v, f"{field}[{k}]", UINT32_MAX, lower, owner) for k, v in enumerate(items))


@dataclass(frozen=True, eq=True)
class TensorDesc:
    """A buffer tensor description, as DirectML's DML_BUFFER_TENSOR_DESC.

    >>> desc = TensorDesc("FLOAT32", [2, 3], strides=[0, 1])
    >>> desc.total_tensor_size_in_bytes
    12
    """

    data_type: DataType
    sizes: tuple[int, ...]
    strides: tuple[int, ...] | None = None
    flags: TensorFlags = field(default=TensorFlags.NONE, kw_only=True)
    total_tensor_size_in_bytes: int = field(default=None, kw_only=True)  # type: ignore[assignment]
    guaranteed_base_offset_alignment: int = field(default=0, kw_only=True)

    def __init__(
        self,
        data_type: DataType | str,
        sizes: Sequence[int],
        strides: Sequence[int] | None = None,
        *,
        flags: TensorFlags | str | int = TensorFlags.NONE,
        total_tensor_size_in_bytes: int | None = None,
        guaranteed_base_offset_alignment: int = 0,
    ) -> None:
        data_type = DataType.parse(data_type, owner=_OWNER)
        sizes = _int_tuple(sizes, "Sizes", lower=1)
        if not 1 <= len(sizes) <= MAX_DIMENSIONS:
            raise invalid(_OWNER, "DimensionCount", f"must be between 1 and {MAX_DIMENSIONS}", len(sizes))
        if math.prod(sizes) > UINT32_MAX:
            raise invalid(_OWNER, "Sizes", f"must hold at most {UINT32_MAX} elements", math.prod(sizes))
        if strides is not None:
            strides = _int_tuple(strides, "Strides", lower=0)
            _check_stride_count(strides, sizes, _OWNER)
        minimum = _minimum_size(data_type, sizes, strides)
        if minimum > UINT64_MAX:  # large strides reach past what DirectML's UINT64 field can hold
            raise invalid(_OWNER, "TotalTensorSizeInBytes", f"must be at most {UINT64_MAX} (a UINT64)",
                          f"{minimum}, the size that Sizes and Strides reach")
        if total_tensor_size_in_bytes is None:
            total = minimum
        else:
            total = _check_uint(total_tensor_size_in_bytes, "TotalTensorSizeInBytes", UINT64_MAX)
            if total < minimum:
                raise invalid(_OWNER, "TotalTensorSizeInBytes", f"must be at least {minimum}", total)
        alignment = _check_uint(guaranteed_base_offset_alignment, "GuaranteedBaseOffsetAlignment", UINT32_MAX)
        unit = _alignment_unit(data_type)
        if alignment and (alignment & (alignment - 1) or alignment < unit):
            raise invalid(_OWNER, "GuaranteedBaseOffsetAlignment",
                          f"must be 0 or a power of two of at least {unit}", alignment)
        set_ = object.__setattr__
        set_(self, "data_type", data_type)
        set_(self, "sizes", sizes)
        set_(self, "strides", strides)
        set_(self, "flags", TensorFlags.parse(flags, owner=_OWNER))
        set_(self, "total_tensor_size_in_bytes", total)
        set_(self, "guaranteed_base_offset_alignment", alignment)

    @property
    def dimension_count(self) -> int:
        return len(self.sizes)

    @property
    def element_count(self) -> int:
        return math.prod(self.sizes)

    @property
    def effective_strides(self) -> tuple[int, ...]:
        """The strides in use: the given ones, or packed row-major ones."""
        return self.strides if self.strides is not None else packed_strides(self.sizes)

    @property
    def is_packed(self) -> bool:
        return self.effective_strides == packed_strides(self.sizes)

    @property
    def span_in_bytes(self) -> int:
        """Bytes from the first addressed element to the end of the last one (before rounding up to 4)."""
        last = sum((n - 1) * s for n, s in zip(self.sizes, self.effective_strides))
        return ((last + 1) * self.data_type.bits + 7) // 8

    def same_layout(self, other: TensorDesc) -> bool:
        """Whether two descriptions address the same bytes the same way (the in-place rule)."""
        return (self.data_type == other.data_type and self.sizes == other.sizes
                and self.effective_strides == other.effective_strides
                and self.total_tensor_size_in_bytes == other.total_tensor_size_in_bytes)

    def has_overlapping_elements(self) -> bool:
        """Whether two index vectors reach the same element (such a tensor cannot be written)."""
        dims = sorted((s, n) for n, s in zip(self.sizes, self.effective_strides) if n > 1)
        reach = 0  # the largest offset reachable with the dimensions seen so far
        for stride, size in dims:
            if stride <= reach:
                break
            reach += (size - 1) * stride
        else:
            return False  # each stride jumps past everything smaller: provably disjoint
        if any(stride == 0 for stride, _ in dims):
            return True
        if self.element_count > _EXACT_OVERLAP_LIMIT:
            return True  # too large to prove disjoint: treated as overlapping (documented)
        offsets = element_offsets(self.sizes, self.effective_strides)
        return np.unique(offsets).size != offsets.size

    def numpy_view(self, data: np.ndarray, offset: int) -> np.ndarray:
        """A NumPy view of this tensor inside ``data`` (a 1-D uint8 array) starting at byte ``offset``.

        4-bit data has no view (two elements share a byte): ``read_elements`` and ``write_elements`` copy it.
        """
        if self.data_type.is_sub_byte:
            raise invalid(_OWNER, "DataType", "must be a type of whole bytes for a NumPy view (UINT4 and INT4 "
                          "data are read and written with read_elements and write_elements)", self.data_type.name)
        itemsize = self.data_type.size
        return np.ndarray(self.sizes, dtype=self.data_type.numpy, buffer=data, offset=offset,
                          strides=tuple(s * itemsize for s in self.effective_strides))


def read_elements(desc: TensorDesc, data: np.ndarray, offset: int) -> np.ndarray:
    """The tensor's elements inside ``data`` (a 1-D uint8 array) from byte ``offset``, as a new array of its sizes;
    4-bit elements unpacked (``opendml.packing``), one to a byte of ``DataType.numpy``."""
    if not desc.data_type.is_sub_byte:
        return desc.numpy_view(data, offset).copy()
    return nibbles_at(data, offset, element_offsets(desc.sizes, desc.effective_strides), desc.data_type
                      ).reshape(desc.sizes)


def write_elements(desc: TensorDesc, data: np.ndarray, offset: int, values: np.ndarray) -> None:
    """Store ``values`` (of the tensor's sizes) as the tensor's elements inside ``data`` from byte ``offset``;
    4-bit elements packed into their nibbles, the other nibble of each byte kept."""
    if not desc.data_type.is_sub_byte:
        desc.numpy_view(data, offset)[...] = values
        return
    store_nibbles(data, offset, element_offsets(desc.sizes, desc.effective_strides),
                  np.asarray(values).reshape(-1), desc.data_type)


def element_offsets(sizes: Sequence[int], strides: Sequence[int]) -> np.ndarray:
    """Element offsets of every index vector, in row-major index order."""
    offsets = np.zeros((1,) * len(sizes), dtype=np.int64)
    for k, (n, s) in enumerate(zip(sizes, strides)):
        shape = [1] * len(sizes)
        shape[k] = n
        offsets = offsets + (np.arange(n, dtype=np.int64) * s).reshape(shape)
    return offsets.reshape(-1)
