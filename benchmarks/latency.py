"""Host time per call on small tensors: opendml's one-shot ``execute``, its functional API and its recorded
command lists (docs/recording.md), against PyTorch eager, a bare CuPy RawKernel launch, a CUDA graph
captured by PyTorch and ``np.clip``.

Section ``host``: a 1024-element FLOAT32 CLIP, host microseconds per call:

- ``opendml execute``: a compiled operator's ``execute`` over buffers (bindings found in its cache);
- ``opendml functional``: ``opendml.clip(x, -1, 1, out=y)`` on the same arrays each call;
- ``opendml list of 1``: a command list holding that CLIP, recorded once, ``execute_command_lists`` each call;
- ``opendml list of 3``: CLIP x -> y, THRESHOLD y -> y, CLIP y -> y in one list (per list, and per
  dispatch: a third of it);
- peers: ``np.clip(x, -1, 1, out=y)`` (CPU); ``torch.clamp(x, -1, 1, out=y)`` (PyTorch eager, where
  installed); one launch of a bare CuPy RawKernel clip (CUDA); a CUDA graph of the list of 3's kernels
  (``torch.clamp``, ``torch.clamp_min``, ``torch.clamp``) captured by PyTorch, one ``replay`` (CUDA).

On CUDA a call only enqueues work: a sample is ``--batch`` calls in a row timed by the host's clock (few
enough that the GPU keeps up: launches never wait for a full queue), the stream synchronized between
samples, outside the timed region. The implementations take turns, sample by sample, so that a change in the
machine's load falls on all of them alike.

Section ``argmax``: greedy decoding's reduction, ``opendml.argmax(x, 1)`` on a new array each call (the
functional call's whole cost: a new result too), host microseconds per call. On the CPU a 64 x 64 FLOAT32
array, made by a copy in each call (``x.copy()``), against ``np.argmax`` of a copy made the same way. On CUDA
``[8, 128256]`` FLOAT16 logits: the calls cycle over 8 arrays made beforehand (each call's array is another
object than the call before's), CuPy arrays and PyTorch tensors, against ``torch.argmax(x, 1, keepdim=True)``
on the same tensors (PyTorch eager's host cost: its kernel is launched, not waited for).

Section ``chain``: the end-to-end time (host clock, the work waited for) of a 1024-element
DEQUANTIZE_LINEAR -> CLIP -> ARGMIN: opendml's three-dispatch command list (executed, then waited for),
the same three ``execute`` calls, PyTorch eager, ``torch.compile(mode="reduce-overhead")`` (CUDA graphs;
CUDA only), and NumPy on the CPU.

Every implementation's result is checked against NumPy's before it is timed (exact bits). Targets (issue
17) are printed PASS or FAIL: on the GPU, one ``execute`` <= PyTorch eager's host time and a replayed list
of 3 <= 1.5 x one bare RawKernel launch; on the CPU, a replayed list of 1 <= ``np.clip`` and a functional
call <= 1.5 x ``np.clip``; argmax (issue 21): on the GPU, each opendml row <= ``torch.argmax`` eager's host time,
on the CPU <= 2 x ``np.argmax``. A peer that is not installed is skipped with a printed line.

    python benchmarks/latency.py                    # CPU
    python benchmarks/latency.py --device cuda      # GPU
    python benchmarks/latency.py --repeats 5 --batch 20 --chain-repeats 10 --out DIR   # a quick run
    python benchmarks/latency.py --device cuda --profile 20000   # and where argmax's host time goes

Writes ``latency-cpu.csv`` and ``.png`` (``latency-<gpu>.csv``, ``.png`` on the GPU) into
``benchmarks/results`` or ``--out``; progress goes to stderr, the table to stdout. The exit status is 1 when
a result differed.
"""

from __future__ import annotations

import argparse
import csv
import functools
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import opendml as dml

