"""SPEC 4-8, rule by rule, with expected values worked out by hand (or by IEEE arithmetic on scalars)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import opendml as dml
from tests.helpers import bits, run

F32, F16 = np.float32, np.float16


def clip(device: dml.Device, values: list, data_type: str, lo: float, hi: float, scale_bias=None) -> np.ndarray:
    t = dml.TensorDesc(data_type, [len(values)])
    array = np.array(values, dtype=dml.DataType.parse(data_type).numpy)
    return run(device, dml.ElementWiseClipDesc(t, t, lo, hi, scale_bias), [array])


def threshold(device: dml.Device, values: list, data_type: str, lo: float, scale_bias=None) -> np.ndarray:
    t = dml.TensorDesc(data_type, [len(values)])
    array = np.array(values, dtype=dml.DataType.parse(data_type).numpy)
    return run(device, dml.ElementWiseThresholdDesc(t, t, lo, scale_bias), [array])


def argmin(device: dml.Device, matrix: np.ndarray, axes: list[int], direction: str = "INCREASING",
           output_type: str = "UINT32") -> np.ndarray:
    x = dml.TensorDesc(dml.DataType.parse(matrix.dtype), matrix.shape)
    out_sizes = [1 if k in axes else n for k, n in enumerate(matrix.shape)]
    out = dml.TensorDesc(output_type, out_sizes)
    return run(device, dml.ArgMinDesc(x, out, axes, direction), [matrix])


# --- ARGMIN: the seed page's examples -------------------------------------------------------------------

SEED = np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], np.float32)


@pytest.mark.parametrize(("axes", "expected"), [([0], [[0, 1, 2]]), ([1], [[0], [1], [0]]), ([0, 1], [[4]])])
def test_argmin_seed_examples(device: dml.Device, axes: list[int], expected: list) -> None:
    assert argmin(device, SEED, axes).tolist() == expected


@pytest.mark.parametrize(("direction", "expected"), [("INCREASING", 0), ("DECREASING", 4)])
def test_argmin_seed_ties(device: dml.Device, direction: str, expected: int) -> None:
    assert argmin(device, np.array([1, 2, 3, 2, 1], np.float32), [0], direction).tolist() == [expected]


def test_argmin_axes_order_does_not_matter_and_index_is_row_major(device: dml.Device) -> None:
    x = np.full((2, 3, 4), 9, np.int16)
    x[1, 1, 2] = -1  # flattened over axes (0, 2): 1 * 4 + 2 = 6
    assert argmin(device, x, [2, 0]).reshape(-1).tolist() == [9 * 0 + 0, 6, 0]


def test_argmin_ignores_nan_and_all_nan_rows(device: dml.Device) -> None:
    nan = math.nan
    x = np.array([[nan, 3, 1, nan, 1], [nan, nan, nan, nan, nan], [nan, math.inf, nan, nan, nan]], np.float32)
    assert argmin(device, x, [1]).reshape(-1).tolist() == [2, 0, 1]
    assert argmin(device, x, [1], "DECREASING").reshape(-1).tolist() == [4, 4, 1]


def test_argmin_negative_zero_ties_positive_zero(device: dml.Device) -> None:
    x = np.array([0.0, -0.0, 0.0], np.float16)
    assert argmin(device, x, [0]).tolist() == [0]
    assert argmin(device, x, [0], "DECREASING").tolist() == [2]


def test_argmin_64_bit_integers(device: dml.Device) -> None:
    x = np.array([2**62, -(2**63), 5, -(2**63)], np.int64)
    assert argmin(device, x, [0], output_type="INT64").tolist() == [1]
    assert argmin(device, np.array([2**64 - 1, 2**64 - 2], np.uint64), [0]).tolist() == [1]


# --- CLIP: the remark on casting, rounding and saturation of bounds --------------------------------------

def test_clip_integer_bounds_truncate_toward_zero(device: dml.Device) -> None:
    assert clip(device, [-5, -1, 0, 2, 3], "INT32", -1.9, 2.9).tolist() == [-1, -1, 0, 2, 2]


def test_clip_float16_bounds_round_to_nearest_even(device: dml.Device) -> None:
    out = clip(device, [0.0, 1.0], "FLOAT16", 0.1, 0.3)
    assert bits(out).tolist() == bits(np.array([F16(F32(0.1)), F16(F32(0.3))])).tolist()


def test_clip_float32_bounds_are_float32(device: dml.Device) -> None:
    out = clip(device, [0.0, 1.0], "FLOAT32", 0.1, 0.3)
    assert out.tolist() == [float(F32(0.1)), float(F32(0.3))]


@pytest.mark.parametrize(("data_type", "lo", "hi", "values", "expected"), [
    ("UINT8", -5.0, 300.0, [0, 7, 255], [0, 7, 255]),
    ("INT8", -1000.0, 1000.0, [-128, 127], [-128, 127]),
    ("INT8", -math.inf, math.inf, [-128, 127], [-128, 127]),
    ("UINT16", 70000.0, math.inf, [0, 65535], [65535, 65535]),
    ("INT16", -math.inf, -40000.0, [5, -32768], [-32768, -32768]),
])
def test_clip_integer_bounds_saturate(device: dml.Device, data_type: str, lo: float, hi: float,
                                      values: list, expected: list) -> None:
    assert clip(device, values, data_type, lo, hi).tolist() == expected


def test_clip_float_bound_cannot_hold_large_int32_but_clip1_can(device: dml.Device) -> None:
    t = dml.TensorDesc("INT32", [2])
    x = np.array([2147483646, 2147483647], np.int32)
    # CLIP's Max is a FLOAT: 2147483645 rounds to 2147483648, which saturates to 2147483647.
    assert run(device, dml.ElementWiseClipDesc(t, t, 0, 2147483645), [x]).tolist() == [2147483646, 2147483647]
    assert run(device, dml.ElementWiseClip1Desc(t, t, "INT32", 0, 2147483645), [x]).tolist() == [2147483645] * 2


def test_clip1_int64_bounds_are_exact(device: dml.Device) -> None:
    t = dml.TensorDesc("INT64", [3])
    x = np.array([2**62, 2**62 + 2, -(2**63)], np.int64)
    out = run(device, dml.ElementWiseClip1Desc(t, t, "INT64", -(2**62) - 1, 2**62 + 1), [x])
    assert out.tolist() == [2**62, 2**62 + 1, -(2**62) - 1]


def test_clip1_uint64_near_its_limit(device: dml.Device) -> None:
    t = dml.TensorDesc("UINT64", [2])
    x = np.array([2**64 - 1, 3], np.uint64)
    assert run(device, dml.ElementWiseClip1Desc(t, t, "UINT64", 5, 2**64 - 2), [x]).tolist() == [2**64 - 2, 5]


def test_clip1_float16_shared_model(device: dml.Device) -> None:
    t = dml.TensorDesc("FLOAT16", [5])
    out = run(device, dml.ElementWiseClip1Desc(t, t, "FLOAT16", 2, 4), [np.arange(1, 6, dtype=np.float16)])
    assert out.tolist() == [2, 2, 3, 4, 4]


# --- NaN, -0.0, Min > Max ------------------------------------------------------------------------------

@pytest.mark.parametrize("data_type", ["FLOAT32", "FLOAT16"])
def test_nan_elements_propagate(device: dml.Device, data_type: str) -> None:
    assert np.isnan(clip(device, [math.nan], data_type, -1, 1)).all()
    assert np.isnan(clip(device, [math.nan], data_type, 2, 1)).all()
    assert np.isnan(threshold(device, [math.nan], data_type, 0)).all()


@pytest.mark.parametrize("data_type", ["FLOAT32", "FLOAT16"])
def test_nan_bound_bounds_nothing(device: dml.Device, data_type: str) -> None:
    assert clip(device, [-5.0, 5.0], data_type, math.nan, 1.0).tolist() == [-5.0, 1.0]
    assert clip(device, [-5.0, 5.0], data_type, -1.0, math.nan).tolist() == [-1.0, 5.0]
    assert threshold(device, [-5.0, 5.0], data_type, math.nan).tolist() == [-5.0, 5.0]


@pytest.mark.parametrize("data_type", ["FLOAT32", "FLOAT16"])
def test_negative_zero_ties_keep_the_element(device: dml.Device, data_type: str) -> None:
    assert np.signbit(clip(device, [-0.0], data_type, 0.0, 1.0)).all()
    assert not np.signbit(clip(device, [0.0], data_type, -0.0, 1.0)).any()
    assert np.signbit(clip(device, [-0.0], data_type, -1.0, 0.0)).all()
    assert np.signbit(threshold(device, [-0.0], data_type, 0.0)).all()


@pytest.mark.parametrize("data_type", ["FLOAT32", "FLOAT16", "INT8", "UINT32", "INT64"])
def test_min_greater_than_max_gives_min(device: dml.Device, data_type: str) -> None:
    assert clip(device, [0, 2, 5, 100], data_type, 3, 1).tolist() == [3, 3, 3, 3]


def test_infinite_elements_are_clipped(device: dml.Device) -> None:
    assert clip(device, [-math.inf, math.inf], "FLOAT32", -1, 1).tolist() == [-1, 1]


# --- ScaleBias: float32, no fused multiply-add, one rounding to FLOAT16, denormals kept -----------------

def test_scale_bias_is_not_fused(device: dml.Device) -> None:
    x, scale, bias = 1 + 2**-12, 1 + 2**-12, -(1 + 2**-11)
    # x * scale = 1 + 2^-11 + 2^-24 rounds (tie to even) to 1 + 2^-11 in float32, so the sum is 0 exactly;
    # a fused multiply-add would give 2^-24.
    out = clip(device, [x], "FLOAT32", -1, 1, dml.ScaleBias(scale, bias))
    assert out.tolist() == [0.0]


def test_float16_is_computed_in_float32_and_rounded_once(device: dml.Device) -> None:
    # 1 * (1 + 2^-11) + 2^-11 = 1 + 2^-10 in float32; rounding to FLOAT16 after each step would give 1.0.
    out = clip(device, [1.0], "FLOAT16", -8, 8, dml.ScaleBias(1 + 2**-11, 2**-11))
    assert out.tolist() == [1 + 2**-10]


def test_scale_and_bias_are_float32_fields(device: dml.Device) -> None:
    out = threshold(device, [1.0], "FLOAT32", -8, dml.ScaleBias(0.1, 0.2))
    assert out.tolist() == [float(F32(F32(1.0) * F32(0.1)) + F32(0.2))]


def test_denormals_are_kept(device: dml.Device) -> None:
    tiny = 2.0**-148
    out = clip(device, [tiny, 2.0**-149], "FLOAT32", -1, 1, dml.ScaleBias(0.5, 0.0))
    assert out.tolist() == [2.0**-149, 0.0]  # 2^-150 rounds to even (0)
    assert clip(device, [2.0**-24], "FLOAT16", 0, 1).tolist() == [2.0**-24]


@pytest.mark.parametrize("data_type", ["INT32", "UINT8", "INT64"])
def test_scale_bias_on_integers_is_rejected(device: dml.Device, data_type: str) -> None:
    t = dml.TensorDesc(data_type, [4])
    for desc in (dml.ElementWiseClipDesc(t, t, 0, 1, dml.ScaleBias(1, 0)),
                 dml.ElementWiseThresholdDesc(t, t, 0, (2.0, 1.0)),
                 dml.ElementWiseClip1Desc(t, t, data_type, 0, 1, dml.ScaleBias(1, 0))):
        with pytest.raises(dml.InvalidArgumentError, match=r"ScaleBias must be absent on integer tensors"):
            device.create_operator(desc)


@pytest.mark.parametrize("field", ["Min", "Max"])
def test_nan_bound_on_integer_tensor_is_rejected(device: dml.Device, field: str) -> None:
    t = dml.TensorDesc("INT16", [4])
    lo, hi = (math.nan, 1.0) if field == "Min" else (0.0, math.nan)
    with pytest.raises(dml.InvalidArgumentError, match=rf"ELEMENT_WISE_CLIP: {field} must not be NaN"):
        device.create_operator(dml.ElementWiseClipDesc(t, t, lo, hi))
    if field == "Min":
        with pytest.raises(dml.InvalidArgumentError, match="ELEMENT_WISE_THRESHOLD: Min must not be NaN"):
            device.create_operator(dml.ElementWiseThresholdDesc(t, t, math.nan))


# --- THRESHOLD --------------------------------------------------------------------------------------------

def test_threshold_is_max_not_thresholded_relu(device: dml.Device) -> None:
    assert threshold(device, [-3, 1, 5], "INT32", 2.5).tolist() == [2, 2, 5]
    assert threshold(device, [0, 200], "UINT8", -7).tolist() == [0, 200]


# --- DEQUANTIZE_LINEAR -------------------------------------------------------------------------------------

def dequantize(device: dml.Device, x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray | None) -> np.ndarray:
    n = x.size
    out_type = dml.DataType.parse(scale.dtype)
    desc = dml.ElementWiseDequantizeLinearDesc(
        dml.TensorDesc(dml.DataType.parse(x.dtype), [n]), dml.TensorDesc(out_type, [n]),
        None if zero_point is None else dml.TensorDesc(dml.DataType.parse(x.dtype), [n]),
        dml.TensorDesc(out_type, [n]))
    return run(device, desc, [x, scale, zero_point])


def test_dequantize_subtraction_is_exact(device: dml.Device) -> None:
    x = np.array([-128, 127], np.int8)
    zp = np.array([127, -128], np.int8)
    assert dequantize(device, x, np.ones(2, np.float32), zp).tolist() == [-255, 255]
    big = np.array([4294967295, 0], np.uint32)
    out = dequantize(device, big, np.ones(2, np.float32), np.array([0, 4294967295], np.uint32))
    assert out.tolist() == [4294967296.0, -4294967296.0]  # exact difference, then rounded to float32
    x32 = np.array([-(2**31)], np.int32)
    assert dequantize(device, x32, np.ones(1, np.float32), np.array([2**31 - 1], np.int32)).tolist() == [
        -4294967296.0]


def test_dequantize_rounds_difference_then_product(device: dml.Device) -> None:
    x = np.array([16777217], np.int32)  # 2^24 + 1 rounds to 2^24 in float32 (tie to even)
    assert dequantize(device, x, np.array([3.0], np.float32), None).tolist() == [float(F32(16777216.0 * 3))]
    out = dequantize(device, np.array([3], np.uint8), np.array([0.1], np.float32), np.array([0], np.uint8))
    assert out.tolist() == [float(F32(F32(3) * F32(0.1)))]


def test_dequantize_float16_output_is_rounded_once_from_float32(device: dml.Device) -> None:
    scale = np.array([F16(0.1)], np.float16)
    out = dequantize(device, np.array([7], np.int16), scale, np.array([0], np.int16))
    assert bits(out).tolist() == bits(np.array([F16(F32(7) * F32(scale[0]))])).tolist()


def test_dequantize_zero_nan_and_infinite_scales(device: dml.Device) -> None:
    x = np.array([5, 0, 2], np.uint8)
    zp = np.array([2, 0, 2], np.uint8)
    assert dequantize(device, x, np.zeros(3, np.float32), zp).tolist() == [0, 0, 0]
    out = dequantize(device, x, np.array([math.inf] * 3, np.float32), zp)
    assert out[0] == math.inf and np.isnan(out[1:]).all()  # 0 * inf is NaN, as IEEE says
    assert np.isnan(dequantize(device, x, np.array([math.nan] * 3, np.float32), zp)).all()


def test_dequantize_absent_zero_point_means_zero(device: dml.Device) -> None:
    x = np.array([200, 3], np.uint8)
    assert dequantize(device, x, np.array([0.5, 2.0], np.float32), None).tolist() == [100.0, 6.0]


# --- ARGMIN output type capacity --------------------------------------------------------------------------

@pytest.mark.parametrize(("output_type", "elements", "ok"), [
    ("INT32", 2**31, True), ("INT32", 2**31 + 1, False), ("UINT32", 2**32 - 1, True), ("INT64", 2**32 - 1, True)])
def test_argmin_output_type_must_hold_every_index(output_type: str, elements: int, ok: bool) -> None:
    device = dml.Device()
    x = dml.TensorDesc("INT8", [elements])
    desc = dml.ArgMinDesc(x, dml.TensorDesc(output_type, [1]), [0])
    if ok:
        device.create_operator(desc)
    else:
        with pytest.raises(dml.InvalidArgumentError, match=r"ARGMIN: OutputTensor.DataType must hold every index"):
            device.create_operator(desc)
