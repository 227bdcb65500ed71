"""The comparisons (ELEMENT_WISE_LOGICAL_EQUALS, GREATER_THAN, GREATER_THAN_OR_EQUAL, LESS_THAN,
LESS_THAN_OR_EQUAL), the logical operators (LOGICAL_AND, OR, XOR) and ELEMENT_WISE_IF against the independent
oracle: every pair of each type's edge values (NaN, infinities, -0.0, limits), broadcast patterns, UINT8 and UINT32
outputs, the functional, traced and Dask front ends alike, hypothesis properties over random operands, and a
comparison feeding IF fused into one kernel, bit for bit its nodes run one by one."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendml as dml
from opendml.ops import BY_NAME
from tests import elementwise_oracle as oracle
from tests.expr_strategies import edges
from tests.graph_helpers import run_graph, run_node_by_node
from tests.helpers import bits, edge_values, run
from tests.test_graph_fusion import KINDS, using

COMPARISONS: dict[str, tuple[str, Callable[..., int]]] = {
    "equal": ("ELEMENT_WISE_LOGICAL_EQUALS", oracle.equals_element),
    "greater": ("ELEMENT_WISE_LOGICAL_GREATER_THAN", oracle.greater_than_element),
    "greater_equal": ("ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL", oracle.greater_than_or_equal_element),
    "less": ("ELEMENT_WISE_LOGICAL_LESS_THAN", oracle.less_than_element),
    "less_equal": ("ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL", oracle.less_than_or_equal_element),
}
LOGICAL: dict[str, tuple[str, Callable[..., int]]] = {
    "logical_and": ("ELEMENT_WISE_LOGICAL_AND", oracle.logical_and_element),
    "logical_or": ("ELEMENT_WISE_LOGICAL_OR", oracle.logical_or_element),
    "logical_xor": ("ELEMENT_WISE_LOGICAL_XOR", oracle.logical_xor_element),
}
EVERY = {**COMPARISONS, **LOGICAL}


def _newest_types(name: str) -> list[str]:
    """The ATensor types of the operator's newest support row (every type its page lists)."""
    row = max(BY_NAME[EVERY[name][0]].schema.rows, key=lambda r: r.level)
    return sorted(t.name for t in row.types["ATensor"])


def _expected(name: str, a: np.ndarray, b: np.ndarray, type_name: str, dtype: type = np.uint8) -> np.ndarray:
    """The oracle at each element of NumPy's broadcast of ``a`` and ``b``."""
    a2, b2 = np.broadcast_arrays(a, b)
    element = EVERY[name][1]
    values = [element(x.item(), y.item(), type_name) for x, y in zip(a2.reshape(-1), b2.reshape(-1))]
    return np.array(values, dtype).reshape(a2.shape)


def _pairs(type_name: str) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair of the type's edge values (FLOAT16's and FLOAT32's NaN, infinities, -0.0, subnormals;
    the integers' limits), as two arrays."""
    t = dml.DataType[type_name]
    values = np.array(edges(t), t.numpy)
    return np.repeat(values, values.size), np.tile(values, values.size)


@pytest.mark.parametrize(("name", "type_name"), [(n, t) for n in EVERY for t in _newest_types(n)])
def test_every_pair_of_edge_values_matches_the_oracle(name: str, type_name: str) -> None:
    a, b = _pairs(type_name)
    got = np.asarray(getattr(dml, name)(a, b))
    # a comparison's functional output is UINT8 (its pages' first output type); a logical operator's is its inputs'
    assert got.dtype == (np.uint8 if name in COMPARISONS else a.dtype)
    assert got.tolist() == _expected(name, a, b, type_name).tolist()


def test_nan_compares_false_and_signed_zeros_are_equal() -> None:
    """docs/semantics.md 9b: a NaN operand makes every comparison 0 (EQUALS too, NaN against NaN); -0.0 equals
    +0.0, neither greater."""
    nan = np.float32(np.nan)
    a = np.array([nan, nan, 1.0, -0.0, 0.0], np.float32)
    b = np.array([nan, 1.0, nan, 0.0, -0.0], np.float32)
    assert np.asarray(dml.equal(a, b)).tolist() == [0, 0, 0, 1, 1]
    assert np.asarray(dml.greater_equal(a, b)).tolist() == [0, 0, 0, 1, 1]
    assert np.asarray(dml.less_equal(a, b)).tolist() == [0, 0, 0, 1, 1]
    assert np.asarray(dml.greater(a, b)).tolist() == [0, 0, 0, 0, 0]
    assert np.asarray(dml.less(a, b)).tolist() == [0, 0, 0, 0, 0]
    h = a.astype(np.float16)
    assert np.asarray(dml.equal(h, b.astype(np.float16))).tolist() == [0, 0, 0, 1, 1]


