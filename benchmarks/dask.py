"""Dask: opendml's functional API on a distributed LocalCluster, against Dask's own and single-process opendml.

The rows are issue 16's, FLOAT32 unless said:

1. ARGMIN over axis 0 of [32768, 65536] (8 GiB), in blocks that span axis 0 (docs/dask.md's advice);
2. ARGMIN over all axes of the same array;
3. ARGMIN over axes {0, 2} of [512, 4096, 1024] (8 GiB), in Dask's automatic (uneven) blocks, so that the
   merge across blocks runs along both reduced axes;
4. DEQUANTIZE_LINEAR (UINT8 [32768, 65536], per-column scale and zero point) -> CLIP [0, 6], FLOAT32 out;
5. ARGMIN over all axes of UINT8 [65536, 69632] (4.56 G elements, more than 2^32), in automatic blocks,
   every element >= 1 but one 0 placed past flat index 2^32: the INT64 index must be that one.

Every array is made on the workers (Dask's seeded random generators, or a seeded generator per block for
row 5), persisted once, and released after its rows; nothing large goes from the client. On the cluster,
``LocalCluster(n_workers=2, threads_per_worker=1, processes=True)`` by default, each row times:

- ``opendml-dask``: the functional API on the Dask array, built and computed (the indices, as
  ``da.argmin`` gives them; the untimed check computes indices and values, from the same single pass);
- ``dask``: Dask's own where it can do the job at all: ``da.argmin`` over axis 0 or all axes; for row 4
  the straightforward expression ``da.clip((x - zero_point) * scale)``, exact in int32 then one float32
  multiply;
- ``floor``: what the cluster takes to read every block once with the cheapest whole-block NumPy call
  (``x.max`` over the row's axes; for row 4 ``x.astype(float32)``), Dask's own overheads included.

Row 4's results go to a sink that keeps one element of each block (the blocks are computed in full and
dropped); its untimed check computes an XOR of each column's bits instead, so every bit is compared. While
the cluster holds an input, the client makes the same values as one NumPy array (the same generators, on
Dask's threaded scheduler) and times single-process opendml on them (``opendml``: a Device on every core;
row 4 the compiled function, one fused pass into one FLOAT32 result, after the cluster is closed: ``APART``
says why), the reference of every check:
``opendml-dask`` must give the same bits (indices and values), ``dask`` the same indices or, where they
differ, indices of equal values (another tie rule, reported as such). Row 5 has no single-process run:
one tensor holds at most 2^32 - 1 elements (the refusal is printed); it is checked against the placed 0.

Timing: each implementation runs its check once untimed (Numba compiles on every worker, pages are touched),
then the implementations of a row take turns, single-process opendml's among them (row 4's excepted),
``--repeats`` timed runs each; the median is reported, as a throughput of the bytes read (the input's). Taking
turns matters: this shared machine's speed can change by 2x from one minute to the next, so runs made apart
(all single-process runs after the cluster's, say) would compare two machines. Memory: a thread in each worker
process (in the client, for ``opendml``) samples its resident memory every 5 ms during each timed run;
``peak`` is the most it rose above its level at the start (the persisted data is already there), over the
workers and the runs, also counted in blocks (the row's largest block, FLOAT32 output blocks for row 4).
Targets from the issue are printed next to each row, PASS or FAIL: >= 3x faster than ``da.argmin`` over axis
0, >= 0.7x single-process opendml's throughput, and a peak of at most a few (4) blocks per worker, never the
whole array.

    python benchmarks/dask.py                        # the issue's sizes (~8 GiB arrays twice: 24 GiB of memory)
    python benchmarks/dask.py --quick                # rows 1-4 a quarter of the size, fewer runs
    python benchmarks/dask.py --sizes tiny --in-process      # a smoke test: in one process, tiny arrays
    python benchmarks/dask.py --workers 2 --threads-per-worker 1 --chunk-mib 128 --worker-device none

Writes ``dask.csv`` and ``dask.png`` (``dask-quick``, ``dask-tiny`` for the shrunk sizes) into
``benchmarks/results`` or ``--out``: one line per row and implementation, ``target`` lines with the
verdicts, the machine (and its load average: the machine may be shared) in the header. Progress goes to
stderr, the table to stdout. The exit status is 1 when an answer differed.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as ``python benchmarks/dask.py``, this file's folder comes first on sys.path, and ``import dask`` would
# import this file. The folder is dropped before anything imports Dask; spawned workers inherit the path.
_FOLDER = Path(__file__).resolve().parent
for _entry in [entry for entry in sys.path if Path(entry or ".").resolve() == _FOLDER]:
    sys.path.remove(_entry)

import argparse  # noqa: E402
import functools  # noqa: E402
import gc  # noqa: E402
import logging  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

import opendml as dml  # noqa: E402

sys.path.insert(0, str(_FOLDER))  # for harness.py (what the benchmark scripts share), and off again at once
import harness  # noqa: E402

sys.path.pop(0)

MIB = 1 << 20
ELEMENT_LIMIT = 2**32  # row 5 reduces more elements than this, and places its minimum past it
TENSOR_ELEMENTS = 2**32 - 1  # the most elements one tensor description holds (single-process opendml's limit)
CLIP_BOUNDS = (0.0, 6.0)
MEMORY_BLOCKS = 4  # "at most a few blocks": the peak a worker may add while it runs a row
SPEEDUP_OVER_DASK = 3.0
SHARE_OF_SINGLE = 0.7
CLUSTER = ("opendml-dask", "dask", "floor")  # implementations run on the cluster; "opendml" runs in the client
FLOOR_NOTE = {False: "n/a: the floor, every block read once (da.max over the same axes)",
              True: "n/a: the floor, every block read once and written as FLOAT32 (astype, to the same sink)"}


def say(message: str) -> None:
    """Progress, on stderr (stdout has the table)."""
    print(message, file=sys.stderr, flush=True)


# Sizes and rows.


@dataclass(frozen=True)
class Sizes:
    """The arrays of one run: ``matrix`` (rows 1, 2), ``cube`` (row 3), ``codes`` (row 4), ``huge`` (row 5,
    with its one 0 at ``minimum_at``); ``chunk_bytes``: the blocks' size unless ``--chunk-mib`` says."""

    name: str
    matrix: tuple[int, int]
    cube: tuple[int, int, int]
    codes: tuple[int, int]
    huge: tuple[int, int]
    minimum_at: tuple[int, int]
    chunk_bytes: int
    repeats: int
    note: str


