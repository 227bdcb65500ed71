"""REDUCE SUM on the CPU: opendml's exact sum (the exact sum rounded once) against NumPy's inexact pairwise
``np.sum``, on the threads the device is given (OPENDML_NUM_THREADS; run under ``taskset -c 0,1`` for the
issue's 2 cores), with a copy of the input as the memory-bandwidth reference; then SUM_SQUARE (exact) and L2
(correctly rounded) against ``np.sum(x * x)`` and ``np.sqrt`` of it.

    PYTHONPATH=$PWD taskset -c 0,1 python benchmarks/reduce_cpu.py --threads 2
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

os.environ.setdefault("OPENDML_TIERED", "0")  # the compiled kernels from the first call

import numpy as np

import opendml as dml

CASES = [  # (name, shape, axes, dtype)
    ("all of 2^24", (1 << 24,), None, np.float32),
    ("last axis of 4096x4096", (4096, 4096), (1,), np.float32),
    ("first axis of 4096x4096", (4096, 4096), (0,), np.float32),
    ("last axis of 65536x256", (65536, 256), (1,), np.float32),
    ("all of 2^24 FLOAT16", (1 << 24,), None, np.float16),
]


def best(call: Callable[[], object], repeats: int) -> float:
    call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times) if repeats < 5 else statistics.median(sorted(times)[: max(3, repeats // 2)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=11)
    args = parser.parse_args()
    device = dml.Device(threads=args.threads)
    rng = np.random.default_rng(0)
    print(f"threads={args.threads}  cpus={os.sched_getaffinity(0) if hasattr(os, 'sched_getaffinity') else '?'}")
    print(f"{'case':28s} {'np.sum ms':>10s} {'exact ms':>10s} {'ratio':>6s} {'copy ms':>8s}  exact==np.sum")
    for name, shape, axes, dtype in CASES:
        x = rng.standard_normal(shape).astype(dtype)
        out = np.empty_like(x)
        numpy_axes = None if axes is None else axes
        t_np = best(lambda x=x, a=numpy_axes: np.sum(x, axis=a, keepdims=True), args.repeats)
        t_ex = best(lambda x=x, a=axes: dml.reduce(x, "SUM", a, device=device), args.repeats)
        t_copy = best(lambda x=x, out=out: np.copyto(out, x), args.repeats)
        equal = np.array_equal(dml.reduce(x, "SUM", axes, device=device), np.sum(x, axis=numpy_axes, keepdims=True))
        print(f"{name:28s} {t_np * 1e3:10.2f} {t_ex * 1e3:10.2f} {t_ex / t_np:6.2f} {t_copy * 1e3:8.2f}  {equal}")
    squares(device, rng, args.repeats)


SQUARE_CASES = [  # (name, shape, axes)
    ("last axis of 1024x1024", (1024, 1024), (1,)),
    ("first axis of 1024x1024", (1024, 1024), (0,)),
    ("all of 2^20", (1 << 20,), None),
    ("last axis of 4096x4096", (4096, 4096), (1,)),
]


def squares(device: dml.Device, rng: np.random.Generator, repeats: int) -> None:
    print(f"\n{'FLOAT32 case':28s} {'np x*x ms':>10s} {'SUM_SQ ms':>10s} {'ratio':>6s} {'L2 ms':>8s} {'ratio':>6s}")
    for name, shape, axes in SQUARE_CASES:
        x = rng.standard_normal(shape).astype(np.float32)
        t_np = best(lambda x=x, a=axes: np.sum(x * x, axis=a, dtype=np.float32, keepdims=True), repeats)
        t_sq = best(lambda x=x, a=axes: dml.reduce(x, "SUM_SQUARE", a, device=device), repeats)
        t_l2 = best(lambda x=x, a=axes: dml.reduce(x, "L2", a, device=device), repeats)
        print(f"{name:28s} {t_np * 1e3:10.2f} {t_sq * 1e3:10.2f} {t_sq / t_np:6.2f} {t_l2 * 1e3:8.2f} "
              f"{t_l2 / t_np:6.2f}")


if __name__ == "__main__":
    main()
