"""ARGMIN with an element-wise prologue on CUDA: every plan's kernel renders and compiles for prologue
specs (several operands, broadcast ones through zero strides), the plain ARGMIN sources stay as they were,
the kernels run on the host under emulation give the reference indices, and on a GPU fused graphs give the
bits of unfused and node-by-node execution on every plan path."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pytest

import opendml as dml
from opendml import AxisDirection, TensorDesc
from opendml import DataType as T
from opendml import expr as ex
from opendml.backends.cuda import argmin_c, expr_c
from opendml.backends.cuda.plan import plan_argmin
from opendml.enums import NanPolicy
from opendml.graphs import fusion
from opendml.graphs.validate import check_graph
from opendml.kernels.numpy_lowering import evaluate
from opendml.kernels.spec import KernelSpec, Reduction, ReductionKind
from tests.conftest import CUDA_MISSING
from tests.cuda_emulation import run_host_program, run_on_host
from tests.cuda_lowering_cases import admitted_types
from tests.graph_helpers import output_desc, run_node_by_node
from tests.helpers import edge_values, packed_bytes, same_values
from tests.test_cuda_lowering import HOST_PRELUDE, _bits, argmin_sources, compile_with_nvcc, needs_nvcc
from tests.test_graph_fusion import assert_fused_equals_unfused, using

CPU = dml.Device("cpu")

INDEX_TYPES = [T.UINT32, T.INT32, T.UINT64, T.INT64]
DIRECTIONS = [AxisDirection.INCREASING, AxisDirection.DECREASING]

# (sizes, input strides or None for packed, reduced axes): one of each plan path as on a 132-SM GPU.
PLAIN_LAYOUTS: list[tuple[list[int], list[int] | None, tuple[int, ...]]] = [
    ([3, 5, 8], None, (0, 1, 2)),  # all axes: one short row
    ([4096, 64], None, (1,)),  # short rows: a warp each
    ([37, 3008], None, (1,)),  # long rows: a block each
    ([64, 256000], None, (1,)),  # few long rows: split, then the combine pass
    ([37, 3001], None, (1,)),  # rows no 16-byte load divides
    ([4096, 64], None, (0,)),  # columns, split
    ([48, 65536], None, (0,)),  # columns, one piece each
    ([512, 64, 256], None, (0, 2)),  # non-adjacent reduced axes
    ([8, 100, 48], None, (0, 1)),  # columns over two reduced axes
    ([2**20], None, (0,)),  # one dimension, split
    ([6, 40, 48], [4000, 1, 80], (1,)),  # a transposed input: reduced elements are contiguous
    ([16, 3000], [0, 1], (0,)),  # a broadcast input
]


def plain_spec(t: T, index: T, direction: AxisDirection, axes: tuple[int, ...]) -> KernelSpec:
    """ARGMIN's own KernelSpec: the values compared are the elements themselves."""
    reduction = Reduction(ReductionKind.ARGMIN, axes, direction, NanPolicy.IGNORE, index)
    return KernelSpec("ARGMIN", (t,), index, ex.Load(0, t), (), reduction)


def plain_argmin_sources() -> list[str]:
    """Every plan's sources of ARGMIN over each admitted type, index type, direction and layout."""
    sources = []
    for sizes, strides, axes in PLAIN_LAYOUTS:
        for t in admitted_types("ARGMIN"):
            x = TensorDesc(t, sizes, strides)
            for index in INDEX_TYPES:
                out = TensorDesc(index, [1 if k in axes else n for k, n in enumerate(sizes)])
                for direction in DIRECTIONS:
                    sources += argmin_sources(plain_spec(t, index, direction, axes), [x], out)
    return sources


def digest(sources: list[str]) -> str:
    return hashlib.sha256("\n".join(sources).encode()).hexdigest()