SIZES = {
    # Blocks of 512 MiB: 16 of each 8 GiB array, 8 a worker. On 2 cores shared by the workers, the scheduler
    # and the client, a task costs Dask about 2 ms and a compute some 50 ms (docs/dask.md, chunk sizes): in
    # 128 MiB blocks that was a third of ARGMIN over all axes (0.29-0.36 s against 0.23 in 512 MiB blocks).
    "issue": Sizes("issue", (32768, 65536), (512, 4096, 1024), (32768, 65536), (65536, 69632), (65000, 12345),
                   512 * MIB, 3, "the issue's"),
    # Row 5 keeps its size: reducing more than 2^32 elements is its point.
    "quick": Sizes("quick", (8192, 65536), (128, 4096, 1024), (8192, 65536), (65536, 69632), (65000, 12345),
                   128 * MIB, 2, "quick: rows 1-4 a quarter of the issue's"),
    "tiny": Sizes("tiny", (64, 256), (8, 16, 32), (64, 256), (64, 80), (50, 7), 4096, 2,
                  "tiny: a smoke test, every row shrunk (row 5 not past 2^32)"),
}


@dataclass(frozen=True)
class Row:
    key: str
    title: str
    short: str  # for the plot
    array: str  # the Sizes field of its input
    axes: tuple[int, ...] | None  # reduced axes; None for row 4 (element-wise)


ROWS = (
    Row("1", "ARGMIN axis 0, FLOAT32", "ARGMIN axis 0", "matrix", (0,)),
    Row("2", "ARGMIN all axes, FLOAT32", "ARGMIN all axes", "matrix", (0, 1)),
    Row("3", "ARGMIN axes {0, 2}, FLOAT32", "ARGMIN axes {0, 2}", "cube", (0, 2)),
    Row("4", "DEQUANTIZE_LINEAR per-column -> CLIP [0, 6], UINT8 -> FLOAT32", "DEQUANTIZE -> CLIP", "codes", None),
    Row("5", "ARGMIN all axes, UINT8 > 2^32 elements, INT64", "ARGMIN > 2^32", "huge", (0, 1)),
)


def flat_position(sizes: Sizes) -> int:
    """Row 5's placed minimum, flattened row-major: the index opendml must return."""
    return sizes.minimum_at[0] * sizes.huge[1] + sizes.minimum_at[1]


# The arrays, made on the workers (or, with the same generators, in the client).


@dataclass
class Data:
    """One input: the Dask array (a recipe: nothing is computed until asked) and, for row 4, its operands."""

    name: str
    array: Any
    scale: np.ndarray | None = None
    zero_point: np.ndarray | None = None

    @property
    def largest_block(self) -> int:
        """Bytes of the largest block a row holds at once: the input's, or row 4's FLOAT32 output's."""
        elements = math.prod(max(c) for c in self.array.chunks)
        return elements * (4 if self.name == "codes" else self.array.dtype.itemsize)


