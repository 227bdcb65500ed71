"""REDUCE on the CPU: opendml's exact SUM (the exact sum rounded once) against NumPy's inexact pairwise ``np.sum``,
with a copy of the input as the memory-bandwidth reference; SUM_SQUARE (exact) and L2 (correctly rounded) against
``np.sum(x * x)``; then every other value function against NumPy's nearest spelling of it (AVERAGE ``np.mean``, L1
``np.abs(x).sum``, LOG_SUM ``np.log(x.sum)``, LOG_SUM_EXP ``m + np.log(np.exp(x - m).sum)``, MAX, MIN,
MULTIPLY ``np.prod``), all on the threads the device is given (run under ``taskset -c 0,1`` for the issue's 2
cores). Where onnxruntime is installed (the ``bench`` extra), its ReduceSum, ReduceSumSquare, ReduceL2, ReduceMean,
ReduceL1, ReduceLogSum, ReduceLogSumExp, ReduceMax, ReduceMin and ReduceProd on as many threads are timed too
(``--skip onnxruntime`` leaves them out). Medians of ``--repeats`` calls after a first one; ``ratio`` is opendml's
time over NumPy's, ``ratio_ort`` over ONNX Runtime's (below 1: ahead).

    PYTHONPATH=$PWD taskset -c 0,1 python benchmarks/reduce_cpu.py --threads 2

Writes ``reduce-cpu.csv`` and ``.png`` into ``benchmarks/results`` or ``--out``; the tables go to stdout.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENDML_TIERED", "0")  # the compiled kernels from the first call

import numpy as np

import opendml as dml

sys.path.insert(0, str(Path(__file__).resolve().parent))  # for harness.py: what the benchmark scripts share
import harness

SUM_CASES = [  # (name, shape, axes, dtype)
    ("all of 2^24", (1 << 24,), None, np.float32),
    ("last axis of 4096x4096", (4096, 4096), (1,), np.float32),
    ("first axis of 4096x4096", (4096, 4096), (0,), np.float32),
    ("last axis of 65536x256", (65536, 256), (1,), np.float32),
    ("all of 2^24 FLOAT16", (1 << 24,), None, np.float16),
]
SQUARE_CASES = [  # (name, shape, axes)
    ("last axis of 1024x1024", (1024, 1024), (1,)),
    ("first axis of 1024x1024", (1024, 1024), (0,)),
    ("all of 2^20", (1 << 20,), None),
    ("last axis of 4096x4096", (4096, 4096), (1,)),
    ("first axis of 4096x4096", (4096, 4096), (0,)),
]
FUNCTION_CASES = [  # (name, shape, axes)
    ("last axis of 4096x4096", (4096, 4096), (1,)),
    ("first axis of 4096x4096", (4096, 4096), (0,)),
    ("all of 2^22", (1 << 22,), None),
]


def _log_sum_exp(x: np.ndarray, axis: Any) -> np.ndarray:
    m = x.max(axis=axis, keepdims=True)
    return m + np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


NUMPY: dict[str, Callable[[np.ndarray, Any], np.ndarray]] = {
    "AVERAGE": lambda x, a: np.mean(x, axis=a, keepdims=True),
    "L1": lambda x, a: np.abs(x).sum(axis=a, keepdims=True),
    "LOG_SUM": lambda x, a: np.log(x.sum(axis=a, keepdims=True)),
    "LOG_SUM_EXP": _log_sum_exp,
    "MAX": lambda x, a: x.max(axis=a, keepdims=True),
    "MIN": lambda x, a: x.min(axis=a, keepdims=True),
    "MULTIPLY": lambda x, a: np.prod(x, axis=a, keepdims=True),
}
ONNX = {"SUM": "ReduceSum", "SUM_SQUARE": "ReduceSumSquare", "L2": "ReduceL2", "AVERAGE": "ReduceMean",
        "L1": "ReduceL1", "LOG_SUM": "ReduceLogSum", "LOG_SUM_EXP": "ReduceLogSumExp", "MAX": "ReduceMax",
        "MIN": "ReduceMin", "MULTIPLY": "ReduceProd"}
COLUMNS = ["table", "case", "function", "numpy_ms", "opendml_ms", "ratio", "onnxruntime_ms", "ratio_ort"]


class Peer:
    """ONNX Runtime's reductions, where it is installed and not skipped: ``time`` gives None otherwise."""

    def __init__(self, threads: int, repeats: int, enabled: bool) -> None:
        self.threads, self.repeats = threads, repeats
        self.enabled = enabled
        if enabled:
            try:
                import onnxruntime  # noqa: F401
            except ImportError:
                print("onnxruntime is not installed: no ONNX Runtime column", file=sys.stderr)
                self.enabled = False

    def time(self, function: str, x: np.ndarray, axes: Any) -> float | None:
        """The median time of ONNX Runtime's reduction of ``x`` over ``axes`` (None: all), ``keepdims=1``."""
        if not self.enabled:
            return None
        from onnx import TensorProto, helper, numpy_helper

        axes = list(range(x.ndim)) if axes is None else list(axes)
        elem = helper.np_dtype_to_tensor_dtype(x.dtype)
        kept = [1 if k in axes else n for k, n in enumerate(x.shape)]
        node = helper.make_node(ONNX[function], ["x", "axes"], ["y"], keepdims=1)
        session = harness.ort_session([node], [helper.make_tensor_value_info("x", elem, list(x.shape))],
                                      [helper.make_tensor_value_info("y", elem, kept)],
                                      [numpy_helper.from_array(np.array(axes, np.int64), "axes")], self.threads)
        del TensorProto
        return best(lambda: session.run(None, {"x": x}), self.repeats)


