"""DML_OPERATOR_CAST between every pair of the types its page lists, FLOAT64 among them, over edge values against
the independent oracle (docs/semantics.md 9d): NaN, infinities, -0.0, every integer type's limits and the values
just past them, halves for rounding, integers FLOAT64, FLOAT32 and FLOAT16 round, doubles that a rounding through
float32 would put on a FLOAT16 tie; NumPy never warns."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendml as dml
from opendml.kernels import numpy_lowering
from tests import elementwise_oracle as oracle
from tests.expr_strategies import DOUBLE_EDGES, integer_edges
from tests.helpers import run

TYPES = [t for t in dml.DataType if t.name in oracle.TYPES]
FLOATS = [t for t in TYPES if t.is_float]


def _float_values(t: dml.DataType) -> np.ndarray:
    """NaN, infinities, signed zeros, halves, and every integer type's limits with their neighbours, as ``t``
    holds them (rounded: just past a limit where the float's spacing allows)."""
    values = [math.nan, math.inf, -math.inf, 0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.99, -0.99, 65504.0, 65520.0,
              2.0**24 + 2, 1e30, -1e30, 3.4e38]
    for other in TYPES:
        if other.is_integer:
            low, high = other.integer_range
            values += [low - 1.0, float(low), low + 1.0, high - 1.0, float(high), high + 1.0, high + 0.5,
                       float(np.nextafter(np.float32(high), np.float32(math.inf))),
                       float(np.nextafter(np.float32(low), np.float32(-math.inf)))]
    if t is dml.DataType.FLOAT64:
        values += DOUBLE_EDGES + [-v for v in DOUBLE_EDGES] + [2.0**63 - 512, -(2.0**63) - 2048, 2.0**64 - 4096]
    with np.errstate(over="ignore"):
        return np.array(values, t.numpy)


def _integer_values(t: dml.DataType) -> np.ndarray:
    """The type's edges, and the integers that FLOAT16 and FLOAT32 round (ties among them) or overflow on."""
    low, high = t.integer_range
    extra = [2049, 2051, 4097, 65504, 65519, 65520, 65535, 2**24 + 1, 2**24 + 3, 2**53 + 1, 2**63 - 2**39,
             2**64 - 2**39 - 1, -2049, -65520, -(2**24) - 1, -(2**63) + 1]
    return np.array(sorted({v for v in integer_edges(t) + extra if low <= v <= high}), t.numpy)


def values_of(t: dml.DataType) -> np.ndarray:
    return _float_values(t) if t.is_float else _integer_values(t)


PAIRS = [pytest.param(s, t, id=f"{s.name}-{t.name}") for s, t in itertools.product(TYPES, TYPES)]


@pytest.mark.parametrize(("source", "target"), PAIRS)
def test_every_pair_matches_the_oracle(source: dml.DataType, target: dml.DataType) -> None:
    x = values_of(source)
    desc = dml.CastDesc(dml.TensorDesc(source, [x.size]), dml.TensorDesc(target, [x.size]))
    spec = dml.Device("cpu").create_operator(desc).kernel_spec
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "invalid value encountered in cast"
        got = numpy_lowering.evaluate(spec.element, [x], spec.scalars)
    assert got.dtype == target.numpy
    expected = [oracle.cast_element(float(v) if source.is_float else int(v), source.name, target.name) for v in x]
    mismatched = [(v, g, e) for v, g, e in zip(x.tolist(), got.tolist(), expected) if not oracle.same_value(g, e)]
    assert not mismatched, mismatched[:5]


# Pairs through the device (the CPU's compiled kernels where Numba is installed): each type converted from once
# and to once (every pair runs through every lowering in tests/test_kernel_specs.py under --slow).
_TYPES = list(TYPES)
DEVICE_PAIRS = [(t, _TYPES[(k + 3) % len(_TYPES)]) for k, t in enumerate(_TYPES)] + \
    [(dml.DataType.FLOAT32, dml.DataType.FLOAT16), (dml.DataType.FLOAT16, dml.DataType.UINT64)]


@pytest.mark.parametrize(("source", "target"), DEVICE_PAIRS, ids=[f"{s.name}-{t.name}" for s, t in DEVICE_PAIRS])
def test_the_device_gives_the_oracles_values(source: dml.DataType, target: dml.DataType) -> None:
    x = values_of(source)
    desc = dml.CastDesc(dml.TensorDesc(source, [x.size]), dml.TensorDesc(target, [x.size]))
    got = run(dml.Device("cpu"), desc, [x])
    expected = [oracle.cast_element(float(v) if source.is_float else int(v), source.name, target.name) for v in x]
    assert all(oracle.same_value(g, e) for g, e in zip(got.tolist(), expected))


def test_the_decisions() -> None:
    """docs/semantics.md 9d, one value each."""
    def cast(values: list, source: str, target: str) -> list:
        x = np.array(values, dml.DataType[source].numpy)
        desc = dml.CastDesc(dml.TensorDesc(source, [x.size]), dml.TensorDesc(target, [x.size]))
        return run(dml.Device("cpu"), desc, [x]).tolist()

    assert cast([np.nan, np.inf, -np.inf, -0.0, 2.9, -2.9, 300.0, -300.0], "FLOAT32", "INT8") == \
        [0, 127, -128, 0, 2, -2, 127, -128]
    assert cast([-1.0, 4.5e9], "FLOAT32", "UINT32") == [0, 2**32 - 1]
    assert cast([300, -1, -129], "INT32", "INT8") == [44, -1, 127]  # wrapped: the low 8 bits
    assert cast([-1], "INT8", "UINT64") == [2**64 - 1]  # extended by the sign, then read unsigned
    assert cast([2**24 + 1, 2**24 + 3], "INT32", "FLOAT32") == [2.0**24, 2.0**24 + 4]  # nearest even
    assert cast([65519, 65520, 2049], "INT32", "FLOAT16") == [65504.0, math.inf, 2048.0]
    assert cast([70000.0, 1e-8], "FLOAT32", "FLOAT16") == [math.inf, 0.0]


def test_sizes_must_match_and_types_be_listed() -> None:
    with pytest.raises(dml.InvalidArgumentError, match="CAST: OutputTensor"):
        dml.Device("cpu").create_operator(dml.CastDesc(dml.TensorDesc("FLOAT32", [4]), dml.TensorDesc("INT8", [5])))
    with pytest.raises(dml.OpenDMLError, match="CAST"):
        dml.Device("cpu", "1_0").create_operator(dml.CastDesc(dml.TensorDesc("INT32", [1, 1, 1, 4]),
                                                              dml.TensorDesc("INT8", [1, 1, 1, 4])))


def test_functional_compile_and_dask_give_the_same_bits() -> None:
    import dask.array as da

    x = _float_values(dml.DataType.FLOAT32).reshape(-1, 1)[:48].reshape(6, 8)
    eager = np.asarray(dml.cast(x, np.int16))
    assert eager.dtype == np.int16
    expected = [oracle.cast_element(float(v), "FLOAT32", "INT16") for v in x.reshape(-1)]
    assert eager.reshape(-1).tolist() == expected
    traced = dml.compile(lambda v: dml.cast(v, "INT16"))(x)
    lazy = dml.cast(da.from_array(x, chunks=(2, 3)), dml.DataType.INT16).compute(scheduler="sync")
    assert np.asarray(traced).tolist() == eager.tolist() and np.asarray(lazy).tolist() == eager.tolist()
    out = np.empty(x.shape, np.int16)
    assert dml.cast(x, np.int16, out=out) is out and out.tolist() == eager.tolist()


SHAPE = (4, 24)


def test_a_cast_chain_fuses_bit_for_bit() -> None:
    """ADD -> CAST to INT16 -> BIT_XOR -> CAST to FLOAT16: one fused kernel, equal to its nodes run one by one and to
    the oracle."""
    from opendml import graph as g
    from tests.graph_helpers import run_graph, run_node_by_node

    device = dml.Device("cpu")
    graph = dml.Graph(device)
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(SHAPE) * 40000).astype(np.float32)
    x.reshape(-1)[:8] = [np.nan, np.inf, -np.inf, -0.0, 2.5, -2.5, 32767.5, -32768.9]
    bias = np.array([0.5], np.float32)
    mask = np.array([0x5A5A, 0], np.int16)  # a buffer of at least 4 bytes
    a = graph.input(0, dml.TensorDesc("FLOAT32", SHAPE))
    b = g.reinterpret(graph.input(1, dml.TensorDesc("FLOAT32", [1])), sizes=SHAPE, strides=[0, 0])
    m = g.reinterpret(graph.input(2, dml.TensorDesc("INT16", [1])), sizes=SHAPE, strides=[0, 0])
    result = g.cast(g.bit_xor(g.cast(g.add(a, b), "INT16"), m), "FLOAT16")
    desc = graph.graph_desc([result])
    assert len(device.compile_graph(desc).plan.groups) == 1  # one fused kernel
    raw = [np.ascontiguousarray(v).reshape(-1).view(np.uint8) for v in (x, bias, mask)]
    empty = [np.zeros(x.size * 2, np.uint8)]
    fused = run_graph(device, desc, raw, empty)
    alone = run_node_by_node(device, desc, raw, empty)
    assert all((f == one).all() for f, one in zip(fused, alone))
    expected = [oracle.cast_element(oracle.bit_xor_element(oracle.cast_element(
        oracle.add_element(float(v), 0.5, "FLOAT32"), "FLOAT32", "INT16"), 0x5A5A, "INT16"), "INT16", "FLOAT16")
        for v in x.reshape(-1)]
    assert fused[0].view(np.float16).tolist() == expected


