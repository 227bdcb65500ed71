"""``out=`` over the memory of an input: NumPy's answer, as if every input were read before ``out`` is written.

Each case lays an input and ``out`` over one guard-filled byte buffer, ``out`` some bytes before or after
the input (whole elements, or odd bytes: misaligned views), with strides or reversed, and checks ``out``
against NumPy computed on copies of the inputs, and that no byte other than ``out``'s elements changed.
Sizes reach past the 64 KiB from which a short tensor (an odd-sized UINT8, INT8 or FLOAT16 array) runs its
last indices apart from the rest: that call writes the rest before it reads the tail. Each call runs twice
on the same arrays, after a call of the same layouts on memory that does not overlap: the later calls may
take the cached fast paths (``functional.fastpath``), which must not skip the overlap either.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendml as dml
from opendml.functional import placement

GUARD = 0x5A
TAIL_APART_BYTES = 1 << 16  # placement.TAIL_APART_FROM_BYTES, restated: the sizes drawn straddle it

CLIP_TYPES = ("float32", "float16", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")
ARG_OUTPUT_TYPES = ("int64", "int32", "uint64", "uint32")


def test_the_limit_restated_here_is_the_librarys() -> None:
    assert placement.TAIL_APART_FROM_BYTES == TAIL_APART_BYTES


def view(raw: np.ndarray, start: int, dtype: np.dtype, shape: tuple[int, ...], step: int) -> np.ndarray:
    """An array over ``raw``'s bytes from ``start`` on: C order, every ``|step|``-th element, reversed where
    ``step`` is negative (its first element then lies at the highest address)."""
    strides = [dtype.itemsize * abs(step)]
    for n in reversed(shape[1:]):
        strides.insert(0, strides[0] * n)
    offset = start
    if step < 0:
        offset += sum((n - 1) * s for n, s in zip(shape, strides))
        strides = [-s for s in strides]
    return np.ndarray(shape, dtype, buffer=raw, offset=offset, strides=tuple(strides))


def span(dtype: np.dtype, shape: tuple[int, ...], step: int) -> int:
    """The bytes ``view`` covers: from its lowest element's first byte to its highest's last."""
    count = int(np.prod(shape))
    return ((count - 1) * abs(step) + 1) * dtype.itemsize


def element_bytes(raw: np.ndarray, array: np.ndarray) -> np.ndarray:
    """A mask over ``raw``'s bytes: True on those of ``array``'s elements."""
    start = array.__array_interface__["data"][0] - raw.__array_interface__["data"][0]
    offsets = np.full((1,) * array.ndim, start, np.int64)
    for k, (n, s) in enumerate(zip(array.shape, array.strides)):
        offsets = offsets + (np.arange(n, dtype=np.int64) * s).reshape((-1,) + (1,) * (array.ndim - k - 1))
    mask = np.zeros(raw.size, bool)
    for b in range(array.itemsize):
        mask[offsets.reshape(-1) + b] = True
    return mask


@dataclass
class Case:
    """One call: the input's and ``out``'s dtypes and shapes, the call on (x, out) and NumPy's answer on x."""

    name: str
    x_dtype: np.dtype
    x_shape: tuple[int, ...]
    out_dtype: np.dtype
    out_shape: tuple[int, ...]
    call: Callable[[np.ndarray, np.ndarray], Any]
    numpy: Callable[[np.ndarray], np.ndarray]

    def values(self, rng: np.random.Generator) -> np.ndarray:
        """Values NumPy computes exactly as the operator does (no NaN: NumPy's argmin and clip treat it apart)."""
        if self.x_dtype.kind == "f":
            return (rng.integers(-12, 13, self.x_shape) / 4).astype(self.x_dtype)  # quarters: exact, ties
        low, high = (0, 200) if self.x_dtype.kind == "u" else (-100, 100)
        return rng.integers(low, high + 1, self.x_shape).astype(self.x_dtype)


