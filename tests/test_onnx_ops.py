"""Each ONNX operator, at every opset version, against ONNX's reference evaluator (or values worked out
by hand where the reference has no implementation of that version), and how each maps onto opendml."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("onnx", reason="the ONNX front end needs the onnx extra (pip install 'opendml[onnx]')")

import onnx
import onnx_models
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


# ------------------------------------------------------------------------------------ ArgMin and ArgMax

ARGMIN_DATA = RNG.integers(-3, 3, (3, 4, 5)).astype(np.float32)  # few values: many ties
ARG_OPS = ["ArgMin", "ArgMax"]


def _arg_cases() -> list[tuple[int, dict[str, int]]]:
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


@pytest.mark.parametrize("op", ARG_OPS)
@pytest.mark.parametrize(("opset", "attributes"), _arg_cases())
def test_arg_reduction_every_version(op: str, opset: int, attributes: dict[str, int]) -> None:
    arrays = {"data": ARGMIN_DATA}
    check_against_reference(single(op, opset, arrays, **attributes), arrays)


@pytest.mark.parametrize("op", ARG_OPS)
@pytest.mark.parametrize("dtype", [np.float16, *INTEGER_DTYPES])
def test_arg_reduction_types(op: str, dtype: type) -> None:
    arrays = {"data": RNG.integers(0, 4, (6, 5)).astype(dtype)}
    check_against_reference(single(op, 13, arrays, axis=1, select_last_index=1), arrays)


@pytest.mark.parametrize(("op", "operator", "expected"), [("ArgMin", "ARGMIN", [4]), ("ArgMax", "ARGMAX", [2])])
def test_select_last_index_is_decreasing(op: str, operator: str, expected: list[int]) -> None:
    arrays = {"data": np.array([1, 2, 3, 2, 1], np.float32)}
    model = single(op, 13, arrays, select_last_index=1)
    params = first_step(model, arrays).operator.operator.params
    assert (params.kind.value, params.axis_direction) == (operator, dml.AxisDirection.DECREASING)
    assert run(model, arrays)["y"].tolist() == expected


NAN_ROWS = np.array([[1, np.nan, 3, np.nan, 0],
                     [np.nan, 5, np.nan, 1, 2],
                     [5, 1, 2, 3, np.nan],
                     [np.nan] * 5,
                     [3, 3, -np.inf, 3, np.inf]], np.float32)
# A row's first NaN (its last with select_last_index), as ONNX's reference (NumPy) and PyTorch give;
# the last row has no NaN.
NAN_INDICES = {("ArgMin", 0): [1, 0, 4, 0, 2], ("ArgMin", 1): [3, 2, 4, 4, 2],
               ("ArgMax", 0): [1, 0, 4, 0, 4], ("ArgMax", 1): [3, 2, 4, 4, 4]}


@pytest.mark.parametrize("op", ARG_OPS)
@pytest.mark.parametrize("last", [0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("transposed", [False, True], ids=["rows", "columns"])
def test_arg_reduction_nan_propagates(op: str, last: int, dtype: type, transposed: bool) -> None:
    data = NAN_ROWS.T.copy() if transposed else NAN_ROWS
    arrays = {"data": data.astype(dtype)}
    model = single(op, 13, arrays, axis=0 if transposed else 1, keepdims=0, select_last_index=last)
    assert run(model, arrays)["y"].tolist() == NAN_INDICES[op, last]
    assert reference(model, arrays)["y"].tolist() == NAN_INDICES[op, last]
    assert first_step(model, arrays).operator.operator.params.nan_policy == dml.NanPolicy.PROPAGATE


@pytest.mark.parametrize("op", ARG_OPS)
def test_arg_reduction_nan_in_long_rows(op: str) -> None:
    # Long enough for the vector code paths: the NaN wins wherever it stands.
    data = RNG.normal(0, 1, (3, 1000)).astype(np.float32)
    data[0, [700, 900]] = np.nan
    data[1, 999] = np.nan
    data[2, 0] = np.nan
    arrays = {"data": data}
    first = single(op, 13, arrays, axis=1, keepdims=0)
    last = single(op, 13, arrays, axis=1, keepdims=0, select_last_index=1)
    assert run(first, arrays)["y"].tolist() == [700, 999, 0]
    assert run(last, arrays)["y"].tolist() == [900, 999, 0]


@pytest.mark.parametrize("op", ARG_OPS)
@pytest.mark.parametrize(("opset", "axis", "allowed"), [(13, 3, "[-3, 2]"), (1, -1, "[0, 2]")])
def test_arg_reduction_axis_out_of_range(op: str, opset: int, axis: int, allowed: str) -> None:
    arrays = {"data": ARGMIN_DATA}
    model = single(op, opset, arrays, output=(TensorProto.INT64, [3, 4, 1]), axis=axis)
    assert f"{op} node #0: axis must be in {allowed} for data of rank 3; got {axis}." in unsupported(model, arrays)


@pytest.mark.parametrize("op", ARG_OPS)
def test_arg_reduction_refusals(op: str) -> None:
    scalar = {"data": np.float32(1)}
    model = single(op, 13, scalar, output=(TensorProto.INT64, []))
    assert f"{op} node #0: Input data must have rank 1 or more; got a scalar." in unsupported(model, scalar)
    empty = {"data": np.zeros((2, 0), np.float32)}
    model = single(op, 13, empty, axis=1)
    assert "Input data must not be empty along axis 1; got shape [2, 0]." in unsupported(model, empty)
    doubles = {"data": np.zeros(3, np.float64)}
    message = unsupported(single(op, 13, doubles, output=(TensorProto.INT64, [1])), doubles)
    assert f"{op} node #0: Input data must have one of the types opendml maps (FLOAT, FLOAT16, INT64" in message
    assert message.endswith("got DOUBLE.")


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


# ------------------------------------------------------------------------------------ QuantizeLinear

QL_VERSIONS = [10, 13, 19, 21, 23, 24, 25, 28]
HALVES = np.array([0.5, 1.5, -2.5, 2.5, -0.5, 127.5, 300, -300, np.nan, np.inf, -np.inf], np.float32)
# Worked by hand (docs/semantics.md): halves to even, the zero point added after rounding, saturation at
# both ends, NaN to the zero point, +-inf saturating.
HALVES_QUANTIZED = [
    (np.int8, None, [0, 2, -2, 2, 0, 127, 127, -128, 0, 127, -128]),
    (np.int8, 3, [3, 5, 1, 5, 3, 127, 127, -128, 3, 127, -128]),
    (np.uint8, None, [0, 2, 0, 2, 0, 128, 255, 0, 0, 255, 0]),
    (np.uint8, 128, [128, 130, 126, 130, 128, 255, 255, 0, 128, 255, 0]),
]


def quantize_model(opset: int, arrays: dict[str, np.ndarray | None], **attributes: Any) -> Any:
    return single("QuantizeLinear", opset, arrays, constants={"s", "zp"}, **attributes)


def quantized(opset: int, arrays: dict[str, np.ndarray | None], device: dml.Device | None = None,
              **attributes: Any) -> np.ndarray:
    return run(quantize_model(opset, arrays, **attributes), {"x": arrays["x"]}, device=device)["y"]


@pytest.mark.parametrize("opset", QL_VERSIONS)
@pytest.mark.parametrize(("dtype", "zero_point", "expected"), HALVES_QUANTIZED)
def test_quantize_hand_cases_every_version(opset: int, dtype: type, zero_point: int | None,
                                           expected: list[int]) -> None:
    zp = None if zero_point is None else dtype(zero_point)
    attributes = {}
    if zp is None and dtype == np.int8:  # an INT8 output without a zero point needs output_dtype (21 on)
        if opset >= 21:
            attributes["output_dtype"] = TensorProto.INT8
        else:
            zp = dtype(0)
    got = quantized(opset, {"x": HALVES, "s": np.float32(1), "zp": zp}, **attributes)
    assert got.dtype == dtype
    assert got.tolist() == expected


def test_quantize_rounds_one_float32_division() -> None:
    # -237.2832 / 1.9529482 is -121.5 exactly in float32 (to even: -122); a multiply by the reciprocal
    # gives -121.49999 (-121). And the zero point is added after rounding: 0.5 + 1 gives 1, not 2.
    x = np.array([-237.2832, 0.5 * 1.9529482], np.float32)
    arrays = {"x": x, "s": np.float32(1.9529482), "zp": np.int8(0)}
    assert quantized(21, arrays).tolist() == [-122, 0]
    assert quantized(21, {**arrays, "zp": np.int8(1)}).tolist() == [-121, 1]


@pytest.mark.parametrize("opset", QL_VERSIONS)
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_quantize_per_tensor_against_reference(opset: int, dtype: type) -> None:
    x = RNG.normal(0, 60, (2, 3, 4)).astype(np.float32)
    arrays = {"x": x, "s": np.float32(0.37), "zp": dtype(7)}
    model = quantize_model(opset, arrays)
    check_against_reference(model, arrays)
    scale = first_step(model, {"x": x}).operator.operator.desc.scale_tensor
    assert scale.sizes == (2, 3, 4) and scale.strides == (0, 0, 0)  # a zero-stride view, not a copy


@pytest.mark.parametrize("opset", QL_VERSIONS[1:])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_quantize_per_axis(opset: int, axis: int) -> None:
    x = RNG.normal(0, 60, (2, 3, 4)).astype(np.float32)
    n = x.shape[axis]
    arrays = {"x": x, "s": RNG.uniform(0.1, 2, n).astype(np.float32), "zp": RNG.integers(0, 255, n, dtype=np.uint8)}
    model = quantize_model(opset, arrays, axis=axis)
    check_against_reference(model, arrays)
    strides = [0, 0, 0]
    strides[axis] = 1
    step = first_step(model, {"x": x})
    assert step.operator.operator.desc.scale_tensor.strides == tuple(strides)
    assert step.operator.operator.desc.zero_point_tensor.strides == tuple(strides)
    assert step.inputs[1:] == ("s", "zp")  # the initializers themselves, no copies


@pytest.mark.parametrize("opset", [21, 23, 24, 25, 28])
@pytest.mark.parametrize(("axis", "block"), [(1, 2), (1, 3), (0, 2), (-1, 5)])
def test_quantize_blocked_evenly_is_a_zero_stride_view(opset: int, axis: int, block: int) -> None:
    x = RNG.normal(0, 60, (4, 6, 5)).astype(np.float32)
    blocked = list(x.shape)
    blocked[axis] //= block
    arrays = {"x": x, "s": RNG.uniform(0.1, 2, blocked).astype(np.float32),
              "zp": RNG.integers(-10, 10, blocked, dtype=np.int8)}
    model = quantize_model(opset, arrays, axis=axis, block_size=block)
    check_against_reference(model, arrays)
    desc = first_step(model, {"x": x}).operator.operator.desc
    k = axis % 3
    assert desc.input_tensor.sizes == (*x.shape[:k], x.shape[k] // block, block, *x.shape[k + 1:])
    assert desc.scale_tensor.strides[k + 1] == 0 and desc.zero_point_tensor.strides[k + 1] == 0
    assert first_step(model, {"x": x}).inputs[1:] == ("s", "zp")


@pytest.mark.parametrize(("axis", "block"), [(1, 4), (0, 3), (2, 2)])
def test_quantize_blocked_unevenly_expands_the_scale(axis: int, block: int) -> None:
    x = RNG.normal(0, 60, (5, 6, 3)).astype(np.float32)
    blocked = list(x.shape)
    blocked[axis] = -(-x.shape[axis] // block)
    arrays = {"x": x, "s": RNG.uniform(0.1, 2, blocked).astype(np.float32),
              "zp": RNG.integers(0, 255, blocked, dtype=np.uint8)}
    model = quantize_model(21, arrays, axis=axis, block_size=block)
    check_against_reference(model, arrays)
    step = first_step(model, {"x": x})
    assert isinstance(step.inputs[1], np.ndarray) and step.inputs[1].shape == x.shape  # the copy fallback


@pytest.mark.parametrize("opset", [21, 23, 28])
def test_quantize_output_dtype(opset: int) -> None:
    x = np.array([-1.5, 0.5, 1.5, 200], np.float32)
    arrays = {"x": x, "s": np.float32(1), "zp": None}
    got = quantized(opset, arrays, output_dtype=TensorProto.INT8)
    assert got.dtype == np.int8 and got.tolist() == [-2, 0, 2, 127]
    got = quantized(opset, arrays, output_dtype=TensorProto.UINT8, saturate=0)  # saturate: float8 only
    assert got.dtype == np.uint8 and got.tolist() == [0, 0, 2, 200]
    same = {**arrays, "zp": np.int8(1)}
    assert quantized(opset, same, output_dtype=TensorProto.INT8).tolist() == [-1, 1, 3, 127]


@pytest.mark.parametrize(("field", "value", "message"), [
    ("output_dtype", TensorProto.INT16,
     "output_dtype must be one of the types opendml maps (INT8, INT4, UINT8, UINT4); got INT16."),
    ("output_dtype", TensorProto.UINT2,
     "output_dtype must be one of the types opendml maps (INT8, INT4, UINT8, UINT4); got UINT2."),
    ("output_dtype", TensorProto.FLOAT8E4M3FN,
     "output_dtype must be one of the types opendml maps (INT8, INT4, UINT8, UINT4); got FLOAT8E4M3FN."),
])
def test_quantize_output_types_opendml_does_not_map(field: str, value: int, message: str) -> None:
    arrays = {"x": np.zeros(3, np.float32), "s": np.float32(1), "zp": None}
    model = quantize_model(21, arrays, output=(value, [3]), **{field: value})
    assert f"QuantizeLinear node #0: {message}" in unsupported(model, {"x": arrays["x"]})


def test_quantize_output_dtype_must_be_the_zero_points_type() -> None:
    arrays = {"x": np.zeros(3, np.float32), "s": np.float32(1), "zp": np.int8(0)}
    model = quantize_model(21, arrays, output=(TensorProto.INT8, [3]), output_dtype=TensorProto.UINT8)
    assert "output_dtype must be y_zero_point's type (INT8); got UINT8." in unsupported(model, {"x": arrays["x"]})


@pytest.mark.parametrize(("dtype", "name"), [(np.int16, "INT16"), (np.uint16, "UINT16")])
def test_quantize_16_bit_zero_points_are_refused(dtype: type, name: str) -> None:
    arrays = {"x": np.zeros(3, np.float32), "s": np.float32(1), "zp": dtype(0)}
    model = quantize_model(21, arrays)
    message = unsupported(model, {"x": arrays["x"]})
    assert f"Input y_zero_point must have one of the types opendml maps (INT8, INT4, UINT8, UINT4); got {name}." \
        in message


@pytest.mark.parametrize("level", ["6_2", "6_0"])
def test_quantize_without_zero_point_is_zero(level: str) -> None:
    device = dml.Device("cpu", level)
    x = np.array([0, 3, 127.5, 1000], np.float32)
    arrays = {"x": x, "s": np.float32(0.5), "zp": None}
    model = quantize_model(13, arrays)
    got = run(model, {"x": x}, device=device)["y"]
    assert got.dtype == np.uint8 and got.tolist() == [0, 6, 255, 255]
    step = first_step(model, {"x": x}, device)
    if level == "6_2":
        assert step.inputs[2] is None  # the optional ZeroPointTensor left out
    else:
        assert step.inputs[2].tolist() == [0] and step.inputs[2].dtype == np.uint8  # an explicit zero
        assert step.operator.operator.desc.zero_point_tensor.strides == (0,)


F16_NEAR_HALVES = np.array([98.5, 99.5], np.float16)
F16_SCALES = np.array([1.4375, 2.1875], np.float16)
# In float32 the quotients are 68.52 and 45.49 (69, 45); rounded to float16 first they would be 68.5 and
# 45.5 (68, 46): ONNX's reference divides in float16, ONNX Runtime and opendml in float32.
F16_QUANTIZED = [69, 45]


@pytest.mark.parametrize("opset", [19, 21])
def test_quantize_float16_divides_in_float32(opset: int) -> None:
    arrays = {"x": F16_NEAR_HALVES, "s": F16_SCALES, "zp": np.zeros(2, np.int8)}
    assert quantized(opset, arrays, axis=0).tolist() == F16_QUANTIZED
    hand = {"x": HALVES.astype(np.float16), "s": np.float16(1), "zp": np.int8(3)}
    assert quantized(opset, hand).tolist() == HALVES_QUANTIZED[1][2]


@pytest.mark.parametrize("opset", [23, 24, 25, 28])
def test_quantize_23_float16_needs_float32_precision(opset: int) -> None:
    arrays = {"x": F16_NEAR_HALVES, "s": F16_SCALES, "zp": np.zeros(2, np.int8)}
    model = quantize_model(opset, arrays, axis=0, precision=TensorProto.FLOAT)
    check_against_reference(model, arrays)  # the reference divides in float32 too
    assert run(model, {"x": arrays["x"]})["y"].tolist() == F16_QUANTIZED
    message = "precision must be FLOAT (opendml divides in float32; an absent precision is y_scale's type); got "
    assert message + "none (so y_scale's type, FLOAT16)." in unsupported(quantize_model(opset, arrays, axis=0),
                                                                          {"x": arrays["x"]})
    halved = quantize_model(opset, arrays, axis=0, precision=TensorProto.FLOAT16)
    assert message + "FLOAT16." in unsupported(halved, {"x": arrays["x"]})


@pytest.mark.parametrize("opset", [10, 13, 23, 28])
def test_quantize_int32_converts_to_float32_first(opset: int) -> None:
    # 16777217 is 16777216.0 as float32: / 2^25 gives 0.5 exactly (to even: 0); 50331649 gives 1.5 (2).
    # ONNX's reference divides in float64 and gives 1, 2, -1.
    x = np.array([16777217, 50331649, -16777217], np.int32)
    arrays = {"x": x, "s": np.float32(2**25), "zp": None}
    got = quantized(opset, arrays, output_dtype=TensorProto.INT8) if opset >= 21 else quantized(
        opset, {**arrays, "zp": np.int8(0)})
    assert got.tolist() == [0, 2, 0]
    small = {"x": np.array([-7, 3, 5, 2**31 - 1, -(2**31)], np.int32), "s": np.float32(2), "zp": np.uint8(100)}
    assert quantized(opset, small).tolist() == [96, 102, 102, 255, 0]


@pytest.mark.parametrize(("opset", "arrays", "message"), [
    (21, {"x": np.zeros(3, np.int32), "s": np.int32(1)},
     "Input y_scale must be FLOAT for x of type INT32 (DirectML's ScaleTensor takes FLOAT32 for an INT32 InputTensor); "
     "got INT32."),
    (23, {"x": np.zeros(3, np.float16), "s": np.float32(1)},
     "Input y_scale must be FLOAT16 for x of type FLOAT16 (DirectML's ScaleTensor takes the InputTensor's data type); "
     "got FLOAT."),
    (23, {"x": np.zeros(3, np.float32), "s": np.float16(1)},
     "Input y_scale must be FLOAT for x of type FLOAT (DirectML's ScaleTensor takes the InputTensor's data type); "
     "got FLOAT16."),
])
def test_quantize_scale_types_directml_does_not_take(opset: int, arrays: dict[str, Any], message: str) -> None:
    model = quantize_model(opset, arrays, output=(TensorProto.UINT8, [3]))
    assert f"QuantizeLinear node #0: {message}" in unsupported(model, {"x": arrays["x"]})


def test_quantize_bfloat16_x_is_refused() -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="NumPy's bfloat16 comes from ml_dtypes (an onnx dependency)")
    arrays = {"x": np.zeros(3, ml_dtypes.bfloat16), "s": np.array(1, ml_dtypes.bfloat16)}
    model = quantize_model(19, arrays, output=(TensorProto.UINT8, [3]))
    message = unsupported(model, {"x": arrays["x"]})
    assert "Input x must have one of the types opendml maps (FLOAT, FLOAT16, INT32); got BFLOAT16." in message


def test_quantize_10_scale_must_be_a_scalar() -> None:
    arrays = {"x": np.zeros((2, 3), np.float32), "s": np.ones(3, np.float32)}
    model = quantize_model(10, arrays, output=(TensorProto.UINT8, [2, 3]))
    assert "Input y_scale must be a scalar before QuantizeLinear-13" in unsupported(model, {"x": arrays["x"]})


def test_quantize_scale_and_zero_point_shapes_must_fit() -> None:
    arrays = {"x": np.zeros((2, 3), np.float32), "s": np.ones(2, np.float32)}
    model = quantize_model(21, arrays, output=(TensorProto.UINT8, [2, 3]), axis=1)
    assert "Input y_scale must have shape [3], a 1-D tensor of x's size along axis 1" in unsupported(
        model, {"x": arrays["x"]})
    arrays = {"x": np.zeros((2, 6), np.float32), "s": np.ones((2, 3), np.float32), "zp": np.zeros((2, 2), np.uint8)}
    model = quantize_model(21, arrays, output=(TensorProto.UINT8, [2, 6]), axis=1, block_size=2)
    assert "Input y_zero_point must have shape [2, 3], x's shape with ceil(6 / 2) along axis 1 (blocked)" in unsupported(
        model, {"x": arrays["x"]})


@pytest.mark.parametrize(("level", "sizes", "strides"), [("2_1", (1, 1, 3, 4), (0, 0, 0, 1)),
                                                        ("3_0", (3, 4), (0, 1))])
def test_quantize_four_dimensional_levels_pad_with_leading_ones(level: str, sizes: tuple, strides: tuple) -> None:
    device = dml.Device("cpu", level)
    x = RNG.normal(0, 60, (3, 4)).astype(np.float32)
    arrays = {"x": x, "s": RNG.uniform(0.5, 1, 4).astype(np.float32), "zp": RNG.integers(-9, 9, 4, dtype=np.int8)}
    model = quantize_model(13, arrays, axis=1)
    check_against_reference(model, arrays, device=device)
    scale = first_step(model, {"x": x}, device).operator.operator.desc.scale_tensor
    assert (scale.sizes, scale.strides) == (sizes, strides)


@pytest.mark.parametrize(("level", "arrays", "message"), [
    ("1_0", {"x": np.zeros(3, np.float32), "s": np.float32(1), "zp": np.int8(0)},
     "ZeroPointTensor.DataType must be one of UINT8 at feature level 1_0; got INT8. The lowest feature level "
     "that accepts this description is 2_1."),
    ("5_0", {"x": np.zeros(3, np.float16), "s": np.float16(1), "zp": np.uint8(0)},
     "InputTensor.DataType must be one of FLOAT32, INT32 at feature level 5_0; got FLOAT16."),
])
def test_quantize_types_a_level_lacks(level: str, arrays: dict[str, Any], message: str) -> None:
    got = unsupported(quantize_model(19, arrays), {"x": arrays["x"]}, dml.Device("cpu", level))
    assert f"QuantizeLinear node #0: ELEMENT_WISE_QUANTIZE_LINEAR: {message}" in got


@pytest.mark.parametrize("order", ["QuantizeLinear", "DequantizeLinear"])
@pytest.mark.parametrize(("first", "second", "one_graph"), [(2, 2, True), (6, 2, True), (2, 3, False)])
def test_blocked_quantize_and_dequantize_in_a_row(order: str, first: int, second: int, one_graph: bool) -> None:
    x = RNG.normal(0, 60, (4, 6)).astype(np.float32) if order == "QuantizeLinear" else RNG.integers(
        0, 255, (4, 6), dtype=np.uint8)
    other = "DequantizeLinear" if order == "QuantizeLinear" else "QuantizeLinear"
    nodes = [onnx.helper.make_node(order, ["x", "s1"], ["mid"], axis=1, block_size=first),
             onnx.helper.make_node(other, ["mid", "s2"], ["y"], axis=1, block_size=second)]
    scales = {"s1": np.full((4, 6 // first), 0.5, np.float32), "s2": np.full((4, 6 // second), 0.25, np.float32)}
    built = onnx_models.model(nodes, {"x": x}, ["y"], 21, scales)
    if one_graph:
        assert_same(run(built, {"x": x}), reference(built, {"x": x}))
        (segment,) = Session(built).program({"x": x}).segments
        assert len(segment.steps) == 2
    else:  # blocks of 2 and 3 along one axis: no edge joins them
        message = unsupported(built, {"x": x})
        assert f"{other} node #1: InputTensor must read {order} node #0's output through an edge" in message


# ------------------------------------------------------------------ IsNaN, IsInf, Not and Shrink (BOOL, fields)

@pytest.mark.parametrize(("negative", "positive"), [(1, 1), (1, 0), (0, 1)])
def test_isinf_detects_as_its_attributes_say(negative: int, positive: int) -> None:
    for x in (X, X.astype(np.float16)):
        check_against_reference(single("IsInf", 20, {"x": x}, detect_negative=negative, detect_positive=positive),
                                {"x": x})


def test_isinf_detecting_neither_infinity_is_refused_before_anything_runs() -> None:
    message = unsupported(single("IsInf", 20, {"x": X}, detect_negative=0, detect_positive=0), {"x": X})
    assert "IsInf node #0: detect_negative and detect_positive must not both be 0" in message


def test_bool_tensors_in_out_and_between_nodes() -> None:
    """IsNaN's BOOL output read by Not, a BOOL graph input read by Not: held as UINT8 0 and 1, given back as bool."""
    nodes = [onnx.helper.make_node("IsNaN", ["x"], ["nan"]), onnx.helper.make_node("Not", ["nan"], ["number"]),
             onnx.helper.make_node("Not", ["b"], ["not_b"])]
    b = np.array([[True, False, True], [False, False, True]])
    built = onnx_models.model(nodes, {"x": X, "b": b}, ["nan", "number", "not_b"], 13)
    got = run(built, {"x": X, "b": b})
    assert_same(got, reference(built, {"x": X, "b": b}))
    assert got["number"].tolist() == [True] * 8 + [False]


