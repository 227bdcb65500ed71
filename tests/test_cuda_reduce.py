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
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendml as dml
from opendml import DataType as T
from opendml import TensorDesc
from opendml.backends.cuda import reduce_c, reduce_finish_c, reduce_plan
from opendml.errors import KernelUnsupportedError
from opendml.kernels.spec import KernelSpec
from tests.conftest import CUDA_MISSING
from tests.cuda_emulation import ReduceRun, run_reduce_batch_on_host
from tests.reduce_oracle import oracle_sum
from tests.test_cuda_lowering import compile_with_nvcc, needs_nvcc

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
FLOAT_FUNCTIONS = ("SUM", "AVERAGE", "L1", "MAX", "MIN")


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
    assert run.spec.accumulation is not None
    return reduce_plan.plan_reduce(run.x, run.spec.accumulation.axes, kept, reduced, run.sm_count)


def splits(run: ReduceRun, pieces: int) -> ReduceRun:
    """``run`` with its reductions cut into ``pieces`` (or as many as there are elements)."""
    plan = plan_of(run)
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
    """The exact sums by fractions (tests/reduce_oracle.py), shaped as the output; None for other functions."""
    if function not in ("SUM", "AVERAGE", "L1") or x.dtype.kind != "f":
        return None
    kept = [k for k in range(x.ndim) if k not in axes]
    rows = np.transpose(x, kept + list(axes)).reshape(-1, math.prod(x.shape[a] for a in axes))
    shape = tuple(1 if k in axes else n for k, n in enumerate(x.shape))
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


@needs_gxx
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_edge_rows_on_every_plan_give_the_cpu_bits_and_the_exact_sum(dtype: type, tmp_path: Path) -> None:
    """Rows (a block strides along each row: a row's elements spread over the threads, pieces merged through
    shared memory then global words) and columns (a thread walks its column's piece in chunks of 256, each
    checked for its span, re-read by bins where it fails); the plan of 1 and 132 multiprocessors, and a row cut
    into 2, 3 and 7 pieces (merged in any order): every result the same bits."""
    rng = np.random.default_rng(5)
    rows = edge_matrix(dtype, 700, rng)
    columns = np.ascontiguousarray(rows.T)
    runs = runs_of(rows, FLOAT_FUNCTIONS, (1,), (3, 7), (1, 132))
    runs += runs_of(columns, FLOAT_FUNCTIONS, (0,), (2, 7), (1, 132))
    arrays = [rows] * (len(runs) // 2) + [columns] * (len(runs) // 2)
    check(runs, arrays, tmp_path)


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
    cases.append((long.reshape(1, -1), (1,), ("SUM", "AVERAGE", "L1")))
    half = (rng.standard_normal(1 << 15) * 100).astype(np.float16)
    cases.append((half.reshape(1, -1), (1,), ("SUM", "L1", "MAX")))
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
        functions = ["MAX", "MIN"] + (["SUM", "AVERAGE", "L1"] if t in reduce_plan.FLOATS else [])
        functions += ["SUM"] if t in reduce_plan.WRAP_TYPES else []
        for function in functions:
            for shape, axes in (((8, 300), (1,)), ((300, 8), (0,)), ((3, 4, 5), (0, 2))):
                x = TensorDesc(t, list(shape))
                out = TensorDesc(t, [1 if k in axes else n for k, n in enumerate(shape)])
                spec = spec_of(function, x, out, axes)
                kept, reduced = reduce_plan.layouts(spec, x, out)
                plan = reduce_plan.plan_reduce(x, axes, kept, reduced, 132)
                sources += [reduce_c.scan_kernel(spec, plan, kept, reduced),
                            reduce_finish_c.finish_kernel(spec, plan, kept, t)]
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


def test_a_plan_whose_digits_could_overflow_is_refused_by_name() -> None:
    """Digits are never carried before the finish pass: an output's chunks must stay within
    reduce_plan.MOST_CHUNKS, and the 32-bit element counters must not wrap."""
    reduce_plan.check_plan("REDUCE", reduce_plan.ReducePlan("rows", 2112, 1 << 21, 1, (1 << 32) - 512))
    with pytest.raises(KernelUnsupportedError, match=r"^REDUCE: InputTensor.Sizes must give at most 33554432 "):
        reduce_plan.check_plan("REDUCE", reduce_plan.ReducePlan("columns", 1 << 26, 1, 1, 1 << 26))
    with pytest.raises(KernelUnsupportedError, match=r"fewer than 2\*\*32 - 256 reduced elements"):
        reduce_plan.check_plan("REDUCE", reduce_plan.ReducePlan("rows", 1, (1 << 32) - 1, 1, (1 << 32) - 1))


@pytest.mark.parametrize(("function", "t"), [("MULTIPLY", T.FLOAT32), ("LOG_SUM", T.FLOAT32),
                                             ("LOG_SUM_EXP", T.FLOAT16), ("SUM_SQUARE", T.FLOAT32),
                                             ("L2", T.FLOAT16), ("MULTIPLY", T.INT32)])
def test_functions_not_lowered_are_refused_by_name(function: str, t: T) -> None:
    x, out = TensorDesc(t, [2, 3]), TensorDesc(t, [2, 1])
    spec = spec_of(function, x, out, (1,))
    with pytest.raises(KernelUnsupportedError, match=rf"^REDUCE: Function must be SUM, AVERAGE or L1 .* on backend "
                                                     rf"'cuda'; got {function} of {t.name}\.$"):
        reduce_plan.mode(spec)


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
    for function in FLOAT_FUNCTIONS:
        want = expected(x, function, axes)
        for _ in range(2):
            got = cupy.asnumpy(dml.reduce(on_gpu, function, list(axes)))
            assert same(got, want), (function, shape, axes)


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
