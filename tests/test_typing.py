"""The public API as type checkers see it: the declared functions' generated stub is current, and realistic user
code (tests/typing/user_code.py) passes ``mypy --strict`` and runs."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from opendml.functional import declared_stub
from tests.limits import HANG_SECONDS

ROOT = Path(__file__).resolve().parent.parent
USER_CODE = ROOT / "tests" / "typing" / "user_code.py"

# opendml as an installed package is to mypy: followed for its types, its own errors not reported (opendml is
# checked with the project's configuration, not --strict); nothing else from pyproject.toml applies to users.
CONFIG = "[mypy]\nstrict = True\n\n[mypy-opendml.*]\nfollow_imports = silent\n"


def test_the_declared_functions_stub_is_current() -> None:
    """Fails after a declaration changes until ``python -m opendml.functional.declared_stub`` is run."""
    assert declared_stub.PATH.read_text() == declared_stub.render(), (
        f"{declared_stub.PATH.name} is stale: run python -m opendml.functional.declared_stub")


def test_the_stub_declares_every_declared_function_as_made() -> None:
    import opendml

    text = declared_stub.PATH.read_text()
    for name in ("relu", "clip", "threshold", "is_nan", "round"):
        assert f"\ndef {name}(" in text and callable(getattr(opendml, name))
    assert "def clip(\n    x: ArrayInput,\n    min: Scalar | None = ...," in text


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed (the opendml[lint] extra)")
def test_user_code_passes_mypy_strict(tmp_path: Path) -> None:
    config = tmp_path / "mypy.ini"
    config.write_text(CONFIG)
    done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir",
                           str(tmp_path / "cache"), "--no-error-summary", str(USER_CODE)], cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                          timeout=HANG_SECONDS)
    assert done.returncode == 0, done.stdout + done.stderr


def test_user_code_runs() -> None:
    done = subprocess.run([sys.executable, str(USER_CODE)], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=HANG_SECONDS)
    assert done.returncode == 0, done.stderr
