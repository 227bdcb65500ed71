"""Bad descriptions: each is a clear OpenDMLError at construction or creation, never a crash."""

from __future__ import annotations

import numpy as np
import pytest

import opendml as dml
from opendml import TensorDesc


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    (("FLOAT32", [2, 0]), {}, r"DML_BUFFER_TENSOR_DESC: Sizes\[1\] must be in \[1, 4294967295\]; got 0\."),
    (("FLOAT32", []), {}, r"DimensionCount must be between 1 and 8; got 0\."),
    (("FLOAT32", [1] * 9), {}, r"DimensionCount must be between 1 and 8; got 9\."),
    (("FLOAT32", [2**32]), {}, r"Sizes\[0\] must be in \[1, 4294967295\]; got 4294967296\."),
    (("FLOAT32", [2**16, 2**16]), {}, r"Sizes must hold at most 4294967295 elements; got 4294967296\."),
    (("FLOAT32", [2, 2], [2, -1]), {}, r"Strides\[1\] must be in \[0, 4294967295\]; got -1\."),
    (("FLOAT32", [2, 2], [2]), {}, r"Strides must have DimensionCount \(2\) entries; got 1\."),
    (("FLOAT32", [2.5]), {}, r"Sizes\[0\] must be an integer; got 2\.5\."),
    (("FLOAT32", "23"), {}, r"Sizes must be a sequence of integers"),
    (("FLOAT32", [5]), {"total_tensor_size_in_bytes": 19}, r"TotalTensorSizeInBytes must be at least 20; got 19\."),
    (("FLOAT16", [5]), {"total_tensor_size_in_bytes": 10}, r"TotalTensorSizeInBytes must be at least 12; got 10\."),
    (("FLOAT32", [4]), {"guaranteed_base_offset_alignment": 24},
     r"GuaranteedBaseOffsetAlignment must be 0 or a power of two of at least 4; got 24\."),
    (("FLOAT32", [4]), {"guaranteed_base_offset_alignment": 2}, r"power of two of at least 4; got 2\."),
    (("COMPLEX64", [4]), {}, r"DataType must be one of"),
    (("FLOAT32", [4]), {"flags": "SHARED"}, r"Flags must be one of NONE, OWNED_BY_DML"),
])
def test_tensor_desc_rejects(args: tuple, kwargs: dict, message: str) -> None:
    with pytest.raises(dml.InvalidArgumentError, match=message):
        TensorDesc(*args, **kwargs)


@pytest.mark.parametrize(("data_type", "sizes", "strides", "expected"), [
    ("FLOAT16", [5], None, 12), ("UINT8", [3], None, 4), ("FLOAT32", [2, 3], [0, 1], 12),
    ("FLOAT32", [2, 3], [4, 1], 28), ("INT64", [3, 2], [1, 3], 48), ("UINT8", [2, 2], [0, 0], 4),
])
def test_minimum_total_size(data_type: str, sizes: list, strides: list | None, expected: int) -> None:
    assert TensorDesc(data_type, sizes, strides).total_tensor_size_in_bytes == expected
    assert dml.calc_buffer_tensor_size(dml.DataType.parse(data_type), sizes, strides) == expected


def create(desc: object, level: str = "6_4") -> dml.Operator:
    return dml.Device("cpu", level).create_operator(desc)


F4 = TensorDesc("FLOAT32", [2, 3])


