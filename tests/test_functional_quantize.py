"""The functional quantize_linear: hand-worked values, the oracle, the output type rule, broadcasts, out= and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opendml as dml
from opendml.ops.quantize_linear import QuantizeParams, quantize_linear_reference
from tests.conftest import CUDA_MISSING
from tests.elementwise_oracle import quantize_element

NEEDS_CUDA = pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")
F4 = np.float32
INF, NAN = np.inf, np.nan


@pytest.mark.parametrize(("x", "scale", "zero_point", "expected"), [
    ([0.5, 1.5, 2.5, -0.5, -1.5, -2.5], 1.0, 10, [10, 12, 12, 10, 8, 8]),  # halves to even
    ([np.nextafter(F4(2.5), F4(3)), np.nextafter(F4(2.5), F4(2))], 1.0, 0, [3, 2]),  # next to a half
    ([INF, -INF, NAN, 1e30, -1e30], 1.0, 7, [255, 0, 7, 255, 0]),  # infinities saturate; NaN is the zero point
    ([3.0, -3.0, 0.0, -0.0], 0.0, 9, [255, 0, 9, 9]),  # a zero scale: +-inf saturate, 0 / 0 is NaN
    ([3.0, -3.0, 0.75], -0.5, 100, [94, 106, 98]),  # a negative scale: -1.5 rounds to -2
    ([254.0, 255.0, 256.0, -1.0], 1.0, 0, [254, 255, 255, 0]),  # UINT8's ends
    # a multiply by the reciprocal would give 3.4999998 -> 3 and 2.5000002 -> 3: one division gives 3.5 and 2.5
    ([F4(0.9679725170135498)], F4(0.2765635848045349), 0, [4]),
    ([F4(10.23145580291748)], F4(4.0925822257995605), 0, [2]),
])
def test_hand_worked_values(x: list[float], scale: float, zero_point: int, expected: list[int]) -> None:
    got = dml.quantize_linear(np.array(x, np.float32), scale, zero_point)
    assert got.dtype == np.uint8 and got.tolist() == expected


def test_int8_ends_and_the_zero_point_added_after_rounding() -> None:
    x = np.array([126.5, 127.5, -128.5, -129.0, 0.5, -0.5], np.float32)
    assert dml.quantize_linear(x, 1.0, np.int8(0)).tolist() == [126, 127, -128, -128, 0, 0]
    # round(x / s) + zp, not round(x / s + zp): 0.5 -> 0, then + 1 (0.5 + 1 = 1.5 would round to 2)
    assert dml.quantize_linear(x[4:], 1.0, np.int8(1)).tolist() == [1, 1]
    assert dml.quantize_linear(x[:1], 1.0, np.int8(127)).tolist() == [127]  # 126 + 127 saturates


def test_int32_inputs_convert_to_float32_to_nearest_even() -> None:
    # Beyond 2^24 an INT32 is rounded to float32 first: 41943041 -> 41943040 (2.5 * 2^24), which rounds to 2;
    # 41943042 is halfway between 41943040 and 41943044 and goes to the even one.
    x = np.array([41943041, 41943042, 41943044, 16777217, -41943041], np.int32)
    got = dml.quantize_linear(x, F4(2**24), np.int8(0))
    assert got.dtype == np.int8 and got.tolist() == [2, 2, 3, 1, -2]


def test_float16_input_and_scale() -> None:
    x = np.array([1.0, 2.5, -3.0, 65504.0, np.inf], np.float16)
    got = dml.quantize_linear(x, np.float16(2.0), np.uint8(128))
    assert got.tolist() == [128, 129, 126, 255, 255]  # 0.5 -> 0, 1.25 -> 1, -1.5 -> -2
    assert dml.quantize_linear(x, 2.0, 128).tolist() == got.tolist()  # a number takes the FLOAT16 scale type
    with pytest.raises(dml.InvalidArgumentError, match=r"^ELEMENT_WISE_QUANTIZE_LINEAR: ScaleTensor must be "
                       r"representable in FLOAT16; got 70000\.0\.$"):
        dml.quantize_linear(x, 70000.0)


def test_output_type_rule() -> None:
    x = np.array([-2.0, 1.0, 300.0], np.float32)
    assert dml.quantize_linear(x, 1.0).dtype == np.uint8  # neither: UINT8, as ONNX
    assert dml.quantize_linear(x, 1.0).tolist() == [0, 1, 255]
    signed = dml.quantize_linear(x, 1.0, output_type="INT8")
    assert signed.dtype == np.int8 and signed.tolist() == [-2, 1, 127]
    assert dml.quantize_linear(x, 1.0, -5, output_type=dml.DataType.INT8).tolist() == [-7, -4, 127]
    typed = dml.quantize_linear(x, 1.0, np.array([3], np.int8))  # the zero point's own type
    assert typed.dtype == np.int8 and typed.tolist() == [1, 4, 127]
    assert dml.quantize_linear(x, 1.0, np.uint8(3), output_type="UINT8").dtype == np.uint8  # agreeing: fine
    with pytest.raises(dml.InvalidArgumentError, match=r"^ELEMENT_WISE_QUANTIZE_LINEAR: output_type must equal "
                       r"ZeroPointTensor.DataType \(INT8\), the zero point's own type, when both are given; got UINT8\.$"):
        dml.quantize_linear(x, 1.0, np.int8(3), output_type="UINT8")
    with pytest.raises(dml.InvalidArgumentError, match=r"^ELEMENT_WISE_QUANTIZE_LINEAR: ZeroPointTensor must hold "
                       r"values of the output's type uint8; got 256\.$"):
        dml.quantize_linear(x, 1.0, 256)
    with pytest.raises(dml.InvalidArgumentError, match=r"ZeroPointTensor must hold values of the output's type int8; "
                       r"got 1\.5\.$"):
        dml.quantize_linear(x, 1.0, 1.5, output_type="INT8")
    with pytest.raises(dml.InvalidArgumentError, match=r"^ELEMENT_WISE_QUANTIZE_LINEAR: OutputTensor.DataType must "
                       r"be one of"):
        dml.quantize_linear(x, 1.0, output_type="FLOAT99")
    with pytest.raises(dml.OpenDMLError, match=r"^ELEMENT_WISE_QUANTIZE_LINEAR: (ZeroPoint|Output)Tensor.DataType "
                       r"must be one of INT8, UINT8"):
        dml.quantize_linear(x, 1.0, output_type="INT32")
    with pytest.raises(dml.OpenDMLError, match=r"^ELEMENT_WISE_QUANTIZE_LINEAR: ZeroPointTensor.DataType must be one "
                       r"of INT8, UINT8"):
        dml.quantize_linear(x, 1.0, np.int16(3))
    with pytest.raises(dml.InvalidArgumentError, match=r"^ELEMENT_WISE_QUANTIZE_LINEAR: ZeroPointTensor must be an "
                       r"array or a number of the output's type; got True\.$"):
        dml.quantize_linear(x, 1.0, True)


def test_scale_of_the_wrong_type_is_refused() -> None:
    with pytest.raises(dml.InvalidArgumentError, match=r"^ELEMENT_WISE_QUANTIZE_LINEAR: ScaleTensor.DataType must be "
                       r"FLOAT32 \(FLOAT32 for an INT32 InputTensor\); got FLOAT16\.$"):
        dml.quantize_linear(np.array([1, 2], np.int32), np.float16(0.5))
    with pytest.raises(dml.InvalidArgumentError, match=r"^ELEMENT_WISE_QUANTIZE_LINEAR: ScaleTensor.DataType must be "
                       r"FLOAT16 \(InputTensor.DataType\); got FLOAT32\.$"):
        dml.quantize_linear(np.array([1, 2], np.float16), np.float32(0.5))
    with pytest.raises(dml.InvalidArgumentError, match=r"^ELEMENT_WISE_QUANTIZE_LINEAR: ScaleTensor must hold FLOAT32 "
                       r"or FLOAT16 values; got True\.$"):
        dml.quantize_linear(np.array([1, 2], np.float32), True)
    with pytest.raises(dml.OpenDMLError, match=r"^ELEMENT_WISE_QUANTIZE_LINEAR: InputTensor.DataType must be one of"):
        dml.quantize_linear(np.array([1, 2], np.uint8), 1.0)


def test_levels() -> None:
    x = np.array([[1.0, -1.0]], np.float32)
    level_6_0 = dml.Device("cpu", "6_0")  # no optional zero point below 6_2: an explicit 0 is passed
    assert dml.quantize_linear(x, 0.5, device=level_6_0).tolist() == [[2, 0]]
    assert dml.quantize_linear(x, 0.5, output_type="INT8", device=level_6_0).tolist() == [[2, -2]]
    level_1_0 = dml.Device("cpu", "1_0")  # 4-D only, UINT8 only: leading ones are added
    assert dml.quantize_linear(x, 0.5, np.uint8(1), device=level_1_0).tolist() == [[3, 0]]  # -2 + 1 saturates
    with pytest.raises(dml.UnsupportedFeatureLevelError, match=r"ELEMENT_WISE_QUANTIZE_LINEAR: .*INT8"):
        dml.quantize_linear(x, 0.5, np.int8(1), device=level_1_0)
    with pytest.raises(dml.UnsupportedFeatureLevelError, match=r"ELEMENT_WISE_QUANTIZE_LINEAR: .*FLOAT16"):
        dml.quantize_linear(x.astype(np.float16), 0.5, device=dml.Device("cpu", "3_0"))


def _reference(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray | None, dtype: Any) -> np.ndarray:
    """The expected result twice over: the independent oracle element by element, which opendml's NumPy
    reference must match too."""
    shape = np.broadcast_shapes(*(np.shape(a) for a in (x, scale, zero_point) if a is not None))
    inputs = [np.broadcast_to(a, shape) if a is not None else None for a in (x, scale, zero_point)]
    xs, ss, zs = inputs
    assert xs is not None and ss is not None
    name = dml.DataType.parse(np.dtype(dtype)).name
    convert = float if xs.dtype.kind == "f" else int
    oracle = np.zeros(shape, dtype)
    for i in np.ndindex(*shape):
        oracle[i] = quantize_element(convert(xs[i]), float(ss[i]), None if zs is None else int(zs[i]), name)
    reference = quantize_linear_reference(inputs, QuantizeParams(dml.DataType.parse(np.dtype(dtype))))
    assert np.array_equal(reference, oracle)
    return oracle


@pytest.fixture
def described(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The descriptions the functional API compiles."""
    seen: list[Any] = []
    original = dml.Device.compiled

    def compiled(self: dml.Device, desc: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(desc)
        return original(self, desc, *args, **kwargs)

    monkeypatch.setattr(dml.Device, "compiled", compiled)
    return seen


def test_broadcasts_reach_the_operator_as_zero_strides(described: list[Any]) -> None:
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((5, 4, 3)) * 100).astype(np.float32)
    scale = rng.uniform(0.5, 2, 3).astype(np.float32)  # per channel on the last axis
    zero_point = rng.integers(-20, 20, (5, 1, 1)).astype(np.int8)
    got = dml.quantize_linear(x, scale, zero_point)
    assert got.dtype == np.int8 and np.array_equal(got, _reference(x, scale, zero_point, np.int8))
    (desc,) = described
    assert desc.scale_tensor.strides == (0, 0, 1) and desc.zero_point_tensor.strides == (1, 0, 0)
    assert desc.input_tensor.strides == (12, 3, 1)
    column = dml.quantize_linear(x[:, :1, 0], scale[:2], 100)  # x broadcast too: (5, 1) against (2,)
    assert column.shape == (5, 2) and np.array_equal(column, _reference(x[:, :1, 0], scale[:2], np.uint8(100), np.uint8))
    assert described[-1].input_tensor.strides == (12, 0)


