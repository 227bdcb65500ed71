"""The cached fast paths: a call on NumPy (or CuPy) arrays laid out like one already run goes straight to its
kernel, and a call repeated on the same arrays runs a call prepared for them.

The declared operators' functions (``declared``: ``clip``, ``threshold``, ``relu``, ...) try them on their first
lines, before anything else: they are the whole per-call cost of a repeated call on small arrays, so each stays
one call deep. ``argmin`` and ``argmax`` (the indices
alone) take ``_direct`` by the layouts they were run on (``_remember_reduction``).

- ``_repeated``: the same ``x`` and ``out`` objects (held weakly: a freed array's entry can never match a new
  one, whatever its address), the same scalar objects, the same device, and each array's dtype, shape and
  strides as they were, ``out`` still writeable. Then nothing that the first call checked can have changed:
  a NumPy array's data never moves while a weak reference to it exists (``resize`` refuses), a CuPy array's
  never at all (its ``data`` is read-only), and the kernel is handed the arrays themselves at each call, so
  even memory that moved would be read where it is now. It runs the kernel's call prepared for that layout
  (``CpuKernel.prepare_arrays``, the generated ``run.prepare_layout``; on CUDA ``ElementwiseKernel.
  prepare_arrays``, a launch on the arrays' addresses with its kernels, grids and scalars fixed): no
  description, buffer, binding or view is made, and nothing is allocated.
- ``_direct``: any arrays of a layout seen before (a new ``x``, or ``out=None``): the key is built from the
  scalars, the array type and the layouts, and alignment and overlaps are checked, then the same prepared
  call runs (a CUDA launch picks its 16-byte chunk kernel or the kernel of any strides by the addresses). A
  call on the arrays of the call before it is remembered for ``_repeated`` too.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from ..device import Device
from ..ops.elementwise import ScaleBias
from . import devices
from .placement import _plain

# The one dict of default devices (``devices`` fills it; the fast path only reads it), bound here by
# assignment: CPython compiles a method call on a name bound by an import as an attribute load and a call
# (as for a module), which would make a bound method for ``.get`` on every call.
_default_devices = devices._default_devices

# Calls on host arrays shaped like one already run: (device, arguments, layouts) -> the kernel's call over
# arrays of those layouts. The first call validated the description (every rule of the SPEC); a call with
# the same key has the same description, so it runs the kernel on its arrays directly, skipping
# descriptions, buffers and bindings. Only layouts a description states exactly are remembered
# (``_plain``), and a call is taken here only when nothing would have been copied: aligned arrays, a
# writeable ``out`` that is ``x`` or shares no memory with it.
# A reduction's entry also says the shape and dtype of the new array a call without ``out`` writes (None: ``x``'s,
# an element-wise call's).
_direct_runs: dict[Any, tuple[Callable[[Any, Any], None], tuple[tuple[int, ...], Any] | None]] = {}
_DIRECT_LIMIT = 1024

Repeats = dict[tuple[int, int], "_Repeat"]


def _exact(value: Any) -> Any:
    """A cache key part that tells apart what == does not: -0.0 from 0.0, 1 from 1.0 and True.

    An ``int``, a ``str`` or None is its own key (the common arguments: an axis, a name, a default): each equals
    only values of its own type, and every value of another type is keyed by a tuple of its type and repr."""
    kind = type(value)
    if kind is int or kind is str or value is None:
        return value
    return (kind, repr(value))


# The array types the fast paths take, with the backend whose default device a call without ``device=`` runs
# on: NumPy's, and a GPU backend's (CuPy's) once a call on its arrays has been remembered (``_remember``), so
# that this module never imports CuPy.
_array_types: dict[type, str] = {np.ndarray: "cpu"}


def _direct_key(device: Device | None, key: Any, x: Any, out: Any) -> Any:
    layout = None if out is None else (out is x, out.dtype, out.shape, out.strides)
    return (device, key, type(x), x.dtype, x.shape, x.strides, layout)


def _direct(device: object, key: Any, x: Any, out: Any, entries: Repeats | None = None,
            scalars: tuple[Any, Any, Any] = (None, None, None)) -> Any:
    """The result of a call on NumPy (or CuPy) arrays run straight through its cached kernel, or None if it
    cannot be. A call on the same ``x`` and ``out`` as the call before it is remembered in ``entries`` for
    ``_repeated`` (the arrays' layout was seen with other arrays first, so the checked path never saw these)."""
    kind = type(x)
    backend = _array_types.get(kind)
    if backend is None or not (out is None or type(out) is kind):
        return None
    if device is None or type(device) is str:
        resolved = _default_devices.get(backend if device is None else device)
    elif type(device) is Device:
        resolved = device
    else:
        return None
    if resolved is None:  # no call has made that default device yet
        return None
    try:
        found = _direct_runs.get(_direct_key(resolved, key, x, out))
    except TypeError:  # an unhashable argument (a list as ScaleBias): the ordinary path handles it
        return None
    if found is None:
        return None
    run, made = found
    if kind is np.ndarray:
        result = _host_result(x, out, made)
    else:
        result = _device_result(resolved, x, out, made)
    if result is None:
        return None
    run(x, result)
    if entries is not None and out is not None:
        _seen(entries, x, out, scalars, device, resolved, run)
    return result


def _host_result(x: np.ndarray, out: np.ndarray | None, made: tuple[tuple[int, ...], Any] | None = None
                 ) -> np.ndarray | None:
    """Where a direct call on NumPy arrays writes: ``out``, a new array (``made``: its shape and dtype, else
    ``x``'s), or None where the ordinary path must take the call (it raises, stages, or accepts an exact
    alias of two array objects)."""
    if not x.flags.aligned:
        return None
    if out is None:
        return np.empty(x.shape, x.dtype) if made is None else np.empty(*made)
    flags = out.flags
    if not (flags.writeable and flags.aligned) or (out is not x and np.may_share_memory(out, x)):
        return None
    return out


def _device_result(device: Device, x: Any, out: Any, made: tuple[tuple[int, ...], Any] | None = None) -> Any:
    """As ``_host_result`` for arrays of a GPU backend (CuPy's: always writeable; aligned by address)."""
    itemsize = x.itemsize
    if x.data.ptr % itemsize:
        return None
    xp = device.backend.xp
    if out is None:  # the array type's own constructor: ``empty`` is a Python function around it
        return xp.ndarray(x.shape, x.dtype) if made is None else xp.ndarray(*made)
    if out.data.ptr % itemsize or (out is not x and xp.may_share_memory(out, x)):
        return None
    return out


def _dead() -> None:
    return None


# The arrays of the last call ``_direct`` ran, held weakly: the same two objects seen twice in a row are
# remembered for ``_repeated`` (remembering every pair would cost each call on new arrays an entry; new
# arrays made where freed ones lay, the same ids, are not the same objects).
_last_pair: list[Callable[[], Any]] = [_dead, _dead]


def _seen(entries: Repeats, x: np.ndarray, out: np.ndarray, scalars: tuple[Any, Any, Any], device: object,
          resolved: Device, run: Callable[[Any, Any], None]) -> None:
    if _last_pair[0]() is not x or _last_pair[1]() is not out:
        _last_pair[:] = weakref.ref(x), weakref.ref(out)
    elif all(_immutable(s) for s in scalars):
        _add(entries, _Repeat(x, out, scalars, device, resolved, run))


class _Repeat:
    """A call remembered for a repeat on the same arrays: what must be the same, and the prepared call."""

    __slots__ = ("default", "device", "out", "out_layout", "resolved", "run", "scalars", "x", "x_layout")
    x: Callable[[], Any]  # weak references: the array, or None once it is freed
    out: Callable[[], Any]
    default: str | None

    def __init__(self, x: np.ndarray, out: np.ndarray, scalars: tuple[Any, Any, Any], device: object,
                 resolved: Device, run: Callable[[Any, Any], None]) -> None:
        self.x = weakref.ref(x)
        self.out = weakref.ref(out)
        self.scalars = scalars
        self.device = device
        self.resolved = resolved
        # A backend name (or None: the arrays' backend) finds its default device at each call: the one the call
        # ran on.
        self.default = None if type(device) is Device else (
            resolved.backend.name if device is None else str(device).strip().lower())
        self.x_layout = (x.dtype, x.shape, x.strides)
        self.out_layout = (out.dtype, out.shape, out.strides)
        self.run = run


def _repeated(entries: Repeats, x: Any, out: Any, device: object, s0: Any, s1: Any, s2: Any) -> Any:
    """``out`` once the call ran, where it repeats a call remembered in ``entries`` (the same arrays, scalars
    and device, each array laid out as it was); None otherwise."""
    entry = entries.get((id(x), id(out)))
    if entry is None or entry.x() is not x or entry.out() is not out or device is not entry.device:
        return None
    scalars = entry.scalars
    if s0 is not scalars[0] or s1 is not scalars[1] or s2 is not scalars[2]:
        return None
    if entry.default is not None and _default_devices.get(entry.default) is not entry.resolved:
        return None
    dtype, shape, strides = entry.x_layout
    if x.dtype is not dtype or x.shape != shape or x.strides != strides:  # ``x.shape = ...`` changes it in place
        return None
    if out is not x:
        dtype, shape, strides = entry.out_layout
        if out.dtype is not dtype or out.shape != shape or out.strides != strides:
            return None
    if type(out) is np.ndarray and not out.flags.writeable:
        return None  # the ordinary path raises
    entry.run(x, out)
    return out


def _immutable(value: Any) -> bool:
    """Whether the object stays equal to itself: a repeat is recognized by its scalars' identity."""
    if value is None or type(value) in (bool, int, float, ScaleBias) or isinstance(value, np.generic):
        return True
    return type(value) is tuple and all(_immutable(v) for v in value)


def _remember(device: Device, key: Any, x: Any, out: Any, result: Any, compiled: Any, device_arg: object = None,
              entries: Repeats | None = None, scalars: tuple[Any, Any, Any] = (None, None, None)) -> None:
    """Remember a call that ran on ``x`` and ``result`` (``out``, or the new array) themselves, nothing
    copied: for ``_direct`` by its layouts, and in ``entries`` for ``_repeated`` by its arrays."""
    direct_key = _key_of_run(device, key, x, out, result)
    if direct_key is None:
        return
    run = _prepared(getattr(compiled, "kernel", None), x, result)
    if run is None:
        return
    _store(device, direct_key, run, None)
    if entries is None or out is None or not all(_immutable(s) for s in scalars):
        return
    _add(entries, _Repeat(x, out, scalars, device_arg, device, run))


def _key_of_run(device: Device, key: Any, x: Any, out: Any, result: Any) -> Any:
    """The ``_direct`` key of a call that ran on ``x`` and ``result`` themselves, or None where it cannot be
    remembered: arrays of another kind than the device's kernels run on, a result that is not ``out`` or
    new, a layout that a description does not state exactly, or an unhashable argument."""
    kind = device.backend.xp.ndarray  # the arrays the device's kernels run on themselves
    if type(x) is not kind or type(result) is not kind or not (out is None or out is result):
        return None
    if not _plain(x) or not _plain(result):
        return None
    try:
        direct_key = _direct_key(device, key, x, out)
        hash(direct_key)
    except TypeError:
        return None
    return direct_key


def _store(device: Device, direct_key: Any, run: Callable[[Any, Any], None],
           made: tuple[tuple[int, ...], Any] | None) -> None:
    _array_types.setdefault(device.backend.xp.ndarray, device.backend.name)
    if len(_direct_runs) >= _DIRECT_LIMIT:
        _direct_runs.clear()
    _direct_runs[direct_key] = (run, made)


def _remember_reduction(device: Device, key: Any, x: Any, out: Any, result: Any, compiled: Any, pad: int) -> None:
    """Remember a reduction that ran on ``x`` and ``result`` themselves (``out``, or the new array), the
    kernel's views of them taking ``pad`` leading 1s, for ``_direct`` by its layouts: a call without ``out``
    makes a new array of ``result``'s shape and dtype."""
    direct_key = _key_of_run(device, key, x, out, result)
    if direct_key is None or x.ndim == 0:
        return
    lead = (None,) * pad
    run = _prepared(getattr(compiled, "kernel", None), x[lead], result[lead])
    if run is None:
        return
    if pad:
        padded = run

        def run(x: Any, result: Any) -> None:
            padded(x[lead], result[lead])

    _store(device, direct_key, run, (result.shape, result.dtype) if out is None else None)


def _add(entries: Repeats, entry: _Repeat) -> None:
    if len(entries) >= _DIRECT_LIMIT:
        entries.clear()
    entries[(id(entry.x()), id(entry.out()))] = entry


def _prepared(kernel: Any, x: Any, result: Any) -> Callable[[Any, Any], None] | None:
    """The kernel's call for arrays laid out as ``x`` and ``result``, taking them (holding neither); None for
    a kernel that runs on neither prepared calls nor arrays, or one still being compiled (a CPU kernel's NumPy
    tier, ``backends.tiers``: the call after it is compiled is remembered with the compiled kernel's call)."""
    if getattr(kernel, "pending", False):
        return None
    prepare = getattr(kernel, "prepare_arrays", None)
    run = None if prepare is None else prepare([x], result)
    if run is not None:
        return run  # type: ignore[no-any-return]
    if not hasattr(kernel, "run_arrays"):
        return None

    def run_arrays(x: Any, result: Any) -> None:
        kernel.run_arrays([x], result)

    return run_arrays