# --- FLOAT64 (CAST's 4_1 row, IDENTITY's 4_1, IF's 5_0) ------------------------------------------------------------

def test_float64_rounds_once_straight_to_float16() -> None:
    """Doubles just past a FLOAT16 tie by less than float32 keeps (through float32 they would land on the tie and
    round to even), on the tie itself, at the overflow threshold and in FLOAT16's subnormals."""
    x = np.array([1 + 2.0**-11 + 2.0**-40, 1 + 2.0**-11, -(1 + 3 * 2.0**-11 - 2.0**-40), 65520.0 - 2.0**-30, 65520.0,
                  2.0**-25 + 2.0**-60, 2.0**-25, 1e300, -0.0])
    got = np.asarray(dml.cast(x, np.float16)).tolist()
    assert got == [1 + 2.0**-10, 1.0, -(1 + 2.0**-10), 65504.0, math.inf, 2.0**-24, 0.0, math.inf, -0.0]
    assert got == [oracle.cast_element(v, "FLOAT64", "FLOAT16") for v in x.tolist()]
    assert np.asarray(dml.cast(x[:1].astype(np.float32), np.float16)).tolist() == [1.0]  # the float32 tie: to even


def test_float64_arrays_through_every_front_end() -> None:
    """opendml.cast, identity and where take float64 arrays (their tables list FLOAT64), eager, traced and on Dask
    arrays; other functions still refuse them with the hint to cast, and so does CAST below 4_1."""
    import dask.array as da

    x = _float_values(dml.DataType.FLOAT64)[:48].reshape(6, 8)
    expected = [oracle.cast_element(float(v), "FLOAT64", "INT32") for v in x.reshape(-1)]
    assert np.asarray(dml.cast(x, np.int32)).reshape(-1).tolist() == expected
    assert np.asarray(dml.compile(lambda v: dml.cast(v, "INT32"))(x)).reshape(-1).tolist() == expected
    lazy = dml.cast(da.from_array(x, chunks=(2, 3)), np.int32).compute(scheduler="sync")
    assert np.asarray(lazy).reshape(-1).tolist() == expected
    payload = x.copy()
    payload.view(np.uint64)[0, 0] = 0xFFF0_0000_0000_0123  # a signalling NaN with a payload
    view = payload[:, ::2]  # a strided view, copied bit for bit
    copied = np.ascontiguousarray(np.asarray(dml.identity(view)))
    assert copied.view(np.uint64).tolist() == np.ascontiguousarray(view).view(np.uint64).tolist()
    condition = np.array([[1], [0], [2], [0], [255], [0]], np.uint8)  # broadcast along the rows
    chosen = np.asarray(dml.compile(lambda c, a, b: dml.where(c, a, b))(condition, x, -x))
    assert chosen.view(np.uint64).tolist() == np.where(condition != 0, x, -x).view(np.uint64).tolist()
    with pytest.raises(dml.InvalidArgumentError, match=r"^ELEMENT_WISE_ABS: InputTensor\.DataType .*got FLOAT64"):
        dml.abs(x)
    with pytest.raises(dml.InvalidArgumentError, match=r"^CAST: InputTensor\.DataType .* at feature level 4_0; got "
                                                       r"FLOAT64"):
        dml.cast(x, np.float16, device=dml.Device("cpu", "4_0"))
    with pytest.raises(dml.InvalidArgumentError, match=r"^ELEMENT_WISE_IDENTITY: ScaleBias must be absent on FLOAT64"):
        dml.identity(x, scale_bias=dml.ScaleBias(2.0, 0.0))


