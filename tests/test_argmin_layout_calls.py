"""A CPU ARGMIN remembers the call it made for each input layout (merged layout, plan, task table), and runs
it on the arrays of each call: new arrays of a layout seen before are each answered from their own data, and
the remembered calls hold none of them. Expected indices come from NumPy (no NaN, ties made on purpose)."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import opendml as dml
from opendml.backends import cpu_kernels

pytestmark = pytest.mark.skipif(not cpu_kernels.numba_available(),
                                reason="Numba is not installed: the layout calls are the JIT engine's")


def _values(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Small integers as FLOAT32: many ties, so the first index must win."""
    return np.random.default_rng(seed).integers(-5, 5, shape).astype(np.float32)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(("shape", "axes"), [((300, 130), (0,)), ((130, 300), (1,)), ((64, 96), (0, 1)),
                                             ((40, 6, 50), (0, 2))], ids=str)
def test_new_arrays_of_a_layout_seen_before_are_answered_from_their_own_data(
        shape: tuple[int, ...], axes: tuple[int, ...], threads: int) -> None:
    device = dml.Device("cpu", threads=threads)
    for seed in range(4):
        x = _values(shape, seed)
        got = dml.argmin(x, axes, device=device)
        moved = np.moveaxis(x, axes, range(x.ndim - len(axes), x.ndim))  # reduced axes last, in order
        flat = moved.reshape(moved.shape[:x.ndim - len(axes)] + (-1,))
        expected = np.argmin(flat, axis=-1)
        assert np.array_equal(got.reshape(-1), expected.reshape(-1)), seed


def test_a_strided_layout_seen_before_reads_each_new_view() -> None:
    device = dml.Device("cpu", threads=2)
    for seed in range(3):
        base = _values((200, 260), seed)
        view = base[:, ::2]  # every other column
        assert np.array_equal(dml.argmin(view, 0, device=device).reshape(-1), np.argmin(view, axis=0))


def test_remembered_layout_calls_keep_no_array_alive() -> None:
    device = dml.Device("cpu", threads=1)
    x = _values((300, 130), 9)
    dml.argmin(x, 0, device=device)
    dml.argmin(x, 0, device=device)
    ref = weakref.ref(x)
    del x
    gc.collect()
    assert ref() is None