def _clip(dtype: np.dtype, shape: tuple[int, ...]) -> Case:
    low, high = (-1.0, 1.5) if dtype.kind == "f" else ((3, 150) if dtype.kind == "u" else (-30, 50))
    return Case("clip", dtype, shape, dtype, shape, lambda x, out: dml.clip(x, low, high, out=out),
                lambda x: np.minimum(np.maximum(x, dtype.type(low)), dtype.type(high)))


def _threshold(dtype: np.dtype, shape: tuple[int, ...]) -> Case:
    low = 0.5 if dtype.kind == "f" else 20.0
    return Case("threshold", dtype, shape, dtype, shape, lambda x, out: dml.threshold(x, low, out=out),
                lambda x: np.maximum(x, dtype.type(low)))


def _dequantize(dtype: np.dtype, shape: tuple[int, ...], scale_type: np.dtype) -> Case:
    scale, zero_point = scale_type.type(0.5), dtype.type(3)  # every result is exact in FLOAT16 too

    def expected(x: np.ndarray) -> np.ndarray:
        return ((x.astype(np.int64) - 3) * 0.5).astype(scale_type)

    return Case("dequantize_linear", dtype, shape, scale_type, shape,
                lambda x, out: dml.dequantize_linear(x, scale, zero_point, out=out), expected)


def _quantize(dtype: np.dtype, shape: tuple[int, ...], out_type: np.dtype) -> Case:
    scale = (np.float16 if dtype == np.float16 else np.float32)(0.5)
    zero_point = out_type.type(100 if out_type.kind == "u" else -5)
    info = np.iinfo(out_type)

    def expected(x: np.ndarray) -> np.ndarray:  # x / 0.5 is exact; NumPy's rint rounds half to even too
        return np.clip(np.rint(x.astype(np.float64) * 2) + int(zero_point), info.min, info.max).astype(out_type)

    return Case("quantize_linear", dtype, shape, out_type, shape,
                lambda x, out: dml.quantize_linear(x, scale, zero_point, out=out), expected)


def _arg(kind: str, dtype: np.dtype, shape: tuple[int, ...], axis: int | None, out_type: np.dtype) -> Case:
    function, numpy_function = (dml.argmin, np.argmin) if kind == "argmin" else (dml.argmax, np.argmax)
    out_shape = (1,) * len(shape) if axis is None else tuple(1 if k == axis else n for k, n in enumerate(shape))

    def expected(x: np.ndarray) -> np.ndarray:  # the first of equal values, as INCREASING picks
        found = numpy_function(x) if axis is None else numpy_function(x, axis)
        return np.asarray(found).astype(out_type).reshape(out_shape)

    return Case(kind, dtype, shape, out_type, out_shape,
                lambda x, out: function(x, axis, output_type=out_type.name.upper(), out=out), expected)


