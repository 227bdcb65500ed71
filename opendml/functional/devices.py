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
from ..dtypes import DataType, from_numpy, type_names
from ..errors import InvalidArgumentError, OpenDMLError, invalid, invalid_type
from ..feature_levels import NEWEST, FeatureLevel
from ..ops import BY_NAME

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
    refuse = invalid if isinstance(device, str) else invalid_type  # an unknown name is a value, a 3 a type
    raise refuse(owner, "device", f"must be a Device, a backend name ({', '.join(map(repr, backends.BACKENDS))}) "
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


def _as_array(device: Device, x: Any, owner: str, name: str, accepts: frozenset[DataType] | None = None) -> Any:
    """``x`` as an array of the device's kind (same memory where the protocols allow), type checked: the one
    place every functional call takes its arrays, so a type no operator takes (bool, complex; FLOAT64 where
    the operator's table does not list it) is refused here, naming the types the operator's ``name`` tensor takes
    at the device's level (``accepts``, where the caller is no operator: unravel_index's indices, opendml.compile's
    arguments, which every whole-byte type passes for the traced operators to check)."""
    try:
        array = device.backend.as_array(x)
    except OpenDMLError:
        raise
    except Exception:  # NumPy's or CuPy's own refusal (a ragged list, an object it cannot take)
        raise invalid_type(owner, name, "must be an array or a number", type(x).__name__) from None
    try:
        data_type = from_numpy(array.dtype)
    except KeyError:
        raise _refused(device, x, owner, name, str(array.dtype), accepts) from None
    if data_type is DataType.FLOAT64:
        # Taken where the operator's table at the device's level lists it for this tensor (CAST,
        # ELEMENT_WISE_IDENTITY, ELEMENT_WISE_IF), else refused (a list or a float of Python's is FLOAT64 too; a zero
        # point is converted exactly by its caller).
        taken = _accepted(owner, name, device.feature_level) if accepts is None else accepts
        if taken is None or data_type not in taken:
            raise _refused(device, x, owner, name, data_type.name, accepts)
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("<"))
    return array


def _refused(device: Device, x: Any, owner: str, name: str, got: str,
             accepts: frozenset[DataType] | None) -> InvalidArgumentError:
    """The refusal of an array whose type no operator takes: the types the operator takes for ``name`` at the
    device's level (any operator's types where ``owner`` names none), and for FLOAT64 how to cast."""
    level = device.feature_level
    accepted = _accepted(owner, name, level) if accepts is None else accepts
    requirement = ("must be FLOAT32, FLOAT16 or a sized integer type" if accepted is None
                   else f"must be one of {type_names(accepted)}" + ("" if accepts else f" at feature level {level}"))
    if got == DataType.FLOAT64.name and (accepted is None or DataType.FLOAT32 in accepted):
        argument = _ARGUMENTS.get(name, name)
        ref = argument if argument.isidentifier() else "x"  # opendml.compile's "argument 0"
        cast = f"{ref}.to(torch.float32)" if type(x).__module__.startswith("torch") else \
            f"{ref}.astype(np.float32)" if hasattr(x, "astype") else f"np.asarray({ref}, np.float32)"
        got += f"; opendml has no FLOAT64 math: cast {_function(owner)}'s {argument} to float32, {cast}"
    return invalid(owner, f"{name}.DataType", requirement, got)


# The functional API's argument of each tensor it takes.
_ARGUMENTS = {"InputTensor": "x", "ScaleTensor": "scale", "ZeroPointTensor": "zero_point"}


def _accepted(owner: str, name: str, level: FeatureLevel) -> frozenset[DataType] | None:
    """The types the support table in force at ``level`` takes for the operator's tensor ``name``; None where
    ``owner`` names no operator with that tensor (``opendml.compile``)."""
    op = BY_NAME.get(owner)
    row = None if op is None else op.schema.row_at(max(level, op.schema.introduced))
    return None if row is None or name not in row.types else frozenset(row.types[name])


def _function(owner: str) -> str:
    """The public function that runs operator ``owner`` (``opendml.clip`` for ELEMENT_WISE_CLIP)."""
    if owner.startswith("opendml."):
        return owner
    op = BY_NAME.get(owner)
    python = op.api.python if op is not None and op.api is not None else owner.removeprefix("ELEMENT_WISE_").lower()
    return f"opendml.{python}"
