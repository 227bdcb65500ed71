"""Arrays of any byte order and layout enter as their values: DirectML's bytes are little-endian and row-major.

A big-endian array's raw bytes read as little-endian are other numbers (``np.array([1.5, -2.0], ">f4")`` read
``[6.9e-41, 2.7e-43]``); every entry point that takes an array (``Device.buffer_from``, ``Graph.constant``, a
ConstantNode's data, the functional API, ``opendml.compile``'s arguments and the values its function holds)
must read its values. The expectations are NumPy's ``np.clip`` of the values, computed here.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import opendml as dml
from opendml import TensorDesc
from opendml import graph as g
from opendml.graphs.builder import Expression

# The element types CLIP takes (FLOAT64 only through buffer_from below), in every byte order NumPy spells.
CLIP_KINDS = ("f2", "f4", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8")
ORDERS = ("<", ">", "=")
LOW, HIGH = -3, 5  # exact in every type; unsigned types clip from 0


def _bounds(dtype: np.dtype) -> tuple[int, int]:
    return (0 if dtype.kind == "u" else LOW), HIGH


def _clip_node(x: Expression) -> Expression:
    """CLIP (floats) or CLIP1 (integers, bounds of x's type) of x to the test's bounds."""
    low, high = _bounds(x.desc.data_type.numpy)
    return g.clip(x, low, high) if x.desc.data_type.is_float else g.clip1(x, low, high)


def _run(device: dml.Device, compiled: dml.CompiledGraph, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    out = device.create_buffer(max(16, -(-int(np.prod(shape)) * dtype.itemsize // 16) * 16))
    compiled.execute([], [out])
    little = dtype.newbyteorder("<")
    return out.to_numpy()[:int(np.prod(shape)) * dtype.itemsize].view(little).reshape(shape)


def _expected(values: np.ndarray) -> np.ndarray:
    low, high = _bounds(values.dtype)
    return np.clip(values.astype(values.dtype.newbyteorder("=")), low, high)


def _through_graph_constant(device: dml.Device, values: np.ndarray) -> np.ndarray:
    graph = dml.Graph(device)
    return _run(device, graph.compile([_clip_node(graph.constant(values))]), values.shape or (1,), values.dtype)


def _through_constant_node(device: dml.Device, values: np.ndarray) -> np.ndarray:
    desc = TensorDesc(dml.DataType.parse(values.dtype, owner="test"), values.shape or (1,))
    graph = dml.Graph(device)
    clip = _clip_node(graph.input(0, desc))
    node = clip.graph.graph_desc([clip]).nodes[0]
    graph_desc = dml.GraphDesc(0, 1, [dml.ConstantNode(values), node], output_edges=[dml.OutputEdge(1, 0, 0)],
                               intermediate_edges=[dml.IntermediateEdge(0, 0, 1, 0)])
    return _run(device, device.compile_graph(graph_desc), values.shape or (1,), values.dtype)


def _through_functional(device: dml.Device, values: np.ndarray) -> np.ndarray:
    low, high = _bounds(values.dtype)
    return np.asarray(dml.clip(values, low, high, device=device))


def _through_compile(device: dml.Device, values: np.ndarray) -> np.ndarray:
    low, high = _bounds(values.dtype)
    return np.asarray(dml.compile(lambda x: dml.clip(x, low, high), device=device)(values))


_DEVICE = dml.Device()

PATHS: dict[str, Callable[[dml.Device, np.ndarray], np.ndarray]] = {
    "Graph.constant": _through_graph_constant, "ConstantNode": _through_constant_node,
    "functional": _through_functional, "compile": _through_compile}


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("kind", ["f4", "i2", "f2", "u4", "i8"])
def test_big_endian_values_are_read_as_values(path: str, kind: str) -> None:
    values = np.array([1.5, -2.0, 4.0, 9.0] if kind[0] == "f" else [1, 2, 4, 9] if kind[0] == "u" else [1, -2, 4, 9],
                      f">{kind}")
    got = PATHS[path](dml.Device(), values)
    assert got.tolist() == _expected(values).reshape(got.shape).tolist()


def test_big_endian_1_5_and_minus_2_stay_themselves() -> None:
    device = dml.Device()
    got = _through_constant_node(device, np.array([1.5, -2.0], ">f4"))
    assert got.tolist() == [1.5, -2.0]  # not [6.9e-41, 2.7e-43]
    assert _through_graph_constant(device, np.array([1.5, -2.0], ">f4")).tolist() == [1.5, -2.0]


def test_a_held_big_endian_scale_and_zero_point() -> None:
    """Arrays ``opendml.compile``'s function holds (its closure) are bound as their values."""
    scale = np.array([0.5, 0.25, 2.0], ">f4")
    zero_point = np.array([3, 1, 0], ">i4").astype(np.uint8)  # one byte: no order, but a converted copy
    q = np.array([[5, 1, 2], [3, 9, 0]], np.uint8)
    got = dml.compile(lambda q: dml.dequantize_linear(q, scale, zero_point))(q)
    want = (q.astype(np.float32) - zero_point.astype(np.float32)) * scale.astype(np.float32)
    assert got.tolist() == want.tolist()
    half = np.array(0.5, ">f2")
    got = dml.compile(lambda q: dml.dequantize_linear(q, half))(q)
    assert got.dtype == np.float16 and got.tolist() == (q.astype(np.float16) * np.float16(0.5)).tolist()


def test_a_zero_dimensional_held_value_keeps_the_eager_shape() -> None:
    # A held 0-d scale was made 1-d (np.ascontiguousarray), so a 0-d input's compiled result was [1] where the
    # eager one is a scalar.
    f = lambda x: dml.dequantize_linear(x, np.array(0.5, np.float32), np.array(2, np.uint8))  # noqa: E731
    x = np.array(7, np.uint8)
    got = dml.compile(f)(x)
    assert got.shape == () == f(x).shape and got.tolist() == 2.5


@st.composite
def _arrays(draw: st.DrawFn, kinds: tuple[str, ...] = CLIP_KINDS) -> np.ndarray:
    """Small arrays of values exact in every type, in any byte order, contiguous or not."""
    dtype = np.dtype(draw(st.sampled_from(ORDERS)) + draw(st.sampled_from(kinds)))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=0, max_size=3)))
    low = 0 if dtype.kind == "u" else -12
    elements = st.integers(low, 12) if dtype.kind != "f" else st.integers(-48, 48).map(lambda n: n / 4)
    flat = draw(st.lists(elements, min_size=int(np.prod(shape)), max_size=int(np.prod(shape))))
    values = np.array(flat, dtype).reshape(shape)
    layout = draw(st.sampled_from(["contiguous", "transposed", "reversed"]))
    if layout == "transposed":
        values = values.T
    elif layout == "reversed" and values.ndim:
        values = values[::-1]
    return values


@given(values=_arrays(CLIP_KINDS + ("f8",)))
def test_buffer_from_holds_the_values_row_major_little_endian(values: np.ndarray) -> None:
    buffer = dml.Device().buffer_from(values)
    little = values.dtype.newbyteorder("<")
    assert buffer.size_in_bytes == values.nbytes
    assert np.array_equal(buffer.to_numpy().view(little).reshape(values.shape), values)


@given(values=_arrays(), path=st.sampled_from(sorted(PATHS)))
def test_every_array_entry_point_reads_values(values: np.ndarray, path: str) -> None:
    # A ConstantNode's data must cover its reader's TotalTensorSizeInBytes, a multiple of 4 (a rule of its own).
    assume(path != "ConstantNode" or values.nbytes % 4 == 0)
    got = PATHS[path](_DEVICE, values)
    want = _expected(values)
    assert got.tolist() == want.reshape(got.shape).tolist()


_DEVICE = dml.Device()
