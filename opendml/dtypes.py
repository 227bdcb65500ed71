"""DirectML tensor data types: names, enum values, sizes, NumPy mapping and categories."""

from __future__ import annotations

import enum

import numpy as np

from .enums import parse_enum
from .errors import invalid
from .feature_levels import FeatureLevel


class DataType(enum.IntEnum):
    """DML_TENSOR_DATA_TYPE, with DirectML's names and values."""

    UNKNOWN = 0
    FLOAT32 = 1
    FLOAT16 = 2
    UINT32 = 3
    UINT16 = 4
    UINT8 = 5
    INT32 = 6
    INT16 = 7
    INT8 = 8
    FLOAT64 = 9
    UINT64 = 10
    INT64 = 11
    UINT4 = 12  # from feature level 6_3: two elements to a byte (docs/semantics.md, "4-bit data")
    INT4 = 13

    @classmethod
    def parse(cls, value: object, *, owner: str = "opendml", field: str = "DataType") -> DataType:
        """A real data type (never UNKNOWN) given as a DataType, its value, its name or a NumPy dtype.

        >>> DataType.parse("DML_TENSOR_DATA_TYPE_FLOAT16"), DataType.parse(np.int8), DataType.parse(11)
        (<DataType.FLOAT16: 2>, <DataType.INT8: 8>, <DataType.INT64: 11>)
        """
        if isinstance(value, np.dtype) or (isinstance(value, type) and not issubclass(value, enum.Enum)):
            try:
                return from_numpy(np.dtype(value))
            except (TypeError, KeyError):
                pass  # not a DirectML type: parse_enum refuses it with the list of types
        return parse_enum(cls, value, owner, field, prefix="DML_TENSOR_DATA_TYPE_", exclude=(cls.UNKNOWN,))

    @property
    def bits(self) -> int:
        """Bits per element: 4 for UINT4 and INT4, else 8 times ``size``."""
        return 4 if self in FOUR_BIT_TYPES else 8 * _SIZES[self]

    @property
    def size(self) -> int:
        """Bytes per element; a 4-bit type has none (two elements share a byte: use ``bits``)."""
        if self in FOUR_BIT_TYPES:
            raise invalid("DML_TENSOR_DATA_TYPE", "size", "must be asked of a type of whole bytes (UINT4 and INT4 "
                          "hold two elements to a byte: their size is 4 bits)", self.name)
        return _SIZES[self]

    @property
    def introduced(self) -> FeatureLevel:
        """The feature level that introduced the type: 6_3 for UINT4 and INT4, 1_0 for the rest (which operators
        take a type, and from which level, their support tables say)."""
        return FeatureLevel.FL_6_3 if self in FOUR_BIT_TYPES else FeatureLevel.FL_1_0

    @property
    def is_sub_byte(self) -> bool:
        """Whether elements are packed several to a byte (UINT4, INT4)."""
        return self in FOUR_BIT_TYPES

    @property
    def numpy(self) -> np.dtype:
        """The little-endian NumPy dtype of this type; for UINT4 and INT4, the dtype that holds one element
        unpacked (uint8, int8): NumPy has no 4-bit type, and their buffers hold packed bytes (``opendml.pack4``)."""
        return _NUMPY[self]

    @property
    def is_float(self) -> bool:
        return self in FLOAT_TYPES

    @property
    def is_integer(self) -> bool:
        return self in INTEGER_TYPES or self in FOUR_BIT_TYPES

    @property
    def is_signed(self) -> bool:
        return self in SIGNED_INTEGER_TYPES or self in FLOAT_TYPES or self is DataType.INT4

    @property
    def integer_range(self) -> tuple[int, int]:
        """(lowest, highest) value of an integer type."""
        if self in FOUR_BIT_TYPES:
            return (-8, 7) if self is DataType.INT4 else (0, 15)
        info = np.iinfo(self.numpy)
        return int(info.min), int(info.max)


_SIZES = {
    DataType.FLOAT32: 4, DataType.FLOAT16: 2, DataType.FLOAT64: 8,
    DataType.UINT8: 1, DataType.UINT16: 2, DataType.UINT32: 4, DataType.UINT64: 8,
    DataType.INT8: 1, DataType.INT16: 2, DataType.INT32: 4, DataType.INT64: 8,
}

_NUMPY = {dt: np.dtype(dt.name.lower()).newbyteorder("<") for dt in _SIZES}
_NUMPY.update({DataType.UINT4: np.dtype(np.uint8), DataType.INT4: np.dtype(np.int8)})

FLOAT_TYPES = frozenset({DataType.FLOAT32, DataType.FLOAT16, DataType.FLOAT64})
SIGNED_INTEGER_TYPES = frozenset({DataType.INT8, DataType.INT16, DataType.INT32, DataType.INT64})
UNSIGNED_INTEGER_TYPES = frozenset({DataType.UINT8, DataType.UINT16, DataType.UINT32, DataType.UINT64})
INTEGER_TYPES = SIGNED_INTEGER_TYPES | UNSIGNED_INTEGER_TYPES
ALL_TYPES = FLOAT_TYPES | INTEGER_TYPES
# Feature level 6_3's packed types: kept out of the sets above (which hold whole-byte types, as the support
# tables written with them mean), so that no operator takes them unless its rows name them.
FOUR_BIT_TYPES = frozenset({DataType.UINT4, DataType.INT4})

# The categories DirectML's support tables are written in (FLOAT64 apart: no operator here takes it).
FLOATS = frozenset({DataType.FLOAT32, DataType.FLOAT16})
SIGNED_32 = frozenset({DataType.INT32, DataType.INT16, DataType.INT8})
INTEGERS_32 = SIGNED_32 | frozenset({DataType.UINT32, DataType.UINT16, DataType.UINT8})
INTEGERS_64 = frozenset({DataType.INT64, DataType.UINT64})

_FROM_NUMPY = {np.dtype(dt.name.lower()): dt for dt in _SIZES}
# ml_dtypes' int4 and uint4 (one element a byte, unpacked), known by name so that NumPy alone imports here.
_FROM_NAME = {"int4": DataType.INT4, "uint4": DataType.UINT4}


def from_numpy(dtype: np.dtype) -> DataType:
    """The DataType of a NumPy dtype (either byte order), ml_dtypes' int4 and uint4 included; raises KeyError
    for unsupported dtypes."""
    dtype = np.dtype(dtype)
    if dtype.kind == "V" and dtype.name in _FROM_NAME:
        return _FROM_NAME[dtype.name]
    return _FROM_NUMPY[dtype.newbyteorder("=")]


def type_names(types: frozenset[DataType] | set[DataType]) -> str:
    """Names in DirectML's table order (FLOAT32, FLOAT16, INT64, ... UINT8)."""
    return ", ".join(dt.name for dt in sorted(types, key=_table_order))


_TABLE_ORDER = ["FLOAT64", "FLOAT32", "FLOAT16", "INT64", "INT32", "INT16", "INT8", "INT4",
                "UINT64", "UINT32", "UINT16", "UINT8", "UINT4"]


def _table_order(dt: DataType) -> int:
    return _TABLE_ORDER.index(dt.name)
