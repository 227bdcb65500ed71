"""``opendml dispatch``'s timing modes end to end, in process: ``-i`` executes one recorded command list per
iteration, ``-r`` records the dispatch that many times into that list (docs/dispatch.md).

Expected values are computed here with NumPy; the lists executed are seen through a spy on the queue.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from dispatch_helpers import assert_printed, printed, write_model

from opendml import cli
from opendml.recording import BindingTable, CommandQueue

X = [-3.0, -1.5, -0.25, 0.0, 0.25, 1.5, 3.0, 0.125]


def model(desc: dict[str, Any], bindings: dict[str, str], op: str = "DML_OPERATOR_ELEMENT_WISE_THRESHOLD",
          ) -> dict[str, Any]:
    return {"resources": {"x": {"initialValuesDataType": "FLOAT32", "initialValues": X},
                          "y": {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 8, "value": 0}}},
            "dispatchables": {"op": {"type": op, "desc": {
                "InputTensor": {"DataType": "FLOAT32", "Sizes": [8]},
                "OutputTensor": {"DataType": "FLOAT32", "Sizes": [8]}, **desc}}},
            "commands": [{"type": "dispatch", "dispatchable": "op", "bindings": bindings},
                         {"type": "print", "resource": "x"}, {"type": "print", "resource": "y"}]}


# Doubling in place: each dispatch doubles every element at least -100, so the values tell how many ran.
DOUBLING = model({"ScaleBias": {"Scale": 2, "Bias": 0}, "Min": -100}, {"InputTensor": "x", "OutputTensor": "x"})
# x -> y, CLIP with ScaleBias: the same answer however many times it runs.
CLIPPING = model({"ScaleBias": {"Scale": 2, "Bias": 0.5}, "Min": -1, "Max": 2}, {"InputTensor": "x", "OutputTensor": "y"},
                 "DML_OPERATOR_ELEMENT_WISE_CLIP")


@pytest.fixture
def executed(monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    """The dispatch count of each list of each ``execute_command_lists`` call."""
    calls: list[list[int]] = []
    original = CommandQueue.execute_command_lists

    def spy(self: CommandQueue, lists: Any) -> None:
        calls.append([work.dispatch_count for work in lists])
        original(self, lists)

    monkeypatch.setattr(CommandQueue, "execute_command_lists", spy)
    return calls


def dispatch(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: dict[str, Any], *args: str) -> str:
    status = cli.main(["dispatch", str(write_model(tmp_path / "m.json", content)), "--backend", "cpu", *args])
    out, err = capsys.readouterr()
    assert status == 0, err
    return out


def test_each_iteration_executes_one_list_of_repeat_dispatches(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               executed: list[list[int]]) -> None:
    out = dispatch(tmp_path, capsys, DOUBLING, "-i", "4", "-r", "3")
    assert executed == [[3]] * 4
    x = np.array(X, np.float32)
    for _ in range(12):  # 4 iterations of 3 dispatches
        x = np.maximum(x * np.float32(2), np.float32(-100))
    assert_printed(out, "x", x)
    assert printed(out, "x")[1] == -100 and printed(out, "x")[5] == 1.5 * 4096


def test_one_binding_table_for_all_iterations(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Bindings are bound (and checked) once per dispatch command, outside the timed iterations."""
    bound: list[str] = []
    original = BindingTable.bind_inputs

    def spy(self: BindingTable, bindings: object) -> None:
        bound.append(self.name)
        original(self, bindings)

    monkeypatch.setattr(BindingTable, "bind_inputs", spy)
    dispatch(tmp_path, capsys, CLIPPING, "-i", "5", "-r", "2")
    assert len(bound) == 1


def test_a_repeated_list_gives_the_answer_of_one_dispatch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    once = dispatch(tmp_path, capsys, CLIPPING)
    repeated = dispatch(tmp_path, capsys, CLIPPING, "-i", "3", "-r", "7")
    expected = np.clip(np.array(X, np.float32) * np.float32(2) + np.float32(0.5), -1, 2)
    assert_printed(once, "y", expected)
    assert_printed(repeated, "y", expected)
    assert_printed(repeated, "x", np.array(X))  # the input is untouched


