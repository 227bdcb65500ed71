"""UINT4 and INT4 data in bytes: two elements to a byte, the element of lower offset in the low nibble.

DirectML's layout (DML_TENSOR_DATA_TYPE, feature level 6_3): elements [1, 2, 3, 4, 5] are the bytes
[0x21, 0x43, 0x05], the last byte's high nibble unused. Element offsets (sizes times strides, in elements) count
nibbles from the tensor's first byte: element offset ``e`` is the low nibble of byte ``e // 2`` when ``e`` is even,
the high nibble when it is odd, so a stride of an odd number of elements alternates between nibbles.
docs/semantics.md ("4-bit data") states the rules; ``pack4`` and ``unpack4`` are the NumPy side of them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .dtypes import FOUR_BIT_TYPES, DataType
from .errors import invalid, invalid_type

_LOW = np.uint8(0x0F)


def _four_bit_type(data_type: object, owner: str) -> DataType:
    parsed = DataType.parse(data_type, owner=owner, field="data_type")
    if parsed not in FOUR_BIT_TYPES:
        raise invalid(owner, "data_type", "must be UINT4 or INT4", parsed.name)
    return parsed


def pack4(values: Any, data_type: DataType | str = DataType.INT4) -> np.ndarray:
    """``values`` (integers of ``data_type``'s range, any shape, read in row-major order) packed two to a byte:
    a 1-D uint8 array of ``ceil(n / 2)`` bytes, an odd count's last high nibble 0.

    Arrays of ml_dtypes' ``int4`` and ``uint4`` are taken too. Values outside the type's range are refused
    (packing never wraps silently).

    >>> pack4([1, 2, 3, 4, 5], "UINT4").tolist() == [0x21, 0x43, 0x05]
    True
    >>> pack4([-1, -8, 7], "INT4").tolist() == [0x8F, 0x07]
    True
    """
    data_type = _four_bit_type(data_type, "opendml.pack4")
    array = _integers(values, "opendml.pack4")
    low, high = data_type.integer_range
    if array.size and (int(array.min()) < low or int(array.max()) > high):
        bad = array[(array < low) | (array > high)][0]
        raise invalid("opendml.pack4", "values", f"must be {data_type.name} values, in [{low}, {high}]", int(bad))
    nibbles = (array.reshape(-1).astype(np.int16) & 0x0F).astype(np.uint8)
    if nibbles.size % 2:
        nibbles = np.append(nibbles, np.uint8(0))
    return np.ascontiguousarray(nibbles[0::2] | (nibbles[1::2] << np.uint8(4)))


def unpack4(data: Any, data_type: DataType | str = DataType.INT4, count: int | None = None) -> np.ndarray:
    """The first ``count`` elements (default: two a byte) of packed 4-bit ``data`` (bytes or a uint8 array), one
    to a byte: int8 for INT4 (sign-extended), uint8 for UINT4.

    >>> unpack4(bytes([0x21, 0x43, 0x05]), "UINT4", 5).tolist()
    [1, 2, 3, 4, 5]
    >>> unpack4(bytes([0x8F]), "INT4").tolist()
    [-1, -8]
    """
    data_type = _four_bit_type(data_type, "opendml.unpack4")
    raw = _bytes(data, "opendml.unpack4")
    available = 2 * raw.size
    if count is None:
        count = available
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or not 0 <= count <= available:
        raise invalid("opendml.unpack4", "count", f"must be an integer in [0, {available}] (two elements a byte)",
                      repr(count))
    return unpack_run(raw, 0, int(count), data_type)


def unpack_run(data: Any, offset: int, count: int, data_type: DataType, xp: Any = np) -> Any:
    """``count`` consecutive 4-bit elements from byte ``offset`` of ``data`` (a packed tensor's), unpacked: two
    vector operations over its bytes, no offsets (``xp``: NumPy, or CuPy for device memory)."""
    raw = data[offset:offset + (count + 1) // 2]
    nibbles = xp.empty(2 * raw.size, np.uint8)
    nibbles[0::2] = raw & _LOW
    nibbles[1::2] = raw >> np.uint8(4)
    return _signed(nibbles[:count], data_type)


def pack_run(data: Any, offset: int, values: Any) -> None:
    """Store ``values`` (4-bit integers) as consecutive elements from byte ``offset`` of ``data``; an odd count's
    last high nibble (the next element's, or unused) is kept."""
    nibbles = (values.reshape(-1).astype(np.int16) & 0x0F).astype(np.uint8)
    whole = nibbles.size // 2
    data[offset:offset + whole] = nibbles[0:2 * whole:2] | (nibbles[1:2 * whole:2] << np.uint8(4))
    if nibbles.size % 2:
        last = offset + whole
        data[last:last + 1] = (data[last:last + 1] & np.uint8(0xF0)) | nibbles[-1:]


def _signed(nibbles: Any, data_type: DataType) -> Any:
    if data_type is DataType.INT4:
        return ((nibbles ^ np.uint8(8)).astype(np.int8) - np.int8(8)).astype(np.int8)
    return nibbles


def nibbles_at(data: Any, offset: int, offsets: Any, data_type: DataType, xp: Any = np) -> Any:
    """The 4-bit elements at element ``offsets`` (nibbles) from byte ``offset`` of ``data``, unpacked; ``xp``:
    the array module of ``data`` and ``offsets`` (NumPy, or CuPy for device memory)."""
    byte = data[offset + (offsets >> 1)]
    return _signed(xp.where(offsets & 1, byte >> np.uint8(4), byte & _LOW).astype(np.uint8), data_type)


def store_nibbles(data: Any, offset: int, offsets: Any, values: Any, data_type: DataType) -> None:
    """Store ``values`` (integers of ``data_type``) as the nibbles at element ``offsets`` from byte ``offset`` of
    ``data``, the other nibble of each byte kept. Offsets are distinct (a written tensor never overlaps itself);
    the two nibbles of one byte are written in two passes so that neither undoes the other."""
    del data_type  # both types store their low four bits
    nibbles = (values.astype(np.int16) & 0x0F).astype(np.uint8)
    for parity, shift, keep in ((0, 0, np.uint8(0xF0)), (1, 4, np.uint8(0x0F))):
        chosen = (offsets & 1) == parity
        where = offset + (offsets[chosen] >> 1)
        data[where] = (data[where] & keep) | (nibbles[chosen] << np.uint8(shift))


def _integers(values: Any, owner: str) -> np.ndarray:
    array = np.asarray(values)
    if array.dtype.kind == "V" and array.dtype.name in ("int4", "uint4"):  # ml_dtypes: convert, never view
        return array.astype(np.int8)
    if array.dtype.kind == "b" or (array.size and array.dtype.kind not in "iu"):
        raise invalid_type(owner, "values", "must be integers", str(array.dtype))
    return array.astype(np.int64)


def _bytes(data: Any, owner: str) -> np.ndarray:
    if isinstance(data, (bytes, bytearray, memoryview)):
        return np.frombuffer(data, dtype=np.uint8)
    array = np.asarray(data)
    if array.dtype != np.uint8:
        raise invalid_type(owner, "data", "must be bytes or a uint8 array of packed elements", str(array.dtype))
    return array.reshape(-1)