@pytest.mark.parametrize("input_dtype", ["float32", "float16", "int32"])
def test_against_the_reference_over_layouts(input_dtype: str) -> None:
    rng = np.random.default_rng(8)
    base = (rng.standard_normal((6, 8, 5)) * 300).astype(input_dtype)
    scale_dtype = np.float16 if input_dtype == "float16" else np.float32
    scales = [np.asarray(scale_dtype(1.5)), rng.uniform(0.1, 3, (1, 8, 1)).astype(scale_dtype)]
    for view in (base, base[::2, 1:7:3], base[:, ::-1], base.transpose(1, 0, 2)[:6, :8]):
        for scale in scales:
            if scale.ndim and scale.shape[1] != view.shape[1]:
                scale = scale[:, :view.shape[1]]
            for zero_point in (None, np.uint8(77), np.array([[[-3]]], np.int8)):
                got = dml.quantize_linear(view, scale, zero_point)
                dtype = np.uint8 if zero_point is None else zero_point.dtype
                assert got.dtype == dtype and np.array_equal(got, _reference(view, scale, zero_point, dtype))


def test_out_parameter() -> None:
    x = np.array([[0.4, 1.6], [-7.5, 300.0]], np.float32)
    canvas = np.full((2, 5), 9, np.int8)
    view = canvas[:, ::3]
    assert dml.quantize_linear(x, 0.5, np.int8(0), out=view) is view
    assert canvas.tolist() == [[1, 9, 9, 3, 9], [-15, 9, 9, 127, 9]]  # 0.8 -> 1, 3.2 -> 3, -15, 600 saturates
    with pytest.raises(dml.InvalidArgumentError, match=r"^ELEMENT_WISE_QUANTIZE_LINEAR: out must have shape \(2, 2\) "
                       r"and dtype uint8"):
        dml.quantize_linear(x, 0.5, out=np.zeros((2, 2), np.int8))
    with pytest.raises(dml.InvalidArgumentError, match=r"^ELEMENT_WISE_QUANTIZE_LINEAR: ScaleTensor shape must "
                       r"broadcast with the shape \(2, 2\) of InputTensor; got \(3,\)\.$"):
        dml.quantize_linear(x, np.ones(3, np.float32))
    with pytest.raises(dml.InvalidArgumentError, match=r"ZeroPointTensor shape must broadcast"):
        dml.quantize_linear(x, 0.5, np.zeros(3, np.uint8))


