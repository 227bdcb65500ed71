"""Buffers (device memory) and buffer bindings (DML_BUFFER_BINDING)."""

from __future__ import annotations

import reprlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .dtypes import DataType, from_numpy
from .errors import invalid

if TYPE_CHECKING:
    from .device import Device

MAX_BUFFER_BYTES = int(np.iinfo(np.intp).max)  # the most bytes a NumPy (or CuPy) array can index

_ACCEPTED = ("must be bytes, or an array (or nested list) of numbers of a DirectML data type ("
             + ", ".join(t.name for t in DataType if t is not DataType.UNKNOWN) + ")")


class Buffer:
    """A range of device memory, zero-filled when created by ``Device.create_buffer``.

    Backends subclass it; ``address`` is where its first byte lives, so that bindings of two buffers
    over the same memory are still seen to overlap.
    """

    def __init__(self, device: Device, size_in_bytes: int) -> None:
        self.device = device
        self.size_in_bytes = size_in_bytes

    @property
    def address(self) -> int:
        raise NotImplementedError

    def to_numpy(self) -> np.ndarray:
        """The buffer's bytes, as a new uint8 array on the host."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.size_in_bytes} bytes on {self.device}>"

    def __reduce__(self) -> Any:
        """Refused: a buffer is memory of one device in one process (what a binding's address names), so
        a copy elsewhere could not be the same buffer. Send its bytes (``to_numpy()``) or the array instead
        and make a buffer where they arrive (``Device.buffer_from``)."""
        raise invalid("Buffer", "pickling", "is not supported (a buffer is device memory of one process: send "
                      "buffer.to_numpy() or the array, and call Device.buffer_from where it arrives)", repr(self))


@dataclass(frozen=True)
class BufferBinding:
    """DML_BUFFER_BINDING: a tensor's range in a buffer; ``size_in_bytes=None`` means to the buffer's end."""

    buffer: Buffer
    offset: int = 0
    size_in_bytes: int | None = None


def host_array(array: Any) -> np.ndarray:
    """What ``Device.buffer_from`` copies, as a NumPy array laid out as DirectML's bytes (``directml_layout``):
    the one conversion every array entering the library as bytes goes through (buffers, ConstantNodes,
    ``Graph.constant``, ``opendml.compile``'s held values).

    Bytes are taken as they are, anything else through ``np.asarray``, refused unless its elements are of a
    DirectML data type: strings, booleans, complex numbers, Python objects and ragged lists have no DirectML
    layout.
    """
    return directml_layout(checked_array(array))


def checked_array(array: Any) -> np.ndarray:
    """``array`` as a NumPy array as it is (``np.asarray``; bytes as uint8), type checked as ``host_array``."""
    if isinstance(array, (bytes, bytearray)):
        return np.frombuffer(array, dtype=np.uint8)
    try:
        host = np.asarray(array)
    except (ValueError, TypeError):  # a ragged list, or an object that refuses to be an array
        raise invalid("Device", "array", _ACCEPTED, f"{_describe(array)}, which NumPy cannot make an array of"
                      ) from None
    check_buffer_dtype(host.dtype, array)
    return host


def directml_layout(host: np.ndarray) -> np.ndarray:
    """``host`` in row-major order and little-endian, as DirectML's bytes are: the array itself where it already
    is, else a copy. Its raw bytes (``.view(np.uint8)``, ``.tobytes()``) are then the values DirectML reads; a
    big-endian array's raw bytes, read as little-endian, are other numbers (1.5 as >f4 reads 6.9e-41)."""
    if not host.flags.c_contiguous:  # never a 0-d array, which np.ascontiguousarray would make 1-d
        host = np.ascontiguousarray(host)
    little = host.dtype.newbyteorder("<")
    return host if host.dtype == little else host.astype(little)


def check_buffer_dtype(dtype: np.dtype, array: Any) -> None:
    """Refuse an array whose element type is not one of DirectML's (``array`` is named in the error)."""
    try:
        from_numpy(dtype)
    except (KeyError, TypeError):
        got = _describe(array) if isinstance(array, (list, tuple, str)) else type(array).__name__
        raise invalid("Device", "array", _ACCEPTED, "None" if array is None else f"{got} of dtype {dtype}"
                      ) from None


def _describe(value: Any) -> str:
    return f"{type(value).__name__} {reprlib.repr(value)}"
