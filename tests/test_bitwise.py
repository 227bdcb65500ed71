"""The bitwise operators (ELEMENT_WISE_BIT_AND, BIT_OR, BIT_XOR, BIT_SHIFT_LEFT, BIT_SHIFT_RIGHT) on every type
their pages list: every pair of edge values and shift counts about the width against the independent oracle,
NumPy broadcasting, in place, and shifts fused in an element-wise chain bit-identical to their nodes run one by
one (docs/semantics.md 9b)."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pytest

import opendml as dml
from opendml import graph as g
from opendml.backends import cpu_kernels
from opendml.ops import BY_NAME
from tests import elementwise_oracle as oracle
from tests.conftest import CUDA_MISSING
from tests.expr_strategies import integer_edges
from tests.graph_helpers import run_graph, run_node_by_node

ORACLE: dict[str, Callable[[int, int, str], int]] = {
    "bit_and": oracle.bit_and_element, "bit_or": oracle.bit_or_element, "bit_xor": oracle.bit_xor_element,
    "bit_shift_left": oracle.bit_shift_left_element, "bit_shift_right": oracle.bit_shift_right_element}
BACKENDS = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(CUDA_MISSING is not None,
                                                                 reason=f"no usable CUDA GPU: {CUDA_MISSING}"))]


def _expected(name: str, a: np.ndarray, b: np.ndarray, type_name: str) -> np.ndarray:
    a2, b2 = np.broadcast_arrays(a, b)
    values = [ORACLE[name](int(x), int(y), type_name) for x, y in zip(a2.reshape(-1), b2.reshape(-1))]
    return np.array(values, dtype=a.dtype).reshape(a2.shape)


def _types(name: str) -> list[str]:
    """The types ``opendml.<name>``'s operator takes at the newest level (its page's top row)."""
    row = BY_NAME[f"ELEMENT_WISE_{name.upper()}"].schema.row_at(dml.Device("cpu").feature_level)
    assert row is not None
    return sorted(t.name for t in row.types["ATensor"])


def _operands(t: dml.DataType) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of the type's edge values and the counts about its width (0, 1, width - 1, width, width + 1,
    2 * width, and the top bit's count)."""
    bits = t.bits
    counts = [c for c in (0, 1, bits - 1, bits, bits + 1, 2 * bits, 127) if c <= t.integer_range[1]]
    values = sorted(set(integer_edges(t)) | set(counts))
    edges = np.array(values, t.numpy)
    return np.repeat(edges, edges.size), np.tile(edges, edges.size)


