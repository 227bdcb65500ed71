"""Greedy decoding's reduction: ARGMAX over the last axis of ``[batch, vocab]`` logits, on the GPU.

Each step of greedy decoding picks the next token of every sequence as the index of its largest logit: one
ARGMAX over the vocabulary of a new ``[batch, vocab]`` tensor (FLOAT16 or FLOAT32), batch 1 to 256, vocab
32,000 to 256,000 (Llama 2's 32,000, GPT-2's odd 50,257, Llama 3's 128,256, Gemma's 256,000). The kernel
reads each logit once: its floor is the bytes it reads over the bandwidth of a large device-to-device copy
measured in the same run (bytes read and written over its time), the least any implementation needs.

Implementations, for each shape (``us`` per call):

- ``opendml``: the compiled ARGMAX operator recorded into a command list of many dispatches, each over its
  own input buffer, executed by a queue with CUDA graphs (``docs/recording.md``): the kernel's device time,
  the launch gaps of a graph included. ``kernels`` says how many kernels a call runs: one where the pieces of
  a split row are merged by the scan itself, two with a combine pass.
- ``opendml, clusters off``: the same with the device's thread-block clusters turned off (only on a GPU that
  has them, sm_90 on): long rows split into pieces that the scan merges through counters, the plan a GPU
  without clusters runs; a reference, so that both plans are timed in one run on one machine.
- ``empty kernel (CUDA graph)``: a reference, not an implementation: an empty kernel's launches captured
  into a graph of as many calls, replayed: what any one-kernel call costs in a graph before it reads a byte
  (its launch and the gap to the next node).
- ``torch.argmax (CUDA graph)``: the same calls of ``torch.argmax(x, 1, keepdim=True, out=...)`` captured
  into one CUDA graph by PyTorch, replayed: its kernel's device time likewise.
- ``torch.compile (CUDA graph)``: ``torch.compile`` of the same function (static shapes, its default mode),
  compiled and warmed, its calls captured into a CUDA graph as above (only for ``--compile-vocab``, by
  default 128,256: each shape compiles anew).
- ``opendml functional (CUDA graph)``: ``opendml.argmax(x, 1)`` on PyTorch tensors (a new result each call)
  captured into a CUDA graph by PyTorch after a warm-up call, replayed.
- ``opendml functional (eager)`` and ``torch.argmax (eager)``: calls in a row on the host, the GPU waited for
  after the last: what a decode loop without graphs sees per step, host time or device time, whichever is
  longer (benchmarks/latency.py times the host alone).

Calls cycle over several inputs (up to 64, at least 256 MB together where the shape allows: more than L2
holds), so that a call reads memory, not the cache. A sample is a graph of 64 calls replayed until it has
taken about 20 ms, timed by the host's clock with the GPU waited for (the graph launches' host time spread
over thousands of calls); the median of ``--repeats`` samples, the implementations taking turns.

Before timing, every implementation's indices over every input are checked against NumPy's ``argmax`` of
the same bits (``exact``); an implementation that picks another index of the same largest value (ties are
common among FLOAT16 logits) is reported ``tie: another index of the max`` and still timed; one that gives
any other answer is reported as DIFFERS and not timed. Targets from the issue, printed PASS or FAIL:
``opendml`` one kernel and at most 3.5 us for batch <= 8; at most 1.5 x the floor from batch 64 up.

    python benchmarks/decode.py                                 # every shape, FLOAT16 and FLOAT32
    python benchmarks/decode.py --batch 8,64 --vocab 128256 --dtype FLOAT16 --repeats 5 --out DIR
    python benchmarks/decode.py --skip torch.compile

Writes ``decode-<gpu>.csv`` and ``.png`` into ``benchmarks/results`` or ``--out``; progress goes to stderr,
the table and the verdicts to stdout. The exit status is 1 when an answer differed, 2 without a GPU.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # for harness.py: what the benchmark scripts share
import harness

sys.path.pop(0)

BATCHES = (1, 8, 64, 256)
VOCABS = (32000, 50257, 128256, 256000)
DTYPES = ("FLOAT16", "FLOAT32")
CALLS = 64  # calls of a captured graph (or a command list)
CYCLE_BYTES = 256 << 20  # the inputs a shape's calls cycle over hold at least this much, where 64 can
MAX_INPUTS = 64
SAMPLE_SECONDS = 0.02
SMALL_BATCH, SMALL_TARGET_US = 8, 3.5  # the targets: one kernel and <= 3.5 us for batch <= 8 ...
LARGE_BATCH, LARGE_TARGET = 64, 1.5  # ... and <= 1.5 x the floor from batch 64 up
OPENDML = "opendml"
NO_CLUSTERS = "opendml, clusters off"
EMPTY = "empty kernel (CUDA graph)"
PEERS = (NO_CLUSTERS, EMPTY, "torch.argmax (CUDA graph)", "torch.compile (CUDA graph)",
         "opendml functional (CUDA graph)", "opendml functional (eager)", "torch.argmax (eager)")


def progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Shape:
    batch: int
    vocab: int
    dtype: str  # FLOAT16 or FLOAT32

    @property
    def numpy(self) -> np.dtype:
        return np.dtype(np.float16 if self.dtype == "FLOAT16" else np.float32)

    @property
    def nbytes(self) -> int:
        return self.batch * self.vocab * self.numpy.itemsize

    @property
    def inputs(self) -> int:
        """How many inputs the calls cycle over: enough for CYCLE_BYTES, at most MAX_INPUTS, at least 2."""
        return max(2, min(MAX_INPUTS, math.ceil(CYCLE_BYTES / self.nbytes)))

    def __str__(self) -> str:
        return f"[{self.batch}, {self.vocab}] {self.dtype}"


@dataclass
class Row:
    shape: Shape
    name: str
    samples: list[float] = field(default_factory=list)  # microseconds per call
    check: str = ""
    kernels: int | None = None  # opendml's kernels per call

    @property
    def median(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None


def floor_us(shape: Shape, bandwidth: float) -> float:
    """The floor of a call: its input's bytes read once at ``bandwidth`` (bytes a second, a copy's read plus
    written bytes over its time)."""
    return shape.nbytes / bandwidth * 1e6


def check(got: np.ndarray, x: np.ndarray) -> str:
    """``exact`` where ``got`` (one index a row) is NumPy's argmax of each row of ``x``; ``tie: another index
    of the max`` where each picks an element equal to NumPy's; else a DIFFERS line."""
    want = np.argmax(x, axis=1)
    got = np.asarray(got).reshape(-1).astype(np.int64)
    if got.shape == want.shape and (got == want).all():
        return "exact"
    rows = np.arange(x.shape[0])
    if got.shape == want.shape and ((got >= 0) & (got < x.shape[1])).all() and \
            (x[rows, got] == x[rows, want]).all():
        return "tie: another index of the max"
    bad = np.flatnonzero(got != want) if got.shape == want.shape else np.arange(0)
    return f"DIFFERS from NumPy ({bad.size} of {want.size} rows)"


