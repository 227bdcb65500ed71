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
import numpy as np
import opendml as dml
from opendml.backends.cpu_kernels import argmin_columns, argmin_rows, codegen

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
    return {name: len(f.signatures) for name, f in kernels().items()}

calls = {
    "dequantize": lambda: dml.dequantize_linear(np.arange(12, dtype=np.uint8).reshape(3, 4), np.float32(0.5),
                                                np.uint8(3)),
    "clip": lambda: dml.clip(np.ones((3, 4), np.float32), 0.0, 1.0),
    "argmin first axis": lambda: dml.argmin(np.ones((3, 4), np.float32), 0),
    "argmin last axis": lambda: dml.argmin(np.ones((3, 4), np.float32), 1),
    "argmin long rows": lambda: dml.argmin(np.ones((3, 1000), np.float32), 1),
    "argmin strided rows": lambda: dml.argmin(np.ones((3, 1000), np.float32)[:, ::2], 1),
}
seen = {}
for name, call in calls.items():
    before = compiled()
    call()
    seen[name] = {k: n - before.get(k, 0) for k, n in compiled().items() if n - before.get(k, 0)}
print(json.dumps(seen))
"""


@pytest.fixture(scope="module")
def compiled_by_call() -> dict[str, dict[str, int]]:
    """For each first call, in one fresh process: the signatures it added, by kernel."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "OPENDML_CPU_KERNELS": "numba"}
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


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