def test_64_bit_integers_compare_exactly() -> None:
    """Values a double cannot tell apart (2**63 - 1 and 2**63 - 2; 2**53 + 1 and 2**53) compare as integers."""
    a = np.array([2**63 - 1, 2**53 + 1, -(2**63)], np.int64)
    b = np.array([2**63 - 2, 2**53, -(2**63) + 1], np.int64)
    assert np.asarray(dml.greater(a, b)).tolist() == [1, 1, 0]
    assert np.asarray(dml.equal(a, b)).tolist() == [0, 0, 0]
    u = np.array([2**64 - 1, 2**63], np.uint64)
    assert np.asarray(dml.less(u, np.array([2**64 - 2, 2**63 + 1], np.uint64))).tolist() == [0, 1]


BROADCASTS = {
    "scalar": ((3, 5), ()),
    "row": ((3, 5), (5,)),
    "column": ((3, 5), (3, 1)),
    "both": ((3, 1), (1, 5)),
    "leading": ((2, 3, 5), (3, 5)),
}


@pytest.mark.parametrize("name", EVERY)
@pytest.mark.parametrize("pattern", BROADCASTS)
def test_numpy_broadcasting_either_way(name: str, pattern: str) -> None:
    a_shape, b_shape = BROADCASTS[pattern]
    rng = np.random.default_rng(5)
    dtype = np.uint8 if name in LOGICAL else np.float32
    type_name = "UINT8" if name in LOGICAL else "FLOAT32"
    a = rng.integers(0, 3, a_shape).astype(dtype)  # small values: ties and zeros are frequent
    b = rng.integers(0, 3, b_shape).astype(dtype)
    f = getattr(dml, name)
    assert np.asarray(f(a, b)).tolist() == _expected(name, a, b, type_name).tolist()
    assert np.asarray(f(b, a)).tolist() == _expected(name, b, a, type_name).tolist()


def test_a_number_takes_the_other_operands_type() -> None:
    x = np.array([1, 2, 250], np.uint8)
    assert np.asarray(dml.greater(x, 2)).tolist() == [0, 0, 1]
    assert np.asarray(dml.less_equal(2, x)).tolist() == [0, 1, 1]
    with pytest.raises(dml.InvalidArgumentError, match=r"ELEMENT_WISE_LOGICAL_EQUALS: BTensor must be in \[0, 255\]"):
        dml.equal(x, 256)


# LOGICAL_AND, OR and XOR: the output's type is the inputs' (their pages), UINT32 here
@pytest.mark.parametrize(("name", "output"), [(n, o) for n in EVERY for o in ["UINT8", "UINT32"]
                                              if n in COMPARISONS or o == "UINT32"])
def test_uint8_and_uint32_outputs(name: str, output: str) -> None:
    """The operator's description takes either output type its page lists; the values are 0 and 1 alike."""
    op = BY_NAME[EVERY[name][0]]
    type_name = "UINT32" if name in LOGICAL else "FLOAT16"
    a, b = (edge_values_of(type_name, k) for k in (1, 2))
    t = dml.TensorDesc(type_name, [4, 6])
    desc = op.desc_type(t, t, dml.TensorDesc(output, [4, 6]))
    got = run(dml.Device("cpu"), desc, [a, b])
    assert got.dtype == np.dtype(output.lower()) and got.tolist() == _expected(name, a, b, type_name).tolist()


def edge_values_of(type_name: str, seed: int) -> np.ndarray:
    return edge_values(dml.DataType[type_name], 24, np.random.default_rng(seed)).reshape(4, 6)


