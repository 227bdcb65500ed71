"""opendml.reduce on NumPy arrays of a layout already run goes straight to the kernel (functional/fastpath.py), as
argmin's calls do: the answers against the oracles on new data, the arguments and layouts that key a call apart,
and the calls that still take the ordinary path."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import opendml as dml
from opendml.errors import InvalidArgumentError
from tests.reduce_oracle import oracle_order, oracle_sum
from tests.test_functional_reduction_repeat import spy_on_run

reduce_module = importlib.import_module("opendml.functional.reduce")  # the package's ``reduce`` is the function


@pytest.fixture
def ordinary(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Calls that took the ordinary path (described, bound, executed)."""
    return spy_on_run(monkeypatch, reduce_module)


def test_new_arrays_of_a_seen_layout_skip_the_ordinary_path_and_give_the_oracles_sums(ordinary: list[int]) -> None:
    rng = np.random.default_rng(8)
    for trial in range(5):
        x = (rng.standard_normal((40, 33)) * np.exp2(rng.integers(-30, 30, (40, 33)))).astype(np.float32)
        got = dml.reduce(x, "SUM", 1)
        assert got.shape == (40, 1) and got.dtype == np.float32
        want = np.array([oracle_sum(row, np.float32) for row in x], np.float32).reshape(40, 1)
        assert got.tobytes() == want.tobytes(), trial
    assert len(ordinary) == 1  # the first call only


def test_each_function_axes_type_and_out_is_a_layout_of_its_own(ordinary: list[int]) -> None:
    rng = np.random.default_rng(9)
    x = rng.standard_normal((16, 8)).astype(np.float32)
    dml.reduce(x, "SUM", 1)
    dml.reduce(x, "MAX", 1)  # another function
    dml.reduce(x, "MAX", 0)  # other axes
    dml.reduce(x.astype(np.float16), "MAX", 0)  # another type
    dml.reduce(np.asfortranarray(x), "MAX", 0)  # other strides
    out = np.zeros((1, 8), np.float32)
    assert dml.reduce(x, "MAX", 0, out=out) is out  # an out=
    assert len(ordinary) == 6
    for _ in range(3):
        x = rng.standard_normal((16, 8)).astype(np.float32)
        assert dml.reduce(x, "MAX", 0, out=out) is out
        assert out.ravel().tolist() == [oracle_order(column, True) for column in x.T]
        assert dml.reduce(x, "SUM", 1).ravel().tolist() == [oracle_sum(row, np.float32) for row in x]
    assert len(ordinary) == 6
    assert dml.reduce(x, "SUM", 1, keepdims=False).shape == (16,)  # a dropped axis: the ordinary path
    assert dml.reduce(x, "ARGMAX", 1, output_type="UINT32").dtype == np.uint32  # index functions key apart
    assert len(ordinary) == 8


def test_calls_the_fast_path_cannot_take_take_the_ordinary_path(ordinary: list[int]) -> None:
    """An out= sharing memory with x, an unwriteable out (refused), a type refused for the function."""
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    out = np.zeros((8, 1), np.float32)
    dml.reduce(x, "SUM", 1, out=out)
    dml.reduce(x, "SUM", 1, out=out)
    assert len(ordinary) == 1
    dml.reduce(x, "SUM", 1, out=x[:, :1])  # out inside x: computed apart, then copied (the ordinary path)
    assert x[:, 0].tolist() == [8 * 8 * r + 28 for r in range(8)]
    assert len(ordinary) == 2
    out.flags.writeable = False
    with pytest.raises(InvalidArgumentError, match="out must be writeable"):
        dml.reduce(x, "SUM", 1, out=out)
    with pytest.raises(InvalidArgumentError, match=r"OutputTensor\.DataType"):
        dml.reduce(x, "SUM", 1, output_type="FLOAT16")
    with pytest.raises(InvalidArgumentError, match=r"OutputTensor\.DataType"):
        dml.reduce(x, "SUM", 1, output_type="FLOAT16")  # refused again: never remembered
