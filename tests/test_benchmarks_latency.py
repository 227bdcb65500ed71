"""benchmarks/latency.py: a tiny CPU run times every implementation (the argmax section's on new arrays too),
checks each against NumPy and states the issues' targets.

The numbers belong to the machine and are not tested; what is tested is that the script runs, writes its
files and that every implementation it timed gave NumPy's bits.
"""

from __future__ import annotations

import csv
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.limits import HANG_SECONDS

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "latency.py"
HOST = ["opendml execute", "opendml functional", "opendml list of 1", "opendml list of 3", "np.clip"]
CHAIN = ["opendml list of 3", "opendml execute x3", "numpy"]
ARGMAX = ["opendml argmax (new array)", "np.argmax (new array)"]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path, list[dict]]:
    out = tmp_path_factory.mktemp("latency")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, str(SCRIPT), "--device", "cpu", "--repeats", "3", "--batch", "5",
                           "--chain-repeats", "3", "--skip", "torch.compile", "--profile", "20", "--out", str(out)],
                          env=env, capture_output=True, text=True, check=False, timeout=HANG_SECONDS)
    path = out / "latency-cpu.csv"
    assert path.exists(), done.stdout + done.stderr
    text = path.read_text()
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    return done, path, list(csv.DictReader(lines))


def test_every_implementation_is_timed_and_exact(tiny_run) -> None:
    done, _, rows = tiny_run
    assert done.returncode == 0, done.stdout + done.stderr
    timed = {(r["section"], r["implementation"]): r for r in rows if r["section"] in ("host", "argmax", "chain")}
    expected = {("host", name) for name in HOST} | {("chain", name) for name in CHAIN}
    expected |= {("argmax", name) for name in ARGMAX}
    if importlib.util.find_spec("torch") is not None:
        expected |= {("host", "torch eager"), ("chain", "torch eager")}
    assert expected <= set(timed), sorted(timed)
    for row in timed.values():
        assert row["check"] == "exact", row
        assert int(row["samples"]) == 3 and float(row["median_us"]) > 0, row
    three = timed["host", "opendml list of 3"]
    assert three["dispatches"] == "3"
    assert float(three["median_us_per_dispatch"]) == pytest.approx(float(three["median_us"]) / 3, abs=1e-3)


def test_targets_header_and_files(tiny_run) -> None:
    done, path, rows = tiny_run
    verdicts = [r["check"] for r in rows if r["section"] == "target"]
    assert [v.split(" ", 1)[1].rsplit(" (", 1)[0] for v in verdicts] == \
        ["opendml list of 1 <= np.clip", "opendml functional <= 1.5x np.clip",
         "opendml argmax (new array) <= 2x np.argmax (new array)"]
    assert all(v.split()[0] in ("PASS", "FAIL") for v in verdicts)
    header = [line for line in path.read_text().splitlines() if line.startswith("# ")]
    assert any(line.startswith("# load average at start: ") for line in header)
    assert any(line.startswith("# load average at end: ") for line in header)
    if importlib.util.find_spec("matplotlib") is not None:
        assert path.with_suffix(".png").stat().st_size > 0
    assert "target PASS" in done.stdout or "target FAIL" in done.stdout
    assert "round 1 of 3" in done.stderr and "round 1 of 3" not in done.stdout  # progress on stderr
    # --profile: the opendml argmax row's 20 calls under cProfile, the functional call among what it lists
    assert "argmax: profile of opendml argmax (new array), 20 calls" in done.stderr
    assert "reductions.py" in done.stderr.split("argmax: profile of", 1)[1]
