"""REDUCE on the GPU: opendml's exact sums (the exact sum rounded once) and its other value functions against
``torch.sum`` (and PyTorch's own reduction of each function), with a device-to-device copy of the input as the
memory-bandwidth reference: each row's ``x copy`` is the copy's bandwidth over the reduction's (bytes read by the
reduction over its time, against bytes read and written by the copy over its time): 1.0 reads at copy speed.

Cases: the issue's [16384, 16384] over all axes, the last axis and the first, FLOAT32 and FLOAT16 (SUM), then
SUM_SQUARE, L2, MULTIPLY, MAX and AVERAGE over the last axis of the same tensor (FLOAT32); then TOP_K over the last
axis of [batch, 128256] FLOAT16 logits (batch 1 to 256, K 1 to 64) against ``torch.topk``, both called eagerly in a
row (host time or device time, whichever is longer: what a sampling loop sees). Each call is timed by
CUDA events around ``--calls`` calls of the functional API on a CuPy array (its host cost is hidden behind the
kernels of a 1 GiB read), the median of ``--repeats`` samples; ``equal`` says whether opendml's result has the bits
of PyTorch's (not expected for sums: opendml's is exact, PyTorch's is not).

    python benchmarks/reduce_gpu.py
    python benchmarks/reduce_gpu.py --size 8192 --repeats 5 --out DIR

Writes ``reduce-<gpu>.csv`` and ``.png`` into ``benchmarks/results`` or ``--out``; the table goes to stdout. Exits 2
without a GPU.
"""

from __future__ import annotations

import math
import statistics
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # for harness.py: what the benchmark scripts share
import harness

sys.path.pop(0)

FUNCTIONS = ("SUM_SQUARE", "L2", "MULTIPLY", "MAX", "AVERAGE")
COLUMNS = ("case", "dtype", "implementation", "median_ms", "x_copy", "equal")
TOP_K_BATCHES, TOP_K_KS, VOCAB = (1, 8, 64, 256), (1, 8, 64), 128256


def timed(call: Callable[[], object], calls: int, repeats: int) -> float:
    """The median over ``repeats`` samples of one call's time (ms), each sample ``calls`` calls between events."""
    import cupy

    call()
    samples = []
    for _ in range(repeats):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        for _ in range(calls):
            call()
        stop.record()
        stop.synchronize()
        samples.append(cupy.cuda.get_elapsed_time(start, stop) / calls)
    return statistics.median(samples)


def torch_call(function: str, x: Any, axes: tuple[int, ...]) -> Callable[[], Any]:
    """PyTorch's reduction of ``function`` over ``axes`` (keepdim), as a model would write it."""
    import torch

    calls: dict[str, Callable[[], Any]] = {
        "SUM": lambda: torch.sum(x, dim=axes, keepdim=True),
        "AVERAGE": lambda: torch.mean(x, dim=axes, keepdim=True),
        "SUM_SQUARE": lambda: torch.sum(x * x, dim=axes, keepdim=True),
        "L2": lambda: torch.linalg.vector_norm(x, 2, dim=axes, keepdim=True),
        "MULTIPLY": lambda: torch.prod(x, dim=axes[0], keepdim=True),
        "MAX": lambda: torch.amax(x, dim=axes, keepdim=True),
    }
    return calls[function]


def cases(size: int) -> list[tuple[str, str, tuple[int, ...], str]]:
    """(case, function, axes, dtype) of the run."""
    found: list[tuple[str, str, tuple[int, ...], str]] = []
    for dtype in ("float32", "float16"):
        for name, axes in (("all axes", (0, 1)), ("last axis", (1,)), ("first axis", (0,))):
            found.append((f"SUM {name}", "SUM", axes, dtype))
    found += [(f"{f} last axis", f, (1,), "float32") for f in FUNCTIONS]
    return found


