"""A kernel compiled rather than loaded from a cache says so: one INFO record on the ``opendml`` logger as the
compile starts, none for a call the caches serve; ``opendml dispatch -v 1`` and ``opendml onnx -v`` print
them as they happen."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import opendml as dml
from opendml.backends import cpu_kernels
from opendml.kernels import notices
from tests.limits import HANG_SECONDS

NUMBA = pytest.mark.skipif(not cpu_kernels.numba_available(), reason="Numba is not installed (the opendml[fast] extra)")
ROOT = Path(__file__).resolve().parent.parent
NOTICE = "compiling kernels for {}: first use, cached afterwards"

# A fresh process on a given kernel cache: one CLIP, its opendml log records printed one per line.
CHILD = """
import logging, sys
import numpy as np, opendml as dml
records = []
handler = logging.Handler()
handler.emit = records.append
logging.getLogger("opendml").addHandler(handler)
logging.getLogger("opendml").setLevel(logging.INFO)
x = np.linspace(-3, 3, 15, dtype=np.float32).reshape(3, 5)
assert (dml.clip(x, -1, 2) == np.clip(x, -1, 2)).all()
for r in records:
    print(r.levelname, r.name, r.getMessage())
"""


def _child(code: str, cache_root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENDML_CACHE_DIR": str(cache_root), "OPENDML_CPU_KERNELS": "numba",
           "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, *(["-c", code] if code else []), *args], env=env, capture_output=True,
                          text=True, timeout=HANG_SECONDS)


@NUMBA
def test_a_cold_compile_is_one_notice_and_a_warm_process_none(tmp_path: Path) -> None:
    cold = _child(CHILD, tmp_path / "cache")
    assert cold.returncode == 0, cold.stderr
    assert cold.stdout.splitlines() == [f"INFO opendml.compile {NOTICE.format('ELEMENT_WISE_CLIP FLOAT32 [3, 5]')}"]
    warm = _child(CHILD, tmp_path / "cache")  # the same kernels, now in the disk cache
    assert warm.returncode == 0, warm.stderr
    assert warm.stdout == ""


def test_a_call_served_by_this_process_is_silent(caplog: pytest.LogCaptureFixture) -> None:
    x = np.array([[-2.0, 0.5, 4.0]], np.float32)
    dml.clip(x, -1, 1)  # compiled (or loaded) before the capture
    with caplog.at_level(logging.DEBUG, logger="opendml"):
        assert dml.clip(x, -1, 1).tolist() == [[-1.0, 0.5, 1.0]]
        device = dml.Device("cpu")
        desc = dml.TensorDesc(dml.DataType.FLOAT32, [1, 3])
        device.compile_operator(device.create_operator(dml.ElementWiseClipDesc(desc, desc, min=-1.0, max=1.0)))
    assert caplog.records == []


@NUMBA
def test_the_dispatch_command_prints_each_notice_under_v(tmp_path: Path) -> None:
    args = ("-m", "opendml", "dispatch", "--example", "dequantize_clip_argmin", "-v", "1")
    cold = _child("", tmp_path / "cache", *args)
    assert cold.returncode == 0, cold.stderr
    notices_seen = [line for line in cold.stderr.splitlines() if line.startswith("opendml: compiling")]
    assert notices_seen == [f"opendml: {NOTICE.format(what)}" for what in (
        "ELEMENT_WISE_DEQUANTIZE_LINEAR UINT8 [4, 6]", "ELEMENT_WISE_CLIP FLOAT32 [4, 6]", "ARGMIN FLOAT32 [4, 6]")]
    quiet = _child("", tmp_path / "other", *args[:-2])  # without -v: nothing on stderr
    assert quiet.returncode == 0 and quiet.stderr == ""


# --- the mechanism ----------------------------------------------------------------------------------------------


def test_a_step_gives_one_notice_however_many_kernels_it_compiles(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="opendml"):
        with notices.compiling("ARGMIN FLOAT32 [4, 6]") as step:
            with notices.compiling(lambda: pytest.fail("an inner step is not named")):  # a graph's operators
                notices.compile_started("rows_kernel")
            notices.compile_started("combine")
        with notices.compiling("ELEMENT_WISE_CLIP FLOAT32 [2]"):
            pass  # served by the caches: nothing
    assert step.compiled == 2
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.INFO, NOTICE.format("ARGMIN FLOAT32 [4, 6]")),
        (logging.DEBUG, caplog.records[1].getMessage())]
    assert caplog.records[1].getMessage().startswith("compiled 2 kernels for ARGMIN FLOAT32 [4, 6] in ")
    assert notices.current() is None


def test_outside_a_step_each_compile_names_its_kernel(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="opendml"):
        notices.compile_started("elementwise_0123")
    assert [r.getMessage() for r in caplog.records] == [NOTICE.format("elementwise_0123")]


def test_a_compile_a_hidden_cache_may_serve_is_noticed_only_while_it_lasts(caplog: pytest.LogCaptureFixture) -> None:
    noticed = threading.Event()

    ours = ("ELEMENT_WISE_CLIP FLOAT16 [8]", "ELEMENT_WISE_CLIP FLOAT32 [8]")

    class Signal(logging.Handler):  # this test's notices only: a background compile may log beside them
        def emit(self, record: logging.LogRecord) -> None:
            if record.getMessage() == NOTICE.format(ours[0]):
                noticed.set()

    # On the root logger, after caplog's handler: a record reaches caplog before the event wakes this thread (on
    # "opendml" the event was set first, and a loaded machine could read caplog before the timer's thread wrote it).
    signal = Signal()
    logging.getLogger().addHandler(signal)
    try:
        with caplog.at_level(logging.INFO, logger="opendml"):
            with notices.compiling("ELEMENT_WISE_CLIP FLOAT16 [8]"), notices.slow("clip.cu", seconds=0.0):
                assert noticed.wait(HANG_SECONDS)  # still compiling when the timer fired
            with notices.compiling("ELEMENT_WISE_CLIP FLOAT32 [8]"), notices.slow("clip.cu", seconds=HANG_SECONDS):
                pass  # done long before: silent
    finally:
        logging.getLogger().removeHandler(signal)
    assert [r.getMessage() for r in caplog.records if any(name in r.getMessage() for name in ours)] == [
        NOTICE.format(ours[0])]


def test_shown_on_stderr_prints_info_records_while_inside_only(capsys: pytest.CaptureFixture[str]) -> None:
    logger = logging.getLogger("opendml")
    level, handlers = logger.level, list(logger.handlers)
    with notices.shown_on_stderr():
        notices.compile_started("k0")
    notices.compile_started("k1")
    with notices.shown_on_stderr(False):
        notices.compile_started("k2")
    assert capsys.readouterr().err == f"opendml: {NOTICE.format('k0')}\n"
    assert logger.level == level and logger.handlers == handlers
