"""A functional call repeated on the same arrays runs the call prepared for them (``fastpath._repeated``),
and anything that changed since is noticed: another array, a freed one whose address was reused, a new
layout of the same array object, other scalars, a read-only ``out``. Expected values come from NumPy.
"""

from __future__ import annotations

import gc
import warnings
import weakref
from typing import Any

import numpy as np
import pytest

import opendml as dml
from tests.conftest import CUDA_MISSING

F4 = np.float32


def values(n: int, seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(n) * 2).astype(F4)


def test_a_repeat_on_the_same_arrays_skips_the_checked_paths(checked: list[int]) -> None:
    """At most two calls on the same arrays take a checked path (the first, and where their layout was seen
    before with other arrays, the second): every later one runs the call prepared for them."""
    x, y = values(1024), np.empty(1024, F4)
    for _ in range(2):
        assert dml.clip(x, -1, 1, out=y) is y
        dml.threshold(x, 0.5, scale_bias=(2.0, 0.25), out=y)  # a literal tuple: the same object at each call
    before = len(checked)
    assert before <= 4
    for seed in range(3):  # new data in the same arrays: new results
        x[:] = values(1024, seed + 1)
        assert dml.clip(x, -1, 1, out=y) is y
        assert np.array_equal(y, np.clip(x, F4(-1), F4(1)))
        dml.threshold(x, 0.5, scale_bias=(2.0, 0.25), out=y)
        assert np.array_equal(y, np.maximum(x * F4(2) + F4(0.25), F4(0.5)))
    assert len(checked) == before


def test_arrays_of_a_layout_seen_before_repeat_from_their_second_call(checked: list[int]) -> None:
    seen = values(256)
    dml.clip(seen, -2, 2, out=np.empty(256, F4))  # the layout, remembered with other arrays
    x, y = values(256, 1), np.empty(256, F4)
    for _ in range(5):
        dml.clip(x, -2, 2, out=y)
    assert np.array_equal(y, np.clip(x, F4(-2), F4(2)))
    assert len(checked) == 3  # the first array's call, and these arrays' first two


@pytest.mark.parametrize(("shape", "dtype", "strided"), [
    ((32, 32), F4, False), ((4, 8), np.float16, False), ((3, 5), np.int8, False), ((6, 7), F4, True),
    ((512, 600), F4, False), ((300, 500), np.float16, True)], ids=str)
def test_repeats_of_every_layout(shape: tuple[int, ...], dtype: type, strided: bool) -> None:
    """Flat, N-D, FLOAT16 bits, integers, strided outputs and arrays large enough to be shared out to threads."""
    rng = np.random.default_rng(5)
    base = np.zeros((shape[0], shape[1] * 2), dtype)
    out = base[:, ::2] if strided else base[:, :shape[1]].copy()
    for _ in range(3):
        x = (rng.standard_normal(shape) * 4).astype(dtype)
        for _ in range(2):
            dml.clip(x, -1, 2, out=out)
            assert np.array_equal(out, np.clip(x, dtype(-1), dtype(2)))
            x[...] = (rng.standard_normal(shape) * 4).astype(dtype)
    if strided:
        assert (base[:, 1::2] == 0).all()


@pytest.mark.parametrize("device", [None, "cpu", " CPU ", dml.Device("cpu")], ids=repr)
def test_repeats_on_each_way_of_naming_the_device(device: Any, checked: list[int]) -> None:
    x, y = values(64), np.empty(64, F4)
    for _ in range(2):
        dml.threshold(x, 0.5, out=y, device=device)
    before = len(checked)
    for _ in range(3):
        dml.threshold(x, 0.5, out=y, device=device)
    assert np.array_equal(y, np.maximum(x, F4(0.5)))
    assert len(checked) == before


def test_in_place_repeats_apply_each_time() -> None:
    x = np.array([0.5, -0.25, 3.0, 1.0], F4)
    for _ in range(3):
        dml.threshold(x, -1.0, scale_bias=(2.0, 0.0), out=x)
    assert x.tolist() == [4.0, -1.0, 24.0, 8.0]  # -0.25 -> -0.5 -> -1 -> -1 (the floor)