SHRINK_X = {np.float32: X, np.float16: X.astype(np.float16),
            np.int8: np.array([-128, -7, -3, -2, 0, 2, 3, 7, 127], np.int8),
            np.uint8: np.array([0, 1, 2, 3, 4, 200, 255], np.uint8),
            np.int32: np.array([-(2**31), -5, -1, 0, 1, 5, 2**31 - 1], np.int32)}


@pytest.mark.parametrize("dtype", list(SHRINK_X), ids=lambda t: t.__name__)
@pytest.mark.parametrize(("lambd", "bias"), [(0.5, 0.0), (1.5, 1.0), (2.5, -2.0), (0.0, 0.0)])
def test_shrink_matches_the_reference(dtype: type, lambd: float, bias: float) -> None:
    x = SHRINK_X[dtype]
    if dtype in (np.int8, np.int32) and bias < 0:  # ONNX's reference would overflow its float cast at the limits
        x = x[1:-1]
    check_against_reference(single("Shrink", 9, {"x": x}, lambd=lambd, bias=bias), {"x": x})


@pytest.mark.parametrize(("x", "attributes", "message"), [
    (X, {"lambd": -0.5}, "Shrink node #0: lambd must not be negative"),
    (np.array([1, 2], np.int16), {"bias": 1.5}, "Shrink node #0: bias must be a whole number on INT16 X"),
    (np.array([1, 2], np.int16), {"bias": float("nan")}, "Shrink node #0: bias must be a whole number on INT16 X"),
])
def test_shrink_fields_directml_reads_otherwise_are_refused(x: np.ndarray, attributes: dict[str, float],
                                                            message: str) -> None:
    assert message in unsupported(single("Shrink", 9, {"x": x}, **attributes), {"x": x})


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
    "argmax": ("ArgMax", 13, {"data": ARGMIN_DATA}, {"axis": 2, "keepdims": 1}),
    "argmax-nan": ("ArgMax", 13, {"data": NAN_ROWS}, {"axis": 1, "keepdims": 0, "select_last_index": 1}),
    "argmin-nan-float16": ("ArgMin", 13, {"data": NAN_ROWS.T.astype(np.float16)}, {"axis": 0}),
    "dequantize-per-tensor": _dequantize_case((3, 5), (), True),
    "dequantize-per-axis": _dequantize_case((3, 5, 2), (5,), True, axis=1),
    "dequantize-blocked": _dequantize_case((4, 6), (4, 2), True, axis=1, block_size=3),
    "dequantize-blocked-uneven": _dequantize_case((4, 7), (4, 2), True, axis=1, block_size=4),
    "dequantize-no-zero-point": _dequantize_case((3, 5), (3, 1), False, axis=1, block_size=5),
    "quantize-per-tensor": ("QuantizeLinear", 13, {"x": RNG.normal(0, 60, (3, 5)).astype(np.float32),
                                                   "s": np.float32(0.37), "zp": np.int8(-3)}, {}),
    "quantize-per-axis": ("QuantizeLinear", 21, {"x": RNG.normal(0, 60, (3, 5, 2)).astype(np.float32),
                                                 "s": RNG.uniform(0.1, 2, 5).astype(np.float32),
                                                 "zp": RNG.integers(0, 255, 5, dtype=np.uint8)}, {"axis": 1}),
    "quantize-blocked": ("QuantizeLinear", 21, {"x": RNG.normal(0, 60, (4, 6)).astype(np.float32),
                                                "s": RNG.uniform(0.1, 2, (4, 2)).astype(np.float32),
                                                "zp": None}, {"axis": 1, "block_size": 3}),
    "quantize-blocked-uneven": ("QuantizeLinear", 21, {"x": RNG.normal(0, 60, (4, 7)).astype(np.float32),
                                                       "s": RNG.uniform(0.1, 2, (4, 2)).astype(np.float32),
                                                       "zp": RNG.integers(-9, 9, (4, 2), dtype=np.int8)},
                                {"axis": 1, "block_size": 4}),
    "quantize-float16": ("QuantizeLinear", 19, {"x": F16_NEAR_HALVES, "s": F16_SCALES, "zp": np.zeros(2, np.uint8)},
                         {"axis": 0}),
    "isnan": ("IsNaN", 20, {"x": X}, {}),
    "isinf-positive": ("IsInf", 20, {"x": X.astype(np.float16)}, {"detect_negative": 0}),
    "not": ("Not", 1, {"x": np.array([[True, False], [False, False]])}, {}),
    "shrink": ("Shrink", 9, {"x": X}, {"lambd": 1.5, "bias": 0.25}),
    "shrink-uint8": ("Shrink", 9, {"x": SHRINK_X[np.uint8]}, {"lambd": 2.5, "bias": 1.0}),
}


