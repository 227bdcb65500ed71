"""Buffers (device memory) and buffer bindings (DML_BUFFER_BINDING)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .device import Device


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


@dataclass(frozen=True)
class BufferBinding:
    """DML_BUFFER_BINDING: a tensor's range in a buffer; ``size_in_bytes=None`` means to the buffer's end."""

    buffer: Buffer
    offset: int = 0
    size_in_bytes: int | None = None
