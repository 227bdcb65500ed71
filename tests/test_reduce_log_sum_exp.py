"""REDUCE LOG_SUM_EXP on both CPU kernel modules against its documented definition computed here (the largest
element m, then m + ln S correctly rounded, S the exact sum of the correctly rounded EXP(x - m), by mpmath and
fractions), on edge rows: huge, tiny, -inf, +inf, NaN, all equal, terms that underflow, sums just above 1."""

from __future__ import annotations

import numpy as np
import pytest

import opendml as dml
from opendml.backends import cpu_kernels
from tests import test_reduce
from tests.reduce_oracle import oracle_log_sum_exp
from tests.test_reduce import same

kernels = test_reduce.kernels  # the fixture choosing the CPU kernel module (Numba or NumPy)


oracle = oracle_log_sum_exp

EDGES = [
    [3e38, 3e38, 3e38],  # huge, all equal: m + log(3), rounded back to m
    [3.4e38, -3.4e38],
    [-3e38, -3e38],
    [1e-45, 1e-45, 3e-45],  # tiny: log(3)
    [0.0, -0.0],
    [7.0] * 9,  # all equal: 7 + log(9)
    [-np.inf, 1.0, 2.0],
    [-np.inf, -np.inf],  # every element -inf: -inf
    [np.inf, 1.0],
    [np.inf, -np.inf, 5.0],
    [np.nan, np.inf],
    [1.0, np.nan],
    [0.0, -700.0, -720.0, -745.0, -746.0],  # EXP(x - m) zero
    [0.0, -87.0, -103.0, -103.9, -104.5],  # EXP(x - m) subnormal FLOAT32 values (103), rounded to 0 (104.5)
    [0.0, -30.0],  # S just above 1: ln S about 9.4e-14
    [-0.6931472, -0.6931472],  # m + ln 2 cancels to about 1.9e-9
    [1.0, 1.0, 1.0, 1.0],  # 1 + ln 4
    [-50.0] * 1023 + [0.0],  # many small terms beside 1
    [88.0, 88.7, -88.0],
]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_edge_rows_give_the_definition(kernels: str, dtype: type) -> None:
    width = max(len(row) for row in EDGES)
    for row in EDGES:
        with np.errstate(over="ignore"):
            x = np.array(row, dtype)
        want = oracle(x, dtype)
        got = dml.reduce(x, "LOG_SUM_EXP", keepdims=False)
        assert same(got, want), (row, got, want)
        # the same rows side by side, the reduction along the first axis (a copy of each column's row)
        padded = np.full((width, 3), x[0], dtype)
        padded[:len(row), 1] = x
        padded[len(row):, 1] = x[0]
        column = dml.reduce(padded, "LOG_SUM_EXP", 0, keepdims=False)
        assert same(column[1], oracle(padded[:, 1], dtype)), row


def test_random_rows_on_every_thread_count_against_the_definition(kernels: str) -> None:
    rng = np.random.default_rng(3601)
    x = (rng.standard_normal((40, 300)) * rng.uniform(0.1, 60, (40, 1))).astype(np.float32)
    want = np.array([oracle(row, np.float32) for row in x], np.float32)
    for threads in (1, 2, 3):
        got = dml.reduce(x, "LOG_SUM_EXP", 1, keepdims=False, device=dml.Device(threads=threads))
        assert same(got, want), threads
    t = dml.reduce(np.ascontiguousarray(x.T), "LOG_SUM_EXP", 0, keepdims=False)
    assert same(t, want)


def test_long_rows_cut_between_threads_against_the_definition(kernels: str) -> None:
    """Rows past the length from which a row is cut into segments (2**16): the segments' largest elements combined,
    their terms' accumulators merged; -inf fills most places (no term; the oracle's EXP of it is immediate)."""
    rng = np.random.default_rng(71)
    x = np.full((2, 70001), -np.inf, np.float32)
    for row, scale in zip(x, (1.0, 30.0)):
        places = rng.choice(row.size, 1500, replace=False)
        row[places] = rng.standard_normal(1500) * scale
    x[1, 69999] = 41.5  # the largest in the last segment
    want = np.array([oracle(row, np.float32) for row in x], np.float32)
    for threads in (1, 2, 3):
        device = dml.Device(threads=threads)
        assert same(dml.reduce(x, "LOG_SUM_EXP", 1, keepdims=False, device=device), want), threads
        assert same(dml.reduce(x[1], "LOG_SUM_EXP", 0, keepdims=False, device=device), want[1]), threads


@pytest.mark.skipif(not cpu_kernels.numba_available(), reason="Numba is not installed (the opendml[fast] extra)")
def test_numba_runs_the_compiled_definition_not_the_per_row_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    from opendml.backends.cpu_kernels import accumulations

    monkeypatch.setattr(cpu_kernels, "_chosen", cpu_kernels.load("numba"))

    def refused(*args: object) -> None:
        raise AssertionError("the per-row reference ran")

    monkeypatch.setattr(accumulations, "reduce_reference", refused)
    x = np.array([[1.0, 2.0, 3.0], [-np.inf, 0.0, 0.0]], np.float16)
    got = dml.reduce(x, "LOG_SUM_EXP", 1, keepdims=False, device=dml.Device(threads=1))
    assert same(got, np.array([oracle(row, np.float16) for row in x], np.float16))