# Compiled kernels from the first timed call, never the NumPy path standing in while they compile (tiered
# execution, docs/cpu-backend.md), unless the environment says otherwise.
os.environ.setdefault("OPENDML_TIERED", "0")

RESULTS = Path(__file__).parent / "results"
N = 1024
F4 = np.float32
LOW, HIGH = -1.0, 1.0  # the CLIP every host row runs
FLOOR, LOW2, HIGH2 = -0.5, -0.75, 0.75  # the list of 3's THRESHOLD, then its second CLIP
CHAIN_LOW, CHAIN_HIGH = -8.0, 8.0  # the chain's CLIP
CHAIN_SCALE, CHAIN_ZERO_POINT = 0.1, 128


def progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


@dataclass
class Context:
    kind: str  # "cpu" or "cuda"
    device: dml.Device
    xp: Any  # NumPy or CuPy
    sync: Callable[[], None]
    torch: Any = None
    skip: frozenset[str] = frozenset()


@dataclass
class Impl:
    """``call`` is what is timed; ``result`` reads what it wrote (as a NumPy array) once it has run."""

    call: Callable[[], object]
    result: Callable[[], np.ndarray]
    dispatches: int = 1  # a recorded list's dispatches: its time per dispatch is the time over this


@dataclass
class Row:
    section: str
    name: str
    samples: list[float]  # microseconds per call
    dispatches: int
    check: str

    @property
    def median(self) -> float:
        return statistics.median(self.samples)


@dataclass
class Results:
    rows: list[Row] = field(default_factory=list)
    checks: dict[str, str] = field(default_factory=dict)  # implementations skipped or failing their check

    def median(self, section: str, name: str) -> float | None:
        found = [r for r in self.rows if r.section == section and r.name == name]
        return found[0].median if found else None


def to_host(array: Any) -> np.ndarray:
    if hasattr(array, "detach"):  # PyTorch
        return np.asarray(array.detach().cpu().numpy())
    if hasattr(array, "get"):  # CuPy
        return np.asarray(array.get())
    return np.asarray(array)


# opendml's objects.


def compiled(device: dml.Device, desc: object) -> dml.CompiledOperator:
    return device.compile_operator(device.create_operator(desc))


def recorded(device: dml.Device, dispatches: Sequence[tuple[Any, list[Any], list[Any]]]) -> Any:
    """A closed command list of ``(compiled operator, inputs, outputs)`` dispatches, one binding table each."""
    recorder, work = device.create_command_recorder(), device.create_command_list()
    for op, inputs, outputs in dispatches:
        table = device.create_binding_table(op)
        table.bind_inputs(inputs)
        table.bind_outputs(outputs)
        recorder.record_dispatch(work, op, table)
    work.close()
    return work


def host_impls(ctx: Context, x_host: np.ndarray) -> dict[str, Impl | Callable[[], Impl]]:
    """The host section's implementations; each writes its own output."""
    device, xp = ctx.device, ctx.xp
    t = dml.TensorDesc("FLOAT32", [N])
    clip = compiled(device, dml.ElementWiseClipDesc(t, t, LOW, HIGH))
    threshold = compiled(device, dml.ElementWiseThresholdDesc(t, t, FLOOR))
    clip2 = compiled(device, dml.ElementWiseClipDesc(t, t, LOW2, HIGH2))
    queue = device.create_command_queue()

    def buffer_result(buffer: dml.Buffer) -> Callable[[], np.ndarray]:
        return lambda: buffer.to_numpy().view(F4)

    impls: dict[str, Impl | Callable[[], Impl]] = {}
    x = device.buffer_from(x_host)
    y1, y2, y3 = (device.create_buffer(N * 4) for _ in range(3))
    impls["opendml execute"] = Impl(functools.partial(clip.execute, [x], [y1]), buffer_result(y1))
    xa, ya = xp.asarray(x_host), xp.empty(N, F4)
    impls["opendml functional"] = Impl(functools.partial(dml.clip, xa, LOW, HIGH, out=ya, device=device),
                                       lambda: to_host(ya))
    one = recorded(device, [(clip, [x], [y2])])
    impls["opendml list of 1"] = Impl(functools.partial(queue.execute_command_lists, [one]), buffer_result(y2))
    three = recorded(device, [(clip, [x], [y3]), (threshold, [y3], [y3]), (clip2, [y3], [y3])])
    impls["opendml list of 3"] = Impl(functools.partial(queue.execute_command_lists, [three]), buffer_result(y3), 3)
    impls.update(peer_host_impls(ctx, x_host))
    return impls


