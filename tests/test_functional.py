"""The functional API on NumPy arrays: views described by strides, out=, broadcasting, padding to 4-D."""

from __future__ import annotations

import math

import numpy as np
import pytest

import opendml as dml
from tests.elementwise_oracle import dequantize_element, same_value


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(7)


def test_clip_on_views_matches_numpy_and_keeps_kind(rng: np.random.Generator) -> None:
    base = rng.standard_normal((6, 8, 5)).astype(np.float32)
    for view in (base, base[::2, 1:7:3], base.transpose(2, 0, 1), base[:, ::-1], base[..., 3]):
        result = dml.clip(view, -0.5, 0.75)
        assert isinstance(result, np.ndarray) and result.shape == view.shape and result.dtype == np.float32
        assert np.array_equal(result, np.clip(view, np.float32(-0.5), np.float32(0.75)))
        assert result.flags.c_contiguous


def test_out_parameter_writes_only_the_view(rng: np.random.Generator) -> None:
    x = rng.integers(-100, 100, (4, 6)).astype(np.int16)
    canvas = np.full((4, 12), 999, np.int16)
    view = canvas[:, ::2]
    returned = dml.clip(x, -10, 10, out=view)
    assert returned is view
    assert np.array_equal(canvas[:, ::2], np.clip(x, -10, 10)) and (canvas[:, 1::2] == 999).all()


def test_in_place_through_out(rng: np.random.Generator) -> None:
    x = rng.standard_normal(1000).astype(np.float16)
    expected = np.maximum(x, np.float16(0.25))
    dml.threshold(x, 0.25, out=x)
    assert np.array_equal(x, expected)


def test_partial_overlap_through_out_reads_every_input_before_writing() -> None:
    x = np.arange(64, dtype=np.float32)
    expected = x.copy()
    expected[16:48] = np.clip(x[:32], np.float32(0), np.float32(20))  # NumPy reads all of x[:32] first
    dml.clip(x[:32], 0, 20, out=x[16:48])
    assert np.array_equal(x, expected)


def test_out_must_match(rng: np.random.Generator) -> None:
    x = np.zeros(4, np.float32)
    with pytest.raises(dml.InvalidArgumentError, match=r"out must have shape \(4,\) and dtype float32"):
        dml.clip(x, 0, 1, out=np.zeros(4, np.float16))
    readonly = np.zeros(4, np.float32)
    readonly.flags.writeable = False
    with pytest.raises(dml.InvalidArgumentError, match=r"out must be writeable"):
        dml.clip(x, 0, 1, out=readonly)


def test_integer_clip_uses_exact_typed_bounds_when_the_level_allows() -> None:
    x = np.array([2147483646, 2147483647, -7], np.int32)
    assert dml.clip(x, -6.9, 2147483645).tolist() == [2147483645, 2147483645, -6]
    old = dml.Device("cpu", "3_0")  # no CLIP1: the FLOAT bound 2147483645 rounds to 2^31 and saturates
    assert dml.clip(x, -6.9, 2147483645, device=old).tolist() == [2147483646, 2147483647, -6]
    big = np.array([2**63 - 1, -(2**63)], np.int64)
    assert dml.clip(big, -(2**63) + 5, 2**63 - 2).tolist() == [2**63 - 2, -(2**63) + 5]
    assert dml.clip(np.array([3, 250], np.uint8), -5, 1e9).tolist() == [3, 250]
    with pytest.raises(dml.InvalidArgumentError, match=r"ELEMENT_WISE_CLIP1: Min must not be NaN on a INT32 tensor"):
        dml.clip(x, float("nan"), 1)


def test_clip_with_one_side_open() -> None:
    x = np.array([-5, 0, 5], np.float32)
    assert dml.clip(x, None, 1).tolist() == [-5, 0, 1]
    assert dml.clip(x, -1, None).tolist() == [-1, 0, 5]
    assert dml.clip(np.array([-5, 5], np.int8), None, 1).tolist() == [-5, 1]


def test_scale_bias_as_pair() -> None:
    x = np.array([1, 2, 3], np.float32)
    assert dml.clip(x, 0, 5, scale_bias=(2.0, -1.0)).tolist() == [1, 3, 5]
    assert dml.threshold(x, 2, scale_bias=dml.ScaleBias(-1, 4)).tolist() == [3, 2, 2]