def test_plain_argmin_sources_are_unchanged() -> None:
    """A plain ARGMIN renders byte for byte the sources it rendered before prologues were lowered (whose PTX
    was measured): a prologue must cost nothing where there is none. A change of plan (the pieces a column
    reduction is cut into: COLUMN_THREADS_PER_SM, ROW_BLOCKS_PER_SM) changes the sources it renders, and this digest with it;
    last: split rows merged by their scan's last warp (no combine pass), pieces of ROW_PIECE_LOADS loads a
    thread, a scan's last positions one guarded step, a candidate per element of a 16-byte load where the
    row blocks are few (tests/test_cuda_decode.py), pieces merged over their blocks past merge.WARP_PARTIALS_MOST
    warps' results an output."""
    x, out = TensorDesc(T.FLOAT16, [4, 6]), TensorDesc(T.UINT32, [1, 6])
    operator = CPU.create_operator(dml.ArgMinDesc(x, out, [0], "DECREASING"))
    assert operator.kernel_spec == plain_spec(T.FLOAT16, T.UINT32, AxisDirection.DECREASING, (0,))
    sources = plain_argmin_sources()
    assert len(sources) == 2112
    assert digest(sources) == "376190f7f4c0251c136f3be0fb64e4b3fc58dacfacb5c949f81c93d46505206a"




# --- prologue specs: DEQUANTIZE_LINEAR (-> CLIP [0, 6]) -> ARGMIN, fused as the compiler fuses them ---------

# Which dimensions a scale or zero point varies along (the others read through zero strides).
TENSOR, ROW, COLUMN, FULL = "tensor", "row", "column", "full"
PATTERNS = [TENSOR, ROW, COLUMN, FULL]


def varying(pattern: str, rank: int) -> list[bool]:
    return {TENSOR: [False] * rank, ROW: [True] + [False] * (rank - 1),
            COLUMN: [False] * (rank - 1) + [True], FULL: [True] * rank}[pattern]


def broadcast(data_type: T, sizes: Sequence[int], pattern: str) -> tuple[TensorDesc, int]:
    """A description of ``sizes`` over a compact tensor, zero strides where ``pattern`` does not vary, and
    the compact tensor's element count."""
    kept = varying(pattern, len(sizes))
    strides, step = [0] * len(sizes), 1
    for d in range(len(sizes) - 1, -1, -1):
        strides[d] = step if kept[d] else 0
        step *= sizes[d] if kept[d] else 1
    return TensorDesc(data_type, sizes, strides), step


