"""REDUCE: the description's rules, and every function against an oracle computed here (exact sums by
fractions.Fraction, rounded to the output type by comparing the neighbours; never opendml's accumulator)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendml as dml
from opendml.backends import cpu_kernels
from tests.reduce_oracle import bits, oracle_order, oracle_product, oracle_sum, rounded

KERNELS = [
    pytest.param("numba", id="numba", marks=pytest.mark.skipif(
        not cpu_kernels.numba_available(), reason="Numba is not installed (the opendml[fast] extra)")),
    pytest.param("numpy", id="numpy"),
]


@pytest.fixture(params=KERNELS)
def kernels(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(cpu_kernels, "_chosen", cpu_kernels.load(request.param))
    return str(request.param)


def same(got: np.ndarray, want: np.ndarray) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    return bool(np.all((got.view(f"u{got.itemsize}") == want.view(f"u{want.itemsize}"))
                       | (np.isnan(got) & np.isnan(want))))


EDGES = [
    [1e30, 1, -1e30],
    [-0.0, -0.0],
    [0.0, -0.0],
    [-0.0],
    [3e38, 3e38, -3e38],
    [3e38, 3e38],
    [-3e38, -3e38],
    [np.inf, 1],
    [np.inf, -np.inf],
    [-np.inf, 5],
    [np.nan, 1],
    [1e-45, 1e-45, 3e-45],
    [1e-45, -1e-45],
    [-1e-45],
    [1, 2 ** -24],  # a tie: to even
    [1, 2 ** -24, 2 ** -60],  # just above the tie
    [1, 2 ** -24, -(2 ** -60)],  # just below
    [2 ** 127 * 1.9999999, 2 ** 103],  # the midpoint past the largest float32: ties to even give inf
]
HALF_EDGES = [
    [65504, 16],  # the midpoint past the largest FLOAT16: inf
    [65504, 15.9990234375],  # just below it
    [6e4, 6e4, -6e4],
    [2 ** -24, 2 ** -24, -(2 ** -23)],
    [2 ** -24, 2 ** -25],  # sums below the smallest subnormal's ulp: FLOAT32 inputs only
    [1, 2 ** -11],  # a tie in FLOAT16: to even
    [1, 2 ** -11, 2 ** -24],
]


@pytest.mark.parametrize("function", ["SUM", "AVERAGE", "L1"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_edge_values_give_the_exact_sum_rounded_once(kernels: str, function: str, dtype: type) -> None:
    for case in EDGES + HALF_EDGES:
        with np.errstate(over="ignore"):
            x = np.array(case, np.float32).astype(dtype)
        got = dml.reduce(x, function, keepdims=False)
        want = oracle_sum(x, dtype, divide=function == "AVERAGE", absolute=function == "L1")
        assert same(got, want), (function, case, got, want)


def test_cancellation_beats_pairwise_summation() -> None:
    """The issue's case: 2**20 values cancelling in pairs, plus 1e-3; np.sum is thousands of ulp off."""
    rng = np.random.default_rng(7)
    half = rng.standard_normal(1 << 19).astype(np.float32) * np.float32(1e4)
    x = np.concatenate([half, -half[::-1], np.array([1e-3], np.float32)])
    rng.shuffle(x)
    assert bits(dml.reduce(x, "SUM", keepdims=False)) == bits(np.float32(1e-3))


@pytest.mark.parametrize("shape,axes", [
    ((3, 1500), (1,)),  # a row longer than a block (1024 elements)
    ((5, 7, 9), (0, 2)),
    ((2, 3, 4, 5), (1, 3)),
    ((40, 33), (0,)),
    ((1, 70000), (1,)),  # one row split between threads
    ((4, 2, 300), None),
    ((3, 9000), (1,)),  # FLOAT16 rows longer than a FLOAT16 block (8192 elements)
])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_axes_and_layouts_against_the_oracle(kernels: str, shape: tuple[int, ...], axes: tuple[int, ...] | None,
                                             dtype: type) -> None:
    rng = np.random.default_rng(sum(shape))
    scale = 30 if dtype == np.float32 else 8
    x = (rng.standard_normal(shape) * np.exp2(rng.integers(-scale, scale, shape))).astype(dtype)
    reduced = tuple(range(len(shape))) if axes is None else axes
    kept = [k for k in range(len(shape)) if k not in reduced]
    rows = np.transpose(x, kept + list(reduced)).reshape(-1, math.prod(shape[a] for a in reduced))
    out_shape = tuple(1 if k in reduced else n for k, n in enumerate(shape))
    for function in ("SUM", "AVERAGE", "L1"):
        got = dml.reduce(x, function, axes)
        want = np.array([oracle_sum(r, dtype, function == "AVERAGE", function == "L1") for r in rows],
                        dtype).reshape(out_shape)
        assert same(got, want), function


