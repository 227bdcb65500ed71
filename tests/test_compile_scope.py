"""What the first call of an operator compiles on the CPU: the kernels its layout runs, once, and no others.

Numba compiles a function apart for each combination of argument types it meets, array flags included,
and compiles everything a function calls; the first call of an operator should compile only the paths
it runs. Each check runs in a fresh process, whose compiled functions start empty (loading a kernel from
the disk cache counts as compiling it here: it adds the signature all the same), so earlier tests cannot
hide a kernel compiled twice or one compiled for nothing. Compile times themselves are measured by
``benchmarks/compile_time.py``, not here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from opendml.backends import cpu_kernels

pytestmark = pytest.mark.skipif(not cpu_kernels.numba_available(),
                                reason="Numba is not installed: only the fast kernels are compiled")

ROOT = Path(__file__).resolve().parent.parent

# Prints, after each call, how many signatures each kernel of interest was compiled for.
CHILD = """
import json
import sys
import numpy as np
import opendml as dml
from opendml.backends.cpu_kernels import codegen
from opendml.backends.cpu_kernels.argmin.engines import boxes as argmin_boxes
from opendml.backends.cpu_kernels.argmin.engines import columns as argmin_columns
from opendml.backends.cpu_kernels.argmin.engines import rows as argmin_rows
from opendml.graphs import builder as g

def kernels():
    found = {"argmin_rows": argmin_rows.argmin_rows, "argmin_columns": argmin_columns.argmin_columns}
    for name in ("argmin_short_rows", "argmin_long_rows"):
        if hasattr(argmin_rows, name):
            found[name] = getattr(argmin_rows, name)
    for module in codegen._modules.values():
        for name in ("kernel", "kernel_streamed", "driver", "driver_streamed"):
            if hasattr(module, name):
                found[module.__name__ + "." + name] = getattr(module, name)
    return found

def compiled():
    counts = {name: len(f.signatures) for name, f in kernels().items()}
    for module in argmin_boxes._modules.values():  # fused prologues' modules: every function they define
        for name, f in vars(module).items():
            if hasattr(f, "signatures") and getattr(f, "__module__", None) == module.__name__:
                counts["prologue." + name] = counts.get("prologue." + name, 0) + len(f.signatures)
    return counts

def fused(axis, shape=(64, 48)):
    # DEQUANTIZE_LINEAR UINT8 (per-column scale and zero point) -> CLIP -> ARGMIN, compiled and run.
    device = dml.Device("cpu", threads=2)
    graph = dml.Graph(device)
    x = graph.input(0, dml.TensorDesc("UINT8", list(shape)))
    column = dict(sizes=list(shape), strides=[0, 1])
    scale = g.reinterpret(graph.input(1, dml.TensorDesc("FLOAT32", [shape[1]])), **column)
    zero_point = g.reinterpret(graph.input(2, dml.TensorDesc("UINT8", [shape[1]])), **column)
    value = g.argmin(g.clip(g.dequantize_linear(x, scale, zero_point), 0.0, 6.0), [axis])
    compiled = device.compile_graph(graph.graph_desc([value]))
    inputs = [np.arange(shape[0] * shape[1], dtype=np.uint8), np.full(shape[1], 0.5, np.float32),
              np.full(shape[1], 3, np.uint8)]
    out = device.buffer_from(np.zeros(shape[1 - axis], np.int64))
    compiled.execute([device.buffer_from(a) for a in inputs], [out])

calls = {
    "dequantize": lambda: dml.dequantize_linear(np.arange(12, dtype=np.uint8).reshape(3, 4), np.float32(0.5),
                                                np.uint8(3)),
    "clip": lambda: dml.clip(np.ones((3, 4), np.float32), 0.0, 1.0),
    "argmin first axis": lambda: dml.argmin(np.ones((3, 4), np.float32), 0),
    "argmin last axis": lambda: dml.argmin(np.ones((3, 4), np.float32), 1),
    "argmin long rows": lambda: dml.argmin(np.ones((3, 1000), np.float32), 1),
    "argmin strided rows": lambda: dml.argmin(np.ones((3, 1000), np.float32)[:, ::2], 1),
    "threshold streamed": lambda: dml.threshold(np.ones(1 << 23, np.float32), 0.5),
    "fused first axis": lambda: fused(0),
    "fused last axis": lambda: fused(1),
}
seen = {}
for name, call in ((n, calls[n]) for n in sys.argv[1:]):
    before = compiled()
    call()
    seen[name] = {k: n - before.get(k, 0) for k, n in compiled().items() if n - before.get(k, 0)}