def test_a_comparison_refuses_an_output_of_another_type_and_inputs_of_two() -> None:
    a = dml.TensorDesc("FLOAT32", [4])
    with pytest.raises(dml.InvalidArgumentError, match=r"ELEMENT_WISE_LOGICAL_LESS_THAN: OutputTensor\.DataType"):
        dml.Device("cpu").create_operator(dml.ElementWiseLogicalLessThanDesc(a, a, a))
    with pytest.raises(dml.InvalidArgumentError, match=r"ELEMENT_WISE_LOGICAL_EQUALS: BTensor\.DataType must equal"):
        dml.equal(np.ones(3, np.float32), np.ones(3, np.float16))
    u8, u32 = dml.TensorDesc("UINT8", [4]), dml.TensorDesc("UINT32", [4])
    with pytest.raises(dml.InvalidArgumentError, match=r"ELEMENT_WISE_LOGICAL_AND: OutputTensor\.DataType must equal"):
        dml.Device("cpu").create_operator(dml.ElementWiseLogicalAndDesc(u8, u8, u32))


def test_greater_or_equal_and_less_or_equal_need_feature_level_3_0() -> None:
    device = dml.Device("cpu", dml.FeatureLevel.FL_2_1)
    t, y = dml.TensorDesc("FLOAT32", [1, 1, 2, 2]), dml.TensorDesc("UINT8", [1, 1, 2, 2])
    device.create_operator(dml.ElementWiseLogicalGreaterThanDesc(t, t, y))
    with pytest.raises(dml.UnsupportedFeatureLevelError, match="ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL"):
        device.create_operator(dml.ElementWiseLogicalGreaterThanOrEqualDesc(t, t, y))


def test_compile_and_dask_give_the_functional_bits() -> None:
    import dask.array as da

    rng = np.random.default_rng(9)
    x = rng.integers(-2, 3, (6, 8)).astype(np.float32)
    row = rng.integers(-2, 3, 8).astype(np.float32)

    def chain(v: object, w: object) -> object:
        return dml.logical_xor(dml.greater_equal(v, w), dml.equal(v, 0.0))

    eager = np.asarray(chain(x, row))
    traced = np.asarray(dml.compile(chain)(x, row))
    lazy = np.asarray(chain(da.from_array(x, chunks=(2, 3)), row).compute(scheduler="sync"))  # type: ignore[attr-defined]
    assert eager.dtype == traced.dtype == lazy.dtype == np.uint8
    assert eager.tolist() == traced.tolist() == lazy.tolist() == ((x >= row) != (x == 0)).astype(np.uint8).tolist()


FLOAT_VALUES = st.one_of(st.floats(width=32, allow_nan=True), st.sampled_from([0.0, -0.0, math.inf, -math.inf]))


@settings(max_examples=15, deadline=None)
@given(name=st.sampled_from(sorted(COMPARISONS)), type_name=st.sampled_from(["FLOAT32", "FLOAT16"]),
       values=st.lists(st.tuples(FLOAT_VALUES, FLOAT_VALUES), min_size=1, max_size=40))
def test_property_float_comparisons_match_the_oracle(name: str, type_name: str,
                                                      values: list[tuple[float, float]]) -> None:
    """Random float pairs (NaN, infinities, signed zeros among them; FLOAT16 rounds them first)."""
    dtype = dml.DataType[type_name].numpy
    with np.errstate(over="ignore"):
        a, b = (np.array([v[k] for v in values], np.float32).astype(dtype) for k in (0, 1))
    assert np.asarray(getattr(dml, name)(a, b)).tolist() == _expected(name, a, b, type_name).tolist()


@settings(max_examples=15, deadline=None)
@given(name=st.sampled_from(sorted(EVERY)), data=st.data())
def test_property_integer_operands_match_the_oracle(name: str, data: st.DataObject) -> None:
    """Random integer pairs of any type the operator's newest row takes, one operand broadcast along a row."""
    type_name = data.draw(st.sampled_from([t for t in _newest_types(name) if not dml.DataType[t].is_float]))
    low, high = dml.DataType[type_name].integer_range
    ints = st.one_of(st.integers(low, high), st.sampled_from([low, high, 0, 1]))
    columns = data.draw(st.integers(1, 6))
    a = np.array(data.draw(st.lists(ints, min_size=columns * 2, max_size=columns * 2)),
                 dml.DataType[type_name].numpy).reshape(2, columns)
    b = np.array(data.draw(st.lists(ints, min_size=columns, max_size=columns)), a.dtype)
    assert np.asarray(getattr(dml, name)(a, b)).tolist() == _expected(name, a, b, type_name).tolist()