def columns_chunks(shape: tuple[int, int], chunk_bytes: int, itemsize: int) -> tuple[int, int]:
    """Blocks that span the first axis, of about ``chunk_bytes`` (at least one column)."""
    return shape[0], max(1, min(shape[1], chunk_bytes // (shape[0] * itemsize)))


def make_data(name: str, sizes: Sizes, chunk_bytes: int, seed: int) -> Data:
    """The named input as a Dask array whose blocks are made where they are computed."""
    import dask.array as da
    from dask.array.core import normalize_chunks

    rng = da.random.default_rng(seed)
    if name == "matrix":
        chunks = columns_chunks(sizes.matrix, chunk_bytes, 4)
        return Data(name, rng.standard_normal(sizes.matrix, dtype=np.float32, chunks=chunks))
    if name == "cube":
        # Dask's own blocks of about that size, the innermost axis kept whole (docs/dask.md, chunk sizes: each
        # block's rows stay contiguous); axes 0 and 2 are still split, so blocks are merged across axis 0.
        chunks = normalize_chunks(("auto", "auto", -1), sizes.cube, limit=chunk_bytes, dtype=np.float32)
        return Data(name, rng.standard_normal(sizes.cube, dtype=np.float32, chunks=chunks))
    if name == "codes":
        # Sized by the FLOAT32 output's blocks (four times the input's): those are what a task holds.
        chunks = columns_chunks(sizes.codes, chunk_bytes, 4)
        small = np.random.default_rng(seed + 1000)  # [columns] each: small enough to go with the graph
        scale = (small.random(sizes.codes[1]) * 0.1 + 0.01).astype(np.float32)
        zero_point = small.integers(0, 256, sizes.codes[1], dtype=np.uint8)
        return Data(name, rng.integers(0, 256, sizes.codes, dtype=np.uint8, chunks=chunks), scale, zero_point)
    chunks = normalize_chunks("auto", sizes.huge, limit=chunk_bytes, dtype=np.uint8)
    array = da.map_blocks(functools.partial(huge_block, seed, sizes.minimum_at), chunks=chunks, dtype=np.uint8,
                          meta=np.empty((0, 0), np.uint8))
    return Data(name, array)


def huge_block(seed: int, minimum_at: tuple[int, ...], block_info: Any = None) -> np.ndarray:
    """One block of row 5's input: values in [1, 255] from a generator seeded by the block's place, and the
    one 0 of the whole array where ``minimum_at`` falls in this block."""
    info = block_info[None]
    block = np.random.default_rng([seed, *info["chunk-location"]]).integers(1, 256, info["chunk-shape"],
                                                                            dtype=np.uint8)
    location = info["array-location"]
    if all(start <= p < stop for p, (start, stop) in zip(minimum_at, location)):
        block[tuple(p - start for p, (start, _) in zip(minimum_at, location))] = 0
    return block


def fill_numpy(data: Data) -> np.ndarray:
    """The same values as one NumPy array in this process, written block by block (no second copy)."""
    import dask.array as da

    target = np.empty(data.array.shape, data.array.dtype)
    da.store(data.array, target, lock=False, scheduler="threads")
    return target


# What runs per block on the workers for row 4, besides opendml.


def keep_one(block: np.ndarray) -> np.ndarray:
    """Row 4's sink: one element of a block computed in full (the rest is dropped with the block)."""
    return block[(slice(0, 1),) * block.ndim].copy()


def column_xor(block: np.ndarray) -> np.ndarray:
    """A FLOAT32 block's bits XOR-ed down each column ([1, columns] UINT32): XOR is associative, so these of
    every block XOR-ed together are the whole array's, whatever its blocks (a check of every bit)."""
    return np.bitwise_xor.reduce(np.ascontiguousarray(block).view(np.uint32), axis=0, keepdims=True)


def sink(array: Any) -> Any:
    return array.map_blocks(keep_one, chunks=tuple((1,) * len(c) for c in array.chunks), dtype=array.dtype,
                            meta=np.empty((0,) * array.ndim, array.dtype))


def checksum(array: Any) -> np.ndarray:
    """Row 4's result's column XOR, computed (untimed) on the cluster."""
    parts = array.map_blocks(column_xor, chunks=((1,) * len(array.chunks[0]), array.chunks[1]), dtype=np.uint32,
                             meta=np.empty((0, 0), np.uint32)).compute()
    return np.bitwise_xor.reduce(parts, axis=0)


def dask_dequantize_clip(data: Data) -> Any:
    """Row 4 as the straightforward Dask expression: ``(x - zero_point)`` exact in int32, converted to FLOAT32,
    one multiply by the scale, then ``da.clip``."""
    import dask.array as da

    assert data.scale is not None and data.zero_point is not None
    wide = data.array.astype(np.int32) - data.zero_point.astype(np.int32)
    return da.clip(wide.astype(np.float32) * data.scale, *CLIP_BOUNDS)


@dml.compile
def dequantize_clip(x: Any, scale: Any, zero_point: Any) -> Any:
    """Row 4 as one compiled graph: one fused pass and one FLOAT32 result per block (the functional calls
    would allocate and write a second)."""
    return dml.clip(dml.dequantize_linear(x, scale, zero_point), *CLIP_BOUNDS)


def opendml_dequantize_clip(data: Data, x: Any, device: Any) -> Any:
    """Row 4 by opendml: the compiled function, lazily on a Dask array (its graph on each block), at once on a
    NumPy array. ``device``: None (the array's default device), or the device to compile it for."""
    function = dequantize_clip if device is None else _compiled_for(device)
    return function(x, data.scale, data.zero_point)


_COMPILED: dict[Any, Any] = {}


def _compiled_for(device: Any) -> Any:
    """``dequantize_clip`` compiled for ``device`` (once per device, kept for the run)."""
    key = id(device)
    if key not in _COMPILED:
        _COMPILED[key] = (device, dml.compile(dequantize_clip.fn, device=device))
    return _COMPILED[key][1]


# Peak memory, sampled in each process.


class PeakMemory:
    """This process's resident memory sampled by a thread every ``interval`` seconds, from now to ``stop``."""

    def __init__(self, interval: float = 0.005) -> None:
        import psutil  # type: ignore[import-untyped]

        self._process = psutil.Process()
        self._interval = interval
        self._done = threading.Event()
        self.base = self.peak = int(self._process.memory_info().rss)
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._done.wait(self._interval):
            self.peak = max(self.peak, int(self._process.memory_info().rss))

    def stop(self) -> int:
        """How far the memory rose above its level at the start (bytes)."""
        self._done.set()
        self._thread.join()
        self.peak = max(self.peak, int(self._process.memory_info().rss))
        return self.peak - self.base


def start_sampling(dask_worker: Any) -> None:
    """Run on each worker (``client.run``): the sampler is kept on the worker, where ``stop_sampling`` finds it."""
    dask_worker.opendml_benchmark_memory = PeakMemory()


def stop_sampling(dask_worker: Any) -> int:
    return int(dask_worker.opendml_benchmark_memory.stop())


class WorkerMemory:
    """The highest rise of any worker's memory between start and ``stop``."""

    def __init__(self, client: Any) -> None:
        self._client = client
        client.run(start_sampling)

    def stop(self) -> int:
        return max(self._client.run(stop_sampling).values())


# Timing.


@dataclass
class Timing:
    seconds: list[float]
    peak: int  # bytes: the highest rise of memory over the timed runs

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


@dataclass
class Impl:
    """``run`` is what is timed; ``check`` (untimed, run first: also the warm-up) gives the answer checked."""

    run: Callable[[], Any]
    check: Callable[[], Any] | None = None


def timed_turns(impls: dict[str, Impl], repeats: int, memory: Callable[[str], Any]
                ) -> tuple[dict[str, Timing], dict[str, Any]]:
    """Each implementation's check once, untimed (it compiles on every worker, touches the pages, and its
    answer is returned), then ``repeats`` timed runs each, taking turns so that a change of the shared
    machine's load falls on all alike; memory is sampled during each timed run (``memory(name)`` starts a
    sampler where that implementation runs, its ``stop()`` gives the rise)."""
    answers = {}
    for name, impl in impls.items():
        say(f"    {name}: warm-up and check")
        answers[name] = (impl.check or impl.run)()
    timings = {name: Timing([], 0) for name in impls}
    names = list(impls)
    for turn in range(repeats):
        for name in names[turn % len(names):] + names[:turn % len(names)]:
            sampler = memory(name)
            start = time.perf_counter()
            impls[name].run()
            seconds = time.perf_counter() - start
            timings[name].seconds.append(seconds)
            timings[name].peak = max(timings[name].peak, sampler.stop())
            say(f"    {name}: {seconds:.3f} s")
    return timings, answers


# One row's results.


@dataclass
class Verdict:
    target: str
    value: str
    passed: bool | None  # None: could not be judged

    def __str__(self) -> str:
        status = "n/a" if self.passed is None else ("PASS" if self.passed else "FAIL")
        return f"{status} {self.target}: {self.value}"


@dataclass
class Result:
    row: Row
    shape: tuple[int, ...]
    dtype: str
    blocks: str  # how the input is cut
    read_bytes: int
    block_bytes: int
    timings: dict[str, Timing] = field(default_factory=dict)
    answers: dict[str, Any] = field(default_factory=dict)
    checks: dict[str, str] = field(default_factory=dict)
    verdicts: list[Verdict] = field(default_factory=list)

    def throughput(self, name: str) -> float:
        """GB/s of the input read, at the median time."""
        return self.read_bytes / self.timings[name].median / 1e9


def describe_blocks(data: Data) -> str:
    array = data.array
    largest = [max(c) for c in array.chunks]
    even = all(len(set(c[:-1])) <= 1 and c[-1] <= c[0] for c in array.chunks)
    nbytes = math.prod(largest) * array.dtype.itemsize
    out = f", {data.largest_block / MIB:.3g} MiB out" if data.largest_block != nbytes else ""
    return (f"{array.npartitions} blocks{'' if even else ' (uneven)'}, largest {'x'.join(map(str, largest))} "
            f"({nbytes / MIB:.3g} MiB{out})")


# The cluster phase.


@dataclass
class Options:
    sizes: Sizes
    chunk_bytes: int
    repeats: int
    workers: int
    threads_per_worker: int
    processes: bool
    worker_device: str  # "explicit": one Device("cpu", threads=threads_per_worker); "none": None
    rows: tuple[Row, ...]
    seed: int


@functools.cache
def _explicit_device(threads: int) -> dml.Device:
    return dml.Device("cpu", threads=threads)


def worker_device(options: Options) -> dml.Device | None:
    """The ``device=`` each call on the cluster passes: one Device("cpu", threads=threads per worker) for the
    run (it pickles, and becomes one device per worker process), or None (each worker's default device,
    which takes the worker's share of the cores)."""
    if options.worker_device == "none":
        return None
    return _explicit_device(options.threads_per_worker)


def cluster_impls(row: Row, data: Data, options: Options) -> dict[str, Impl]:
    """What the cluster runs for a row: opendml on the Dask array (built and computed), Dask's own where it
    can do the job at all, and the floor (every block read once by the cheapest whole-block NumPy call)."""
    import dask.array as da

    x = data.array
    if row.axes is None:
        return {"opendml-dask": Impl(lambda: sink(opendml_dequantize_clip(data, x, worker_device(options))).compute(),
                                     lambda: checksum(opendml_dequantize_clip(data, x, worker_device(options)))),
                "dask": Impl(lambda: sink(dask_dequantize_clip(data)).compute(),
                             lambda: checksum(dask_dequantize_clip(data))),
                "floor": Impl(lambda: sink(x.astype(np.float32)).compute())}
    axes = row.axes
    # Timed: the indices, as da.argmin gives; checked: indices and values, from the same single pass.
    impls = {"opendml-dask": Impl(lambda: dml.argmin(x, axes, device=worker_device(options)).compute(),
                                  lambda: da.compute(*dml.argmin(x, axes, return_values=True,
                                                                 device=worker_device(options))))}
    if len(axes) == 1:
        impls["dask"] = Impl(lambda: x.argmin(axis=axes[0]).compute())
    elif len(axes) == x.ndim:
        impls["dask"] = Impl(lambda: x.argmin().compute())
    impls["floor"] = Impl(lambda: x.max(axis=axes, keepdims=True).compute())
    return impls


def run_row(client: Any, row: Row, data: Data, local: Local, device: dml.Device, options: Options) -> Result:
    """One row: the cluster's implementations and single-process opendml on the client's copy (where there is
    one) taking turns, then the checks."""
    say(f"row {row.key}: {row.title} {list(data.array.shape)}, {describe_blocks(data)}")
    x = data.array
    result = Result(row, tuple(x.shape), str(x.dtype), describe_blocks(data), int(x.nbytes), data.largest_block)
    impls = cluster_impls(row, data, options)
    if local.array is not None:
        impls["opendml"] = single_process_impl(row, data, local.array, device)
    timings, answers = timed_turns(impls, options.repeats,
                                   lambda name: PeakMemory() if name == "opendml" else WorkerMemory(client))
    result.timings.update(timings)
    result.answers.update(answers)
    result.checks["floor"] = FLOOR_NOTE[row.axes is None]
    if row.key == "5":
        result.checks["INT32 output"] = int32_output(x)
        check_huge(result, options.sizes)
    if local.array is not None:
        check_row(result, local.array)
    elif local.note:
        result.checks["opendml"] = local.note
    return result


def int32_output(x: Any) -> str:
    """Row 5 with an INT32 output: past 2^32 elements, refused on the client before anything runs (the rule
    applies to the whole array's count)."""
    count = math.prod(x.shape)
    try:
        dml.argmin(x, None, output_type="INT32")
    except dml.OpenDMLError as error:
        return f"refused on the client: {error}" if count > ELEMENT_LIMIT else f"DIFFERS: refused: {error}"
    return f"n/a: accepted ({count} elements)" if count <= ELEMENT_LIMIT else "DIFFERS: accepted"


def cluster_phase(options: Options, header: dict[str, str]) -> list[Result]:
    from distributed import Client, LocalCluster, wait

    say(f"starting LocalCluster({options.workers} workers x {options.threads_per_worker} thread, "
        f"processes={options.processes})")
    with LocalCluster(n_workers=options.workers, threads_per_worker=options.threads_per_worker,
                      processes=options.processes, dashboard_address=None, silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client:
        describe_cluster(client, options, header)
        results = []
        device = dml.Device("cpu")
        for name in dict.fromkeys(row.array for row in options.rows):
            data = make_data(name, options.sizes, options.chunk_bytes, options.seed)
            say(f"making {name} {list(data.array.shape)} {data.array.dtype} on the workers "
                f"({data.array.nbytes / 2**30:.2f} GiB)")
            start = time.perf_counter()
            data.array = client.persist(data.array)
            wait(data.array)
            say(f"  made in {time.perf_counter() - start:.1f} s")
            local = Local(None) if name in APART else client_copy(make_data(name, options.sizes, options.chunk_bytes,
                                                                            options.seed), options)
            results += [run_row(client, row, data, local, device, options) for row in options.rows
                        if row.array == name]
            del data, local  # releases the persisted blocks on the workers, and the client's copy
            gc.collect()
    for result in results:
        if result.row.array in APART:
            run_apart(result, options, device)
    return results


def describe_cluster(client: Any, options: Options, header: dict[str, str]) -> None:
    """The cluster's facts for the header: workers, their memory limits, and the device a task runs on."""
    workers = client.scheduler_info()["workers"]
    limits = sorted({int(w.get("memory_limit") or 0) for w in workers.values()})
    header["cluster"] = (f"LocalCluster, {len(workers)} workers x {options.threads_per_worker} thread, "
                         f"processes={options.processes}, memory limit per worker "
                         f"{', '.join(f'{v / 2**30:.1f} GiB' for v in limits)}")
    default_threads = sorted(set(client.run(default_device_threads).values()))
    if options.worker_device == "none":
        header["device on the workers"] = (f"None: each worker's default device "
                                           f"({'/'.join(map(str, default_threads))} threads)")
    else:
        header["device on the workers"] = (f"Device('cpu', threads={options.threads_per_worker}) "
                                           f"(a worker's default device would have "
                                           f"{'/'.join(map(str, default_threads))} threads)")


def default_device_threads() -> int:
    from opendml.functional.devices import default_device

    return int(default_device().threads)


# Single-process opendml, in the client, and the checks.


def enough_memory(nbytes: int) -> bool:
    import psutil  # type: ignore[import-untyped]

    return nbytes < 0.85 * psutil.virtual_memory().available


# Row 4's single-process run allocates its whole FLOAT32 result (8 GiB) at once. Beside the cluster's memory
# its pages came 4 KiB at a time (no free huge pages: 2-4 s a run against 0.6 s in a process of its own), so it
# runs after the cluster is closed, as a single-process user would run it.
APART = frozenset({"codes"})


@dataclass
class Local:
    """The client's copy of an input for single-process opendml (None where there is none: ``note`` says why)."""

    array: np.ndarray | None
    note: str = ""


def client_copy(data: Data, options: Options) -> Local:
    """The values of ``data`` (a recipe not yet computed), made in the client as one NumPy array while the
    cluster holds its own, so that single-process opendml takes turns with the cluster's runs (this machine's
    speed can change by 2x from one minute to the next: runs apart would compare two machines)."""
    name = data.name
    if name == "huge" and math.prod(options.sizes.huge) > TENSOR_ELEMENTS:
        return Local(None, f"n/a: {single_tensor_refusal(options.sizes.huge)}")
    needed = data.array.nbytes * (5 if name == "codes" else 1)  # row 4 also holds its FLOAT32 result
    if not enough_memory(needed):
        return Local(None, f"skipped: {needed / 2**30:.1f} GiB do not fit beside the cluster's copy (try --quick)")
    say(f"making {name} as one NumPy array in the client ({data.array.nbytes / 2**30:.2f} GiB)")
    return Local(fill_numpy(data))


def run_apart(result: Result, options: Options, device: dml.Device) -> None:
    """Single-process opendml for a row in ``APART``, after the cluster is closed, then the checks."""
    data = make_data(result.row.array, options.sizes, options.chunk_bytes, options.seed)
    local = client_copy(data, options)
    if local.array is None:
        result.checks["opendml"] = local.note
        return
    say(f"row {result.row.key}: single-process opendml ({device.threads} threads), the cluster closed")
    impl = single_process_impl(result.row, data, local.array, device)
    timings, answers = timed_turns({"opendml": impl}, options.repeats, lambda name: PeakMemory())
    result.timings.update(timings)
    result.answers.update(answers)
    check_row(result, local.array)


def single_process_impl(row: Row, data: Data, x: np.ndarray, device: dml.Device) -> Impl:
    """Single-process opendml on the client's copy: what the cluster's results are checked against."""
    if row.axes is None:
        return Impl(lambda: opendml_dequantize_clip(data, x, device),
                    lambda: column_xor(opendml_dequantize_clip(data, x, device))[0])
    axes = row.axes
    return Impl(lambda: dml.argmin(x, axes, device=device),
                lambda: dml.argmin(x, axes, return_values=True, device=device))


def check_row(result: Result, x: np.ndarray) -> None:
    """The cluster's answers against single-process opendml's (``result.answers["opendml"]``)."""
    row = result.row
    reference = result.answers["opendml"]
    result.checks["opendml"] = "reference"
    if row.axes is None:
        result.checks["opendml-dask"] = same_bits(reference, result.answers["opendml-dask"], "column XOR of every bit")
        result.checks["dask"] = same_bits(reference, result.answers["dask"], "column XOR of every bit")
        return
    indices, values = reference
    opendml_dask = same_bits((indices, values), result.answers["opendml-dask"], "indices and values")
    if row.key == "5":  # also checked against the placed minimum
        opendml_dask = f"{result.checks['opendml-dask']}; {opendml_dask}"
    result.checks["opendml-dask"] = opendml_dask
    if "dask" in result.answers:
        result.checks["dask"] = compare_indices(x, row.axes, indices, result.answers["dask"])


def same_bits(expected: Any, got: Any, what: str) -> str:
    as_tuple = (lambda v: v if isinstance(v, tuple) else (v,))  # noqa: E731
    for e, g in zip(as_tuple(expected), as_tuple(got)):
        e, g = np.asarray(e), np.asarray(g)
        if e.dtype != g.dtype or e.shape != g.shape or e.tobytes() != g.tobytes():
            differing = int(np.count_nonzero(e != g)) if e.shape == g.shape else -1
            return f"DIFFERS: {what} ({e.dtype}{list(e.shape)} against {g.dtype}{list(g.shape)}, {differing} differ)"
    return f"exact ({what}, bit for bit)"


def compare_indices(x: np.ndarray, axes: tuple[int, ...], reference: np.ndarray, got: Any) -> str:
    """Dask's indices (one axis: the kept axes' shape; all axes: a number, flattened) against opendml's (rank
    kept): equal, or where not, pointing at an element equal to opendml's (a tie broken another way)."""
    got = np.asarray(got).reshape(reference.shape)
    differ = got != reference
    if not differ.any():
        return "equal indices"
    if len(axes) == x.ndim:
        ties = x.reshape(-1)[got.reshape(-1)] == x.reshape(-1)[reference.reshape(-1)]
    else:
        axis = axes[0]
        ties = np.take_along_axis(x, got, axis) == np.take_along_axis(x, reference, axis)
    wrong = int(np.count_nonzero(differ & ~ties))
    if wrong:
        return f"DIFFERS: {wrong} indices of larger elements"
    return f"equal but {int(np.count_nonzero(differ))} ties broken another way (indices of equal elements)"


def check_huge(result: Result, sizes: Sizes) -> None:
    """Row 5 against the placed minimum; single-process opendml cannot describe the whole array."""
    position = flat_position(sizes)
    indices, values = result.answers["opendml-dask"]
    ok = np.asarray(indices).dtype == np.int64 and np.asarray(indices).reshape(-1).tolist() == [position] \
        and np.asarray(values).reshape(-1).tolist() == [0]
    result.checks["opendml-dask"] = (f"exact (INT64 index {position}, value 0: the placed minimum)" if ok else
                                     f"DIFFERS: index {np.asarray(indices).reshape(-1).tolist()} "
                                     f"({np.asarray(indices).dtype}), value {np.asarray(values).reshape(-1).tolist()}"
                                     f"; the minimum is at {position}")
    if "dask" in result.answers:
        found = int(np.asarray(result.answers["dask"]))
        result.checks["dask"] = (f"equal indices ({found}: the placed minimum)" if found == position
                                 else f"DIFFERS: index {found}; the minimum is at {position}")


def single_tensor_refusal(shape: tuple[int, ...]) -> str:
    """What single-process opendml says to the whole of row 5's array (a broadcast view: no memory)."""
    try:
        dml.argmin(np.broadcast_to(np.uint8(1), shape), None)
    except dml.OpenDMLError as error:
        return str(error)
    return "accepted"


# Targets.


def targets(result: Result, sizes: Sizes) -> list[Verdict]:
    t = {name: timing.median for name, timing in result.timings.items()}
    verdicts = []
    if result.row.key == "1":
        verdicts.append(Verdict(f">= {SPEEDUP_OVER_DASK:g}x faster than da.argmin over axis 0",
                                f"{t['dask'] / t['opendml-dask']:.2f}x",
                                t["dask"] / t["opendml-dask"] >= SPEEDUP_OVER_DASK)
                        if "dask" in t else Verdict("faster than da.argmin over axis 0", "not run", None))
    if result.row.key != "5":
        share = t["opendml"] / t["opendml-dask"] if "opendml" in t else None
        verdicts.append(Verdict(f">= {SHARE_OF_SINGLE:g}x single-process opendml's throughput",
                                "not run" if share is None else f"{share:.2f}x",
                                None if share is None else share >= SHARE_OF_SINGLE))
    peak = result.timings["opendml-dask"].peak
    blocks = peak / result.block_bytes
    verdicts.append(Verdict(f"peak worker memory <= {MEMORY_BLOCKS} blocks", f"{peak / MIB:.0f} MiB = {blocks:.2f} "
                            f"blocks of {result.block_bytes / MIB:.3g} MiB", blocks <= MEMORY_BLOCKS))
    if result.row.key == "5":
        position = flat_position(sizes)
        where = "past 2^32" if position >= ELEMENT_LIMIT else "not past 2^32 at these sizes"
        verdicts.append(Verdict(f"INT64 index of the minimum placed at {position} ({where})",
                                result.checks["opendml-dask"], result.checks["opendml-dask"].startswith("exact")))
    return verdicts


# Files and the table.

COLUMNS = ["row", "title", "shape", "dtype", "blocks", "implementation", "where", "median_s", "min_s", "max_s",
           "runs", "read_gb_per_s", "peak_mib", "peak_blocks", "check"]


def write_csv(results: list[Result], header: dict[str, str], path: Path) -> None:
    harness.write_csv(path, header, COLUMNS, [row for r in results for row in _csv_rows(r)])


def _csv_rows(r: Result) -> list[list[Any]]:
    shape = "x".join(map(str, r.shape))
    rows = []
    for name in dict.fromkeys([*r.timings, *r.checks]):
        t = r.timings.get(name)
        cells = ([f"{t.median:.4f}", f"{min(t.seconds):.4f}", f"{max(t.seconds):.4f}", len(t.seconds),
                  f"{r.throughput(name):.3f}", f"{t.peak / MIB:.1f}", f"{t.peak / r.block_bytes:.2f}"]
                 if t else [""] * 7)
        where = "cluster" if name in CLUSTER else ("client" if name == "opendml" else "")
        rows.append([r.row.key, r.row.title, shape, r.dtype, r.blocks, name, where, *cells, r.checks.get(name, "")])
    rows += [[r.row.key, r.row.title, shape, r.dtype, r.blocks, "target", *[""] * 8, str(verdict)]
             for verdict in r.verdicts]
    return rows


def plot(results: list[Result], header: dict[str, str], path: Path) -> None:
    plt = harness.pyplot(say)
    if plt is None:
        return
    names = list(dict.fromkeys(name for r in results for name in r.timings))
    fig, (speed, memory) = plt.subplots(1, 2, figsize=(13, 5.5), gridspec_kw={"width_ratios": [3, 2]})
    width = 0.8 / max(len(names), 1)
    for k, name in enumerate(names):
        offset = (k - (len(names) - 1) / 2) * width
        rows = [i for i, r in enumerate(results) if name in r.timings]
        speed.bar([i + offset for i in rows], [results[i].throughput(name) for i in rows], width, label=name)
        if name in CLUSTER:
            memory.bar([i + offset for i in rows], [results[i].timings[name].peak / results[i].block_bytes
                                                    for i in rows], width, label=name)
    labels = [f"{r.row.key}: {r.row.short}\n{'x'.join(map(str, r.shape))}\n{r.dtype}" for r in results]
    speed.set_yscale("log")
    speed.set_ylabel("GB/s of input read (median, log)")
    speed.set_title(f"throughput: {header['cluster'].split(', memory')[0]}", fontsize=8)
    memory.axhline(MEMORY_BLOCKS, color="black", linewidth=1, label=f"target: {MEMORY_BLOCKS} blocks")
    memory.set_ylabel("peak rise of a worker's memory, in blocks")
    memory.set_title("peak worker memory during a run", fontsize=8)
    for ax, names_of in ((speed, labels), (memory, [f"row {r.row.key}" for r in results])):
        ax.set_xticks(range(len(results)))
        ax.set_xticklabels(names_of, fontsize=7)
        ax.legend(fontsize=7)
    fig.suptitle(f"opendml on Dask arrays ({header['sizes']} sizes): {header['cpu']}, {header['cores']} cores, "
                 f"load {header['load average at start']}", fontsize=9)
    harness.save(plt, fig, path, dpi=110)


def summary(results: list[Result]) -> str:
    lines = [f"{'row':4} {'implementation':14} {'where':8} {'median s':>9} {'GB/s':>7} {'peak MiB':>9} "
             f"{'blocks':>7}  check"]
    for r in results:
        lines.append(f"{r.row.key}: {r.row.title} {'x'.join(map(str, r.shape))} ({r.blocks})")
        for name in dict.fromkeys([*r.timings, *r.checks]):
            t = r.timings.get(name)
            where = "cluster" if name in CLUSTER else ("client" if name == "opendml" else "")
            numbers = (f"{t.median:9.3f} {r.throughput(name):7.2f} {t.peak / MIB:9.0f} {t.peak / r.block_bytes:7.2f}"
                       if t else f"{'-':>9} {'-':>7} {'-':>9} {'-':>7}")
            lines.append(f"{'':4} {name:14} {where:8} {numbers}  {r.checks.get(name, '')}")
        medians = {name: timing.median for name, timing in r.timings.items()}
        ratios = [f"{other} / opendml-dask time: {medians[other] / medians['opendml-dask']:.2f}"
                  for other in ("dask", "floor", "opendml") if other in medians and "opendml-dask" in medians]
        if ratios:
            lines.append(f"{'':4} {'; '.join(ratios)}")
        lines.extend(f"{'':4} target {verdict}" for verdict in r.verdicts)
    return "\n".join(lines)


def machine_header(options: Options) -> dict[str, str]:
    from importlib.metadata import version

    import psutil  # type: ignore[import-untyped]

    from opendml.thread_count import available_cores

    try:
        numba_version = version("numba")
    except ImportError:
        numba_version = "not installed"
    return {"cpu": harness.cpu_model(), "cores": str(available_cores()),
            "memory": f"{psutil.virtual_memory().total / 2**30:.1f} GiB",
            "sizes": options.sizes.note, "blocks": f"about {options.chunk_bytes / MIB:.3g} MiB",
            "load average at start": harness.load_average(),
            "repeats": str(options.repeats), "python": sys.version.split()[0], "numpy": np.__version__,
            "numba": numba_version, "dask": version("dask"), "distributed": version("distributed"),
            "commit": harness.commit()}


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = harness.parser(__doc__)
    parser.add_argument("--quick", action="store_true", help="rows 1-4 a quarter of the size, fewer runs")
    parser.add_argument("--sizes", choices=list(SIZES), default=None,
                        help="array sizes (default: issue, or quick with --quick); tiny is a smoke test")
    parser.add_argument("--rows", default="", help="comma-separated rows to run (1,2,3,4,5; default all)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--threads-per-worker", type=int, default=1, help="threads of each worker (default 1)")
    parser.add_argument("--in-process", action="store_true",
                        help="workers as threads of this process (processes=False), as the smoke test runs")
    parser.add_argument("--chunk-mib", type=float, default=None,
                        help="block size in MiB (default 512; quick: 128; tiny: 4 KiB); row 4's FLOAT32 output blocks")
    parser.add_argument("--worker-device", choices=["explicit", "none"], default="none",
                        help="device= of the calls on the cluster: None (each worker's default device: "
                             "its share of the cores; default), or one Device('cpu', threads=threads per worker)")
    harness.add_repeats(parser, "timed runs per implementation (default 3)")
    parser.add_argument("--seed", type=int, default=0)
    harness.add_out(parser)
    return parser.parse_args(argv)


def options_of(args: argparse.Namespace) -> Options:
    sizes = SIZES[args.sizes or ("quick" if args.quick else "issue")]
    wanted = harness.names(args.rows)
    unknown = wanted - {row.key for row in ROWS}
    if unknown:
        raise SystemExit(f"--rows: no row {', '.join(sorted(unknown))} (rows: 1, 2, 3, 4, 5)")
    chunk_bytes = sizes.chunk_bytes if args.chunk_mib is None else max(1, int(args.chunk_mib * MIB))
    return Options(sizes, chunk_bytes, args.repeats or sizes.repeats, args.workers, args.threads_per_worker,
                   not args.in_process, args.worker_device,
                   tuple(row for row in ROWS if not wanted or row.key in wanted), args.seed)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError as error:
        raise SystemExit(f"{error.name} is not installed: pip install 'opendml[dask]'") from None
    options = options_of(args)
    header = machine_header(options)
    say(", ".join(f"{k}: {v}" for k, v in header.items()))
    results = cluster_phase(options, header)
    for result in results:
        result.verdicts = targets(result, options.sizes)
    header["load average at end"] = harness.load_average()
    stem = "dask" if options.sizes.name == "issue" else f"dask-{options.sizes.name}"
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(results, header, args.out / f"{stem}.csv")
    plot(results, header, args.out / f"{stem}.png")
    print("\n".join(f"# {k}: {v}" for k, v in header.items()))
    print(summary(results))
    print(f"\nwrote {args.out / stem}.csv and .png")
    return 1 if any(c.startswith("DIFFERS") for r in results for c in r.checks.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
