"""The end-of-session counts under pytest-xdist: what each worker sends, the controller adds up."""

from __future__ import annotations

from collections import defaultdict
from types import SimpleNamespace

import pytest

from . import report
from .settings import Failure


@pytest.fixture
def controller(monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    """Empty counts, failures and worker tallies in place of the session's own."""
    counts: defaultdict = defaultdict(lambda: defaultdict(lambda: defaultdict(int)))
    failures: dict[str, Failure] = {}
    workers = {"reported": 0, "silent": 0}
    monkeypatch.setattr(report, "COUNTS", counts)
    monkeypatch.setattr(report, "FAILURES", failures)
    monkeypatch.setattr(report, "_workers", workers)
    return SimpleNamespace(counts=counts, failures=failures, workers=workers)


def sent(counts: dict, failures: dict) -> dict:
    return {report.KEY: {"counts": counts, "failures": failures}}


def test_workers_counts_and_failures_add_up(controller: SimpleNamespace) -> None:
    report.merge(sent({"dispatch": {"models": {"examples": 3, "exit 0": 2}}},
                      {"dispatch/models: E": {"count": 2, "example": "long example", "message": "m1"}}))
    report.merge(sent({"dispatch": {"models": {"examples": 4, "exit 2": 4}}, "onnx": {"judged": {"examples": 5}}},
                      {"dispatch/models: E": {"count": 1, "example": "short", "message": "m2"}}))
    assert controller.counts == {"dispatch": {"models": {"examples": 7, "exit 0": 2, "exit 2": 4}},
                                 "onnx": {"judged": {"examples": 5}}}
    assert controller.failures == {"dispatch/models: E": Failure(3, "short", "m2")}  # the shorter example kept
    assert controller.workers == {"reported": 2, "silent": 0}


def test_a_worker_that_sent_nothing_is_counted_as_missing(controller: SimpleNamespace) -> None:
    report.merge(None)  # a crashed worker: no output at all
    report.merge({"exitstatus": 1})  # a worker without this report's hooks
    assert controller.workers == {"reported": 0, "silent": 2}
    assert controller.counts == {}


def test_a_worker_sends_plain_data(controller: SimpleNamespace) -> None:
    controller.counts["functional"]["calls"]["examples"] += 2
    controller.failures["functional/calls: E"] = Failure(1, "x", "y")
    config = SimpleNamespace(workeroutput={})
    report.worker_output(config)  # type: ignore[arg-type]
    assert config.workeroutput[report.KEY] == {
        "counts": {"functional": {"calls": {"examples": 2}}},
        "failures": {"functional/calls: E": {"count": 1, "example": "x", "message": "y"}}}
    assert type(config.workeroutput[report.KEY]["counts"]["functional"]["calls"]) is dict  # execnet sends dicts
