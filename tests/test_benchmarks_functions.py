"""benchmarks/functions.py runs on the CPU at a small size: a row per function asked for, opendml's time in each,
NumPy's time and accuracy where NumPy has the function, and the CSV written (the peers that are not installed,
ONNX Runtime, PyTorch, are left out of the row)."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

from tests.limits import HANG_SECONDS

ROOT = Path(__file__).resolve().parent.parent


def test_the_run_writes_a_row_per_function(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "functions.py"), "--elements", "2048",
                           "--functions", "EXP,GELU", "--repeats", "1", "--out", str(tmp_path)],
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                          timeout=HANG_SECONDS)
    assert done.returncode == 0, done.stderr
    lines = [line for line in (tmp_path / "functions-cpu.csv").read_text().splitlines() if not line.startswith("#")]
    rows = {row["function"]: row for row in csv.DictReader(lines)}
    assert sorted(rows) == ["EXP", "GELU"]
    assert all(float(row["opendml_us"]) > 0 for row in rows.values())
    assert float(rows["EXP"]["numpy_us"]) > 0 and float(rows["EXP"]["numpy_wrong_%"]) >= 0
    assert rows["GELU"].get("numpy_us", "") == ""  # NumPy has no GELU