@dataclass
class Verdict:
    text: str
    value: str
    passed: bool | None  # None: no shape of the target ran

    def __str__(self) -> str:
        state = "n/a" if self.passed is None else ("PASS" if self.passed else "FAIL")
        return f"{state} {self.text} ({self.value})"


def verdicts(rows: Sequence[Row], bandwidth: float) -> list[Verdict]:
    """The issue's targets over opendml's rows: one kernel and <= 3.5 us for batch <= 8, <= 1.5 x the floor
    from batch 64 up; each names its worst shape."""
    mine = [r for r in rows if r.name == OPENDML and r.median is not None]
    small = [r for r in mine if r.shape.batch <= SMALL_BATCH]
    large = [r for r in mine if r.shape.batch >= LARGE_BATCH]
    found = []
    text = f"opendml one kernel and <= {SMALL_TARGET_US:g} us for batch <= {SMALL_BATCH}"
    if small:
        worst = max(small, key=lambda r: (r.kernels != 1, r.median))
        ok = all(r.kernels == 1 and r.median <= SMALL_TARGET_US for r in small)  # type: ignore[operator]
        found.append(Verdict(text, f"worst {worst.shape}: {worst.median:.2f} us, {worst.kernels} kernel(s)", ok))
    else:
        found.append(Verdict(text, "no such shape ran", None))
    text = f"opendml <= {LARGE_TARGET:g}x floor from batch {LARGE_BATCH}"
    if large:
        ratios = [(r.median / floor_us(r.shape, bandwidth), r) for r in large]  # type: ignore[operator]
        ratio, worst = max(ratios, key=lambda p: p[0])
        found.append(Verdict(text, f"worst {worst.shape}: {worst.median:.2f} us, floor "
                             f"{floor_us(worst.shape, bandwidth):.2f} us: {ratio:.2f}x", ratio <= LARGE_TARGET))
    else:
        found.append(Verdict(text, "no such shape ran", None))
    return found


