"""Timing a dispatch as DxDispatch does: samples per iteration, cold/hot statistics, one-line summary.

Each iteration executes one command list holding ``repeat`` recordings of the dispatch (as DxDispatch
records ``--dispatch_repeat`` dispatches into its command list) and waits for it; a sample is the
iteration's time divided by ``repeat``, the time per dispatch. On a CUDA device the GPU time comes from a
pair of CUDA events recorded around the list on the stream it runs on (CuPy is imported only then); the CPU
time always comes from ``time.perf_counter`` and includes waiting for the GPU to finish.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from .progress import Progress


@dataclass(frozen=True)
class TimingOptions:
    iterations: int = 1  # the fewest iterations
    repeat: int = 1  # dispatches recorded into the command list each iteration executes
    milliseconds_to_run: float | None = None  # keep iterating at least this long
    warmup_samples: int = 1  # the most leading samples counted as cold
    verbosity: int = 0  # 0: one line; 1: cold/hot statistics; 2: every iteration too


@dataclass(frozen=True)
class Stats:
    count: int
    average: float
    minimum: float
    median: float
    maximum: float

    @classmethod
    def of(cls, samples: Sequence[float]) -> Stats | None:
        """Statistics of samples; the median of an even count is the upper one, as DxDispatch's.

        >>> Stats.of([4.0, 1.0, 3.0, 2.0])
        Stats(count=4, average=2.5, minimum=1.0, median=3.0, maximum=4.0)
        """
        if not samples:
            return None
        ordered = sorted(samples)
        return cls(len(ordered), sum(ordered) / len(ordered), ordered[0], ordered[len(ordered) // 2], ordered[-1])


def split_cold_hot(samples: Sequence[float], warmup: int) -> tuple[Sequence[float], Sequence[float]]:
    """The first ``warmup`` samples are cold, but at least one sample is always hot.

    >>> split_cold_hot([9.0, 1.0, 2.0], 1), split_cold_hot([9.0], 1)
    (([9.0], [1.0, 2.0]), ([], [9.0]))
    """
    cold = min(max(len(samples), 1) - 1, warmup)
    return samples[:cold], samples[cold:]


@dataclass
class Samples:
    cpu: list[float] = field(default_factory=list)  # milliseconds per dispatch
    gpu: list[float] = field(default_factory=list)  # milliseconds per dispatch; empty when not on a GPU


def measure(iteration: Callable[[], None], options: TimingOptions, use_cuda: bool, progress: Progress,
            stream: Any = None) -> Samples:
    """Call ``iteration`` (one execution of a list of ``options.repeat`` dispatches, waited for) until both
    ``options.iterations`` and ``options.milliseconds_to_run`` are reached; ``stream`` is the CUDA stream the
    list runs on, where the GPU events are recorded (None: CuPy's current stream)."""
    samples = Samples()
    cuda = _CudaEvents(stream) if use_cuda else None
    start = time.perf_counter()
    goal_ms = options.milliseconds_to_run
    try:
        while True:
            elapsed_ms = 1000 * (time.perf_counter() - start)
            done = len(samples.cpu)
            if done >= options.iterations and (goal_ms is None or elapsed_ms >= goal_ms):
                return samples
            t0 = time.perf_counter()
            if cuda is not None:
                cuda.start()
            iteration()
            gpu_ms = cuda.stop() if cuda is not None else None  # waits for the GPU
            samples.cpu.append(1000 * (time.perf_counter() - t0) / options.repeat)
            if gpu_ms is not None:
                samples.gpu.append(gpu_ms / options.repeat)
            fraction = (done + 1) / options.iterations
            if goal_ms:  # both goals must be met: the slower one sets the pace
                fraction = min(fraction, 1000 * (time.perf_counter() - start) / goal_ms)
            progress.update(fraction, f"{done + 1} iterations")
    finally:
        progress.close()


class _CudaEvents:
    """GPU time between two CUDA events on ``stream`` (None: the current stream)."""

    def __init__(self, stream: Any = None) -> None:
        import cupy  # only here: a CPU-only run never imports CuPy

        self._cupy = cupy
        self._stream = stream
        self._begin = cupy.cuda.Event()
        self._end = cupy.cuda.Event()

    def start(self) -> None:
        self._begin.record(self._stream)

    def stop(self) -> float:
        self._end.record(self._stream)
        self._end.synchronize()
        return float(self._cupy.cuda.get_elapsed_time(self._begin, self._end))


def report(name: str, samples: Samples, options: TimingOptions, out: TextIO) -> None:
    """DxDispatch's lines for one dispatch command."""
    count = len(samples.cpu)
    cpu_cold, cpu_hot = split_cold_hot(samples.cpu, options.warmup_samples)
    gpu_cold, gpu_hot = split_cold_hot(samples.gpu, options.warmup_samples)
    if options.verbosity == 0:
        line = f"Dispatch '{name}': {count} iterations, {Stats.of(cpu_hot).median:.4f} ms median (CPU)"  # type: ignore[union-attr]
        if samples.gpu:
            line += f", {Stats.of(gpu_hot).median:.6f} ms median (GPU)"  # type: ignore[union-attr]
        print(line, file=out)
    else:
        print(f"Dispatch '{name}': {count} iterations", file=out)
        for label, group in (("CPU Timings (Cold)", cpu_cold), ("GPU Timings (Cold)", gpu_cold),
                             ("CPU Timings (Hot) ", cpu_hot), ("GPU Timings (Hot) ", gpu_hot)):
            stats = Stats.of(group)
            if stats is not None:
                print(f"{label} : {stats.count} samples, {stats.average:.4f} ms average, {stats.minimum:.4f} ms min, "
                      f"{stats.median:.4f} ms median, {stats.maximum:.4f} ms max", file=out)
    if options.verbosity >= 2:
        print("The timings of each iteration:", file=out)
        for k, cpu in enumerate(samples.cpu):
            gpu = f", {samples.gpu[k]:.4f} ms (GPU)" if samples.gpu else ""
            print(f"iteration {k}: {cpu:.4f} ms (CPU){gpu}", file=out)
