"""A CUDA command queue: a stream of its own, and each command list captured once into a CUDA graph.

A closed list's prepared calls are launches over fixed addresses (``ElementwiseKernel.prepare``,
``ArgMinKernel.prepare``) that allocate nothing, so the first execution captures them on the queue's stream
(CuPy's stream capture, relaxed mode) and every execution, that one included, is one ``graph.launch``: a
few microseconds for the whole list however many dispatches it holds. The graph is kept with the list until
its calls change (a volatile dispatch prepared again over new bindings), when the next execution captures
again. Launches on one stream run in order, so a dispatch sees the writes of those recorded before it, as
DirectML's UAV barriers order them.

Where capture is impossible (a CuPy without stream capture, HIP, or a call the capture refuses) the list's
calls are launched one by one on the stream, as they are with OPENDML_CUDA_GRAPHS=0 or a queue made with
``cuda_graphs=False`` (for debugging: each launch is then its own, as a profiler shows it).
"""

from __future__ import annotations

import contextlib

import cupy

from ... import settings
from ...recording.executors import RecordedWork

ENV_CUDA_GRAPHS = settings.CUDA_GRAPHS.name


def graphs_enabled() -> bool:
    """Whether command queues capture CUDA graphs by default: OPENDML_CUDA_GRAPHS on (the default) or off."""
    return settings.CUDA_GRAPHS.get()


def can_capture() -> bool:
    """Whether this CuPy captures streams into graphs (CUDA, not HIP)."""
    return hasattr(cupy.cuda.Stream, "begin_capture") and not getattr(cupy.cuda.runtime, "is_hip", False)


class CudaQueueExecutor:
    """Runs command lists on a stream of its own: as one CUDA graph launch each where ``cuda_graphs``, else
    launch by launch.

    The queue's stream is a blocking one: it waits for work earlier on CuPy's default stream (uploads into
    buffers, ``execute``) and that stream waits for it, so the queue's results are ordered with the rest of
    the program as ``execute``'s are; ``wait`` synchronizes it. Graphs are captured on a second stream, a
    non-blocking one, so that work other threads put on the default stream meanwhile neither joins the
    capture nor is refused because of it; a captured graph launches on any stream.
    """

    def __init__(self, cuda_graphs: bool | None) -> None:
        self.stream = cupy.cuda.Stream()
        self.cuda_graphs = (graphs_enabled() if cuda_graphs is None else cuda_graphs) and can_capture()
        self._capturing = cupy.cuda.Stream(non_blocking=True) if self.cuda_graphs else None

    def execute(self, work: RecordedWork) -> None:
        if not work.runs:
            return
        with self.stream:
            graph = work.cache.get("graph") if self.cuda_graphs else None
            if graph is None and self.cuda_graphs and "uncapturable" not in work.cache:
                graph = self._capture(work)
            if graph is None:
                for run in work.runs:
                    run()
            else:
                graph.launch(self.stream)  # type: ignore[attr-defined]

    def _capture(self, work: RecordedWork) -> object | None:
        """The list's calls captured into a graph (kept in ``work.cache``), or None where the capture fails
        (the reason kept as ``work.cache["uncapturable"]``; the list then runs launch by launch)."""
        stream = self._capturing
        assert stream is not None  # made where graphs are captured
        with stream:  # the prepared calls launch on the current stream
            stream.begin_capture()
            try:
                for run in work.runs:
                    run()
            except Exception as error:
                _end_quietly(stream)
                work.cache["uncapturable"] = f"{type(error).__name__}: {error}"
                return None
            try:
                graph = stream.end_capture()
            except Exception as error:  # the capture was invalidated (a call the capture mode refuses)
                work.cache["uncapturable"] = f"{type(error).__name__}: {error}"
                return None
        work.cache["graph"] = graph
        work.captures += 1
        return graph

    def wait(self) -> None:
        self.stream.synchronize()


def _end_quietly(stream: cupy.cuda.Stream) -> None:
    """End a failed capture, so the stream takes work again; what it captured is dropped."""
    with contextlib.suppress(Exception):  # an invalidated capture ends with an error: there is nothing to keep
        stream.end_capture()