print(json.dumps(seen))
"""


SINGLE = ["dequantize", "clip", "argmin first axis", "argmin last axis", "argmin long rows", "argmin strided rows",
          "threshold streamed"]
FUSED = ["fused first axis", "fused last axis"]


def _first_calls(calls: list[str], cache: Path | None = None) -> dict[str, dict[str, int]]:
    """For each first call, in one fresh process: the signatures it added, by kernel. With ``cache``: an
    empty kernel cache, so that the functions a kernel calls are compiled too (a kernel loaded from the
    disk cache brings its callees' code along, and adds no signature to them)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "OPENDML_CPU_KERNELS": "numba"}
    if cache is not None:
        env["OPENDML_CACHE_DIR"] = str(cache)
    done = subprocess.run([sys.executable, "-c", CHILD, *calls], env=env, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def compiled_by_call(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, int]]:
    return {**_first_calls(SINGLE), **_first_calls(FUSED, tmp_path_factory.mktemp("kernels"))}


def _generated(added: dict[str, int], name: str) -> int:
    return sum(n for k, n in added.items() if k.startswith("opendml_generated_") and k.endswith("." + name))


def test_a_broadcast_dequantize_compiles_its_kernel_once(compiled_by_call: dict[str, dict[str, int]]) -> None:
    """The functional API's broadcast scale and zero point reach the kernel as writeable as the caller's
    arrays: the compile step's kernel (run on writeable stand-ins) is the one the call runs."""
    added = compiled_by_call["dequantize"]
    assert _generated(added, "kernel") == 1, added


def test_a_small_call_compiles_no_streaming_or_thread_code(compiled_by_call: dict[str, dict[str, int]]) -> None:
    for call in ("dequantize", "clip"):
        added = compiled_by_call[call]
        assert _generated(added, "kernel") == 1, (call, added)
        for name in ("kernel_streamed", "driver", "driver_streamed"):
            assert _generated(added, name) == 0, (call, name, added)


def test_a_large_output_compiles_the_streaming_kernel_only(compiled_by_call: dict[str, dict[str, int]]) -> None:
    """An output of 32 MiB (``fast.STREAM_MIN_BYTES``) is always written by the streaming kernel: the compile
    step compiles that one, not the plain kernel too."""
    added = compiled_by_call["threshold streamed"]
    assert _generated(added, "kernel_streamed") == 1 and _generated(added, "kernel") == 0, added


def test_a_first_axis_argmin_compiles_the_column_kernel_only(compiled_by_call: dict[str, dict[str, int]]) -> None:
    """The compile step plans the input's description: a one-element stand-in would have taken the rows."""
    assert compiled_by_call["argmin first axis"] == {"argmin_columns": 1}


def test_a_short_row_argmin_compiles_the_short_row_kernel_only(compiled_by_call: dict[str, dict[str, int]]) -> None:
    """Not the walker of longer, strided or many-dimensional rows, which ``argmin_rows`` adds."""
    assert compiled_by_call["argmin last axis"] == {"argmin_short_rows": 1}


def test_a_long_row_argmin_compiles_the_long_row_kernel_only(compiled_by_call: dict[str, dict[str, int]]) -> None:
    """Rows past ROW_BLOCK (logits: [batch, vocabulary]) take one path, not the walker of every layout."""
    assert compiled_by_call["argmin long rows"] == {"argmin_long_rows": 1}


def test_other_row_layouts_compile_the_general_row_kernel(compiled_by_call: dict[str, dict[str, int]]) -> None:
    assert compiled_by_call["argmin strided rows"] == {"argmin_rows": 1}


def test_a_fused_first_axis_argmin_compiles_the_fast_column_task_only(
        compiled_by_call: dict[str, dict[str, int]]) -> None:
    """DEQUANTIZE_LINEAR -> CLIP -> ARGMIN over the first axis (the benchmark's row 2): the column task,
    its fold inline, computing the element with the one ``value`` of the module; not the element-wise
    walker, the scratch-tile tasks, the column engine or a parallel driver."""
    assert compiled_by_call["fused first axis"] == {"prologue.task_fast_columns": 1, "prologue.value": 1}


def test_a_fused_last_axis_argmin_compiles_the_fast_row_task_only(
        compiled_by_call: dict[str, dict[str, int]]) -> None:
    """The same chain over the last axis (row 1), after the first-axis call: the row task and its run
    reduction. Both calls' operands walk the last dimension alike, so they share one module, and ``value``,
    compiled for the columns, is not compiled again."""
    assert compiled_by_call["fused last axis"] == {"prologue.task_fast_rows": 1, "prologue.row_fast": 1}
