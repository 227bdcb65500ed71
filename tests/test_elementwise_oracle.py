"""The oracle's own rules checked from another side: the tensor size by listing every element, and
opendml's DMLCalcBufferTensorSize against it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import opendml as dml
from opendml.tensor import calc_buffer_tensor_size
from tests.elementwise_oracle import TYPES, byte_offset, indices, min_tensor_bytes

SIZED_TYPES = sorted(TYPES)


@st.composite
def layouts(draw: st.DrawFn) -> tuple[str, list[int], list[int] | None]:
    type_name = draw(st.sampled_from(SIZED_TYPES))
    sizes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    strides = draw(st.none() | st.lists(st.integers(0, 9), min_size=len(sizes), max_size=len(sizes)))
    return type_name, sizes, strides


@given(layouts())
def test_min_tensor_bytes_covers_the_furthest_element(layout: tuple[str, list[int], list[int] | None]) -> None:
    type_name, sizes, strides = layout
    if strides is None:  # packed: elements one after another, row-major
        offsets = [k * TYPES[type_name].size for k in range(len(list(indices(sizes))))]
    else:
        offsets = [byte_offset(i, strides, type_name, 0) for i in indices(sizes)]
    end = max(offsets) + TYPES[type_name].size
    minimum = min_tensor_bytes(type_name, sizes, strides)
    assert minimum % 4 == 0 and end <= minimum < end + 4


@given(layouts())
def test_opendml_tensor_sizes_agree_with_the_oracle(layout: tuple[str, list[int], list[int] | None]) -> None:
    type_name, sizes, strides = layout
    expected = min_tensor_bytes(type_name, sizes, strides)
    assert calc_buffer_tensor_size(type_name, sizes, strides) == expected
    assert dml.TensorDesc(type_name, sizes, strides).total_tensor_size_in_bytes == expected
