"""``opendml dispatch`` end to end: every bundled example, DirectML's own models, files and timing.

Every test runs the real command in a subprocess; expected values are computed here with NumPy.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest
from dispatch_helpers import DATA, assert_printed, median_ms, printed, run_dispatch, write_model

from opendml.dispatch.catalog import examples_dir
from tests.conftest import CUDA_MISSING
from tests.limits import HANG_SECONDS

EXAMPLES = sorted(p.stem for p in examples_dir().glob("*.json"))


def test_every_example_is_tested() -> None:
    """Each bundled example has an end-to-end test below (a new example needs one); the graph examples' are in
    tests/test_dispatch_graphs.py."""
    tested = {"clip", "clip1", "threshold", "dequantize_linear", "argmin", "dequantize_clip_argmin", "clip_timing",
              "dequantize_clip_argmin_graph", "argmax", "quantize_linear", "quantize_dequantize_graph"}
    assert set(EXAMPLES) == tested


def test_no_model_lists_the_examples() -> None:
    result = run_dispatch()
    assert result.returncode == 0, result.stderr
    listed = [line.split()[0] for line in result.stdout.splitlines()[1:]]
    assert listed == EXAMPLES


def test_example_clip(backend: str) -> None:
    result = run_dispatch("--example", "clip", "--backend", backend)
    assert result.returncode == 0, result.stderr
    x = np.arange(-4, 4, dtype=np.float32)
    assert_printed(result.stdout, "x", x)
    assert_printed(result.stdout, "y", np.clip(x * np.float32(0.5) + np.float32(1), 0, 2))
    assert median_ms(result.stdout, "clip")[0] == 1


def test_example_clip1_keeps_integer_bounds_exact(backend: str) -> None:
    result = run_dispatch("--example", "clip1.json", "--backend", backend)
    assert result.returncode == 0, result.stderr
    x = np.array([-2**31, -1000, -5, 0, 5, 2**31 - 2, 2**31 - 1], dtype=np.int64)
    line = next(line for line in result.stdout.splitlines() if line.startswith("Resource 'y': "))
    # Integers print exactly: compare as integers, not through floats.
    assert [int(v) for v in line.split(": ")[1].split(", ")] == np.clip(x, -100, 2147483645).tolist()


def test_example_threshold_in_place_on_float16(backend: str) -> None:
    result = run_dispatch("--example", "threshold", "--backend", backend)
    assert result.returncode == 0, result.stderr
    x = np.array([-2, -0.5, 0, 0.5, 2, 65504, np.inf, -np.inf, np.nan])
    expected = np.where(np.isnan(x), np.nan, np.maximum(x, 0.0))
    assert_printed(result.stdout, "x", expected)


def test_example_dequantize_linear_per_column(backend: str) -> None:
    result = run_dispatch("--example", "dequantize_linear", "--backend", backend)
    assert result.returncode == 0, result.stderr
    q = np.array([[0, 128, 255], [10, 20, 30]])
    scale = np.array([0.1, 0.2, 0.5], dtype=np.float32)
    assert_printed(result.stdout, "x", ((q - 128).astype(np.float32) * scale).reshape(-1))


def test_example_argmin_ties_both_ways(backend: str) -> None:
    result = run_dispatch("--example", "argmin", "--backend", backend)
    assert result.returncode == 0, result.stderr
    m = np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], dtype=np.float32)
    first = [int(np.flatnonzero(row == row.min())[0]) for row in m]
    last = [int(np.flatnonzero(row == row.min())[-1]) for row in m]
    assert first != last  # the example does show a tie
    assert printed(result.stdout, "first").tolist() == first
    assert printed(result.stdout, "last").tolist() == last


def test_example_argmax_ties_and_nan_policy(backend: str) -> None:
    result = run_dispatch("--example", "argmax", "--backend", backend)
    assert result.returncode == 0, result.stderr
    # rows [0.5, 2.5, -1, 2.5], [3, nan, 7, 1], [-2, -2, -5, -3]
    assert printed(result.stdout, "first").tolist() == [1, 2, 0]
    assert printed(result.stdout, "last").tolist() == [3, 2, 1]
    assert printed(result.stdout, "first_nan").tolist() == [1, 1, 0]  # NanPolicy PROPAGATE: the NaN wins


def test_example_quantize_linear_per_column(backend: str) -> None:
    result = run_dispatch("--example", "quantize_linear", "--backend", backend)
    assert result.returncode == 0, result.stderr
    # x / scale: -2, 1, 2.5 (to even: 2), 0.6, 400, -300; plus 128, saturated to UINT8
    assert printed(result.stdout, "q").tolist() == [126, 129, 130, 129, 255, 0]


CHAIN_Q = np.array([[90, 200, 128, 255, 140, 10], [130, 129, 131, 127, 126, 132],
                    [0, 255, 64, 192, 32, 224], [160, 96, 120, 136, 100, 156]])


def test_example_chain_through_intermediate_resources(backend: str) -> None:
    result = run_dispatch("--example", "dequantize_clip_argmin", "--backend", backend)
    assert result.returncode == 0, result.stderr
    x = np.clip((CHAIN_Q - 128) * 0.25, -8, 8)
    assert_printed(result.stdout, "x", x.reshape(-1))
    assert printed(result.stdout, "index").tolist() == [int(np.argmin(row)) for row in x]
    assert [line.split("'")[1] for line in result.stdout.splitlines() if line.startswith("Dispatch")] == [
        "dequantize", "clip", "argmin"]


def test_example_clip_timing_values_and_iterations(tmp_path, backend: str) -> None:
    """The timing example, unchanged but for a writeFile of its output, gives exact values."""
    model = json.loads((examples_dir() / "clip_timing.json").read_text())
    model["commands"].append({"type": "writeFile", "resource": "y", "targetPath": "y.npy"})
    path = write_model(tmp_path / "timing.json", model)
    result = run_dispatch(path, "--backend", backend, "-i", "3", "--output-path", tmp_path)
    assert result.returncode == 0, result.stderr
    assert median_ms(result.stdout, "clip")[0] == 3
    assert ("ms median (GPU)" in result.stdout) == (backend == "cuda")
    n = 8 * 1024 * 1024
    x = np.arange(n, dtype=np.float64) / 1024 - 4096  # exact in float32: 22 significant bits at most
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), np.clip(x, -1000, 1000).astype(np.float32))


# DirectML's own models (DxDispatch/models in microsoft/DirectML), copied unchanged; the expected lines are those
# DxDispatch prints.
@pytest.mark.parametrize(("model", "dispatchable", "line"), [
    ("dml_element_wise_clip.json", "clip", "Resource 'A': -2.5, -2.5, -2, -1, 0, 1, 2, 2.5, 2.5"),
    ("dml_scalar_union_fp16.json", "clip", "Resource 'output': 2, 2, 3, 4, 4"),
    ("dml_element_wise_identity.json", "identity", "Resource 'Out': 12, 14, 16"),  # [1, 2, 3] * 2 + 10
    ("dml_element_wise_add.json", "add", "Resource 'Out': 6, 10, -2"),  # [1, 2, 3] + [5, 8, -5]
])
def test_dxdispatch_models_run_unchanged(model: str, dispatchable: str, line: str, backend: str) -> None:
    result = run_dispatch(DATA / "dxdispatch" / model, "--backend", backend)
    assert result.returncode == 0, result.stderr
    assert line in result.stdout.splitlines()
    assert result.stdout.splitlines()[1].startswith(f"Dispatch '{dispatchable}': 1 iterations, ")


def test_dxdispatch_add1_model_runs_unchanged(backend: str) -> None:
    """DirectML's dml_element_wise_add1.json (ELEMENT_WISE_ADD1 with an ACTIVATION_ELU FusedActivation of Alpha
    0.5): 1 + 5, 2 + 8, 3 - 5, the last through ELU: 0.5 * (exp(-2) - 1) = -0.43233235..."""
    result = run_dispatch(DATA / "dxdispatch" / "dml_element_wise_add1.json", "--backend", backend)
    assert result.returncode == 0, result.stderr
    assert "Resource 'Out': 6, 10, -0.432332" in result.stdout.splitlines()


def test_dxdispatch_model_of_a_missing_operator_is_refused_in_one_line(backend: str, tmp_path) -> None:
    """A model of a DirectML operator opendml lacks (GEMM) is refused before anything runs, in one line naming
    the operator, not with the list of every other one."""
    model = json.loads((DATA / "dxdispatch" / "dml_element_wise_add1.json").read_text())
    model["dispatchables"]["add"]["type"] = "DML_OPERATOR_GEMM"
    (tmp_path / "gemm.json").write_text(json.dumps(model))
    result = run_dispatch(tmp_path / "gemm.json", "--backend", backend)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        "opendml dispatch: error: dispatchables.add.type: must be a DirectML operator opendml implements "
        "(DML_OPERATOR_GEMM is DirectML's but not opendml's; opendml dispatch --schema lists those it "
        "runs); got 'DML_OPERATOR_GEMM'."]


@pytest.mark.parametrize("backend", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}"))])
def test_dxdispatch_reduce_model_runs_unchanged(backend: str) -> None:
    """DirectML's dml_reduce.json: SUM over the last axis of 1..9 as 3 x 3, on each backend."""
    result = run_dispatch(DATA / "dxdispatch" / "dml_reduce.json", "--backend", backend)
    assert result.returncode == 0, result.stderr
    assert "Resource 'output': 6, 15, 24" in result.stdout.splitlines()


