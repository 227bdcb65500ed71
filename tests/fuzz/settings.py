"""How many examples each fuzz property runs, and a record of how many ran.

``OPENDML_FUZZ_EXAMPLES=N`` sets hypothesis' ``max_examples`` of every fuzz property;
``OPENDML_FUZZ_EXAMPLES_<FAMILY>=N`` (``DESCRIPTIONS``, ``BINDINGS``, ``FUNCTIONAL``, ``DISPATCH``,
``ONNX``, ``GRAPHS``) sets one family's and wins over the first. Without them each family runs its small CI default.
The examples that actually ran, and how many were accepted or rejected, are printed at the end of the
session and written as JSON (see ``report.py``).

``OPENDML_FUZZ_KEEP_GOING=1`` (for long runs over code with known failures): a failing example does not
stop its property; each failure is counted under a signature (exception type, where opendml raised it,
the message with numbers blanked), the shortest example of each kept, all of them listed at the end,
and the session fails if there was any.
"""

from __future__ import annotations

import re
import traceback
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.errors import HypothesisException

from opendml import settings as opendml_settings

ENV = opendml_settings.FUZZ_EXAMPLES.name
KEEP_GOING_ENV = opendml_settings.FUZZ_KEEP_GOING.name

# Examples per property by default (docs/testing.md): new ones every run, and few, as many compile kernels.
DEFAULTS = {"descriptions": 30, "bindings": 20, "functional": 20, "dispatch": 20, "onnx": 15, "graphs": 4}



@dataclass
class Failure:
    """One kind of failure seen under OPENDML_FUZZ_KEEP_GOING: how often, and its shortest example."""

    count: int
    example: str
    message: str


# "family/test: signature" -> Failure
FAILURES: dict[str, Failure] = {}

# family -> test name -> outcome ("accepted", "rejected", "executed", ...) -> count
COUNTS: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(int)))


def examples(family: str) -> int:
    """max_examples for one family: its own variable, else the general one, else the CI default (a bad value
    stops the session before any test runs, as a command-line mistake does)."""
    try:
        count = opendml_settings.fuzz_examples(family)
    except opendml_settings.SettingError as error:
        raise pytest.UsageError(str(error)) from None
    return DEFAULTS[family] if count is None else count


def fuzz_settings(family: str, share: float = 1.0) -> settings:
    """Hypothesis settings of a fuzz property: new examples every run, no deadline, no example database
    (nothing written to the checkout), and no health check about slow or large generation (the generators are
    deliberately wide).

    ``share``: a slow property runs that fraction of its family's examples (at least three).
    """
    count = examples(family) if share == 1.0 else max(3, int(examples(family) * share))
    return settings(
        max_examples=count,
        deadline=None,
        derandomize=False,  # new examples every run, whatever the profile (the other properties' are fixed)
        database=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
                               HealthCheck.function_scoped_fixture, HealthCheck.large_base_example],
    )


def record(family: str, test: str, outcome: str) -> None:
    """Count an outcome of ``test`` ("accepted", "rejected", "exit 2", ...); ``judging`` counts examples."""
    COUNTS[family][test][outcome] += 1


note = record  # counts within an example: an execution, a subprocess run


def totals() -> dict[str, dict[str, object]]:
    """Per family: the examples of every test summed, and each test's own counts."""
    report: dict[str, dict[str, object]] = {}
    for family, tests in sorted(COUNTS.items()):
        summed: dict[str, int] = defaultdict(int)
        for outcomes in tests.values():
            for outcome, count in outcomes.items():
                summed[outcome] += count
        report[family] = {"total": dict(sorted(summed.items())),
                          "tests": {test: dict(sorted(o.items())) for test, o in sorted(tests.items())}}
    return report


def keep_going() -> bool:
    return opendml_settings.FUZZ_KEEP_GOING.get()


def signature(error: BaseException) -> str:
    """What tells failures apart: the exception (the library's, when the check wrapped one), where opendml
    raised it, and the message's category (the text before its first colon, numbers blanked)."""
    origin = error.__cause__ or error
    frames = traceback.extract_tb(origin.__traceback__)
    where = next((f"{f.filename.rsplit('opendml/', 1)[-1]}:{f.lineno}" for f in reversed(frames)
                  if "/opendml/" in f.filename), "")
    first_line = (str(error).strip().splitlines() or [""])[0]
    category = re.sub(r"0x[0-9a-f]+|\d+", "N", first_line.split(": ")[0])[:160]
    return " ".join(part for part in (type(origin).__name__, where, category) if part)


@contextmanager
def judging(family: str, test: str, example: object) -> Iterator[None]:
    """Run one example's checks, counting it (each call of a test's body, shrinking included); with
    OPENDML_FUZZ_KEEP_GOING, record a failure instead of raising it."""
    COUNTS[family][test]["examples"] += 1
    try:
        yield
    except HypothesisException:
        raise
    except Exception as error:
        if not keep_going():
            raise
        note(family, test, "failed")
        text, message = repr(example), str(error)[:2000]
        failure = FAILURES.setdefault(f"{family}/{test}: {signature(error)}", Failure(0, text, message))
        failure.count += 1
        if len(text) < len(failure.example):
            failure.example, failure.message = text, message