# --- the implementations (GPU) ------------------------------------------------------------------------------


@dataclass
class Impl:
    """``run`` makes ``CALLS`` calls (a replay, or calls in a row), ``results`` gives each input's indices."""

    run: Callable[[], None]
    results: Callable[[], list[np.ndarray]] | None  # None: a reference that computes nothing
    kernels: int | None = None


def logits(shape: Shape, rng: np.random.Generator) -> np.ndarray:
    """Random logits: normal, a few rows with their largest value twice (a tie NumPy breaks by the first)."""
    x = (rng.standard_normal((shape.batch, shape.vocab)) * 3).astype(shape.numpy)
    for r in range(0, shape.batch, 3):
        top = int(np.argmax(x[r]))
        x[r, rng.integers(0, shape.vocab)] = x[r, top]
    return x


def opendml_impl(shape: Shape, hosts: list[np.ndarray], clusters: bool = True) -> Impl:
    """The compiled ARGMAX recorded CALLS times over the inputs in turn, executed by a queue (CUDA graphs);
    planned without thread-block clusters where ``clusters`` is false."""
    import opendml as dml
    from opendml.backends.cuda import argmin_c

    device = dml.Device("cuda")
    x = dml.TensorDesc(shape.dtype, [shape.batch, shape.vocab])
    out = dml.TensorDesc("INT64", [shape.batch, 1])
    backend: Any = device.backend
    planned = backend.cluster_blocks
    if not clusters:
        backend.cluster_blocks = 1
    try:
        op = device.compile_operator(device.create_operator(dml.ArgMaxDesc(x, out, [1])))
    finally:
        backend.cluster_blocks = planned
    # A buffer holds the tensor's bytes rounded up to 4 (DirectML's sizes: an odd FLOAT16 vocabulary has 2 more).
    size = x.total_tensor_size_in_bytes
    buffers = [device.buffer_from(np.concatenate([h.reshape(-1).view(np.uint8), np.zeros(size - h.nbytes, np.uint8)]))
               for h in hosts]
    outputs = [device.create_buffer(shape.batch * 8) for _ in hosts]
    recorder, work = device.create_command_recorder(), device.create_command_list()
    for k in range(CALLS):
        table = device.create_binding_table(op)
        table.bind_inputs([buffers[k % len(buffers)]])
        table.bind_outputs([outputs[k % len(outputs)]])
        recorder.record_dispatch(work, op, table)
    work.close()
    queue = device.create_command_queue(cuda_graphs=True)
    kernel = op.kernel  # type: ignore[attr-defined]
    kernels = 1 + (kernel.plan.partial and not argmin_c.one_pass(kernel.spec, kernel.plan))

    def run() -> None:
        queue.execute_command_lists([work])

    def results() -> list[np.ndarray]:
        queue.wait()
        return [o.to_numpy().view(np.int64) for o in outputs]

    return Impl(run, results, int(kernels))


