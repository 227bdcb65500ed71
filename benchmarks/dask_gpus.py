"""opendml on Dask across the GPUs of one host: ARGMIN of an array larger than one GPU, one worker per GPU.

A ``distributed`` cluster of the machine (a ``SpecCluster`` of ``Nanny`` workers: what ``LocalCluster``
starts, with one environment per worker) runs one worker process per GPU, each seeing only its own through
``CUDA_VISIBLE_DEVICES`` (the k-th of the GPUs this process sees). The data are made on the workers, block by
block, by a hash of each element's index keyed by the block's place in the array (one asynchronous CuPy
kernel; NumPy gives the same bits on CPU workers and in the client's checks): nothing is sent
from the client and no worker holds more than the few chunks its tasks are working on. The rows:

- ``argmin-0``: ARGMIN over axis 0 of FLOAT32 [rows, columns] (``opendml.argmin`` on the Dask array);
- ``argmin-all``: ARGMIN over both axes of the same array;
- ``chain-0``: DEQUANTIZE_LINEAR (per-column scale and zero point) -> CLIP [0, 6] -> ARGMIN over axis 0 of
  UINT8 [rows, columns] of the same bytes, one function made by ``opendml.compile`` (fused on each block).

Each row runs on a cluster of every worker, then on a cluster of one (the 1-GPU figure; a cluster of its own,
since Dask does not queue tasks restricted to some workers: they would all be sent at once), for each chunk
size (``--chunk-mib``: by default 4 GiB and 16 GiB on GPUs, since a task's fixed cost in Dask, a millisecond
or more, is comparable to the GPU's time on a 4 GiB block; FLOAT32 blocks stop just short of 16 GiB and UINT8
ones of 4 GiB: one tensor holds at most 2^32 - 1 elements). Chunks span the columns, so every block's partial
result is one row of values and indices. Each measurement starts after every worker has run the row on two
blocks (kernels compiled) and, on GPUs, after one untimed pass (CuPy's pool grown); then ``--repeats`` timed
runs (median) of the row's graph, whose tasks each make a block and reduce it at once: the end-to-end time of
the job, from submitting the graph to the answer in the client.

The reference is the same job without Dask: one GPU in this process makes a ~4 GiB array with the same
generator and reduces it ("alone, made and reduced", timed with CUDA events before the cluster starts); the
reduction of an array made beforehand ("alone, reduction") is reported beside it, as ``benchmarks/gpu.py``
measures a single GPU. The scheduler sends each worker ``--saturation`` tasks per thread ahead of its reports
(Dask's default, 1.1, makes a worker of one thread wait for a round trip to the scheduler, ~7 ms of batching,
every other block).

While each measurement runs, every worker samples its memory: CuPy's pool in use, and the GPU's in use by
every process on it (``memGetInfo``), and counts the blocks alive in it (made and not yet freed). The pool is
emptied at the start, so its bytes held at the end (its high water) bound what the worker ever held. Answers
are checked: each row on a slice across the first two blocks against opendml on one GPU (this process, the
same blocks regenerated from the same seeds), and the whole array's answer on all workers against the one on
one worker.

Targets, PASS or FAIL: on N GPUs the job's throughput is at least 0.8 x N x one GPU alone (the issue's
target), and at least 0.8 x N x the 1-GPU Dask run (the scaling); each worker's pool high water is at most 4
chunks (2 per thread beyond 2 threads). With ``--cpu`` the workers run NumPy chunks, the reference is opendml
on the CPU in this process, and memory is each worker's resident set (no verdict).

    python benchmarks/dask_gpus.py                          # every visible GPU, the issue's sizes (200 GiB)
    python benchmarks/dask_gpus.py --gib 1024               # 1 TiB: Dask's fixed costs spread over more blocks
    python benchmarks/dask_gpus.py --gpus 2 --sizes small   # 16 GiB: a quick first run
    python benchmarks/dask_gpus.py --gib 300 --chunk-mib 1024,4096 --repeats 5
    python benchmarks/dask_gpus.py --cpu --sizes tiny       # NumPy chunks on CPU workers: a smoke run

Writes ``dask-gpus-<gpu>-x<N>.csv`` and ``.png`` (``dask-gpus-cpu-x<N>`` with ``--cpu``; ``-small`` or
``-tiny`` added for those sizes, ``-<G>gib`` for ``--gib``) into ``benchmarks/results`` or ``--out``, prints a
table and the targets, and shows its progress on stderr. The exit status is 1 when an answer differed.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as ``python benchmarks/dask_gpus.py``, this file's folder comes first on sys.path, where
# benchmarks/dask.py would be what ``import dask`` imports. The folder is dropped before anything imports
# Dask; spawned workers inherit the path.
_FOLDER = Path(__file__).resolve().parent
for _entry in [entry for entry in sys.path if Path(entry or ".").resolve() == _FOLDER]:
    sys.path.remove(_entry)

import argparse  # noqa: E402
import csv  # noqa: E402
import functools  # noqa: E402
import logging  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import weakref  # noqa: E402
from collections.abc import Callable, Iterator, Sequence  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

import opendml as dml  # noqa: E402

RESULTS = Path(__file__).parent / "results"
GIB, MIB = 2**30, 2**20
TARGET_SHARE = 0.8  # of N x one GPU's bandwidth
MOST_CHUNKS = 4  # a worker's pool high water, in chunks ("a few"): 2 per thread where threads are more than 2
SAMPLE_S = 0.005  # the workers' memory sampling interval
SEED = 18
SATURATION = 4.0  # tasks with no dependencies sent to a worker per thread ahead of its reports
MOST_ELEMENTS = 2**32 - 1  # of one tensor (DirectML's Sizes): a block's, and the bare array's


def log(message: str) -> None:
    """Progress, on stderr (the table goes to stdout)."""
    print(message, file=sys.stderr, flush=True)


# The data, made where the block is: on the workers, or in this process for the checks and the bare figure.


def block_seed(base: int, location: Sequence[int]) -> int:
    """A 64-bit seed for the block at ``location`` (its index in the grid of blocks) of the array ``base``."""
    return int(np.random.SeedSequence([base, *location]).generate_state(1, np.uint64)[0])


# The blocks' elements: a 32-bit integer hash of each element's (or, for UINT8, each 4-byte word's) index in
# the block, keyed by the block's seed (one multiply-add and one mix a word: the generation stays near the
# memory's speed). The same bits on the GPU (one CuPy kernel, asynchronous: cuRAND's
# generate waited for the GPU, so a worker's thread stood still for each block instead of queuing the next)
# and on the CPU (NumPy's wrapping uint32 arithmetic). FLOAT32 takes the top 24 bits: uniform in (0, 1] with
# many ties, which the reductions' index rules must settle.
MIX = (0x7FEB352D, 0x846CA68B)
GOLDEN = 0x9E3779B9  # spreads consecutive indices over the 32 bits before the mix
_FILL_C = f"""
__device__ __forceinline__ unsigned int opendml_mix(unsigned int x) {{
    x ^= x >> 16; x *= {MIX[0]:#x}U; x ^= x >> 15; x *= {MIX[1]:#x}U; x ^= x >> 16; return x;
}}
__device__ __forceinline__ unsigned int opendml_word(unsigned int i, unsigned int key, int as_float) {{
    unsigned int w = opendml_mix(i * {GOLDEN:#x}U + key);
    return as_float ? __float_as_uint((float)((w >> 8) + 1U) * (1.0f / 16777216.0f)) : w;
}}
// n 32-bit words (FLOAT32 elements or UINT8 quadruples), 16 bytes stored by each thread and step.
extern "C" __global__ void opendml_bench_fill(unsigned int* out, unsigned int n, unsigned int key, int as_float) {{
    unsigned int quads = n / 4 + (n % 4 != 0);
    for (unsigned int q = blockIdx.x * blockDim.x + threadIdx.x; q < quads; q += gridDim.x * blockDim.x) {{
        unsigned int i = 4 * q;
        if (n - i >= 4) {{
            reinterpret_cast<uint4*>(out)[q] = make_uint4(opendml_word(i, key, as_float),
                opendml_word(i + 1, key, as_float), opendml_word(i + 2, key, as_float),
                opendml_word(i + 3, key, as_float));
        }} else {{
            for (unsigned int k = i; k < n; ++k) out[k] = opendml_word(k, key, as_float);
        }}
    }}
}}
"""


def block_key(seed: int) -> int:
    """The 32-bit key of a 64-bit block seed."""
    return (seed ^ (seed >> 32)) & 0xFFFFFFFF


@functools.cache
def _fill_kernel() -> Any:
    import cupy

    return cupy.RawKernel(_FILL_C, "opendml_bench_fill")


def fill_cuda(shape: tuple[int, ...], dtype: str, seed: int) -> Any:
    """A CuPy array of the block's elements, made by one kernel on the current stream (asynchronously)."""
    import cupy

    count = math.prod(shape)
    words = cupy.empty(count if dtype == "float32" else -(-count // 4), np.uint32)  # 256-byte aligned
    if words.size:
        blocks = min(-(-words.size // (4 * 256)), 8 * cupy.cuda.Device().attributes["MultiProcessorCount"])
        _fill_kernel()((blocks,), (256,), (words, np.uint32(words.size), np.uint32(block_key(seed)),
                                          np.int32(dtype == "float32")))
    if dtype == "float32":
        return words.view(np.float32).reshape(shape)
    return words.view(np.uint8)[:count].reshape(shape)


def _mix(x: np.ndarray) -> np.ndarray:
    x ^= x >> np.uint32(16)
    x *= np.uint32(MIX[0])
    x ^= x >> np.uint32(15)
    x *= np.uint32(MIX[1])
    x ^= x >> np.uint32(16)
    return x


def fill_cpu(shape: tuple[int, ...], dtype: str, seed: int) -> np.ndarray:
    """A NumPy array of the same elements as ``fill_cuda`` gives."""
    key = np.uint32(block_key(seed))
    count = math.prod(shape)
    words = np.arange(count if dtype == "float32" else -(-count // 4), dtype=np.uint32)
    words = _mix(words * np.uint32(GOLDEN) + key)
    if dtype == "float32":
        return (((words >> np.uint32(8)) + np.uint32(1)).astype(np.float32) * np.float32(2.0**-24)).reshape(shape)
    return words.view(np.uint8)[:count].reshape(shape)


def fill(kind: str, shape: tuple[int, ...], dtype: str, seed: int) -> Any:
    return fill_cuda(shape, dtype, seed) if kind == "cuda" else fill_cpu(shape, dtype, seed)


class LiveBlocks:
    """How many blocks made by ``make_block`` are alive in this process now, and at most since made: a block
    counts from its making until the last reference to it (or to a view of it) goes."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.peak = 0
        self.made_count = 0  # blocks made here since counting began: how the scheduler shared the work

    def made(self, block: Any) -> None:
        try:
            weakref.finalize(block, self.freed)
        except TypeError:  # an array type without weak references: not counted
            return
        with self.lock:
            self.now += 1
            self.made_count += 1
            self.peak = max(self.peak, self.now)

    def freed(self) -> None:
        with self.lock:
            self.now -= 1


def this_worker() -> Any:
    """The worker this task runs on (None elsewhere: the checks in the client)."""
    try:
        from distributed import get_worker

        return get_worker()
    except (ImportError, ValueError):
        return None


def set_block_sync(sync: bool, dask_worker: Any = None) -> None:
    """On a worker: whether each block's task first waits for the GPU work its thread queued before."""
    dask_worker.opendml_sync_blocks = sync


def make_block(kind: str, dtype: str, base: int, block_info: Any = None) -> Any:
    """One block of the array ``base``, made where the task runs (a CuPy block on the worker's GPU). With
    ``--sync-blocks``, a task first waits for the work of the task before it on its thread (a worker's GPU then
    holds at most one block of queued work per thread, and Dask sees the GPU's time as the tasks' time)."""
    info = block_info[None]
    worker = this_worker()
    if kind == "cuda" and getattr(worker, "opendml_sync_blocks", False):
        import cupy

        cupy.cuda.get_current_stream().synchronize()
    block = fill(kind, tuple(info["chunk-shape"]), dtype, block_seed(base, info["chunk-location"]))
    counter = getattr(worker, "opendml_live_blocks", None)  # made by start_sampling
    if counter is not None:
        counter.made(block)
    return block


def to_host(block: Any) -> np.ndarray:
    return block.get() if hasattr(block, "get") else np.asarray(block)


def xp_of(kind: str) -> Any:
    """The array module of the blocks' kind: CuPy on GPUs, NumPy on the CPU."""
    if kind == "cuda":
        import cupy

        return cupy
    return np


def empty(kind: str, dtype: Any, ndim: int = 2) -> Any:
    """A Dask meta: an empty array of the blocks' kind."""
    return xp_of(kind).empty((0,) * ndim, dtype)


# The rows.


@dml.compile
def dequantize_clip_argmin(codes: Any, scale: Any, zero_point: Any) -> Any:
    """DEQUANTIZE_LINEAR -> CLIP [0, 6] -> ARGMIN over axis 0, one fused graph per block."""
    return dml.argmin(dml.clip(dml.dequantize_linear(codes, scale, zero_point), 0.0, 6.0), 0)


@dataclass(frozen=True)
class Row:
    key: str
    title: str
    dtype: str  # of the data: float32 or uint8
    axes: tuple[int, ...]
    chain: bool = False  # the compiled DEQUANTIZE_LINEAR -> CLIP -> ARGMIN

    @property
    def itemsize(self) -> int:
        return np.dtype(self.dtype).itemsize


ROWS = (
    Row("argmin-0", "ARGMIN axis 0, FLOAT32", "float32", (0,)),
    Row("argmin-all", "ARGMIN all axes, FLOAT32", "float32", (0, 1)),
    Row("chain-0", "DEQUANTIZE_LINEAR -> CLIP -> ARGMIN axis 0, UINT8 (opendml.compile)", "uint8", (0,), chain=True),
)


def chain_operands(kind: str, columns: int) -> tuple[Any, Any]:
    """Per-column scale in [0.01, 0.11) and zero point over UINT8's range, arrays of the blocks' kind (a Dask
    argument of one chunk: each worker receives them once)."""
    rng = np.random.default_rng(SEED)
    scale = (rng.random(columns) * 0.1 + 0.01).astype(np.float32)
    zero_point = rng.integers(0, 256, columns, dtype=np.uint8)
    xp = xp_of(kind)
    return xp.asarray(scale), xp.asarray(zero_point)


def reduce_whole(row: Row, x: Any, operands: tuple[Any, Any]) -> Any:
    """The row's reduction of ``x`` (a Dask array, or a whole array in this process)."""
    if row.chain:
        return dequantize_clip_argmin(x, *operands)
    return dml.argmin(x, row.axes)


def reduction_graph(row: Row, x: Any, operands: tuple[Any, Any]) -> Any:
    """The Dask graph of the row's answer, brought to host memory on the worker."""
    return reduce_whole(row, x, operands).map_blocks(to_host, meta=np.empty((0, 0), np.int64))


@dataclass(frozen=True)
class Layout:
    """An array of ``blocks`` blocks of [block_rows, columns], each ``chunk_bytes``."""

    columns: int
    block_rows: int
    blocks: int
    itemsize: int

    @property
    def shape(self) -> tuple[int, int]:
        return (self.block_rows * self.blocks, self.columns)

    @property
    def chunk_bytes(self) -> int:
        return self.block_rows * self.columns * self.itemsize

    @property
    def nbytes(self) -> int:
        return self.chunk_bytes * self.blocks


def rows_of(nbytes: int, columns: int, itemsize: int) -> int:
    """Rows of ``columns`` elements in about ``nbytes``, at least one, at most one tensor's elements (a 4 GiB
    UINT8 block of 65536 columns is 65535 rows)."""
    return max(1, min(nbytes // (columns * itemsize), MOST_ELEMENTS // columns))


def layout(total_bytes: int, chunk_bytes: int, columns: int, itemsize: int) -> Layout:
    """Whole blocks of about ``chunk_bytes`` spanning the columns, at least two (the merges run), about
    ``total_bytes`` in all: every block has one shape, so one compiled kernel serves them all."""
    block_rows = rows_of(chunk_bytes, columns, itemsize)
    blocks = max(2, round(total_bytes / (block_rows * columns * itemsize)))
    return Layout(columns, block_rows, blocks, itemsize)


def data(kind: str, row: Row, lay: Layout, base: int) -> Any:
    """The Dask array: each block made by its task from its own seed."""
    import dask.array as da

    chunks = ((lay.block_rows,) * lay.blocks, (lay.columns,))
    return da.map_blocks(functools.partial(make_block, kind, row.dtype, base), chunks=chunks,
                         dtype=np.dtype(row.dtype), meta=empty(kind, np.dtype(row.dtype)),
                         name=f"opendml-data-{row.dtype}-{base}-{lay.block_rows}x{lay.columns}x{lay.blocks}")


# Memory on the workers.


def memory_now(kind: str) -> tuple[int, int]:
    """(bytes in use by CuPy's pool, bytes in use on the device); on the CPU the process's resident set twice."""
    if kind == "cuda":
        import cupy

        free, total = cupy.cuda.runtime.memGetInfo()
        return int(cupy.get_default_memory_pool().used_bytes()), int(total - free)
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        resident = pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        resident = 0
    return resident, resident


class MemorySampler(threading.Thread):
    """Samples this process's memory every ``SAMPLE_S`` until stopped, keeping the peaks."""

    def __init__(self, kind: str) -> None:
        super().__init__(name="opendml-memory-sampler", daemon=True)
        self.kind = kind
        self.done = threading.Event()
        self.start_used, self.start_device = memory_now(kind)
        self.peak_used, self.peak_device = self.start_used, self.start_device

    def sample(self) -> None:
        used, device = memory_now(self.kind)
        self.peak_used, self.peak_device = max(self.peak_used, used), max(self.peak_device, device)

    def run(self) -> None:
        while not self.done.wait(SAMPLE_S):
            self.sample()


def start_sampling(kind: str, dask_worker: Any = None) -> None:
    """On a worker: CuPy's pool emptied (its high water then counts from here), a sampler started."""
    if kind == "cuda":
        import cupy

        cupy.cuda.Device().synchronize()
        cupy.get_default_memory_pool().free_all_blocks()
    sampler = MemorySampler(kind)
    sampler.start()
    dask_worker.opendml_live_blocks = LiveBlocks()
    dask_worker.opendml_memory_sampler = sampler  # the worker object outlives this call; the next one finds it


def stop_sampling(kind: str, dask_worker: Any = None) -> dict[str, int]:
    """On a worker: the sampler stopped, its peaks, and the pool's high water (its bytes held)."""
    sampler: MemorySampler = dask_worker.opendml_memory_sampler
    sampler.done.set()
    sampler.join()
    sampler.sample()
    peaks = {"pool_peak": sampler.peak_used, "device_peak": sampler.peak_device,
             "device_start": sampler.start_device, "live_blocks": dask_worker.opendml_live_blocks.peak,
             "blocks_made": dask_worker.opendml_live_blocks.made_count}
    if kind == "cuda":
        import cupy

        peaks["pool_high_water"] = int(cupy.get_default_memory_pool().total_bytes())
    else:
        peaks["pool_high_water"] = sampler.peak_used - sampler.start_used  # the resident set's growth
    return peaks


def visible_devices() -> str | None:
    """On a worker: the GPUs it sees."""
    return os.environ.get("CUDA_VISIBLE_DEVICES")


# The cluster.


def gpu_ids(count: int) -> list[str]:
    """The device each worker sees: the k-th of those this process sees (CUDA_VISIBLE_DEVICES, or all)."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    ids = [d.strip() for d in listed.split(",") if d.strip()] if listed else [str(k) for k in range(count)]
    if len(ids) < count:
        raise SystemExit(f"--gpus {count}: only {len(ids)} GPUs are visible ({listed})")
    return ids[:count]


def worker_specs(kind: str, count: int, threads: int) -> dict[str, dict[str, Any]]:
    """One Nanny per GPU, each with its CUDA_VISIBLE_DEVICES (set in the worker process before it starts, so
    before CUDA is). No host memory limit: the workers hold GPU blocks and small partials, which Dask would
    otherwise count against the host's memory and spill."""
    from distributed import Nanny

    return {f"{kind}-{k}": {"cls": Nanny, "options": {
        "nthreads": threads, "env": {"CUDA_VISIBLE_DEVICES": device}, "host": "127.0.0.1", "memory_limit": 0,
        "silence_logs": logging.ERROR, "dashboard_address": ":0"}}
        for k, device in enumerate(gpu_ids(count))}


@contextmanager
def cluster(kind: str, count: int, threads: int, saturation: float,
            stealing: bool = False) -> Iterator[tuple[Any, list[str]]]:
    """A client of a cluster of ``count`` workers, and the workers' addresses in order; all closed on exit.
    ``saturation``: the scheduler's worker-saturation (how many tasks with no dependencies a worker is sent
    per thread before it reports one done; Dask's default 1.1 makes a worker of one thread wait for the
    scheduler's answer every other block, which costs more than a GPU block); ``stealing``: the scheduler's
    work stealing."""
    import dask
    from distributed import Client, Scheduler, SpecCluster

    scheduler = {"cls": Scheduler, "options": {"host": "127.0.0.1", "dashboard_address": ":0"}}
    # CPU workers (the smoke run) see made-up device numbers, which Dask's NVML monitor would look up (and
    # fail to, on a machine with fewer GPUs).
    queuing = {"distributed.scheduler.worker-saturation": saturation,
               "distributed.scheduler.work-stealing": stealing, "distributed.diagnostics.nvml": kind != "cpu"}
    with dask.config.set(queuing), SpecCluster(workers=worker_specs(kind, count, threads), scheduler=scheduler,
                                               silence_logs=logging.ERROR) as spec, Client(spec) as client:
        client.wait_for_workers(count)
        named = {info["name"]: address for address, info in client.scheduler_info()["workers"].items()}
        yield client, [named[f"{kind}-{k}"] for k in range(count)]


def timed_compute(client: Any, graph: Any, workers: list[str] | None = None) -> tuple[float, np.ndarray]:
    """Seconds from submitting ``graph`` (restricted to ``workers``, if given) to its answer in this process."""
    start = time.perf_counter()
    future = client.compute(graph, workers=workers, allow_other_workers=False)
    answer = future.result()
    seconds = time.perf_counter() - start
    future.release()
    return seconds, answer


# Measurements.


@dataclass
class Measurement:
    row: Row
    lay: Layout
    workers: int
    total_s: float  # median, from submitting the graph to the answer in the client: blocks made and reduced
    memory: list[dict[str, int]]  # each participating worker's peaks
    answer: np.ndarray
    check: str = ""

    @property
    def end_to_end_gbs(self) -> float:
        return self.lay.nbytes / self.total_s / 1e9

    def peak(self, key: str) -> int:
        return max(m[key] for m in self.memory)

    @property
    def peak_chunks(self) -> float:
        return self.peak("pool_high_water") / self.lay.chunk_bytes


def measure(client: Any, kind: str, row: Row, lay: Layout, graph: Any, workers: list[str],
            repeats: int) -> Measurement:
    """The row's graph on the cluster, ``repeats`` times (median), the workers' memory sampled throughout."""
    client.run(start_sampling, kind, workers=workers)
    try:
        if kind == "cuda":  # once untimed: CuPy's pools, emptied to measure their high water, grow again
            timed_compute(client, graph)
        total_s, answers = [], []
        for k in range(repeats):
            seconds, answer = timed_compute(client, graph)
            total_s.append(seconds)
            answers.append(answer)
            log(f"  {row.key} on {len(workers)} worker(s), run {k + 1}/{repeats}: {seconds:.3f} s, "
                f"{lay.nbytes / seconds / 1e9:.1f} GB/s")
    finally:
        peaks = client.run(stop_sampling, kind, workers=workers)
    same = all(np.array_equal(a, answers[0]) for a in answers)
    result = Measurement(row, lay, len(workers), statistics.median(total_s), [peaks[w] for w in workers], answers[0])
    result.check = "" if same else "DIFFERS between runs"
    return result


def warm_up(client: Any, graph: Any, workers: list[str]) -> None:
    """The graph once on each worker alone: kernels compiled, CuPy's pool grown, cuRAND's generator made."""
    for worker in workers:
        timed_compute(client, graph, [worker])


def check_slice(client: Any, kind: str, row: Row, lay: Layout, x: Any, base: int, operands: tuple[Any, Any]) -> str:
    """The row on rows across the first two blocks: the cluster's answer against opendml on one device in this
    process, on the same blocks made from the same seeds."""
    half = max(1, min((3 * lay.block_rows) // 4, GIB // (lay.columns * row.itemsize)))  # at most 2 GiB
    start, stop = lay.block_rows - half, lay.block_rows + half
    _, got = timed_compute(client, reduction_graph(row, x[start:stop], operands))
    first, second = (fill(kind, (lay.block_rows, lay.columns), row.dtype, block_seed(base, (b, 0))) for b in (0, 1))
    expected = to_host(reduce_whole(row, xp_of(kind).concatenate([first[start:], second[:half]]), operands))
    del first, second
    if kind == "cuda":  # this process shares the first worker's GPU: its memory back before the measurements
        import cupy

        cupy.get_default_memory_pool().free_all_blocks()
    return compare(got, expected, f"opendml on one device on rows [{start}, {stop})")


def compare(got: np.ndarray, expected: np.ndarray, against: str) -> str:
    """'equal', or where and how ``got`` differs from ``expected``."""
    if got.shape != expected.shape:
        return f"DIFFERS from {against}: shape {got.shape} against {expected.shape}"
    wrong = np.flatnonzero(got != expected)
    if wrong.size == 0:
        return "equal"
    first = int(wrong[0])
    return (f"DIFFERS from {against}: {wrong.size} of {got.size} indices, the first at output {first}: "
            f"{got.flat[first]} against {expected.flat[first]}")


def run_row(client: Any, kind: str, row: Row, lay: Layout, workers: list[str], repeats: int) -> Measurement:
    """One row at one chunk size on this cluster: checked on a slice, then measured on all its workers."""
    base = SEED * 10 + (1 if row.dtype == "float32" else 2)  # the ARGMIN rows read the same array
    x = data(kind, row, lay, base)
    operands = chain_operands(kind, lay.columns) if row.chain else (None, None)
    graph = reduction_graph(row, x, operands)
    log(f"{row.key}: {row.dtype} {list(lay.shape)} ({lay.nbytes / GIB:.3g} GiB), {lay.blocks} blocks of "
        f"{lay.chunk_bytes / MIB:.4g} MiB, {len(workers)} worker(s)")
    start = time.perf_counter()
    first = x[:2 * lay.block_rows]
    warm_up(client, reduction_graph(row, first, operands), workers)
    check = check_slice(client, kind, row, lay, x, base, operands)
    log(f"  warmed up every worker and checked a slice ({check}) in {time.perf_counter() - start:.1f} s")
    measured = measure(client, kind, row, lay, graph, workers, repeats)
    measured.check = "; ".join(filter(None, [f"slice {check}", measured.check]))
    return measured


def compare_wholes(measured: list[Measurement]) -> None:
    """The whole array's answer on every worker count, against the one worker's (the last)."""
    for m in measured[:-1]:
        agrees = compare(m.answer, measured[-1].answer, "1 worker's")
        m.check = "; ".join([m.check, "whole equal to 1 worker's" if agrees == "equal" else f"whole {agrees}"])


# The single-GPU (single-device) reference, in this process.


@dataclass(frozen=True)
class Bare:
    row: Row
    shape: tuple[int, int]
    seconds: float  # median of one reduction of the array, made beforehand
    e2e_seconds: float  # median of making the array and reducing it: the job a Dask task does, without Dask

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.row.itemsize

    @property
    def gbs(self) -> float:
        return self.nbytes / self.seconds / 1e9

    @property
    def e2e_gbs(self) -> float:
        return self.nbytes / self.e2e_seconds / 1e9


def cuda_seconds(fn: Callable[[], object], repeat: int, warmup: int = 3) -> float:
    """The median of CUDA-event-timed calls, after warm-up."""
    import cupy

    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeat):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        samples.append(cupy.cuda.get_elapsed_time(start, end) / 1e3)
    return statistics.median(samples)


def cpu_seconds(fn: Callable[[], object], repeat: int, warmup: int = 6) -> float:
    """The median of timed calls, after warm-up (past the calls after which opendml compiles a threaded driver)."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def bare_figure(kind: str, row: Row, columns: int, nbytes: int, repeat: int) -> Bare:
    """The row on one ~``nbytes`` array in this process (opendml on the array itself, no Dask), one device."""
    shape = (rows_of(nbytes, columns, row.itemsize), columns)
    x = fill(kind, shape, row.dtype, block_seed(SEED, (0, 0)))
    operands = chain_operands(kind, columns) if row.chain else (None, None)
    timer = cuda_seconds if kind == "cuda" else cpu_seconds
    seed = block_seed(SEED, (0, 1))
    return Bare(row, shape, timer(lambda: reduce_whole(row, x, operands), repeat),
                timer(lambda: reduce_whole(row, fill(kind, shape, row.dtype, seed), operands), repeat))


def bare_figures(kind: str, columns: int, nbytes: int, repeat: int, rows: Sequence[Row]) -> dict[str, Bare]:
    figures = {}
    for row in rows:
        figures[row.key] = bare = bare_figure(kind, row, columns, nbytes, repeat)
        log(f"bare {row.key} {list(bare.shape)}: reduction {bare.seconds * 1e3:.3f} ms ({bare.gbs:.1f} GB/s), "
            f"made and reduced {bare.e2e_seconds * 1e3:.3f} ms ({bare.e2e_gbs:.1f} GB/s)")
        if kind == "cuda":  # the array is gone: its memory back to the GPU before the workers start
            import cupy

            cupy.get_default_memory_pool().free_all_blocks()
    return figures


# Targets.


@dataclass(frozen=True)
class Verdict:
    what: str
    got: str
    passed: bool

    def __str__(self) -> str:
        return f"{self.what}: {self.got} {'PASS' if self.passed else 'FAIL'}"


def most_chunks(threads: int) -> int:
    return max(MOST_CHUNKS, 2 * threads)


def verdicts(kind: str, measured: list[Measurement], bare: Bare, threads: int = 1) -> list[Verdict]:
    """The issue's target against one device alone (the same job, blocks made and reduced, without Dask) and
    against the 1-device Dask run (the scaling), end to end; the memory."""
    on_all, on_one = measured[0], measured[-1]
    n = on_all.workers
    unit = "GPU" if kind == "cuda" else "worker"
    share = on_all.end_to_end_gbs / (n * bare.e2e_gbs)
    found = [Verdict(f">= {TARGET_SHARE} x {n} x one {unit} alone ({bare.e2e_gbs:.1f} GB/s made and reduced, no Dask)",
                     f"{on_all.end_to_end_gbs:.1f} GB/s = {share:.2f} x {n} x alone", share >= TARGET_SHARE)]
    if n > 1:
        scaling = on_all.end_to_end_gbs / (n * on_one.end_to_end_gbs)
        found.append(Verdict(f">= {TARGET_SHARE} x {n} x the 1-{unit} Dask run ({on_one.end_to_end_gbs:.1f} GB/s)",
                             f"{on_all.end_to_end_gbs:.1f} GB/s = {scaling:.2f} x {n} x 1 {unit}",
                             scaling >= TARGET_SHARE))
    if kind == "cuda":
        most = max(m.peak_chunks for m in measured)
        found.append(Verdict(f"each worker's pool high water <= {most_chunks(threads)} chunks",
                             f"{most:.2f} chunks", most <= most_chunks(threads)))
    return found


# Files and the table.


COLUMNS = ["row", "title", "shape", "chunk_mib", "blocks", "workers", "total_s", "bytes", "gbs", "per_worker_gbs",
           "per_worker_x_alone", "pool_peak_mib", "pool_high_water_mib", "device_start_mib", "device_peak_mib",
           "peak_chunks", "live_blocks_peak", "blocks_per_worker", "check"]


@dataclass
class Result:
    row: Row
    lay: Layout
    measured: list[Measurement]
    bare: Bare
    verdicts: list[Verdict] = field(default_factory=list)


def size_text(nbytes: int) -> str:
    """A block's size, in GiB from 1 GiB up (a 16 GiB FLOAT32 block is 256 KiB short of it)."""
    return f"{nbytes / GIB:.3g} GiB" if nbytes >= GIB * 0.99 else f"{nbytes / MIB:.4g} MiB"


def shape_text(shape: Sequence[int]) -> str:
    return "x".join(map(str, shape))


def measurement_cells(m: Measurement, bare: Bare) -> list[Any]:
    per_worker = m.end_to_end_gbs / m.workers
    return [m.row.key, m.row.title, shape_text(m.lay.shape), f"{m.lay.chunk_bytes / MIB:.4g}", m.lay.blocks,
            m.workers, f"{m.total_s:.5f}", m.lay.nbytes, f"{m.end_to_end_gbs:.2f}", f"{per_worker:.2f}",
            f"{per_worker / bare.e2e_gbs:.3f}", f"{m.peak('pool_peak') / MIB:.1f}",
            f"{m.peak('pool_high_water') / MIB:.1f}", f"{m.peak('device_start') / MIB:.1f}",
            f"{m.peak('device_peak') / MIB:.1f}", f"{m.peak_chunks:.2f}", m.peak("live_blocks"),
            "/".join(str(w["blocks_made"]) for w in m.memory), m.check]


def bare_cells(b: Bare, what: str, seconds: float, note: str) -> list[Any]:
    gbs = b.nbytes / seconds / 1e9
    return [b.row.key, b.row.title, shape_text(b.shape), "", 1, what, f"{seconds:.6f}", b.nbytes, f"{gbs:.2f}",
            f"{gbs:.2f}", f"{seconds and b.e2e_seconds / seconds:.3f}", *[""] * 7, note]


def write_csv(results: list[Result], bare: dict[str, Bare], header: dict[str, str], path: Path) -> None:
    with open(path, "w", newline="") as handle:
        for key, value in header.items():
            handle.write(f"# {key}: {value}\n")
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for b in bare.values():
            writer.writerow(bare_cells(b, "alone", b.e2e_seconds, "one device in the client process, no Dask: "
                                       "the array made and reduced"))
            writer.writerow(bare_cells(b, "alone, reduction", b.seconds, "one device in the client process, "
                                       "no Dask: the reduction of the array, made beforehand"))
        for r in results:
            for m in r.measured:
                writer.writerow(measurement_cells(m, r.bare))
            for v in r.verdicts:
                writer.writerow([r.row.key, r.row.title, shape_text(r.lay.shape), f"{r.lay.chunk_bytes / MIB:.4g}",
                                 r.lay.blocks, "target", *[""] * 12, str(v)])


def plot(results: list[Result], header: dict[str, str], path: Path) -> None:
    try:
        import matplotlib
    except ImportError:
        log("matplotlib is not installed: no plot")
        return

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    unit = "GPU" if header["device"] == "cuda" else "worker"
    fig, ax = plt.subplots(figsize=(max(11, 2.2 * len(results) + 6), 5.5))
    series: list[tuple[str, Callable[[Result], float]]] = [
        (f"one {unit} alone, no Dask: reduction of an array made beforehand", lambda r: r.bare.gbs),
        (f"one {unit} alone, no Dask: made and reduced", lambda r: r.bare.e2e_gbs),
        (f"Dask, 1 {unit}", lambda r: r.measured[-1].end_to_end_gbs),
        (f"Dask, {header['workers count']} {unit}s, per {unit}",
         lambda r: r.measured[0].end_to_end_gbs / r.measured[0].workers),
    ]
    width = 0.8 / len(series)
    for k, (name, value) in enumerate(series):
        xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(results))]
        ax.bar(xs, [value(r) for r in results], width, label=name)
    for i, r in enumerate(results):
        ax.hlines(TARGET_SHARE * r.bare.e2e_gbs, i - 0.45, i + 0.45, colors="black", linewidth=1,
                  label=f"target: {TARGET_SHARE} x made and reduced alone, per {unit}" if i == 0 else "_")
    ax.set_xticks(range(len(results)))
    ax.set_xticklabels([f"{r.row.key}\n{size_text(r.lay.chunk_bytes)} blocks" for r in results], fontsize=8)
    ax.set_ylabel("GB/s (bytes of the array / time)")
    ax.set_title(f"opendml on Dask, {header['workers count']} x {header['machine']}, "
                 f"{header['array']}", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def summary(results: list[Result], bare: dict[str, Bare], unit: str) -> str:
    lines = [f"{'row':<11}{'chunk MiB':>10}{'blocks':>7}{unit + 's':>8}{'total s':>9}{'GB/s':>10}{'per ' + unit:>12}"
             f"{'x alone':>9}{'peak chunks':>12}{'live':>6}{'blocks':>10}  check"]
    for r in results:
        for m in r.measured:
            per = m.end_to_end_gbs / m.workers
            lines.append(f"{m.row.key:<11}{m.lay.chunk_bytes / MIB:>10.4g}{m.lay.blocks:>7}{m.workers:>8}"
                         f"{m.total_s:>9.3f}{m.end_to_end_gbs:>10.1f}{per:>12.1f}{per / r.bare.e2e_gbs:>9.2f}"
                         f"{m.peak_chunks:>12.2f}{m.peak('live_blocks'):>6}"
                         f"{'/'.join(str(w['blocks_made']) for w in m.memory):>10}  {m.check}")
    lines.append("")
    for b in bare.values():
        lines.append(f"alone {b.row.key:<11} {shape_text(b.shape):>14}: made and reduced {b.e2e_seconds * 1e3:8.3f} ms "
                     f"({b.e2e_gbs:7.1f} GB/s), reduction {b.seconds * 1e3:8.3f} ms ({b.gbs:7.1f} GB/s)")
    lines.append("")
    for r in results:
        for v in r.verdicts:
            lines.append(f"{r.row.key:<11}{r.lay.chunk_bytes / MIB:>6.4g} MiB  {v}")
    lines.append("")
    lines.append(f"GB/s: 1e9 bytes of the array per second, from submitting the graph to the answer (every block made "
                 f"on its worker and reduced). Alone: one {unit} in the client process, no Dask.")
    return "\n".join(lines)


# The machine, main.


@dataclass(frozen=True)
class Plan:
    columns: int
    total_bytes: int
    chunk_bytes: tuple[int, ...]
    bare_bytes: int
    repeats: int
    bare_repeats: int


def make_plan(kind: str, args: argparse.Namespace) -> Plan:
    """The sizes: ``tiny`` a smoke run of a few hundred KiB; ``small`` an array that fits one GPU; ``issue``
    an array larger than one GPU (200 GiB: H200s hold 141 GB)."""
    defaults = {  # columns, GiB, chunk MiB, bare GiB, repeats, bare repeats
        ("tiny", "cpu"): (256, 0.5 / 1024, "0.0625", 0.25 / 1024, 1, 2),
        ("tiny", "cuda"): (256, 0.5 / 1024, "0.0625", 0.25 / 1024, 1, 3),
        ("small", "cpu"): (4096, 0.5, "16,64", 0.25, 3, 3),
        ("small", "cuda"): (65536, 32, "1024,4096", 4, 3, 10),
        ("issue", "cpu"): (65536, 8, "128", 1, 1, 3),
        ("issue", "cuda"): (65536, 200, "4096,16384", 4, 3, 10),
    }
    columns, gib, chunk_mib, bare_gib, repeats, bare_repeats = defaults[(args.sizes, kind)]
    columns = args.columns or columns
    chunks = tuple(int(float(c) * MIB) for c in (args.chunk_mib or chunk_mib).split(",") if c.strip())
    return Plan(columns, int((args.gib or gib) * GIB), chunks, int(bare_gib * GIB), args.repeats or repeats,
                bare_repeats)


def machine_header(kind: str, count: int, plan: Plan, args: argparse.Namespace) -> dict[str, str]:
    import dask
    import distributed

    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    header = {"device": kind, "cpu": model, "cores": str(os.cpu_count())}
    if kind == "cuda":
        import cupy

        props = cupy.cuda.runtime.getDeviceProperties(0)
        header["gpu"] = props["name"].decode()
        header["gpu memory"] = f"{props['totalGlobalMem'] / GIB:.1f} GiB"
        header["cuda runtime"] = str(cupy.cuda.runtime.runtimeGetVersion())
        header["cupy"] = cupy.__version__
        header["machine"] = header["gpu"]
    else:
        header["machine"] = f"CPU workers ({model})"
    header["workers count"] = str(count)
    header["threads per worker"] = str(args.threads)
    header["worker saturation"] = str(args.saturation)
    header["work stealing"] = "on" if args.stealing else "off"
    header["split every"] = str(args.split_every or "opendml's default")
    header["sync blocks"] = "yes" if args.sync_blocks else "no"
    header["sizes"] = args.sizes
    header["array"] = f"{plan.total_bytes / GIB:.4g} GiB, {plan.columns} columns"
    header["chunks"] = ", ".join(f"{c / MIB:.4g} MiB" for c in plan.chunk_bytes)
    header["repeats"] = f"{plan.repeats} (medians)"
    header["bandwidth"] = ("GB/s = 1e9 bytes of the array per second, from submitting the graph to the answer "
                           "(every block made on its worker and reduced); alone: one device in the client, no Dask")
    header["memory"] = ("per worker: CuPy's pool in use (sampled), the pool's high water (bytes held; peak_chunks "
                        "in chunks), the GPU's memory in use by every process on it (memGetInfo: at the start and "
                        "sampled)" if kind == "cuda" else "per worker: the resident set (sampled; pool_high_water "
                        "and peak_chunks: its growth)")
    header["load average at start"] = " ".join(f"{v:.2f}" for v in os.getloadavg())
    header["numpy"], header["dask"], header["distributed"] = np.__version__, dask.__version__, distributed.__version__
    header["python"] = sys.version.split()[0]
    try:
        commit = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=Path(__file__).resolve().parent,
                                capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    header["commit"] = commit
    return header


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpus", type=int, default=None,
                        help="workers, one per GPU (default: every visible GPU; with --cpu, 2)")
    parser.add_argument("--cpu", action="store_true", help="CPU workers and NumPy chunks (a smoke run)")
    parser.add_argument("--sizes", choices=["tiny", "small", "issue"], default="issue")
    parser.add_argument("--gib", type=float, default=None, help="the array's size in GiB (default: by --sizes)")
    parser.add_argument("--chunk-mib", default=None, help="comma-separated chunk sizes in MiB (default: by --sizes)")
    parser.add_argument("--columns", type=int, default=None, help="the array's columns (default 65536 on GPUs)")
    parser.add_argument("--repeats", type=int, default=None, help="timed runs of each measurement (medians)")
    parser.add_argument("--threads", type=int, default=1, help="threads per worker")
    parser.add_argument("--split-every", type=int, default=None,
                        help="partials merged by each task of Dask's tree reduction (default: opendml's, up "
                             "to 32)")
    parser.add_argument("--sync-blocks", action="store_true",
                        help="each block's task first waits for the GPU work queued by the task before it")
    parser.add_argument("--stealing", action="store_true",
                        help="leave the scheduler's work stealing on (off by default: a GPU task returns as soon as "
                             "its kernels are queued, so Dask's durations mislead stealing, which then unbalances "
                             "the workers)")
    parser.add_argument("--saturation", type=float, default=SATURATION,
                        help=f"the scheduler's worker-saturation (default {SATURATION}; Dask's own: 1.1)")
    parser.add_argument("--rows", default="", help=f"comma-separated rows to run ({', '.join(r.key for r in ROWS)})")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for the CSV and the PNG")
    return parser.parse_args(argv)


def worker_count(kind: str, wanted: int | None) -> int:
    if kind == "cpu":
        return wanted or 2
    try:
        import cupy
    except ImportError:
        raise SystemExit("CuPy is not installed: run with --cpu") from None
    visible = cupy.cuda.runtime.getDeviceCount()
    if wanted is not None and not 1 <= wanted <= visible:
        raise SystemExit(f"--gpus {wanted}: this process sees {visible} GPUs")
    return wanted or visible


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    kind = "cpu" if args.cpu else "cuda"
    count = worker_count(kind, args.gpus)
    plan = make_plan(kind, args)
    wanted = {key.strip() for key in args.rows.split(",") if key.strip()}
    rows = [row for row in ROWS if not wanted or row.key in wanted]
    header = machine_header(kind, count, plan, args)
    log(", ".join(f"{k}: {v}" for k, v in header.items() if k != "machine"))
    if kind == "cuda":
        import cupy

        if plan.total_bytes <= cupy.cuda.runtime.getDeviceProperties(0)["totalGlobalMem"]:
            log(f"note: the array ({plan.total_bytes / GIB:.4g} GiB) fits one GPU ({header['gpu memory']})")
    bare = bare_figures(kind, plan.columns, plan.bare_bytes, plan.bare_repeats, rows)
    if args.split_every:  # read where the graphs are made: in this process
        import dask

        dask.config.set(split_every=args.split_every)
    counts = [count, 1] if count > 1 else [1]
    measured: dict[tuple[int, str], list[Measurement]] = {}
    for n in counts:  # a cluster of its own for each count: no task is restricted to some workers
        log(f"starting {n} workers ...")
        with cluster(kind, n, args.threads, args.saturation, args.stealing) as (client, workers):
            seen = client.run(visible_devices)
            client.run(set_block_sync, args.sync_blocks)
            if n == count:
                header["workers"] = "; ".join(f"{w} sees CUDA_VISIBLE_DEVICES={seen[w]}" for w in workers)
            log(f"workers: {'; '.join(f'{w} sees CUDA_VISIBLE_DEVICES={seen[w]}' for w in workers)}")
            for chunk in plan.chunk_bytes:
                for row in rows:
                    lay = layout(plan.total_bytes, chunk, plan.columns, row.itemsize)
                    measured.setdefault((chunk, row.key), []).append(
                        run_row(client, kind, row, lay, workers, plan.repeats))
    results = []
    for chunk in plan.chunk_bytes:
        for row in rows:
            runs = measured[(chunk, row.key)]
            compare_wholes(runs)
            result = Result(row, runs[0].lay, runs, bare[row.key])
            result.verdicts = verdicts(kind, runs, bare[row.key], args.threads)
            for v in result.verdicts:
                log(f"  target {row.key} {chunk / MIB:.4g} MiB: {v}")
            results.append(result)
    header["load average at end"] = " ".join(f"{v:.2f}" for v in os.getloadavg())
    machine = "cpu" if kind == "cpu" else header["gpu"].lower().replace("nvidia", "").strip().replace(" ", "-")
    stem = f"dask-gpus-{machine}-x{count}" + ("" if args.sizes == "issue" else f"-{args.sizes}") \
        + (f"-{args.gib:g}gib" if args.gib else "")
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(results, bare, header, args.out / f"{stem}.csv")
    plot(results, header, args.out / f"{stem}.png")
    log(f"wrote {args.out / stem}.csv and .png")
    print(summary(results, bare, "GPU" if kind == "cuda" else "worker"))
    return 1 if any("DIFFERS" in m.check for r in results for m in r.measured) else 0


if __name__ == "__main__":
    sys.exit(main())