def main() -> int:
    parser = harness.parser(__doc__)
    parser.add_argument("--size", type=int, default=16384, help="the tensor is [size, size] (default 16384)")
    parser.add_argument("--calls", type=int, default=20, help="calls a sample (default 20)")
    harness.add_repeats(parser, "samples a row (default 7)", 7)
    harness.add_skip(parser, "what to leave out: torch, top_k, value (the value functions' rows)")
    parser.add_argument("--top-k-whole", action="store_true",
                        help="TOP_K's one-stage plan only (a block a sequence, never cut into slices): a reference")
    harness.add_out(parser)
    args = parser.parse_args()
    try:
        import cupy

        cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # any failure to reach a GPU means: no GPU here
        print(f"no usable CUDA GPU: {error}", file=sys.stderr)
        return 2
    import opendml as dml

    skip = harness.names(args.skip)
    torch = None if "torch" in skip else _torch()
    gpu = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    rng = np.random.default_rng(0)
    host = {d: rng.standard_normal((args.size, args.size)).astype(d) for d in ("float32", "float16")}
    rows = []
    print(f"{'case':22s} {'dtype':8s} {'implementation':14s} {'ms':>8s} {'x copy':>7s}  equal")
    if args.top_k_whole:
        from opendml.backends.cuda import top_k_c

        top_k_c.SLICE = 1 << 40  # no sequence is long enough to be cut
    for case, function, axes, dtype in [] if "value" in skip else cases(args.size):
        x = cupy.asarray(host[dtype])
        target = cupy.empty_like(x)
        copy_ms = timed(partial(cupy.copyto, target, x), args.calls, args.repeats)  # as benchmarks/gpu.py copies
        del target
        bandwidth = 2 * x.nbytes / copy_ms  # bytes a ms of the copy (read and written)
        ours = dml.reduce(x, function, list(axes))
        ms = timed(partial(dml.reduce, x, function, list(axes)), args.calls, args.repeats)
        rows.append(_row(case, dtype, "opendml", ms, x.nbytes, bandwidth, ""))
        if torch is not None:
            tx = torch.as_tensor(x, device="cuda")
            call = torch_call(function, tx, axes)
            theirs = call().cpu().numpy()
            equal = np.asarray(cupy.asnumpy(ours)).reshape(theirs.shape).tobytes() == theirs.tobytes()
            rows.append(_row(case, dtype, "torch", timed(call, args.calls, args.repeats), x.nbytes, bandwidth,
                             str(equal)))
        for row in rows[-2:] if torch is not None else rows[-1:]:
            print(f"{row[0]:22s} {row[1]:8s} {row[2]:14s} {row[3]:8.3f} {row[4]:7.3f}  {row[5]}")
        del x
        cupy.get_default_memory_pool().free_all_blocks()
    if "top_k" not in skip:
        rows += top_k_rows(args, torch, rng)
    header = {"gpu": gpu, "size": f"[{args.size}, {args.size}]", "commit": harness.commit()}
    stem = "reduce-" + gpu.lower().replace("nvidia ", "").replace(" ", "-")
    harness.write_csv(args.out / f"{stem}.csv", header, COLUMNS, rows)
    _plot(rows, args.out / f"{stem}.png", gpu)
    return 0


def top_k_rows(args: Any, torch: Any, rng: np.random.Generator) -> list[tuple[Any, ...]]:
    """TOP_K over [batch, VOCAB] FLOAT16 logits: opendml.top_k on a CuPy array, torch.topk on the same memory."""
    import cupy

    import opendml as dml

    rows = []
    for batch in TOP_K_BATCHES:
        x = cupy.asarray(rng.standard_normal((batch, VOCAB)).astype(np.float16))
        for k in TOP_K_KS:
            case = f"TOP_K [{batch}, {VOCAB}] K={k}"
            found = [_row(case, "float16", "opendml", timed(partial(dml.top_k, x, k), args.calls, args.repeats),
                          x.nbytes, math.nan, "")]
            if torch is not None:
                tx = torch.as_tensor(x, device="cuda")
                ours = [cupy.asnumpy(a) for a in dml.top_k(x, k)]
                theirs = [a.cpu().numpy() for a in torch.topk(tx, k)]
                equal = ours[0].tobytes() == theirs[0].tobytes() and np.array_equal(ours[1], theirs[1])
                found.append(_row(case, "float16", "torch", timed(partial(torch.topk, tx, k), args.calls,
                                                                      args.repeats), x.nbytes, math.nan, str(equal)))
            for row in found:
                print(f"{row[0]:34s} {row[2]:14s} {row[3]:8.4f}  {row[5]}")
            rows += found
    return rows


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        return None
    return torch


def _row(case: str, dtype: str, name: str, ms: float, read: int, bandwidth: float, equal: str) -> tuple[Any, ...]:
    """A row of the table (``bandwidth`` NaN where a copy is no reference: no x_copy)."""
    return (case, dtype, name, round(ms, 4), round(read / ms / bandwidth, 3), equal)


def _plot(rows: list[tuple[Any, ...]], path: Path, gpu: str) -> None:
    plt = harness.pyplot(lambda text: print(text, file=sys.stderr))
    if plt is None:
        return
    rows = [r for r in rows if not math.isnan(r[4])]  # the bandwidth rows (TOP_K's are in the CSV)
    labels = sorted({(r[0], r[1]) for r in rows}, key=lambda k: [(r[0], r[1]) for r in rows].index(k))
    fig, ax = plt.subplots(figsize=(10, 0.35 * len(labels) + 1.5))
    for offset, name in ((-0.2, "opendml"), (0.2, "torch")):
        values = {(r[0], r[1]): r[4] for r in rows if r[2] == name}
        ax.barh([k + offset for k in range(len(labels))], [values.get(label, 0) for label in labels], height=0.4,
                label=name)
    ax.set_yticks(range(len(labels)), [f"{c} {d}" for c, d in labels])
    ax.axvline(0.9, color="gray", linestyle="--", linewidth=1)
    ax.set_xlabel("bandwidth, x a device-to-device copy's")
    ax.set_title(f"REDUCE on {gpu}")
    ax.legend()
    harness.save(plt, fig, path, 120)


if __name__ == "__main__":
    raise SystemExit(main())