@st.composite
def cases(draw: st.DrawFn) -> Case:
    name = draw(st.sampled_from(["clip", "threshold", "dequantize_linear", "quantize_linear", "argmin", "argmax"]))
    types = {"clip": CLIP_TYPES, "threshold": CLIP_TYPES, "dequantize_linear": ("int8", "uint8", "int32"),
             "quantize_linear": ("float32", "float16", "int32")}.get(name, CLIP_TYPES)
    dtype = np.dtype(draw(st.sampled_from(types)))
    # Few elements, or about the 64 KiB from which a short tensor's tail runs apart (odd sizes among them).
    if draw(st.booleans()):
        size = draw(st.integers(1, 40))
    else:
        size = TAIL_APART_BYTES // dtype.itemsize + draw(st.integers(-3, 32))
    rank = draw(st.sampled_from([1, 1, 2])) if size >= 6 else 1
    shape = (size,) if rank == 1 else (size // 3, 3)
    if name == "clip":
        return _clip(dtype, shape)
    if name == "threshold":
        return _threshold(dtype, shape)
    if name == "dequantize_linear":
        return _dequantize(dtype, shape, np.dtype(draw(st.sampled_from(["float32", "float16"]))))
    if name == "quantize_linear":
        return _quantize(dtype, shape, np.dtype(draw(st.sampled_from(["uint8", "int8"]))))
    axis = draw(st.sampled_from([None, *range(len(shape))]))
    return _arg(name, dtype, shape, axis, np.dtype(draw(st.sampled_from(ARG_OUTPUT_TYPES))))


@dataclass
class Overlap:
    """Where ``out`` lies: ``shift`` bytes from the input's lowest byte; each view's step (-1: reversed)."""

    shift: int
    x_step: int
    out_step: int


@st.composite
def overlaps(draw: st.DrawFn, case: Case) -> Overlap:
    x_step, out_step = draw(st.sampled_from([1, 1, 1, 2, -1])), draw(st.sampled_from([1, 1, 1, 2, -1]))
    x_span = span(case.x_dtype, case.x_shape, x_step)
    out_span = span(case.out_dtype, case.out_shape, out_step)
    size = case.x_dtype.itemsize
    shifts = [k * size for k in range(-8, 9)]  # whole elements of the input, either way (0: the same start)
    shifts += [x_span - k * size for k in range(1, 5)] + [k * size - out_span for k in range(1, 5)]  # ends only
    out_size = case.out_dtype.itemsize  # out's last elements just past the input's end, or first just before
    shifts += [x_span - out_span + k * out_size for k in range(1, 5)] + [-k * out_size for k in range(1, 5)]
    shifts += [1, -1, 3, -3]  # odd bytes: a misaligned view where the element is wider than one byte
    shift = draw(st.sampled_from([s for s in shifts if -out_span < s < x_span]))  # some byte in common
    return Overlap(shift, x_step, out_step)


def apart(case: Case, overlap: Overlap) -> Overlap:
    """The same layouts with no byte in common, ``out`` as aligned as in ``overlap`` (16-byte steps on)."""
    x_span = span(case.x_dtype, case.x_shape, overlap.x_step)
    out_span = span(case.out_dtype, case.out_shape, overlap.out_step)
    return Overlap(overlap.shift + 16 * ((x_span + out_span) // 16 + 1), overlap.x_step, overlap.out_step)


def arrays_over(case: Case, overlap: Overlap) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A guard-filled buffer, the input 64 bytes or more into it at a 16-byte aligned address, and ``out``
    ``overlap.shift`` bytes from the input."""
    x_span = span(case.x_dtype, case.x_shape, overlap.x_step)
    out_span = span(case.out_dtype, case.out_shape, overlap.out_step)
    room = 64 + max(0, -overlap.shift) + max(x_span, overlap.shift + out_span) + 64
    raw = np.full(room + 16, GUARD, np.uint8)
    start = 64 + max(0, -overlap.shift)
    start += -(raw.__array_interface__["data"][0] + start) % 16
    x = view(raw, start, case.x_dtype, case.x_shape, overlap.x_step)
    out = view(raw, start + overlap.shift, case.out_dtype, case.out_shape, overlap.out_step)
    return raw, x, out


def check(case: Case, overlap: Overlap, seed: int) -> None:
    rng = np.random.default_rng(seed)
    _, x, out = arrays_over(case, apart(case, overlap))  # the layouts' first call: the fast path remembers them
    x[...] = case.values(rng)
    case.call(x, out)
    assert np.array_equal(out, case.numpy(x.copy())), "the same layouts apart"

    raw, x, out = arrays_over(case, overlap)
    assert np.may_share_memory(x, out)
    values = case.values(rng)
    for attempt in ("first", "second"):  # the second on the same arrays: the repeated call's fast path
        raw[...] = GUARD
        x[...] = values
        expected = case.numpy(x.copy())
        before = raw.copy()
        case.call(x, out)
        assert np.array_equal(out, expected), f"{attempt} call: {np.flatnonzero(out != expected)[:8]} differ"
        outside = ~element_bytes(raw, out)
        assert np.array_equal(raw[outside], before[outside]), f"{attempt} call: bytes outside out changed"


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_out_over_an_input_gets_numpys_answer(data: st.DataObject) -> None:
    case = data.draw(cases(), label="case")
    overlap = data.draw(overlaps(case), label="overlap")
    check(case, overlap, data.draw(st.integers(0, 2**32 - 1), label="seed"))


def test_issue_example_float16_out_16_bytes_on() -> None:
    """The issue's call: a FLOAT16 array of 32,769 elements (64 KiB and 2 bytes: its last element runs apart),
    ``out`` the same memory 16 bytes on. The rest was written first, over the last element's input."""
    n = 32769
    for _ in range(2):  # the second call on the same arrays: the repeated call's fast path
        buf = np.zeros(n + 8, np.float16)
        buf[:n] = np.linspace(-2, 2, n).astype(np.float16)
        buf[n - 1] = 0.5  # out[-9] = clip(x[-9]) = 1.0 lands on x[-1] before the last element is read
        x, out = buf[:n], buf[8:8 + n]
        expected = np.clip(x.copy(), np.float16(-1), np.float16(1))
        assert dml.clip(x, -1.0, 1.0, out=out) is out
        assert out[-1] == 0.5
        assert np.array_equal(out, expected)


@pytest.mark.parametrize("name", ["clip", "threshold", "dequantize_linear", "quantize_linear", "argmin", "argmax"])
def test_out_over_the_tail_of_a_short_tensor(name: str) -> None:
    """Every function, on an input whose last indices run apart (64 KiB and more, short of the 4-byte
    rounding), with ``out`` over the tail's bytes: forward (whole elements and an odd byte) and backward."""
    int8 = np.dtype(np.int8)
    case = {"clip": _clip(int8, (65539,)), "threshold": _threshold(np.dtype(np.float16), (32769,)),
            "dequantize_linear": _dequantize(int8, (65551,), np.dtype(np.float16)),
            "quantize_linear": _quantize(np.dtype(np.float16), (32771,), np.dtype(np.uint8)),
            "argmin": _arg("argmin", np.dtype(np.uint8), (21846, 3), 1, np.dtype(np.int32)),
            "argmax": _arg("argmax", np.dtype(np.float16), (10923, 3), 1, np.dtype(np.int64))}[name]
    x_span = span(case.x_dtype, case.x_shape, 1)
    out_span = span(case.out_dtype, case.out_shape, 1)
    forward = x_span - out_span + case.out_dtype.itemsize  # out's head ends over the input's tail
    for shift in (forward, forward + 1, -case.out_dtype.itemsize):
        check(case, Overlap(shift, 1, 1), shift & 0xFFFF)


def test_exact_in_place_of_a_short_tensor_is_not_copied() -> None:
    """The exact in-place alias stays in place (no packed copy of ``out``), short tensors' tails included."""
    x = np.random.default_rng(5).integers(-100, 100, 65539).astype(np.int8)
    expected = np.clip(x, np.int8(-30), np.int8(50))
    staged = []
    real = placement._padded_empty

    def counting(device: dml.Device, shape: tuple[int, ...], dtype: np.dtype) -> Any:
        staged.append(shape)
        return real(device, shape, dtype)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(placement, "_padded_empty", counting)
        assert dml.clip(x, -30, 50, out=x) is x
    assert np.array_equal(x, expected)
    assert all(np.prod(shape) <= 4 for shape in staged), staged  # the tail's few elements alone


def test_scale_and_zero_point_under_out() -> None:
    """Operands other than the input: a DEQUANTIZE_LINEAR scale and zero point of the input's shape, laid in
    the memory ``out`` covers, read as they were before the call (a short input's tail run apart too)."""
    for n in (40, 65539):
        rng = np.random.default_rng(n)
        x = rng.integers(-100, 100, n).astype(np.int8)
        raw = np.zeros(6 * n + 64, np.uint8)
        scale = raw[16:16 + 4 * n].view(np.float32)
        zero_point = raw[16 + 4 * n:16 + 5 * n].view(np.int8)
        # out one element before the scale; one after (over the zero point's first bytes); over the zero point
        for start in (12, 20, 16 + n + 4, 16 + n + 5):
            scale[...] = rng.integers(1, 5, n) / 4
            zero_point[...] = rng.integers(-3, 4, n)
            expected = (x.astype(np.int64) - zero_point).astype(np.float32) * scale
            out = np.ndarray((n,), np.float32, buffer=raw, offset=start)
            dml.dequantize_linear(x, scale, zero_point, out=out)
            assert np.array_equal(out, expected), (n, start)