def test_a_float64_chain_fuses_bit_for_bit() -> None:
    """CAST FLOAT64 -> FLOAT16 -> FLOAT64 (the FLOAT16 value an intermediate: rounded once, straight from the
    double), IF between it and the input, CAST to INT16: one fused kernel, equal to its nodes one by one and to
    the oracle."""
    from opendml import graph as g
    from tests.graph_helpers import run_graph, run_node_by_node

    device = dml.Device("cpu")
    graph = dml.Graph(device)
    x = _float_values(dml.DataType.FLOAT64)[:96].reshape(SHAPE)
    condition = (np.arange(x.size) % 3).astype(np.uint8).reshape(SHAPE)
    a = graph.input(0, dml.TensorDesc("FLOAT64", SHAPE))
    c = graph.input(1, dml.TensorDesc("UINT8", SHAPE))
    rounded = g.cast(g.cast(a, "FLOAT16"), "FLOAT64")
    result = g.cast(g.where(c, rounded, a), "INT16")
    desc = graph.graph_desc([result, rounded])
    assert len(device.compile_graph(desc).plan.groups) == 1  # one fused kernel, the FLOAT64 round trip an output
    raw = [np.ascontiguousarray(v).reshape(-1).view(np.uint8) for v in (x, condition)]
    empty = [np.zeros(x.size * 2, np.uint8), np.zeros(x.size * 8, np.uint8)]
    fused = run_graph(device, desc, raw, empty)
    alone = run_node_by_node(device, desc, raw, empty)
    assert all((f == one).all() for f, one in zip(fused, alone))
    trip = [oracle.cast_element(oracle.cast_element(float(v), "FLOAT64", "FLOAT16"), "FLOAT16", "FLOAT64")
            for v in x.reshape(-1)]
    expected = [oracle.cast_element(r if k else float(v), "FLOAT64", "INT16")
                for r, k, v in zip(trip, condition.reshape(-1), x.reshape(-1))]
    assert fused[0].view(np.int16).tolist() == expected
    assert all(oracle.same_value(got, want) for got, want in zip(fused[1].view(np.float64).tolist(), trip))


