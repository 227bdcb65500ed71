"""REDUCE's value functions on CUDA (opendml/backends/cuda/reduce_plan.py, reduce_c.py and reduce_finish_c.py):
every source compiles with nvcc; the scan and finish kernels run on the host under emulation (tests/cuda_emulation.py:
each CUDA thread a fiber, the 64-bit atomics as host atomics) give the CPU backend's bits and the independent oracle's
exact sums (tests/reduce_oracle.py: fractions) over edge rows, random rows, several axis sets, both plan families and
several splits of one reduction (the words of scratch merge by commuting operations, so the split never shows);
and on a GPU the backend gives the CPU's bits on larger tensors."""

from __future__ import annotations

import math
import shutil
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendml as dml
from opendml import DataType as T
from opendml import TensorDesc
from opendml import expr as ex
from opendml.backends.cuda import reduce_c, reduce_plan, reduce_stages
from opendml.errors import KernelUnsupportedError
from opendml.kernels.spec import Accumulation, KernelSpec
from tests.conftest import CUDA_MISSING
from tests.cuda_emulation import ReduceRun, run_reduce_batch_on_host
from tests.reduce_oracle import oracle_l2, oracle_log_sum, oracle_log_sum_exp, oracle_sum, oracle_sum_square
from tests.test_cuda_lowering import compile_with_nvcc, needs_nvcc
from tests.test_reduce_log_sum_exp import EDGES as LOG_SUM_EXP_EDGES
from tests.test_reduce_squares import EDGES as SQUARE_EDGES
from tests.test_reduce_squares import LOG_SUM_EDGES

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
FLOAT_FUNCTIONS = ("SUM", "AVERAGE", "L1", "MAX", "MIN")
SQUARE_FUNCTIONS = ("SUM_SQUARE", "L2")
LOG_FUNCTIONS = ("LOG_SUM", "LOG_SUM_EXP")


