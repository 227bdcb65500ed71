"""argmin and argmax on NumPy arrays of a layout already run go straight to the kernel (functional/fastpath.py):
their answers against the oracle, the calls the ordinary path still takes, and what is never kept."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import numpy as np
import pytest

import opendml as dml
from opendml.functional import fastpath, reductions
from tests.test_argmin_large import oracle_argmin


def spy_on_run(monkeypatch: pytest.MonkeyPatch, module: Any) -> list[int]:
    """A list that grows by one at each call of ``module._run`` (a call that took the ordinary path: described,
    bound, executed)."""
    calls: list[int] = []
    original = module._run

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, "_run", spy)
    return calls


@pytest.fixture
def ordinary(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Calls that took the ordinary path (described, bound, executed)."""
    return spy_on_run(monkeypatch, reductions)


def special(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Few distinct values (many ties), -0.0 beside 0.0, infinities, NaN, and whole rows of NaN."""
    x = rng.choice(np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan], np.float32), shape)
    x[0] = np.nan
    return x


@pytest.mark.parametrize(("largest", "axes", "direction", "policy"), [
    (False, 1, "INCREASING", "IGNORE"), (False, 0, "DECREASING", "IGNORE"), (True, (0, 1), "INCREASING", "IGNORE"),
    (True, 1, "DECREASING", "PROPAGATE"), (False, None, "INCREASING", "PROPAGATE")])
def test_new_arrays_of_a_seen_layout_skip_the_ordinary_path_and_give_the_oracles_indices(
        largest: bool, axes: Any, direction: str, policy: str, ordinary: list[int]) -> None:
    function = dml.argmax if largest else dml.argmin
    rng = np.random.default_rng(3)
    reduced = (0, 1) if axes is None else (axes if isinstance(axes, tuple) else (axes,))
    for trial in range(6):
        x = special(rng, (37, 29))
        got = function(x, axes, axis_direction=direction, nan_policy=policy)
        want = oracle_argmin(x, reduced, direction, largest, policy == "PROPAGATE")
        assert got.dtype == np.int64 and np.array_equal(got, want), trial
    assert len(ordinary) == 1  # the first call only


def test_out_and_other_arguments_are_layouts_of_their_own(ordinary: list[int]) -> None:
    rng = np.random.default_rng(4)
    x = special(rng, (16, 8))
    out = np.zeros((16, 1), np.uint32)
    for _ in range(3):
        x = special(rng, (16, 8))
        assert dml.argmin(x, 1, output_type="UINT32", out=out) is out
        assert np.array_equal(out, oracle_argmin(x, (1,), "INCREASING"))
    assert len(ordinary) == 1
    dml.argmin(x, 1, output_type="UINT32")  # no out=: another layout
    dml.argmin(x, 1, output_type="UINT32", axis_direction="DECREASING")
    dml.argmin(x.astype(np.float16), 1, output_type="UINT32")
    dml.argmin(np.asfortranarray(x), 1, output_type="UINT32")  # other strides
    assert len(ordinary) == 5
    got = dml.argmin(x, 1, output_type="UINT32", axis_direction="DECREASING")
    assert got.dtype == np.uint32 and np.array_equal(got, oracle_argmin(x, (1,), "DECREASING"))
    assert len(ordinary) == 5


def test_calls_the_fast_path_cannot_take_take_the_ordinary_path(ordinary: list[int]) -> None:
    """return_values, an out= sharing memory with x (computed apart, then copied), a misaligned x, and an
    unwriteable out (refused)."""
    x = np.arange(64, dtype=np.float32).reshape(8, 8)[::-1].copy()
    dml.argmin(x, 1)
    indices, values = dml.argmin(x, 1, return_values=True)
    assert np.array_equal(indices.reshape(-1), np.argmin(x, 1)) and np.array_equal(values.reshape(-1), x.min(axis=1))
    assert len(ordinary) == 2
    apart = np.zeros(16, np.int64)
    dml.argmin(apart.view(np.float32).reshape(8, 4), 1, out=np.zeros((8, 1), np.int64))  # the layout, remembered
    shared = np.random.default_rng(6).permutation(32).astype(np.float32)
    before = shared.reshape(8, 4).copy()
    view = shared.view(np.int64)
    got = dml.argmin(shared.reshape(8, 4), 1, out=view[:8].reshape(8, 1))  # out is x's first 64 bytes
    assert np.array_equal(got.reshape(-1), np.argmin(before, 1)) and len(ordinary) == 4
    raw = np.zeros(8 * 8 * 4 + 1, np.uint8)
    misaligned = raw[1:].view(np.float32).reshape(8, 8)
    misaligned[...] = x
    assert not misaligned.flags.aligned
    assert np.array_equal(dml.argmin(misaligned, 1).reshape(-1), np.argmin(x, 1))
    out = np.zeros((8, 1), np.int64)
    dml.argmin(x, 1, out=out)
    out.flags.writeable = False
    with pytest.raises(dml.OpenDMLError):
        dml.argmin(x, 1, out=out)


def test_a_remembered_layout_keeps_no_array_alive() -> None:
    x = np.random.default_rng(5).standard_normal((32, 32)).astype(np.float32)
    out = np.zeros((1, 32), np.int64)
    dml.argmax(x, 0, out=out)
    dml.argmax(x, 0)
    assert fastpath._direct_runs  # remembered
    refs = [weakref.ref(x), weakref.ref(out)]
    del x, out
    gc.collect()
    assert all(ref() is None for ref in refs)


@pytest.mark.parametrize("remembered, other", [
    (1, True), (1, 1.0), ((1,), (True,)), ("INCREASING", "increasing ")])
def test_arguments_equal_but_of_another_kind_are_not_served_by_a_remembered_call(remembered: Any, other: Any) -> None:
    """A call whose arguments equal a remembered call's under == but differ in kind (True and 1.0 are == 1) is
    validated as a first call: refused where the first would be, never run by the remembered layout's kernel."""
    x = np.arange(20, dtype=np.float32).reshape(4, 5)
    if isinstance(remembered, str):
        dml.argmax(x, 1, axis_direction=remembered)
        dml.argmax(x, 1, axis_direction=remembered)  # now served by the direct path
        assert dml.argmax(x, 1, axis_direction=other).tolist() == [[4]] * 4  # a name is parsed loosely, and right
        return
    dml.argmax(x, remembered)
    dml.argmax(x, remembered)
    with pytest.raises(dml.InvalidArgumentError, match="ARGMAX: Axes"):
        dml.argmax(x, other)