def _near_half_ties() -> st.SearchStrategy[float]:
    """Doubles at or near a FLOAT16 rounding boundary (a tie between neighbours, normal or subnormal, or the
    overflow threshold), moved by a few ulps of the double or by less than float32 can see."""
    k = st.integers(1 << 10, (1 << 11) - 1)
    exponent = st.integers(-24, 15)
    nudge = st.sampled_from([0.0, 2.0**-30, -(2.0**-30), 2.0**-52, -(2.0**-52), 2.0**-40])
    sign = st.sampled_from([1.0, -1.0])
    return st.builds(lambda m, e, d, s: s * math.ldexp((2 * m + 1) * (1 + d), e - 11), k, exponent, nudge, sign)


@settings(max_examples=30, deadline=None)
@given(values=st.lists(st.floats(width=64) | _near_half_ties(), min_size=1, max_size=24),
       target=st.sampled_from(["FLOAT16", "FLOAT32", "INT64", "UINT8", "INT32"]))
def test_property_float64_casts_match_the_oracle(values: list[float], target: str) -> None:
    """Random doubles (any, NaN and subnormals included, and doubles at or near FLOAT16's ties) to FLOAT16 and
    FLOAT32 through the device (kernels the tests above compile), to integers through the NumPy lowering."""
    x = np.array(values, np.float64)
    expected = [oracle.cast_element(v, "FLOAT64", target) for v in values]
    if target.startswith("FLOAT"):
        got = np.asarray(dml.cast(x, dml.DataType[target])).tolist()
    else:
        desc = dml.CastDesc(dml.TensorDesc("FLOAT64", [x.size]), dml.TensorDesc(target, [x.size]))
        spec = dml.Device("cpu").create_operator(desc).kernel_spec
        got = numpy_lowering.evaluate(spec.element, [x], spec.scalars).tolist()
    assert all(oracle.same_value(g, e) for g, e in zip(got, expected)), (values, got, expected)
