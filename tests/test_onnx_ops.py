"""Each ONNX operator, at every opset version, against ONNX's reference evaluator (or values worked out
by hand where the reference has no implementation of that version), and how each maps onto opendml."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("onnx", reason="the ONNX front end needs the onnx extra (pip install 'opendml[onnx]')")

import onnx
from onnx import TensorProto
from onnx_models import feeds, reference, single

import opendml as dml
from opendml.onnx import Session, UnsupportedModelError, run

RNG = np.random.default_rng(20240607)
X = np.array([-np.inf, -3.5, -1.0, -0.0, 0.0, 0.75, 2.5, np.inf, np.nan], np.float32)
INTEGER_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


def assert_same(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    """Same names, dtypes, shapes and values (NaN matching NaN)."""
    assert list(got) == list(want)
    for name, expected in want.items():
        assert got[name].dtype == expected.dtype, name
        assert got[name].shape == expected.shape, name
        np.testing.assert_array_equal(got[name], expected, err_msg=name)


def check_against_reference(model: Any, arrays: dict[str, np.ndarray | None], **run_kwargs: Any) -> None:
    fed = feeds(model, arrays)
    assert_same(run(model, fed, **run_kwargs), reference(model, fed))


def first_step(model: Any, arrays: dict[str, np.ndarray | None], device: dml.Device | None = None) -> Any:
    return Session(model, device).plan(feeds(model, arrays)).steps[0]


def unsupported(model: Any, arrays: dict[str, np.ndarray | None], device: dml.Device | None = None) -> str:
    """The message of the UnsupportedModelError that running the model raises."""
    with pytest.raises(UnsupportedModelError) as caught:
        run(model, feeds(model, arrays), device=device)
    return str(caught.value)


# ---------------------------------------------------------------------------------------------- Clip

@pytest.mark.parametrize("attributes", [{}, {"min": -1.0}, {"max": 2.0}, {"min": -1.0, "max": 2.0},
                                        {"min": 2.0, "max": -1.0}])
def test_clip_6_takes_attributes_defaulting_to_flt_max(attributes: dict[str, float]) -> None:
    # The default bounds are -FLT_MAX and FLT_MAX: infinities become them.
    check_against_reference(single("Clip", 6, {"x": X}, **attributes), {"x": X})


@pytest.mark.parametrize(("attributes", "expected"), [
    ({}, X),  # Clip-1 has no default bounds: an absent bound bounds nothing
    ({"min": -1.0}, [-1, -1, -1, -0.0, 0, 0.75, 2.5, np.inf, np.nan]),
    ({"max": 0.5}, [-np.inf, -3.5, -1, -0.0, 0, 0.5, 0.5, 0.5, np.nan]),
    ({"min": 1.0, "max": -2.0}, [-2] * 8 + [np.nan]),  # min > max: max
])
def test_clip_1_bounds_only_where_given(attributes: dict[str, float], expected: list[float]) -> None:
    # ONNX's reference has no Clip-1: the expected values are worked out by hand.
    model = single("Clip", 1, {"x": X}, output=(TensorProto.FLOAT, [9]), **attributes)  # no inference for Clip-1
    (got,) = run(model, {"x": X}).values()
    np.testing.assert_array_equal(got, np.array(expected, np.float32))


BOUNDS = [(-1.0, 2.0), (-1.0, None), (None, 0.5), (None, None), (2.0, 1.0), (0.5, 0.5)]


@pytest.mark.parametrize("opset", [11, 12, 13])
@pytest.mark.parametrize(("low", "high"), BOUNDS)
@pytest.mark.parametrize("constant", [False, True], ids=["graph-input-bounds", "initializer-bounds"])
def test_clip_11_and_later_take_bounds_as_inputs(opset: int, low: float | None, high: float | None,
                                                 constant: bool) -> None:
    arrays = {"x": X, "min": None if low is None else np.float32(low),
              "max": None if high is None else np.float32(high)}
    model = single("Clip", opset, arrays, constants={"min", "max"} if constant else ())
    check_against_reference(model, arrays)


def test_clip_min_greater_than_max_gives_max() -> None:
    arrays = {"x": X, "min": np.float32(2), "max": np.float32(1)}
    (got,) = run(single("Clip", 13, arrays), arrays).values()
    np.testing.assert_array_equal(got, np.array([1] * 8 + [np.nan], np.float32))


def test_clip_float16() -> None:
    x = RNG.normal(0, 3, (4, 5)).astype(np.float16)
    arrays = {"x": x, "min": np.float16(-1.5), "max": np.float16(2.25)}
    check_against_reference(single("Clip", 13, arrays), arrays)


@pytest.mark.parametrize("opset", [12, 13])
@pytest.mark.parametrize("dtype", INTEGER_DTYPES)
def test_clip_integers_map_onto_clip1(opset: int, dtype: type) -> None:
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max, (3, 7), dtype=dtype, endpoint=True)
    third = (int(info.max) - int(info.min)) // 3
    arrays = {"x": x, "min": dtype(int(info.min) + third), "max": dtype(int(info.max) - third)}
    model = single("Clip", opset, arrays)
    check_against_reference(model, arrays)
    assert first_step(model, arrays).operator.operator.name == "ELEMENT_WISE_CLIP1"


def test_clip_int64_bounds_are_exact() -> None:
    # 2**40 + 1 has no float32: CLIP's FLOAT fields would round it, CLIP1's typed bounds keep it.
    x = np.array([2**40, 2**40 + 1, 2**40 + 2, -(2**50)], np.int64)
    arrays = {"x": x, "min": np.int64(-(2**40) - 1), "max": np.int64(2**40 + 1)}
    check_against_reference(single("Clip", 13, arrays), arrays)


def test_clip_integers_below_level_5_0_use_clip_with_exact_float_bounds() -> None:
    device = dml.Device("cpu", "4_1")
    x = np.array([-100, -3, 0, 3, 100], np.int32)
    arrays = {"x": x, "min": np.int32(-3), "max": np.int32(50)}
    model = single("Clip", 13, arrays)
    check_against_reference(model, arrays, device=device)
    assert first_step(model, arrays, device).operator.operator.name == "ELEMENT_WISE_CLIP"
    arrays["max"] = np.int32(2**24 + 1)
    assert "must be exact in float32" in unsupported(model, arrays, device)


def test_clip_floats_map_onto_clip() -> None:
    arrays = {"x": X, "min": np.float32(0), "max": np.float32(1)}
    assert first_step(single("Clip", 13, arrays), arrays).operator.operator.name == "ELEMENT_WISE_CLIP"


def test_clip_nan_bound_is_unsupported() -> None:
    arrays = {"x": X, "min": np.float32(np.nan), "max": np.float32(1)}
    assert "min must not be NaN" in unsupported(single("Clip", 13, arrays), arrays)


def test_clip_bound_must_be_a_scalar() -> None:
    arrays = {"x": X, "min": np.zeros(2, np.float32)}
    model = single("Clip", 13, arrays, output=(TensorProto.FLOAT, [9]))
    assert "Input min must be a scalar" in unsupported(model, arrays)


@pytest.mark.parametrize(("opset", "dtype", "allowed"), [
    (11, np.int32, "FLOAT, FLOAT16"),  # integer types come with Clip-12
    (13, np.float64, "FLOAT, FLOAT16, INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16, UINT8"),
])
def test_clip_types_opendml_does_not_map(opset: int, dtype: type, allowed: str) -> None:
    arrays = {"x": np.zeros(3, dtype)}
    elem_type = TensorProto.DOUBLE if dtype == np.float64 else TensorProto.INT32
    message = unsupported(single("Clip", opset, arrays, output=(elem_type, [3])), arrays)
    name = TensorProto.DataType.Name(elem_type)
    assert f"Clip node #0: Input input must have one of the types opendml maps ({allowed}); got {name}." in message


# ---------------------------------------------------------------------------------------------- Relu

@pytest.mark.parametrize("opset", [1, 6, 13, 14])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_relu_every_version(opset: int, dtype: type) -> None:
    arrays = {"x": X.astype(dtype)}
    elem_type = TensorProto.FLOAT if dtype == np.float32 else TensorProto.FLOAT16
    model = single("Relu", opset, arrays, output=(elem_type, [9]))  # ONNX infers no shapes for Relu-1
    check_against_reference(model, arrays)
    assert first_step(model, arrays).operator.operator.name == "ELEMENT_WISE_THRESHOLD"


@pytest.mark.parametrize(("dtype", "operator"), [(np.int8, "ELEMENT_WISE_THRESHOLD"),
                                                 (np.int16, "ELEMENT_WISE_THRESHOLD"),
                                                 (np.int32, "ELEMENT_WISE_THRESHOLD"),
                                                 (np.int64, "ELEMENT_WISE_CLIP1")])
def test_relu_14_integers(dtype: type, operator: str) -> None:
    info = np.iinfo(dtype)
    arrays = {"x": np.array([info.min, -1, 0, 1, info.max], dtype)}
    model = single("Relu", 14, arrays)
    check_against_reference(model, arrays)
    assert first_step(model, arrays).operator.operator.name == operator


def test_relu_13_has_no_integer_types() -> None:
    arrays = {"x": np.zeros(3, np.int32)}
    model = single("Relu", 13, arrays, output=(TensorProto.INT32, [3]))
    assert "Input X must have one of the types opendml maps (FLOAT, FLOAT16); got INT32." in unsupported(model, arrays)


# -------------------------------------------------------------------------------------------- ArgMin

ARGMIN_DATA = RNG.integers(-3, 3, (3, 4, 5)).astype(np.float32)  # few values: many ties


def _argmin_cases() -> list[tuple[int, dict[str, int]]]:
    cases: list[tuple[int, dict[str, int]]] = [(opset, {}) for opset in (1, 11, 12, 13)]
    for opset in (1, 11, 12, 13):
        for axis in [0, 1, 2] + ([-1, -3] if opset >= 11 else []):
            for keepdims in (0, 1):
                for last in (0, 1) if opset >= 12 else (None,):
                    attributes = {"axis": axis, "keepdims": keepdims}
                    if last is not None:
                        attributes["select_last_index"] = last
                    cases.append((opset, attributes))
    return cases


@pytest.mark.parametrize(("opset", "attributes"), _argmin_cases())
def test_argmin_every_version(opset: int, attributes: dict[str, int]) -> None:
    arrays = {"data": ARGMIN_DATA}
    check_against_reference(single("ArgMin", opset, arrays, **attributes), arrays)


@pytest.mark.parametrize("dtype", [np.float16, *INTEGER_DTYPES])
def test_argmin_types(dtype: type) -> None:
    arrays = {"data": RNG.integers(0, 4, (6, 5)).astype(dtype)}
    check_against_reference(single("ArgMin", 13, arrays, axis=1, select_last_index=1), arrays)


def test_argmin_select_last_index_is_decreasing() -> None:
    arrays = {"data": np.array([1, 2, 3, 2, 1], np.float32)}
    model = single("ArgMin", 13, arrays, select_last_index=1)
    assert first_step(model, arrays).operator.operator.params.axis_direction == dml.AxisDirection.DECREASING
    assert run(model, arrays)["y"].tolist() == [4]


def test_argmin_nan_is_ignored_unlike_onnx_reference() -> None:
    # Documented difference: opendml's ARGMIN ignores NaN; ONNX's reference (NumPy) returns the NaN.
    arrays = {"data": np.array([[1.0, np.nan, 0.5, 3.0]], np.float32)}
    model = single("ArgMin", 13, arrays, axis=1, keepdims=0)
    assert run(model, arrays)["y"].tolist() == [2]
    assert reference(model, arrays)["y"].tolist() == [1]


@pytest.mark.parametrize(("opset", "axis", "allowed"), [(13, 3, "[-3, 2]"), (1, -1, "[0, 2]")])
def test_argmin_axis_out_of_range(opset: int, axis: int, allowed: str) -> None:
    arrays = {"data": ARGMIN_DATA}
    model = single("ArgMin", opset, arrays, output=(TensorProto.INT64, [3, 4, 1]), axis=axis)
    assert f"axis must be in {allowed} for data of rank 3; got {axis}." in unsupported(model, arrays)


# ---------------------------------------------------------------------------------- DequantizeLinear

DQL_VERSIONS = [10, 13, 19, 21, 23, 24, 25, 28]


def check_dequantize(opset: int, arrays: dict[str, np.ndarray | None], **attributes: Any) -> Any:
    """Run at ``opset``; the oracle is ONNX's reference at that opset, or at 19 (the same formula)
    where the reference has no implementation of DequantizeLinear-10 and -13."""
    model = single("DequantizeLinear", opset, arrays, constants={"s", "zp"}, **attributes)
    oracle = model if opset >= 19 else single("DequantizeLinear", 19, arrays, constants={"s", "zp"}, **attributes)
    fed = feeds(model, arrays)
    assert_same(run(model, fed), reference(oracle, fed))
    return model


@pytest.mark.parametrize("opset", DQL_VERSIONS)
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_dequantize_per_tensor_every_version(opset: int, dtype: type) -> None:
    x = RNG.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, (2, 3, 4), dtype=dtype, endpoint=True)
    model = check_dequantize(opset, {"x": x, "s": np.float32(0.37), "zp": dtype(7)})
    scale = first_step(model, {"x": x}).operator.operator.desc.scale_tensor
    assert scale.sizes == (2, 3, 4) and scale.strides == (0, 0, 0)  # a zero-stride view, not a copy


@pytest.mark.parametrize("opset", DQL_VERSIONS[1:])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_dequantize_per_axis(opset: int, axis: int) -> None:
    x = RNG.integers(0, 255, (2, 3, 4), dtype=np.uint8, endpoint=True)
    n = x.shape[axis]
    arrays = {"x": x, "s": RNG.uniform(0.1, 2, n).astype(np.float32), "zp": RNG.integers(0, 255, n, dtype=np.uint8)}
    model = check_dequantize(opset, arrays, axis=axis)
    strides = [0, 0, 0]
    strides[axis] = 1
    step = first_step(model, {"x": x})
    assert step.operator.operator.desc.scale_tensor.strides == tuple(strides)
    assert step.operator.operator.desc.zero_point_tensor.strides == tuple(strides)
    assert step.inputs[1:] == ("s", "zp")  # the initializers themselves, no copies


@pytest.mark.parametrize("opset", [21, 23, 24, 25, 28])
@pytest.mark.parametrize(("axis", "block"), [(1, 2), (1, 3), (0, 2), (-1, 5)])
def test_dequantize_blocked_evenly_is_a_zero_stride_view(opset: int, axis: int, block: int) -> None:
    x = RNG.integers(-128, 127, (4, 6, 5), dtype=np.int8, endpoint=True)
    blocked = list(x.shape)
    blocked[axis] //= block
    arrays = {"x": x, "s": RNG.uniform(0.1, 2, blocked).astype(np.float32),
              "zp": RNG.integers(-10, 10, blocked, dtype=np.int8)}
    model = check_dequantize(opset, arrays, axis=axis, block_size=block)
    desc = first_step(model, {"x": x}).operator.operator.desc
    k = axis % 3
    assert desc.input_tensor.sizes == (*x.shape[:k], x.shape[k] // block, block, *x.shape[k + 1:])
    assert desc.scale_tensor.strides[k + 1] == 0  # the scale holds still inside a block
    assert first_step(model, {"x": x}).inputs[1:] == ("s", "zp")


@pytest.mark.parametrize(("axis", "block"), [(1, 4), (0, 3), (2, 2)])
def test_dequantize_blocked_unevenly_expands_the_scale(axis: int, block: int) -> None:
    x = RNG.integers(0, 255, (5, 6, 3), dtype=np.uint8, endpoint=True)
    blocked = list(x.shape)
    blocked[axis] = -(-x.shape[axis] // block)
    arrays = {"x": x, "s": RNG.uniform(0.1, 2, blocked).astype(np.float32),
              "zp": RNG.integers(0, 255, blocked, dtype=np.uint8)}
    model = check_dequantize(21, arrays, axis=axis, block_size=block)
    step = first_step(model, {"x": x})
    assert isinstance(step.inputs[1], np.ndarray) and step.inputs[1].shape == x.shape  # the copy fallback


@pytest.mark.parametrize(("dtype", "opset"), [(np.int16, 21), (np.uint16, 21), (np.int32, 13)])
def test_dequantize_wider_integers(dtype: type, opset: int) -> None:
    x = RNG.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, (3, 5), dtype=dtype, endpoint=True)
    x = (x // 512).astype(dtype)  # int32: keep x within float32's exact integers, where ONNX's reference agrees
    zero_point = None if dtype == np.int32 else dtype(-3 if np.iinfo(dtype).min < 0 else 3)
    check_dequantize(opset, {"x": x, "s": np.float32(0.5), "zp": zero_point})


@pytest.mark.parametrize("opset", [19, 21, 23, 28])
def test_dequantize_float16_scale_gives_float16(opset: int) -> None:
    x = RNG.integers(0, 255, (4, 3), dtype=np.uint8, endpoint=True)
    check_dequantize(opset, {"x": x, "s": np.array([0.5, 0.1, 3.0], np.float16), "zp": None}, axis=1)


@pytest.mark.parametrize("level", ["6_2", "6_0"])
def test_dequantize_without_zero_point_is_zero(level: str) -> None:
    device = dml.Device("cpu", level)
    x = np.array([0, 3, 128, 255], np.uint8)
    arrays = {"x": x, "s": np.float32(2), "zp": None}
    model = single("DequantizeLinear", 21, arrays, constants={"s"})
    np.testing.assert_array_equal(run(model, {"x": x}, device=device)["y"], [0, 6, 256, 510])
    step = first_step(model, {"x": x}, device)
    if level == "6_2":
        assert step.inputs[2] is None  # the optional ZeroPointTensor left out
    else:
        assert step.inputs[2].tolist() == [0]  # a zero bound through all-zero strides
        assert step.operator.operator.desc.zero_point_tensor.strides == (0,)


@pytest.mark.skipif(onnx.defs.onnx_opset_version() < 23,
                    reason=f"onnx {onnx.__version__} predates DequantizeLinear-23's output_dtype")
def test_dequantize_output_dtype() -> None:
    x = np.array([1, 2], np.uint8)
    arrays = {"x": x, "s": np.float32(2)}
    same = single("DequantizeLinear", 23, arrays, constants={"s"}, output_dtype=TensorProto.FLOAT)
    np.testing.assert_array_equal(run(same, {"x": x})["y"], np.array([2, 4], np.float32))
    model = single("DequantizeLinear", 23, arrays, constants={"s"}, output_dtype=TensorProto.FLOAT16)
    assert "output_dtype must be x_scale's type (FLOAT)" in unsupported(model, arrays)


def test_dequantize_10_scale_must_be_a_scalar() -> None:
    arrays = {"x": np.zeros((2, 3), np.uint8), "s": np.ones(3, np.float32)}
    model = single("DequantizeLinear", 10, arrays, constants={"s"}, output=(TensorProto.FLOAT, [2, 3]))
    assert "must be a scalar before DequantizeLinear-13" in unsupported(model, arrays)


def test_dequantize_scale_shape_must_fit() -> None:
    arrays = {"x": np.zeros((2, 3), np.uint8), "s": np.ones(2, np.float32)}
    model = single("DequantizeLinear", 21, arrays, constants={"s"}, output=(TensorProto.FLOAT, [2, 3]), axis=1)
    assert "Input x_scale must have shape [3]" in unsupported(model, arrays)


@pytest.mark.parametrize("level", ["2_1", "3_0"])
def test_four_dimensional_levels_pad_with_leading_ones(level: str) -> None:
    device = dml.Device("cpu", level)
    x = RNG.integers(0, 255, (3, 4), dtype=np.uint8, endpoint=True)
    arrays = {"x": x, "s": RNG.uniform(0.5, 1, 4).astype(np.float32), "zp": RNG.integers(0, 255, 4, dtype=np.uint8)}
    model = single("DequantizeLinear", 13, arrays, constants={"s", "zp"}, axis=1)
    assert_same(run(model, {"x": x}, device=device), reference(single("DequantizeLinear", 19, arrays,
                                                                    constants={"s", "zp"}, axis=1), {"x": x}))
    dims = first_step(model, {"x": x}, device).operator.operator.desc.scale_tensor
    assert (dims.sizes, dims.strides) == (((1, 1, 3, 4), (0, 0, 0, 1)) if level == "2_1" else ((3, 4), (0, 1)))


# ------------------------------------------------------------------------------- on every backend

def _dequantize_case(shape: tuple[int, ...], scale_shape: tuple[int, ...], zero_point: bool,
                     **attributes: int) -> tuple[str, int, dict[str, np.ndarray | None], dict[str, int]]:
    arrays: dict[str, np.ndarray | None] = {
        "x": RNG.integers(0, 255, shape, dtype=np.uint8, endpoint=True),
        "s": RNG.uniform(0.1, 2, scale_shape).astype(np.float32),
        "zp": RNG.integers(0, 255, scale_shape, dtype=np.uint8) if zero_point else None}
    return "DequantizeLinear", 21, arrays, attributes


BACKEND_CASES = {
    "clip-float": ("Clip", 13, {"x": X, "min": np.float32(-1), "max": np.float32(2)}, {}),
    "clip-6-defaults": ("Clip", 6, {"x": X}, {}),
    "clip-int64": ("Clip", 13, {"x": np.array([-(2**40), 0, 2**40 + 2], np.int64), "min": np.int64(-5),
                                "max": np.int64(2**40 + 1)}, {}),
    "relu-float16": ("Relu", 14, {"x": X.astype(np.float16)}, {}),
    "relu-int64": ("Relu", 14, {"x": np.array([-(2**62), -1, 0, 7], np.int64)}, {}),
    "argmin": ("ArgMin", 13, {"data": ARGMIN_DATA}, {"axis": 1, "keepdims": 0, "select_last_index": 1}),
    "dequantize-per-tensor": _dequantize_case((3, 5), (), True),
    "dequantize-per-axis": _dequantize_case((3, 5, 2), (5,), True, axis=1),
    "dequantize-blocked": _dequantize_case((4, 6), (4, 2), True, axis=1, block_size=3),
    "dequantize-blocked-uneven": _dequantize_case((4, 7), (4, 2), True, axis=1, block_size=4),
    "dequantize-no-zero-point": _dequantize_case((3, 5), (3, 1), False, axis=1, block_size=5),
}


@pytest.mark.parametrize("case", list(BACKEND_CASES))
def test_every_mapping_on_every_backend(device: dml.Device, case: str) -> None:
    op_type, opset, arrays, attributes = BACKEND_CASES[case]
    constants = {"s", "zp"} if op_type == "DequantizeLinear" else ()
    check_against_reference(single(op_type, opset, arrays, constants=constants, **attributes), arrays,
                            device=device)
