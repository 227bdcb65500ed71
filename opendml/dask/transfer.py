"""GPU partials moved between Dask workers without waiting for the work their GPUs have queued since.

A CuPy block's task returns as soon as its kernels are queued, so a worker's GPU may hold several blocks of
work queued behind a partial. CuPy's own pickling copies an array on the device's legacy default stream,
which waits for all of that work, and the copy runs where Dask serializes a message: in the worker's event
loop, which then neither receives tasks nor reports results until the GPU's queue is empty (the GPU may
then run dry). Here a partial records an event after its own kernels; moving it waits for that event alone
and copies on a non-blocking stream of the thread; an array arriving from another worker stays on the host
until a merge needs it on the GPU, where it is uploaded by a copy queued on the current stream (the host
does not wait for it).
"""

from __future__ import annotations

import threading
from typing import Any

_SIDE = threading.local()  # this thread's non-blocking stream, per device


def is_gpu_array(array: Any) -> bool:
    """Whether ``array`` is a CuPy array (without importing CuPy where it is absent)."""
    return type(array).__module__.split(".")[0] == "cupy"


def ready_event(array: Any) -> Any:
    """An event recorded on the current stream after the kernels queued so far (those that computed
    ``array``); None for an array of the host."""
    if not is_gpu_array(array):
        return None
    import cupy

    event = cupy.cuda.Event(block=False, disable_timing=True)
    event.record()
    return event


def wait_for(ready: Any) -> None:
    """Make the current stream wait for ``ready`` (an event of ``ready_event``; None: nothing to wait for).
    Work queued on another stream, a partial made by another thread of the worker on its own stream (CuPy's
    per-thread default streams, or a stream of the thread's), is not ordered before this stream's without it."""
    if ready is None:
        return
    import cupy

    cupy.cuda.get_current_stream().wait_event(ready)


def _side_stream() -> Any:
    import cupy

    device = cupy.cuda.runtime.getDevice()
    streams = _SIDE.__dict__.setdefault("streams", {})
    if device not in streams:
        streams[device] = cupy.cuda.Stream(non_blocking=True)
    return streams[device]


def to_host(array: Any, ready: Any) -> Any:
    """``array`` in host memory: a GPU array once ``ready`` (its kernels) has passed, copied on the side
    stream, so that nothing queued after it is waited for; a host array as it is."""
    if not is_gpu_array(array):
        return array
    import cupy

    side = _side_stream()
    if ready is not None:
        side.wait_event(ready)
    return cupy.asnumpy(array, stream=side)


def to_device(array: Any) -> Any:
    """A host array on the current GPU, copied on the current stream without the host waiting for it: the
    memory is the current stream's, as every other array of the merge (an upload on another stream would
    free its memory to that stream, which could reuse it while this stream's queued kernels still read it)."""
    if is_gpu_array(array):
        return array
    import cupy

    stream = cupy.cuda.get_current_stream()
    uploaded = cupy.empty(array.shape, array.dtype)
    uploaded.set(array, stream=stream)  # asynchronous: pageable memory is staged at once, the copy queued
    return uploaded
