"""ONNX element types and the DirectML data types that hold them."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from onnx import TensorProto, helper

from ..dtypes import DataType

FLOAT = TensorProto.FLOAT
FLOAT16 = TensorProto.FLOAT16
DOUBLE = TensorProto.DOUBLE
INT8, INT16, INT32, INT64 = TensorProto.INT8, TensorProto.INT16, TensorProto.INT32, TensorProto.INT64
UINT8, UINT16, UINT32, UINT64 = TensorProto.UINT8, TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64
BOOL = TensorProto.BOOL
INT4, UINT4 = TensorProto.INT4, TensorProto.UINT4

FLOATS = frozenset({FLOAT, FLOAT16})  # the ONNX float types opendml's operators accept (no DOUBLE, no BFLOAT16)
SIGNED = frozenset({INT8, INT16, INT32, INT64})
INTEGERS = SIGNED | frozenset({UINT8, UINT16, UINT32, UINT64})

_TO_DATA_TYPE = {
    FLOAT: DataType.FLOAT32, FLOAT16: DataType.FLOAT16, DOUBLE: DataType.FLOAT64,
    INT8: DataType.INT8, INT16: DataType.INT16, INT32: DataType.INT32, INT64: DataType.INT64,
    UINT8: DataType.UINT8, UINT16: DataType.UINT16, UINT32: DataType.UINT32, UINT64: DataType.UINT64,
    INT4: DataType.INT4, UINT4: DataType.UINT4,  # feature level 6_3's, packed two a byte
}


# ONNX types DirectML has no type of, held in one as DirectML's ONNX execution provider holds them: BOOL as
# UINT8 0 and 1 (what ELEMENT_WISE_IS_NAN writes and ELEMENT_WISE_LOGICAL_NOT reads). Apart from _TO_DATA_TYPE,
# whose inverse names each DirectML type's own ONNX type.
_HELD_AS = {BOOL: DataType.UINT8}


def data_type(onnx_type: int) -> DataType | None:
    """The DirectML data type of an ONNX element type (BOOL: UINT8), or None where DirectML has none (float8,
    int2, ...)."""
    return _TO_DATA_TYPE.get(onnx_type, _HELD_AS.get(onnx_type))


def onnx_type_of(dtype: np.dtype) -> int:
    """The ONNX element type of a NumPy dtype (ml_dtypes' float8 and int4 included); 0 where ONNX has none."""
    try:
        return int(helper.np_dtype_to_tensor_dtype(np.dtype(dtype)))
    except (KeyError, TypeError, ValueError):
        return TensorProto.UNDEFINED


def numpy_dtype(onnx_type: int) -> np.dtype:
    """The NumPy dtype ONNX holds an element type in (ml_dtypes' int4 and uint4 for INT4 and UINT4)."""
    return np.dtype(helper.tensor_dtype_to_np_dtype(onnx_type))


def type_name(onnx_type: int) -> str:
    """ONNX's name of an element type: ``FLOAT``, ``UINT8``, ``FLOAT8E4M3FN``."""
    try:
        return TensorProto.DataType.Name(onnx_type)
    except ValueError:
        return f"element type {onnx_type}"


# DirectML's tables' order.
_ORDER = [FLOAT, FLOAT16, DOUBLE, INT64, INT32, INT16, INT8, INT4, UINT64, UINT32, UINT16, UINT8, UINT4, BOOL]


def type_names(types: Iterable[int]) -> str:
    """Names in the order of DirectML's support tables: floats, then signed and unsigned integers, widest first."""
    return ", ".join(type_name(t) for t in sorted(types, key=lambda t: (_ORDER.index(t) if t in _ORDER else 99, t)))