def same(got: np.ndarray, want: np.ndarray) -> bool:
    """The same bits, NaN matching any NaN (MAX and MIN give the canonical NaN: docs/semantics.md 9c)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype.kind != "f":
        return bool(np.array_equal(got, want))
    return bool(np.all((got.view(f"u{got.itemsize}") == want.view(f"u{want.itemsize}"))
                       | (np.isnan(got) & np.isnan(want))))


def described(x: np.ndarray, axes: Sequence[int], strides: Sequence[int] | None = None) -> tuple[TensorDesc, TensorDesc]:
    t = T.parse(x.dtype)
    sizes = list(x.shape)
    return TensorDesc(t, sizes, strides), TensorDesc(t, [1 if k in axes else n for k, n in enumerate(sizes)])


def spec_of(function: str, x: TensorDesc, out: TensorDesc, axes: Sequence[int]) -> KernelSpec:
    return dml.Device().create_operator(dml.ReduceDesc(function, x, out, list(axes))).kernel_spec


def plan_of(run: ReduceRun) -> reduce_plan.ReducePlan:
    kept, reduced = reduce_plan.layouts(run.spec, run.x, run.out)
    return reduce_plan.plan_for(run.spec, run.x, kept, reduced, run.sm_count)


def splits(run: ReduceRun, pieces: int) -> ReduceRun:
    """``run`` with its reductions cut into ``pieces`` (or as many as there are elements); MULTIPLY's tree cut at
    level ``pieces`` instead (or its top)."""
    plan = plan_of(run)
    if plan.tree:
        sizes = reduce_plan.tree_sizes(plan.length)
        level = min(pieces, len(sizes) - 1)
        cut = reduce_plan.ReducePlan(plan.family, sizes[level], 0, plan.outputs, plan.length, level, True)
        return ReduceRun(run.spec, run.x, run.out, run.data, run.sm_count, cut)
    chunk = max(1, math.ceil(plan.length / pieces))
    cut = reduce_plan.ReducePlan(plan.family, math.ceil(plan.length / chunk), chunk, plan.outputs, plan.length)
    return ReduceRun(run.spec, run.x, run.out, run.data, run.sm_count, cut)


def output_of(raw: np.ndarray, out: TensorDesc) -> np.ndarray:
    dtype = np.dtype(out.data_type.numpy)
    return raw[: out.element_count * dtype.itemsize].view(dtype).reshape(out.sizes)


# --- values ------------------------------------------------------------------------------------------------

FLOAT32_EDGES = [
    [1e30, 1, -1e30], [-0.0, -0.0], [0.0, -0.0], [-0.0], [3e38, 3e38, -3e38], [3e38, 3e38], [-3e38, -3e38],
    [np.inf, 1], [np.inf, -np.inf], [-np.inf, 5], [np.nan, 1], [1e-45, 1e-45, 3e-45], [1e-45, -1e-45], [-1e-45],
    [1, 2 ** -24], [1, 2 ** -24, 2 ** -60], [1, 2 ** -24, -(2 ** -60)], [2 ** 127 * 1.9999999, 2 ** 103],
    [2 ** 100, 1e-40, -(2 ** 100)], [-np.inf, -np.inf, 1e38],
    # 33 binades, more than a chunk's float64 sum may span: the float64 sum loses 2**-23 and lands on the
    # midpoint 2**33 + 2**9 (to even: down), where the exact sum is just above it (up).
    [2 ** 33, 2 ** 9, 1 + 2 ** -23, -1],
]
FLOAT16_EDGES = [
    [65504, 16], [65504, 15.9990234375], [6e4, 6e4, -6e4], [2 ** -24, 2 ** -24, -(2 ** -23)], [1, 2 ** -11],
    [1, 2 ** -11, 2 ** -24], [-0.0, -0.0], [0.0, -0.0], [np.inf, -np.inf], [np.nan, 3], [-np.inf, 1],
    [6e-8, -6e-8, 6e-8],
]


def edge_matrix(dtype: type, length: int, rng: np.random.Generator) -> np.ndarray:
    """One row per edge case, its values at random places among -0.0 (which changes no sum's value or sign
    rule), then rows of random values: wide spans (the slow path), narrow ones, cancellation, subnormals."""
    edges = FLOAT32_EDGES if dtype == np.float32 else FLOAT16_EDGES
    rows = []
    for case in edges:
        row = np.full(length, -0.0)
        row[rng.choice(length, len(case), replace=False)] = case
        rows.append(row)
    top = 120 if dtype == np.float32 else 14
    bottom = -149 if dtype == np.float32 else -24
    rows.append(rng.standard_normal(length) * np.exp2(rng.integers(bottom, top, length)))  # wide: bins
    rows.append(rng.standard_normal(length) * np.exp2(rng.integers(-5, 5, length)))  # narrow: one float64
    half = rng.standard_normal(length // 2) * np.exp2(rng.integers(-20, 20, length // 2))
    rows.append(np.concatenate([half, -half[::-1], [2.0 ** -20] * (length - 2 * (length // 2))]))  # cancels
    rows.append(rng.standard_normal(length) * 2.0 ** (bottom + 3))  # subnormals
    rows.append(np.where(rng.random(length) < 0.5, 1.0, -1.0) * np.finfo(dtype).max)  # overflow either way
    with np.errstate(over="ignore"):
        return np.array(rows).astype(dtype)


def expected(x: np.ndarray, function: str, axes: Sequence[int]) -> np.ndarray:
    """The CPU backend's answer (NumPy arrays run on the CPU device)."""
    return np.asarray(dml.reduce(x, function, list(axes)))


def oracle(x: np.ndarray, function: str, axes: Sequence[int]) -> np.ndarray | None:
    """The exact sums (and L2's correctly rounded root, LOG_SUM's and LOG_SUM_EXP's correctly rounded logarithms) by
    fractions and mpmath (tests/reduce_oracle.py), shaped as the output; None for other functions."""
    if function not in ("SUM", "AVERAGE", "L1", *SQUARE_FUNCTIONS, *LOG_FUNCTIONS) or x.dtype.kind != "f":
        return None
    kept = [k for k in range(x.ndim) if k not in axes]
    rows = np.transpose(x, kept + list(axes)).reshape(-1, math.prod(x.shape[a] for a in axes))
    shape = tuple(1 if k in axes else n for k, n in enumerate(x.shape))
    if function in LOG_FUNCTIONS:
        exact = oracle_log_sum if function == "LOG_SUM" else oracle_log_sum_exp
        return np.array([exact(r, x.dtype.type) for r in rows], x.dtype).reshape(shape)
    if function in SQUARE_FUNCTIONS:
        exact = oracle_sum_square if function == "SUM_SQUARE" else oracle_l2
        return np.array([exact(r, x.dtype.type) for r in rows], x.dtype).reshape(shape)
    return np.array([oracle_sum(r, x.dtype.type, function == "AVERAGE", function == "L1") for r in rows],
                    x.dtype).reshape(shape)


# --- the host runs -----------------------------------------------------------------------------------------

