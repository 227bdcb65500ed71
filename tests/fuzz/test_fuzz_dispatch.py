"""Fuzzing ``opendml dispatch``: any model ends in exit status 0 or 2, one error line, no stray file.

Each mutated model (``models``) runs in a fresh sandbox (``sandbox``) through the real command: in
this process through ``opendml.cli.main`` for most light models, in a subprocess
(``python -m opendml dispatch``, a memory cap and a timeout) for some light models and every heavy
one. Whatever the model: the exit status is 0 or 2; nothing prints a traceback; a failure prints
exactly one line on stderr, starting ``opendml dispatch: error:``, and leaves no file behind, anywhere;
a success writes only inside the output folder.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Iterator
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from opendml.cli import main
from tests.limits import HANG_SECONDS

from .models import CWD, MODEL_DIR, OUTPUT, Model, models, render
from .sandbox import changes, make_sandbox, snapshot
from .settings import examples, fuzz_settings, judging, note, record

FAMILY = "dispatch"
REPO = Path(__file__).resolve().parents[2]
MEMORY_CAP = 3 << 30  # bytes of address space for a subprocess (Numba's compiler maps about 0.5 GiB)
FILE_CAP = 256 << 20  # the largest file a subprocess may write
IN_PROCESS_SECONDS = HANG_SECONDS  # a light model runs in well under a second warm; this is for a hang only


@contextlib.contextmanager
def alarm(seconds: int) -> Iterator[None]:
    """Raise TimeoutError in this thread after ``seconds`` (a light model that hangs is a finding)."""
    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"the model ran longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run_in_process(args: list[str], cwd: Path) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``opendml.cli.main``; an exception escaping it is a traceback."""
    out, err = io.StringIO(), io.StringIO()
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), alarm(IN_PROCESS_SECONDS):
            try:
                code: object = main(args)
            except SystemExit as exit_:
                code = exit_.code
            except Exception:  # reported as the traceback it would print
                err.write(traceback.format_exc())
                code = 1
    finally:
        os.chdir(previous)
    if code is None:
        code = 0
    return (code if isinstance(code, int) else 1), out.getvalue(), err.getvalue()


def limit_resources() -> None:
    """In the subprocess, before it starts: cap its memory and the size of files it writes."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_CAP, FILE_CAP))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_subprocess(args: list[str], cwd: Path, timeout: float) -> tuple[int, str, str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    try:
        done = subprocess.run([sys.executable, "-m", "opendml", *args], cwd=cwd, env=env, capture_output=True,
                              timeout=timeout, preexec_fn=limit_resources, check=False)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"opendml dispatch ran longer than {timeout:.0f} s") from None
    return done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")


def check_model(model: Model, through_subprocess: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="opendml-fuzz-") as folder:
        root = Path(folder).resolve()
        make_sandbox(root)
        path = root / MODEL_DIR / "model.json"
        data = render(model, root)
        path.write_bytes(data)
        before = snapshot(root)
        args = ["dispatch", str(path), "--output-path", str(root / OUTPUT), "--backend", "cpu", *model.options]
        if through_subprocess:
            # The limit finds a hang, never slowness (tests/limits.py): Python's start, and on an empty kernel
            # cache the compilation of the model's kernels, take seconds, more on a busy machine. Beyond that,
            # reading a model is linear in its size (a few milliseconds per 64 KiB), and a resource the model
            # declares is filled, run over and printed (printing takes about 40 s per GB of FLOAT32 values):
            # linear work the model asked for, allowed ten times over. Beyond the address-space cap nothing
            # can be filled, so no more time is due.
            timeout = HANG_SECONDS + len(data) / 6553.6 + min(declared_bytes(data), MEMORY_CAP) / 2**20
            code, stdout, stderr = run_subprocess(args, root / CWD, timeout=timeout)
            note(FAMILY, "models", "subprocess runs")
        else:
            code, stdout, stderr = run_in_process(args, root / CWD)
        after = snapshot(root)
    record(FAMILY, "models", f"exit {code}")
    assert "Traceback" not in stdout + stderr, f"a traceback ({_last_line(stderr)}): exit status {code}\n{stderr[-3000:]}"
    assert code in (0, 2), f"exit status {code}, not 0 or 2: {stderr[-2000:]}"
    changed = changes(before, after)
    if code == 2:
        lines = stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("opendml dispatch: error: "), (
            f"a failure must print one line starting 'opendml dispatch: error: '; got {len(lines)} lines: "
            f"{stderr[:1500]!r}")
        assert not changed, f"a failed model left files behind: {changed[:10]}"
    else:
        outside = [p for p in changed if not p.startswith(OUTPUT + "/")]
        assert not outside, f"a model wrote outside its output folder: {outside[:10]}"


def _last_line(text: str) -> str:
    """The exception a traceback ends with, without its particulars."""
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1].split(":")[0].strip() if lines else ""


@fuzz_settings(FAMILY)
@given(model=models(), route=st.integers(0, 7))
def test_dispatch_mutated_models(model: Model, route: int) -> None:
    """Light mutations: in this process, one in eight (and any that sizes a resource hugely) through the
    real command in a subprocess."""
    with judging(FAMILY, "models", model):
        check_model(model, through_subprocess=route == 0 or bool(model.heavy))


def declared_bytes(data: bytes) -> int:
    """The bytes a model's resources declare (sizes, value counts of 8-byte values, offsets); 0 where its
    text is not plain JSON."""
    try:
        resources = json.loads(data).get("resources", {})
    except (ValueError, AttributeError, RecursionError):
        return 0
    total = 0
    for entry in resources.values() if isinstance(resources, dict) else ():
        if not isinstance(entry, dict):
            continue
        values = entry.get("initialValues")
        count = values.get("valueCount", 0) if isinstance(values, dict) else 0
        count = count if isinstance(count, int) else 0
        for number in (entry.get("sizeInBytes", 0), entry.get("initialValuesOffsetInBytes", 0), 8 * count):
            if isinstance(number, int) and not isinstance(number, bool) and number > 0:
                total += number
    return total


@fuzz_settings(FAMILY, share=0.2)
@given(model=models(heavy=True))
def test_dispatch_heavy_models(model: Model) -> None:
    """Huge sizes, deep nesting, slow strings: always in a subprocess, under a memory cap and a timeout."""
    with judging(FAMILY, "heavy models", model):
        check_model(model, through_subprocess=True)


def test_dispatch_fuzz_counts_scale() -> None:
    """The heavy property runs a fifth of the family's examples, and at least three."""
    assert fuzz_settings(FAMILY, share=0.2).max_examples == max(3, examples(FAMILY) // 5)