def test_installed_script_runs_an_example(tmp_path) -> None:
    """The README's main command: the ``opendml`` script of an installed package."""
    script = shutil.which("opendml")
    if script is None:
        pytest.skip("the opendml script is not on PATH (the package is not installed with pip)")
    result = subprocess.run([script, "dispatch", "--example", "clip", "--backend", "cpu"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=HANG_SECONDS)
    assert result.returncode == 0, result.stderr
    x = np.arange(-4, 4, dtype=np.float32)
    assert_printed(result.stdout, "y", np.clip(x * np.float32(0.5) + np.float32(1), 0, 2))


def _model(resources: dict, desc: dict, commands: list, op: str = "ELEMENT_WISE_CLIP") -> dict:
    return {"resources": resources, "dispatchables": {"op": {"type": op, "desc": desc}}, "commands": commands}


F32_9 = {"DataType": "FLOAT32", "Sizes": [9]}


def test_files_in_and_out(tmp_path, backend: str) -> None:
    """sourcePath (.npy and raw) beside the model; writeFile (.npy and raw) under --output-path."""
    models, out = tmp_path / "models", tmp_path / "out"
    models.mkdir()
    x = np.linspace(-3, 3, 9, dtype=np.float32)
    np.save(models / "x.npy", x)
    x[::-1].tofile(models / "x.bin")
    model = {
        "resources": {
            "a": {"initialValues": {"sourcePath": "x.npy"}},
            "b": {"initialValuesDataType": "FLOAT32", "initialValues": {"sourcePath": "x.bin"}},
            "y": {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 9, "value": 0}},
        },
        "dispatchables": {"clip": {"type": "ELEMENT_WISE_CLIP", "desc": {
            "InputTensor": F32_9, "OutputTensor": F32_9, "Min": -1, "Max": 1.5}}},
        "commands": [
            {"type": "dispatch", "dispatchable": "clip", "bindings": {"InputTensor": "a", "OutputTensor": "y"}},
            {"type": "writeFile", "resource": "y", "targetPath": "sub/a.npy"},
            {"type": "writeFile", "resource": "y", "targetPath": "a3x3.npy", "dimensions": [3, 3]},
            {"type": "dispatch", "dispatchable": "clip", "bindings": {"InputTensor": "b", "OutputTensor": "y"}},
            {"type": "writeFile", "resource": "y", "targetPath": "b.dat"},
        ],
    }
    result = run_dispatch(write_model(models / "m.json", model), "--backend", backend, "--output-path", out,
                          cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    expected = np.clip(x, -1, 1.5)
    a = np.load(out / "sub" / "a.npy")
    assert a.dtype == np.float32 and a.shape == (9,)
    np.testing.assert_array_equal(a, expected)
    np.testing.assert_array_equal(np.load(out / "a3x3.npy"), expected.reshape(3, 3))
    # Raw files hold the whole buffer: 36 bytes here.
    np.testing.assert_array_equal(np.fromfile(out / "b.dat", dtype=np.float32), expected[::-1])
    assert "Resource 'y' written to" in result.stdout


def test_binding_offsets_and_sequences(tmp_path, backend: str) -> None:
    """elementOffset moves a binding; sequences accumulate in the element type (FLOAT16 here)."""
    model = _model(
        {"a": {"initialValuesDataType": "FLOAT16",
               "initialValues": {"valueCount": 16, "valueStart": -2, "valueDelta": 0.3}}},
        {"InputTensor": {"DataType": "FLOAT16", "Sizes": [8]}, "OutputTensor": {"DataType": "FLOAT16", "Sizes": [8]},
         "Min": -0.5, "Max": 0.5},
        [{"type": "dispatch", "dispatchable": "op",
          "bindings": {"InputTensor": "a", "OutputTensor": {"name": "a", "elementOffset": 8}}},
         {"type": "print", "resource": "a"}])
    result = run_dispatch(write_model(tmp_path / "m.json", model), "--backend", backend)
    assert result.returncode == 0, result.stderr
    sequence = [np.float16(-2)]
    for _ in range(15):  # DxDispatch's "value += delta" on half-precision values
        sequence.append(np.float16(np.float32(sequence[-1]) + np.float32(np.float16(0.3))))
    a = np.array(sequence, dtype=np.float16)
    a[8:] = np.clip(a[:8].astype(np.float32), np.float16(-0.5), np.float16(0.5)).astype(np.float16)
    assert_printed(result.stdout, "a", a.astype(np.float64))


def test_timing_options(backend: str) -> None:
    result = run_dispatch("--example", "clip", "--backend", backend, "-i", "5", "-w", "2", "-r", "3", "-v", "2",
                          "--print-commands")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "Dispatch 'clip': 5 iterations" in lines
    assert any(line.startswith("Initialize 'clip': ") for line in lines)
    assert any(line.startswith("CPU Timings (Cold) : 2 samples, ") for line in lines)
    assert any(line.startswith("CPU Timings (Hot)  : 3 samples, ") for line in lines)
    assert sum(line.startswith("iteration ") for line in lines) == 5
    on_gpu = backend == "cuda"  # GPU times from CUDA events, beside the CPU's
    assert any(line.startswith("GPU Timings (Hot)  : 3 samples, ") for line in lines) == on_gpu
    assert sum(line.endswith(" ms (GPU)") for line in lines) == (5 if on_gpu else 0)
    assert lines.count('Command 1: {"type":"print","resource":"x"}') == 1


def test_milliseconds_to_run_keeps_iterating() -> None:
    result = run_dispatch("--example", "clip", "--backend", "cpu", "-t", "100")
    assert result.returncode == 0, result.stderr
    count, median = median_ms(result.stdout, "clip")
    assert count > 1 or median >= 100  # iterations until 100 ms have passed (one, on a machine that slow)


def test_auto_backend_runs_somewhere() -> None:
    result = run_dispatch("--example", "clip")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] in ("Running on 'cpu' at feature level 6_4",
                                             "Running on 'cuda' at feature level 6_4")
