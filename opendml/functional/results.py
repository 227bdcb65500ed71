"""Where a call's results go: a new array of the caller's kind, or the caller's ``out=`` itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..device import Device
from ..errors import invalid, invalid_type
from .devices import _on_gpu
from .placement import _padded_empty


@dataclass
class _Output:
    """Where results go: ``array`` is of the device's kind; ``deliver`` hands the caller its kind back."""

    device: Device
    array: Any
    out: Any  # the caller's out=, or None
    like: Any  # the caller's primary input, whose kind a new result takes

    def deliver(self) -> Any:
        backend = self.device.backend
        if self.out is None:
            return backend.to_caller(self.array, self.like)
        if self.array is not self.out and isinstance(self.out, np.ndarray):
            self.out[...] = backend.to_caller(self.array, self.out)  # a host out= of a GPU computation
        return self.out


_OUT_KINDS = {"cpu": "a writeable NumPy array",
              "cuda": "a writeable NumPy array or a CUDA array (CuPy, PyTorch)"}


def _output(device: Device, out: Any, shape: tuple[int, ...], dtype: np.dtype, owner: str, like: Any) -> _Output:
    """The array results are written into: a new one, the caller's ``out`` itself, or (a host ``out`` of a
    GPU computation) a device array copied into it at the end. Anything whose memory cannot be written in
    place is refused before anything runs: a copy of it would be written and thrown away."""
    if out is None:
        return _Output(device, _padded_empty(device, shape, dtype)[0], None, like)
    backend = device.backend
    kind = _OUT_KINDS.get(backend.name, "a writeable array")
    if isinstance(out, np.ndarray):
        if not out.flags.writeable:
            raise invalid(owner, "out", "must be writeable", "a read-only array")
        array = out
    elif backend.xp is not np and _on_gpu(out):
        try:
            array = backend.as_array(out)  # the same memory (CuPy, DLPack)
        except Exception:
            raise invalid_type(owner, "out", f"must be {kind}", type(out).__name__) from None
    else:
        raise invalid_type(owner, "out", f"must be {kind}", type(out).__name__)
    if tuple(array.shape) != shape or array.dtype != dtype:
        raise invalid(owner, "out", f"must have shape {shape} and dtype {dtype}", f"{array.shape} {array.dtype}")
    if array is out and isinstance(out, np.ndarray) and backend.xp is not np:
        array = backend.xp.empty(shape, dtype)  # computed on the device, copied into ``out`` by ``deliver``
    return _Output(device, array, out, like)
