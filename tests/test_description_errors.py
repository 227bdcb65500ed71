"""Every bad value in a description, a query or a buffer is an OpenDMLError naming its field.

Each case here once escaped as a TypeError, KeyError, OverflowError, MemoryError or ValueError, or was
silently accepted (flags 2 and -1).
"""

from __future__ import annotations

import numpy as np
import pytest

import opendml as dml
from opendml import DataType, TensorDesc

TYPE_LIST = "FLOAT32, FLOAT16, UINT32, UINT16, UINT8, INT32, INT16, INT8, FLOAT64, UINT64, INT64, UINT4, INT4"
F23 = TensorDesc("FLOAT32", [2, 3])
I2 = TensorDesc("INT32", [2])


def create(desc: object) -> dml.Operator:
    return dml.Device("cpu").create_operator(desc)


# --- sizes, strides and axes given as 0-d arrays, sets or dicts --------------------------------------

@pytest.mark.parametrize(("args", "message"), [
    (("FLOAT32", np.array(4)),
     r"^DML_BUFFER_TENSOR_DESC: Sizes must be a sequence of integers \(a list, tuple or 1-D array\); got array\(4\)\.$"),
    (("FLOAT32", [4], np.array(1)), r"^DML_BUFFER_TENSOR_DESC: Strides must be a sequence of integers .*; got array\(1\)\.$"),
    (("FLOAT32", np.array([[2, 3]])), r"^DML_BUFFER_TENSOR_DESC: Sizes must be a sequence of integers .*; got array\(\[\[2, 3\]\]\)\.$"),
    (("FLOAT32", {4}), r"^DML_BUFFER_TENSOR_DESC: Sizes must be a sequence of integers .*; got \{4\}\.$"),
])
def test_sizes_and_strides_must_be_one_dimensional_sequences(args: tuple, message: str) -> None:
    with pytest.raises(dml.InvalidArgumentError, match=message):
        TensorDesc(*args)


def test_sizes_from_a_one_dimensional_array_still_work() -> None:
    desc = TensorDesc("FLOAT32", np.array([2, 3]), np.array([3, 1]))
    assert desc.sizes == (2, 3) and desc.strides == (3, 1) and desc.total_tensor_size_in_bytes == 24


@pytest.mark.parametrize(("axes", "got"), [(np.array(0), r"array\(0\)"), ({0}, r"\{0\}"), ({0: 1}, r"\{0: 1\}")])
def test_argmin_axes_must_be_a_sequence(axes: object, got: str) -> None:
    desc = dml.ArgMinDesc(F23, TensorDesc("INT32", [1, 3]), axes)  # type: ignore[arg-type]
    with pytest.raises(dml.InvalidArgumentError,
                       match=rf"^ARGMIN: Axes must be a sequence of axes \(a list, tuple or 1-D array\); got {got}\.$"):
        create(desc)


def test_argmin_axes_from_a_one_dimensional_array_still_work() -> None:
    op = create(dml.ArgMinDesc(F23, TensorDesc("INT32", [1, 1]), np.array([1, 0])))
    assert op.params.axes == (0, 1)


# --- DataType.UNKNOWN and other enum values nothing defines --------------------------------------------

def test_unknown_data_type_is_refused_where_a_tensor_needs_a_type() -> None:
    with pytest.raises(dml.InvalidArgumentError,
                       match=rf"^DML_BUFFER_TENSOR_DESC: DataType must be one of {TYPE_LIST}; got UNKNOWN\.$"):
        TensorDesc(DataType.UNKNOWN, [4])


def test_unknown_min_max_data_type_is_refused() -> None:
    desc = dml.ElementWiseClip1Desc(F23, F23, DataType.UNKNOWN, 0.0, 1.0)
    with pytest.raises(dml.InvalidArgumentError,
                       match=rf"^ELEMENT_WISE_CLIP1: MinMaxDataType must be one of {TYPE_LIST}; got UNKNOWN\.$"):
        create(desc)


def test_unknown_is_no_type_a_device_supports_or_refuses() -> None:
    with pytest.raises(dml.InvalidArgumentError, match=r"^Device: DataType must be one of .*; got UNKNOWN\.$"):
        dml.Device("cpu").supports_data_type(DataType.UNKNOWN)