EXPECTED = {"quantize-float16": F16_QUANTIZED}


@pytest.mark.parametrize("case", list(BACKEND_CASES))
def test_every_mapping_on_every_backend(device: dml.Device, case: str) -> None:
    op_type, opset, arrays, attributes = BACKEND_CASES[case]
    constants = {"s", "zp"} if op_type in ("DequantizeLinear", "QuantizeLinear") else ()
    built = single(op_type, opset, arrays, constants=constants, **attributes)
    if case in EXPECTED:  # where ONNX's reference differs from ONNX Runtime and opendml (see the tests above)
        (got,) = run(built, feeds(built, arrays), device=device).values()
        assert got.tolist() == EXPECTED[case]
    else:
        check_against_reference(built, arrays, device=device)


# ---------------------------------------------------------------------------------------------- the binary family

BINARY_OPS = {"Add": "ELEMENT_WISE_ADD", "Sub": "ELEMENT_WISE_SUBTRACT", "Mul": "ELEMENT_WISE_MULTIPLY",
              "Div": "ELEMENT_WISE_DIVIDE", "Min": "ELEMENT_WISE_MIN", "Max": "ELEMENT_WISE_MAX",
              "Sum": "ELEMENT_WISE_ADD"}


@pytest.mark.parametrize("op", BINARY_OPS)
@pytest.mark.parametrize(("a_shape", "b_shape"), [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((2, 3, 4), ())])
def test_binary_broadcasts_with_zero_strides(op: str, a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> None:
    """NumPy's broadcasting of the two inputs, each described over the output's sizes with zero strides where it
    is broadcast (never copied), against ONNX's reference evaluator."""
    a = RNG.standard_normal(a_shape).astype(np.float32)
    b = (RNG.standard_normal(b_shape) + 3).astype(np.float32)
    model = single(op, 13, {"a": a, "b": b})
    check_against_reference(model, {"a": a, "b": b})
    step = first_step(model, {"a": a, "b": b})
    operator = step.operator.operator
    assert operator.definition.schema.name == BINARY_OPS[op]
    b_desc = operator.tensors["BTensor"]
    assert b_desc.total_tensor_size_in_bytes >= 4 * max(1, int(np.prod(b_shape)))
    if b_shape != a_shape:
        assert 0 in b_desc.effective_strides  # the broadcast operand read again, not copied


@pytest.mark.parametrize(("fmod", "operator", "dtype"), [(0, "ELEMENT_WISE_MODULUS_FLOOR", np.int32),
                                                         (1, "ELEMENT_WISE_MODULUS_TRUNCATE", np.float32),
                                                         (1, "ELEMENT_WISE_MODULUS_TRUNCATE", np.int8)])
def test_mod_maps_fmod_onto_floor_or_truncate(fmod: int, operator: str, dtype: type) -> None:
    a = np.array([7, -7, 7, -7, 5], dtype)
    b = np.array([3, 3, -3, -3, 2], dtype)
    model = single("Mod", 13, {"a": a, "b": b}, fmod=fmod)
    check_against_reference(model, {"a": a, "b": b})
    assert first_step(model, {"a": a, "b": b}).operator.operator.definition.schema.name == operator


def test_variadic_min_of_three_inputs_is_chained() -> None:
    """Three inputs: two ELEMENT_WISE_MIN steps, left to right (tests/test_onnx_variadic.py: 1 to 4 inputs)."""
    a, b, c = (np.array(v, np.float32) for v in ([3, 1, 2], [2, 3, 1], [1, 2, 3]))
    node = onnx.helper.make_node("Min", ["a", "b", "c"], ["y"], name="m")
    model = onnx_models.model([node], {"a": a, "b": b, "c": c}, ["y"], 13, {})
    assert run(model, {"a": a, "b": b, "c": c})["y"].tolist() == [1.0, 1.0, 1.0]
