"""Peak resident memory of large CLIPs, each measured in a fresh subprocess (not a test: it needs 4+ GiB).

Targets (issue: CPU backend at memory speed): an in-place CLIP of a 4 GiB FLOAT32 tensor peaks under
4.3 GiB; an out-of-place 2 GiB -> 2 GiB CLIP peaks under 4.3 GiB. Run alone on a quiet machine:
``python benchmarks/cpu_memory.py``.
"""

from __future__ import annotations

import subprocess
import sys

GIB = 1 << 30
LIMIT = 4.3 * GIB

CHILD = """
import resource, sys
import numpy as np
import opendml as dml
mode, count = sys.argv[1], int(sys.argv[2])
x = np.empty(count, np.float32)
x[:] = 3.0                                   # touch every page
x[::1024] = -3.0
if mode == "in-place":
    dml.clip(x, -1.0, 1.0, out=x)
    ok = x[0] == -1.0 and x[1] == 1.0
else:
    y = dml.clip(x, -1.0, 1.0)
    ok = y[0] == -1.0 and y[1] == 1.0 and x[1] == 3.0
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, bool(ok))
"""


def peak(mode: str, nbytes: int) -> tuple[int, bool]:
    done = subprocess.run([sys.executable, "-c", CHILD, mode, str(nbytes // 4)], capture_output=True, text=True,
                          check=True)
    value, ok = done.stdout.split()
    return int(value), ok == "True"


def main() -> None:
    for mode, nbytes in [("in-place", 4 * GIB), ("out-of-place", 2 * GIB)]:
        print(f"{mode} CLIP of {nbytes / GIB:.0f} GiB FLOAT32 ...", flush=True)
        rss, ok = peak(mode, nbytes)
        verdict = "under" if rss < LIMIT else "OVER"
        print(f"  peak RSS {rss / GIB:.3f} GiB ({verdict} the 4.3 GiB target); result correct: {ok}")


if __name__ == "__main__":
    main()