def test_a_transposed_view_gives_the_same_bits() -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((300, 200)).astype(np.float32)
    assert same(dml.reduce(x.T, "SUM", 0), dml.reduce(np.ascontiguousarray(x.T), "SUM", 0))


@settings(max_examples=15, deadline=None)
@given(st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), min_size=1, max_size=3000),
       st.integers(1, 3))
def test_the_sum_is_the_same_bits_on_any_thread_count(values: list[float], threads: int) -> None:
    x = np.array(values, np.float32)
    got = dml.reduce(x, "SUM", keepdims=False, device=dml.Device(threads=threads))
    assert same(got, oracle_sum(x, np.float32))


def test_multiply_of_an_infinity_and_zero_is_nan_and_past_the_range_infinite() -> None:
    """IEEE's products, without a warning (the suite makes warnings errors)."""
    x = np.array([[np.inf, 0.0, 2.0], [1e30, 1e30, 1e30], [-1e30, 1e30, 1.0]], np.float32)
    got = dml.reduce(x, "MULTIPLY", axes=1, keepdims=False)
    assert np.isnan(got[0]) and got[1] == np.inf and got[2] == -np.inf


def test_sum_square_min_max_and_multiply() -> None:
    x = np.array([[3e-30, -2.0, 0.5, -0.0], [0.0, -0.0, -0.0, 0.0]], np.float32)
    got = dml.reduce(x, "SUM_SQUARE", 1).ravel()
    want = [rounded(sum(Fraction(float(v)) ** 2 for v in row), np.float32) for row in x]
    assert same(got, np.array(want, np.float32))
    assert same(dml.reduce(x, "MAX", 1).ravel(), np.array([0.5, 0.0], np.float32))
    assert same(dml.reduce(x, "MIN", 1).ravel(), np.array([-2.0, -0.0], np.float32))
    assert np.isnan(dml.reduce(np.array([1, np.nan, 2], np.float32), "MAX", keepdims=False))
    assert dml.reduce(np.array([2.0, 3.0, 0.5], np.float32), "MULTIPLY", keepdims=False) == 3.0


def test_integer_sums_and_products_wrap() -> None:
    top = np.iinfo(np.int32).max
    assert dml.reduce(np.array([top, 1], np.int32), "SUM", keepdims=False) == np.iinfo(np.int32).min
    assert dml.reduce(np.array([2 ** 32 - 1, 2], np.uint32), "SUM", keepdims=False) == 1
    assert dml.reduce(np.array([65536, 65536, 3], np.int32), "MULTIPLY", keepdims=False) == 0
    assert dml.reduce(np.array([-(2 ** 31), -1], np.int32), "MULTIPLY", keepdims=False) == -(2 ** 31)


def test_argmin_and_argmax_through_reduce() -> None:
    x = np.array([[3, 1, 1], [2, 7, 7]], np.float32)
    assert dml.reduce(x, "ARGMIN", 1).ravel().tolist() == [1, 0]
    assert dml.reduce(x, "ARGMAX", 1, output_type="UINT32").ravel().tolist() == [0, 1]


