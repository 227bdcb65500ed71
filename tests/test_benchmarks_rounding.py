"""benchmarks/rounding.py at its CPU sizes: ``--verify`` of every FLOAT16 input of a function against the
independent reference, and ``--against-exact`` of every FLOAT16 input of another against the exact path, both
through the compiled kernels (the vector-code evaluations), each reporting 0."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.limits import HANG_SECONDS

ROOT = Path(__file__).resolve().parent.parent
pytest.importorskip("numba", reason="the compiled kernels are Numba's")
pytest.importorskip("mpmath", reason="the reference's hard cases are mpmath's")


def _run(*args: str) -> str:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "rounding.py"), *args],
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                          timeout=HANG_SECONDS)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_verify_every_float16_input_of_tanh() -> None:
    (line,) = [line for line in _run("--verify", "--precision", "FLOAT16", "--functions", "TANH").splitlines()
               if line.startswith("TANH")]
    assert line.split() == ["TANH", "FLOAT16", "wrong", "0", "max", "error", "0", "ulp"]


def test_every_float16_input_of_sigmoid_against_the_exact_path() -> None:
    (line,) = [line for line in _run("--against-exact", "--precision", "FLOAT16", "--functions",
                                     "SIGMOID").splitlines() if line.startswith("SIGMOID")]
    assert line.split()[:7] == ["SIGMOID", "FLOAT16", "differ", "from", "the", "exact", "path"]
    assert line.split()[7] == "0"