def test_a_graph_repeated_gives_the_answer_of_one_dispatch(capsys: pytest.CaptureFixture[str],
                                                          executed: list[list[int]]) -> None:
    """DEQUANTIZE_LINEAR -> CLIP -> ARGMIN as one graph: the list of 5 graph dispatches leaves what one does."""
    assert cli.main(["dispatch", "--example", "dequantize_clip_argmin_graph", "--backend", "cpu"]) == 0
    once = capsys.readouterr().out
    assert cli.main(["dispatch", "--example", "dequantize_clip_argmin_graph", "--backend", "cpu", "-i", "2",
                     "-r", "5"]) == 0
    repeated = capsys.readouterr().out
    assert executed == [[1], [5], [5]]
    resources = [line for line in once.splitlines() if line.startswith("Resource ")]
    assert len(resources) == 2 and resources == [line for line in repeated.splitlines() if line.startswith("Resource ")]
    q = np.array([90, 200, 128, 255, 140, 10, 130, 129, 131, 127, 126, 132, 0, 255, 64, 192, 32, 224,
                  160, 96, 120, 136, 100, 156], np.float32).reshape(4, 6)
    clipped = np.clip((q - 128) * np.float32(0.25), -8, 8)
    assert_printed(repeated, "x", clipped.reshape(-1))
    assert_printed(repeated, "index", np.argmin(clipped, axis=1))


SUMMARY = re.compile(r"^Dispatch 'op': (\d+) iterations, \d+\.\d{4} ms median \(CPU\)$")
STATS = re.compile(r"^CPU Timings \((Cold|Hot)\) {1,2}: (\d+) samples, (\d+\.\d{4}) ms average, (\d+\.\d{4}) ms min, "
                   r"(\d+\.\d{4}) ms median, (\d+\.\d{4}) ms max$")
ITERATION = re.compile(r"^iteration (\d+): (\d+\.\d{4}) ms \(CPU\)$")


def test_summary_line_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = dispatch(tmp_path, capsys, CLIPPING, "-i", "3", "-r", "4").splitlines()
    assert lines[0] == "Running on 'cpu' at feature level 6_4"
    match = SUMMARY.match(lines[1])
    assert match is not None and match[1] == "3", lines[1]
    assert not any(line.endswith("(GPU)") for line in lines)


def test_statistics_and_iterations_format(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = dispatch(tmp_path, capsys, CLIPPING, "-i", "6", "-w", "2", "-r", "10", "-v", "2").splitlines()
    assert lines[1].startswith("Initialize 'op': ") and lines[1].endswith(" ms")
    assert lines[2] == "Dispatch 'op': 6 iterations"
    stats = [STATS.match(line) for line in lines[3:5]]
    assert [(m[1], m[2]) for m in stats if m is not None] == [("Cold", "2"), ("Hot", "4")]
    for m in stats:
        assert m is not None
        average, low, median, high = (float(v) for v in m.groups()[2:])
        assert low <= median <= high and low <= average <= high
    assert lines[5] == "The timings of each iteration:"
    iterations = [ITERATION.match(line) for line in lines[6:12]]
    assert [int(m[1]) for m in iterations if m is not None] == list(range(6))


def test_binding_errors_are_reported_at_the_binding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Bound into a table before anything runs: a bad binding names its JSON path and resource, and no
    dispatch runs."""
    bad = model({"Min": 0}, {"InputTensor": "x", "OutputTensor": {"name": "y", "elementOffset": 2}})
    status = cli.main(["dispatch", str(write_model(tmp_path / "m.json", bad)), "--backend", "cpu", "-r", "3"])
    out, err = capsys.readouterr()
    assert status == 2
    assert err == ("opendml dispatch: error: commands[0].bindings.OutputTensor: resource 'y' (32 bytes) from byte 8: "
                   "ELEMENT_WISE_THRESHOLD: OutputTensor.Offset must be a non-negative multiple of 16; got 8.\n")
    assert "Dispatch 'op'" not in out