def empty_impl() -> Impl:
    """CALLS launches of an empty kernel (one warp) captured into a CUDA graph, replayed: the least a call of
    any one-kernel implementation costs in a graph, its launch and the gap to the next."""
    import cupy

    kernel = cupy.RawKernel('extern "C" __global__ void nothing() {}', "nothing")
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        kernel((1,), (32,), ())
        stream.synchronize()
        stream.begin_capture()
        for _ in range(CALLS):
            kernel((1,), (32,), ())
        graph = stream.end_capture()

    def run() -> None:
        graph.launch(stream)

    return Impl(run, None, 1)


def torch_inputs(torch: Any, hosts: list[np.ndarray]) -> list[Any]:
    return [torch.from_numpy(h).cuda() for h in hosts]


def captured(torch: Any, body: Callable[[], None]) -> Callable[[], None]:
    """``body`` (CALLS calls) captured into a CUDA graph by PyTorch after warm-up on a side stream: its
    replay."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            body()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        body()
    return graph.replay  # type: ignore[no-any-return]


def torch_graph_impl(torch: Any, shape: Shape, hosts: list[np.ndarray], compiled: bool = False) -> Impl:
    xs = torch_inputs(torch, hosts)
    outs = [torch.empty((shape.batch, 1), dtype=torch.int64, device="cuda") for _ in xs]

    def argmax(x: Any, out: Any) -> Any:
        return torch.argmax(x, 1, keepdim=True, out=out)

    if compiled:
        import torch._dynamo

        torch._dynamo.reset()
        fn = torch.compile(lambda x: torch.argmax(x, 1, keepdim=True), dynamic=False)

        def argmax(x: Any, out: Any) -> Any:
            return out.copy_(fn(x))

    def body() -> None:
        for k in range(CALLS):
            argmax(xs[k % len(xs)], outs[k % len(outs)])

    replay = captured(torch, body)

    def results() -> list[np.ndarray]:
        torch.cuda.synchronize()
        return [o.cpu().numpy() for o in outs]

    return Impl(replay, results)


def functional_graph_impl(torch: Any, shape: Shape, hosts: list[np.ndarray]) -> Impl:
    """``opendml.argmax`` on PyTorch tensors captured by PyTorch: the fast path's launches, on PyTorch's
    capturing stream, each result a new tensor from PyTorch's graph pool."""
    import opendml as dml

    xs = torch_inputs(torch, hosts)
    results_held: list[Any] = [None] * len(xs)

    def body() -> None:
        for k in range(CALLS):
            results_held[k % len(xs)] = dml.argmax(xs[k % len(xs)], 1)

    for x in xs[:2]:
        dml.argmax(x, 1)  # the first call of the layout runs (and is remembered) outside the capture
    torch.cuda.synchronize()
    replay = captured(torch, body)

    def results() -> list[np.ndarray]:
        torch.cuda.synchronize()
        return [r.cpu().numpy() for r in results_held]

    return Impl(replay, results)


def eager_impl(torch: Any, shape: Shape, hosts: list[np.ndarray], opendml: bool) -> Impl:
    xs = torch_inputs(torch, hosts)
    held: list[Any] = [None] * len(xs)
    if opendml:
        import opendml as dml

        def call(x: Any) -> Any:
            return dml.argmax(x, 1)
    else:
        def call(x: Any) -> Any:
            return torch.argmax(x, 1, keepdim=True)

    def run() -> None:
        for k in range(CALLS):
            held[k % len(xs)] = call(xs[k % len(xs)])

    def results() -> list[np.ndarray]:
        torch.cuda.synchronize()
        return [h.cpu().numpy() for h in held]

    return Impl(run, results)