def check(runs: Sequence[ReduceRun], arrays: Sequence[np.ndarray], folder: Path) -> None:
    """Each run's output is the CPU backend's bits and, for exact sums, the oracle's."""
    got = run_reduce_batch_on_host(runs, folder)
    for raw, run, x in zip(got, runs, arrays):
        assert run.spec.accumulation is not None
        function, axes = run.spec.accumulation.function, run.spec.accumulation.axes
        out = output_of(raw, run.out)
        want = expected(x, function, axes)
        label = (function, x.dtype.name, x.shape, axes, run.plan or plan_of(run))
        assert same(out, want), (label, out.ravel()[:8], want.ravel()[:8])
        exact = oracle(x, function, axes)
        assert exact is None or same(out, exact), label


def runs_of(x: np.ndarray, functions: Sequence[str], axes: Sequence[int], pieces: Sequence[int] = (),
            sm_counts: Sequence[int] = (1,), data: np.ndarray | None = None,
            strides: Sequence[int] | None = None) -> list[ReduceRun]:
    """Runs of each function over ``x`` (its bytes ``data`` as the kernel reads them, where given, through
    ``strides``): the plan of each GPU size, and that of the first cut into each count of ``pieces``."""
    desc, out = described(x, axes, strides)
    raw = np.ascontiguousarray(x) if data is None else data
    found = []
    for function in functions:
        spec = spec_of(function, desc, out, axes)
        base = [ReduceRun(spec, desc, out, raw, sm) for sm in sm_counts]
        found += base + [splits(base[0], p) for p in pieces]
    return found


def check_rows_and_columns(rows: np.ndarray, functions: Sequence[str], row_pieces: Sequence[int],
                           column_pieces: Sequence[int], folder: Path) -> None:
    """``rows`` reduced along its rows and, transposed, along its columns: the plans of 1 and 132 multiprocessors
    and each reduction cut into each count of pieces (MULTIPLY: its tree cut at that level)."""
    columns = np.ascontiguousarray(rows.T)
    along_rows = runs_of(rows, functions, (1,), row_pieces, (1, 132))
    along_columns = runs_of(columns, functions, (0,), column_pieces, (1, 132))
    check(along_rows + along_columns, [rows] * len(along_rows) + [columns] * len(along_columns), folder)


@needs_gxx
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_edge_rows_on_every_plan_give_the_cpu_bits_and_the_exact_sum(dtype: type, tmp_path: Path) -> None:
    """Rows (a block strides along each row: a row's elements spread over the threads, pieces merged through
    shared memory then global words) and columns (a thread walks its column's piece in chunks of 256, each
    checked for its span, re-read by bins where it fails); the plan of 1 and 132 multiprocessors, and a row cut
    into 2, 3 and 7 pieces (merged in any order): every result the same bits."""
    check_rows_and_columns(edge_matrix(dtype, 700, np.random.default_rng(5)), FLOAT_FUNCTIONS, (3, 7), (2, 7),
                           tmp_path)


def log_matrix(dtype: type, length: int, rng: np.random.Generator) -> np.ndarray:
    """The edge rows of LOG_SUM's and LOG_SUM_EXP's CPU tests among -inf (no term, no change to a sum but for
    LOG_SUM's NaN of -inf: those rows are given among zeros), then random rows: positive of every scale (LOG_SUM's
    sums), a few large values among small ones (LOG_SUM_EXP's terms underflow), equal values."""
    rows = []
    for case in LOG_SUM_EDGES + [case for case in LOG_SUM_EXP_EDGES if len(case) <= length]:
        row = np.zeros(length) if case in LOG_SUM_EDGES else np.full(length, -np.inf)
        row[rng.choice(length, len(case), replace=False)] = case
        rows.append(row)
    top = 60 if dtype == np.float32 else 7
    rows.append(np.exp2(rng.uniform(-top, top, length)))
    rows.append(rng.standard_normal(length) * 3 + np.where(rng.random(length) < 0.01, 40, 0))
    rows.append(np.full(length, 0.75))
    with np.errstate(over="ignore"):
        return np.array(rows).astype(dtype)


@needs_gxx
@pytest.mark.parametrize("dtype", [np.float32, pytest.param(np.float16, marks=pytest.mark.slow)])
def test_logarithms_on_every_plan_give_the_cpu_bits_and_the_oracle(dtype: type, tmp_path: Path) -> None:
    """LOG_SUM (SUM's scan, the logarithm's finish) and LOG_SUM_EXP (a scan of the largest elements, then the exact
    scan of the terms EXP(x - m)): rows and columns, the plans of 1 and 132 multiprocessors, reductions cut into
    pieces: the CPU's bits and the oracle's (correctly rounded logarithms of the exact sums)."""
    check_rows_and_columns(log_matrix(dtype, 300, np.random.default_rng(41)), LOG_FUNCTIONS, (3, 7), (2, 5),
                           tmp_path)


