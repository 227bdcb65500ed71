"""The quickstart example runs and prints what the operators compute."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

QUICKSTART = Path(__file__).parent.parent / "examples" / "quickstart.py"


def test_quickstart_runs() -> None:
    result = subprocess.run([sys.executable, str(QUICKSTART)], capture_output=True, text=True, check=True)
    lines = result.stdout.splitlines()
    assert "argmin(m, 0)                        [[0, 1, 2]]" in lines
    assert any(line.startswith("ELEMENT_WISE_CLIP in place") and "[-2.5 -2.5 -2.  -1.   0.   1.   2.   2.5  2.5]"
               in line for line in lines)
    assert any("ARGMIN: FeatureLevel must be at least 3_0" in line for line in lines)
