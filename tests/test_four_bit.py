"""UINT4 and INT4 (feature level 6_3): values, packing, sizes, strides and which operators take them.

The expectations are written from DirectML's pages: the DML_TENSOR_DATA_TYPE page's layout (elements
[1, 2, 3, 4, 5] are the bytes [0x21, 0x43, 0x05]) and DirectMLX's DMLCalcBufferTensorSize (bits, rounded up to
bytes, then to 4), each worked here with Python integers.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import opendml as dml
from opendml.dtypes import DataType, from_numpy, type_names
from opendml.ops import OPERATORS
from opendml.tensor import read_elements, write_elements

FOUR_BIT = [DataType.UINT4, DataType.INT4]


def _nibble_of(value: int) -> int:
    """A value's 4-bit two's complement encoding (UINT4 values are their own)."""
    return value & 0xF


def _packed_by_hand(values: list[int]) -> list[int]:
    """Two to a byte, the element of lower index in the low nibble (DirectML's layout)."""
    padded = values + [0] * (len(values) % 2)
    return [_nibble_of(padded[k]) | _nibble_of(padded[k + 1]) << 4 for k in range(0, len(padded), 2)]


def _calc_by_hand(sizes: list[int], strides: list[int] | None) -> int:
    """DirectMLX's DMLCalcBufferTensorSize for 4-bit elements."""
    if strides is None:
        bits = 4
        for n in sizes:
            bits *= n
    else:
        bits = (sum((n - 1) * s for n, s in zip(sizes, strides)) + 1) * 4
    return ((bits + 7) // 8 + 3) & ~3


def test_values_names_and_level() -> None:
    assert DataType.UINT4 == 12 and DataType.INT4 == 13
    assert DataType.parse("DML_TENSOR_DATA_TYPE_UINT4") is DataType.UINT4 and DataType.parse("int4") is DataType.INT4
    assert all(t.bits == 4 and t.is_integer and t.is_sub_byte for t in FOUR_BIT)
    assert DataType.INT4.is_signed and not DataType.UINT4.is_signed
    assert DataType.INT4.integer_range == (-8, 7) and DataType.UINT4.integer_range == (0, 15)
    assert all(t.introduced is dml.FeatureLevel.FL_6_3 for t in FOUR_BIT)
    assert DataType.INT8.introduced is dml.FeatureLevel.FL_1_0 and DataType.INT8.bits == 8


def test_size_in_bytes_is_refused() -> None:
    with pytest.raises(dml.InvalidArgumentError, match=r"^DML_TENSOR_DATA_TYPE: size must be asked of a type of "
                       r"whole bytes .*; got INT4\.$"):
        _ = DataType.INT4.size


def test_table_order_puts_them_after_their_8_bit_kin() -> None:
    # DirectML's pages: "INT8, INT4, UINT8, UINT4".
    assert type_names({DataType.UINT4, DataType.UINT8, DataType.INT4, DataType.INT8}) == "INT8, INT4, UINT8, UINT4"


def test_ml_dtypes_arrays_name_them() -> None:
    assert from_numpy(np.dtype(ml_dtypes.int4)) is DataType.INT4
    assert from_numpy(np.dtype(ml_dtypes.uint4)) is DataType.UINT4
    assert DataType.parse(ml_dtypes.int4) is DataType.INT4


def test_pack_matches_directml_example() -> None:
    assert dml.pack4([1, 2, 3, 4, 5], "UINT4").tolist() == [0x21, 0x43, 0x05]
    assert dml.unpack4(bytes([0x21, 0x43, 0x05]), "UINT4", 5).tolist() == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("data_type", FOUR_BIT, ids=lambda t: t.name)
@pytest.mark.parametrize("count", [0, 1, 2, 7, 16])
def test_pack_and_unpack_every_value(data_type: DataType, count: int) -> None:
    low, high = data_type.integer_range
    values = [low + (7 * k) % (high - low + 1) for k in range(count)]
    packed = dml.pack4(values, data_type)
    assert packed.dtype == np.uint8 and packed.tolist() == _packed_by_hand(values)
    unpacked = dml.unpack4(packed, data_type, count)
    assert unpacked.dtype == (np.int8 if data_type is DataType.INT4 else np.uint8)
    assert unpacked.tolist() == values


def test_int4_is_twos_complement_in_its_nibble() -> None:
    assert dml.pack4([-1, -8, 7, 0], "INT4").tolist() == [0x8F, 0x07]
    assert dml.unpack4(np.array([0x8F, 0x07], np.uint8), "INT4").tolist() == [-1, -8, 7, 0]
    # The same bytes as UINT4.
    assert dml.unpack4(np.array([0x8F, 0x07], np.uint8), "UINT4").tolist() == [15, 8, 7, 0]


def test_pack_takes_ml_dtypes_arrays_by_value() -> None:
    values = np.array([-8, -1, 0, 7], dtype=ml_dtypes.int4)
    assert dml.pack4(values, "INT4").tolist() == _packed_by_hand([-8, -1, 0, 7])


@pytest.mark.parametrize(("data_type", "value"), [("INT4", 8), ("INT4", -9), ("UINT4", 16), ("UINT4", -1)])
def test_pack_refuses_values_out_of_range(data_type: str, value: int) -> None:
    with pytest.raises(dml.InvalidArgumentError, match=rf"^opendml.pack4: values must be {data_type} values, in "
                       rf"\[-?\d+, \d+\]; got {value}\.$"):
        dml.pack4([0, value], data_type)


def test_pack_and_unpack_refuse_other_arguments() -> None:
    with pytest.raises(dml.InvalidArgumentError, match=r"^opendml.pack4: data_type must be UINT4 or INT4; got INT8"):
        dml.pack4([1], "INT8")
    with pytest.raises(dml.InvalidArgumentTypeError, match=r"^opendml.pack4: values must be integers; got float64"):
        dml.pack4([1.5], "INT4")
    with pytest.raises(dml.InvalidArgumentError, match=r"^opendml.unpack4: count must be an integer in \[0, 4\]"):
        dml.unpack4(bytes(2), "INT4", 5)
    with pytest.raises(dml.InvalidArgumentTypeError, match=r"^opendml.unpack4: data must be bytes or a uint8 array"):
        dml.unpack4(np.zeros(2, np.int16), "INT4")


@pytest.mark.parametrize(("sizes", "strides"), [
    ([1], None), ([5], None), ([8], None), ([9], None), ([3, 3], None), ([2, 3, 5], None),
    ([3], [3]), ([2, 3], [1, 2]), ([4, 2], [5, 1]), ([3, 1], [0, 1]), ([7, 2], [2, 1]),
])
@pytest.mark.parametrize("data_type", FOUR_BIT, ids=lambda t: t.name)
def test_calc_buffer_tensor_size_counts_bits(data_type: DataType, sizes: list[int], strides: list[int] | None) -> None:
    expected = _calc_by_hand(sizes, strides)
    assert dml.calc_buffer_tensor_size(data_type, sizes, strides) == expected
    desc = dml.TensorDesc(data_type, sizes, strides)
    assert desc.total_tensor_size_in_bytes == expected
    with pytest.raises(dml.InvalidArgumentError, match=rf"TotalTensorSizeInBytes must be at least {expected}"):
        dml.TensorDesc(data_type, sizes, strides, total_tensor_size_in_bytes=expected - 1)


def test_alignment_of_one_byte_is_accepted() -> None:
    assert dml.TensorDesc("INT4", [3], guaranteed_base_offset_alignment=1).guaranteed_base_offset_alignment == 1
    with pytest.raises(dml.InvalidArgumentError, match="GuaranteedBaseOffsetAlignment must be 0 or a power of two"):
        dml.TensorDesc("UINT4", [3], guaranteed_base_offset_alignment=3)


def test_no_numpy_view_of_packed_data() -> None:
    with pytest.raises(dml.InvalidArgumentError, match=r"^DML_BUFFER_TENSOR_DESC: DataType must be a type of whole "
                       r"bytes for a NumPy view .*; got UINT4\.$"):
        dml.TensorDesc("UINT4", [4]).numpy_view(np.zeros(4, np.uint8), 0)


@pytest.mark.parametrize("data_type", FOUR_BIT, ids=lambda t: t.name)
def test_odd_strides_alternate_nibbles(data_type: DataType) -> None:
    # Sizes [2, 3], strides [1, 3]: element (i, j) at nibble i + 3 j, so nibbles 0, 3, 6, 1, 4, 7.
    desc = dml.TensorDesc(data_type, [2, 3], [1, 3])
    low, _ = data_type.integer_range
    values = np.array([[1, 2, 3], [4, 5, 6]]) + low
    data = np.full(desc.total_tensor_size_in_bytes, 0xAA, np.uint8)  # nibbles no element uses stay 0xA
    write_elements(desc, data, 0, values)
    nibbles = [0xA] * 8
    for (i, j), v in np.ndenumerate(values):
        nibbles[i + 3 * j] = _nibble_of(int(v))
    assert data.tolist() == [nibbles[k] | nibbles[k + 1] << 4 for k in range(0, 8, 2)]
    assert read_elements(desc, data, 0).tolist() == values.tolist()


def test_elements_start_at_the_binding_offset() -> None:
    desc = dml.TensorDesc("UINT4", [3])
    data = np.zeros(8, np.uint8)
    write_elements(desc, data, 4, np.array([9, 10, 11]))
    assert data.tolist() == [0, 0, 0, 0, 0xA9, 0x0B, 0, 0]
    assert read_elements(desc, data, 4).tolist() == [9, 10, 11]


def test_no_operator_row_names_them_unless_directml_lists_them() -> None:
    # Of the operators here, DirectML's pages list 4-bit types for QUANTIZE and DEQUANTIZE only (6_3).
    takers = {"QUANTIZE", "DEQUANTIZE"}
    for op in OPERATORS:
        for row in op.schema.rows:
            named = {t for types in row.types.values() for t in types} & set(FOUR_BIT)
            if named:
                assert op.schema.name in takers and row.level >= dml.FeatureLevel.FL_6_3, (op.schema.name, row)


@pytest.mark.parametrize("data_type", FOUR_BIT, ids=lambda t: t.name)
def test_an_operator_without_them_refuses_them_at_creation(data_type: DataType) -> None:
    desc = dml.TensorDesc(data_type, [4])
    with pytest.raises(dml.InvalidArgumentError, match=rf"^ELEMENT_WISE_CLIP: InputTensor.DataType must be one of "
                       rf"FLOAT32, .*UINT8 at feature level 6_4; got {data_type.name}\.$"):
        dml.Device("cpu").create_operator(dml.ElementWiseClipDesc(desc, desc, -1.0, 1.0))


@pytest.mark.parametrize("level", ["6_2", "5_0"])
def test_devices_below_6_3_do_not_have_them(level: str) -> None:
    device = dml.Device("cpu", feature_level=level)
    assert not device.supports_data_type("INT4") and not device.supports_data_type(DataType.UINT4)
    assert device.supports_data_type("INT8")