def square_matrix(dtype: type, length: int, rng: np.random.Generator) -> np.ndarray:
    """One row per edge case of the CPU's tests (midpoints of L2 and SUM_SQUARE, squares past the range or below
    2**-149, specials, a span of 300 binades), its values at random places among zeros; then random rows: one scale
    (every chunk split against one boundary), wide (chunks read again by bins), subnormal."""
    rows = []
    for case in SQUARE_EDGES:
        row = np.zeros(length)
        row[rng.choice(length, len(case), replace=False)] = case
        rows.append(row)
    top = 60 if dtype == np.float32 else 7
    rows.append(rng.standard_normal(length) * np.exp2(rng.integers(-4, 5, length)))
    rows.append(rng.standard_normal(length) * np.exp2(rng.integers(-top, top, length)))
    rows.append(rng.standard_normal(length) * (2.0 ** -140 if dtype == np.float32 else 2.0 ** -20))
    with np.errstate(over="ignore"):
        return np.array(rows).astype(dtype)


@needs_gxx
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_sums_of_squares_on_every_plan_give_the_cpu_bits_and_the_oracle(dtype: type, tmp_path: Path) -> None:
    """SUM_SQUARE and L2 (chunks of 32 squares split against one boundary, or read again by bins): rows and
    columns, the plans of 1 and 132 multiprocessors, rows cut into pieces: the CPU's bits and the oracle's (the
    exact sum of squares rounded once; the correctly rounded root)."""
    check_rows_and_columns(square_matrix(dtype, 300, np.random.default_rng(23)), SQUARE_FUNCTIONS, (3, 7), (2, 5),
                           tmp_path)


def exact_squares(row: np.ndarray) -> int:
    """The sum of the squares of ``row`` in units of 2**-298, by Python's integers (every finite FLOAT32 is an
    integer multiple of 2**-149)."""
    return sum(int(Fraction(float(v)) * 2 ** 149) ** 2 for v in row)


def digits_value(words: np.ndarray) -> int:
    """The integer a square accumulator's signed digits (base 2**32) stand for."""
    return sum(int(d) << (32 * k) for k, d in enumerate(words[: reduce_plan.SQUARE_DIGITS].view(np.int64)))


@needs_gxx
def test_the_words_of_squares_hold_the_exact_sum(tmp_path: Path) -> None:
    """The scan's words after it, before any rounding, against the exact integer sum of squares: rows of one scale
    with full 24-bit significands (the chunk's split: a plain float64 sum of such squares is not exact), rows
    spanning 35 and 200 binades (the bins), subnormals; rows and columns, rows in pieces."""
    rng = np.random.default_rng(29)
    narrow = rng.uniform(1, 2, (4, 300)) * np.exp2(rng.integers(-11, 12, (4, 300)))
    wider = rng.uniform(1, 2, (2, 300)) * np.exp2(rng.integers(-17, 18, (2, 300)))  # past SQUARE_SPAN: bins
    wide = rng.uniform(1, 2, (3, 300)) * np.exp2(rng.integers(-120, 100, (3, 300)))
    tiny = rng.uniform(-1, 1, (1, 300)) * 2.0 ** -126
    # Two scales 29 binades apart, one after the other: a group of the first must not take the second.
    halves = np.concatenate([np.exp2(rng.integers(0, 10, (2, 150))), np.exp2(rng.integers(-20, -10, (2, 150)))], 1)
    x = np.concatenate([narrow, wider, wide, tiny, rng.uniform(1, 2, (2, 300)) * halves]).astype(np.float32)
    runs = runs_of(x, ["SUM_SQUARE"], (1,), (3,)) + runs_of(np.ascontiguousarray(x.T), ["SUM_SQUARE"], (0,), (4,))
    # A long row of one scale: each thread's chunks join groups of 1024 elements.
    scales = np.concatenate([rng.integers(-9, 10, 30000), rng.integers(-29, -19, 10000)])
    long = (rng.uniform(1, 2, (1, 40000)) * np.exp2(scales)).astype(np.float32)
    runs += runs_of(long, ["SUM_SQUARE"], (1,), (2,))
    got = run_reduce_batch_on_host(runs, tmp_path, words_only=True)
    words = reduce_plan.WORDS["squares"]
    for raw, run in zip(got, runs):
        for o, row in enumerate(long if run.x.sizes[1] == 40000 else x):
            assert digits_value(raw[o * words:(o + 1) * words]) == exact_squares(row), (o, plan_of(run))


