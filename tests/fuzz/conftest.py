"""Reports how many fuzz examples ran: a line per family at the end of the session, and a JSON file.

The file is ``$OPENDML_FUZZ_REPORT`` when set, else ``opendml-fuzz-counts.json`` in the system's
temporary folder (never in the checkout).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import tempfile
import warnings
from pathlib import Path

import pytest

from .settings import FAILURES, totals

REPORT_ENV = "OPENDML_FUZZ_REPORT"

# The ONNX cases import onnx: without it, their doctest collection is skipped too (test_fuzz_onnx.py skips).
collect_ignore = [] if importlib.util.find_spec("onnx") else ["onnx_cases.py"]

# Hypothesis imports this module to report a failing example; where libcst is installed that import
# warns (DeprecationWarning from mypy_extensions), which pytest's filterwarnings = error would turn into
# an internal error hiding the failure itself. Imported here once, quietly.
with warnings.catch_warnings(), contextlib.suppress(ImportError):
    warnings.simplefilter("ignore", DeprecationWarning)
    import hypothesis.extra._patching  # noqa: F401


def report_path() -> Path:
    return Path(os.environ.get(REPORT_ENV) or Path(tempfile.gettempdir()) / "opendml-fuzz-counts.json")


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Failures recorded under OPENDML_FUZZ_KEEP_GOING fail the session."""
    if FAILURES and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    report: dict[str, object] = dict(totals())
    if not report:
        return
    if FAILURES:
        terminalreporter.section("opendml fuzz: failure classes (OPENDML_FUZZ_KEEP_GOING)")
        for key, failure in sorted(FAILURES.items(), key=lambda item: -item[1].count):
            terminalreporter.write_line(f"{failure.count} x {key}")
            terminalreporter.write_line(f"    example: {failure.example[:1500]}")
            terminalreporter.write_line(f"    message: {failure.message[:600]}")
        report["failures"] = {key: vars(failure) for key, failure in FAILURES.items()}
    terminalreporter.section("opendml fuzz: examples run")
    for family, counts in totals().items():
        total = counts["total"]
        assert isinstance(total, dict)
        details = ", ".join(f"{k} {v}" for k, v in total.items() if k != "examples")
        terminalreporter.write_line(f"{family}: {total.get('examples', 0)} examples ({details})")
    path = report_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, indent=1) + "\n")
    except OSError as error:
        terminalreporter.write_line(f"counts not written to {path}: {error}")
        return
    terminalreporter.write_line(f"counts written to {path}")