def test_the_description_rules() -> None:
    device = dml.Device()
    x = dml.TensorDesc("FLOAT32", [2, 3])
    with pytest.raises(dml.OpenDMLError, match=r"REDUCE.*OutputTensor.Sizes\[1\].*must be 1"):
        device.create_operator(dml.ReduceDesc("SUM", x, dml.TensorDesc("FLOAT32", [2, 3]), [1]))
    with pytest.raises(dml.OpenDMLError, match=r"REDUCE.*OutputTensor.DataType.*FLOAT32"):
        device.create_operator(dml.ReduceDesc("SUM", x, dml.TensorDesc("FLOAT16", [2, 1]), [1]))
    with pytest.raises(dml.OpenDMLError, match=r"REDUCE.*Function.*must be one of ARGMAX"):
        device.create_operator(dml.ReduceDesc("MEAN", x, dml.TensorDesc("FLOAT32", [2, 1]), [1]))
    i = dml.TensorDesc("INT32", [2, 3])
    with pytest.raises(dml.OpenDMLError, match=r"REDUCE.*InputTensor.DataType.*FLOAT32, FLOAT16"):
        device.create_operator(dml.ReduceDesc("AVERAGE", i, dml.TensorDesc("INT32", [2, 1]), [1]))
    device.create_operator(dml.ReduceDesc("SUM", i, dml.TensorDesc("INT32", [2, 1]), [1]))
    device.create_operator(dml.ReduceDesc("ARGMAX", i, dml.TensorDesc("INT64", [2, 1]), [1]))
    old = dml.Device(feature_level="2_1")
    with pytest.raises(dml.OpenDMLError, match=r"REDUCE.*DimensionCount"):
        old.create_operator(dml.ReduceDesc("SUM", x, dml.TensorDesc("FLOAT32", [2, 1]), [1]))
    x4 = dml.TensorDesc("FLOAT32", [1, 1, 2, 3])
    with pytest.raises(dml.OpenDMLError, match=r"REDUCE.*OutputTensor.DataType.*UINT32"):
        old.create_operator(dml.ReduceDesc("ARGMIN", x4, dml.TensorDesc("INT64", [1, 1, 2, 1]), [3]))
    old.create_operator(dml.ReduceDesc("ARGMIN", x4, dml.TensorDesc("UINT32", [1, 1, 2, 1]), [3]))