def product_matrix(dtype: type, length: int, rng: np.random.Generator) -> np.ndarray:
    """Rows for MULTIPLY: factors near 1 of either sign (finite products of every length), with a zero, with
    -0.0, an infinity times a zero (NaN), a NaN, an infinity, products past the type's range (float64 keeps them:
    rounded once to infinity) and below it (to a zero of their sign); integers at their limits (wrapping)."""
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        rows = rng.integers(info.min, info.max, (5, length), dtype=dtype, endpoint=True)
        rows[1, :] = rng.choice(np.array([-1, 1, 3], np.int64), length).astype(dtype)
        rows[2, ::7] = info.max
        rows[3, 5] = 0
        return rows
    near_one = rng.uniform(0.5, 2, (9, length)) * rng.choice([-1.0, 1.0], (9, length))
    near_one[1, 7] = 0.0
    near_one[2, 3] = -0.0
    near_one[3, [4, 9]] = [np.inf, 0.0]
    near_one[4, 11] = np.nan
    near_one[5, 2] = -np.inf
    big = 6e4 if dtype == np.float16 else 3e38
    near_one[6, :5] = big
    near_one[7, :5] = 1 / big
    return near_one.astype(dtype)


@needs_gxx
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint32])
def test_products_follow_the_cpus_tree_on_every_cut(dtype: type, tmp_path: Path) -> None:
    """MULTIPLY: each output's pairwise tree cut at the plan's level and at others (a thread a node, the nodes
    folded by a block), rows and columns, odd lengths: the CPU's bits (NaN any NaN)."""
    check_rows_and_columns(product_matrix(dtype, 301, np.random.default_rng(31)), ["MULTIPLY"], (1, 3, 6, 40),
                           (2, 5), tmp_path)


@needs_gxx
def test_axis_sets_layouts_and_long_rows(tmp_path: Path) -> None:
    """Non-adjacent axes, all axes, a middle axis, a transposed input read through its strides, and one long
    FLOAT32 row (each thread's chunks of 256 along a block-strided row; specials and a wide span in some of
    them) and a long FLOAT16 row."""
    rng = np.random.default_rng(11)
    cases: list[tuple[np.ndarray, tuple[int, ...], Sequence[str]]] = []
    for dtype, scale in ((np.float32, 30), (np.float16, 6)):
        for shape, axes in [((5, 7, 9), (0, 2)), ((4, 2, 300), (0, 1, 2)), ((6, 40, 3), (1,)), ((2, 3, 4, 5), (1, 3))]:
            x = (rng.standard_normal(shape) * np.exp2(rng.integers(-scale, scale, shape))).astype(dtype)
            cases.append((x, axes, FLOAT_FUNCTIONS))
    long = (rng.standard_normal(1 << 17) * np.exp2(rng.integers(-20, 20, 1 << 17))).astype(np.float32)
    long[[5000, 90000]] = [3e38, 1e-44]
    cases.append((long.reshape(1, -1), (1,), ("SUM", "AVERAGE", "L1", "L2")))
    half = (rng.standard_normal(1 << 15) * 100).astype(np.float16)
    cases.append((half.reshape(1, -1), (1,), ("SUM", "L1", "MAX", "SUM_SQUARE")))
    runs: list[ReduceRun] = []
    arrays: list[np.ndarray] = []
    for x, axes, functions in cases:
        found = runs_of(x, functions, axes, sm_counts=(4,))
        runs += found
        arrays += [x] * len(found)
    # A transposed view: the InputTensor's strides walk the columns of the stored rows.
    stored = (rng.standard_normal((30, 50)) * np.exp2(rng.integers(-40, 40, (30, 50)))).astype(np.float32)
    view = stored.T  # sizes [50, 30], strides [1, 50]
    for axes in ((0,), (1,)):
        found = runs_of(view, FLOAT_FUNCTIONS, axes, pieces=(3,), data=stored, strides=(1, 50))
        runs += found
        arrays += [view] * len(found)
    check(runs, arrays, tmp_path)