def test_other_arrays_and_other_scalars_are_not_repeats() -> None:
    x, y, z = values(64), np.empty(64, F4), np.empty(64, F4)
    dml.clip(x, -1, 1, out=y)
    dml.clip(x, -0.5, 0.5, out=y)
    assert np.array_equal(y, np.clip(x, F4(-0.5), F4(0.5)))
    dml.clip(x, -0.5, 0.5, out=z)
    assert np.array_equal(z, y)
    negative = -np.abs(x)
    dml.clip(negative, 0.0, 1.0, out=y)
    dml.clip(negative, -0.0, 1.0, out=y)  # equal to 0.0, but not the same bound: -0.0 comes out
    assert np.signbit(y).all() and (y == 0).all()
    dml.clip(negative, 0.0, 1.0, out=y)
    assert not np.signbit(y).any()
    lo = float(np.float64(-0.25))  # a new float object of the value of the one before: the same answer
    for _ in range(2):
        dml.clip(x, lo + 0.0, 1, out=y)
        assert np.array_equal(y, np.clip(x, F4(-0.25), F4(1)))


def test_a_new_dtype_of_the_same_array_object_is_not_a_repeat() -> None:
    x, y = np.array([-3, 0.5, 2, 1e-45], F4), np.empty(4, F4)
    dml.clip(x, -1, 1, out=y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # NumPy 2.5 deprecates setting dtype
        x.dtype = y.dtype = np.dtype(np.int32)  # the same objects, the same memory, now integers
    x[:] = [-5, 0, 5, 7]
    dml.clip(x, -1, 1, out=y)
    assert y.tolist() == [-1, 0, 1, 1]


def test_a_new_shape_or_strides_of_the_same_array_object_is_not_a_repeat() -> None:
    base = np.arange(16, dtype=F4) - 8
    x, y = base[:8], np.zeros(16, F4)
    out = y[:8]
    dml.clip(x, -2, 2, out=out)
    y[:] = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # NumPy 2.4 deprecates setting strides
        x.strides = out.strides = (8,)  # every other element of 16, in place
    dml.clip(x, -2, 2, out=out)
    assert np.array_equal(y[::2], np.clip(base[::2], -2, 2)) and (y[1::2] == 0).all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # NumPy 2.5 deprecates setting shape
        x.shape = out.shape = (2, 4)
    x[:] = 9
    dml.clip(x, -2, 2, out=out)
    assert (y[::2] == 2).all() and (y[1::2] == 0).all()


def test_a_read_only_out_is_refused_on_a_repeat() -> None:
    x, y = values(16), np.empty(16, F4)
    dml.clip(x, -1, 1, out=y)
    y.flags.writeable = False
    with pytest.raises(dml.OpenDMLError, match=r"^ELEMENT_WISE_CLIP: out must be writeable; got a read-only array\.$"):
        dml.clip(x, -1, 1, out=y)


def test_a_freed_array_whose_address_is_reused_is_not_a_repeat() -> None:
    """Entries hold their arrays weakly: arrays made where freed ones lay (the same ``id``s), of the same
    layout but overlapping each other, are new, and their overlap is handled (computed apart, then copied)."""
    base1, base2 = np.zeros(40, F4), np.zeros(40, F4)
    x, y = base1[:32], base2[:32]
    x[:] = np.arange(32)
    dml.clip(x, -1, 100, out=y)
    ids = id(x), id(y)
    del y, x, base1  # freed in this order, CPython's allocator hands the slots out again in the reverse one
    base = np.arange(33, dtype=F4)
    a, b = base[:32], base[1:]  # b is a shifted by one element: writing b[i] overwrites a[i + 1]
    if (id(a), id(b)) != ids:
        pytest.skip("the allocator placed the new arrays elsewhere")
    assert dml.clip(a, -1, 100, out=b) is b
    assert np.array_equal(base, np.concatenate([[0], np.arange(32)]).astype(F4))


@pytest.mark.parametrize("kind", ["numpy", pytest.param("cupy", marks=pytest.mark.skipif(
    CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}"))])
def test_remembering_keeps_no_array_alive(kind: str) -> None:
    x, y = values(1024), np.empty(1024, F4)
    if kind == "cupy":
        import cupy

        x, y = cupy.asarray(x), cupy.asarray(y)
    for _ in range(2):
        dml.clip(x, -1, 1, out=y)
        dml.threshold(x, 0.0, out=x)
    refs = weakref.ref(x), weakref.ref(y)
    del x, y
    gc.collect()
    assert [r() for r in refs] == [None, None]
