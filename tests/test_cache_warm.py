"""``opendml cache warm``: which operators and types it compiles, its usage errors, and that a later process's
first calls of what it warmed compile nothing (Numba's compile events, as tests/compile_times.py counts them)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from opendml import cli
from opendml.backends import cpu_kernels
from opendml.device import Device
from opendml.dtypes import DataType
from opendml.kernels import cache, warm
from opendml.ops import OPERATORS
from tests.limits import HANG_SECONDS

NUMBA = pytest.mark.skipif(not cpu_kernels.numba_available(), reason="Numba is not installed (the opendml[fast] extra)")
ROOT = Path(__file__).resolve().parent.parent

# First calls on other shapes than the warm-up's; prints the number of Numba compilations they caused, then
# whether each result is NumPy's, then the count again after a call of an operator not warmed.
FIRST_CALLS = """\
import numpy as np
from numba.core import event

compiled = []
class Count(event.Listener):
    def on_start(self, ev): compiled.append(ev.data["args"])
    def on_end(self, ev): pass
event.register("numba:compile", Count())

import opendml as dml
x = np.linspace(-3, 3, 101, dtype=np.float32)
i = np.arange(-9, 9, dtype=np.int32).reshape(3, 6)
m = np.array([[4, -1, 7], [0, 9, 2]], np.int16)
checks = [
    (dml.clip(x, -1.0, 1.0) == np.clip(x, -1.0, 1.0)).all(),
    (dml.clip(i, -2, 2) == np.clip(i, -2, 2)).all(),
    (dml.relu(x.reshape(1, 101)) == np.maximum(x, 0).reshape(1, 101)).all(),
    (dml.argmax(x.reshape(101, 1), 0) == np.argmax(x.reshape(101, 1), 0, keepdims=True)).all(),
    (dml.argmax(m, 1) == np.argmax(m, 1, keepdims=True)).all(),
    dml.reduce(x, "SUM", keepdims=False) == np.float32(0),  # linspace's halves cancel exactly
    (dml.reduce(x.reshape(1, 101), "AVERAGE", 1) == 0).all(),
    (dml.reduce(i.astype(np.float32), "L1", 0) == np.abs(i).sum(0, keepdims=True)).all(),
]
print(len(compiled))
print(all(checks))
dml.threshold(x, 0.5)  # an operator left unwarmed: it compiles, so the count above can tell
print(len(compiled))
"""


def _run(args: list[str], root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, cache.ENV_CACHE_DIR: str(root), "OPENDML_CPU_KERNELS": "numba", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=HANG_SECONDS)


def test_no_target_is_every_operator_with_every_type_of_its_newest_row() -> None:
    targets = warm.parse_targets([])
    assert [op.schema.name for op, _ in targets] == [op.schema.name for op in OPERATORS]
    for op, types in targets:
        newest = max(op.schema.rows, key=lambda row: row.level)
        typed = 0 if op.api is None else op.api.typed  # IF: ATensor's types (its ConditionTensor is UINT8)
        assert set(types) == set(newest.types[op.schema.inputs[typed].name]) and types


def test_targets_name_operators_as_opendml_support_does_and_their_types() -> None:
    (clip, types), (argmax, every) = warm.parse_targets(["ELEMENT_WISE_CLIP:FLOAT32,float16", "argmax"])
    assert clip.schema.name == "ELEMENT_WISE_CLIP" and types == (DataType.FLOAT32, DataType.FLOAT16)
    assert argmax.schema.name == "ARGMAX" and DataType.INT8 in every and DataType.FLOAT32 in every


@pytest.mark.parametrize(("target", "message"), [
    ("ELEMENT_WISE_CLIP:FLOAT64", "ELEMENT_WISE_CLIP's InputTensor.DataType must be one of "),
    ("ELEMENT_WISE_CLIP:", "ELEMENT_WISE_CLIP's InputTensor.DataType must be one of "),
    ("NO_SUCH_OPERATOR", "OPERATOR must be one of ELEMENT_WISE_CLIP, "),
])
def test_a_bad_target_is_one_line_and_exit_status_2(target: str, message: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["cache", "warm", "relu", target]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("opendml cache warm: ") and message in captured.err
    assert captured.err.count("\n") == 1


@pytest.mark.slow  # compiles about 60 kernels
def test_warm_runs_every_operator_on_its_first_and_last_type(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each operator's warm-up call works on its newest row's types (whichever kernels this process runs)."""
    monkeypatch.setenv(cache.ENV_CACHE_DIR, str(tmp_path))
    targets = [(op, types[:1] + types[-1:]) for op, types in warm.parse_targets([])]
    lines: list[str] = []
    warm.warm(targets, Device("cpu"), lines.append)
    assert [line.split(":")[0] for line in lines] == [op.schema.name for op, _ in targets]


@NUMBA
def test_after_warm_a_first_call_compiles_nothing(tmp_path: Path) -> None:
    root = tmp_path / "cache root"
    warmed = _run(["-m", "opendml", "cache", "warm", "ELEMENT_WISE_CLIP:FLOAT32,INT32", "ARGMAX:FLOAT32,INT16",
                   "relu:float32", "reduce:float32"], root)
    assert warmed.returncode == 0, warmed.stderr
    lines = warmed.stdout.splitlines()
    assert lines[0] == f"compiling into {root / ('kernels-' + cache.current_fingerprint())}"
    assert [line.split(" (")[0] for line in lines[1:]] == [
        "ELEMENT_WISE_CLIP: FLOAT32, INT32", "ARGMAX: FLOAT32, INT16", "ACTIVATION_RELU: FLOAT32", "REDUCE: FLOAT32"]
    first = _run(["-c", FIRST_CALLS], root)
    assert first.returncode == 0, first.stderr
    warm_calls, right, with_unwarmed = first.stdout.split()
    assert (warm_calls, right) == ("0", "True") and int(with_unwarmed) > 0

