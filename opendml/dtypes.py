"""DirectML tensor data types: names, enum values, sizes, NumPy mapping and categories."""

from __future__ import annotations

import enum

import numpy as np

from .enums import parse_enum


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
    def size(self) -> int:
        """Bytes per element."""
        return _SIZES[self]

    @property
    def numpy(self) -> np.dtype:
        """The little-endian NumPy dtype of this type."""
        return _NUMPY[self]

    @property
    def is_float(self) -> bool:
        return self in FLOAT_TYPES

    @property
    def is_integer(self) -> bool:
        return self in INTEGER_TYPES

    @property
    def is_signed(self) -> bool:
        return self in SIGNED_INTEGER_TYPES or self in FLOAT_TYPES

    @property
    def integer_range(self) -> tuple[int, int]:
        """(lowest, highest) value of an integer type."""
        info = np.iinfo(self.numpy)
        return int(info.min), int(info.max)


_SIZES = {
    DataType.FLOAT32: 4, DataType.FLOAT16: 2, DataType.FLOAT64: 8,
    DataType.UINT8: 1, DataType.UINT16: 2, DataType.UINT32: 4, DataType.UINT64: 8,
    DataType.INT8: 1, DataType.INT16: 2, DataType.INT32: 4, DataType.INT64: 8,
}

_NUMPY = {dt: np.dtype(dt.name.lower()).newbyteorder("<") for dt in _SIZES}

FLOAT_TYPES = frozenset({DataType.FLOAT32, DataType.FLOAT16, DataType.FLOAT64})
SIGNED_INTEGER_TYPES = frozenset({DataType.INT8, DataType.INT16, DataType.INT32, DataType.INT64})
UNSIGNED_INTEGER_TYPES = frozenset({DataType.UINT8, DataType.UINT16, DataType.UINT32, DataType.UINT64})
INTEGER_TYPES = SIGNED_INTEGER_TYPES | UNSIGNED_INTEGER_TYPES
ALL_TYPES = FLOAT_TYPES | INTEGER_TYPES

# The categories DirectML's support tables are written in (FLOAT64 apart: no operator here takes it).
FLOATS = frozenset({DataType.FLOAT32, DataType.FLOAT16})
SIGNED_32 = frozenset({DataType.INT32, DataType.INT16, DataType.INT8})
INTEGERS_32 = SIGNED_32 | frozenset({DataType.UINT32, DataType.UINT16, DataType.UINT8})
INTEGERS_64 = frozenset({DataType.INT64, DataType.UINT64})

_FROM_NUMPY = {np.dtype(dt.name.lower()): dt for dt in _SIZES}


def from_numpy(dtype: np.dtype) -> DataType:
    """The DataType of a NumPy dtype (either byte order); raises KeyError for unsupported dtypes."""
    return _FROM_NUMPY[np.dtype(dtype).newbyteorder("=")]


def type_names(types: frozenset[DataType] | set[DataType]) -> str:
    """Names in DirectML's table order (FLOAT32, FLOAT16, INT64, ... UINT8)."""
    return ", ".join(dt.name for dt in sorted(types, key=_table_order))


_TABLE_ORDER = ["FLOAT64", "FLOAT32", "FLOAT16", "INT64", "INT32", "INT16", "INT8",
                "UINT64", "UINT32", "UINT16", "UINT8"]


def _table_order(dt: DataType) -> int:
    return _TABLE_ORDER.index(dt.name)