def test_levels_that_need_four_dimensions_get_leading_ones() -> None:
    device = dml.Device("cpu", "1_0")
    x = np.array([[-2.0, 0.5], [3.0, -0.25]], np.float32)
    assert dml.clip(x, -1, 1, device=device).tolist() == [[-1, 0.5], [1, -0.25]]
    assert dml.threshold(np.float32(-3), 0, device=device) == 0
    q = np.array([1, 2, 3], np.uint8)
    assert dml.dequantize_linear(q, np.float32(2), np.uint8(1), device=device).tolist() == [0, 2, 4]
    with pytest.raises(dml.UnsupportedFeatureLevelError, match=r"DimensionCount must be 4 at feature level 1_0; got 5"):
        dml.clip(np.zeros((1, 1, 1, 1, 2), np.float32), 0, 1, device=device)
    t = dml.TensorDesc("FLOAT32", [2])
    with pytest.raises(dml.UnsupportedFeatureLevelError):  # the low-level API never reshapes
        device.create_operator(dml.ElementWiseClipDesc(t, t, 0, 1))


def test_dequantize_broadcasts_without_copies(rng: np.random.Generator) -> None:
    x = rng.integers(0, 256, (5, 4, 3)).astype(np.uint8)
    scale = rng.random(3).astype(np.float32)  # per channel on the last axis
    zero_point = rng.integers(0, 256, (5, 1, 1)).astype(np.uint8)
    result = dml.dequantize_linear(x, scale, zero_point)
    assert result.dtype == np.float32 and result.shape == x.shape
    half_scale = scale.astype(np.float16)
    half = dml.dequantize_linear(x, half_scale)
    assert half.dtype == np.float16 and half.shape == x.shape
    for (i, j, k), value in np.ndenumerate(x):  # the model, element by element, with the broadcast read by hand
        expected = dequantize_element(int(value), float(scale[k]), int(zero_point[i, 0, 0]), "FLOAT32")
        assert same_value(float(result[i, j, k]), expected), (i, j, k)
        expected_half = dequantize_element(int(value), float(half_scale[k]), None, "FLOAT16")
        assert same_value(float(half[i, j, k]), expected_half), (i, j, k)


def test_dequantize_broadcast_values_by_hand() -> None:
    x = np.array([[0, 255], [128, 3]], np.uint8)
    scale = np.array([0.5, -0.25], np.float32)  # per column
    zero_point = np.array([[128], [3]], np.uint8)  # per row
    result = dml.dequantize_linear(x, scale, zero_point)
    assert result.tolist() == [[-64.0, -31.75], [62.5, -0.0]] and np.signbit(result[1, 1])  # 0 * -0.25 is -0.0
    assert dml.dequantize_linear(x, scale.astype(np.float16)).tolist() == [[0.0, -63.75], [64.0, -0.75]]


def test_dequantize_without_zero_point_below_6_2_passes_an_explicit_zero() -> None:
    x = np.array([-3, 4], np.int8)
    for level in ("6_0", "6_4"):
        assert dml.dequantize_linear(x, 0.5, device=dml.Device("cpu", level)).tolist() == [-1.5, 2.0]
    with pytest.raises(dml.InvalidArgumentError, match=r"ZeroPointTensor must hold values of the input's type"):
        dml.dequantize_linear(x, 0.5, 300)


def test_argmin_axes_forms() -> None:
    x = np.array([[[5, 1], [0, 7]], [[2, 2], [9, -1]]], np.int32)
    assert dml.argmin(x).tolist() == [[[7]]]
    assert dml.argmin(x, -1).tolist() == [[[1], [0]], [[0], [1]]]
    assert dml.argmin(x, (0, 2)).tolist() == [[[1], [3]]]
    decreasing = dml.argmin(x, [2, 0], axis_direction="DECREASING", output_type="UINT32")
    assert decreasing.dtype == np.uint32 and decreasing.tolist() == [[[1], [3]]]  # rows [5, 1, 2, 2], [0, 7, 9, -1]
    ties = np.array([[3, 1, 1], [2, 2, 0]], np.int16)
    assert dml.argmin(ties, 1, axis_direction="DECREASING", output_type="UINT32").tolist() == [[2], [2]]
    assert dml.argmin(ties, 1).tolist() == [[1], [2]]
    assert dml.argmin(x, 1, output_type=dml.DataType.INT32).tolist() == [[[1, 0]], [[0, 1]]]
    with pytest.raises(dml.InvalidArgumentError, match=r"ARGMIN: Axes\[0\] must be an integer in \[-3, 2\]; got 3\."):
        dml.argmin(x, 3)
    with pytest.raises(dml.InvalidArgumentError, match=r"ARGMIN: Axes must not repeat an axis"):
        dml.argmin(x, [1, -2])