def copy_bandwidth(torch: Any) -> float:
    """Bytes a second of a 1 GiB device-to-device copy, bytes read plus bytes written."""
    a = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    a.fill_(1)
    for _ in range(3):
        b.copy_(a)
    torch.cuda.synchronize()
    samples = []
    for _ in range(10):
        start = time.perf_counter()
        b.copy_(a)
        torch.cuda.synchronize()
        samples.append(time.perf_counter() - start)
    return 2 * a.numel() / statistics.median(samples)


def build(torch: Any, shape: Shape, hosts: list[np.ndarray], skip: frozenset[str], compile_vocab: set[int]
          ) -> dict[str, Callable[[], Impl]]:
    builders: dict[str, Callable[[], Impl]] = {OPENDML: lambda: opendml_impl(shape, hosts)}
    if _has_clusters():
        builders[NO_CLUSTERS] = lambda: opendml_impl(shape, hosts, clusters=False)
    builders[EMPTY] = empty_impl
    if torch is None:
        return builders
    builders["torch.argmax (CUDA graph)"] = lambda: torch_graph_impl(torch, shape, hosts)
    if "torch.compile" not in skip and shape.vocab in compile_vocab:
        builders["torch.compile (CUDA graph)"] = lambda: torch_graph_impl(torch, shape, hosts, compiled=True)
    builders["opendml functional (CUDA graph)"] = lambda: functional_graph_impl(torch, shape, hosts)
    builders["opendml functional (eager)"] = lambda: eager_impl(torch, shape, hosts, opendml=True)
    builders["torch.argmax (eager)"] = lambda: eager_impl(torch, shape, hosts, opendml=False)
    return builders


def _has_clusters() -> bool:
    import opendml as dml

    return int(getattr(dml.Device("cuda").backend, "cluster_blocks", 1)) > 1


def sample(impl: Impl, sync: Callable[[], None]) -> float:
    """Microseconds per call: replays (or runs of CALLS calls) for about SAMPLE_SECONDS, the GPU waited for."""
    sync()
    start, runs = time.perf_counter(), 0
    while True:
        impl.run()
        runs += 1
        if runs % 4 == 0:
            sync()
            if time.perf_counter() - start >= SAMPLE_SECONDS:
                break
    return (time.perf_counter() - start) / (runs * CALLS) * 1e6


def run_shape(torch: Any, shape: Shape, args: argparse.Namespace, rng: np.random.Generator) -> list[Row]:
    hosts = [logits(shape, rng) for _ in range(shape.inputs)]
    impls: dict[str, Impl] = {}
    rows = []
    for name, make in build(torch, shape, hosts, args.skip, args.compile_vocab).items():
        row = Row(shape, name)
        rows.append(row)
        try:
            impl = make()
            impl.run()
            got = impl.results() if impl.results is not None else None
            checks = ["reference"] if got is None else [check(g[: shape.batch], h) for g, h in zip(got, hosts)]
        except Exception as error:  # a peer that cannot run here is skipped, with the reason
            row.check = f"skipped: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
            progress(f"  {shape} {name}: {row.check}")
            continue
        bad = [c for c in checks if c.startswith("DIFFERS")]
        row.check = bad[0] if bad else (checks[0] if len(set(checks)) == 1 else "tie: another index of the max")
        row.kernels = impl.kernels
        if bad:
            progress(f"  {shape} {name}: {row.check}")
            continue
        impls[name] = impl
    sync = torch.cuda.synchronize if torch is not None else _cupy_sync()
    names = list(impls)
    for turn in range(args.repeats):
        for name in names[turn % len(names):] + names[:turn % len(names)]:
            next(r for r in rows if r.name == name).samples.append(sample(impls[name], sync))
    return rows


def _cupy_sync() -> Callable[[], None]:
    import cupy

    return cupy.cuda.Device().synchronize  # type: ignore[no-any-return]


# --- files and the table ------------------------------------------------------------------------------------

COLUMNS = ["batch", "vocab", "dtype", "implementation", "median_us", "min_us", "max_us", "samples", "floor_us",
           "x_floor", "kernels", "check"]


