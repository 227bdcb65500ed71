"""The functional fast paths on CuPy arrays: a call on arrays of a layout seen before goes straight to its
kernel's prepared launch (``fastpath._direct``), and a repeat on the same arrays skips even that
(``fastpath._repeated``); whatever changed since is noticed (alignment, overlap, layout, array kind, the
stream). Expected values come from NumPy on the host.

These tests need an NVIDIA GPU with CuPy; elsewhere they skip, saying why.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opendml as dml
from tests.conftest import CUDA_MISSING
from tests.helpers import errors_in_new_thread

pytestmark = pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")

F4 = np.float32


def host_values(shape: int | tuple[int, ...], seed: int = 0, dtype: Any = F4) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * 4).astype(dtype)


def on_gpu(host: np.ndarray) -> Any:
    import cupy

    return cupy.asarray(host)


def test_a_repeat_on_the_same_gpu_arrays_skips_the_checked_paths(checked: list[int], full_path: list[int]) -> None:
    import cupy

    x, y = on_gpu(host_values(1024)), cupy.empty(1024, F4)
    for _ in range(2):
        assert dml.clip(x, -1, 1, out=y) is y
        dml.threshold(x, 0.5, scale_bias=(2.0, 0.25), out=y)
    before, ordinary = len(checked), len(full_path)
    assert before <= 4 and ordinary <= 2
    for seed in range(3):  # new data in the same arrays: new results
        host = host_values(1024, seed + 1)
        x[:] = cupy.asarray(host)
        assert dml.clip(x, -1, 1, out=y) is y
        assert np.array_equal(y.get(), np.clip(host, F4(-1), F4(1)))
        dml.threshold(x, 0.5, scale_bias=(2.0, 0.25), out=y)
        assert np.array_equal(y.get(), np.maximum(host * F4(2) + F4(0.25), F4(0.5)))
    assert (len(checked), len(full_path)) == (before, ordinary)


@pytest.mark.parametrize(("shape", "dtype", "strided"), [
    ((32, 32), F4, False), ((4, 8), np.float16, False), ((3, 8), np.int8, False), ((6, 7), F4, True),
    ((512, 600), F4, False), ((300, 500), np.float16, True)], ids=str)
def test_gpu_repeats_of_every_layout(shape: tuple[int, int], dtype: Any, strided: bool,
                                     full_path: list[int]) -> None:
    """Every call but the first goes straight to the kernel, except where ``out`` ends short of DirectML's
    4-byte rounding (every other FLOAT16: its last element ends 2 bytes short): such calls are placed again
    each time (their tail run apart), never remembered."""
    import cupy

    base = cupy.zeros((shape[0], shape[1] * 2), dtype)
    out = base[:, ::2] if strided else cupy.ascontiguousarray(base[:, :shape[1]])
    for seed in range(3):
        host = host_values(shape, seed, dtype)
        x = cupy.asarray(host)
        for _ in range(2):
            dml.clip(x, -1, 2, out=out)
            assert np.array_equal(out.get(), np.clip(host, dtype(-1), dtype(2)))
    short = strided and dtype is np.float16
    assert len(full_path) == 6 if short else len(full_path) <= 1  # <= 1: an earlier test may have run the layout
    if strided:
        assert not base[:, 1::2].any()


def test_a_layout_seen_aligned_runs_misaligned_arrays_by_the_kernel_of_any_strides(full_path: list[int]) -> None:
    """The 16-byte chunk kernel of a layout needs 16-byte aligned addresses: arrays of that layout starting
    one element in (4 bytes) take the kernel of any strides, each element written once, none outside."""
    import cupy

    n = 4096
    host = host_values(n + 8)
    x_base, y_base = cupy.asarray(host), cupy.zeros(n + 8, F4)
    dml.clip(x_base[:n], -1, 1, out=y_base[:n])  # aligned: remembered with the chunk kernel
    for shift in (1, 2, 3, 4):
        y_base[:] = 0
        for _ in range(2):
            dml.clip(x_base[shift:shift + n], -1, 1, out=y_base[shift:shift + n])
        got = y_base.get()
        assert np.array_equal(got[shift:shift + n], np.clip(host[shift:shift + n], F4(-1), F4(1)))
        assert not got[:shift].any() and not got[shift + n:].any()
    assert len(full_path) <= 1


def test_new_results_on_the_direct_path() -> None:
    import cupy

    for seed in range(3):
        host = host_values((64, 48), seed)
        result = dml.clip(cupy.asarray(host), -0.5, 0.5)
        assert type(result) is cupy.ndarray and result.shape == host.shape
        assert np.array_equal(result.get(), np.clip(host, F4(-0.5), F4(0.5)))


@pytest.mark.parametrize("device", [None, "cuda", " CUDA "], ids=repr)
def test_host_arrays_never_take_a_gpu_layouts_launch(device: Any) -> None:
    """A NumPy array of a layout remembered for CuPy arrays runs where it should (uploaded for ``cuda``, on the
    CPU without ``device=``), never by the GPU's launch on its host address."""
    import cupy

    x_gpu, y_gpu = on_gpu(host_values(256)), cupy.empty(256, F4)
    for _ in range(3):
        dml.clip(x_gpu, -1, 1, out=y_gpu, device=device)
    x, y = host_values(256, 7), np.zeros(256, F4)
    for _ in range(3):
        assert dml.clip(x, -1, 1, out=y, device=device) is y
        assert np.array_equal(y, np.clip(x, F4(-1), F4(1)))
    result = dml.clip(x, -1, 1, device=device)
    assert type(result) is np.ndarray and np.array_equal(result, y)