@pytest.mark.parametrize(("desc", "message"), [
    (dml.ElementWiseClipDesc(F4, TensorDesc("FLOAT16", [2, 3]), 0, 1),
     r"ELEMENT_WISE_CLIP: OutputTensor.DataType must equal InputTensor.DataType \(FLOAT32\); got FLOAT16\."),
    (dml.ElementWiseClipDesc(F4, TensorDesc("FLOAT32", [2, 4]), 0, 1),
     r"ELEMENT_WISE_CLIP: OutputTensor.Sizes\[1\] must equal InputTensor.Sizes\[1\] \(3\); got 4\."),
    (dml.ElementWiseThresholdDesc(F4, TensorDesc("FLOAT32", [6]), 0),
     r"ELEMENT_WISE_THRESHOLD: OutputTensor.DimensionCount must equal InputTensor.DimensionCount \(2\); got 1\."),
    (dml.ElementWiseClipDesc(F4, F4, "1", 2), r"ELEMENT_WISE_CLIP: Min must be a number; got '1'\."),
    (dml.ElementWiseClipDesc(F4, F4, 0, 1, "x"), r"ScaleBias must be a ScaleBias or a \(scale, bias\) pair"),
    (dml.ElementWiseClipDesc(TensorDesc("FLOAT64", [2]), TensorDesc("FLOAT64", [2]), 0, 1),
     r"ELEMENT_WISE_CLIP: InputTensor.DataType must be one of .* at feature level 6_4; got FLOAT64\."),
    (dml.ElementWiseClipDesc(F4, TensorDesc("FLOAT32", [2, 3], [0, 1]), 0, 1),
     r"ELEMENT_WISE_CLIP: OutputTensor.Strides must address each output element once .*; got \[0, 1\]\."),
    (dml.ElementWiseClipDesc(TensorDesc("FLOAT32", [2, 2], [1, 1]), TensorDesc("FLOAT32", [2, 2], [1, 1]), 0, 1),
     r"OutputTensor.Strides must address each output element once"),
    (dml.ElementWiseClipDesc(TensorDesc("FLOAT32", [2], flags="OWNED_BY_DML"), TensorDesc("FLOAT32", [2]), 0, 1),
     r"ELEMENT_WISE_CLIP: InputTensor.Flags must not include OWNED_BY_DML"),
    (dml.ElementWiseClipDesc(None, F4, 0, 1), r"ELEMENT_WISE_CLIP: InputTensor must be a TensorDesc; got None\."),
    (dml.ElementWiseClip1Desc(F4, F4, "FLOAT16", 0, 1),
     r"ELEMENT_WISE_CLIP1: MinMaxDataType must equal OutputTensor.DataType \(FLOAT32\); got FLOAT16\."),
    (dml.ElementWiseClip1Desc(TensorDesc("INT8", [2]), TensorDesc("INT8", [2]), "INT8", 0, 128),
     r"ELEMENT_WISE_CLIP1: Max must be in \[-128, 127\] for INT8; got 128\."),
    (dml.ElementWiseClip1Desc(TensorDesc("INT8", [2]), TensorDesc("INT8", [2]), "INT8", 0.5, 1),
     r"ELEMENT_WISE_CLIP1: Min must be an integer for MinMaxDataType INT8; got 0\.5\."),
    (dml.ElementWiseClip1Desc(TensorDesc("FLOAT16", [2]), TensorDesc("FLOAT16", [2]), "FLOAT16", 0, 70000.0),
     r"ELEMENT_WISE_CLIP1: Max must be representable in FLOAT16; got 70000\.0\."),
    (dml.ElementWiseClip1Desc(TensorDesc("UINT8", [2]), TensorDesc("UINT8", [2]), "UINT8", True, 1),
     r"Min must be a number of type UINT8; got True\."),
    (dml.ElementWiseDequantizeLinearDesc(TensorDesc("UINT8", [4]), TensorDesc("FLOAT32", [4]),
                                         TensorDesc("INT8", [4]), TensorDesc("FLOAT32", [4])),
     r"ZeroPointTensor.DataType must equal InputTensor.DataType \(UINT8\); got INT8\."),
    (dml.ElementWiseDequantizeLinearDesc(TensorDesc("UINT8", [4]), TensorDesc("FLOAT32", [4]),
                                         None, TensorDesc("FLOAT16", [4])),
     r"OutputTensor.DataType must equal ScaleTensor.DataType \(FLOAT32\); got FLOAT16\."),
    (dml.ElementWiseDequantizeLinearDesc(TensorDesc("UINT8", [4]), TensorDesc("FLOAT32", [1]),
                                         None, TensorDesc("FLOAT32", [4])),
     r"ScaleTensor.Sizes\[0\] must equal InputTensor.Sizes\[0\] \(4\); got 1\."),
    (dml.ArgMinDesc(F4, TensorDesc("UINT32", [1, 3]), [2]), r"ARGMIN: Axes\[0\] must be an integer in \[0, 1\]; got 2\."),
    (dml.ArgMinDesc(F4, TensorDesc("UINT32", [1, 3]), [-1]), r"Axes\[0\] must be an integer in \[0, 1\]; got -1\."),
    (dml.ArgMinDesc(F4, TensorDesc("UINT32", [1, 1]), [0, 0]), r"ARGMIN: Axes must not repeat an axis; got \[0, 0\]\."),
    (dml.ArgMinDesc(F4, TensorDesc("UINT32", [2, 3]), []), r"Axes must be a non-empty sequence"),
    (dml.ArgMinDesc(F4, TensorDesc("UINT32", [2, 3]), [0]),
     r"ARGMIN: OutputTensor.Sizes\[0\] must be 1 \(a reduced axis\); got 2\."),
    (dml.ArgMinDesc(F4, TensorDesc("UINT32", [1, 2]), [0]),
     r"OutputTensor.Sizes\[1\] must be 3 \(InputTensor.Sizes\[1\]\); got 2\."),
    (dml.ArgMinDesc(F4, TensorDesc("UINT32", [3]), [0]),
     r"OutputTensor.DimensionCount must equal InputTensor.DimensionCount \(2\); got 1\."),
    (dml.ArgMinDesc(F4, TensorDesc("UINT32", [1, 3]), [0], "SIDEWAYS"),
     r"ARGMIN: AxisDirection must be one of INCREASING, DECREASING; got 'SIDEWAYS'\."),
    (dml.ArgMinDesc(F4, TensorDesc("FLOAT32", [1, 3]), [0]),
     r"ARGMIN: OutputTensor.DataType must be one of INT64, INT32, UINT64, UINT32 at feature level 6_4; got FLOAT32"),
])
def test_invalid_descriptions(desc: object, message: str) -> None:
    with pytest.raises(dml.InvalidArgumentError, match=message):
        create(desc)


