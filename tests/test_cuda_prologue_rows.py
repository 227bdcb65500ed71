"""CUDA ARGMIN over rows of a computed value (a fused prologue): the min-and-ballot scan, several rows a warp
sharing the per-column operands, and the exact conversion of x - zero point. The kernels run on the host under
emulation (tests/cuda_emulation.py) against the reference kernels or NumPy; their sources compile with nvcc;
on a GPU, fused graphs give the bits of node-by-node execution."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import opendml as dml
from opendml import AxisDirection, TensorDesc
from opendml import DataType as T
from opendml import expr as ex
from opendml.backends.cuda import argmin_c, expr_c
from opendml.backends.cuda.codegen import OPTIONS
from opendml.backends.cuda.plan import PROLOGUE_ROWS_PER_WARP, ArgMinPlan
from opendml.enums import NanPolicy
from opendml.graphs import fusion
from opendml.graphs.validate import check_graph
from opendml.kernels.spec import KernelSpec, Reduction, ReductionKind
from tests.conftest import CUDA_MISSING
from tests.cuda_emulation import run_on_host
from tests.graph_helpers import output_desc, run_node_by_node
from tests.helpers import edge_values, packed_bytes
from tests.test_cuda_lowering import HOST_PRELUDE, NVCC, compile_with_nvcc, needs_nvcc
from tests.test_cuda_prologue import COLUMN, FULL, ROW, TENSOR, Case, broadcast, fused, plain_spec
from tests.test_graph_fusion import assert_fused_equals_unfused, using

needs_gpp = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
needs_cuda = pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")


def plan_of(spec: KernelSpec, descs: Sequence[TensorDesc | None], out: TensorDesc, sm_count: int = 132) -> ArgMinPlan:
    x = descs[0]
    assert x is not None
    kept, reduced = argmin_c.layouts(spec, descs, out)
    return argmin_c.plan(spec, x, kept, reduced, sm_count)


def kernel_source(spec: KernelSpec, descs: Sequence[TensorDesc | None], out: TensorDesc,
                  sm_count: int = 132) -> str:
    assert spec.reduction is not None
    kept, reduced = argmin_c.layouts(spec, descs, out)
    return argmin_c.argmin_kernel(spec, plan_of(spec, descs, out, sm_count), spec.reduction.direction, kept, reduced)


# --- x - zero point without I2F: exact for every pair --------------------------------------------------------

def difference(x: T, wide: T) -> ex.Expr:
    """DEQUANTIZE_LINEAR's x - zero point as its expression forms it: both widened, then subtracted."""
    return ex.ToFloat32(ex.Subtract(ex.Widen(ex.Load(0, x), wide), ex.Widen(ex.Load(1, x), wide)))


def test_the_difference_of_small_integers_converts_through_2_to_the_23() -> None:
    """Unsigned 8- and 16-bit sides by OR into 2**23, signed ones by adding to 2**23 + 2**22; a difference of
    32-bit values keeps cvt.rn; element-wise kernels keep cvt.rn everywhere."""
    for x, wide, form in [(T.UINT8, T.INT16, "0x4B000000 | "), (T.UINT16, T.INT32, "0x4B000000 | "),
                          (T.INT8, T.INT16, "0x4B400000 + "), (T.INT16, T.INT32, "0x4B400000 + ")]:
        function = expr_c.value_function("PROLOGUE", (x, x), difference(x, wide))
        assert f"add_rn(__int_as_float({form}(int)(t1)), -__int_as_float({form}(int)(t3)))" in function
        assert "small_i2f" not in function and "2f_rn" not in function
    wide = expr_c.value_function("PROLOGUE", (T.INT32, T.INT32), difference(T.INT32, T.INT64))
    assert "ll2f_rn(t4)" in wide and "0x4B" not in wide
    stored = ex.Store(difference(T.UINT8, T.INT16), T.FLOAT32)
    assert "0x4B" not in expr_c.apply_function("DQ", (T.UINT8, T.UINT8), stored)


