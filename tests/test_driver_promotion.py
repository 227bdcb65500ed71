"""When the CPU kernels compile their Numba-parallel drivers (``cpu_kernels.drivers``): a kernel's first
threaded calls run on Python threads, its ``PROMOTE_AFTER``-th compiles the driver, and a driver already in
the kernel cache runs from the first call, loaded and not compiled. Each case is a fresh process (so nothing
is compiled before it) with the program's own setting, not the test suite's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from opendml.backends import cpu_kernels
from tests.limits import HANG_SECONDS

pytestmark = pytest.mark.skipif(not cpu_kernels.numba_available(), reason="the drivers are Numba's (opendml[fast])")

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import json, sys
import numpy as np
from numba.core import event
import opendml as dml
from opendml.backends.cpu_kernels import drivers

compiled = []
class Compiles(event.Listener):
    def on_start(self, ev): pass
    def on_end(self, ev): compiled.append(ev.data["dispatcher"].py_func.__name__)
event.register("numba:compile", Compiles())
launched = []
launch = drivers.launch
drivers.launch = lambda d, args, w: launched.append(d.__name__) or launch(d, args, w)
x = np.arange(1 << 19, dtype=np.float32)
device = dml.Device("cpu", threads=2)
calls = []
for _ in range(int(sys.argv[1])):
    before = len(launched)
    out = dml.clip(x, 100.0, 200.0, device=device)
    assert out[0] == 100.0 and out[150] == 150.0 and out[-1] == 200.0
    calls.append(launched[before:])
print(json.dumps({"calls": calls, "compiled": compiled, "promote_after": drivers.PROMOTE_AFTER}))
"""


def run_child(cache: Path, calls: int) -> dict:
    env = {**os.environ, "OPENDML_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", CHILD, str(calls)], env=env, capture_output=True, text=True,
                          timeout=HANG_SECONDS, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def test_a_driver_is_compiled_on_the_promoting_call_and_loaded_from_the_cache_later(tmp_path: Path) -> None:
    cold = run_child(tmp_path, 5)
    wait = cold["promote_after"]
    assert wait > 1
    assert cold["calls"] == [[]] * (wait - 1) + [["driver"]] * (5 - wait + 1)  # Python threads, then the driver
    assert cold["compiled"].count("driver") == 1
    warm = run_child(tmp_path, 2)  # same cache: the driver is loaded, so it runs from the first call
    assert warm["calls"] == [["driver"], ["driver"]]
    assert warm["compiled"] == []  # kernels and driver all loaded from the cache


def test_a_first_call_compiles_no_driver(tmp_path: Path) -> None:
    once = run_child(tmp_path, 1)
    assert once["calls"] == [[]]
    assert "driver" not in once["compiled"] and "kernel" in once["compiled"]