# --- ELEMENT_WISE_IF ------------------------------------------------------------------------------------------

IF_TYPES = sorted(t.name for t in max(BY_NAME["ELEMENT_WISE_IF"].schema.rows, key=lambda r: r.level).types["ATensor"])


def _same_bits(got: np.ndarray, expected: np.ndarray) -> None:
    """Equal element for element, floats by their bits (-0.0 apart from +0.0), any NaN equal to any NaN."""
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if got.dtype.kind == "f":
        nan = np.isnan(got)
        assert (nan == np.isnan(expected)).all() and (bits(got)[~nan] == bits(expected)[~nan]).all()
    else:
        assert (got == expected).all()


def _if_expected(condition: np.ndarray, a: np.ndarray, b: np.ndarray, type_name: str) -> np.ndarray:
    c2, a2, b2 = np.broadcast_arrays(condition, a, b)
    values = [oracle.if_element(int(c), x.item(), y.item(), type_name)
              for c, x, y in zip(c2.reshape(-1), a2.reshape(-1), b2.reshape(-1))]
    return np.array(values, a.dtype).reshape(a2.shape)


def test_if_gives_the_pages_example() -> None:
    condition = np.array([[1, 0], [1, 1]], np.uint8)
    got = dml.where(condition, np.array([[1, 2], [3, 4]], np.float32), np.array([[9, 8], [7, 6]], np.float32))
    assert np.asarray(got).tolist() == [[1, 8], [3, 4]]


@pytest.mark.parametrize("type_name", IF_TYPES)
def test_if_picks_every_edge_value_as_it_is(type_name: str) -> None:
    """Any nonzero condition (1, 2, 255) picks ATensor's element, zero BTensor's: NaN, -0.0, infinities and the
    integers' limits come through unchanged."""
    t = dml.DataType[type_name]
    a = np.array(edges(t), t.numpy)
    b = a[::-1].copy()
    condition = np.array([0, 1, 2, 255] * a.size, np.uint8)[: a.size]
    got = np.asarray(dml.where(condition, a, b))
    _same_bits(got, _if_expected(condition, a, b, type_name))


IF_BROADCASTS = {
    "condition column": ((3, 1), (3, 5), (3, 5)),
    "scalar a, row b": ((3, 5), (), (5,)),
    "all three": ((3, 1), (1, 5), (5,)),
    "leading": ((2, 3, 5), (3, 5), (5,)),
}


@pytest.mark.parametrize("pattern", IF_BROADCASTS)
def test_if_broadcasts_its_three_operands(pattern: str) -> None:
    shapes = IF_BROADCASTS[pattern]
    rng = np.random.default_rng(3)
    condition = rng.integers(0, 3, shapes[0]).astype(np.uint8)
    a, b = (edge_values(dml.DataType.FLOAT16, max(1, int(np.prod(s))), rng).reshape(s) for s in shapes[1:])
    _same_bits(np.asarray(dml.where(condition, a, b)), _if_expected(condition, a, b, "FLOAT16"))


def test_if_numbers_take_the_operands_type_and_the_condition_must_be_uint8() -> None:
    x = np.array([-1.5, 2.0, 3.0], np.float32)
    condition = np.array([1, 0, 1], np.uint8)
    assert np.asarray(dml.where(condition, x, 0.0)).tolist() == [-1.5, 0.0, 3.0]
    assert np.asarray(dml.where(condition, 7, np.array([1, 2, 3], np.int8))).tolist() == [7, 2, 7]
    with pytest.raises(dml.InvalidArgumentError, match=r"ELEMENT_WISE_IF: ConditionTensor\.DataType must be"):
        dml.where(condition.astype(np.int32), x, x)
    with pytest.raises(dml.InvalidArgumentError, match=r"ELEMENT_WISE_IF: BTensor\.DataType must equal ATensor"):
        dml.where(condition, x, x.astype(np.float16))


@settings(max_examples=15, deadline=None)
@given(type_name=st.sampled_from(IF_TYPES), data=st.data())
def test_property_if_matches_the_oracle(type_name: str, data: st.DataObject) -> None:
    """Random conditions (any UINT8) and operands of a type, the condition broadcast along a column."""
    t = dml.DataType[type_name]
    rows, columns = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 6))
    condition = np.array(data.draw(st.lists(st.integers(0, 255), min_size=rows, max_size=rows)), np.uint8)[:, None]
    a, b = (edge_values(t, rows * columns, np.random.default_rng(data.draw(st.integers(0, 99)))).reshape(rows, columns)
            for _ in range(2))
    _same_bits(np.asarray(dml.where(condition, a, b)), _if_expected(condition, a, b, type_name))


