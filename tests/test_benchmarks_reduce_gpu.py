"""benchmarks/reduce_gpu.py: without a GPU it says so and exits 2; on a GPU a small run writes its table and files
(the numbers belong to the machine and are not tested)."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CUDA_MISSING

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "reduce_gpu.py"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(SCRIPT.parent.parent)})


@pytest.mark.skipif(CUDA_MISSING is None, reason="a GPU is here: the run below covers the script")
def test_without_a_gpu_it_exits_2() -> None:
    result = run("--size", "64")
    assert result.returncode == 2, result.stderr
    assert "no usable CUDA GPU" in result.stderr


@pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")
def test_a_small_run_writes_its_rows(tmp_path: Path) -> None:
    result = run("--size", "256", "--calls", "2", "--repeats", "1", "--skip", "top_k", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    (table,) = tmp_path.glob("reduce-*.csv")
    rows = list(csv.DictReader(line for line in table.read_text().splitlines() if not line.startswith("#")))
    assert {r["case"] for r in rows} >= {"SUM all axes", "SUM first axis", "MULTIPLY last axis"}
    assert all(float(r["median_ms"]) > 0 for r in rows)