@dataclass(frozen=True)
class Case:
    """One prologue graph: InputTensor type, sizes, reduced axes, scale and zero point patterns (None: no
    zero point), the intermediate type, whether CLIP [0, 6] follows, direction and index type; the reduction
    (ARGMIN or ARGMAX) and its NanPolicy."""

    x: T
    sizes: tuple[int, ...]
    axes: tuple[int, ...]
    scale: str = COLUMN
    zero_point: str | None = COLUMN
    intermediate: T = T.FLOAT32
    clip: bool = True
    direction: str = "INCREASING"
    index: T = T.INT64
    x_strides: tuple[int, ...] | None = None  # None: packed
    kind: str = "ARGMIN"
    nan_policy: str = "IGNORE"

    def graph(self, device: dml.Device) -> dml.GraphDesc:
        x, f = TensorDesc(self.x, self.sizes, self.x_strides), TensorDesc(self.intermediate, self.sizes)
        scale, _ = broadcast(self.intermediate, self.sizes, self.scale)
        zero_point = None if self.zero_point is None else broadcast(self.x, self.sizes, self.zero_point)[0]
        out = TensorDesc(self.index, [1 if d in self.axes else n for d, n in enumerate(self.sizes)])
        descs: list[object] = [dml.ElementWiseDequantizeLinearDesc(x, scale, zero_point, f)]
        if self.clip:
            descs.append(dml.ElementWiseClipDesc(f, f, 0.0, 6.0))
        reduction = dml.ArgMaxDesc if self.kind == "ARGMAX" else dml.ArgMinDesc
        descs.append(reduction(f, out, list(self.axes), self.direction, self.nan_policy))
        nodes = [dml.OperatorNode(device.create_operator(d)) for d in descs]
        inputs = 2 if zero_point is None else 3
        return dml.GraphDesc(inputs, 1, nodes, [dml.InputEdge(k, 0, k) for k in range(inputs)],
                             [dml.OutputEdge(len(nodes) - 1, 0, 0)],
                             [dml.IntermediateEdge(k, 0, k + 1, 0) for k in range(len(nodes) - 1)])

    def inputs(self, rng: np.random.Generator, spread: bool = False) -> list[np.ndarray]:
        """Edge values (many ties) for x, scales with NaN, -0.0, 0, negative and huge values; or, ``spread``,
        values that CLIP leaves mostly apart (x above a zero point near the type's least, small positive
        scales), so that each output's index lands anywhere in its reduction, not at its first elements."""
        count = TensorDesc(self.x, self.sizes, self.x_strides).total_tensor_size_in_bytes // self.x.size
        _, scales = broadcast(self.intermediate, self.sizes, self.scale)
        zero_points = broadcast(self.x, self.sizes, self.zero_point)[1] if self.zero_point is not None else 0
        low, high = self.x.integer_range
        if spread:
            x = rng.integers(low + 3, high, count, endpoint=True).astype(self.x.numpy)  # x - zero point > 0
            scale = (rng.uniform(0.1, 1.0, scales) * 5.0 / (high - low)).astype(self.intermediate.numpy)
            zero_point = (low + rng.integers(0, 3, zero_points)).astype(self.x.numpy)
        else:
            x = edge_values(self.x, count, rng)
            scale = edge_values(self.intermediate, scales, rng)
            special = np.array([0.0, -0.0, np.nan, -1.5, 1e-3, 3.3, -0.1, 7.77], self.intermediate.numpy)
            scale[: min(scales, 8)] = special[: min(scales, 8)]
            if scales > 8:
                scale[8:] = np.where(rng.random(scales - 8) < 0.5, np.abs(scale[8:]), scale[8:])
            zero_point = edge_values(self.x, zero_points, rng)
        arrays = [x, scale] + ([zero_point] if self.zero_point is not None else [])
        return [packed_bytes(a, -(-a.nbytes // 4) * 4) for a in arrays]


def fused(case: Case) -> tuple[KernelSpec, list[TensorDesc | None], TensorDesc]:
    """The graph's one fused kernel, as a backend lowering reduction prologues compiles it."""
    graph = case.graph(CPU)
    kernels = fusion.fuse(check_graph(CPU, graph), prologues=True)
    (kernel,) = kernels.values()
    assert len(kernel.nodes) == len(graph.nodes) and kernel.spec.reduction is not None
    return kernel.spec, [operand.desc for operand in kernel.operands], output_desc(graph, 0)


def prologue_sources(case: Case) -> list[str]:
    spec, inputs, out = fused(case)
    return argmin_sources(spec, inputs, out)


# (sizes, axes, the plan path as on a 132-SM GPU)
PATHS = [
    ((4096, 64), (1,), "short rows"),
    ((37, 3008), (1,), "long rows"),
    ((64, 256000), (1,), "split rows"),
    ((37, 3001), (1,), "rows, no 16-byte load"),
    ((4096, 64), (0,), "columns, split"),
    ((48, 65536), (0,), "columns"),
    ((96, 24, 160), (0, 2), "non-adjacent axes"),
    ((8, 100, 48), (0, 1), "columns over two axes"),
    ((3, 5, 8), (0, 1, 2), "all axes"),
]
INDEXES = [T.INT64, T.INT32, T.UINT64, T.UINT32]


def path_cases() -> list[tuple[str, Case]]:
    """Every path x scale pattern x intermediate (FLOAT32 with CLIP, FLOAT16 with or without), direction,
    index type and InputTensor type rotating through the cases."""
    cases = []
    n = 0
    for sizes, axes, name in PATHS:
        for pattern in PATTERNS:
            for intermediate, clip in [(T.FLOAT32, True), (T.FLOAT16, n % 2 == 0)]:
                zero_point = [COLUMN, None, ROW, FULL, TENSOR][n % 5]
                case = Case([T.UINT8, T.INT8, T.UINT16, T.INT8][n % 4], sizes, axes, pattern, zero_point,
                            intermediate, clip, ["INCREASING", "DECREASING"][n // 2 % 2], INDEXES[n % 4])
                cases.append((f"{name}-{pattern}-{intermediate.name}-{n}", case))
                n += 1
    return cases


CASES = path_cases() + [
    ("padded rows", Case(T.UINT8, (300, 4096), (1,), COLUMN, COLUMN, x_strides=(4112, 1))),
    ("transposed", Case(T.UINT8, (4096, 300), (0,), COLUMN, ROW, T.FLOAT16, x_strides=(1, 4096))),
    ("broadcast input", Case(T.UINT8, (64, 4096), (0,), FULL, None, x_strides=(0, 1))),
]


@pytest.mark.parametrize("case", [c for _, c in CASES], ids=[i for i, _ in CASES])
def test_every_plan_path_renders_a_prologue_over_each_operand(case: Case) -> None:
    spec, inputs, out = fused(case)
    sources = argmin_sources(spec, inputs, out)
    slots = [k for k, t in enumerate(spec.inputs) if t is not None]
    assert len(slots) == (3 if case.zero_point is not None else 2)
    for source in sources:
        assert source.count("{") == source.count("}")
        if "value(" not in source:
            continue  # the combine pass
        partials = "ull pout, ull pv, ull pi" + (", ull pc" if "atomicAdd" in source else "")  # argmin_c.one_pass
        pointers = ", ".join(["ull px", *(f"ull p{k}" for k in slots[1:]), partials])
        assert f"opendml_kernel({pointers}, float q0" in source or f"opendml_kernel({pointers})" in source
        parameters = ", ".join(f"{expr_c.C_TYPE[spec.inputs[k]]} a{k}" for k in slots)  # type: ignore[index]
        assert f"float value({parameters}" in source
        if case.intermediate is T.FLOAT16:  # the FLOAT16 intermediate is compared as half, read back
            assert "h2f(f2h(" in source


def scan_of(source: str) -> str:
    """The scan loops of an ARGMIN kernel's source (from the first position to the group merge)."""
    starts = ("ull q = begin", "ull r = begin", "unsigned int q = (unsigned int)(begin")  # the last: rows, ballot
    start = min(source.index(s) for s in starts if s in source)
    return source[start:]


@pytest.mark.parametrize("pattern", [TENSOR, ROW])
def test_an_operand_constant_along_the_reduction_is_loaded_once_per_output(pattern: str) -> None:
    """A per-tensor or per-row scale of a last-axis reduction: one load before the scan, none in it."""
    (source, *_) = prologue_sources(Case(T.UINT8, (37, 3008), (1,), pattern, pattern))
    assert "const float h1 = ((const float*)p1)[kk1];" in source
    assert "const unsigned char h2 = ((const unsigned char*)p2)[kk2];" in source
    assert "p1" not in scan_of(source) and "p2" not in scan_of(source)


def test_a_per_column_operand_of_a_row_reduction_is_loaded_by_words_beside_the_input() -> None:
    """16 UINT8 per 16-byte load of x; the 16 FLOAT32 scales of the same elements in four 16-byte words,
    the 16 zero points in one; a thread holding three such loads unrolls less (two positions, not eight)."""
    plain, scalar, *_ = prologue_sources(Case(T.UINT8, (37, 3008), (1,)))
    scan = scan_of(plain)
    assert "x0_0.w = *(const uint4*)(px + (ko0 + ro0) * 1ull);" in scan
    assert "a1_0.w[3] = ((const uint4*)(p1 + (kk1 + rk1_0) * 4ull))[3];" in scan
    assert "a2_0.w[0] = ((const uint4*)(p2 + (kk2 + rk2_0) * 1ull))[0];" in scan
    assert "inner(x0_0.u[3], 3u, a1_0.e[15], a2_0.e[15])" in scan  # x by its 32-bit words (expr_c.BYTES)
    assert "x0_1.w" in scan and "x0_2.w" not in scan  # 96 bytes a position: two in flight
    assert "q + 32u < stop" in scan  # a warp per row (a prologue's plan)
    assert "uint4" not in scan_of(scalar)  # the kernel for unaligned addresses loads element by element


def test_a_per_column_operand_of_a_column_reduction_is_loaded_once_per_output_group() -> None:
    """ARGMIN over the first axis: a thread's 4 neighbouring outputs (plan.PROLOGUE_COLUMN_ELEMENTS) share
    their 4 scales and zero points, loaded once."""
    columns, *_ = prologue_sources(Case(T.UINT8, (48, 65536), (0,)))
    before = columns[:columns.index("const ull begin")]
    assert "h1.w[0] = ((const uint4*)(p1 + (kk1) * 4ull))[0];" in before
    assert "h2.w[0] = ((const unsigned int*)(p2 + (kk2) * 1ull))[0];" in before
    assert "inner(u7.u[0], 3u, h1.e[3], h2.e[3])" in scan_of(columns)
    assert "p1" not in scan_of(columns)


def test_an_operand_that_no_16_byte_word_fits_is_loaded_element_by_element() -> None:
    """A zero point varying along the row but read with stride 2 (every other element of its buffer)."""
    sizes = (64, 2048)
    spec, inputs, out = fused(Case(T.UINT8, sizes, (1,), TENSOR, FULL))
    inputs[2] = TensorDesc(T.UINT8, sizes, [4096, 2])
    plan_source = argmin_sources(spec, inputs, out)[0]
    assert "const unsigned char a2_0_15 = ((const unsigned char*)p2)[kk2 + rk2_0 + 30ull];" in plan_source


def test_operand_alignments_follow_their_loads() -> None:
    spec, inputs, out = fused(Case(T.UINT8, (37, 3008), (1,), COLUMN, COLUMN))
    kept, reduced = argmin_c.layouts(spec, inputs, out)
    plan = plan_argmin(inputs[0].sizes, inputs[0].effective_strides, (1,), kept, reduced, 132, 1)  # type: ignore[union-attr]
    assert plan.vector == 16
    assert argmin_c.alignments(spec, plan, kept, reduced) == [(0, 16), (1, 16), (2, 16)]
    assert argmin_c.alignments(spec, plan.scalar(), kept, reduced) == []
    spec, inputs, out = fused(Case(T.UINT16, (37, 3008), (1,), TENSOR, COLUMN))  # 8 UINT16 zero points: 16 bytes
    kept, reduced = argmin_c.layouts(spec, inputs, out)
    plan = plan_argmin(inputs[0].sizes, inputs[0].effective_strides, (1,), kept, reduced, 132, 2)  # type: ignore[union-attr]
    assert argmin_c.alignments(spec, plan, kept, reduced) == [(0, 16), (2, 16)]


def test_operands_merge_dimensions_only_where_every_operand_allows() -> None:
    """x is packed [8, 4, 16] (one reduced run of 64), but a per-column scale breaks the merge."""
    spec, inputs, out = fused(Case(T.UINT8, (8, 4, 16), (1, 2), TENSOR, None))
    assert argmin_c.layouts(spec, inputs, out)[1].sizes == (64,)
    spec, inputs, out = fused(Case(T.UINT8, (8, 4, 16), (1, 2), COLUMN, None))
    kept, reduced = argmin_c.layouts(spec, inputs, out)
    assert reduced.sizes == (4, 16) and reduced.strides == ((16, 1), (0, 1))
    assert kept.sizes == (8,) and kept.strides == ((64,), (1,), (0,))


def test_a_reduction_compares_a_stored_value_as_its_type_holds_it() -> None:
    """A FLOAT16 intermediate: Store(v, FLOAT16) as the value, rounded to half and read back as float."""
    element = ex.Store(ex.Multiply(ex.ToFloat32(ex.Load(0, T.INT8)), ex.Load(1, T.FLOAT32)), T.FLOAT16)
    function = expr_c.value_function("PROLOGUE", (T.INT8, T.FLOAT32), element)
    assert function.startswith(expr_c.SMALL_TO_FLOAT)  # an INT8 converts without I2F (exact, tested below)
    assert "__device__ __forceinline__ float value(signed char a0, float a1)" in function
    assert "const float t4 = h2f(f2h(t3));" in function and "return t4;" in function


def test_only_integers_below_2_to_the_22_convert_without_i2f() -> None:
    """INT16 differences (DQ of 8-bit inputs) and UINT16 values take small_i2f; INT32 and wider keep cvt.rn."""
    for source, small in [(T.INT16, True), (T.UINT16, True), (T.INT8, True), (T.INT32, False), (T.UINT32, False)]:
        element = ex.Multiply(ex.ToFloat32(ex.Load(0, source)), ex.Load(1, T.FLOAT32))
        function = expr_c.value_function("PROLOGUE", (source, T.FLOAT32), element)
        assert ("small_i2f(t0)" in function) is small and ("2f_rn(t0)" in function) is not small


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_small_i2f_is_exact_for_every_integer_below_2_to_the_22(tmp_path) -> None:
    """small_i2f(d) has the bits of (float)d for every d with |d| < 2**22 (-0.0 never appears)."""
    source, program = tmp_path / "small.cpp", tmp_path / "small"
    source.write_text(HOST_PRELUDE + expr_c.SMALL_TO_FLOAT + r"""
int main() {
    long bad = 0;
    for (int d = -(1 << 22) + 1; d < (1 << 22); ++d) {
        float got = small_i2f(d), want = (float)d;
        if (memcmp(&got, &want, 4) != 0) ++bad;
    }
    printf("%ld\n", bad); return 0;
}
""")
    built = subprocess.run(["g++", "-O1", "-ffp-contract=off", "-o", str(program), str(source)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-3000:]
    assert subprocess.run([str(program)], capture_output=True, text=True, check=True).stdout.split() == ["0"]


@pytest.mark.slow  # 14 s of nvcc where it is installed; the host runs compile and run the same sources with g++
@needs_nvcc
def test_every_prologue_kernel_compiles(tmp_path) -> None:
    sources = [source for _, case in CASES for source in prologue_sources(case)]
    ptx = compile_with_nvcc(sources, tmp_path)
    assert ptx.count(".entry opendml_kernel_") == len(sources)


# --- value() run on the host, against the NumPy lowering of the same element ---------------------------------

HOST_ELEMENTS = 64


def value_program(specs: Sequence[KernelSpec], operands: Sequence[Sequence[np.ndarray]]) -> str:
    """Each spec's ``value`` called on its operands' elements; every result printed as float32 bits."""
    parts = [HOST_PRELUDE]
    for n, (spec, arrays) in enumerate(zip(specs, operands)):
        scalars = expr_c.launch_scalars(spec.element, spec.scalars)
        lines = [f"namespace k{n} {{", expr_c.value_function(spec.operator, spec.inputs, spec.element)]
        lines += [f"static const ull r{k}[] = {{{', '.join(f'{b}ull' for b in _bits(a))}}};" for k, a in enumerate(arrays)]
        arguments = [f"from_bits<{expr_c.C_TYPE[t]}>(r{k}[i])" for k, t in enumerate(spec.inputs) if t is not None]
        arguments += [f"from_bits<float>({_bits(q)[0]}ull)" for q in scalars]
        lines.append(f"void run() {{ for (int i = 0; i < {HOST_ELEMENTS}; ++i) "
                     f"printf(\"%llu\\n\", to_bits((float)value({', '.join(arguments)}))); }}\n}}")
        parts.append("\n".join(lines) + "\n")
    parts.append("int main() { " + " ".join(f"k{n}::run();" for n in range(len(specs))) + " return 0; }\n")
    return parts[0] + "".join(parts[1:])


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_prologue_values_run_on_the_host_match_the_numpy_lowering(tmp_path) -> None:
    """Each fused element (DQ -> CLIP over FLOAT32 and FLOAT16 intermediates), lowered to C and run on the
    host, gives the values the NumPy lowering gives: the FLOAT16 one rounded to half."""
    specs = [fused(Case(x, (4, 16), (1,), TENSOR, zp, t, clip))[0]
             for x in (T.UINT8, T.INT8, T.INT16) for zp in (TENSOR, None) for t in (T.FLOAT32, T.FLOAT16)
             for clip in (True, False)]
    rng = np.random.default_rng(5)
    operands = [[edge_values(t, HOST_ELEMENTS, rng) for t in spec.inputs if t is not None] for spec in specs]
    printed = run_host_program(value_program(specs, operands), tmp_path)
    for n, (spec, arrays) in enumerate(zip(specs, operands)):
        got = np.array([int(b) for b in printed[n * HOST_ELEMENTS:(n + 1) * HOST_ELEMENTS]], np.uint32).view(np.float32)
        expected = np.asarray(evaluate(spec.element, arrays, spec.scalars)).astype(np.float32)
        assert same_values(got, expected), f"{spec.element}: got {got[:6]}, expected {expected[:6]}"


# --- the kernels run on the host (tests/cuda_emulation.py), against the reference kernels ------------------

# (case, the plan's family, group and whether it splits, on a GPU of one multiprocessor)
HOST_CASES = [
    ("short rows", Case(T.UINT8, (40, 64), (1,)), ("rows", 32, False)),
    ("long rows", Case(T.UINT16, (20, 3008), (1,), FULL, TENSOR, T.FLOAT32, False, "DECREASING", T.UINT32),
     ("rows", 32, False)),
    ("split rows", Case(T.UINT8, (4, 8000), (1,)), ("rows", 32, True)),
    ("split long rows, by blocks", Case(T.UINT8, (4, 20000), (1,)), ("rows", 256, True)),
    ("rows, no 16-byte load", Case(T.UINT8, (20, 3001), (1,), COLUMN, ROW), ("rows", 32, False)),
    ("columns, one piece", Case(T.UINT8, (64, 64), (0,), ROW, FULL, T.FLOAT16, True, "DECREASING"),
     ("columns", 1, False)),
    ("columns, split", Case(T.UINT8, (1030, 32), (0,), COLUMN, ROW, T.FLOAT32, True, "DECREASING", T.UINT32),
     ("columns", 1, True)),
    ("columns", Case(T.INT8, (4, 16384), (0,), COLUMN, ROW, T.FLOAT32, True, "DECREASING", T.INT32),
     ("columns", 1, False)),
    # 1024 outputs in 3 pieces: the combine pass's lanes take neighbouring outputs (plan.COMBINE_WARPS).
    ("columns, split, many outputs", Case(T.UINT8, (600, 1024), (0,), COLUMN, ROW, T.FLOAT16, True, "DECREASING"),
     ("columns", 1, True)),
    ("non-adjacent axes", Case(T.UINT8, (12, 6, 160), (0, 2), COLUMN, FULL), ("rows", 32, False)),
    ("columns over two axes", Case(T.UINT8, (8, 10, 48), (0, 1), COLUMN, ROW, T.FLOAT16), ("columns", 1, False)),
    ("all axes", Case(T.UINT8, (3, 5, 8), (0, 1, 2), FULL, COLUMN), ("rows", 32, False)),
    ("transposed, elements", Case(T.UINT8, (2048, 20), (1,), FULL, None, x_strides=(1, 2048)), ("columns", 1, False)),
]


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
@pytest.mark.parametrize(("case", "path"), [(c, p) for _, c, p in HOST_CASES], ids=[i for i, _, _ in HOST_CASES])
def test_kernels_run_on_the_host_give_the_reference_indices(case: Case, path: tuple[str, int, bool], tmp_path) -> None:
    """Tied and spread values; aligned operands, and shifted ones (the element-by-element kernel)."""
    spec, descs, out = fused(case)
    count = len(descs)
    for spread in (False, True):
        inputs = case.inputs(np.random.default_rng(11), spread)
        with using("cpu-numpy") as cpu:
            want = run_node_by_node(cpu, case.graph(cpu), inputs, [np.zeros(out.total_tensor_size_in_bytes, np.uint8)])
        for shifts in ([0] * count, [1, 4, 1][:count]) if spread else ([0] * count,):
            (got, *_), plan = run_on_host(spec, descs, out, inputs, tmp_path, shifts)
            if shifts[0] == 0:
                assert (plan.family, plan.group, plan.splits > 1) == path
            assert (got == want[0]).all(), f"{plan}, spread={spread}, shifts={shifts}"


# --- on a GPU: fused == unfused == node by node, bit for bit, on every plan path ----------------------------

needs_cuda = pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")

# Shapes crossing each plan path on an H100 (132 multiprocessors; other GPUs cross most of them too).
GPU_PATHS = [
    ((4096, 64), (1,), "short rows"),
    ((2200, 2048), (1,), "long rows"),
    ((64, 256000), (1,), "split rows"),
    ((37, 3001), (1,), "rows, no 16-byte load"),
    ((4096, 64), (0,), "columns, split"),
    ((4, 2162688), (0,), "columns"),
    ((96, 24, 160), (0, 2), "non-adjacent axes"),
    ((8, 100, 48), (0, 1), "columns over two axes"),
    ((3, 5, 8), (0, 1, 2), "all axes"),
    ((1 << 20,), (0,), "one long row"),
]
GPU_CASES = [(f"{name}-{pattern}-{t.name}", Case(x, sizes, axes, pattern, zp, t, clip, direction, index))
             for n, (sizes, axes, name) in enumerate(GPU_PATHS)
             for pattern, zp, t, clip, x, direction, index in [
                 (COLUMN, COLUMN, T.FLOAT32, True, T.UINT8, "INCREASING", INDEXES[n % 4]),
                 (ROW, None, T.FLOAT16, True, T.INT8, "DECREASING", INDEXES[(n + 1) % 4]),
                 (TENSOR, TENSOR, T.FLOAT32, False, T.INT8, "DECREASING", INDEXES[(n + 2) % 4]),
                 (FULL, ROW, T.FLOAT16, False, T.UINT8, "INCREASING", INDEXES[(n + 3) % 4])]]
# An InputTensor with padded rows (16-byte loads still fit) and a transposed one (reduced run contiguous).
GPU_CASES += [("padded rows", Case(T.UINT8, (300, 4096), (1,), COLUMN, COLUMN, x_strides=(4112, 1))),
              ("padded rows, odd pitch", Case(T.INT8, (300, 4096), (1,), ROW, FULL, x_strides=(4097, 1))),
              ("transposed", Case(T.UINT8, (4096, 300), (0,), COLUMN, ROW, T.FLOAT16, x_strides=(1, 4096))),
              ("transposed columns", Case(T.UINT8, (4096, 300), (1,), FULL, None, x_strides=(1, 4096)))]


@needs_cuda
@pytest.mark.parametrize("case", [c for _, c in GPU_CASES], ids=[i for i, _ in GPU_CASES])
@pytest.mark.parametrize("spread", [False, True], ids=["ties", "spread"])
def test_fused_prologue_equals_unfused_and_node_by_node_on_cuda(case: Case, spread: bool) -> None:
    inputs = case.inputs(np.random.default_rng(11), spread)
    with using("cuda") as device:
        compiled = assert_fused_equals_unfused(device, case.graph(device), inputs)
        assert len(compiled.plan.steps) == 1 and compiled.binding_properties.temporary_resource_size == 0
        out = np.zeros(output_desc(case.graph(device), 0).total_tensor_size_in_bytes, np.uint8)
        gpu = run_node_by_node(device, case.graph(device), inputs, [out])
    with using("cpu-numpy") as cpu:  # the reference kernels on the host
        host = run_node_by_node(cpu, case.graph(cpu), inputs, [out])
    assert (gpu[0] == host[0]).all()


@needs_cuda
@pytest.mark.parametrize("offsets", [(0, 4, 0), (0, 0, 1), (1, 0, 0)])
def test_unaligned_operands_take_the_element_by_element_kernel(offsets: tuple[int, int, int]) -> None:
    """Addresses inside buffers that 16-byte words do not fit: the same indices as aligned ones."""
    import cupy

    case = Case(T.UINT8, (300, 4096), (1,), COLUMN, COLUMN)
    spec, descs, out_desc = fused(case)
    device = dml.Device("cuda")
    kernel = device.backend.compile_spec(device, spec, descs, out_desc)
    assert kernel.plan.vector == 16
    inputs = case.inputs(np.random.default_rng(3), spread=True)
    results = []
    for shift in [(0, 0, 0), offsets]:
        arrays = [cupy.zeros(a.size + 64, cupy.uint8) for a in inputs]
        for array, data, k in zip(arrays, inputs, shift):
            array[16 + k:16 + k + data.size] = cupy.asarray(data)
        out = cupy.zeros(out_desc.total_tensor_size_in_bytes, cupy.uint8)
        kernel.run([int(a.data.ptr) + 16 + k for a, k in zip(arrays, shift)] + [int(out.data.ptr)])
        results.append(cupy.asnumpy(out))
    assert (results[0] == results[1]).all()
    with using("cpu-numpy") as cpu:
        host = run_node_by_node(cpu, case.graph(cpu), inputs, [np.zeros_like(results[0])])
    assert (results[0] == host[0]).all()

