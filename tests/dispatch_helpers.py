"""Running ``opendml dispatch`` as a subprocess, and reading what it prints."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from tests.limits import HANG_SECONDS

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


def run_dispatch(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m opendml dispatch ARGS`` with this checkout's opendml first on the path."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "opendml", "dispatch", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=HANG_SECONDS)


def printed(stdout: str, resource: str) -> np.ndarray:
    """The values a print command showed for ``resource``, parsed as numbers ("nan", "inf" included)."""
    prefix = f"Resource '{resource}': "
    lines = [line for line in stdout.splitlines() if line.startswith(prefix)]
    assert len(lines) == 1, f"expected one print of {resource!r} in:\n{stdout}"
    return np.array([float(v) for v in lines[0][len(prefix):].split(", ")])


def assert_printed(stdout: str, resource: str, expected: np.ndarray) -> None:
    """Printed values equal ``expected`` to the 6 significant digits that printing keeps."""
    np.testing.assert_allclose(printed(stdout, resource), np.asarray(expected, dtype=np.float64), rtol=5e-6,
                               atol=0, equal_nan=True)


def write_model(path: Path, model: dict) -> Path:
    path.write_text(json.dumps(model, indent=1))
    return path


def median_ms(stdout: str, dispatchable: str) -> tuple[int, float]:
    """(iterations, CPU median in ms) from a dispatch's summary line."""
    prefix = f"Dispatch '{dispatchable}': "
    (line,) = [line for line in stdout.splitlines() if line.startswith(prefix)]
    count, rest = line[len(prefix):].split(" iterations, ")
    value = float(rest.split(" ms median (CPU)")[0])
    assert math.isfinite(value) and value >= 0
    return int(count), value