def test_quantize_then_dequantize_round_trip() -> None:
    x = np.array([-1.0, -0.26, 0.0, 0.24, 0.26, 1.0, 40.0], np.float32)
    q = dml.quantize_linear(x, 0.25, np.uint8(128))
    assert q.tolist() == [124, 127, 128, 129, 129, 132, 255]  # 0.96 -> 1, 1.04 -> 1, 160 + 128 saturates
    assert dml.dequantize_linear(q, 0.25, np.uint8(128)).tolist() == [-1.0, -0.25, 0.0, 0.25, 0.25, 1.0, 31.75]


@NEEDS_CUDA
def test_gpu_quantize_on_cupy_and_pytorch() -> None:
    import cupy

    rng = np.random.default_rng(6)
    x = (rng.standard_normal((3, 8)) * 50).astype(np.float32)
    scale = rng.uniform(0.2, 2, 8).astype(np.float32)
    expected = dml.quantize_linear(x, scale, np.int8(-7))
    got = dml.quantize_linear(cupy.asarray(x), cupy.asarray(scale), np.int8(-7))  # a host scalar zero point
    assert isinstance(got, cupy.ndarray) and got.dtype == np.int8
    assert np.array_equal(cupy.asnumpy(got), expected)
    assert np.array_equal(dml.quantize_linear(x, scale, np.int8(-7), device="cuda"), expected)  # host in and out
    torch = pytest.importorskip("torch", reason="PyTorch tensors on the GPU")
    tensor = dml.quantize_linear(torch.from_numpy(x).cuda(), torch.from_numpy(scale).cuda(), torch.tensor(-7,
                                 dtype=torch.int8))
    assert isinstance(tensor, torch.Tensor) and tensor.is_cuda and np.array_equal(tensor.cpu().numpy(), expected)