def test_argmin_out_parameter(rng: np.random.Generator) -> None:
    x = rng.standard_normal((5, 7)).astype(np.float32)
    canvas = np.full((5, 3), 99, np.int64)
    view = canvas[:, 1:2]  # strided: only this column is written
    assert dml.argmin(x, 1, out=view) is view
    assert view[:, 0].tolist() == np.argmin(x, axis=1).tolist() and (canvas[:, [0, 2]] == 99).all()
    small = np.zeros((1, 7), np.uint32)
    dml.argmin(x, 0, axis_direction="DECREASING", output_type="UINT32", out=small)
    assert small[0].tolist() == (4 - np.argmin(x[::-1], axis=0)).tolist()
    scalar = np.zeros((), np.int64)
    assert dml.argmin(np.float32(3), out=scalar) is scalar and scalar == 0
    with pytest.raises(dml.InvalidArgumentError, match=r"ARGMIN: out must have shape \(5, 1\) and dtype int64"):
        dml.argmin(x, 1, out=np.zeros((5, 1), np.int32))
    with pytest.raises(dml.InvalidArgumentError, match=r"ARGMIN: out must have shape \(5, 1\) and dtype int64"):
        dml.argmin(x, 1, out=np.zeros(5, np.int64))


def test_empty_and_scalar_arrays() -> None:
    empty = np.zeros((0, 3), np.float32)
    assert dml.clip(empty, 0, 1).shape == (0, 3)
    assert dml.clip(np.float32(7), 0, 1) == 1 and dml.clip(np.float32(7), 0, 1).shape == ()
    assert dml.argmin(np.float32(7)).shape == ()
    with pytest.raises(dml.InvalidArgumentError):  # still validated
        dml.clip(np.zeros((0, 3), np.int8), float("nan"), 1)


def test_unsupported_dtypes_are_clear_errors() -> None:
    with pytest.raises(dml.InvalidArgumentError, match=r"ELEMENT_WISE_CLIP: InputTensor.DataType must be one of .*got FLOAT64"):
        dml.clip(np.zeros(3), 0, 1)
    with pytest.raises(dml.InvalidArgumentError, match=r"InputTensor.DataType must be one of .*; got bool\."):
        dml.clip(np.zeros(3, bool), 0, 1)


def test_odd_byte_sizes_are_staged(rng: np.random.Generator) -> None:
    # 3 bytes of UINT8 round up to 4: the array cannot be bound directly, so it goes through a padded copy.
    x = np.array([1, 200, 30], np.uint8)
    out = np.zeros(3, np.uint8)
    dml.clip(x, 10, 100, out=out)
    assert out.tolist() == [10, 100, 30]
    big_endian = np.array([1.5, -2.5], ">f4")
    assert dml.clip(big_endian, -2, 2).tolist() == [1.5, -2.0]


def test_view_with_a_negative_stride_on_a_size_1_axis() -> None:
    x = np.arange(3, dtype=np.float32)[0::-1]  # shape (1,), strides (-4,)
    assert dml.clip(x, -1.0, 1.0).tolist() == [0.0]
    y = np.arange(6, dtype=np.float32).reshape(3, 2)[:1][::-1]
    assert dml.threshold(y, 0.5).tolist() == [[0.5, 1.0]]


def test_cached_operators_tell_negative_zero_from_zero() -> None:
    device = dml.Device()
    x = np.zeros(4, np.float32)
    assert np.signbit(dml.clip(x, 0.0, -0.0, scale_bias=(1.0, 1.0), device=device)).all()  # Max = -0.0
    assert not np.signbit(dml.clip(x, 0.0, 0.0, scale_bias=(1.0, 1.0), device=device)).any()  # Max = +0.0
    minus_one = np.array([-1.0], np.float32)
    assert not np.signbit(dml.threshold(minus_one, 0.0, device=device)).any()
    assert np.signbit(dml.threshold(minus_one, -0.0, device=device)).all()


