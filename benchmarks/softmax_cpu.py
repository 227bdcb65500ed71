"""SOFTMAX and LOG_SOFTMAX over the last axis of [batch, 128256] FLOAT32 rows on the CPU: opendml (docs/semantics.md
9g's correctly rounded steps) against NumPy's ``exp(x - max) / sum`` and ``torch.softmax`` (where installed), the
median of ``--repeats`` calls each; and ``--verify``: every FLOAT32 ``d`` in [-104, 0] through the kernel's own
vectorized ``exp`` and its rounding test (``backends/cpu_kernels/softmax_rows.py``), against ``EXP``'s correctly
rounded value, with the double evaluation's largest error in ulps against the C library's.

    python benchmarks/softmax_cpu.py                 # batch 1, 8 and 64
    python benchmarks/softmax_cpu.py --verify        # 1.1e9 inputs: a minute or two on two cores
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

os.environ.setdefault("OPENDML_TIERED", "0")  # the compiled kernels from the first call
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import opendml as dml

VOCABULARY = 128256


def _median_ms(call: Callable[[], object], repeats: int) -> float:
    call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def _numpy_softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def timings(batches: list[int], repeats: int) -> None:
    try:
        import torch
    except ImportError:
        torch = None
    print("batch, opendml softmax ms, opendml log_softmax ms, numpy softmax ms, torch softmax ms")
    for batch in batches:
        x = (np.random.default_rng(batch).standard_normal((batch, VOCABULARY)) * 3).astype(np.float32)
        out = np.empty_like(x)
        calls: list[Callable[[], object]] = [lambda x=x, out=out: dml.softmax(x, out=out),
                                             lambda x=x, out=out: dml.log_softmax(x, out=out),
                                             lambda x=x: _numpy_softmax(x)]
        if torch is not None:
            tensor = torch.from_numpy(x)
            calls.append(lambda t=tensor: torch.softmax(t, -1))
        print(batch, *(f"{_median_ms(call, repeats):.3f}" for call in calls), sep=", ")


def verify(chunk: int = 1 << 24) -> None:
    from numba import njit

    from opendml.backends.cpu_kernels import rounded
    from opendml.backends.cpu_kernels.softmax_rows import exp_double, exp_float32

    fast, rows, exact = exp_double(), exp_float32(), rounded.EXP_FLOAT32

    @njit(nogil=True)
    def check(d, out):  # type: ignore[no-untyped-def]
        wrong = 0
        worst = 0
        for i in range(d.shape[0]):
            if out[i] != exact(d[i]) or np.isnan(out[i]):
                wrong += 1
            y, z = fast(np.float64(d[i])), np.exp(np.float64(d[i]))
            worst = max(worst, abs(np.int64(np.float64(y).view(np.int64)) - np.int64(np.float64(z).view(np.int64))))
        return wrong, worst

    first, last = 0x80000000, 0xC2D00000  # -0.0 .. -104.0
    wrong = worst = marked = 0
    for start in range(first, last + 1, chunk):
        d = np.arange(start, min(start + chunk, last + 1), dtype=np.uint64).astype(np.uint32).view(np.float32)
        out = np.empty_like(d)
        marked += rows(d, np.float32(0), out)
        w, u = check(d, out)
        wrong, worst = wrong + w, max(worst, u)
    print(f"inputs {last - first + 1}, wrong roundings {wrong}, marked and redone {marked}, "
          f"largest error of the double exp {worst} ulps (the rounding test needs at most 8)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8, 64])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--verify", action="store_true")
    args = parser.parse_args()
    if args.verify:
        verify()
    else:
        timings(args.batches, args.repeats)


if __name__ == "__main__":
    main()