@pytest.mark.parametrize("fusion", ["0", "1"])
def test_a_graph_sums_what_an_element_wise_node_computes(fusion: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """relu → REDUCE SUM in a compiled graph: the value reduction takes no prologue, so the relu keeps its
    buffer and the sum is exact as a lone REDUCE's (with fusion on or off)."""
    from opendml import graph as g

    monkeypatch.setenv("OPENDML_FUSION", fusion)
    device = dml.Device()
    graph = dml.Graph(device)
    x = graph.input(0, dml.TensorDesc("FLOAT32", [2, 3]))
    y = g.reduce(g.relu(x), "SUM", [1])
    assert y.desc.sizes == (2, 1) and y.desc.data_type == dml.DataType.FLOAT32
    compiled = graph.compile([y])
    data = np.array([[1e30, 1, -1e30], [-1e30, 2, 5e-45]], np.float32)
    out = device.create_buffer(8)
    compiled.execute([device.buffer_from(data)], [out])
    want = [oracle_sum(np.maximum(row, 0), np.float32) for row in data]
    assert same(out.to_numpy().view(np.float32), np.array(want, np.float32))
    assert g.reduce(x, "ARGMAX", [0, 1]).desc.data_type == dml.DataType.INT64


@pytest.mark.parametrize("n", [1, 7, 8, 9, 33, 1000, 1025, 3000])
def test_signed_zeros_in_rows_of_every_length(kernels: str, n: int) -> None:
    """A sum of -0.0 alone is -0.0, with one +0.0 among them +0.0, in short rows (summed whole) and long ones."""
    x = np.full((3, n), -0.0, np.float32)
    x[1, n // 2] = 0.0
    x[2, 0] = 1.0
    x[2, -1] = -1.0 if n > 1 else 0.0
    for function, want in (("SUM", [-0.0, 0.0, 0.0]), ("AVERAGE", [-0.0, 0.0, 0.0]), ("L1", [0.0, 0.0, None])):
        got = dml.reduce(x, function, 1).ravel()
        expected = [oracle_sum(row, np.float32, function == "AVERAGE", function == "L1") for row in x]
        assert same(got, np.array(expected, np.float32)), (function, got)
        assert all(w is None or same(np.float32(g), np.float32(w)) for g, w in zip(got, want)), (function, got)


def test_a_first_axis_sum_with_one_wide_column(kernels: str) -> None:
    """A leading reduced axis is summed column tile by column tile: one column's tiny element widens its tile's
    span, and that column alone is summed another way; the others keep their float64 sums."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((300, 700)).astype(np.float32)
    x[17, 5] = np.float32(3e-38)
    x[200, 650] = np.float32(np.inf)
    got = dml.reduce(x, "SUM", 0).ravel()
    want = np.array([oracle_sum(x[:, c], np.float32) for c in range(x.shape[1])], np.float32)
    assert same(got, want)


def test_half_rows_with_specials(kernels: str) -> None:
    """FLOAT16 rows read in place: infinities and NaN noted, the finite elements still summed exactly."""
    x = np.zeros((4, 9000), np.float16)
    x[:, ::7] = np.float16(0.1)
    x[0, 5] = np.inf
    x[1, 8500], x[1, 3] = np.inf, -np.inf
    x[2, 4000] = np.nan
    x[3, :] = -0.0
    for function in ("SUM", "L1", "AVERAGE"):
        got = dml.reduce(x, function, 1).ravel()
        want = [oracle_sum(r, np.float16, function == "AVERAGE", function == "L1") for r in x]
        assert same(got, np.array(want, np.float16)), function


def test_cuda_plans_every_value_function_and_type_the_table_allows(monkeypatch: pytest.MonkeyPatch) -> None:
    """CUDA's REDUCE lowering (``reduce_plan.mode``, no CuPy needed) takes every value function of every input type
    REDUCE's support table allows: none reaches the refusal, which names REDUCE, the function and the type."""
    from opendml.backends.cuda import reduce_plan
    from opendml.errors import KernelUnsupportedError, OpenDMLError

    planned = set()
    for function in ("SUM", "AVERAGE", "L1", "L2", "LOG_SUM", "LOG_SUM_EXP", "MAX", "MIN", "MULTIPLY", "SUM_SQUARE"):
        for data_type in dml.DataType:
            try:
                operator = dml.Device().create_operator(dml.ReduceDesc(
                    function, dml.TensorDesc(data_type.name, [2, 3]), dml.TensorDesc(data_type.name, [2, 1]), [1]))
            except OpenDMLError:
                continue
            reduce_plan.mode(operator.kernel_spec)
            planned.add((function, data_type.name))
    assert {("LOG_SUM_EXP", "FLOAT16"), ("MULTIPLY", "UINT32"), ("MAX", "INT8"), ("L2", "FLOAT32")} <= planned
    spec = dml.Device().create_operator(dml.ReduceDesc("LOG_SUM", dml.TensorDesc("FLOAT32", [2, 3]),
                                                       dml.TensorDesc("FLOAT32", [2, 1]), [1])).kernel_spec
    monkeypatch.setattr(reduce_plan, "FLOATS", frozenset())  # as if FLOAT32's sums were not lowered
    with pytest.raises(KernelUnsupportedError, match=r"^REDUCE: Function .*; got LOG_SUM of FLOAT32\.$"):
        reduce_plan.mode(spec)


def _rows_of(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    kept = [k for k in range(x.ndim) if k not in axes]
    return np.transpose(x, kept + list(axes)).reshape(-1, math.prod(x.shape[a] for a in axes))


@pytest.mark.thin("kernels", "shape", "dtype")  # each kernel module, shape and type once; every case under --slow
@pytest.mark.parametrize(("shape", "axes"), [((5, 1000), (1,)), ((1000, 5), (0,)), ((1, 140001), (1,)),
                                             ((3, 70001), (1,)), ((4, 9, 33), (0, 2))])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_products_follow_the_tree_on_every_thread_count(kernels: str, shape: tuple[int, ...],
                                                        axes: tuple[int, ...], dtype: type) -> None:
    """MULTIPLY against the tree computed here (tests/reduce_oracle.py), rows shared among threads and one long row's
    levels shared (from 2**16 products a level), with a zero, an infinity and a NaN in their own rows."""
    rng = np.random.default_rng(shape[-1])
    x = np.exp2(rng.uniform(-0.02, 0.02, shape)) * np.where(rng.random(shape) < 0.5, 1, -1)
    rows = _rows_of(x, axes)
    rows[0, rows.shape[1] // 3] = 0.0
    if len(rows) > 2:
        rows[1, -1], rows[2, 0] = np.inf, np.nan
    x = np.ascontiguousarray(np.moveaxis(rows.reshape(*[shape[k] for k in range(len(shape)) if k not in axes],
                                                      *[shape[a] for a in axes]),
                                         list(range(len(shape) - len(axes), len(shape))), list(axes))).astype(dtype)
    want = np.array([oracle_product(r, dtype) for r in _rows_of(x, axes)], dtype)
    # The order shows only in the double roots (a rounded result hides almost every reordering): the Numba
    # kernels' own, over the rows of the input's exact FLOAT32 values.
    rows32 = np.ascontiguousarray(_rows_of(x, axes)).astype(np.float32)
    roots = np.array([oracle_product(r, np.float64) for r in rows32])
    for threads in (1, 2, 3):
        got = dml.reduce(x, "MULTIPLY", axes, keepdims=False, device=dml.Device(threads=threads))
        assert same(got.ravel(), want), threads
        if kernels == "numba":
            from opendml.backends.cpu_kernels import products

            assert same(products.products(rows32, threads), roots), threads


def test_column_products_of_every_length_follow_the_tree(kernels: str) -> None:
    """MULTIPLY over the first axis (the column kernel's counter over the tree's leaves, eight at a time where all
    eight rows exist): columns of lengths around every group of eight and power of two, with zeros, infinities and
    NaN, on one and two threads, against the tree computed here. The order shows only in the double root before its
    rounding (a FLOAT32 result hides almost every reordering): the Numba kernel's roots are compared too."""
    rng = np.random.default_rng(17)
    for n in (1, 2, 3, 7, 8, 9, 15, 16, 17, 24, 100, 1023, 1025):
        x = (np.exp2(rng.uniform(-4, 4, (n, 37))) * np.where(rng.random((n, 37)) < 0.5, 1, -1)).astype(np.float32)
        x[rng.integers(n), 3], x[rng.integers(n), 5], x[rng.integers(n), 8] = 0.0, np.inf, np.nan
        roots = np.array([oracle_product(column, np.float64) for column in x.T])
        for threads in (1, 2):
            got = dml.reduce(x, "MULTIPLY", 0, keepdims=False, device=dml.Device(threads=threads))
            with np.errstate(over="ignore"):  # a root past FLOAT32's range rounds to infinity
                assert same(got, roots.astype(np.float32)), (n, threads)
            if kernels == "numba":
                from opendml.backends.cpu_kernels import products

                assert same(products.column_products(x, threads), roots), (n, threads)


@pytest.mark.parametrize(("shape", "axes"), [((3, 200001), (1,)), ((200001, 3), (0,)), ((300000,), (0,)),
                                             ((6, 50000), (1,))])
def test_max_and_min_on_every_thread_count(kernels: str, shape: tuple[int, ...], axes: tuple[int, ...]) -> None:
    """MAX and MIN against Python's max and min with -0.0 below +0.0 (tests/reduce_oracle.py), the outputs shared
    among the threads or, fewer than the threads, each row's segments reduced once more: zeros of both signs as the
    extremes, a NaN in a row."""
    rng = np.random.default_rng(sum(shape))
    x = -np.abs(rng.standard_normal(shape).astype(np.float32)) - np.float32(1)  # every element below the zeros
    rows = _rows_of(x, axes)  # a view: its places are x's
    rows[0, [5, rows.shape[1] - 1]] = [-0.0, 0.0]  # +0.0 the largest, in the last segment
    if len(rows) > 1:
        rows[1, 7] = np.nan
    if len(rows) > 2:
        rows[2, -3:] = [-0.0, -0.0, -0.0]
    for threads in (1, 2, 3):
        device = dml.Device(threads=threads)
        for function, largest in (("MAX", True), ("MIN", False)):
            got = dml.reduce(x, function, axes, keepdims=False, device=device).ravel()
            want = np.array([oracle_order(r, largest) for r in _rows_of(x, axes)], np.float32)
            assert same(got, want), (function, threads)


@pytest.mark.thin(("kernels", "n"), "dtype")  # each kernel module at each length, each type; all under --slow
@pytest.mark.parametrize("n", [256, 1 << 17])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_the_products_order_shows_where_float64_overflows(kernels: str, n: int, dtype: type) -> None:
    """Alternating huge and tiny elements: the tree pairs elements of one parity (i with i + n / 2), so its float64
    products overflow to inf and underflow to 0, whose product is NaN; pairing a huge with a tiny element (any
    other order) stays finite. Rows of one thread, and a row whose levels are shared (2**17 elements)."""
    huge, tiny = (1e38, 1e-38) if dtype == np.float32 else (60000.0, 2.0 ** -14)
    x = np.tile(np.array([huge, tiny], dtype), (2, n // 2))
    x[1] = x[1, ::-1]  # tiny first
    want = np.array([oracle_product(r, dtype) for r in x], dtype)
    assert np.isnan(want).all()
    for threads in (1, 2, 3):
        got = dml.reduce(x, "MULTIPLY", 1, keepdims=False, device=dml.Device(threads=threads))
        assert same(got, want), threads
        columns = dml.reduce(np.ascontiguousarray(x.T), "MULTIPLY", 0, keepdims=False,
                             device=dml.Device(threads=threads))
        assert same(columns, want), threads


@pytest.mark.parametrize(("shape", "tile"), [pytest.param((600, 130), None, marks=pytest.mark.slow),
                                             ((2100, 40), None), ((256, 300), None), ((1100, 300), 64)])
def test_first_axis_sums_on_every_thread_count_against_the_oracle(kernels: str, shape: tuple[int, int],
                                                                   tile: int | None,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The column kernel: tiles of columns (several where ``tile`` narrows them: shared among the threads), blocks
    of 1024 rows, a column whose span is too wide for its block read again by bins, rows split between threads
    where the tiles are fewer than the threads (2100 rows), merged exactly."""
    if tile is not None:
        if kernels != "numba":
            pytest.skip("the tiles are the Numba column kernel's; the NumPy path has none")
        from opendml.backends.cpu_kernels import sum_columns

        monkeypatch.setattr(sum_columns, "TILE", tile)
    rng = np.random.default_rng(shape[1])
    x = (rng.standard_normal(shape) * np.exp2(rng.integers(-8, 8, shape))).astype(np.float32)
    x[:, 7] *= np.exp2(rng.integers(-60, 60, shape[0])).astype(np.float32)  # one wide column
    x[:, 9] = -0.0
    x[3, 11] = np.inf
    for function in ("SUM", "L1", "AVERAGE"):
        want = np.array([oracle_sum(column, np.float32, function == "AVERAGE", function == "L1") for column in x.T],
                        np.float32)
        for threads in (1, 2, 3):
            got = dml.reduce(x, function, 0, keepdims=False, device=dml.Device(threads=threads))
            assert same(got, want), (function, threads)


def _of_field(field: int, significands: np.ndarray) -> np.ndarray:
    """FLOAT32 values ``m * 2**(field - 150)`` of 24-bit significands ``m`` (normal fields)."""
    return (significands.astype(np.float64) * 2.0 ** (field - 150)).astype(np.float32)


def _wide_blocks() -> np.ndarray:
    """Blocks of 1024 positive elements whose span (largest field ``E`` minus smallest ``e``) is past what one float64
    sum holds: each built so that one group's float64 sum would need more than 53 bits, with an odd total, if the
    elements were grouped otherwise than at the field ``E - 19`` (or, at span 40, grouped at all)."""
    rng = np.random.default_rng(40)
    top, odd = (lambda k: rng.integers((1 << 24) - 4096, 1 << 24, k)), (lambda k: rng.integers(1 << 22, 1 << 23, k) * 2 + 1)
    e = 140
    rows = [
        # span 39: 600 of the largest field over the field below the split (E - 20), whose sum an upper group one
        # field wider would have to hold: 2**53 units of that field and more, 401 odd elements
        np.concatenate([_of_field(e, top(600)), _of_field(e - 20, odd(401)), _of_field(e - 39, odd(23))]),
        # span 39: 800 elements at the split's field (E - 19), which a lower group one field wider would hold beside
        # the smallest field's 223 odd elements
        np.concatenate([_of_field(e, top(1)), _of_field(e - 19, top(800)), _of_field(e - 39, odd(223))]),
        # span 40: two groups would not do (the lower one's span 20): 600 elements at E - 20, 423 odd at E - 40
        np.concatenate([_of_field(e, top(1)), _of_field(e - 20, top(600)), _of_field(e - 40, odd(423))]),
        # span 20, the smallest past one sum, and zeros among the lower group
        np.concatenate([_of_field(e, top(500)), _of_field(e - 20, odd(501)), np.zeros(23, np.float32)]),
    ]
    return np.stack([rng.permutation(row) for row in rows])


def test_wide_blocks_reach_the_accumulator_exactly() -> None:
    """The accumulator itself, not its rounding (which hides an error far below the result's last bit): a block
    whose span is past one float64 sum is summed as two groups split at ``E - 19``, or by bins where the span is past
    39; rows and columns, SUM and L1, against the exact integer sum in units of ``2**-149``."""
    if not cpu_kernels.numba_available():
        pytest.skip("the accumulators are the Numba kernels'; the NumPy path keeps none")
    from opendml.backends.cpu_kernels import sum_accumulator, sum_columns, sums

    blocks = _wide_blocks()
    for function, signs in ((sum_accumulator.SUM, 1), (sum_accumulator.ABS, -1)):
        x = blocks * np.float32(signs)
        want = [sum(Fraction(float(abs(v) if signs < 0 else v)) for v in row) * 2**149 for row in x]
        for accs in (sums.row_accumulators(np.ascontiguousarray(x), function, 1),
                     sum_columns.column_accumulators(np.ascontiguousarray(x.T), function, 1)):
            got = [sum(int(acc[k]) << (32 * k) for k in range(sum_accumulator.DIGITS)) for acc in accs]
            assert got == want, function
