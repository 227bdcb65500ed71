"""The functional API writes exactly its ``out`` and reads exactly its inputs, whatever their layout.

Every ``out`` lies in a guard-filled base array: after each call its elements hold NumPy's answer and every
other byte of the base is unchanged. Each case runs twice with new values, because the second call with a
layout seen before takes the cached fast path (``functional._direct``). Arguments that cannot be taken
raise an OpenDMLError naming them, before anything is written.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import opendml as dml
from opendml.backends import cpu_kernels
from opendml.backends.cpu_kernels import views
from tests.conftest import CUDA_MISSING

F4 = np.float32
NO_NUMBA = pytest.mark.skipif(not cpu_kernels.numba_available(), reason="Numba is not installed (the opendml[fast] extra)")
NEEDS_CUDA = pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")


@pytest.fixture(params=[pytest.param("numba", marks=NO_NUMBA), "numpy"])
def cpu(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> dml.Device:
    """A fresh CPU device whose operators compile with one kernel set (as OPENDML_CPU_KERNELS chooses)."""
    monkeypatch.setattr(cpu_kernels, "_chosen", cpu_kernels.load(request.param))
    return dml.Device("cpu")


def address(a: Any) -> int:
    return int(a.__array_interface__["data"][0])


def element_bytes(base: np.ndarray, view: np.ndarray) -> np.ndarray:
    """A mask over ``base``'s bytes: True on the bytes of ``view``'s elements."""
    offsets = np.full((1,) * view.ndim, address(view) - address(base), np.int64)
    for k, (n, s) in enumerate(zip(view.shape, view.strides)):
        offsets = offsets + (np.arange(n, dtype=np.int64) * s).reshape((-1,) + (1,) * (view.ndim - k - 1))
    mask = np.zeros(base.nbytes, bool)
    for b in range(view.itemsize):
        mask[offsets.reshape(-1) + b] = True
    return mask


def assert_only_elements_written(base: np.ndarray, before: np.ndarray, view: np.ndarray,
                                 expected: np.ndarray) -> None:
    outside = ~element_bytes(base, view)
    assert np.array_equal(base.view(np.uint8)[outside], before.view(np.uint8)[outside]), "bytes outside out changed"
    assert np.array_equal(view, expected)


# Output views over a guard-filled base: (name, base, view-maker, whether CuPy can make it too). Every
# layout here is one a description cannot state.
OUT_LAYOUTS: list[tuple[str, np.ndarray, Callable[[Any], Any], bool]] = [
    ("issue [:, ::-2]", np.full(40, 99.0, F4), lambda b: b.reshape(4, 10)[:, ::-2], True),
    ("reversed", np.full(20, 99.0, F4), lambda b: b[::-1].reshape(4, 5), True),
    ("both axes reversed", np.full(60, 99.0, F4), lambda b: b.reshape(6, 10)[::-1, ::-2][1:5], True),
    ("transposed reversed", np.full(40, 99.0, F4), lambda b: b.reshape(5, 8)[:, ::-2].T, True),
    # 5-byte records: a stride that is not a multiple of 4, and misaligned elements
    ("packed field", np.full(20, 99.0, F4),
     lambda b: b.view(np.uint8)[:60].view([("tag", np.int8), ("value", F4)])["value"][:12].reshape(3, 4), False),
    ("misaligned", np.full(24, 99.0, F4),
     lambda b: np.ndarray((4, 5), F4, buffer=b.view(np.uint8), offset=1), False),
]


@pytest.mark.parametrize("case", OUT_LAYOUTS, ids=lambda c: c[0])
def test_out_of_any_layout_gets_exactly_its_elements(case: tuple[str, np.ndarray, Callable[..., Any], bool]) -> None:
    base = case[1].copy()
    out = case[2](base)
    rng = np.random.default_rng(1)
    for _ in range(2):  # the second call takes the cached path
        x = (rng.standard_normal(out.shape) * 2).astype(F4)
        before = base.copy()
        assert dml.clip(x, -1, 1, out=out) is out
        assert_only_elements_written(base, before, out, np.clip(x, F4(-1), F4(1)))
        before = base.copy()
        dml.threshold(x, 0.5, scale_bias=(2.0, 0.25), out=out)
        assert_only_elements_written(base, before, out, np.maximum(x * F4(2) + F4(0.25), F4(0.5)))


def test_eight_dimensional_out_with_negative_strides() -> None:
    base = np.full(2**9, 99.0, F4)
    out = base.reshape((2,) * 9)[..., 0][::-1, :, ::-1, :, :, ::-1, :, ::-1]
    rng = np.random.default_rng(9)
    for _ in range(2):
        x = rng.standard_normal(out.shape).astype(F4)
        before = base.copy()
        dml.clip(x, -0.5, 0.5, out=out)
        assert_only_elements_written(base, before, out, np.clip(x, F4(-0.5), F4(0.5)))


def test_issue_example_negative_stride_out_twice() -> None:
    base = np.full(40, 99.0, F4)
    out = base.reshape(4, 10)[:, ::-2]
    for _ in range(2):
        dml.clip(np.zeros((4, 5), F4), -1, 1, out=out)
        assert (out == 0).all()
        assert (base.reshape(4, 10)[:, ::2] == 99).all()  # base[24], base[26], ... untouched


def test_reversed_out_is_written() -> None:
    out = np.zeros(3, F4)[::-1]
    result = dml.clip(np.array([5, -5, 0.5], F4), 0, 1, out=out)
    assert result is out and out.tolist() == [1.0, 0.0, 0.5]


def input_layouts(rng: np.random.Generator) -> Iterator[tuple[str, np.ndarray]]:
    base = (rng.standard_normal(200) * 3).astype(F4)
    yield "reversed", base[::-1][:40].reshape(5, 8)
    yield "[:, ::-2]", base.reshape(10, 20)[:, ::-2]
    yield "reversed rows", base.reshape(20, 10)[::-3]
    record = np.dtype([("tag", np.int8), ("value", F4)])
    packed = np.zeros(40, record)
    packed["value"] = base[:40]
    yield "packed field", packed["value"].reshape(5, 8)
    aligned = np.zeros(40, [("a", F4), ("value", F4)])
    aligned["value"] = base[:40]
    yield "aligned field", aligned["value"].reshape(8, 5)
    shifted = np.zeros(161, np.uint8)
    misaligned = np.ndarray((40,), F4, buffer=shifted, offset=1)
    misaligned[...] = base[:40]
    yield "misaligned", misaligned


def test_inputs_of_any_layout_are_read_exactly() -> None:
    rng = np.random.default_rng(2)
    for name, x in input_layouts(rng):
        for _ in range(2):  # the second call takes the cached path: it must read the same elements
            x[...] = (rng.standard_normal(x.shape) * 3).astype(F4)
            assert np.array_equal(dml.clip(x, -1, 2), np.clip(x, F4(-1), F4(2))), name
            assert np.array_equal(dml.threshold(x, 0.5), np.maximum(x, F4(0.5))), name


def test_inputs_of_any_layout_with_both_kernel_sets(cpu: dml.Device) -> None:
    rng = np.random.default_rng(3)
    for name, x in input_layouts(rng):
        out_base = np.full(x.size * 3, 99.0, F4)
        out = out_base[::-3][: x.size].reshape(x.shape)
        for _ in range(2):
            x[...] = (rng.standard_normal(x.shape) * 3).astype(F4)
            before = out_base.copy()
            dml.clip(x, -1, 2, out=out, device=cpu)
            assert_only_elements_written(out_base, before, out, np.clip(x, F4(-1), F4(2)))
        index = dml.argmin(x, -1, device=cpu)
        assert np.array_equal(index, np.argmin(x, -1, keepdims=True)), name


def test_in_place_on_reversed_and_field_views() -> None:
    rng = np.random.default_rng(4)
    for _ in range(2):
        base = np.full(30, 99.0, F4)
        y = base[::-2]
        y[...] = rng.standard_normal(15).astype(F4) * 3
        before, expected = base.copy(), np.clip(y, F4(0), F4(1))
        assert dml.clip(y, 0, 1, out=y) is y
        assert_only_elements_written(base, before, y, expected)
        records = np.zeros(15, [("tag", np.int8), ("value", F4)])
        field = records["value"]
        field[...] = rng.standard_normal(15).astype(F4) * 3
        expected = np.maximum(field, F4(0.5))
        dml.threshold(field, 0.5, out=field)
        assert np.array_equal(field, expected) and (records["tag"] == 0).all()


def test_exact_alias_through_two_array_objects() -> None:
    x = np.linspace(-2, 2, 64, dtype=F4)
    expected = np.clip(x, F4(-1), F4(1))
    for _ in range(2):
        y = x.copy()
        dml.clip(y, -1, 1, out=y[:])  # one view, two objects: the in-place alias
        assert np.array_equal(y, expected)


def test_out_overlapping_an_input_gets_numpys_answer() -> None:
    for _ in range(2):
        x = np.arange(64, dtype=F4) - 20
        expected = x.copy()
        expected[16:48] = np.clip(x[:32], F4(0), F4(20))  # every input element read before any write
        dml.clip(x[:32], 0, 20, out=x[16:48])
        assert np.array_equal(x, expected)

        x = np.arange(64, dtype=F4) - 20
        expected = x.copy()
        expected[1::2] = np.maximum(x[0::2], F4(0))  # interleaved: bytes overlap, elements do not
        dml.threshold(x[0::2], 0, out=x[1::2])
        assert np.array_equal(x, expected)

        x = np.arange(64, dtype=F4)
        expected = x.copy()
        expected[:32] = np.clip(x[::-1][:32], F4(10), F4(50))  # reversed input, forward out, same memory
        dml.clip(x[::-1][:32], 10, 50, out=x[:32])
        assert np.array_equal(x, expected)


def test_argmin_and_dequantize_out_over_their_input() -> None:
    x = np.array([[3, 1, 2], [0, 5, -1]], np.int64)
    expected = np.argmin(x, 1, keepdims=True)
    column = x[:, :1]  # the output's elements are input elements
    assert dml.argmin(x, 1, out=column) is column
    assert np.array_equal(column, expected) and x[:, 1:].tolist() == [[1, 2], [5, -1]]

    raw = np.zeros(32, np.uint8)
    q = raw[:8].view(np.int8)
    q[...] = [-4, -3, -2, -1, 0, 1, 2, 3]
    expected = ((q.astype(np.int64) - 1).astype(F4) * F4(0.5)).astype(F4)
    out = raw.view(F4)[:8]  # starts on the same bytes as the input
    dml.dequantize_linear(q, F4(0.5), np.int8(1), out=out)
    assert np.array_equal(out, expected)


def test_out_whose_elements_collide_is_refused_before_writing() -> None:
    base = np.full(16, 99.0, F4)
    outs = [np.lib.stride_tricks.as_strided(base[8:], shape=(3, 3), strides=(-4, 4)),  # [i, j] is [i+1, j+1]
            np.lib.stride_tricks.as_strided(base, shape=(4, 4), strides=(0, 4)),  # a repeated row
            np.ndarray((4,), F4, buffer=base.view(np.uint8), offset=2, strides=(2,))]  # elements half overlap
    for out in outs:
        for _ in range(2):
            with pytest.raises(dml.InvalidArgumentError,
                               match=r"^ELEMENT_WISE_CLIP: (out|OutputTensor\.Strides) must address each "):
                dml.clip(np.zeros(out.shape, F4), 0, 1, out=out)
            assert (base == 99).all()


@pytest.mark.parametrize("bad", [[0.0, 0.0, 0.0], (0.0, 0.0, 0.0), F4(0), "out", memoryview(bytearray(12))],
                         ids=["list", "tuple", "scalar", "str", "memoryview"])
def test_out_that_is_not_a_writeable_array_is_refused(bad: object) -> None:
    x = np.array([0.5, 2, -1], F4)
    for call in (lambda: dml.clip(x, 0, 1, out=bad), lambda: dml.threshold(x, 0, out=bad),
                 lambda: dml.dequantize_linear(np.zeros(3, np.int8), F4(1), out=bad),
                 lambda: dml.argmin(x, out=bad)):
        with pytest.raises(dml.InvalidArgumentError, match=r": out must be a writeable NumPy array; got "):
            call()
    # A float64 input, with which a list would once have passed, is refused before ``out`` is looked at.
    with pytest.raises(dml.InvalidArgumentError, match=r"^ELEMENT_WISE_CLIP: InputTensor.DataType .*got FLOAT64"):
        dml.clip(np.zeros(3), 0, 1, out=[0.0, 0.0, 0.0])


def test_device_takes_a_device_or_a_backend_name() -> None:
    x = np.array([[-2, 0.5], [3, 1]], F4)
    for device in ("cpu", "CPU", dml.Device("cpu"), None):
        for _ in range(2):
            assert np.array_equal(dml.clip(x, 0, 1, device=device), np.clip(x, F4(0), F4(1)))
            assert np.array_equal(dml.threshold(x, 0.75, device=device), np.maximum(x, F4(0.75)))
        assert dml.argmin(x, 1, device=device).tolist() == [[0], [1]]
        assert dml.dequantize_linear(np.array([3], np.int8), F4(0.5), 1, device=device).tolist() == [1.0]


@pytest.mark.parametrize("bad", [0, 1, 1.5, "gpu", object(), True], ids=["0", "1", "1.5", "gpu", "object", "True"])
def test_device_that_is_neither_is_refused(bad: object) -> None:
    x = np.zeros(3, F4)
    for owner, call in (("ELEMENT_WISE_CLIP", lambda: dml.clip(x, 0, 1, device=bad)),
                        ("ELEMENT_WISE_THRESHOLD", lambda: dml.threshold(x, 0, device=bad)),
                        ("ELEMENT_WISE_DEQUANTIZE_LINEAR", lambda: dml.dequantize_linear(
                            np.zeros(3, np.int8), F4(1), device=bad)),
                        ("ARGMIN", lambda: dml.argmin(x, device=bad))):
        for _ in range(2):
            with pytest.raises(dml.InvalidArgumentError,
                               match=rf"^{owner}: device must be a Device, a backend name \('cpu', 'cuda'\) or None; "
                                     rf"got "):
                call()


@pytest.mark.parametrize("axes", [1.5, {0: 0}, {0}, "0", b"\x00", np.float32(1)], ids=repr)
def test_argmin_axes_that_are_not_integers_are_refused(axes: object) -> None:
    with pytest.raises(dml.InvalidArgumentError, match=r"^ARGMIN: Axes must be an integer, a sequence of integers "
                                                       r"or None; got "):
        dml.argmin(np.ones((2, 3), F4), axes)


def test_argmin_axes_as_numpy_integers() -> None:
    x = np.array([[4, 1, 3], [0, 5, 2]], F4)
    for axes in (np.int64(1), np.array(1), np.array([1]), np.array([-1])):
        assert dml.argmin(x, axes).tolist() == [[1], [0]]
    with pytest.raises(dml.InvalidArgumentError, match=r"^ARGMIN: Axes\[0\] must be an integer in \[-2, 1\]; got 0\.5"):
        dml.argmin(x, [0.5])


def read_only(a: np.ndarray) -> np.ndarray:
    a = a.copy()
    a.flags.writeable = False
    return a


def read_only_layouts(row: np.ndarray, big: np.ndarray) -> list[np.ndarray]:
    """Inputs NumPy hands out read-only: broadcasts (zero strides) and arrays marked so, small and large."""
    return [np.broadcast_to(row, (6, row.size)), np.broadcast_to(row[:1].reshape(()), (33,)), read_only(row),
            read_only(big), np.broadcast_to(big, (2, big.size))[:, ::3]]


def test_read_only_inputs_with_and_without_scale_bias(cpu: dml.Device) -> None:
    rng = np.random.default_rng(5)
    row = (rng.standard_normal(257) * 2).astype(F4)
    big = (rng.standard_normal(views.PARALLEL_MIN + 999) * 2).astype(F4)  # shared out to the threads
    for dtype in (F4, np.float16):
        for x in read_only_layouts(row.astype(dtype), big.astype(dtype)):
            assert not x.flags.writeable
            wide = x.astype(F4)
            for _ in range(2):
                got = dml.clip(x, -1, 1, scale_bias=(1.5, -0.25), device=cpu)
                assert np.array_equal(got, np.clip(wide * F4(1.5) + F4(-0.25), F4(-1), F4(1)).astype(dtype))
                got = dml.threshold(x, 0.25, scale_bias=(0.5, 0.125), device=cpu)
                assert np.array_equal(got, np.maximum(wide * F4(0.5) + F4(0.125), F4(0.25)).astype(dtype))
                assert np.array_equal(dml.clip(x, -1, 1, device=cpu), np.clip(wide, F4(-1), F4(1)).astype(dtype))
    q = np.broadcast_to(np.arange(-8, 8, dtype=np.int8), (4, 16))
    scale = np.broadcast_to(F4(0.25), (4, 16))
    zero_point = read_only(np.array([1], np.int8))
    expected = ((q.astype(np.int64) - 1).astype(F4) * F4(0.25)).astype(F4)
    assert np.array_equal(dml.dequantize_linear(q, scale, zero_point, device=cpu), expected)
    assert np.array_equal(dml.argmin(read_only(big), 0, device=cpu), [np.argmin(big)])


def dequantized(x: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    return ((x.astype(np.int64) - zero_point).astype(F4) * F4(scale)).astype(F4)


@pytest.mark.parametrize(("dtype", "zero_point"), [
    (np.uint8, np.int16(300)), (np.uint8, 1.5), (np.uint8, True), (np.uint8, np.bool_(False)), (np.uint8, -1),
    (np.uint8, 256), (np.int8, 128), (np.int8, np.float32(0.5)), (np.int8, math.nan), (np.int8, math.inf),
    (np.int32, 2**31), (np.uint32, -1), (np.uint8, np.array(300, np.int16)), (np.uint8, np.array([1, 256], np.int16)),
    (np.int8, np.array([1.0, 2.5])), (np.int8, np.array([np.nan])), (np.uint8, np.array([True])),
    (np.int16, np.array([1, 2**15], np.int32)),
], ids=repr)
def test_zero_point_that_does_not_fit_the_input_type_is_refused(dtype: type, zero_point: object) -> None:
    x = np.arange(4, dtype=dtype)
    with pytest.raises(dml.InvalidArgumentError,
                       match=rf"^ELEMENT_WISE_DEQUANTIZE_LINEAR: ZeroPointTensor(\.DataType)? must (hold values of the "
                             rf"input's type {np.dtype(dtype)}|be one of)"):
        dml.dequantize_linear(x, F4(0.5), zero_point)


@pytest.mark.parametrize(("dtype", "zero_point", "value"), [
    (np.uint8, np.int16(255), 255), (np.uint8, 7, 7), (np.int8, -128, -128), (np.int8, 2.0, 2),
    (np.int8, np.float64(-3.0), -3), (np.uint8, np.array(200, np.int32), 200), (np.int16, np.array([-9], np.int8), -9),
    (np.uint32, 2**32 - 1, 2**32 - 1), (np.int32, np.array([5.0]), 5), (np.uint16, np.array(40000, np.uint16), 40000),
], ids=repr)
def test_zero_point_that_fits_is_converted_exactly(dtype: type, zero_point: object, value: int) -> None:
    x = np.array([0, 1, 100], dtype)
    got = dml.dequantize_linear(x, F4(0.5), zero_point)
    assert np.array_equal(got, dequantized(x, 0.5, value))


def test_array_zero_point_of_a_wider_type() -> None:
    x = np.array([[0, 255], [10, 20]], np.uint8)
    zero_point = np.array([[3], [250]], np.int64)  # every element fits UINT8: converted
    assert np.array_equal(dml.dequantize_linear(x, F4(2), zero_point),
                          ((x.astype(np.int64) - zero_point).astype(F4) * F4(2)).astype(F4))


@pytest.mark.parametrize("make", [np.asarray, lambda v: np.asarray([v]), lambda v: np.asarray([[v]]), lambda v: v],
                         ids=["0-d", "1 element", "1x1", "scalar"])
def test_scale_and_zero_point_of_one_element(make: Callable[[Any], Any]) -> None:
    x = np.array([[-4, 3], [127, -128]], np.int8)
    got = dml.dequantize_linear(x, make(F4(0.25)), make(np.int8(3)))
    expected = dequantized(x, 0.25, 3)
    assert np.array_equal(got.reshape(expected.shape), expected)
    assert got.shape == np.broadcast_shapes(x.shape, np.shape(make(1)))


def test_scale_refuses_bool() -> None:
    for scale in (True, np.bool_(True), np.array([True])):
        with pytest.raises(dml.InvalidArgumentError, match=r"^ELEMENT_WISE_DEQUANTIZE_LINEAR: ScaleTensor"):
            dml.dequantize_linear(np.zeros(2, np.int8), scale)


def test_python_number_scale_becomes_float32() -> None:
    got = dml.dequantize_linear(np.array([3], np.uint8), 0.1, 0)
    assert got.dtype == F4 and got.tolist() == [float(F4(3) * F4(0.1))]


def test_broadcast_failures_name_the_operand_and_both_shapes() -> None:
    x = np.zeros((2, 3), np.int8)
    with pytest.raises(dml.InvalidArgumentError, match=r"^ELEMENT_WISE_DEQUANTIZE_LINEAR: ScaleTensor shape must "
                                                       r"broadcast with the shape \(2, 3\) of InputTensor; got \(2,\)\.$"):
        dml.dequantize_linear(x, np.ones(2, F4), 0)
    with pytest.raises(dml.InvalidArgumentError, match=r"^ELEMENT_WISE_DEQUANTIZE_LINEAR: ZeroPointTensor shape must "
                                                       r"broadcast with the shape \(4, 2, 3\) of InputTensor and "
                                                       r"ScaleTensor; got \(4, 2\)\.$"):
        dml.dequantize_linear(x, np.ones((4, 1, 3), F4), np.zeros((4, 2), np.int8))


def test_negative_stride_out_with_the_numpy_kernels_chosen_by_the_environment() -> None:
    code = """if True:
        import numpy as np, opendml as dml
        base = np.full(40, 99.0, np.float32)
        out = base.reshape(4, 10)[:, ::-2]
        x = np.arange(20, dtype=np.float32).reshape(4, 5) / 10 - 1
        for _ in range(2):
            dml.clip(x, -0.5, 0.5, out=out)
            assert np.array_equal(out, np.clip(x, np.float32(-0.5), np.float32(0.5)))
            assert (base.reshape(4, 10)[:, ::2] == 99).all()
        ro = np.broadcast_to(np.float32(2), (4,))
        assert dml.clip(ro, 0, 10, scale_bias=(2.0, 1.0)).tolist() == [5.0] * 4
        from opendml.backends import cpu_kernels
        assert cpu_kernels.kernels().__name__.endswith("blocked")
        """
    env = {**os.environ, "OPENDML_CPU_KERNELS": "numpy"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


# --- GPU: CuPy arrays, PyTorch tensors and host arrays on a CUDA device, and GPU operands on the CPU ---


def int8_case() -> tuple[np.ndarray, np.ndarray]:
    x = np.array([[-128, -1, 0], [1, 64, 127]], np.int8)
    return x, dequantized(x, 0.5, 3)


@NEEDS_CUDA
def test_gpu_zero_point_and_scale_of_every_kind() -> None:
    import cupy

    x, expected = int8_case()
    kinds: list[Callable[[Any], Any]] = [
        lambda v: cupy.asarray(v), lambda v: cupy.asarray(np.asarray([v])), lambda v: np.asarray(v),
        lambda v: np.asarray([v]), lambda v: v]
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        kinds += [lambda v: torch.tensor(v.item()).to(getattr(torch, v.dtype.name)),
                  lambda v: torch.tensor([v.item()], dtype=getattr(torch, v.dtype.name), device="cuda")]
    for scale_kind in kinds:
        for zero_kind in kinds:
            scale, zero_point = scale_kind(F4(0.5)), zero_kind(np.int8(3))
            got = dml.dequantize_linear(cupy.asarray(x), scale, zero_point)  # the issue's 0-d CuPy zero point
            assert np.array_equal(cupy.asnumpy(got), expected)
            on_cpu = dml.dequantize_linear(x, scale, zero_point, device="cpu")  # GPU operands, CPU device
            assert np.array_equal(on_cpu, expected)


@NEEDS_CUDA
def test_gpu_zero_point_is_checked_exactly() -> None:
    import cupy

    x = cupy.arange(4, dtype=cupy.uint8)
    for bad in (cupy.asarray(np.int16(300)), cupy.asarray([1.5]), cupy.asarray([1, 256], np.int16)):
        for device in ("cuda", "cpu"):
            if device == "cpu" and bad.size > 1:
                continue
            with pytest.raises(dml.InvalidArgumentError, match=r"ZeroPointTensor must hold values of the input's type"):
                dml.dequantize_linear(x if device == "cuda" else cupy.asnumpy(x), F4(1), bad, device=device)
    fits = dml.dequantize_linear(x, F4(1), cupy.asarray([1, 255], np.int16).reshape(2, 1))
    assert np.array_equal(cupy.asnumpy(fits), np.arange(4, dtype=F4) - np.array([[1], [255]], F4))


@NEEDS_CUDA
def test_gpu_out_of_any_layout_gets_exactly_its_elements() -> None:
    import cupy

    rng = np.random.default_rng(8)
    for _, host_base, make, on_cupy in OUT_LAYOUTS:
        if on_cupy:
            base = cupy.asarray(host_base)
            out = make(base)
            for _ in range(2):
                x = (rng.standard_normal(out.shape) * 2).astype(F4)
                before = cupy.asnumpy(base)
                assert dml.clip(cupy.asarray(x), -1, 1, out=out) is out
                after = cupy.asnumpy(base)
                assert_only_elements_written(after, before, make(after), np.clip(x, F4(-1), F4(1)))
        base = host_base.copy()  # a host out= of a GPU computation
        out = make(base)
        for _ in range(2):
            x = (rng.standard_normal(out.shape) * 2).astype(F4)
            before = base.copy()
            assert dml.clip(x, -1, 1, out=out, device="cuda") is out
            assert_only_elements_written(base, before, out, np.clip(x, F4(-1), F4(1)))


@NEEDS_CUDA
def test_gpu_out_overlapping_an_input_and_in_place_reversed() -> None:
    import cupy

    x = cupy.arange(64, dtype=cupy.float32) - 20
    expected = cupy.asnumpy(x)
    expected[16:48] = np.clip(expected[:32], F4(0), F4(20))
    dml.clip(x[:32], 0, 20, out=x[16:48])
    assert np.array_equal(cupy.asnumpy(x), expected)
    y = cupy.arange(10, dtype=cupy.float32)[::-1]
    dml.clip(y, 2, 5, out=y)
    assert cupy.asnumpy(y).tolist() == [5, 5, 5, 5, 5, 4, 3, 2, 2, 2]


@NEEDS_CUDA
def test_gpu_out_that_is_not_a_device_or_host_array_is_refused() -> None:
    import cupy

    x = cupy.zeros(3, cupy.float32)
    bad: list[object] = [[0.0, 0.0, 0.0]]
    try:
        import torch

        bad.append(torch.zeros(3))  # a host tensor: its memory would never be written
    except ImportError:
        pass
    for out in bad:
        with pytest.raises(dml.InvalidArgumentError, match=r"ELEMENT_WISE_CLIP: out must be a writeable NumPy array "
                                                           r"or a CUDA array \(CuPy, PyTorch\); got "):
            dml.clip(x, 0, 1, out=out)
    readonly = np.zeros(3, F4)
    readonly.flags.writeable = False
    with pytest.raises(dml.InvalidArgumentError, match=r"out must be writeable"):
        dml.clip(x, 0, 1, out=readonly)
