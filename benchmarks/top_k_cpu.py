"""TOP_K on the CPU over LLM logits: ``opendml.top_k`` (the Numba kernel: one scan a row, a bounded heap) against
NumPy's ``np.argpartition`` then a sort of the K (what a NumPy user writes; it does not keep TOP_K's tie rule),
the partition path opendml takes without Numba (``OPENDML_CPU_KERNELS=numpy``: the same bits as the kernel), and
``torch.topk`` where PyTorch is installed (it ranks NaN first and leaves ties open), on the threads the device is
given (run under ``taskset -c 0,1`` for the issue's 2 cores).

    PYTHONPATH=$PWD taskset -c 0,1 python benchmarks/top_k_cpu.py --threads 2
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
from opendml.backends.cpu_kernels import selection

SHAPES = [(1, 128256), (64, 128256)]
TYPES = [np.float16, np.float32]
KS = [1, 8, 64]


def best(call: Callable[[], object], repeats: int) -> float:
    call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def numpy_top_k(x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The K largest along the last axis, sorted: argpartition, then an argsort of the K (ties left open)."""
    part = np.argpartition(-x, k - 1, axis=-1)[:, :k]
    picked = np.take_along_axis(x, part, axis=-1)
    order = np.argsort(-picked, axis=-1, kind="stable")
    return np.take_along_axis(picked, order, axis=-1), np.take_along_axis(part, order, axis=-1)


def partition_path(x: np.ndarray, k: int) -> np.ndarray:
    """opendml's selection without Numba (the NumPy kernels' path), on one thread."""
    return selection.select_rows(x, k, True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    try:
        import torch

        torch.set_num_threads(args.threads)
    except ImportError:
        torch = None
    device = dml.Device(threads=args.threads)
    rng = np.random.default_rng(0)
    print(f"threads={args.threads}  cpus={os.sched_getaffinity(0) if hasattr(os, 'sched_getaffinity') else '?'}  "
          f"kernels={__import__('opendml.backends.cpu_kernels', fromlist=['choice']).choice()}")
    print(f"{'shape':>12s} {'type':>8s} {'K':>3s} {'opendml ms':>10s} {'partition ms':>12s} {'numpy ms':>9s} "
          f"{'torch ms':>9s}  same as the partition")
    for shape in SHAPES:
        for dtype in TYPES:
            x = (rng.standard_normal(shape) * 4).astype(dtype)
            for k in KS:
                t_dml = best(lambda x=x, k=k: dml.top_k(x, k, device=device), args.repeats)
                t_part = best(lambda x=x, k=k: partition_path(x, k), args.repeats)
                t_np = best(lambda x=x, k=k: numpy_top_k(x, k), args.repeats)
                t_torch = float("nan")
                if torch is not None:
                    tx = torch.from_numpy(x)
                    t_torch = best(lambda tx=tx, k=k: torch.topk(tx, k, dim=-1), args.repeats)
                same = np.array_equal(dml.top_k(x, k, device=device)[1], partition_path(x, k))
                print(f"{'x'.join(map(str, shape)):>12s} {np.dtype(dtype).name:>8s} {k:3d} {t_dml * 1e3:10.2f} "
                      f"{t_part * 1e3:12.2f} {t_np * 1e3:9.2f} {t_torch * 1e3:9.2f}  {same}")


if __name__ == "__main__":
    main()