@needs_gxx
def test_integer_sums_wrap_and_integer_extremes(tmp_path: Path) -> None:
    """SUM of INT32 and UINT32 modulo 2**32 at the limits (the CPU's rule, docs/semantics.md 9c), MAX and MIN of
    every integer type REDUCE takes, over rows and columns and split rows."""
    rng = np.random.default_rng(17)
    runs: list[ReduceRun] = []
    arrays: list[np.ndarray] = []
    for dtype in (np.int32, np.uint32, np.int16, np.uint16, np.int8, np.uint8):
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, (9, 300), dtype=dtype, endpoint=True)
        x[0, :] = info.max
        x[1, :] = info.min
        x[2, :3] = [info.max, 1, info.min]
        functions = ("MAX", "MIN", "SUM") if dtype in (np.int32, np.uint32) else ("MAX", "MIN")
        for data, axes in ((x, (1,)), (np.ascontiguousarray(x.T), (0,))):
            found = runs_of(data, functions, axes, pieces=(4,))
            runs += found
            arrays += [data] * len(found)
    check(runs, arrays, tmp_path)


@needs_gxx
@settings(max_examples=8, deadline=None)
@given(st.lists(st.floats(width=32, allow_nan=False), min_size=1, max_size=40), st.integers(0, 2 ** 32 - 1),
       st.sampled_from(["SUM", "AVERAGE", "L1"]))
def test_property_any_split_gives_the_oracle(values: list[float], seed: int, function: str) -> None:
    """600 FLOAT32 values drawn from any few (infinities included), each of either sign, as a row cut in 1, 2 or
    5 pieces and as a column: the exact sum rounded once. One binary serves every example (the data are read
    from files)."""
    import tempfile

    rng = np.random.default_rng(seed)
    picked = rng.choice(np.array(values, np.float32), 600) * rng.choice(np.array([-1, 1], np.float32), 600)
    x = picked.reshape(1, -1)
    runs = runs_of(x, [function], (1,), pieces=(2, 5)) + runs_of(x.reshape(-1, 1), [function], (0,))
    with tempfile.TemporaryDirectory() as folder:
        got = run_reduce_batch_on_host(runs, Path(folder))
    want = oracle_sum(x, np.float32, function == "AVERAGE", function == "L1")
    for raw, run in zip(got, runs):
        assert same(output_of(raw, run.out).reshape(()), want), (function, run.plan)


# --- what the sources are, and what is refused ---------------------------------------------------------------

def all_sources() -> list[str]:
    """The scan and finish sources of every lowered function and type, both families."""
    sources = []
    for t in sorted(reduce_plan.ORDER_TYPES, key=lambda t: t.name):
        functions = ["MAX", "MIN"] + (["SUM", "AVERAGE", "L1", *SQUARE_FUNCTIONS, *LOG_FUNCTIONS]
                                      if t in reduce_plan.FLOATS else [])
        functions += ["SUM"] if t in reduce_plan.WRAP_TYPES else []
        functions += ["MULTIPLY"] if t in reduce_plan.PRODUCT_TYPES else []
        for function in functions:
            deep = [((4096, 600), (1,))] if function == "MULTIPLY" else []  # a tree cut above its elements
            for shape, axes in [((8, 300), (1,)), ((300, 8), (0,)), ((3, 4, 5), (0, 2)), *deep]:
                x = TensorDesc(t, list(shape))
                out = TensorDesc(t, [1 if k in axes else n for k, n in enumerate(shape)])
                spec = spec_of(function, x, out, axes)
                kept, reduced = reduce_plan.layouts(spec, x, out)
                plan = reduce_plan.plan_for(spec, x, kept, reduced, 132)
                sources += [stage.source for stage in reduce_stages.stages(spec, plan, kept, reduced, t, 132)]
    return sources


@needs_nvcc
def test_every_source_compiles_with_nvcc(tmp_path: Path) -> None:
    sources = all_sources()
    ptx = compile_with_nvcc(sources, tmp_path)
    assert ptx.count(".entry opendml_kernel_") == len(sources)


