"""How resources print: as DxDispatch prints them (C++ ``ostream << value``: ``%g``, 6 significant digits)."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from .. import DataType

_CHUNK = 1 << 16  # elements formatted at a time: a large resource never becomes one string


def format_value(value: float | int, data_type: DataType) -> str:
    """One element as DxDispatch writes it; 8-bit integers are written as numbers, not characters.

    >>> format_value(2.5, DataType.FLOAT32), format_value(1234567.0, DataType.FLOAT32)
    ('2.5', '1.23457e+06')
    >>> format_value(float("-inf"), DataType.FLOAT16), format_value(-7, DataType.INT8)
    ('-inf', '-7')
    """
    if data_type.is_float:
        value = float(value)
        return "nan" if math.isnan(value) else format(value, "g")
    return str(int(value))


def format_chunks(values: np.ndarray, data_type: DataType, chunk: int = _CHUNK) -> Iterator[str]:
    """Elements, comma separated, ``chunk`` at a time: joined with ", " they make one line.

    >>> list(format_chunks(np.array([1, 2, 3], np.int8), DataType.INT8, chunk=2))
    ['1, 2', '3']
    """
    # One conversion per chunk, formatted by C code (format_value's rules: Python writes every NaN as "nan").
    write = "{:g}".format if data_type.is_float else str
    for begin in range(0, len(values), chunk):
        yield ", ".join(map(write, values[begin:begin + chunk].tolist()))


def format_values(values: np.ndarray, data_type: DataType) -> str:
    """Elements on one line, comma separated.

    >>> format_values(np.array([-2.5, 0, 2.5], np.float16), DataType.FLOAT16)
    '-2.5, 0, 2.5'
    """
    return ", ".join(format_chunks(values, data_type))


def format_verbose(values: np.ndarray, data_type: DataType, chunk: int = _CHUNK) -> Iterator[str]:
    """One line per element: index, value and its bytes in hex (``print`` with ``"verbose": true``).

    >>> list(format_verbose(np.array([1.0, -2.0], np.float16), DataType.FLOAT16))
    ['[0] 1 (0x3C00)', '[1] -2 (0xC000)']
    """
    width = len(str(max(len(values) - 1, 0)))
    digits = 2 * data_type.size
    bits = values.view(np.dtype(f"<u{data_type.size}"))
    for begin in range(0, len(values), chunk):
        pairs = zip(values[begin:begin + chunk].tolist(), bits[begin:begin + chunk].tolist())
        for k, (v, b) in enumerate(pairs, begin):
            yield f"[{k:>{width}}] {format_value(v, data_type)} (0x{b:0{digits}X})"