def test_data_types_by_directml_value() -> None:
    # DirectML's values (SPEC 1): UINT32 3, INT64 11, UINT4 12, INT4 13 (6_3); 0 is UNKNOWN and 14 is nothing.
    assert DataType.parse(3) is DataType.UINT32 and DataType.parse(np.int32(11)) is DataType.INT64
    assert DataType.parse(12) is DataType.UINT4 and DataType.parse("DML_TENSOR_DATA_TYPE_INT4") is DataType.INT4
    for value in (0, 14, -1):
        with pytest.raises(dml.InvalidArgumentError, match=rf"DataType must be one of .*; got {value}\.$"):
            DataType.parse(value)


def test_a_member_of_another_enum_is_not_taken_for_its_value() -> None:
    # AxisDirection.DECREASING is the integer 1, FLOAT32's value; TensorFlags.OWNED_BY_DML is 1 too.
    with pytest.raises(dml.InvalidArgumentError, match=r"DataType must be one of .*; got DECREASING\.$"):
        DataType.parse(dml.AxisDirection.DECREASING)
    desc = dml.ArgMinDesc(F23, TensorDesc("INT32", [1, 3]), [0], dml.TensorFlags.OWNED_BY_DML)  # type: ignore[arg-type]
    with pytest.raises(dml.InvalidArgumentError,
                       match=r"^ARGMIN: AxisDirection must be one of INCREASING, DECREASING; got OWNED_BY_DML\.$"):
        create(desc)


@pytest.mark.parametrize("flags", [2, -1, 3, dml.TensorFlags(2), "OWNED_BY_DML|SHARED"])
def test_tensor_flags_outside_directml_values(flags: object) -> None:
    with pytest.raises(dml.InvalidArgumentError,
                       match=r"^DML_BUFFER_TENSOR_DESC: Flags must be one of NONE, OWNED_BY_DML, or a bitwise OR "
                             r"of them \(0 to 0x1\); got "):
        TensorDesc("FLOAT32", [4], flags=flags)  # type: ignore[arg-type]


def test_tensor_flags_spellings() -> None:
    assert TensorDesc("FLOAT32", [4], flags=np.uint8(1)).flags is dml.TensorFlags.OWNED_BY_DML
    assert TensorDesc("FLOAT32", [4], flags="none|DML_TENSOR_FLAG_OWNED_BY_DML").flags is dml.TensorFlags.OWNED_BY_DML
    assert TensorDesc("FLOAT32", [4], flags=0).flags is dml.TensorFlags.NONE


@pytest.mark.parametrize("flags", [8, -1, 0x10, True, 1.0])
def test_execution_flags_outside_the_defined_bits(flags: object) -> None:
    device = dml.Device("cpu")
    op = device.create_operator(dml.ElementWiseClipDesc(F23, F23, 0.0, 1.0))
    with pytest.raises(dml.InvalidArgumentError,
                       match=r"^ELEMENT_WISE_CLIP: ExecutionFlags must be one of NONE, ALLOW_HALF_PRECISION_COMPUTATION, "
                             r"DISABLE_META_COMMANDS, DESCRIPTORS_VOLATILE, or a bitwise OR of them \(0 to 0x7\); got "):
        device.compile_operator(op, flags)  # type: ignore[arg-type]


def test_execution_flags_combinations() -> None:
    flags = dml.ExecutionFlags
    assert flags.parse("ALLOW_HALF_PRECISION_COMPUTATION|DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE").value == 5
    assert flags.parse(np.int64(7)).value == 7


@pytest.mark.parametrize("value", [2, -1, 0.0, "2"])
def test_axis_direction_outside_zero_and_one(value: object) -> None:
    desc = dml.ArgMinDesc(F23, TensorDesc("INT32", [1, 3]), [0], value)  # type: ignore[arg-type]
    with pytest.raises(dml.InvalidArgumentError, match=r"^ARGMIN: AxisDirection must be one of INCREASING, DECREASING; got "):
        create(desc)


def test_axis_direction_as_a_numpy_integer() -> None:
    op = create(dml.ArgMinDesc(F23, TensorDesc("INT32", [1, 3]), [0], np.int64(1)))  # type: ignore[arg-type]
    assert op.params.axis_direction is dml.AxisDirection.DECREASING


@pytest.mark.parametrize("value", [np.int64(0x4100), np.uint16(0x4100), " dml_feature_level_4_1 "])
def test_feature_level_spellings_beyond_python_ints(value: object) -> None:
    assert dml.FeatureLevel.parse(value) is dml.FeatureLevel.FL_4_1