def write_csv(rows: Sequence[Row], found: Sequence[Verdict], header: dict[str, str], bandwidth: float,
              path: Path) -> None:
    harness.write_csv(path, header, COLUMNS, [*(_csv_row(r, bandwidth) for r in rows),
                                             *(["target", *[""] * 10, str(verdict)] for verdict in found)])


def _csv_row(r: Row, bandwidth: float) -> list[Any]:
    floor = floor_us(r.shape, bandwidth)
    median = r.median
    return [r.shape.batch, r.shape.vocab, r.shape.dtype, r.name, "" if median is None else f"{median:.3f}",
            f"{min(r.samples):.3f}" if r.samples else "", f"{max(r.samples):.3f}" if r.samples else "",
            len(r.samples), f"{floor:.3f}", "" if median is None else f"{median / floor:.2f}",
            "" if r.kernels is None else r.kernels, r.check]


def plot(rows: Sequence[Row], header: dict[str, str], bandwidth: float, path: Path) -> None:
    plt = harness.pyplot(progress)
    if plt is None:
        return
    dtypes = sorted({r.shape.dtype for r in rows})
    vocabs = sorted({r.shape.vocab for r in rows})
    names = list(dict.fromkeys(r.name for r in rows))
    fig, axes = plt.subplots(len(dtypes), len(vocabs), figsize=(4 * len(vocabs), 3.6 * len(dtypes)), squeeze=False)
    for i, dtype in enumerate(dtypes):
        for j, vocab in enumerate(vocabs):
            ax = axes[i][j]
            here = [r for r in rows if r.shape.dtype == dtype and r.shape.vocab == vocab]
            batches = sorted({r.shape.batch for r in here})
            for k, name in enumerate(names):
                points = [(r.shape.batch, r.median) for r in here if r.name == name and r.median is not None]
                if points:
                    ax.plot(*zip(*points), marker="o", label=name, color=f"C{k}", lw=2.5 if name == OPENDML else 1)
            ax.plot(batches, [floor_us(Shape(b, vocab, dtype), bandwidth) for b in batches], "k--", label="floor")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"{dtype} [batch, {vocab}]", fontsize=9)
            ax.set_xlabel("batch")
            ax.set_ylabel("us per call")
    axes[0][0].legend(fontsize=6)
    fig.suptitle(f"greedy decoding's ARGMAX: {header.get('gpu', '')}", fontsize=10)
    harness.save(plt, fig, path, dpi=100)


def summary(rows: Sequence[Row], found: Sequence[Verdict], bandwidth: float) -> str:
    lines = [f"{'shape':24} {'implementation':34} {'median us':>10} {'x floor':>8} {'kernels':>8}  check"]
    for r in rows:
        median = r.median
        text = f"{median:10.2f} {median / floor_us(r.shape, bandwidth):8.2f}" if median is not None else \
            f"{'-':>10} {'-':>8}"
        kernels = "" if r.kernels is None else str(r.kernels)
        lines.append(f"{r.shape!s:24} {r.name:34} {text} {kernels:>8}  {r.check}")
    lines.append("")
    lines += [f"target {verdict}" for verdict in found]
    return "\n".join(lines)


# --- main ---------------------------------------------------------------------------------------------------


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = harness.parser(__doc__)
    parser.add_argument("--batch", default=",".join(map(str, BATCHES)), help="batch sizes (comma-separated)")
    parser.add_argument("--vocab", default=",".join(map(str, VOCABS)), help="vocabulary sizes (comma-separated)")
    parser.add_argument("--dtype", default=",".join(DTYPES), help="FLOAT16, FLOAT32 or both")
    parser.add_argument("--compile-vocab", default="128256",
                        help="vocabulary sizes torch.compile runs (each shape compiles anew; 'all' for every one)")
    harness.add_repeats(parser, "timed samples per implementation (default 7)", 7)
    harness.add_skip(parser, "comma-separated peers not to run (torch, torch.compile)")
    harness.add_out(parser)
    args = parser.parse_args(argv)
    args.skip = harness.names(args.skip)
    args.shapes = shapes(args.batch, args.vocab, args.dtype)
    vocabs = {s.vocab for s in args.shapes}
    args.compile_vocab = vocabs if args.compile_vocab == "all" else {int(v) for v in args.compile_vocab.split(",")}
    return args