def test_the_plan_families_follow_the_layout() -> None:
    """A reduced innermost dimension is a block's row; a kept one a thread's column; few outputs are split."""
    for shape, axes, family in (((64, 4096), (1,), "rows"), ((4096, 64), (0,), "columns"), ((8, 9, 10), (0, 1), "columns"),
                                ((1 << 20,), (0,), "rows")):
        x = TensorDesc(T.FLOAT32, list(shape))
        out = TensorDesc(T.FLOAT32, [1 if k in axes else n for k, n in enumerate(shape)])
        spec = spec_of("SUM", x, out, axes)
        kept, reduced = reduce_plan.layouts(spec, x, out)
        plan = reduce_plan.plan_reduce(x, axes, kept, reduced, 132)
        assert plan.family == family, (shape, axes)
        assert plan.splits * plan.chunk >= plan.length > (plan.splits - 1) * plan.chunk
    one = TensorDesc(T.FLOAT32, [1 << 20])
    spec = spec_of("SUM", one, TensorDesc(T.FLOAT32, [1]), (0,))
    kept, reduced = reduce_plan.layouts(spec, one, TensorDesc(T.FLOAT32, [1]))
    assert reduce_plan.plan_reduce(one, (0,), kept, reduced, 132).splits > 1


def test_multiply_cuts_its_tree_where_its_nodes_fill_the_gpu() -> None:
    """MULTIPLY's cut: the first level of at most 2048 nodes a multiprocessor over every output and 2**16 an
    output; many outputs take each whole row in a thread (one node)."""
    assert reduce_plan.tree_sizes(7) == [7, 4, 2, 1] and reduce_plan.tree_sizes(1) == [1]
    for shape, axes, level, width in (((1 << 22,), (0,), 6, 65536), ((64, 100000), (1,), 5, 3125),
                                      ((100000, 64), (0,), 5, 3125), ((1 << 20, 3), (1,), 2, 1),
                                      ((8, 300), (1,), 0, 300)):
        x = TensorDesc(T.FLOAT32, list(shape))
        out = TensorDesc(T.FLOAT32, [1 if k in axes else n for k, n in enumerate(shape)])
        spec = spec_of("MULTIPLY", x, out, axes)
        kept, reduced = reduce_plan.layouts(spec, x, out)
        plan = reduce_plan.plan_for(spec, x, kept, reduced, 132)
        assert plan.tree and (plan.levels, plan.splits) == (level, width), (shape, plan)
        assert reduce_plan.scratch_words(plan, "product") == plan.outputs * width


def test_a_plan_whose_digits_could_overflow_is_refused_by_name() -> None:
    """Digits are never carried before the finish pass: an output's chunks must stay within
    reduce_plan.MOST_CHUNKS, and the 32-bit element counters must not wrap."""
    reduce_plan.check_plan("REDUCE", reduce_plan.ReducePlan("rows", 2112, 1 << 21, 1, (1 << 32) - 512))
    with pytest.raises(KernelUnsupportedError, match=r"^REDUCE: InputTensor.Sizes must give at most 33554432 "):
        reduce_plan.check_plan("REDUCE", reduce_plan.ReducePlan("columns", 1 << 26, 1, 1, 1 << 26))
    with pytest.raises(KernelUnsupportedError, match=r"fewer than 2\*\*32 - 256 reduced elements"):
        reduce_plan.check_plan("REDUCE", reduce_plan.ReducePlan("rows", 1, (1 << 32) - 1, 1, (1 << 32) - 1))


def test_the_rows_warps_test_short_chunks_unless_an_outputs_chunks_would_pass_the_bound() -> None:
    """The rows family's lanes add WARP_CHUNK elements before their warp's span test (a lane adding alone adds once a
    chunk); an output so long that its chunks of WARP_CHUNK could overflow the digits takes THREAD_CHUNK, so every
    length the digits' bound allowed before is still planned, and the scan's source says which."""
    short = reduce_plan.ReducePlan("rows", 1056, 1 << 18, 1, 1 << 28)
    longest = reduce_plan.ReducePlan("rows", 2112, 1 << 21, 1, (1 << 32) - 512)
    assert reduce_plan.warp_chunk(short) == reduce_plan.WARP_CHUNK < reduce_plan.THREAD_CHUNK
    assert reduce_plan.warp_chunk(longest) == reduce_plan.THREAD_CHUNK
    for plan in (short, longest):
        reduce_plan.check_plan("REDUCE", plan)
        assert f"n < {reduce_plan.warp_chunk(plan)}u && w < end" in reduce_c._warp_exact_scan(
            T.FLOAT32, T.FLOAT32, reduce_plan.warp_chunk(plan))