def test_unknown_description_type() -> None:
    with pytest.raises(dml.InvalidArgumentError, match=r"Device: desc must be one of .*; got dict\."):
        create({"InputTensor": F4})


def test_errors_are_one_family() -> None:
    for cls in (dml.InvalidArgumentError, dml.UnsupportedFeatureLevelError, dml.BindingError,
                dml.BackendUnavailableError):
        assert issubclass(cls, dml.OpenDMLError)


@pytest.mark.parametrize("value", ["7_0", "6-2", 0x6500, None, 6.2, "FL_1_5"])
def test_bad_feature_levels(value: object) -> None:
    with pytest.raises(dml.InvalidArgumentError, match=r"Device: feature_level must be one of 1_0, 2_0"):
        dml.Device("cpu", value)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [dml.FeatureLevel.FL_6_2, "6_2", "6.2", 0x6200, "FL_6_2", "DML_FEATURE_LEVEL_6_2"])
def test_feature_level_spellings(value: object) -> None:
    assert dml.FeatureLevel.parse(value) is dml.FeatureLevel.FL_6_2


def test_feature_levels_are_ordered() -> None:
    levels = list(dml.FeatureLevel)
    assert [lv.label for lv in levels] == ["1_0", "2_0", "2_1", "3_0", "3_1", "4_0", "4_1", "5_0", "5_1", "5_2",
                                           "6_0", "6_1", "6_2", "6_3", "6_4"]
    assert levels == sorted(levels) and dml.FeatureLevel.FL_5_2 < dml.FeatureLevel.FL_6_0


def test_data_type_values_and_names() -> None:
    expected = {"UNKNOWN": 0, "FLOAT32": 1, "FLOAT16": 2, "UINT32": 3, "UINT16": 4, "UINT8": 5, "INT32": 6,
                "INT16": 7, "INT8": 8, "FLOAT64": 9, "UINT64": 10, "INT64": 11, "UINT4": 12, "INT4": 13}
    assert {t.name: t.value for t in dml.DataType} == expected
    assert dml.DataType.parse("DML_TENSOR_DATA_TYPE_FLOAT16") is dml.DataType.FLOAT16
    assert dml.DataType.parse(np.int8) is dml.DataType.INT8


def test_device_queries() -> None:
    device = dml.Device("cpu", "5_0")
    assert device.check_feature_levels(["4_1", "6_0", dml.FeatureLevel.FL_1_0]) is dml.FeatureLevel.FL_4_1
    with pytest.raises(dml.UnsupportedFeatureLevelError, match=r"feature_levels must include one at or below 5_0"):
        device.check_feature_levels(["6_0"])
    assert device.supports_data_type("FLOAT16") and device.supports_data_type(dml.DataType.UINT64)
    with pytest.raises(dml.InvalidArgumentError):
        device.supports_data_type("BFLOAT16")
    with pytest.raises(dml.InvalidArgumentError, match=r"Device: backend must be one of cpu, cuda; got 'tpu'\."):
        dml.Device("tpu")


def test_enum_spellings() -> None:
    assert dml.AxisDirection.parse("DML_AXIS_DIRECTION_DECREASING") is dml.AxisDirection.DECREASING
    assert dml.AxisDirection.parse("increasing") is dml.AxisDirection.INCREASING
    assert dml.TensorFlags.parse("DML_TENSOR_FLAG_OWNED_BY_DML") is dml.TensorFlags.OWNED_BY_DML
    assert dml.ExecutionFlags.parse(3) == (dml.ExecutionFlags.ALLOW_HALF_PRECISION_COMPUTATION
                                           | dml.ExecutionFlags.DISABLE_META_COMMANDS)


def test_huge_clip_bounds_round_to_infinity_as_a_float_field_would() -> None:
    t = TensorDesc("INT32", [2])
    op = create(dml.ElementWiseClipDesc(t, t, -(10**400), 10**400))
    assert op.params["Min"] == -(2**31) and op.params["Max"] == 2**31 - 1