@pytest.mark.parametrize("value", [4.1, True, "4_1_", "٤_١", b"4_1", dml.DataType.FLOAT32, 10**40])
def test_feature_level_weird_values(value: object) -> None:
    with pytest.raises(dml.InvalidArgumentError, match=r"^opendml: FeatureLevel must be one of 1_0, 2_0, .*, 6_4; got "):
        dml.FeatureLevel.parse(value)


# --- bounds too large for any float: CLIP1's typed scalars -----------------------------------------------

@pytest.mark.parametrize(("data_type", "low", "high", "message"), [
    ("FLOAT32", 0, 10**400, r"^ELEMENT_WISE_CLIP1: Max must be representable in FLOAT32; got 1\.000e\+400\.$"),
    ("FLOAT16", -(10**400), 0, r"^ELEMENT_WISE_CLIP1: Min must be representable in FLOAT16; got -1\.000e\+400\.$"),
    ("FLOAT64", 0, 10**400, r"^ELEMENT_WISE_CLIP1: Max must be representable in FLOAT64; got 1\.000e\+400\.$"),
    ("INT32", 0, 10**400, r"^ELEMENT_WISE_CLIP1: Max must be in \[-2147483648, 2147483647\] for INT32; got 1\.000e\+400\.$"),
    ("UINT64", -(2**64), 0, r"^ELEMENT_WISE_CLIP1: Min must be in \[0, 18446744073709551615\] for UINT64; got -18446744073709551616\.$"),
])
def test_clip1_bounds_beyond_any_float(data_type: str, low: int, high: int, message: str) -> None:
    t = TensorDesc(data_type, [2])
    with pytest.raises(dml.InvalidArgumentError, match=message):
        dml.Device("cpu").create_operator(dml.ElementWiseClip1Desc(t, t, data_type, low, high))


@pytest.mark.skipif(np.finfo(np.longdouble).max <= np.finfo(np.float64).max,
                    reason="long double is float64 on this platform: no finite value beyond float64")
def test_clip1_long_double_bound_beyond_float64() -> None:
    # Finite as given, but infinite once converted: as out of range as 10**400.
    with pytest.raises(dml.InvalidArgumentError, match=r"^ELEMENT_WISE_CLIP1: Max must be representable in FLOAT32; got "):
        create(dml.ElementWiseClip1Desc(F23, F23, "FLOAT32", 0.0, np.longdouble(10) ** 400))
    op = create(dml.ElementWiseClip1Desc(F23, F23, "FLOAT32", -np.inf, np.inf))  # infinities are values too
    assert (float(op.params["Min"]), float(op.params["Max"])) == (-np.inf, np.inf)


def test_clip1_largest_float_bounds_are_kept() -> None:
    t = TensorDesc("FLOAT16", [2])
    op = create(dml.ElementWiseClip1Desc(t, t, "FLOAT16", -65504, 65504))  # FLOAT16's largest finite value
    assert (float(op.params["Min"]), float(op.params["Max"])) == (-65504.0, 65504.0)


# --- a TotalTensorSizeInBytes beyond UINT64 ---------------------------------------------------------------

def test_computed_total_size_beyond_uint64() -> None:
    # (2**32 - 2) * (2**32 - 1) + 1 elements of 8 bytes reach 147573952486597197848 bytes > 2**64 - 1.
    with pytest.raises(dml.InvalidArgumentError,
                       match=r"^DML_BUFFER_TENSOR_DESC: TotalTensorSizeInBytes must be at most 18446744073709551615 "
                             r"\(a UINT64\); got 147573952486597197848, the size that Sizes and Strides reach\.$"):
        TensorDesc("FLOAT64", [2**32 - 1], [2**32 - 1])


def test_total_size_just_within_uint64_is_accepted() -> None:
    # UINT8 [2, 2]: (1 * stride + 1 * 1 + 1) bytes, rounded up to 4; stride 2**32 - 1 gives 2**32 + 1 -> 2**32 + 4.
    assert TensorDesc("UINT8", [2, 2], [2**32 - 1, 1]).total_tensor_size_in_bytes == 2**32 + 4