@pytest.mark.parametrize(("function", "t"), [("SUM", T.INT16), ("MULTIPLY", T.UINT8)])
def test_functions_not_lowered_are_refused_by_name(function: str, t: T) -> None:
    # a type REDUCE's support table refuses first: a record made by hand, as a fused graph could make one
    spec = KernelSpec("REDUCE", (t,), t, ex.Load(0, t), accumulation=Accumulation(function, (1,)))
    with pytest.raises(KernelUnsupportedError, match=rf"^REDUCE: Function must be SUM, AVERAGE, L1, SUM_SQUARE, L2, "
                                                     rf"LOG_SUM or LOG_SUM_EXP of FLOAT32 or FLOAT16, SUM or MULTIPLY "
                                                     rf"of FLOAT32, FLOAT16, INT32 or UINT32, MAX or MIN, .* on "
                                                     rf"backend 'cuda'; got {function} of {t.name}\.$"):
        reduce_plan.mode(spec)


def test_sums_of_squares_past_their_digits_bound_are_refused_by_name() -> None:
    """At most two additions an element enter a square's digits: outputs of 2**29 elements or more are refused."""
    fits = reduce_plan.ReducePlan("rows", 1, reduce_plan.MOST_SQUARES - 256, 1, reduce_plan.MOST_SQUARES - 256)
    reduce_plan.check_plan("REDUCE", fits, "squares")
    reduce_plan.check_plan("REDUCE", reduce_plan.ReducePlan("rows", 1, 1 << 29, 1, 1 << 29))  # a plain sum takes it
    with pytest.raises(KernelUnsupportedError, match=r"^REDUCE: InputTensor.Sizes must give at most 536870656 "
                                                     r"reduced elements an output for SUM_SQUARE and L2"):
        reduce_plan.check_plan("REDUCE", reduce_plan.ReducePlan("rows", 1, 1 << 29, 1, 1 << 29), "squares")


# --- on a GPU ----------------------------------------------------------------------------------------------

GPU_CASES = [
    ((16384, 1024), (1,)), ((1024, 16384), (0,)), ((1 << 22,), (0,)), ((64, 256, 33), (0, 2)), ((7, 1 << 18), (1,)),
]


@pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")
@pytest.mark.parametrize(("shape", "axes"), GPU_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_on_the_gpu_the_cpu_bits(shape: tuple[int, ...], axes: tuple[int, ...], dtype: type) -> None:
    """CuPy arrays through opendml.reduce give the CPU's bits, run twice (the words are left at zero) and in a
    wide span with specials here and there."""
    import cupy

    rng = np.random.default_rng(len(shape))
    top = 60 if dtype == np.float32 else 8
    x = (rng.standard_normal(shape) * np.exp2(rng.integers(-top, top, shape))).astype(dtype)
    flat = x.reshape(-1)
    flat[rng.choice(flat.size, 3, replace=False)] = [np.inf, -0.0, np.finfo(dtype).tiny]
    on_gpu = cupy.asarray(x)
    for function in FLOAT_FUNCTIONS + SQUARE_FUNCTIONS + LOG_FUNCTIONS:
        want = expected(x, function, axes)
        for _ in range(2):
            got = cupy.asnumpy(dml.reduce(on_gpu, function, list(axes)))
            assert same(got, want), (function, shape, axes)


@pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint32])
def test_on_the_gpu_products_give_the_cpu_bits(dtype: type) -> None:
    """MULTIPLY over rows, columns and one long row (its tree cut 6 levels up), run twice."""
    import cupy

    rng = np.random.default_rng(3)
    for shape, axes in (((64, 100000), (1,)), ((100000, 64), (0,)), ((1 << 22,), (0,))):
        rows = product_matrix(dtype, math.prod(shape) // 4, rng)[:4].reshape(shape)
        for _ in range(2):
            got = cupy.asnumpy(dml.reduce(cupy.asarray(rows), "MULTIPLY", list(axes)))
            assert same(got, expected(rows, "MULTIPLY", axes)), (dtype, shape, axes)


@pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")
def test_on_the_gpu_integers_and_the_issue_case() -> None:
    import cupy

    rng = np.random.default_rng(2)
    ints = rng.integers(-(1 << 31), (1 << 31) - 1, (300, 5000), dtype=np.int32)
    for function in ("SUM", "MAX", "MIN"):
        for axes in ((0,), (1,), (0, 1)):
            got = cupy.asnumpy(dml.reduce(cupy.asarray(ints), function, list(axes)))
            assert same(got, expected(ints, function, axes)), (function, axes)
    half = rng.standard_normal(1 << 19).astype(np.float32) * np.float32(1e4)
    x = np.concatenate([half, -half[::-1], np.array([1e-3], np.float32)])
    rng.shuffle(x)
    got = cupy.asnumpy(dml.reduce(cupy.asarray(x), "SUM", keepdims=False))
    assert got.tobytes() == np.float32(1e-3).tobytes()
