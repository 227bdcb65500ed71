"""Compile time of the CPU backend: each operator's first call, cold and warm.

Run ``python benchmarks/compile_time.py`` (Numba installed). Each case runs in a fresh Python process:
``cold`` with a new, empty kernel cache (``OPENDML_CACHE_DIR`` in a temporary directory), so everything the
call needs is compiled; ``warm`` in another fresh process on the cache the cold run filled, so compiled
kernels are loaded from disk. The time is the call alone: importing opendml comes before it (it needs only
NumPy), importing Numba and compiling (or loading) the kernels are part of it. Each number is the median
of ``--repeats`` processes. Writes ``compile_time.csv`` into ``benchmarks/results`` (or ``--out``).

The small cases are each operator's first call on a few elements; ``--large`` adds first calls on 2^26
elements, which share their work out to the threads (on Python threads: a kernel's Numba-parallel driver is
compiled from its fourth threaded call, ``cpu_kernels.drivers``) and for CLIP also compile the streaming
stores. ``--graphs`` adds the fused graphs of ``benchmarks/graphs.py`` (its CPU rows at ``quick`` sizes,
the inputs made before the clock starts): ``compile_graph`` and the first execution, as an application
pays them.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

RESULTS = Path(__file__).parent / "results"
ROOT = Path(__file__).resolve().parent.parent

# Each case: the call, with numpy as np and opendml as dml imported.
SMALL = {
    "CLIP FLOAT32": "dml.clip(np.ones((4, 4), np.float32), 0.0, 1.0)",
    "CLIP FLOAT32 with ScaleBias": "dml.clip(np.ones((4, 4), np.float32), 0.0, 1.0, scale_bias=(2.0, 0.5))",
    "CLIP FLOAT16": "dml.clip(np.ones((4, 4), np.float16), 0.0, 1.0)",
    "CLIP1 INT8": "dml.clip(np.ones((4, 4), np.int8), -3, 5)",
    "THRESHOLD FLOAT32": "dml.threshold(np.ones((4, 4), np.float32), 0.0)",
    "DEQUANTIZE_LINEAR UINT8->FLOAT32 per-tensor":
        "dml.dequantize_linear(np.ones((4, 4), np.uint8), np.float32(0.5), np.uint8(3))",
    "DEQUANTIZE_LINEAR INT8->FLOAT16 per-channel":
        "dml.dequantize_linear(np.ones((4, 4), np.int8), np.ones(4, np.float16), np.ones(4, np.int8))",
    "ARGMIN FLOAT32 last axis": "dml.argmin(np.ones((4, 4), np.float32), 1)",
    "ARGMIN FLOAT32 first axis": "dml.argmin(np.ones((4, 4), np.float32), 0)",
    "ARGMIN FLOAT32 all axes": "dml.argmin(np.ones((4, 4), np.float32), (0, 1))",
    "ARGMIN FLOAT16 last axis": "dml.argmin(np.ones((4, 4), np.float16), 1)",
    "ARGMIN INT8 last axis DECREASING": "dml.argmin(np.ones((4, 4), np.int8), 1, axis_direction='DECREASING')",
}
LARGE = {
    "CLIP FLOAT32 [2^26]": "dml.clip(np.ones(1 << 26, np.float32), 0.0, 1.0)",
    "DEQUANTIZE_LINEAR UINT8->FLOAT32 per-tensor [2^26]":
        "dml.dequantize_linear(np.ones(1 << 26, np.uint8), np.float32(0.5), np.uint8(3))",
    "ARGMIN FLOAT32 last axis [8192, 8192]": "dml.argmin(np.ones((8192, 8192), np.float32), 1)",
    "ARGMIN FLOAT32 first axis [8192, 8192]": "dml.argmin(np.ones((8192, 8192), np.float32), 0)",
    "ARGMIN FLOAT32 last axis (short rows) [262144, 256]": "dml.argmin(np.ones((262144, 256), np.float32), 1)",
}

CHILD = """
import json, sys, time
import numpy as np
import opendml as dml
start = time.perf_counter()
{call}
print(json.dumps(time.perf_counter() - start))
"""

# A fused graph of benchmarks/graphs.py: its inputs made, then compiled and run once on the clock.
GRAPH_CHILD = """
import json, sys, time
import numpy as np
import opendml as dml
sys.path.insert(0, {benchmarks!r})
import graphs as G
row = next(r for r in G.issue_rows("cpu", "quick") if r.key == {key!r})
device = dml.Device()
inputs = G.make_inputs(np, row, 0)
start = time.perf_counter()
compiled = device.compile_graph(G.graph_desc(device, row))
G.compiled_impl(device, np, row, inputs, compiled).run()
print(json.dumps(time.perf_counter() - start))
"""
GRAPHS = ["1", "2", "3a", "3b", "4a", "4b", "5"]


def graph_cases() -> dict[str, str]:
    """The fused graph rows as cases: a name, and the program that times one."""
    sys.path.insert(0, str(Path(__file__).parent))
    import graphs

    rows = {row.key: row for row in graphs.issue_rows("cpu", "quick")}
    return {f"graph {key}: {rows[key].title} {list(rows[key].shape)}":
            GRAPH_CHILD.format(benchmarks=str(Path(__file__).parent), key=key) for key in GRAPHS}


def first_call(call: str, cache: Path) -> float:
    """Seconds of ``call`` (an operator call, or a program timing itself) in a fresh process whose kernel
    cache is ``cache``."""
    env = {**os.environ, "OPENDML_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT),
           "OPENDML_TIERED": "0"}  # the compile itself, at the compile step (``first_call.py`` times tiering)
    program = call if "\n" in call else CHILD.format(call=call)
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{call} failed:\n{done.stderr}")
    return float(json.loads(done.stdout.strip().splitlines()[-1]))


def measure(call: str, repeats: int) -> tuple[float, float]:
    """Median cold and warm seconds over ``repeats`` fresh caches."""
    cold, warm = [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="opendml-compile-time-") as cache:
            cold.append(first_call(call, Path(cache)))
            warm.append(first_call(call, Path(cache)))
    return statistics.median(cold), statistics.median(warm)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="processes per number (median reported)")
    parser.add_argument("--large", action="store_true", help="also first calls on 2^26 elements")
    parser.add_argument("--graphs", action="store_true", help="also the fused graphs of benchmarks/graphs.py")
    parser.add_argument("--only", default="", help="run only the cases whose name contains this (no file written)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for compile_time.csv")
    args = parser.parse_args()
    import numba

    header = {
        "cores": str(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()),
        "load average at start": " ".join(f"{v:.2f}" for v in os.getloadavg()),
        "numba": numba.__version__,
        "python": platform.python_version(),
        "repeats": str(args.repeats),
    }
    print(", ".join(f"{k}: {v}" for k, v in header.items()))
    cases = {**SMALL, **(LARGE if args.large else {}), **(graph_cases() if args.graphs else {})}
    rows = []
    width = max(len(name) for name in cases)
    print(f"  {'case':{width}} {'cold s':>7} {'warm s':>7}")
    for name, call in cases.items():
        if args.only and args.only not in name:
            continue
        cold, warm = measure(call, args.repeats)
        rows.append((name, cold, warm))
        print(f"  {name:{width}} {cold:7.2f} {warm:7.2f}", flush=True)
    if args.only:
        return
    header["load average at end"] = " ".join(f"{v:.2f}" for v in os.getloadavg())
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "compile_time.csv", "w", newline="") as f:
        for k, v in header.items():
            f.write(f"# {k}: {v}\n")
        writer = csv.writer(f)
        writer.writerow(["case", "cold_s", "warm_s"])
        writer.writerows([(name, f"{cold:.2f}", f"{warm:.2f}") for name, cold, warm in rows])


if __name__ == "__main__":
    main()