@pytest.mark.parametrize("kind", KINDS)
def test_a_comparison_feeding_if_fuses_bit_for_bit(kind: str) -> None:
    """GREATER_THAN (into UINT8) -> IF -> a LOGICAL_EQUALS of the choice against a bias row (into UINT8), with a
    FLOAT16 x, runs as one kernel: fused = node by node = the oracle, element by element."""
    shape = (4, 40)
    with using(kind) as device:
        from opendml import graph as g

        graph = dml.Graph(device)
        x = graph.input(0, dml.TensorDesc("FLOAT16", shape))
        y = graph.input(1, dml.TensorDesc("FLOAT16", shape))
        row = g.reinterpret(graph.input(2, dml.TensorDesc("FLOAT16", [shape[1]])), sizes=shape, strides=[0, 1])
        chosen = g.where(g.greater(x, y), x, y)
        desc = graph.graph_desc([chosen, g.equal(chosen, row)])
        compiled = device.compile_graph(desc)
        assert len(compiled.plan.groups) == 1, compiled.plan  # one fused kernel
        rng = np.random.default_rng(21)
        xs = [edge_values(dml.DataType.FLOAT16, int(np.prod(s)), rng).reshape(s) for s in (shape, shape, shape[1:])]
        xs[1][0] = xs[0][0]  # ties
        raw = [np.ascontiguousarray(v).reshape(-1).view(np.uint8) for v in xs]
        empty = [np.zeros(int(np.prod(shape)) * 2, np.uint8), np.zeros(int(np.prod(shape)), np.uint8)]
        fused = run_graph(device, desc, raw, empty)
        alone = run_node_by_node(device, desc, raw, empty)
    assert all((f == a).all() for f, a in zip(fused, alone))
    picks = [oracle.if_element(oracle.greater_than_element(float(p), float(q), "FLOAT16"), float(p), float(q),
                               "FLOAT16") for p, q in zip(xs[0].reshape(-1), xs[1].reshape(-1))]
    expected = np.array(picks, np.float16).reshape(shape)
    _same_bits(fused[0].view(np.float16).reshape(shape), expected)
    equal = [oracle.equals_element(float(v), float(xs[2][k % shape[1]]), "FLOAT16") for k, v in enumerate(picks)]
    assert fused[1].tolist() == equal


def test_out_and_in_place() -> None:
    """LOGICAL_AND, OR, XOR and IF may write over an input (their pages allow it); a comparison's ``out=`` must be
    its UINT8 output."""
    a, b = np.array([0, 1, 2, 3], np.uint8), np.array([1, 1, 0, 5], np.uint8)
    dml.logical_and(a, b, out=a)
    assert a.tolist() == [0, 1, 0, 1]
    x = np.arange(4, dtype=np.uint8)
    dml.where(np.array([1, 0, 1, 0], np.uint8), x, np.uint8(9), out=x)
    assert x.tolist() == [0, 9, 2, 9]
    out = np.zeros(4, np.uint8)
    dml.greater(np.arange(4, dtype=np.float32), 1.5, out=out)
    assert out.tolist() == [0, 0, 1, 1]
    f = np.ones(4, np.float32)
    with pytest.raises(dml.InvalidArgumentError, match="ELEMENT_WISE_LOGICAL_EQUALS: out must have shape"):
        dml.equal(f, f, out=f)


def test_past_the_threading_threshold() -> None:
    """Outputs of more elements than one thread takes (2**18), an operand broadcast along rows: NumPy's own
    comparisons (IEEE's) and ``where`` give the expectation."""
    rng = np.random.default_rng(17)
    x = edge_values(dml.DataType.FLOAT32, 513 * 512, rng).reshape(513, 512)
    row = edge_values(dml.DataType.FLOAT32, 512, rng)
    greater = np.asarray(dml.greater_equal(x, row))
    assert greater.tolist() == (x >= row).astype(np.uint8).tolist()
    chosen = np.asarray(dml.where(greater, x, row))
    _same_bits(chosen, np.where(x >= row, x, row))