def test_an_overlapping_out_of_a_remembered_layout_is_computed_apart() -> None:
    """``out`` one element past ``x`` in the same memory: the ordinary path computes apart, then copies."""
    import cupy

    host = np.arange(33, dtype=F4)
    first = cupy.asarray(host)
    for _ in range(2):
        dml.clip(first[:32], -1, 100, out=cupy.empty(32, F4))
    base = cupy.asarray(host)
    a, b = base[:32], base[1:]
    assert dml.clip(a, -1, 100, out=b) is b
    assert np.array_equal(base.get(), np.concatenate([[0], np.arange(32)]).astype(F4))


def test_a_new_shape_of_the_same_gpu_array_object_is_not_a_repeat() -> None:
    import cupy

    base = cupy.asarray(np.arange(16, dtype=F4) - 8)
    y = cupy.zeros(16, F4)
    for _ in range(2):
        dml.clip(base, -2, 2, out=y)
    base.shape = y.shape = (4, 4)  # the same objects, now 2-D
    base[:] = cupy.asarray(np.arange(16, dtype=F4).reshape(4, 4))
    dml.clip(base, -2, 2, out=y)
    assert np.array_equal(y.get(), np.clip(np.arange(16, dtype=F4), -2, 2).reshape(4, 4))


def test_repeats_run_on_the_current_stream() -> None:
    import cupy

    host = host_values(1 << 20)
    x, y = cupy.asarray(host), cupy.empty(1 << 20, F4)
    for _ in range(2):
        dml.clip(x, -1, 1, out=y)
    cupy.cuda.get_current_stream().synchronize()
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        x[:] = -x  # queued on this stream, then the clip after it
        for _ in range(3):
            dml.clip(x, -1, 1, out=y)
        result = cupy.empty_like(y)
        result[:] = y
    stream.synchronize()
    assert np.array_equal(result.get(), np.clip(-host, F4(-1), F4(1)))


def test_a_repeat_from_a_thread_new_to_cuda() -> None:
    """The prepared launch of a layout, made in this thread, runs from a thread that has not used CUDA yet (no
    context current there: the driver refuses, CuPy's launch takes the call)."""
    import cupy

    host = host_values(4096)
    x, y = cupy.asarray(host), cupy.empty(4096, F4)
    for _ in range(3):
        dml.clip(x, -1, 1, out=y)
    x[:] = cupy.asarray(-host)
    cupy.cuda.Device().synchronize()

    def other() -> None:
        for _ in range(2):
            dml.clip(x, -1, 1, out=y)
        cupy.cuda.get_current_stream().synchronize()

    errors = errors_in_new_thread(other)
    assert not errors, errors
    assert np.array_equal(y.get(), np.clip(-host, F4(-1), F4(1)))
