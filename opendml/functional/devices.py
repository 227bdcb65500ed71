"""Which device a call runs on, and its arguments as arrays of that device's kind.

Without ``device=``, a call runs where its primary array lies: on CUDA for arrays in GPU memory (CuPy,
PyTorch and others, through their array protocols), else on the CPU, each at its newest feature level.
Arguments are taken in their own memory where the protocols allow.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import backends
from ..device import Device, shared_device
from ..dtypes import from_numpy
from ..errors import OpenDMLError, invalid
from ..feature_levels import NEWEST

_default_devices: dict[str, Device] = {}


def default_device(x: Any = None) -> Device:
    """The device used when none is given: CUDA for arrays in GPU memory, else the CPU; newest level."""
    return _backend_device("cuda" if _on_gpu(x) else "cpu")


def _backend_device(name: str) -> Device:
    """The one default device (newest level) of a backend: the device a pickled ``Device(name)`` unpickles
    to in this process, so that tasks sent to a Dask worker with or without a device share one compile cache."""
    if name not in _default_devices:
        _default_devices[name] = shared_device(name, NEWEST.label, None)
    return _default_devices[name]


def _resolve_device(device: object, x: Any, owner: str) -> Device:
    """``device=`` as a Device: a Device as is, a backend name's default device, None the array's."""
    if device is None:
        return default_device(x)
    if isinstance(device, Device):
        return device
    if isinstance(device, str) and device.strip().lower() in backends.BACKENDS:
        return _backend_device(device.strip().lower())
    raise invalid(owner, "device", f"must be a Device, a backend name ({', '.join(map(repr, backends.BACKENDS))}) "
                  "or None", repr(device))


def _on_gpu(x: Any) -> bool:
    """Whether ``x`` lives in CUDA memory (CuPy, PyTorch and others, through their array protocols)."""
    if hasattr(x, "__cuda_array_interface__"):
        return True
    try:
        return x.__dlpack_device__()[0] in (2, 3, 13)  # kDLCUDA, kDLCUDAHost, kDLCUDAManaged
    except Exception:
        return False


def _to_host(value: Any) -> np.ndarray:
    """A NumPy copy of an array in GPU memory (DLPack, else through CuPy's CUDA array interface)."""
    try:
        return np.from_dlpack(value, device="cpu", copy=True)
    except Exception:
        pass
    import cupy  # only GPU arrays reach this, and they come with CuPy or a DLPack export to the host

    return cupy.asnumpy(cupy.asarray(value))


def _as_array(device: Device, x: Any, owner: str, name: str) -> Any:
    """``x`` as an array of the device's kind (same memory where the protocols allow), type checked."""
    try:
        array = device.backend.as_array(x)
    except OpenDMLError:
        raise
    except Exception:  # NumPy's or CuPy's own refusal (a ragged list, an object it cannot take)
        raise invalid(owner, name, "must be an array or a number", type(x).__name__) from None
    try:
        from_numpy(array.dtype)
    except KeyError:
        raise invalid(owner, f"{name}.DataType", "must be one of FLOAT32, FLOAT16, FLOAT64 or a sized integer",
                      array.dtype) from None
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("<"))
    return array