def test_functional_modules_stay_small_and_keep_their_names() -> None:
    """Each module of the functional API holds one concept, under the project's ~400 lines; the public
    functions and the helpers opendml.tracing traces with stay reachable from ``opendml.functional``."""
    import importlib
    import pathlib

    functional = importlib.import_module("opendml.functional")
    sizes = {p.name: len(p.read_text().splitlines()) for p in pathlib.Path(functional.__file__).parent.glob("*.py")}
    assert {name for name, size in sizes.items() if size > 400} == set(), sizes
    for name in ("argmax", "argmin", "clip", "default_device", "dequantize_linear", "quantize_linear", "threshold",
                 "unravel_index", "_as_array", "_broadcast", "_check_output_type", "_leading_ones",
                 "_normalize_axes", "_on_gpu", "_padded_empty", "_place_input", "_plain", "_quantize_scale",
                 "_quantize_zero_point", "_resolve_device", "_scale", "_to_host", "_view_as",
                 "_zero_point", "BufferBinding"):
        assert callable(getattr(functional, name)), name
    assert functional.clip is dml.clip and functional.argmin is dml.argmin and functional.argmax is dml.argmax
    assert functional.quantize_linear is dml.quantize_linear and functional.unravel_index is dml.unravel_index


def test_threshold_on_64_bit_integers_runs_as_clip1(monkeypatch: pytest.MonkeyPatch) -> None:
    """ELEMENT_WISE_THRESHOLD takes no INT64 or UINT64 tensor: CLIP1 with Max the type's largest value gives
    THRESHOLD's bits (its FLOAT Min rounded to float32, truncated toward zero, saturated)."""
    i64 = np.array([-(2**63), -6, -5, 0, 7, 2**63 - 1], np.int64)
    assert dml.threshold(i64, -5.9).tolist() == [-5, -5, -5, 0, 7, 2**63 - 1]  # -5.9 truncates to -5
    assert dml.threshold(i64, float(2**63)).tolist() == [2**63 - 1] * 6  # saturated
    assert dml.threshold(i64, -math.inf).tolist() == i64.tolist()
    assert dml.threshold(np.array([2**40, 2**40 + 1], np.int64), 2**40 + 1).tolist() == [2**40, 2**40 + 1]  # a FLOAT
    u64 = np.array([0, 3, 2**63, 2**64 - 1], np.uint64)
    assert dml.threshold(u64, -7).tolist() == u64.tolist()  # a negative Min becomes 0
    assert dml.threshold(u64, 2**63 + 1).tolist() == [2**63, 2**63, 2**63, 2**64 - 1]  # float32(2^63 + 1) = 2^63
    assert dml.threshold(u64, math.inf).tolist() == [2**64 - 1] * 4
    small = np.arange(-40, 40, 7, dtype=np.int32)
    for bound in (-3.7, 0.5, 12.0, 39.99, -40.5, -1e10):  # the bits of THRESHOLD on a type it takes
        assert dml.threshold(small.astype(np.int64), bound).tolist() == dml.threshold(small, bound).tolist(), bound
    seen: list[object] = []
    original = dml.Device.compiled
    monkeypatch.setattr(dml.Device, "compiled", lambda self, desc: seen.append(desc) or original(self, desc))
    x = np.array([5, -9], np.int64)
    assert dml.threshold(x, -2.5).tolist() == [5, -2]
    assert [(type(d).__name__, d.min, d.max) for d in seen] == [("ElementWiseClip1Desc", -2, 2**63 - 1)]
    assert dml.threshold(x, -2.5).tolist() == [5, -2] and len(seen) == 1  # the cached fast path: no description


def test_threshold_on_64_bit_integers_keeps_thresholds_rules() -> None:
    x = np.array([1, 2], np.uint64)
    with pytest.raises(dml.InvalidArgumentError, match=r"^ELEMENT_WISE_THRESHOLD: Min must not be NaN on a UINT64"):
        dml.threshold(x, math.nan)
    with pytest.raises(dml.InvalidArgumentError, match=r"^ELEMENT_WISE_THRESHOLD: ScaleBias must be absent on integer "
                       r"tensors; got ScaleBias on UINT64\.$"):
        dml.threshold(x, 0, scale_bias=(1.0, 0.0))
    with pytest.raises(dml.InvalidArgumentError, match=r"^ELEMENT_WISE_THRESHOLD: Min must be a number"):
        dml.threshold(x, "1")  # type: ignore[arg-type]
    # Below 5_0 there is no CLIP1: THRESHOLD's own refusal of the type.
    with pytest.raises(dml.InvalidArgumentError, match=r"^ELEMENT_WISE_THRESHOLD: InputTensor.DataType .* at "
                       r"feature level 4_1; got UINT64\.$"):
        dml.threshold(x, 0, device=dml.Device("cpu", "4_1"))
    assert dml.threshold(x, 1.5, device=dml.Device("cpu", "5_0")).tolist() == [1, 2]
