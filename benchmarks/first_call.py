"""First calls on an empty kernel cache against a warm one, with the target of issue #33: every first call and
the quickstart within 1.5 x their warm time plus 0.5 s.

Run ``python benchmarks/first_call.py`` (Numba installed). Each case runs in fresh Python processes on a new,
empty kernel cache (``OPENDML_CACHE_DIR`` in a temporary directory): ``cold`` is the first process on it;
then one process with ``OPENDML_TIERED=0`` fills the cache whatever the cold one left unfinished (a tiered
process may exit before its background compiles end); ``warm`` is a fresh process on the filled cache. For a
function the time is its first call alone, on a few elements (importing opendml comes before the clock;
importing Numba and compiling or loading kernels are part of it); for ``quickstart`` it is the whole process
(``python examples/quickstart.py``, from start to exit). Each number is the median of ``--repeats`` caches.
``target`` is 1.5 x warm + 0.5 s; ``ok`` says whether cold met it. Writes ``first_call.csv`` and
``first_call.png`` into ``benchmarks/results`` (or ``--out``).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
try:
    import harness
finally:
    del sys.path[0]

ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = "quickstart"

# Each function case: the call, with numpy as np and opendml as dml imported, its arrays made before the clock.
CASES = {
    "clip FLOAT32 [4, 4]": ("x = np.ones((4, 4), np.float32)", "dml.clip(x, 0.0, 1.0)"),
    "argmax FLOAT32 [4, 4] axis 1": ("x = np.ones((4, 4), np.float32)", "dml.argmax(x, 1)"),
    "add FLOAT32 [4, 4]": ("a = np.ones((4, 4), np.float32); b = np.ones((4, 4), np.float32)", "dml.add(a, b)"),
}

CHILD = """
import json, time
import numpy as np
import opendml as dml
{setup}
start = time.perf_counter()
{call}
print(json.dumps(time.perf_counter() - start))
"""


def environment(cache: Path, tiered: bool | None) -> dict[str, str]:
    env = {**os.environ, "OPENDML_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    env.pop("OPENDML_TIERED", None)
    if tiered is not None:
        env["OPENDML_TIERED"] = "1" if tiered else "0"
    return env


def run_once(case: str, cache: Path, tiered: bool | None = None) -> float:
    """Seconds of the case in a fresh process on kernel cache ``cache``: the first call, or the quickstart's
    whole process."""
    env = environment(cache, tiered)
    if case == QUICKSTART:
        start = time.perf_counter()
        done = subprocess.run([sys.executable, str(ROOT / "examples" / "quickstart.py")], env=env,
                              capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - start
    else:
        setup, call = CASES[case]
        done = subprocess.run([sys.executable, "-c", CHILD.format(setup=setup, call=call)], env=env,
                              capture_output=True, text=True, check=False)
        seconds = float(json.loads(done.stdout.strip().splitlines()[-1])) if done.returncode == 0 else 0.0
    if done.returncode != 0:
        raise RuntimeError(f"{case} failed:\n{done.stderr}")
    return seconds


def measure(case: str, repeats: int, tiered: bool | None) -> tuple[float, float]:
    """Median cold and warm seconds over ``repeats`` fresh caches (``tiered``: OPENDML_TIERED for both, None
    for the default)."""
    cold, warm = [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="opendml-first-call-") as folder:
            cache = Path(folder)
            cold.append(run_once(case, cache, tiered))
            run_once(case, cache, tiered=False)  # whatever the cold process left uncompiled
            warm.append(run_once(case, cache, tiered))
    return statistics.median(cold), statistics.median(warm)


def target(warm: float) -> float:
    return 1.5 * warm + 0.5


def plot(rows: list[tuple[Any, ...]], path: Path) -> None:
    plt = harness.pyplot(print)
    if plt is None:
        return
    names = [f"{r[0]}\n({r[1]})" for r in rows]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.3 * len(rows)), 4.0))
    positions = range(len(rows))
    ax.bar([p - 0.25 for p in positions], [r[2] for r in rows], 0.25, label="cold (empty cache)")
    ax.bar(list(positions), [r[3] for r in rows], 0.25, label="warm")
    ax.bar([p + 0.25 for p in positions], [r[4] for r in rows], 0.25, label="target 1.5 x warm + 0.5 s")
    ax.set_xticks(list(positions))
    ax.set_xticklabels(names, fontsize=7)
    ax.set_ylabel("seconds")
    ax.set_title("First call on an empty kernel cache")
    ax.legend(fontsize=8)
    harness.save(plt, fig, path, 120)


def main() -> None:
    parser = harness.parser(__doc__)
    harness.add_repeats(parser, "fresh caches per number (median reported)", default=3)
    harness.add_out(parser)
    parser.add_argument("--modes", default="default",
                        help="comma-separated: default (OPENDML_TIERED unset), tiered, untiered")
    parser.add_argument("--only", default="", help="run only the cases whose name contains this (no file written)")
    parser.add_argument("--name", default="first_call", help="the CSV's and PNG's name")
    args = parser.parse_args()
    modes = {"default": None, "tiered": True, "untiered": False}
    header = {"cpu": harness.cpu_model(), "cores": str(len(os.sched_getaffinity(0))), "commit": harness.commit(),
              "repeats": str(args.repeats), "load average at start": harness.load_average()}
    print(", ".join(f"{k}: {v}" for k, v in header.items()))
    cases = [QUICKSTART, *CASES]
    width = max(len(c) for c in cases)
    print(f"  {'case':{width}} {'mode':9} {'cold s':>7} {'warm s':>7} {'target s':>8}  ok")
    rows: list[tuple[Any, ...]] = []
    for mode in harness.names(args.modes):
        for case in cases:
            if args.only and args.only not in case:
                continue
            cold, warm = measure(case, args.repeats, modes[mode])
            row = (case, mode, cold, warm, target(warm), cold <= target(warm))
            rows.append(row)
            print(f"  {case:{width}} {mode:9} {cold:7.2f} {warm:7.2f} {row[4]:8.2f}  {'yes' if row[5] else 'NO'}",
                  flush=True)
    if args.only:
        return
    header["load average at end"] = harness.load_average()
    args.out.mkdir(parents=True, exist_ok=True)
    harness.write_csv(args.out / f"{args.name}.csv", header, ["case", "mode", "cold s", "warm s", "target s", "ok"],
                      [(r[0], r[1], f"{r[2]:.3f}", f"{r[3]:.3f}", f"{r[4]:.3f}", r[5]) for r in rows])
    plot(rows, args.out / f"{args.name}.png")


if __name__ == "__main__":
    main()
