"""Reports how many fuzz examples ran: a line per family at the end of the session, and a JSON file.

The file is ``$OPENDML_FUZZ_REPORT`` when set, else ``opendml-fuzz-counts.json`` in the system's
temporary folder (never in the checkout). ``tests/conftest.py`` calls these functions from its hooks (the
only conftest that pytest-xdist's controller loads).

Under pytest-xdist (``-n``) each worker counts the examples it ran; its counts and failures go to the
controller with the worker's results (``worker_output``), which adds them up (``merge``) before printing
the section, so one section and one file still cover the whole session. A worker that ended early (a
crash) sends nothing: the section then says how many workers' counts it is missing.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

from opendml import settings as opendml_settings

from .settings import COUNTS, FAILURES, Failure, totals

REPORT_ENV = opendml_settings.FUZZ_REPORT.name
KEY = "opendml_fuzz"  # the entry of a worker's ``workeroutput`` that holds its counts

_workers = {"reported": 0, "silent": 0}  # at the controller: workers whose counts arrived, and those whose did not


def report_path() -> Path:
    return opendml_settings.FUZZ_REPORT.get() or Path(tempfile.gettempdir()) / "opendml-fuzz-counts.json"


def is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def worker_output(config: pytest.Config) -> None:
    """In an xdist worker: its counts and failures, as plain data, into what it sends the controller."""
    counts = {family: {test: dict(outcomes) for test, outcomes in tests.items()} for family, tests in COUNTS.items()}
    config.workeroutput[KEY] = {"counts": counts,  # type: ignore[attr-defined]
                                "failures": {key: vars(failure) for key, failure in FAILURES.items()}}


def merge(workeroutput: dict[str, Any] | None) -> None:
    """At the controller: add a finished worker's counts and failures to this process's."""
    sent = (workeroutput or {}).get(KEY)
    if sent is None:
        _workers["silent"] += 1
        return
    _workers["reported"] += 1
    for family, tests in sent["counts"].items():
        for test, outcomes in tests.items():
            for outcome, count in outcomes.items():
                COUNTS[family][test][outcome] += count
    for key, fields in sent["failures"].items():
        failure = FAILURES.setdefault(key, Failure(0, fields["example"], fields["message"]))
        failure.count += fields["count"]
        if len(fields["example"]) < len(failure.example):
            failure.example, failure.message = fields["example"], fields["message"]


def session_finish(session: pytest.Session) -> None:
    """Failures recorded under OPENDML_FUZZ_KEEP_GOING fail the session."""
    if is_worker(session.config):
        worker_output(session.config)
    if FAILURES and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The failure classes (under OPENDML_FUZZ_KEEP_GOING) and the examples each family ran, and the file."""
    if is_worker(terminalreporter.config):
        return  # the controller reports for every worker
    report: dict[str, object] = dict(totals())
    if not report and not _workers["silent"]:
        return
    if FAILURES:
        terminalreporter.section("opendml fuzz: failure classes (OPENDML_FUZZ_KEEP_GOING)")
        for key, failure in sorted(FAILURES.items(), key=lambda item: -item[1].count):
            terminalreporter.write_line(f"{failure.count} x {key}")
            terminalreporter.write_line(f"    example: {failure.example[:1500]}")
            terminalreporter.write_line(f"    message: {failure.message[:600]}")
        report["failures"] = {key: vars(failure) for key, failure in FAILURES.items()}
    terminalreporter.section("opendml fuzz: examples run")
    if _workers["silent"]:
        missing = _workers["silent"]
        terminalreporter.write_line(f"incomplete: {missing} of {missing + _workers['reported']} pytest-xdist "
                                    "workers ended without sending their counts; the lines below leave theirs out")
        report["incomplete"] = f"{missing} of {missing + _workers['reported']} workers' counts missing"
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
