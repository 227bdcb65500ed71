"""Functional calls on tensors whose elements end short of DirectML's 4-byte rounding of a tensor's size
(UINT8 and INT8 arrays of a size not a multiple of 4, FLOAT16 ones of an odd size).

Such a call (of 64 KiB and more; the tests below lower that to any size) runs the last indices of an axis it
does not reduce apart, and binds the rest where it lies (its rounding reaching into the tail's bytes),
instead of copying the whole array; a reduction over every axis of more than one index runs the head and
tail of its outermost one apart and merges the two answers by (value, index). Checked: the bits against
the independent oracle for every operator, new results, ``out=`` (packed, strided, in place), every axis of
ARGMIN and ARGMAX with their values; and, on the CPU, that the bulk of a large call is not copied.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendml as dml
from opendml.functional import placement
from tests.conftest import BACKENDS, CUDA_MISSING
from tests.elementwise_oracle import (
    argmin_tensor,
    clamp_element,
    dequantize_element,
    quantize_element,
    typed_bound,
)

SHAPES = st.lists(st.integers(1, 9), min_size=1, max_size=3).map(tuple)
SHORT_TYPES = {"UINT8": np.uint8, "INT8": np.int8, "FLOAT16": np.float16}


@contextmanager
def tails_apart_from_any_size() -> Iterator[None]:
    """Small arrays run their tails apart too (by default only those of 64 KiB and more do)."""
    with mock.patch.object(placement, "TAIL_APART_FROM_BYTES", 0):
        yield


def _host(array: Any) -> np.ndarray:
    return array.get() if hasattr(array, "get") else np.asarray(array)


def _values(data: st.DataObject, shape: tuple[int, ...], type_name: str) -> np.ndarray:
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    if type_name == "FLOAT16":
        return rng.choice(np.array([-2.5, -0.0, 0.0, 1.0, 3.5, np.inf, np.nan], np.float16), shape)
    info = np.iinfo(SHORT_TYPES[type_name])
    return rng.integers(info.min, info.max + 1, shape).astype(SHORT_TYPES[type_name])


def _clip_oracle(x: np.ndarray, type_name: str, low: float, high: float) -> np.ndarray:
    lo, hi = typed_bound(low, type_name), typed_bound(high, type_name)
    flat = [clamp_element(v.item(), type_name, None, lo, hi) for v in x.reshape(-1)]
    return np.array(flat, x.dtype).reshape(x.shape)


def _same(got: Any, expected: np.ndarray) -> bool:
    """The same bits, but NaN payloads (SPEC: "bit-identical" allows them to differ; a GPU's conversions
    give the canonical NaN)."""
    got, expected = np.ascontiguousarray(_host(got)), np.ascontiguousarray(expected)
    if got.dtype != expected.dtype or got.shape != expected.shape:
        return False
    if got.dtype.kind == "f":
        nan = np.isnan(expected)
        if not np.array_equal(np.isnan(got), nan):
            return False
        got, expected = np.where(nan, 0, got), np.where(nan, 0, expected)
    return np.array_equal(got.view(np.uint8), expected.view(np.uint8))


def _check_clip(device: dml.Device, data: st.DataObject) -> None:
    """CLIP of every short type: a new result, out=, a strided out=, in place."""
    xp = device.backend.xp
    type_name = data.draw(st.sampled_from(sorted(SHORT_TYPES)), label="type")
    shape = data.draw(SHAPES, label="shape")
    x = _values(data, shape, type_name)
    low, high = (-1.0, 2.0) if type_name != "UINT8" else (3.0, 200.0)
    expected = _clip_oracle(x, type_name, low, high)
    assert _same(dml.clip(xp.asarray(x), low, high, device=device), expected)
    out = xp.empty(shape, x.dtype)
    dml.clip(xp.asarray(x), low, high, out=out, device=device)
    assert _same(out, expected)
    inside = xp.zeros(shape[:-1] + (2 * shape[-1],), x.dtype)  # out=: every other element of a wider array
    dml.clip(xp.asarray(x), low, high, out=inside[..., ::2], device=device)
    assert _same(inside[..., ::2], expected) and not _host(inside[..., 1::2]).any()
    same = xp.asarray(x)
    dml.clip(same, low, high, out=same, device=device)
    assert _same(same, expected)


def _check_dequantize(device: dml.Device, data: st.DataObject) -> None:
    """A per-column scale and an odd-sized UINT8 zero point (short too, broadcast along the split axis)."""
    xp = device.backend.xp
    type_name = data.draw(st.sampled_from(["UINT8", "INT8"]), label="type")
    shape = data.draw(st.lists(st.integers(1, 9), min_size=2, max_size=3).map(tuple), label="shape")
    x = _values(data, shape, type_name)
    columns = shape[-1]
    scale = (np.arange(columns, dtype=np.float32) + 1) * np.float32(0.25)
    zero_point = _values(data, (columns,), type_name)
    expected = np.array([dequantize_element(int(v), float(scale[i % columns]), int(zero_point[i % columns]),
                                            "FLOAT32") for i, v in enumerate(x.reshape(-1))],
                        np.float32).reshape(shape)
    got = dml.dequantize_linear(xp.asarray(x), xp.asarray(scale), xp.asarray(zero_point), device=device)
    assert _same(got, expected)


def _check_quantize(device: dml.Device, data: st.DataObject) -> None:
    """FLOAT32 in, UINT8 or INT8 out: the output is the short tensor (new, out=, a strided out=)."""
    xp = device.backend.xp
    out_type = data.draw(st.sampled_from(["UINT8", "INT8"]), label="type")
    shape = data.draw(st.lists(st.integers(1, 9), min_size=2, max_size=3).map(tuple), label="shape")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    x = (rng.standard_normal(shape) * 300).astype(np.float32)
    x.reshape(-1)[:: max(1, x.size // 3)] = np.nan
    scale = np.float32(1.5)
    zero = 7 if out_type == "UINT8" else -7
    dtype = SHORT_TYPES[out_type]
    expected = np.array([quantize_element(float(v), 1.5, zero, out_type) for v in x.reshape(-1)],
                        dtype).reshape(shape)
    assert _same(dml.quantize_linear(xp.asarray(x), scale, dtype(zero), device=device), expected)
    out = xp.empty(shape, dtype)
    dml.quantize_linear(xp.asarray(x), scale, dtype(zero), out=out, device=device)
    assert _same(out, expected)
    wide = xp.zeros(shape[:-1] + (2 * shape[-1],), dtype)
    dml.quantize_linear(xp.asarray(x), scale, dtype(zero), out=wide[..., 1::2], device=device)
    assert _same(wide[..., 1::2], expected) and not _host(wide[..., ::2]).any()


def _check_arg_reductions(device: dml.Device, data: st.DataObject) -> None:
    """ARGMIN and ARGMAX over any set of axes, both directions, both NaN policies, three index types."""
    xp = device.backend.xp
    type_name = data.draw(st.sampled_from(sorted(SHORT_TYPES)), label="type")
    shape = data.draw(SHAPES, label="shape")
    x = _values(data, shape, type_name)
    axes = data.draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, unique=True).map(sorted), label="axes")
    direction = data.draw(st.sampled_from(["INCREASING", "DECREASING"]), label="direction")
    largest = data.draw(st.booleans(), label="argmax")
    propagate = data.draw(st.booleans(), label="propagate")
    output_type = data.draw(st.sampled_from(["INT64", "UINT32", "INT32"]), label="output_type")
    read = {index: x[index].item() for index in np.ndindex(*shape)}
    expected = argmin_tensor(read, shape, axes, direction, largest=largest, propagate=propagate)
    function = dml.argmax if largest else dml.argmin
    indices, values = function(xp.asarray(x), axes, axis_direction=direction, output_type=output_type,
                               return_values=True, device=device,
                               nan_policy="PROPAGATE" if propagate else "IGNORE")
    indices, values = _host(indices), _host(values)
    for index, winner in expected.items():
        assert indices[index] == winner, (index, winner, indices[index])
        full = list(index)
        for axis, i in zip(axes, np.unravel_index(winner, [shape[a] for a in axes])):
            full[axis] = i
        assert values[index].tobytes() == x[tuple(full)].tobytes()


# Each check and its examples (the reductions take most: few of their cases run in two parts).
CHECKS: dict[str, tuple[Callable[[dml.Device, st.DataObject], None], int]] = {
    "clip": (_check_clip, 60),
    "dequantize_linear": (_check_dequantize, 40),
    "quantize_linear": (_check_quantize, 40),
    "arg reductions": (_check_arg_reductions, 150),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("check", list(CHECKS))
def test_short_tensors_match_the_oracle(backend: str, check: str) -> None:
    run, examples = CHECKS[check]

    @settings(max_examples=examples, deadline=None)
    @given(st.data())
    def example(data: st.DataObject) -> None:
        with tails_apart_from_any_size():
            run(dml.Device(backend), data)

    example()


@pytest.mark.parametrize("call", ["clip out=", "argmin axis 0", "argmin axis 1", "argmin all axes",
                                  "argmax all axes", "threshold in place"])
def test_a_large_short_tensor_is_not_copied(call: str) -> None:
    """A UINT8 [4097, 4099] array (not a multiple of 4 bytes): only its tail is copied, a few KiB, where the
    whole array (16 MiB) was. NumPy reports its allocations to tracemalloc."""
    device = dml.Device("cpu")
    x = np.random.default_rng(3).integers(0, 256, (4097, 4099), dtype=np.uint8)
    out = np.empty_like(x)
    calls = {
        "clip out=": lambda: dml.clip(x, 10, 200, out=out, device=device),
        "argmin axis 0": lambda: dml.argmin(x, 0, device=device),
        "argmin axis 1": lambda: dml.argmin(x, 1, device=device),
        "argmin all axes": lambda: dml.argmin(x, device=device),
        "argmax all axes": lambda: dml.argmax(x, axis_direction="DECREASING", device=device),
        "threshold in place": lambda: dml.threshold(out, 100, out=out, device=device),
    }
    assert x.nbytes >= placement.TAIL_APART_FROM_BYTES
    calls[call]()  # compiled and cached before the allocations are counted
    tracemalloc.start()
    try:
        calls[call]()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, f"{call}: {peak} bytes allocated at the peak"
    if call == "clip out=":
        assert np.array_equal(out, np.clip(x, 10, 200))
    if call.startswith("argmin axis"):
        axis = int(call[-1])
        assert np.array_equal(calls[call](), np.expand_dims(np.argmin(x, axis), axis))
    if call == "argmin all axes":
        assert calls[call]().item() == np.argmin(x)
    if call == "argmax all axes":  # the last of the largest
        assert calls[call]().item() == x.size - 1 - np.argmax(x.reshape(-1)[::-1])


@pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")
@pytest.mark.parametrize("call", ["clip out=", "argmin axis 0", "argmin axis 1", "argmin all axes",
                                  "threshold in place"])
def test_a_large_short_gpu_tensor_is_not_copied(call: str) -> None:
    """The same on the GPU: a CuPy UINT8 [4097, 4099] array's call allocates no more than its tail's copy and
    its result (every allocation of the call counted through CuPy's allocator hook)."""
    import cupy

    device = dml.Device("cuda")
    host = np.random.default_rng(4).integers(0, 256, (4097, 4099), dtype=np.uint8)
    x, out = cupy.asarray(host), cupy.empty(host.shape, np.uint8)
    calls = {
        "clip out=": lambda: dml.clip(x, 10, 200, out=out, device=device),
        "argmin axis 0": lambda: dml.argmin(x, 0, device=device),
        "argmin axis 1": lambda: dml.argmin(x, 1, device=device),
        "argmin all axes": lambda: dml.argmin(x, device=device),
        "threshold in place": lambda: dml.threshold(out, 100, out=out, device=device),
    }
    calls[call]()  # compiled before the allocations are counted
    pool, sizes = cupy.get_default_memory_pool(), []

    def counting(size: int) -> Any:
        sizes.append(size)
        return pool.malloc(size)

    cupy.cuda.set_allocator(counting)
    try:
        result = calls[call]()
    finally:
        cupy.cuda.set_allocator(pool.malloc)
    assert max(sizes, default=0) < 1 << 20, f"{call}: allocations of {sorted(sizes)[-3:]} bytes"
    if call == "clip out=":
        assert np.array_equal(out.get(), np.clip(host, 10, 200))
    if call.startswith("argmin axis"):
        axis = int(call[-1])
        assert np.array_equal(result.get(), np.expand_dims(np.argmin(host, axis), axis))
    if call == "argmin all axes":
        assert int(result.item()) == np.argmin(host)