def peer_host_impls(ctx: Context, x_host: np.ndarray) -> dict[str, Impl | Callable[[], Impl]]:
    """The peers, as builders where building may fail (a peer that cannot run here is skipped)."""
    impls: dict[str, Impl | Callable[[], Impl]] = {}
    if ctx.kind == "cpu":
        x, y = x_host.copy(), np.empty(N, F4)
        impls["np.clip"] = Impl(functools.partial(np.clip, x, LOW, HIGH, out=y), lambda: y)
    else:
        impls["CuPy RawKernel"] = functools.partial(raw_kernel_impl, x_host)
    torch = ctx.torch
    if torch is not None:
        on = "cuda" if ctx.kind == "cuda" else "cpu"
        tx, ty = torch.tensor(x_host, device=on), torch.empty(N, dtype=torch.float32, device=on)
        impls["torch eager"] = Impl(functools.partial(torch.clamp, tx, LOW, HIGH, out=ty), lambda: to_host(ty))
        if ctx.kind == "cuda":
            impls["torch CUDA graph of 3"] = functools.partial(torch_graph_impl, torch, tx)
    return impls


def raw_kernel_impl(x_host: np.ndarray) -> Impl:
    """One launch of a bare clip kernel: the least a CuPy program pays per kernel."""
    import cupy as cp

    kernel = cp.RawKernel(r"""
extern "C" __global__ void clip(const float* x, float* y, int n, float low, float high) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = fminf(fmaxf(x[i], low), high);
}""", "clip")
    x, y = cp.asarray(x_host), cp.empty(N, cp.float32)
    args = (x, y, np.int32(N), F4(LOW), F4(HIGH))
    return Impl(functools.partial(kernel, ((N + 255) // 256,), (256,), args), lambda: y.get())


def torch_graph_impl(torch: Any, tx: Any) -> Impl:
    """The list of 3's kernels captured into a CUDA graph by PyTorch: one ``replay`` per call."""
    ty = torch.empty_like(tx)

    def body() -> None:
        torch.clamp(tx, LOW, HIGH, out=ty)
        torch.clamp_min(ty, FLOOR, out=ty)
        torch.clamp(ty, LOW2, HIGH2, out=ty)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):  # warm-up before capture, as PyTorch asks
            body()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        body()
    return Impl(graph.replay, lambda: to_host(ty), 3)


def host_reference(x: np.ndarray, dispatches: int) -> np.ndarray:
    y = np.clip(x, F4(LOW), F4(HIGH))
    if dispatches == 3:
        y = np.clip(np.maximum(y, F4(FLOOR)), F4(LOW2), F4(HIGH2))
    return y


# The argmax section: a new array each call.

ARGMAX_CPU_SHAPE, ARGMAX_GPU_SHAPE, ARGMAX_ARRAYS = (64, 64), (8, 128256), 8


class Cycle:
    """Calls of ``fn`` on the arrays in turn (each call another object than the one before), keeping the last
    result and the array it came from (for the check)."""

    def __init__(self, fn: Callable[[Any], Any], arrays: list[Any], hosts: list[np.ndarray]) -> None:
        self.fn, self.arrays, self.hosts = fn, arrays, hosts
        self.k, self.last = 0, None

    def __call__(self) -> None:
        self.k = (self.k + 1) % len(self.arrays)
        self.last = self.fn(self.arrays[self.k])

    def result(self) -> np.ndarray:
        return to_host(self.last).reshape(-1)

    def expected(self) -> np.ndarray:
        return np.argmax(self.hosts[self.k], axis=1)


def argmax_impls(ctx: Context, rng: np.random.Generator) -> dict[str, Impl | Callable[[], Impl]]:
    """The argmax section's implementations: opendml's functional call on new arrays and its peers."""
    impls: dict[str, Impl | Callable[[], Impl]] = {}
    if ctx.kind == "cpu":
        x = rng.standard_normal(ARGMAX_CPU_SHAPE).astype(F4)
        mine = Cycle(lambda a: dml.argmax(a.copy(), 1, device=ctx.device), [x], [x])
        theirs = Cycle(lambda a: np.argmax(a.copy(), 1), [x], [x])
        impls["opendml argmax (new array)"] = Impl(mine, mine.result)
        impls["np.argmax (new array)"] = Impl(theirs, theirs.result)
        return impls
    hosts = [rng.standard_normal(ARGMAX_GPU_SHAPE).astype(np.float16) for _ in range(ARGMAX_ARRAYS)]
    arrays = [ctx.xp.asarray(h) for h in hosts]
    cupy_calls = Cycle(lambda a: dml.argmax(a, 1), arrays, hosts)
    impls["opendml argmax cupy (new array)"] = Impl(cupy_calls, cupy_calls.result)
    torch = ctx.torch
    if torch is not None:
        tensors = [torch.from_numpy(h).cuda() for h in hosts]
        torch_calls = Cycle(lambda a: dml.argmax(a, 1), tensors, hosts)
        impls["opendml argmax torch (new tensor)"] = Impl(torch_calls, torch_calls.result)
        peer = Cycle(lambda a: torch.argmax(a, 1, keepdim=True), tensors, hosts)
        impls["torch.argmax eager"] = Impl(peer, peer.result)
    return impls


def argmax_expected(impl: Impl) -> np.ndarray:
    call = impl.call
    assert isinstance(call, Cycle)
    return call.expected()


# The chain: DEQUANTIZE_LINEAR -> CLIP -> ARGMIN.


def chain_impls(ctx: Context, q_host: np.ndarray) -> dict[str, Impl | Callable[[], Impl]]:
    device = ctx.device
    u8, f4 = dml.TensorDesc("UINT8", [N]), dml.TensorDesc("FLOAT32", [N])
    scale_desc, zero_desc = dml.TensorDesc("FLOAT32", [N], [0]), dml.TensorDesc("UINT8", [N], [0])
    dequantize = compiled(device, dml.ElementWiseDequantizeLinearDesc(u8, scale_desc, zero_desc, f4))
    clip = compiled(device, dml.ElementWiseClipDesc(f4, f4, CHAIN_LOW, CHAIN_HIGH))
    argmin = compiled(device, dml.ArgMinDesc(f4, dml.TensorDesc("INT64", [1]), [0], "INCREASING"))
    q = device.buffer_from(q_host)
    scale = device.buffer_from(np.array([CHAIN_SCALE, 0, 0, 0], F4))
    zero_point = device.buffer_from(np.array([CHAIN_ZERO_POINT] + [0] * 15, np.uint8))
    impls: dict[str, Impl | Callable[[], Impl]] = {}
    for name in ("opendml list of 3", "opendml execute x3"):
        values, index = device.create_buffer(N * 4), device.create_buffer(16)
        steps = [(dequantize, [q, scale, zero_point], [values]), (clip, [values], [values]),
                 (argmin, [values], [index])]

        def result(index: dml.Buffer = index) -> np.ndarray:
            return index.to_numpy().view(np.int64)[:1]

        if name == "opendml list of 3":
            run = functools.partial(execute_and_wait, device.create_command_queue(), recorded(device, steps))
        else:
            run = functools.partial(execute_each, steps, ctx.sync)
        impls[name] = Impl(run, result, 3)
    if ctx.kind == "cpu":
        impls["numpy"] = Impl(lambda: numpy_chain(q_host), lambda: numpy_chain(q_host))
    if ctx.torch is not None:
        impls.update(torch_chain_impls(ctx, q_host))
    return impls


def execute_and_wait(queue: Any, work: Any) -> None:
    queue.execute_command_lists([work])
    queue.wait()


def execute_each(steps: list[tuple[Any, list[Any], list[Any]]], sync: Callable[[], None]) -> None:
    for op, inputs, outputs in steps:
        op.execute(inputs, outputs)
    sync()


def numpy_chain(q: np.ndarray) -> np.ndarray:
    values = (q.astype(np.int32) - CHAIN_ZERO_POINT).astype(F4) * F4(CHAIN_SCALE)
    return np.array([np.argmin(np.clip(values, F4(CHAIN_LOW), F4(CHAIN_HIGH)))])


def torch_chain_impls(ctx: Context, q_host: np.ndarray) -> dict[str, Impl | Callable[[], Impl]]:
    """PyTorch eager, and where on CUDA ``torch.compile(mode="reduce-overhead")`` (built when checked: a
    compile that fails skips it)."""
    torch = ctx.torch
    on = "cuda" if ctx.kind == "cuda" else "cpu"
    q = torch.tensor(q_host, device=on)
    scale = torch.tensor(CHAIN_SCALE, dtype=torch.float32, device=on)

    def chain(q: Any) -> Any:
        values = (q.to(torch.int32) - CHAIN_ZERO_POINT).to(torch.float32) * scale
        return torch.argmin(torch.clamp(values, CHAIN_LOW, CHAIN_HIGH)).reshape(1)

    def timed(fn: Callable[[Any], Any]) -> Impl:
        kept: list[Any] = [None]

        def run() -> None:
            kept[0] = fn(q)
            ctx.sync()

        return Impl(run, lambda: to_host(kept[0]).copy(), 3)

    def compiled() -> Impl:
        compiled_chain = torch.compile(chain, mode="reduce-overhead")
        for _ in range(5):  # compiles, then records its CUDA graphs, outside the timed runs
            compiled_chain(q)
        return timed(compiled_chain)

    impls: dict[str, Impl | Callable[[], Impl]] = {"torch eager": timed(chain)}
    if ctx.kind == "cuda" and "torch.compile" not in ctx.skip:
        impls["torch.compile reduce-overhead"] = compiled
    return impls


# Timing.


def host_samples(ctx: Context, calls: dict[str, Callable[[], object]], batch: int, repeats: int
                 ) -> dict[str, list[float]]:
    """Microseconds per call of each implementation: ``repeats`` samples of ``batch`` calls in a row, taking
    turns; the GPU is waited for between samples, outside the timed region."""
    for call in calls.values():
        for _ in range(batch):
            call()
    ctx.sync()
    samples: dict[str, list[float]] = {name: [] for name in calls}
    names = list(calls)
    for turn in range(repeats):
        for name in names[turn % len(names):] + names[:turn % len(names)]:
            call = calls[name]
            start = time.perf_counter()
            for _ in range(batch):
                call()
            samples[name].append((time.perf_counter() - start) / batch * 1e6)
            ctx.sync()
        if turn % max(1, repeats // 5) == 0:
            progress(f"  round {turn + 1} of {repeats}")
    return samples


def chain_samples(calls: dict[str, Callable[[], object]], repeats: int) -> dict[str, list[float]]:
    """Microseconds per run, each run waited for, taking turns."""
    for call in calls.values():
        for _ in range(3):
            call()
    samples: dict[str, list[float]] = {name: [] for name in calls}
    names = list(calls)
    for turn in range(repeats):
        for name in names[turn % len(names):] + names[:turn % len(names)]:
            start = time.perf_counter()
            calls[name]()
            samples[name].append((time.perf_counter() - start) * 1e6)
    return samples


def checked(results: Results, section: str, impls: Mapping[str, Impl | Callable[[], Impl]],
            expected: Callable[[Impl], np.ndarray]) -> dict[str, Impl]:
    """The implementations (built here where given as builders) that ran and gave ``expected``'s bits; the
    others noted in ``results.checks``."""
    good = {}
    for name, impl in impls.items():
        try:
            built = impl if isinstance(impl, Impl) else impl()
            built.call()
            same = np.array_equal(np.asarray(built.result()).view(np.uint8), expected(built).view(np.uint8))
        except Exception as error:  # a peer that cannot run here is skipped, with the reason
            reason = str(error).splitlines()[0] if str(error) else ""
            results.checks[f"{section}: {name}"] = f"skipped: {type(error).__name__}: {reason}"
            progress(f"  {name}: {results.checks[f'{section}: {name}']}")
            continue
        if not same:
            results.checks[f"{section}: {name}"] = "DIFFERS from NumPy"
            progress(f"  {name}: DIFFERS from NumPy")
            continue
        good[name] = built
    return good


# Targets (issue 17).


@dataclass
class Verdict:
    text: str
    value: str
    passed: bool | None  # None: an implementation it needs did not run

    def __str__(self) -> str:
        state = "n/a" if self.passed is None else ("PASS" if self.passed else "FAIL")
        return f"{state} {self.text} ({self.value})"


def at_most(results: Results, name: str, peer: str, factor: float, section: str = "host") -> Verdict:
    text = f"{name} <= {factor:g}x {peer}" if factor != 1 else f"{name} <= {peer}"
    mine, theirs = results.median(section, name), results.median(section, peer)
    if mine is None or theirs is None:
        return Verdict(text, f"{peer if theirs is None else name} did not run", None)
    return Verdict(text, f"{mine:.2f} us against {theirs:.2f} us: {mine / theirs:.2f}x", mine <= factor * theirs)


def targets(kind: str, results: Results) -> list[Verdict]:
    if kind == "cuda":
        return [at_most(results, "opendml execute", "torch eager", 1),
                at_most(results, "opendml list of 3", "CuPy RawKernel", 1.5),
                at_most(results, "opendml argmax cupy (new array)", "torch.argmax eager", 1, section="argmax"),
                at_most(results, "opendml argmax torch (new tensor)", "torch.argmax eager", 1, section="argmax")]
    return [at_most(results, "opendml list of 1", "np.clip", 1), at_most(results, "opendml functional", "np.clip", 1.5),
            at_most(results, "opendml argmax (new array)", "np.argmax (new array)", 2, section="argmax")]


# Files and the table.

COLUMNS = ["section", "implementation", "median_us", "min_us", "max_us", "samples", "dispatches",
           "median_us_per_dispatch", "check"]


def write_csv(results: Results, verdicts: list[Verdict], header: dict[str, str], path: Path) -> None:
    with open(path, "w", newline="") as handle:
        for key, value in header.items():
            handle.write(f"# {key}: {value}\n")
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for r in results.rows:
            writer.writerow([r.section, r.name, f"{r.median:.3f}", f"{min(r.samples):.3f}", f"{max(r.samples):.3f}",
                             len(r.samples), r.dispatches, f"{r.median / r.dispatches:.3f}", r.check])
        for where, check in results.checks.items():
            section, name = where.split(": ", 1)
            writer.writerow([section, name, "", "", "", 0, "", "", check])
        for verdict in verdicts:
            writer.writerow(["target", "", "", "", "", "", "", "", str(verdict)])


def plot(results: Results, header: dict[str, str], path: Path) -> None:
    try:
        import matplotlib
    except ImportError:
        progress("matplotlib is not installed: no plot")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shape = "x".join(map(str, ARGMAX_CPU_SHAPE if header["device"] == "cpu" else ARGMAX_GPU_SHAPE))
    sections = [("host", "host time per call (us): 1024-element CLIP"),
                ("argmax", f"host time per call (us): argmax over axis 1 of a new {shape} array"),
                ("chain", "end to end (us): DEQUANTIZE_LINEAR -> CLIP -> ARGMIN, 1024 elements")]
    fig, axes = plt.subplots(1, 3, figsize=(19, 4.8))
    for ax, (section, title) in zip(axes, sections):
        rows = [r for r in results.rows if r.section == section]
        names = [r.name for r in rows]
        ax.barh(names, [r.median for r in rows], color=["C0" if n.startswith("opendml") else "C1" for n in names])
        for k, r in enumerate(rows):
            note = f" {r.median:.2f}" + (f" ({r.median / r.dispatches:.2f} per dispatch)"
                                          if r.dispatches > 1 and section == "host" else "")
            ax.text(r.median, k, note, va="center", fontsize=7)
        ax.invert_yaxis()
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("median microseconds")
        ax.tick_params(axis="y", labelsize=8)
        ax.set_xlim(0, max((r.median for r in rows), default=1) * 1.45)
    fig.suptitle(f"opendml latency: {header['machine']} (load {header['load average at start']})", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def summary(results: Results, verdicts: list[Verdict]) -> str:
    lines = [f"{'section':8} {'implementation':32} {'median us':>10} {'min us':>9} {'per dispatch':>13}  check"]
    for r in results.rows:
        per = f"{r.median / r.dispatches:13.3f}" if r.dispatches > 1 and r.section == "host" else f"{'':13}"
        lines.append(f"{r.section:8} {r.name:32} {r.median:10.3f} {min(r.samples):9.3f} {per}  {r.check}")
    for where, check in results.checks.items():
        section, name = where.split(": ", 1)
        lines.append(f"{section:8} {name:32} {'-':>10} {'-':>9} {'':13}  {check}")
    lines.append("")
    lines += [f"target {verdict}" for verdict in verdicts]
    return "\n".join(lines)


# The machine, the peers, main.


def machine_header(ctx: Context) -> dict[str, str]:
    from opendml.backends.cpu_kernels import kernels
    from opendml.thread_count import available_cores

    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    header = {"device": ctx.kind, "cpu": model, "cores": str(available_cores())}
    if ctx.kind == "cpu":
        header["kernels"] = kernels().__name__.rsplit(".", 1)[-1]
        header["machine"] = f"{model}, {header['kernels']} kernels"
    else:
        import cupy as cp

        gpu = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
        header.update({"gpu": gpu, "cuda runtime": str(cp.cuda.runtime.runtimeGetVersion()), "cupy": cp.__version__,
                       "cuda graphs": str(ctx.device.create_command_queue().cuda_graphs), "machine": gpu})
    header["load average at start"] = " ".join(f"{v:.2f}" for v in os.getloadavg())
    header["numpy"] = np.__version__
    header["torch"] = ctx.torch.__version__ if ctx.torch is not None else "not installed"
    header["python"] = sys.version.split()[0]
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=Path(__file__).resolve().parent,
                                capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    header["commit"] = commit
    return header


def make_context(args: argparse.Namespace) -> Context:
    skip = frozenset(name.strip() for name in args.skip.split(",") if name.strip())
    if args.device == "cuda":
        try:
            import cupy as cp
        except ImportError:
            raise SystemExit("CuPy is not installed: --device cuda cannot run") from None
        try:
            device = dml.Device("cuda")
        except dml.OpenDMLError as error:
            raise SystemExit(f"--device cuda cannot run: {error}") from None
        ctx = Context("cuda", device, cp, cp.cuda.Device().synchronize, skip=skip)
    else:
        ctx = Context("cpu", dml.Device("cpu"), np, lambda: None, skip=skip)
    if "torch" in skip:
        progress("left out by --skip: PyTorch")
        return ctx
    try:
        import torch
    except ImportError:
        progress("PyTorch is not installed: torch eager, its CUDA graph and torch.compile skipped")
        return ctx
    if ctx.kind == "cuda" and not torch.cuda.is_available():
        progress("PyTorch has no CUDA here: torch eager, its CUDA graph and torch.compile skipped")
        return ctx
    ctx.torch = torch
    return ctx


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--repeats", type=int, default=60, help="timed samples per implementation (default 60)")
    parser.add_argument("--batch", type=int, default=None,
                        help="calls per host-time sample (default 1000 on the CPU, 100 on CUDA)")
    parser.add_argument("--chain-repeats", type=int, default=500, help="timed runs of each chain (default 500)")
    parser.add_argument("--skip", default="", help="comma-separated peers not to run (torch, torch.compile)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for the CSV and the PNG")
    parser.add_argument("--profile", type=int, default=0,
                        help="after timing, profile this many calls of each opendml argmax row (cProfile, to stderr: "
                             "where the host time goes)")
    return parser.parse_args(argv)


def profile(calls: Mapping[str, Callable[[], object]], count: int) -> None:
    """Where each opendml argmax row's host time goes: ``count`` calls under cProfile, the functions by their own
    time, to stderr."""
    import cProfile
    import io
    import pstats

    for name, call in calls.items():
        if not name.startswith("opendml"):
            continue
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(count):
            call()
        profiler.disable()
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(12)
        progress(f"argmax: profile of {name}, {count} calls\n{text.getvalue()}")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    ctx = make_context(args)
    header = machine_header(ctx)
    print(", ".join(f"{k}: {v}" for k, v in header.items() if k != "machine"), flush=True)
    rng = np.random.default_rng(17)
    x = (rng.standard_normal(N) * 1.5).astype(F4)
    results = Results()
    progress("host: building and checking")
    host = checked(results, "host", host_impls(ctx, x), lambda impl: host_reference(x, impl.dispatches))
    batch = args.batch or (1000 if ctx.kind == "cpu" else 100)
    progress(f"host: timing {len(host)} implementations, {args.repeats} samples of {batch} calls")
    for name, samples in host_samples(ctx, {n: i.call for n, i in host.items()}, batch, args.repeats).items():
        results.rows.append(Row("host", name, samples, host[name].dispatches, "exact"))
    progress("argmax: building and checking")
    argmax = checked(results, "argmax", argmax_impls(ctx, rng), argmax_expected)
    progress(f"argmax: timing {len(argmax)} implementations, {args.repeats} samples of {batch} calls")
    for name, samples in host_samples(ctx, {n: i.call for n, i in argmax.items()}, batch, args.repeats).items():
        results.rows.append(Row("argmax", name, samples, 1, "exact"))
    if args.profile:
        profile({n: i.call for n, i in argmax.items()}, args.profile)
    q = rng.integers(0, 256, N, dtype=np.uint8)
    progress("chain: building and checking")
    chain = checked(results, "chain", chain_impls(ctx, q), lambda impl: numpy_chain(q))
    progress(f"chain: timing {len(chain)} implementations, {args.chain_repeats} runs")
    for name, samples in chain_samples({n: i.call for n, i in chain.items()}, args.chain_repeats).items():
        results.rows.append(Row("chain", name, samples, chain[name].dispatches, "exact"))
    header["load average at end"] = " ".join(f"{v:.2f}" for v in os.getloadavg())
    verdicts = targets(ctx.kind, results)
    stem = "latency-cpu" if ctx.kind == "cpu" else "latency-" + header["gpu"].lower().replace("nvidia", "").strip() \
        .replace(" ", "-")
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(results, verdicts, header, args.out / f"{stem}.csv")
    plot(results, header, args.out / f"{stem}.png")
    progress(f"wrote {args.out / stem}.csv and .png")
    print(summary(results, verdicts))
    return 1 if any(c.startswith("DIFFERS") for c in results.checks.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
