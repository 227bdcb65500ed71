"""What a call on Dask arrays checks on the client, before any graph is built."""

from __future__ import annotations

import math
from typing import Any

from .. import backends
from ..device import Device
from ..errors import invalid
from ..functional.devices import _backend_device


def refuse_out(owner: str, out: Any) -> None:
    """A Dask array is never written in place: a call with a Dask argument returns a new Dask array."""
    if out is not None:
        raise invalid(owner, "out", "must be None when an argument is a Dask array (the result is a new Dask "
                      "array)", type(out).__name__)


def known_shape(owner: str, field: str, array: Any) -> tuple[int, ...]:
    """The shape of a Dask array, which must be known (the rules and the merge need every size)."""
    shape = tuple(array.shape)
    if any(isinstance(n, float) and math.isnan(n) for n in shape):
        raise invalid(owner, f"{field} shape", "must be known (Dask's compute_chunk_sizes() finds unknown chunk "
                      "sizes)", shape)
    return tuple(int(n) for n in shape)


def validation_device(device: object) -> object:
    """The device a call's rules are checked on, on the client. A Device is itself; None and a backend's name
    mean a default device at the newest level, whose rules are the same on every backend, so the CPU's checks
    them (the client need not have the workers' GPU). Anything else is returned as it is, for the call to
    refuse with its usual message."""
    if isinstance(device, Device):
        return device
    if device is None or (isinstance(device, str) and device.strip().lower() in backends.BACKENDS):
        return _backend_device("cpu")
    return device