@pytest.mark.parametrize(("args", "message"), [
    ((None, [2], None), r"^DMLCalcBufferTensorSize: DataType must be one of .*; got None\.$"),
    ((DataType.UNKNOWN, [2], None), r"^DMLCalcBufferTensorSize: DataType must be one of .*; got UNKNOWN\.$"),
    ((DataType.FLOAT32, np.array(2), None), r"^DMLCalcBufferTensorSize: Sizes must be a sequence of integers .*; got array\(2\)\.$"),
    ((DataType.FLOAT32, [2, None], None), r"^DMLCalcBufferTensorSize: Sizes\[1\] must be an integer; got None\.$"),
    ((DataType.FLOAT32, [2, 3], [1]), r"^DMLCalcBufferTensorSize: Strides must have DimensionCount \(2\) entries; got 1\.$"),
    ((DataType.FLOAT32, [2], ["1"]), r"^DMLCalcBufferTensorSize: Strides\[0\] must be an integer; got '1'\.$"),
])
def test_calc_buffer_tensor_size_checks_its_arguments(args: tuple, message: str) -> None:
    with pytest.raises(dml.InvalidArgumentError, match=message):
        dml.calc_buffer_tensor_size(*args)


def test_calc_buffer_tensor_size_takes_names_and_arrays() -> None:
    # SPEC 2's examples: FLOAT16 [5] -> 12; UINT8 [3] -> 4; FLOAT32 [2,3] strides [0,1] -> 12.
    assert dml.calc_buffer_tensor_size("FLOAT16", np.array([5]), None) == 12
    assert dml.calc_buffer_tensor_size("uint8", (3,), None) == 4
    assert dml.calc_buffer_tensor_size(DataType.FLOAT32, [2, 3], np.array([0, 1])) == 12


# --- Device queries ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("levels", "got"), [(5, "5"), (None, "None"), ("6_0", "'6_0'"), (np.array(0x6000), r"array\(24576\)"),
                                             (dml.FeatureLevel.FL_6_0, "<FeatureLevel.FL_6_0: 24576>")])
def test_check_feature_levels_needs_a_list(levels: object, got: str) -> None:
    with pytest.raises(dml.InvalidArgumentError,
                       match=rf"^Device: feature_levels must be a list of feature levels; got {got}\.$"):
        dml.Device("cpu", "5_0").check_feature_levels(levels)  # type: ignore[arg-type]


def test_check_feature_levels_names_the_bad_entry() -> None:
    with pytest.raises(dml.InvalidArgumentError, match=r"^Device: feature_levels\[1\] must be one of 1_0, .*; got 5\.$"):
        dml.Device("cpu", "5_0").check_feature_levels(["4_1", 5])
    assert dml.Device("cpu", "5_0").check_feature_levels(("3_0", np.int32(0x4100))) is dml.FeatureLevel.FL_4_1


# --- buffers ----------------------------------------------------------------------------------------------------

ACCEPTED = (r"^Device: array must be bytes, or an array \(or nested list\) of numbers of a DirectML data type "
            rf"\({TYPE_LIST}\); got ")


@pytest.mark.parametrize(("array", "got"), [
    (None, r"None\.$"),
    (np.array([1, "a"], dtype=object), r"ndarray of dtype object\.$"),
    ("abc", r"str 'abc' of dtype <U3\.$"),
    ([[1, 2], [3]], r"list \[\[1, 2\], \[3\]\], which NumPy cannot make an array of\.$"),
    ([1, None], r"list \[1, None\] of dtype object\.$"),
    (np.zeros(2, np.complex64), r"ndarray of dtype complex64\.$"),
    (np.zeros(2, bool), r"ndarray of dtype bool\.$"),
    (np.zeros(2, "M8[s]"), r"ndarray of dtype datetime64\[s\]\.$"),
])
def test_buffer_from_refuses_what_has_no_directml_type(device: dml.Device, array: object, got: str) -> None:
    with pytest.raises(dml.InvalidArgumentError, match=ACCEPTED + got):
        device.buffer_from(array)


def test_buffer_from_bytes_and_lists(device: dml.Device) -> None:
    assert device.buffer_from(b"\x01\x02\x03").to_numpy().tolist() == [1, 2, 3]
    assert device.buffer_from(bytearray([9, 8])).to_numpy().tolist() == [9, 8]
    assert device.buffer_from([1.5, -2.0]).to_numpy().view(np.float64).tolist() == [1.5, -2.0]
    big_endian = np.array([1, 258], dtype=">u2")
    assert device.buffer_from(big_endian).to_numpy().tolist() == [1, 0, 2, 1]  # stored little-endian


@pytest.mark.parametrize("size", [2**62, 2**63 - 1])
def test_create_buffer_beyond_memory_is_out_of_memory(device: dml.Device, size: int) -> None:
    with pytest.raises(dml.OutOfMemoryError,
                       match=rf"^Device: size_in_bytes must fit in the (host|GPU) memory free now \(out of memory, "
                             rf"E_OUTOFMEMORY\); got {size}\.$") as caught:
        device.create_buffer(size)
    assert isinstance(caught.value, MemoryError) and isinstance(caught.value, dml.OpenDMLError)