def shapes(batches: str, vocabs: str, dtypes: str) -> list[Shape]:
    """Every (dtype, vocab, batch) asked for, in that order."""
    kinds = [d.strip().upper() for d in dtypes.split(",") if d.strip()]
    for kind in kinds:
        if kind not in DTYPES:
            raise SystemExit(f"--dtype: {kind!r} is not one of {', '.join(DTYPES)}")
    return [Shape(int(b), int(v), kind) for kind in kinds for v in vocabs.split(",") for b in batches.split(",")]


def machine_header() -> dict[str, str]:
    import cupy

    header = {"gpu": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(),
              "cuda runtime": str(cupy.cuda.runtime.runtimeGetVersion()), "cupy": cupy.__version__,
              "numpy": np.__version__, "python": sys.version.split()[0], "commit": harness.commit()}
    return header


def gpu_missing() -> str | None:
    """Why this script cannot run here (no CuPy, no GPU), or None."""
    try:
        import cupy

        cupy.cuda.runtime.getDeviceCount()
        cupy.zeros(1).sum()
    except Exception as error:
        return f"{type(error).__name__}: {error}"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    missing = gpu_missing()
    if missing is not None:
        print(f"benchmarks/decode.py needs a CUDA GPU with CuPy: {missing}", file=sys.stderr)
        return 2
    torch = None
    if "torch" not in args.skip:
        try:
            import torch as torch_module

            torch = torch_module if torch_module.cuda.is_available() else None
        except ImportError:
            pass
        if torch is None:
            progress("PyTorch (with CUDA) is not installed: its rows, the copy by PyTorch and the graphs skipped")
    header = machine_header()
    header["torch"] = torch.__version__ if torch is not None else "not installed"
    bandwidth = copy_bandwidth(torch) if torch is not None else _cupy_bandwidth()
    header["copy bandwidth (read + written)"] = f"{bandwidth / 1e9:.0f} GB/s"
    print(", ".join(f"{k}: {v}" for k, v in header.items()), flush=True)
    rng = np.random.default_rng(2024)
    rows: list[Row] = []
    for n, shape in enumerate(args.shapes):
        progress(f"{shape} ({n + 1} of {len(args.shapes)}): {shape.inputs} inputs")
        rows += run_shape(torch, shape, args, rng)
    found = verdicts(rows, bandwidth)
    stem = "decode-" + header["gpu"].lower().replace("nvidia", "").strip().replace(" ", "-")
    args.out.mkdir(parents=True, exist_ok=True)
    header["load average at end"] = harness.load_average()
    write_csv(rows, found, header, bandwidth, args.out / f"{stem}.csv")
    plot(rows, header, bandwidth, args.out / f"{stem}.png")
    progress(f"wrote {args.out / stem}.csv and .png")
    print(summary(rows, found, bandwidth))
    return 1 if any(r.check.startswith("DIFFERS") for r in rows) else 0


def _cupy_bandwidth() -> float:
    import cupy

    a = cupy.ones(1 << 30, dtype=cupy.uint8)
    b = cupy.empty_like(a)
    for _ in range(3):
        b[...] = a
    cupy.cuda.Device().synchronize()
    samples = []
    for _ in range(10):
        start = time.perf_counter()
        b[...] = a
        cupy.cuda.Device().synchronize()
        samples.append(time.perf_counter() - start)
    return 2 * a.size / statistics.median(samples)


if __name__ == "__main__":
    sys.exit(main())
