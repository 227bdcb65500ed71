"""The fast path of ``argmin`` and ``argmax`` on PyTorch tensors in GPU memory: a call laid out like one already
run launches its kernel on the tensors' own addresses, on PyTorch's current stream.

The ordinary path takes a tensor through DLPack into a CuPy array (and a new result back the same way), which
costs more than the kernel's whole launch; ``fastpath._direct`` serves NumPy and CuPy arrays only. Here a call
on a ``torch.Tensor`` of a layout seen before (its dtype, shape, strides and GPU; ``out``'s too, or ``out`` None)
with the same arguments and device is run as the first such call was validated: the result (a new tensor of
the index type, made by PyTorch's allocator, or ``out``) is written by the kernel's prepared launch
(``ArgMinKernel.prepare_addresses``) over ``data_ptr()``. The launch goes on PyTorch's current stream of the
tensor's GPU, where PyTorch orders the work that wrote ``x`` and the work that will read the result, as the
DLPack exchange would have ordered them with CuPy's stream.

A call goes the ordinary way (which raises, or copies) where anything differs from what the first call saw:
another type than ``torch.Tensor`` itself (a subclass may redefine what it holds), a tensor that requires
grad (DLPack refuses it), ``out`` sharing memory with ``x``. This module never imports PyTorch: its tensor type
is learnt from the first call remembered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..device import Device
from . import devices

_default_devices = devices._default_devices

# (device, arguments, layouts) -> the remembered call; cleared when full, as fastpath's.
_runs: dict[Any, _Run] = {}
_LIMIT = 1024
_tensor: list[Any] = []  # torch.Tensor, once a call on one has been remembered


class _Run:
    """A remembered call: its launch over (x, out) addresses on a stream, the new result's shape and dtype
    (None with ``out``), where PyTorch's current stream is read, and the bytes ``x`` spans from its first
    element (for the overlap check of an ``out``)."""

    __slots__ = ("dtype", "launch", "shape", "span", "stream")

    def __init__(self, launch: Any, shape: tuple[int, ...], dtype: Any, stream: Callable[[], int], span: int) -> None:
        self.launch, self.shape, self.dtype, self.stream, self.span = launch, shape, dtype, stream, span


def _key(device: Device, key: Any, x: Any, out: Any) -> Any:
    layout = None if out is None else (out.dtype, out.shape, out.stride(), out.get_device())
    return (device, key, x.dtype, x.shape, x.stride(), x.get_device(), layout)


def direct(device: object, key: Any, x: Any, out: Any) -> Any:
    """The result of a call on PyTorch tensors run straight through its remembered launch, or None if it
    cannot be."""
    if not _tensor or type(x) is not _tensor[0] or not (out is None or type(out) is _tensor[0]):
        return None
    if device is None or type(device) is str:
        resolved = _default_devices.get("cuda" if device is None else device)
    elif type(device) is Device:
        resolved = device
    else:
        return None
    if resolved is None or x.requires_grad:
        return None
    try:
        run = _runs.get(_key(resolved, key, x, out))
    except TypeError:  # an unhashable argument: the ordinary path handles it
        return None
    if run is None:
        return None
    address = x.data_ptr()
    if out is None:
        result = x.new_empty(run.shape, dtype=run.dtype)
    else:
        if out.requires_grad or _overlaps(address, run.span, out):
            return None
        result = out
    run.launch.on(run.stream(), (address, result.data_ptr()))
    return result


def _overlaps(address: int, span: int, out: Any) -> bool:
    """Whether ``out``'s bytes may meet the ``span`` bytes from ``address`` (``x``'s)."""
    first = out.data_ptr()
    reach = out.element_size() * (1 + sum((n - 1) * s for n, s in zip(out.shape, out.stride())))
    return first < address + span and address < first + reach


def remember(device: Device, key: Any, x: Any, out: Any, array: Any, result: Any, compiled: Any, pad: int) -> None:
    """Remember a call on a PyTorch tensor ``x`` (``array``: the CuPy array over its memory) that ran on the
    tensors' memory itself (nothing copied) into ``result`` (``out``'s memory, or a new CuPy array), for
    ``direct``; where it can be taken there: a plain ``torch.Tensor`` on the GPU whose kernel was compiled
    (the current CuPy device), no leading 1s added, and a kernel of prepared address launches."""
    if device.backend.name != "cuda" or pad or type(x).__name__ != "Tensor" or type(x).__module__ != "torch":
        return
    if not (out is None or type(out) is type(x)) or x.dim() == 0:
        return
    import cupy
    import torch

    if x.get_device() != cupy.cuda.runtime.getDevice():
        return
    prepare = getattr(getattr(compiled, "kernel", None), "prepare_addresses", None)
    launch = None if prepare is None else prepare(1)
    dtype = getattr(torch, str(np.dtype(result.dtype)), None)
    if launch is None or not isinstance(dtype, torch.dtype):
        return
    try:
        found = _key(device, key, x, out)
        hash(found)
    except TypeError:
        return
    span = array.itemsize + sum((n - 1) * s for n, s in zip(array.shape, array.strides) if n > 1)
    if len(_runs) >= _LIMIT:
        _runs.clear()
    _runs[found] = _Run(launch, tuple(result.shape), dtype, _stream_of(torch, x.get_device()), span)
    if not _tensor:
        _tensor.append(torch.Tensor)


def _stream_of(torch: Any, index: int) -> Callable[[], int]:
    """A call giving the handle of PyTorch's current stream on GPU ``index``."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return lambda: raw(index)  # type: ignore[no-any-return]
    device = torch.device("cuda", index)
    return lambda: torch.cuda.current_stream(device).cuda_stream  # type: ignore[no-any-return]