@pytest.mark.parametrize("size", [2**63, 2**64, 10**30])
def test_create_buffer_beyond_what_an_array_indexes(device: dml.Device, size: int) -> None:
    with pytest.raises(dml.OutOfMemoryError,
                       match=rf"^Device: size_in_bytes must be at most 9223372036854775807, the most bytes a buffer "
                             rf"can address \(out of memory, E_OUTOFMEMORY\); got {size}\.$"):
        device.create_buffer(size)


@pytest.mark.parametrize("size", [-1, 1.5, "16", True, None])
def test_create_buffer_of_a_size_that_is_no_size(device: dml.Device, size: object) -> None:
    with pytest.raises(dml.InvalidArgumentError, match=r"^Device: size_in_bytes must be a non-negative integer; got "):
        device.create_buffer(size)  # type: ignore[arg-type]


def test_create_buffer_of_a_numpy_integer_size(device: dml.Device) -> None:
    assert device.create_buffer(np.int64(12)).to_numpy().tolist() == [0] * 12


# --- bindings ---------------------------------------------------------------------------------------------------

def _clip(device: dml.Device) -> dml.CompiledOperator:
    t = TensorDesc("FLOAT32", [4])
    return device.compile_operator(device.create_operator(dml.ElementWiseClipDesc(t, t, 0.0, 1.0)))


def test_binding_offsets_and_sizes_as_numpy_integers(device: dml.Device) -> None:
    src = device.buffer_from(np.array([0, 0, 0, 0, -1, 0.5, 2, 7], np.float32))
    dst = device.create_buffer(16)
    _clip(device).execute([dml.BufferBinding(src, np.int64(16), np.uint32(16))], [dml.BufferBinding(dst)])
    assert dst.to_numpy().view(np.float32).tolist() == [0, 0.5, 1, 1]


@pytest.mark.parametrize(("binding", "message"), [
    (lambda b: dml.BufferBinding(b, 0, "16"),
     r"^ELEMENT_WISE_CLIP: InputTensor.SizeInBytes must be an integer, or None for the rest of the buffer; got '16'\.$"),
    (lambda b: dml.BufferBinding(b, 0, 16.0), r"InputTensor.SizeInBytes must be an integer, or None .*; got 16\.0\.$"),
    (lambda b: dml.BufferBinding(b, 0, -16), r"InputTensor.SizeInBytes must be at least TotalTensorSizeInBytes \(16\); got -16\.$"),
    (lambda b: dml.BufferBinding(b, np.float64(0)), r"InputTensor.Offset must be a non-negative multiple of 16; got np.float64\(0.0\)\.$"),
    (lambda b: dml.BufferBinding(b, -16), r"InputTensor.Offset must be a non-negative multiple of 16; got -16\.$"),
    (lambda b: dml.BufferBinding(b, np.True_), r"InputTensor.Offset must be a non-negative multiple of 16; got np.True_\.$"),
    (lambda b: dml.BufferBinding(b, [16]), r"InputTensor.Offset must be a non-negative multiple of 16; got \[16\]\.$"),
    (lambda b: dml.BufferBinding(b, 0, np.array(16)), r"InputTensor.SizeInBytes must be an integer, or None .*; got array\(16\)\.$"),
])
def test_bad_binding_offsets_and_sizes(device: dml.Device, binding, message: str) -> None:
    buffer = device.create_buffer(32)
    with pytest.raises(dml.BindingError, match=message):
        _clip(device).execute([binding(buffer)], [device.create_buffer(16)])


def test_out_of_memory_is_one_of_the_family() -> None:
    assert issubclass(dml.OutOfMemoryError, dml.OpenDMLError) and issubclass(dml.OutOfMemoryError, MemoryError)
    assert "OutOfMemoryError" in dml.__all__


def test_rules_of_every_level_come_before_the_support_table() -> None:
    """OWNED_BY_DML or an overlapping output is refused at every level, so a description with one of them and
    a dimension count the device's level lacks is invalid, not 'accepted from level 3_0'."""
    owned = TensorDesc("FLOAT16", [1], flags="OWNED_BY_DML")
    with pytest.raises(dml.InvalidArgumentError, match=r"InputTensor\.Flags must not include OWNED_BY_DML"):
        dml.Device("cpu", "1_0").create_operator(dml.ElementWiseClipDesc(owned, TensorDesc("FLOAT16", [1]), 0, 0))
    overlapping = TensorDesc("FLOAT32", [2], [0])
    with pytest.raises(dml.InvalidArgumentError, match="OutputTensor"):
        dml.Device("cpu", "1_0").create_operator(
            dml.ElementWiseClipDesc(TensorDesc("FLOAT32", [2]), overlapping, 0, 0))


