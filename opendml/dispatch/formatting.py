"""How resources print: as DxDispatch prints them (C++ ``ostream << value``: ``%g``, 6 significant digits)."""

from __future__ import annotations

import math

import numpy as np

from .. import DataType


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


def format_values(values: np.ndarray, data_type: DataType) -> str:
    """Elements on one line, comma separated.

    >>> format_values(np.array([-2.5, 0, 2.5], np.float16), DataType.FLOAT16)
    '-2.5, 0, 2.5'
    """
    return ", ".join(format_value(v, data_type) for v in values.tolist())


def format_verbose(values: np.ndarray, data_type: DataType) -> list[str]:
    """One line per element: index, value and its bytes in hex (``print`` with ``"verbose": true``).

    >>> format_verbose(np.array([1.0, -2.0], np.float16), DataType.FLOAT16)
    ['[0] 1 (0x3C00)', '[1] -2 (0xC000)']
    """
    width = len(str(max(len(values) - 1, 0)))
    digits = 2 * data_type.size
    bits = values.view(np.dtype(f"<u{data_type.size}")).tolist()
    return [f"[{k:>{width}}] {format_value(v, data_type)} (0x{b:0{digits}X})"
            for k, (v, b) in enumerate(zip(values.tolist(), bits))]