@pytest.fixture
def numpy_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CPU's NumPy kernels (as OPENDML_CPU_KERNELS=numpy chooses them): every type of every operator runs
    through each compiled lowering in tests/test_kernel_specs.py; here the edge grids stay cheap."""
    monkeypatch.setattr(cpu_kernels, "_chosen", cpu_kernels.load("numpy"))


# The compiled kernels over the same grids, for one narrow and one wide type of each operator.
COMPILED = {"bit_and": "INT8", "bit_or": "UINT64", "bit_xor": "INT64", "bit_shift_left": "UINT8",
            "bit_shift_right": "UINT64"}


@pytest.mark.parametrize(("name", "type_name"), [(n, t) for n in ORACLE for t in _types(n)])
def test_edge_values_and_counts_match_the_oracle(name: str, type_name: str, numpy_kernels: None) -> None:
    _check_edges(name, type_name)


@pytest.mark.skipif(not cpu_kernels.numba_available(), reason="Numba is not installed (the opendml[fast] extra)")
@pytest.mark.parametrize(("name", "type_name"), COMPILED.items())
def test_compiled_kernels_over_the_edges(name: str, type_name: str) -> None:
    _check_edges(name, type_name)


def _check_edges(name: str, type_name: str) -> None:
    a, b = _operands(dml.DataType[type_name])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy warning about a shift or a conversion
        got = np.asarray(getattr(dml, name)(a, b))
    assert got.dtype == a.dtype
    assert got.tolist() == _expected(name, a, b, type_name).tolist()


def test_the_shift_decisions() -> None:
    """docs/semantics.md 9b: a count of the width or more shifts every bit out; right shifts are logical."""
    x = np.array([0x81, 0x81, 0x81, 0x81, 0x81], np.uint8)
    counts = np.array([1, 7, 8, 9, 255], np.uint8)
    assert np.asarray(dml.bit_shift_left(x, counts)).tolist() == [0x02, 0x80, 0, 0, 0]
    assert np.asarray(dml.bit_shift_right(x, counts)).tolist() == [0x40, 0x01, 0, 0, 0]
    top = np.array([2**63 + 1], np.uint64)
    assert np.asarray(dml.bit_shift_right(top, np.array([63], np.uint64))).tolist() == [1]
    assert np.asarray(dml.bit_shift_left(top, np.array([64], np.uint64))).tolist() == [0]


def test_signed_types_combine_their_encodings() -> None:
    a = np.array([-1, -128, 85, -86], np.int8)
    b = np.array([0x0F, -1, -86, 85], np.int8)
    assert np.asarray(dml.bit_and(a, b)).tolist() == [15, -128, 0, 0]
    assert np.asarray(dml.bit_or(a, b)).tolist() == [-1, -1, -1, -1]
    assert np.asarray(dml.bit_xor(a, b)).tolist() == [-16, 127, -1, -1]


def test_shifts_refuse_the_signed_types_and_floats() -> None:
    with pytest.raises(dml.InvalidArgumentError, match=r"ELEMENT_WISE_BIT_SHIFT_LEFT: ATensor\.DataType"):
        dml.bit_shift_left(np.ones(3, np.int32), np.ones(3, np.int32))
    with pytest.raises(dml.InvalidArgumentError, match=r"ELEMENT_WISE_BIT_AND: ATensor\.DataType"):
        dml.bit_and(np.ones(3, np.float32), np.ones(3, np.float32))


BROADCASTS = {"scalar": ((3, 5), ()), "row": ((3, 5), (5,)), "column": ((3, 5), (3, 1)), "both": ((3, 1), (1, 5))}


@pytest.mark.parametrize("name", ORACLE)
@pytest.mark.parametrize("pattern", BROADCASTS)
def test_numpy_broadcasting_either_way(name: str, pattern: str, numpy_kernels: None) -> None:
    a_shape, b_shape = BROADCASTS[pattern]
    rng = np.random.default_rng(5)
    a = rng.integers(0, 2**16, a_shape, dtype=np.uint16)
    b = rng.integers(0, 20, b_shape, dtype=np.uint16)
    f = getattr(dml, name)
    assert np.asarray(f(a, b)).tolist() == _expected(name, a, b, "UINT16").tolist()
    assert np.asarray(f(b, a)).tolist() == _expected(name, b, a, "UINT16").tolist()


def test_in_place() -> None:
    a = np.array([1, 2, 3, 250], np.uint8)
    expected = _expected("bit_shift_left", a, np.uint8(2), "UINT8")
    dml.bit_shift_left(a, 2, out=a)  # in place over ATensor, as the page allows
    assert a.tolist() == expected.tolist()


SHAPE = (4, 40)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_shift_chain_fuses_bit_for_bit(backend: str) -> None:
    """(x << s) ^ m >> r, then | x: one fused kernel, equal to its nodes run one by one and to the oracle."""
    device = dml.Device(backend)
    graph = dml.Graph(device)
    rng = np.random.default_rng(21)
    x = rng.integers(0, 2**32, SHAPE, dtype=np.uint32)
    s = rng.integers(0, 40, SHAPE[1], dtype=np.uint32)
    m, r = np.array([0xF0F0F0F0], np.uint32), np.array([3], np.uint32)
    a = graph.input(0, dml.TensorDesc("UINT32", SHAPE))
    counts = g.reinterpret(graph.input(1, dml.TensorDesc("UINT32", [SHAPE[1]])), sizes=SHAPE, strides=[0, 1])
    mask = g.reinterpret(graph.input(2, dml.TensorDesc("UINT32", [1])), sizes=SHAPE, strides=[0, 0])
    right = g.reinterpret(graph.input(3, dml.TensorDesc("UINT32", [1])), sizes=SHAPE, strides=[0, 0])
    result = g.bit_or(g.bit_shift_right(g.bit_xor(g.bit_shift_left(a, counts), mask), right), a)
    desc = graph.graph_desc([result])
    compiled = device.compile_graph(desc)
    assert len(compiled.plan.groups) == 1, compiled.plan  # one fused kernel
    raw = [np.ascontiguousarray(v).reshape(-1).view(np.uint8) for v in (x, s, m, r)]
    empty = [np.zeros(x.nbytes, np.uint8)]
    fused = run_graph(device, desc, raw, empty)
    alone = run_node_by_node(device, desc, raw, empty)
    assert all((f == one).all() for f, one in zip(fused, alone))
    t = "UINT32"
    expected = [oracle.bit_or_element(oracle.bit_shift_right_element(oracle.bit_xor_element(
        oracle.bit_shift_left_element(int(v), int(s[k % SHAPE[1]]), t), 0xF0F0F0F0, t), 3, t), int(v), t)
        for k, v in enumerate(x.reshape(-1))]
    assert fused[0].view(np.uint32).tolist() == expected