# --- ELEMENT_WISE_QUANTIZE_LINEAR --------------------------------------------------------------------------

def _quantize(x: str, scale: str, zero_point: str | None, out: str, sizes: tuple[list[int], ...] = ([4],) * 4
              ) -> dml.ElementWiseQuantizeLinearDesc:
    x_sizes, scale_sizes, zero_sizes, out_sizes = sizes
    return dml.ElementWiseQuantizeLinearDesc(TensorDesc(x, x_sizes), TensorDesc(scale, scale_sizes),
                                             None if zero_point is None else TensorDesc(zero_point, zero_sizes),
                                             TensorDesc(out, out_sizes))


Q = "ELEMENT_WISE_QUANTIZE_LINEAR"


@pytest.mark.parametrize(("desc", "message"), [
    (_quantize("INT32", "FLOAT16", None, "UINT8"),
     rf"^{Q}: ScaleTensor.DataType must be FLOAT32 \(FLOAT32 for an INT32 InputTensor\); got FLOAT16\.$"),
    (_quantize("FLOAT16", "FLOAT32", None, "UINT8"),
     rf"^{Q}: ScaleTensor.DataType must be FLOAT16 \(InputTensor.DataType\); got FLOAT32\.$"),
    (_quantize("FLOAT32", "FLOAT16", "INT8", "INT8"),
     rf"^{Q}: ScaleTensor.DataType must be FLOAT32 \(InputTensor.DataType\); got FLOAT16\.$"),
    (_quantize("UINT8", "FLOAT32", None, "UINT8"),  # the input named, not its scale
     rf"^{Q}: InputTensor.DataType must be one of FLOAT32, FLOAT16, INT32 at feature level 6_4; got UINT8\.$"),
    (_quantize("FLOAT32", "FLOAT32", None, "FLOAT32"),
     rf"^{Q}: OutputTensor.DataType must be one of INT8, UINT8 at feature level 6_4; got FLOAT32\.$"),
    (_quantize("FLOAT32", "FLOAT32", "INT8", "UINT8"),
     rf"^{Q}: ZeroPointTensor.DataType must equal OutputTensor.DataType \(UINT8\); got INT8\.$"),
    (_quantize("FLOAT32", "FLOAT32", None, "UINT8", ([4], [1], [4], [4])),
     rf"^{Q}: ScaleTensor.Sizes\[0\] must equal InputTensor.Sizes\[0\] \(4\); got 1\.$"),
    (_quantize("FLOAT32", "FLOAT32", "UINT8", "UINT8", ([4], [4], [3], [4])),
     rf"^{Q}: ZeroPointTensor.Sizes\[0\] must equal InputTensor.Sizes\[0\] \(4\); got 3\.$"),
    (_quantize("FLOAT32", "FLOAT32", None, "UINT8", ([2, 3], [2, 3], [2, 3], [6])),
     rf"^{Q}: OutputTensor.DimensionCount must equal InputTensor.DimensionCount \(2\); got 1\.$"),
])
def test_bad_quantize_linear_descriptions(desc: dml.ElementWiseQuantizeLinearDesc, message: str) -> None:
    with pytest.raises(dml.InvalidArgumentError, match=message):
        create(desc)


def test_quantize_linear_zero_point_is_optional_from_6_2() -> None:
    desc = _quantize("FLOAT32", "FLOAT32", None, "UINT8")
    dml.Device("cpu", "6_2").create_operator(desc)
    with pytest.raises(dml.UnsupportedFeatureLevelError,
                       match=rf"^{Q}: ZeroPointTensor is required at feature level 6_0; got none\. The lowest "
                             r"feature level that accepts this description is 6_2\.$"):
        dml.Device("cpu", "6_0").create_operator(desc)


def test_quantize_linear_output_may_not_broadcast() -> None:
    desc = dml.ElementWiseQuantizeLinearDesc(TensorDesc("FLOAT32", [4]), TensorDesc("FLOAT32", [4], [0]), None,
                                             TensorDesc("UINT8", [4], [0]))
    with pytest.raises(dml.InvalidArgumentError, match=rf"^{Q}: OutputTensor.Strides must address each output "
                                                       r"element once .*; got \[0\]\.$"):
        create(desc)
