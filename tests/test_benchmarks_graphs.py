"""benchmarks/graphs.py: a tiny CPU run writes every row and implementation, and every peer agrees.

The benchmark's numbers are not tested (they belong to the machine); what is tested is that it runs
the issue's rows through fused and unfused plans that really differ, and that its checks hold.
"""

from __future__ import annotations

import csv
import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from tests.limits import HANG_SECONDS

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "graphs.py"
ROWS = ["1", "2", "3a", "3b", "4a", "4b", "5"]
NODES = {"1": 3, "2": 3, "3a": 2, "3b": 2, "4a": 3, "4b": 3, "5": 3}
COLUMNS = ["row", "title", "shape", "implementation", "median_ms", "min_ms", "max_ms", "runs", "x_floor", "kernels",
           "check"]


def installed(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


ORT = installed("onnxruntime") and installed("onnx")  # the ONNX Runtime peer runs where both are installed


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], list[dict[str, str]]]:
    """One run of the script on the CPU at its tiny sizes, and the lines of its CSV (header comments apart).
    torch.compile is left out where PyTorch is installed: it compiles C++ for each row, tens of seconds."""
    out = tmp_path_factory.mktemp("graphs")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    env.pop("OPENDML_FUSION", None)
    done = subprocess.run([sys.executable, str(SCRIPT), "--device", "cpu", "--sizes", "tiny", "--repeats", "3",
                           "--skip", "torch.compile", "--out", str(out)], env=env, capture_output=True, text=True, check=False, timeout=HANG_SECONDS)
    path = out / "graphs-cpu-tiny.csv"
    assert path.exists(), done.stdout + done.stderr
    lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    return done, list(csv.DictReader(lines))


def test_the_run_succeeds_and_writes_every_row_and_implementation(tiny_run) -> None:
    done, lines = tiny_run
    assert done.returncode == 0, done.stdout + done.stderr
    assert list(lines[0]) == COLUMNS
    assert sorted({line["row"] for line in lines}, key=ROWS.index) == ROWS
    for row in ROWS:
        names = {line["implementation"] for line in lines if line["row"] == row}
        expected = {"fused", "unfused", "node-by-node", "numpy", "floor", "target"}
        if ORT:
            expected.add("onnxruntime")
        assert expected <= names, (row, names)
    assert "sizes: tiny: a smoke test" in done.stdout


def test_every_peer_that_ran_agreed_with_opendml(tiny_run) -> None:
    _, lines = tiny_run
    for line in lines:
        name, check = line["implementation"], line["check"]
        if name in ("floor", "target"):
            continue
        assert not check.startswith("DIFFERS"), line
        if name in ("unfused", "node-by-node"):
            assert check == "exact", line
        elif name == "fused":
            assert check == "reference", line
        elif name == "numpy" or (name == "onnxruntime" and ORT):
            assert check.startswith("equal"), line  # never skipped where installed
        if not check.startswith("skipped"):
            assert float(line["median_ms"]) > 0 and int(line["runs"]) >= 3, line


def test_unfused_runs_a_kernel_per_node_and_fused_fewer(tiny_run) -> None:
    _, lines = tiny_run
    kernels = {(line["row"], line["implementation"]): line["kernels"] for line in lines if line["kernels"]}
    for row, nodes in NODES.items():
        assert int(kernels[row, "unfused"]) == nodes
        assert int(kernels[row, "fused"]) <= nodes - (0 if row.startswith("3") else 1)
    assert kernels["4a", "fused"] == kernels["4b", "fused"] == "1"  # element-wise only: one kernel


def test_each_row_states_its_floor_and_the_issue_targets(tiny_run) -> None:
    _, lines = tiny_run
    for row in ROWS:
        floors = [line for line in lines if line["row"] == row and line["implementation"] == "floor"]
        assert len(floors) == 1 and float(floors[0]["median_ms"]) > 0 and "bytes at" in floors[0]["check"]
        verdicts = [line["check"] for line in lines if line["row"] == row and line["implementation"] == "target"]
        assert verdicts and all(v.split()[0] in ("PASS", "FAIL", "n/a") for v in verdicts), verdicts
    row1 = [line["check"] for line in lines if line["row"] == "1" and line["implementation"] == "target"]
    assert any(">= 5x faster than unfused" in v for v in row1) and any("<= 3x the floor" in v for v in row1)


@pytest.fixture(scope="module")
def graphs() -> Iterator[ModuleType]:
    """The script as a module (it puts benchmarks/ on sys.path for benchmarks/cpu.py: undone after)."""
    path, modules = list(sys.path), set(sys.modules)
    spec = importlib.util.spec_from_file_location("benchmark_graphs", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    yield module
    sys.path[:] = path
    for name in set(sys.modules) - modules:
        if name in ("cpu", "benchmark_graphs"):
            del sys.modules[name]


def test_an_index_at_a_larger_element_differs_and_one_at_an_equal_minimum_is_a_tie(graphs: ModuleType) -> None:
    source = np.array([[3.0, 0.0, 0.0, 5.0], [1.0, 2.0, 1.0, 0.5]], np.float32)
    reference = np.array([[1], [3]])
    assert graphs.compare_indices(reference, np.array([[1], [3]]), source, 1) == ""
    assert "equal minima" in graphs.compare_indices(reference, np.array([[2], [3]]), source, 1)
    assert graphs.compare_indices(reference, np.array([[0], [3]]), source, 1).startswith("DIFFERS")
    assert graphs.compare_indices(reference, np.array([[1], [4]]), source, 1).startswith("DIFFERS")


def test_floats_must_be_equal_or_for_float16_the_chain_rounded_to_half_once(graphs: ModuleType) -> None:
    ref = np.array([1.0, -0.0, 6.0], np.float32)
    assert graphs.compare_floats(ref, np.array([1.0, 0.0, 6.0], np.float32)) == ""  # -0.0 == +0.0
    assert graphs.compare_floats(ref, np.array([1.0, 0.0, np.nextafter(np.float32(6), 7)], np.float32)) \
        .startswith("DIFFERS")
    assert graphs.compare_floats(ref, ref.astype(np.float64)).startswith("DIFFERS")
    half = np.array([1.0, 2.0], np.float16)
    once = np.array([1.0, np.nextafter(np.float16(2), 3)], np.float16)
    assert "rounded to half once" in graphs.compare_floats(half, once, once)
    assert graphs.compare_floats(half, once).startswith("DIFFERS")
    assert graphs.compare_floats(half, once, half).startswith("DIFFERS")