@needs_gpp
def test_the_fast_difference_is_exact_for_every_8_bit_pair_and_16_bit_edges(tmp_path: Path) -> None:
    """The generated value() of x - zero point, run on the host: the bits of (float)(a - b) for all 65536
    UINT8 and all 65536 INT8 pairs, and for every 16-bit a against the 16-bit edges (+0.0 where a == b)."""
    cases = [(T.UINT8, T.INT16, range(256), range(256)), (T.INT8, T.INT16, range(-128, 128), range(-128, 128)),
             (T.UINT16, T.INT32, range(65536), (0, 1, 255, 32767, 32768, 65534, 65535)),
             (T.INT16, T.INT32, range(-32768, 32768), (-32768, -32767, -1, 0, 1, 32766, 32767))]
    parts, calls = ["#include <initializer_list>\n" + HOST_PRELUDE], []
    for n, (x, wide, a_values, b_values) in enumerate(cases):
        c_type = expr_c.C_TYPE[x]
        parts.append(f"namespace k{n} {{\n{expr_c.value_function('PROLOGUE', (x, x), difference(x, wide))}"
                     f"long run() {{ long bad = 0;\n"
                     f"  for (int a = {a_values[0]}; a <= {a_values[-1]}; ++a) {{\n"
                     f"    for (int b : {{{', '.join(map(str, b_values))}}}) {{\n"
                     f"      float got = value(({c_type})a, ({c_type})b), want = (float)(a - b);\n"
                     f"      if (memcmp(&got, &want, 4) != 0) ++bad; }} }}\n  return bad; }}\n}}\n")
        calls.append(f'printf("%ld\\n", k{n}::run());')
    source, program = tmp_path / "difference.cpp", tmp_path / "difference"
    source.write_text("".join(parts) + "int main() { " + " ".join(calls) + " return 0; }\n")
    built = subprocess.run(["g++", "-std=c++17", "-O1", "-ffp-contract=off", "-o", str(program), str(source)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-3000:]
    assert subprocess.run([str(program)], capture_output=True, text=True, check=True).stdout.split() == ["0"] * 4
    # The 8-bit pairs in range() above are every pair: 256 values each side.
    assert len(cases[0][2]) * len(cases[0][3]) == 65536 and len(cases[1][2]) * len(cases[1][3]) == 65536


def test_the_bit_trick_in_numpy_gives_each_difference() -> None:
    """The same trick in NumPy float32 for all UINT8 and INT8 pairs: K + a as bits, one rounded subtraction."""
    a, b = np.meshgrid(np.arange(256, dtype=np.uint32), np.arange(256, dtype=np.uint32))
    unsigned = (np.uint32(0x4B000000) | a).view(np.float32) - (np.uint32(0x4B000000) | b).view(np.float32)
    assert (unsigned.view(np.uint32) == (a.astype(np.int64) - b).astype(np.float32).view(np.uint32)).all()
    a, b = np.meshgrid(np.arange(-128, 128, dtype=np.int32), np.arange(-128, 128, dtype=np.int32))
    signed = (np.int32(0x4B400000) + a).view(np.float32) - (np.int32(0x4B400000) + b).view(np.float32)
    assert (signed.view(np.uint32) == (a - b).astype(np.float32).view(np.uint32)).all()


# --- plans: rows a warp takes ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("rows", "expected"), [(65536, 8), (17000, 8), (16000, 4), (6000, 2), (3000, 1)])
def test_a_warp_takes_up_to_8_rows_sharing_per_column_operands_while_the_gpu_stays_full(rows: int,
                                                                                         expected: int) -> None:
    """DQ per column -> CLIP -> ARGMIN last axis on 132 multiprocessors (4224 warps: row groups give at least
    half of them); 3000 rows fill the GPU by warps of one row each, without splitting."""
    spec, descs, out = fused(Case(T.UINT8, (rows, 4096), (1,)))
    plan = plan_of(spec, descs, out)
    assert (plan.family, plan.group, plan.vector, plan.splits, plan.rows) == ("rows", 32, 16, 1, expected)
    assert plan.items == -(-rows // expected)
    assert plan.scalar().rows == 1 and plan.scalar().vector == 1  # unaligned: the element-by-element scan
    assert expected <= PROLOGUE_ROWS_PER_WARP


@pytest.mark.parametrize(("scale", "zero_point"), [(ROW, COLUMN), (COLUMN, FULL), (TENSOR, TENSOR), (TENSOR, None)])
def test_rows_share_a_warp_only_when_every_operand_is_the_same_for_every_row(scale: str,
                                                                             zero_point: str | None) -> None:
    """An operand varying by row (its own words per row), or none varying along the row (nothing to share)."""
    spec, descs, out = fused(Case(T.UINT8, (65536, 4096), (1,), scale, zero_point))
    assert plan_of(spec, descs, out).rows == 1


def test_a_plain_argmin_keeps_a_row_a_warp() -> None:
    spec = plain_spec(T.UINT8, T.INT64, AxisDirection.INCREASING, (1,))
    assert plan_of(spec, [TensorDesc(T.UINT8, (65536, 64))], TensorDesc(T.INT64, (65536, 1))).rows == 1


# --- sources ---------------------------------------------------------------------------------------------------

def test_row_1_scans_8_rows_a_warp_with_one_min_per_load_and_a_ballot() -> None:
    """Each lane loads a position's 16 scales and 16 zero points once and x's words of 8 rows; each row's 16
    values reduce by vmin to one (value, position) candidate; the element comes from a ballot."""
    spec, descs, out = fused(Case(T.UINT8, (65536, 4096), (1,)))
    source = kernel_source(spec, descs, out)
    scan = source[source.index("unsigned int q = "):source.index("#pragma unroll")]
    assert scan.count("a1_0.w[3] = ") == 1 and scan.count("a2_0.w[0] = ") == 1  # 8 rows of one position
    assert "x7_0.w = *(const uint4*)(px + (ko7 + ro0) * 1ull);" in scan and "x8_0" not in scan
    assert "const ull ko7 = ko0 + 28672ull, oo7 = oo0 + 7ull;" in source  # rows 4096 bytes apart
    # CLIP is the value's monotone tail: applied once to the min of 16 inner values (x - zero point) * scale,
    # x taken by its 32-bit words and each byte's place (expr_c.BYTES).
    assert "outer(vmin(vmin(vmin(vmin(inner(x0_0.u[0], 0u, a1_0.e[0], a2_0.e[0]), " in scan
    assert scan.count("outer(") == 8 and scan.count("inner(") == 128 and "value(" not in scan
    assert "if (is_number(m) && (bq7 == 0xFFFFFFFFu || lt(m, bv7))) { bv7 = m; bq7 = q; }" in scan
    assert "scan_take" not in source and "0x4B000000 | " in source
    assert "const unsigned int mask = __ballot_sync(0xffffffffu, hit);" in source
    assert "bi = (ull)bq7 * 16ull + (ull)(__ffs(mask) - 1);" in source
    assert 'asm("min.f32 %0, %1, %2;"' in source  # a PTX min: no compiler setting flushes its denormals


def test_decreasing_takes_later_positions_and_the_last_set_bit() -> None:
    spec, descs, out = fused(Case(T.UINT8, (37, 3008), (1,), direction="DECREASING"))
    source = kernel_source(spec, descs, out)
    assert "|| !lt(bv0, m))) { bv0 = m; bq0 = q; }" in source and "(!lt(bv, v) && q > bq)" in source
    assert "(ull)(31 - __clz(mask))" in source


def test_integer_values_take_an_integer_min_and_no_nan_test() -> None:
    spec, descs, out = fused_clip(T.INT16, (64, 4096), -5, 7, "INCREASING", T.INT32)
    source = kernel_source(spec, descs, out)
    assert "__device__ __forceinline__ int vmin(int a, int b) { return a < b ? a : b; }" in source
    assert "if (true && (bq0 == 0xFFFFFFFFu || lt(m, bv0)))" in source and "min.f32" not in source


def test_the_vector_1_fallback_and_columns_keep_their_scans() -> None:
    spec, descs, out = fused(Case(T.UINT8, (37, 3001), (1,)))  # rows no 16-byte load divides
    assert "scan_take" in kernel_source(spec, descs, out) and "__ballot_sync" not in kernel_source(spec, descs, out)
    spec, descs, out = fused(Case(T.UINT8, (48, 65536), (0,)))
    assert "__ballot_sync" not in kernel_source(spec, descs, out)


def test_long_rows_merge_positions_across_a_block() -> None:
    spec, descs, out = fused(Case(T.INT8, (4096, 32000), (1,), TENSOR, TENSOR, clip=False))
    plan = plan_of(spec, descs, out)
    assert (plan.group, plan.rows) == (256, 1)
    source = kernel_source(spec, descs, out)
    assert "__shared__ unsigned int sq[8];" in source and "__ballot_sync" in source
    assert "q += 2048u" in source  # 8 positions in flight a thread, 256 threads apart


# --- the kernels run on the host, against the reference kernels --------------------------------------------------

def fused_clip(t: T, sizes: tuple[int, ...], low: int, high: int, direction: str,
               index: T) -> tuple[KernelSpec, list[TensorDesc | None], TensorDesc]:
    """CLIP [low, high] -> ARGMIN over the last axis: a prologue whose values are integers."""
    spec, descs, out, _ = clip_graph(t, sizes, low, high, direction, index)
    return spec, descs, out


def clip_graph(t: T, sizes: tuple[int, ...], low: int, high: int, direction: str, index: T
               ) -> tuple[KernelSpec, list[TensorDesc | None], TensorDesc, object]:
    cpu = dml.Device("cpu")

    def graph(device: dml.Device) -> dml.GraphDesc:
        x, out = TensorDesc(t, sizes), TensorDesc(index, [*sizes[:-1], 1])
        nodes = [dml.OperatorNode(device.create_operator(dml.ElementWiseClipDesc(x, x, low, high))),
                 dml.OperatorNode(device.create_operator(dml.ArgMinDesc(x, out, [len(sizes) - 1], direction)))]
        return dml.GraphDesc(1, 1, nodes, [dml.InputEdge(0, 0, 0)], [dml.OutputEdge(1, 0, 0)],
                             [dml.IntermediateEdge(0, 0, 1, 0)])

    (kernel,) = fusion.fuse(check_graph(cpu, graph(cpu)), prologues=True).values()
    return kernel.spec, [o.desc for o in kernel.operands], output_desc(graph(cpu), 0), graph


def on_host(spec: KernelSpec, descs: Sequence[TensorDesc | None], out: TensorDesc, inputs: Sequence[np.ndarray],
            folder: Path) -> tuple[np.ndarray, ArgMinPlan]:
    result, plan = run_on_host(spec, descs, out, inputs, folder, [0] * len(descs))
    # The OutputTensor's bytes (where the emulation returns every output's, a list, the first).
    return (result[0] if isinstance(result, list) else result), plan


def special_inputs(case: Case, kind: str, rng: np.random.Generator) -> list[np.ndarray]:
    """x and per-column (or other pattern) operands giving each row a special set of values:
    "ties" (edge values: CLIP makes many equal), "zeros" (-0.0 and +0.0 tied at the least value),
    "nan" (every value NaN), "one number" (NaN but for one column), "inf" (+inf and NaN only, without CLIP),
    "positive" (positive finite scales: denormals, the largest), "mostly positive" (a tenth of them not)."""
    if kind == "ties":
        return case.inputs(rng)
    count = TensorDesc(case.x, case.sizes, case.x_strides).total_tensor_size_in_bytes // case.x.size
    _, scales = broadcast(case.intermediate, case.sizes, case.scale)
    zero_points = broadcast(case.x, case.sizes, case.zero_point)[1] if case.zero_point is not None else 0
    low = case.x.integer_range[0]
    zero_point = (low + rng.integers(0, 3, zero_points)).astype(case.x.numpy)
    x = (low + rng.integers(0, 6, count)).astype(case.x.numpy)  # x - zero point in [-2, 5]: many equal
    dtype = case.intermediate.numpy
    if kind == "zeros":  # negatives clip to +0.0; x above the zero point times -0.0 gives -0.0
        scale = rng.choice(np.array([0.0, -0.0, -0.0, 0.5, -0.25], dtype), scales)
    elif kind == "nan":
        scale = np.full(scales, np.nan, dtype)
    elif kind == "one number":
        scale = np.full(scales, np.nan, dtype)
        scale[rng.integers(0, scales)] = 0.75
    elif kind in ("positive", "mostly positive"):  # the scan by stored integers (argmin_c.stored_order)
        finfo = np.finfo(dtype)
        scale = rng.choice(np.array([finfo.smallest_subnormal, finfo.tiny, 0.5, 0.75, finfo.max], dtype), scales)
        if kind == "mostly positive":  # a thread with one other scale takes the float step
            others = np.array([-0.5, 0.0, -0.0, np.nan, np.inf, -np.inf], dtype)
            picked = rng.random(scales) < 0.1
            scale[picked] = rng.choice(others, int(picked.sum()))
    else:
        assert kind == "inf" and not case.clip
        scale = np.full(scales, np.inf, dtype)
        x = np.maximum(x, zero_point.max() if zero_points else 0).astype(case.x.numpy)  # x == zero point: NaN
    arrays = [x, scale] + ([zero_point] if case.zero_point is not None else [])
    return [packed_bytes(a, -(-a.nbytes // 4) * 4) for a in arrays]


# (case, expected (group, splits > 1, rows) on a GPU of one multiprocessor, kinds of inputs)
KINDS = ["ties", "zeros", "nan", "one number"]
HOST_CASES = [
    ("8 rows, a last group of 3", Case(T.UINT8, (131, 64), (1,)), (32, False, 8), KINDS),
    ("8 rows, decreasing, FLOAT16", Case(T.UINT8, (128, 128), (1,), COLUMN, COLUMN, T.FLOAT16, True, "DECREASING",
                                         T.UINT32), (32, False, 8), KINDS),
    ("8 rows across kept dimensions", Case(T.INT8, (3, 44, 64), (2,), COLUMN, COLUMN, T.FLOAT32, True, "DECREASING",
                                           T.INT32, (4000, 80, 1)), (32, False, 8), ["ties", "zeros"]),
    ("4 rows, no zero point", Case(T.UINT16, (70, 64), (1,), COLUMN, None, T.FLOAT32, True, "INCREASING", T.UINT64),
     (32, False, 4), ["ties", "one number"]),
    ("+inf rows", Case(T.UINT8, (40, 64), (1,), COLUMN, TENSOR, T.FLOAT32, False), (32, False, 2), ["inf"]),
    ("+inf rows, decreasing", Case(T.UINT8, (40, 64), (1,), TENSOR, COLUMN, T.FLOAT32, False, "DECREASING"),
     (32, False, 2), ["inf"]),
    ("split pieces", Case(T.UINT8, (4, 8000), (1,), ROW, COLUMN, T.FLOAT32, True, "DECREASING", T.INT32),
     (32, True, 1), ["ties", "zeros", "nan"]),
    # Two pieces of 20000 a row: 4.9 loads a thread, past argmin_c.BALLOT_MIN_LOADS.
    ("split pieces by blocks", Case(T.UINT8, (8, 40000), (1,), COLUMN, TENSOR), (256, True, 1), ["zeros", "one number"]),
    ("block rows", Case(T.INT8, (16, 8208), (1,), FULL, ROW, T.FLOAT16, False, "DECREASING"), (256, False, 1),
     ["ties"]),
]


def test_split_pieces_of_few_loads_a_thread_keep_the_scan_of_one_take_an_element() -> None:
    """[4, 20000] by blocks: pieces of 4000 elements, one 16-byte load a thread, where the ballot's merge and
    recomputed load per piece cost more than they save (argmin_c.BALLOT_MIN_LOADS)."""
    spec, descs, out = fused(Case(T.UINT8, (4, 20000), (1,), COLUMN, TENSOR))
    kept, reduced = argmin_c.layouts(spec, descs, out)
    x = descs[0]
    assert x is not None
    plan = argmin_c.plan(spec, x, kept, reduced, 1)
    assert (plan.group, plan.splits > 1) == (256, True) and not argmin_c.uses_ballot(spec, plan)
    assert "scan_take" in argmin_c.argmin_kernel(spec, plan, AxisDirection.INCREASING, kept, reduced)


@needs_gpp
@pytest.mark.parametrize(("case", "path", "kinds"), [c[1:] for c in HOST_CASES], ids=[c[0] for c in HOST_CASES])
def test_the_ballot_scan_run_on_the_host_gives_the_reference_indices(case: Case, path: tuple[int, bool, int],
                                                                     kinds: list[str], tmp_path: Path) -> None:
    spec, _, _ = fused(case)
    for plan in special_runs_on_host(case, kinds, 7, tmp_path):
        assert argmin_c.uses_ballot(spec, plan) and (plan.group, plan.splits > 1, plan.rows) == path


def special_runs_on_host(case: Case, kinds: Sequence[str], seed: int, folder: Path) -> list[ArgMinPlan]:
    """The case's fused kernel run on the host over each kind of ``special_inputs``, its indices asserted
    equal to node-by-node execution on the CPU's NumPy device; the plan of each run."""
    spec, descs, out = fused(case)
    plans = []
    for kind in kinds:
        inputs = special_inputs(case, kind, np.random.default_rng(seed))
        with using("cpu-numpy") as cpu:
            want = run_node_by_node(cpu, case.graph(cpu), inputs, [np.zeros(out.total_tensor_size_in_bytes, np.uint8)])
        got, plan = on_host(spec, descs, out, inputs, folder)
        assert (got == want[0]).all(), f"{kind}: {plan}"
        plans.append(plan)
    return plans


# The column scan of a float prologue: one candidate per column per step of 8 rows, the row found by a rescan
# (argmin_c.groups_rows). Rows past the last whole step (61 = 7 steps + 5) take the one-row loop. Per-column
# scales that are positive and finite for all of a thread's columns take the step by stored integers.
STEPS = [*KINDS, "positive", "mostly positive"]
COLUMN_CASES = [
    ("steps and a tail", Case(T.UINT8, (61, 64), (0,)), STEPS),
    ("decreasing, FLOAT16", Case(T.UINT8, (61, 64), (0,), ROW, COLUMN, T.FLOAT16, True, "DECREASING", T.UINT32),
     KINDS),
    ("decreasing, FLOAT16, per column", Case(T.UINT8, (61, 64), (0,), COLUMN, COLUMN, T.FLOAT16, True,
                                             "DECREASING", T.UINT32), STEPS),
    ("split pieces", Case(T.UINT8, (1030, 32), (0,), COLUMN, ROW, T.FLOAT32, True, "DECREASING", T.INT32), KINDS),
    ("split pieces, per column", Case(T.INT8, (1030, 32), (0,), COLUMN, COLUMN, T.FLOAT32, True, "DECREASING",
                                      T.INT32), STEPS),
    ("ARGMAX", Case(T.INT8, (61, 32), (0,), COLUMN, COLUMN, kind="ARGMAX"), STEPS),
    ("ARGMAX, UINT8", Case(T.UINT8, (61, 32), (0,), COLUMN, TENSOR, kind="ARGMAX"), STEPS),
    ("PROPAGATE", Case(T.UINT8, (61, 64), (0,), COLUMN, COLUMN, nan_policy="PROPAGATE"), STEPS),
    ("PROPAGATE, ARGMAX, decreasing", Case(T.UINT8, (61, 64), (0,), ROW, COLUMN, T.FLOAT32, True, "DECREASING",
                                           kind="ARGMAX", nan_policy="PROPAGATE"), KINDS),
    ("no CLIP: no tail", Case(T.UINT8, (40, 64), (0,), COLUMN, TENSOR, T.FLOAT32, False), ["inf", "nan"]),
]


@needs_gpp
@pytest.mark.parametrize(("case", "kinds"), [c[1:] for c in COLUMN_CASES], ids=[c[0] for c in COLUMN_CASES])
def test_the_column_scan_by_steps_of_rows_run_on_the_host_gives_the_reference_indices(
        case: Case, kinds: list[str], tmp_path: Path) -> None:
    spec, _, _ = fused(case)
    for plan in special_runs_on_host(case, kinds, 5, tmp_path):
        assert plan.family == "columns" and argmin_c.groups_rows(spec, plan), plan


def test_the_column_scan_takes_one_candidate_per_step_and_rescans_its_rows() -> None:
    spec, descs, out = fused(Case(T.UINT8, (65536, 4096), (0,)))
    source = kernel_source(spec, descs, out)
    assert "{ const float m = outer(vmin(vmin(vmin(inner(u0.u[0], 0u, h1.e[0], h2.e[0]), " in source
    assert "if (is_number(m)) scan_take(bv[3], bi[3], m, r); }" in source and "float bv[4]; ull bi[4];" in source
    assert "for (ull k = bi[3]; k < last; ++k) {" in source and "if (eq(value(" in source
    assert "__launch_bounds__(256, 4) opendml_kernel" in source
    spec, descs, out = fused(Case(T.UINT8, (40, 64), (0,), kind="ARGMAX", direction="DECREASING"))
    source = kernel_source(spec, descs, out)
    assert "outer(vmax(vmax(vmax(" in source and "break;" not in source  # the last equal row of the step


@needs_gpp
@pytest.mark.parametrize(("t", "index", "direction"), [(T.INT8, T.INT64, "INCREASING"), (T.UINT16, T.UINT32, "DECREASING"),
                                                       (T.INT32, T.INT32, "INCREASING"), (T.UINT64, T.UINT64, "DECREASING"),
                                                       (T.INT64, T.INT64, "DECREASING")])
def test_integer_values_run_on_the_host_give_the_reference_indices(t: T, index: T, direction: str,
                                                                   tmp_path: Path) -> None:
    """CLIP [-5, 7] (or [0, 7] unsigned) of an integer tensor -> ARGMIN: ties at both bounds."""
    low = 0 if t.integer_range[0] == 0 else -5
    spec, descs, out, graph = clip_graph(t, (20, 64), low, 7, direction, index)
    x = edge_values(t, 20 * 64, np.random.default_rng(3))
    inputs = [packed_bytes(x, -(-x.nbytes // 4) * 4)]
    with using("cpu-numpy") as cpu:
        want = run_node_by_node(cpu, graph(cpu), inputs, [np.zeros(out.total_tensor_size_in_bytes, np.uint8)])
    got, plan = on_host(spec, descs, out, inputs, tmp_path)
    assert argmin_c.uses_ballot(spec, plan) and plan.vector == 16 // t.size
    assert (got == want[0]).all()


@needs_gpp
@pytest.mark.parametrize("direction", [AxisDirection.INCREASING, AxisDirection.DECREASING])
def test_integer_rows_sharing_a_warp_give_numpys_indices(direction: AxisDirection, tmp_path: Path) -> None:
    """x - zero point (UINT8, INT16 values) with a per-column zero point, 8 rows a warp, 131 rows: against
    NumPy's argmin (the first least value; the last, read from the reversed rows, for DECREASING)."""
    element = ex.Subtract(ex.Widen(ex.Load(0, T.UINT8), T.INT16), ex.Widen(ex.Load(1, T.UINT8), T.INT16))
    reduction = Reduction(ReductionKind.ARGMIN, (1,), direction, NanPolicy.IGNORE, T.INT64)
    spec = KernelSpec("ARGMIN", (T.UINT8, T.UINT8), T.INT64, element, (), reduction)
    descs: list[TensorDesc | None] = [TensorDesc(T.UINT8, (131, 64)), TensorDesc(T.UINT8, (131, 64), (0, 1))]
    out = TensorDesc(T.INT64, (131, 1))
    rng = np.random.default_rng(9)
    x, zero_point = rng.integers(0, 4, (131, 64)).astype(np.uint8), rng.integers(0, 3, 64).astype(np.uint8)
    got, plan = on_host(spec, descs, out, [x.reshape(-1), zero_point], tmp_path)
    assert plan.rows == 8
    values = x.astype(np.int16) - zero_point.astype(np.int16)
    if direction is AxisDirection.INCREASING:
        want = np.argmin(values, axis=1)
    else:
        want = 63 - np.argmin(values[:, ::-1], axis=1)
    assert (got.view(np.int64) == want).all()


@needs_nvcc
def test_every_ballot_kernel_compiles(tmp_path: Path) -> None:
    # The host cases' plans are those of one multiprocessor, as the emulation runs them; row 1's an H100's.
    specs = [fused(case) for _, case, _, _ in HOST_CASES]
    specs += [fused_clip(t, (64, 4096), 0, 7, "DECREASING", T.UINT64) for t in (T.UINT8, T.INT32, T.INT64, T.UINT64)]
    sources = [kernel_source(*spec, sm_count=1) for spec in specs]
    sources.append(kernel_source(*fused(Case(T.UINT8, (65536, 4096), (1,)))))
    assert all("__ballot_sync" in source for source in sources)
    ptx = compile_with_nvcc(sources, tmp_path)
    assert ptx.count(".entry opendml_kernel_") == len(sources)
    row_1 = tmp_path / "row_1.cu"  # alone, as the backend compiles it: no warning (an unread temporary)
    row_1.write_text(sources[len(HOST_CASES)])
    built = subprocess.run([NVCC, "-ptx", "-arch=sm_80", *OPTIONS, str(row_1), "-o", str(tmp_path / "row_1.ptx")],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0 and "warning" not in built.stderr, built.stderr[-3000:]


# --- on a GPU: fused == unfused == node by node ------------------------------------------------------------------

GPU_CASES = [
    ("8 rows", Case(T.UINT8, (20000, 1024), (1,))),
    ("8 rows, a last group of 3", Case(T.UINT8, (20003, 1024), (1,), COLUMN, COLUMN, T.FLOAT16, True, "DECREASING",
                                       T.UINT32)),
    ("2 rows", Case(T.INT8, (5000, 512), (1,), COLUMN, None, T.FLOAT32, True, "DECREASING", T.INT32)),
    ("8 rows across kept dimensions", Case(T.UINT8, (5, 4001, 256), (2,), x_strides=(4001 * 272, 272, 1))),
    ("block rows", Case(T.INT8, (4096, 32000), (1,), TENSOR, TENSOR, T.FLOAT32, False)),
]


@needs_cuda
@pytest.mark.parametrize("case", [c for _, c in GPU_CASES], ids=[i for i, _ in GPU_CASES])
@pytest.mark.parametrize("kind", ["ties", "zeros", "nan", "one number"])
def test_the_ballot_scan_on_cuda_equals_unfused_and_the_reference(case: Case, kind: str) -> None:
    spec, plan, _ = on_cuda(case, kind, 11)
    assert argmin_c.uses_ballot(spec, plan)


def on_cuda(case: Case, kind: str, seed: int) -> tuple[KernelSpec, ArgMinPlan, str]:
    """The case's graph on CUDA over ``kind`` inputs, asserted fused == unfused, and node by node == node by
    node on the CPU's NumPy device; the fused kernel's spec, plan and scan source."""
    inputs = special_inputs(case, kind, np.random.default_rng(seed))
    with using("cuda") as device:
        assert_fused_equals_unfused(device, case.graph(device), inputs)
        out = np.zeros(output_desc(case.graph(device), 0).total_tensor_size_in_bytes, np.uint8)
        gpu = run_node_by_node(device, case.graph(device), inputs, [out])
        spec, descs, out_desc = fused(case)
        plan = device.backend.compile_spec(device, spec, descs, out_desc).plan
    with using("cpu-numpy") as cpu:
        host = run_node_by_node(cpu, case.graph(cpu), inputs, [out])
    assert (gpu[0] == host[0]).all()
    assert spec.reduction is not None
    kept, reduced = argmin_c.layouts(spec, descs, out_desc)
    return spec, plan, argmin_c.argmin_kernel(spec, plan, spec.reduction.direction, kept, reduced)


@needs_nvcc
def test_a_column_step_of_two_bytes_a_row_passes_each_byte_alone(tmp_path: Path) -> None:
    """A union of fewer than 4 bytes holds no whole word: ``inner`` then takes each element as its word's byte
    0, and the kernel still compiles (no plan makes such a step today; this keeps the fallback honest)."""
    spec, descs, out = fused(Case(T.UINT8, (64, 64), (0,)))
    kept, reduced = argmin_c.layouts(spec, descs, out)
    plan = dataclasses.replace(plan_of(spec, descs, out), vector=2)
    assert argmin_c.groups_rows(spec, plan) and argmin_c.packed(spec) == {0}
    source = argmin_c.argmin_kernel(spec, plan, AxisDirection.INCREASING, kept, reduced)
    assert "inner((unsigned int)u0.e[1], 0u, " in source and ".u[" not in source
    compile_with_nvcc([source], tmp_path)


# Column scans by stored integers on a GPU (the VIMNMX lanes): large enough to split the reduction into
# pieces, INT8 and UINT8, ARGMIN and ARGMAX, both directions, scales all positive and a tenth not.
COLUMN_GPU_CASES = [
    ("UINT8", Case(T.UINT8, (20000, 1024), (0,))),
    ("INT8, ARGMAX, decreasing", Case(T.INT8, (9001, 512), (0,), COLUMN, COLUMN, T.FLOAT32, True, "DECREASING",
                                      T.INT32, kind="ARGMAX")),
    ("UINT8, FLOAT16, no zero point", Case(T.UINT8, (3000, 2048), (0,), COLUMN, None, T.FLOAT16, True)),
]


@needs_cuda
@pytest.mark.parametrize("case", [c for _, c in COLUMN_GPU_CASES], ids=[i for i, _ in COLUMN_GPU_CASES])
@pytest.mark.parametrize("kind", ["positive", "mostly positive", "ties"])
def test_the_column_scan_by_stored_integers_on_cuda_equals_node_by_node_on_the_cpu(case: Case, kind: str) -> None:
    _, plan, source = on_cuda(case, kind, 13)
    assert plan.family == "columns" and "by_integers" in source


@needs_gpp
def test_a_column_step_of_two_words_a_row_takes_each_words_lanes(monkeypatch, tmp_path: Path) -> None:
    """Plans load 4 bytes a row for these scans today; a plan of 8 (two words, ``rl0``/``rl1``) takes the
    same candidates by stored integers: run on the host against node-by-node execution on the CPU."""
    real = argmin_c.plan

    def eight(*args: object) -> ArgMinPlan:
        found = real(*args)  # type: ignore[arg-type]
        return dataclasses.replace(found, vector=8)

    monkeypatch.setattr(argmin_c, "plan", eight)
    case = Case(T.INT8, (61, 64), (0,), COLUMN, COLUMN, T.FLOAT32, True, "DECREASING", T.INT32)
    spec, descs, out = fused(case)
    plan = plan_of(spec, descs, out)
    assert plan.vector == 8 and "rl1 = __vmins2(rl1, " in kernel_source(spec, descs, out)
    special_runs_on_host(case, ["positive", "mostly positive", "ties"], 3, tmp_path)