def row(table: str, name: str, function: str, t_np: float, t_ours: float, t_ort: float | None) -> tuple[Any, ...]:
    """A CSV row: the times in ms and opendml's ratios to NumPy's and (where timed) ONNX Runtime's."""
    ort = ("", "") if t_ort is None else (round(t_ort, 4), round(t_ours / t_ort, 3))
    return (table, name, function, round(t_np, 4), round(t_ours, 4), round(t_ours / t_np, 3), *ort)


def _ort_text(t_ours: float, t_ort: float | None) -> str:
    return "" if t_ort is None else f" {t_ort:8.2f} {t_ours / t_ort:6.2f}"


def best(call: Callable[[], object], repeats: int) -> float:
    """The median of ``repeats`` timed calls after a first one, in ms (the lower half's median from 5 repeats: a
    shared machine's stray slow calls left out)."""
    call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return 1e3 * (min(times) if repeats < 5 else statistics.median(sorted(times)[: max(3, repeats // 2)]))


def sums(device: dml.Device, rng: np.random.Generator, repeats: int, peer: Peer) -> list[tuple[Any, ...]]:
    rows = []
    ort = f" {'ORT ms':>8s} {'ratio':>6s}" if peer.enabled else ""
    print(f"{'case':28s} {'np.sum ms':>10s} {'exact ms':>10s} {'ratio':>6s} {'copy ms':>8s}  exact==np.sum{ort}")
    for name, shape, axes, dtype in SUM_CASES:
        x = rng.standard_normal(shape).astype(dtype)
        out = np.empty_like(x)
        t_np = best(lambda x=x, a=axes: np.sum(x, axis=a, keepdims=True), repeats)
        t_ex = best(lambda x=x, a=axes: dml.reduce(x, "SUM", a, device=device), repeats)
        t_copy = best(lambda x=x, out=out: np.copyto(out, x), repeats)
        equal = np.array_equal(dml.reduce(x, "SUM", axes, device=device), np.sum(x, axis=axes, keepdims=True))
        t_ort = peer.time("SUM", x, axes)
        print(f"{name:28s} {t_np:10.2f} {t_ex:10.2f} {t_ex / t_np:6.2f} {t_copy:8.2f}  {equal!s:13s}"
              + _ort_text(t_ex, t_ort))
        rows.append(row("SUM", name, "SUM", t_np, t_ex, t_ort))
    return rows


def squares(device: dml.Device, rng: np.random.Generator, repeats: int, peer: Peer) -> list[tuple[Any, ...]]:
    rows = []
    ort = f" {'ORT SQ':>8s} {'ratio':>6s} {'ORT L2':>8s} {'ratio':>6s}" if peer.enabled else ""
    head = f"{'np x*x ms':>10s} {'SUM_SQ ms':>10s} {'ratio':>6s} {'L2 ms':>8s} {'ratio':>6s}"
    print(f"\n{'FLOAT32 case':28s} {head}{ort}")
    for name, shape, axes in SQUARE_CASES:
        x = rng.standard_normal(shape).astype(np.float32)
        t_np = best(lambda x=x, a=axes: np.sum(x * x, axis=a, dtype=np.float32, keepdims=True), repeats)
        t_sq = best(lambda x=x, a=axes: dml.reduce(x, "SUM_SQUARE", a, device=device), repeats)
        t_l2 = best(lambda x=x, a=axes: dml.reduce(x, "L2", a, device=device), repeats)
        o_sq, o_l2 = peer.time("SUM_SQUARE", x, axes), peer.time("L2", x, axes)
        print(f"{name:28s} {t_np:10.2f} {t_sq:10.2f} {t_sq / t_np:6.2f} {t_l2:8.2f} {t_l2 / t_np:6.2f}"
              + _ort_text(t_sq, o_sq) + _ort_text(t_l2, o_l2))
        rows += [row("squares", name, "SUM_SQUARE", t_np, t_sq, o_sq), row("squares", name, "L2", t_np, t_l2, o_l2)]
    return rows


def functions(device: dml.Device, rng: np.random.Generator, repeats: int, peer: Peer) -> list[tuple[Any, ...]]:
    """The other value functions on FLOAT32: positive inputs for LOG_SUM, values near 1 for MULTIPLY (no product
    overflows: the time of finite products)."""
    rows = []
    ort = f" {'ORT ms':>8s} {'ratio':>6s}" if peer.enabled else ""
    print(f"\n{'FLOAT32 case':28s} {'function':12s} {'NumPy ms':>9s} {'opendml ms':>11s} {'ratio':>6s}{ort}")
    for name, shape, axes in FUNCTION_CASES:
        normal = rng.standard_normal(shape).astype(np.float32)
        inputs = {"LOG_SUM": np.abs(normal) + np.float32(0.5),
                  "MULTIPLY": np.exp2(rng.uniform(-0.01, 0.01, shape)).astype(np.float32)}
        for function, spelled in NUMPY.items():
            x = inputs.get(function, normal)
            t_np = best(lambda x=x, a=axes, f=spelled: f(x, a), repeats)
            t_ours = best(lambda x=x, a=axes, f=function: dml.reduce(x, f, a, device=device), repeats)
            t_ort = peer.time(function, x, axes)
            print(f"{name:28s} {function:12s} {t_np:9.2f} {t_ours:11.2f} {t_ours / t_np:6.2f}"
                  + _ort_text(t_ours, t_ort))
            rows.append(row("functions", name, function, t_np, t_ours, t_ort))
    return rows


def _plot(rows: list[tuple[Any, ...]], path: Path, title: str) -> None:
    plt = harness.pyplot(lambda text: print(text, file=sys.stderr))
    if plt is None:
        return
    labels = [f"{r[2]}, {r[1]}" for r in rows]
    fig, ax = plt.subplots(figsize=(9, 0.3 * len(rows) + 1.5))
    ax.barh(range(len(rows)), [r[5] for r in rows], color=["tab:green" if r[5] <= 1 else "tab:red" for r in rows])
    ax.set_yticks(range(len(rows)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.axvline(1.0, color="gray", linestyle="--", linewidth=1)
    ax.set_xlabel("opendml's time / NumPy's (below 1: ahead)")
    ax.set_title(title)
    harness.save(plt, fig, path, 120)


def main() -> None:
    parser = harness.parser(__doc__)
    parser.add_argument("--threads", type=int, default=2)
    harness.add_repeats(parser, "timed calls a case (default 11)", 11)
    harness.add_skip(parser, "onnxruntime: leave ONNX Runtime out")
    harness.add_out(parser)
    args = parser.parse_args()
    peer = Peer(args.threads, args.repeats, "onnxruntime" not in harness.names(args.skip))
    device = dml.Device(threads=args.threads)
    rng = np.random.default_rng(0)
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else "?"
    print(f"threads={args.threads}  cpus={cpus}")
    rows = [r for table in (sums, squares, functions) for r in table(device, rng, args.repeats, peer)]
    header = {"cpu": harness.cpu_model(), "threads": str(args.threads), "cpus": str(cpus),
              "load average": harness.load_average(), "commit": harness.commit()}
    harness.write_csv(args.out / "reduce-cpu.csv", header, COLUMNS, rows)
    _plot(rows, args.out / "reduce-cpu.png", f"REDUCE on the CPU, {args.threads} threads")


if __name__ == "__main__":
    main()
