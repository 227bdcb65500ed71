"""The cached fast path: a call on NumPy arrays laid out like one already run goes straight to its kernel.

``clip`` and ``threshold`` try it on their first lines, before anything else: it is the whole per-call
cost of a repeated call on small arrays, so it stays one call deep.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..device import Device
from ..operator import CompiledOperator
from . import devices
from .placement import _plain

# The one dict of default devices (``devices`` fills it; the fast path only reads it), bound here by
# assignment: CPython compiles a method call on a name bound by an import as an attribute load and a call
# (as for a module), which would make a bound method for ``.get`` on every call.
_default_devices = devices._default_devices

# Calls on host arrays shaped like one already run: (device, arguments, layouts) -> the CPU kernel. The
# first call validated the description (every rule of the SPEC); a call with the same key has the same
# description, so it runs the kernel on its arrays directly, skipping descriptions, buffers and bindings.
# Only layouts a description states exactly are remembered (``_plain``), and a call is taken here only
# when nothing would have been copied: aligned arrays, a writeable ``out`` that is ``x`` or shares no
# memory with it.
_direct_runs: dict[Any, Any] = {}
_DIRECT_LIMIT = 1024


def _exact(value: Any) -> Any:
    """A cache key part that tells apart what == does not: -0.0 from 0.0, 1 from 1.0 and True."""
    return (type(value), repr(value))


def _direct_key(device: Device | None, key: Any, x: Any, out: Any) -> Any:
    layout = None if out is None else (out is x, out.dtype, out.shape, out.strides)
    return (device, key, x.dtype, x.shape, x.strides, layout)


def _direct(device: object, key: Any, x: Any, out: Any) -> Any:
    """The result of a call on NumPy arrays run straight through its cached kernel, or None if it cannot be."""
    if type(x) is not np.ndarray or not (out is None or type(out) is np.ndarray):
        return None
    if device is None or type(device) is str:
        resolved = _default_devices.get("cpu" if device is None else device)
    elif type(device) is Device:
        resolved = device
    else:
        return None
    try:
        kernel = _direct_runs.get(_direct_key(resolved, key, x, out))
    except TypeError:  # an unhashable argument (a list as ScaleBias): the ordinary path handles it
        return None
    if kernel is None or not x.flags.aligned:
        return None
    if out is None:
        result = np.empty(x.shape, x.dtype)
    else:
        flags = out.flags
        if not (flags.writeable and flags.aligned) or (out is not x and np.may_share_memory(out, x)):
            return None  # the ordinary path raises, stages, or accepts an exact alias of two array objects
        result = out
    kernel.run_arrays([x], result)
    return result


def _remember(device: Device, key: Any, x: Any, out: Any, compiled: CompiledOperator | None) -> None:
    kernel = getattr(compiled, "kernel", None)
    if not hasattr(kernel, "run_arrays") or type(x) is not np.ndarray or not (out is None or type(out) is np.ndarray):
        return
    if not _plain(x) or (out is not None and not _plain(out)):
        return
    try:
        direct_key = _direct_key(device, key, x, out)
        hash(direct_key)
    except TypeError:
        return
    if len(_direct_runs) >= _DIRECT_LIMIT:
        _direct_runs.clear()
    _direct_runs[direct_key] = kernel
