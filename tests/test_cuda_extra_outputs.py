"""CUDA kernels with several outputs (``KernelSpec.extra``): kernels without extras render the sources they
always did; element-wise and ARGMIN kernels with extras render and compile, and run on the host under
emulation (tests/cuda_emulation.py) they store each extra element once, where the NumPy lowering puts its
value, leaving every other byte alone, on every plan path; on a GPU they give the CPU NumPy reference's bits."""

from __future__ import annotations

import dataclasses
import hashlib
import math
import shutil
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

import opendml as dml
from opendml import AxisDirection, TensorDesc
from opendml import DataType as T
from opendml import expr as ex
from opendml.backends.base import check_extra_outputs
from opendml.backends.cuda import argmin_c, elementwise_c
from opendml.backends.layout import Layout, collapse
from opendml.kernels.numpy_lowering import evaluate
from opendml.kernels.spec import KernelSpec
from tests.conftest import CUDA_MISSING
from tests.cuda_emulation import run_elementwise_on_host, run_on_host
from tests.cuda_lowering_cases import seeded_specs
from tests.graph_helpers import run_node_by_node
from tests.helpers import edge_values, same_values
from tests.test_cuda_lowering import OPERATORS, compile_with_nvcc, elementwise_sources, needs_nvcc, sources_of
from tests.test_cuda_prologue import CASES, COLUMN, FULL, ROW, TENSOR, Case, fused, plain_spec, prologue_sources
from tests.test_graph_fusion import using

SENTINEL = 0xA5  # every byte an extra output's buffer starts with: what no kernel may overwrite but its elements
TAIL = 48  # sentinel bytes after each extra output's TotalTensorSizeInBytes
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
needs_cuda = pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")


def digest(sources: Sequence[str]) -> tuple[int, str]:
    return len(sources), hashlib.sha256("\n".join(sources).encode()).hexdigest()


# --- without extras, nothing changes ------------------------------------------------------------------------

def test_element_wise_sources_without_extras_are_unchanged() -> None:
    """Every operator's element-wise sources and random expressions' over three layouts render byte for byte
    what they rendered before kernels had extra outputs (whose PTX was measured). Last deliberate change:
    clamps against a nonzero number bound as one min.NaN or max.NaN (expr_c.CLAMPS), two chunks a thread
    where outputs are wider than the InputTensor (elementwise_c.WIDENING_UNROLL); H200, graphs.py row 4b
    0.273 -> 0.214 ms). Since: the unary family's operators, and the Negate, BitNot, BitCount and Sqrt nodes in
    the random expressions, added (without them, the sources render the digest before: 456, b982c17b...); a
    FLOAT32 Negate flips the sign bit on the bits (before: ``-x``, which an H100 run gave other bits for:
    634, 81370e22...). Then the binary family's operators (ADD, SUBTRACT, MULTIPLY, DIVIDE; a full and a
    zero-stride BTensor), added (without them: 634, 745ee770...). Then the Wrapping, integer Divide and
    Remainder nodes: ADD and SUBTRACT of integers as one Wrapping (before: a widened sum and its correction),
    MULTIPLY and DIVIDE of every integer type and the 64-bit ADD and SUBTRACT added, and the three nodes in the
    random expressions (without the binary family's integer cases and the new kinds, before and after render
    the same: 666, 1db61249...). Then MIN, MAX, MEAN, DIFFERENCE_SQUARE, MODULUS_FLOOR and MODULUS_TRUNCATE,
    and the SignBit node in the random expressions, added (without them: 786, e584686e...). Then ELEMENT_WISE_ADD1,
    without and with a fused ACTIVATION_LEAKY_RELU, added (without it: 970, f3529cd4...). Then the comparisons
    (LOGICAL_EQUALS, GREATER_THAN, GREATER_THAN_OR_EQUAL, LESS_THAN, LESS_THAN_OR_EQUAL into UINT8) and LOGICAL_AND,
    OR and XOR added (without them: 982, 35f30f17...). Then ELEMENT_WISE_IF, with a full and a column-broadcast
    ConditionTensor, added (without it: 1193, 42422b0f...). Then BIT_AND, BIT_OR,
    BIT_XOR, BIT_SHIFT_LEFT, BIT_SHIFT_RIGHT and CAST, and the Bitwise and Wrap nodes in the random expressions,
    added (without them: 1231, d2d8a5e4...). Then
    ACTIVATION_PARAMETERIZED_RELU, ACTIVATION_RELU_GRAD, ELEMENT_WISE_CLIP_GRAD, CLIP_GRAD1 and
    ELEMENT_WISE_QUANTIZED_LINEAR_ADD added (without them: 1551, 08e35403...). Then the correctly rounded
    functions (ELEMENT_WISE_EXP ... ERF, the activations on them, POW, CONSTANT_POW, ATAN_YX) and FLOAT64's CAST and
    IF kernels added (before: 1624, bba11f16...; every one of the earlier sources still renders byte for byte).
    Then CAST of a FLOAT64 NaN to a 32-bit or narrower integer selected apart (an H100's cvt.rzi of a double NaN
    gives 0x80000000): the 22 CAST FLOAT64 sources change, every other renders as before (1796, 1ab7ad7a...).
    Then the double-double logarithm of POW's flagged pairs through ``dd_log_scaled`` and a table of its series'
    coefficients (the same values; REDUCE's LOG_SUM shares it): the sources holding ``DOUBLE_DOUBLE`` change, every
    other renders as before."""
    sources = []
    for _, desc in OPERATORS:
        spec, rendered = sources_of(desc)
        if spec.reduction is None:
            sources += rendered
    for spec in seeded_specs(60, seed=7):
        n = sum(t is not None for t in spec.inputs)
        for layout in [collapse([37], [[1]] * (n + 1)), collapse([4, 64], [[64, 1]] * (n + 1)),
                       collapse([4, 6], [[1, 4]] * n + [[6, 1]])]:
            sources += elementwise_sources(spec, layout)
    assert digest(sources) == (1796, "db60156da1094c1a24ccfdaf3aa25c9a86b606cc342f3432ed459be74dda35ad")


def test_prologue_sources_without_extras_are_unchanged() -> None:
    """Every plan path's ARGMIN-with-prologue sources render as pinned here (the plain ARGMIN ones are checked
    by tests/test_cuda_prologue.py): writing extras adds nothing to a kernel without them, and a change to
    these sources is a deliberate one that updates the digest (last: split rows merged by their scan's last
    warp, argmin_c.one_pass, so fewer combine passes; a scan's last positions one guarded step and a candidate
    per element of a 16-byte load of a plain ARGMIN's rows, which leaves prologues' scans as they were; then
    pieces merged over their blocks past merge.WARP_PARTIALS_MOST warps' results an output)."""
    sources = [source for _, case in CASES for source in prologue_sources(case)]
    assert digest(sources) == (156, "97a9047f95626a1172a6aca951145c205c8bb318f58e84bb860010b64735ddad")


# --- extra output descriptions and the values to write --------------------------------------------------------

def extra_desc(data_type: T, sizes: Sequence[int], kind: str) -> TensorDesc:
    """``packed`` row-major; ``padded`` rows 16 bytes longer than their elements; ``transposed`` column-major."""
    if kind == "packed":
        return TensorDesc(data_type, sizes)
    strides, step = [0] * len(sizes), 1
    order = range(len(sizes) - 1, -1, -1) if kind == "padded" else range(len(sizes))
    for n, d in enumerate(order):
        strides[d] = step
        step *= sizes[d] + (16 // data_type.size if kind == "padded" and n == 0 else 0)
    return TensorDesc(data_type, sizes, strides)


def operand_view(raw: np.ndarray, desc: TensorDesc) -> np.ndarray:
    """The elements a description reads from its buffer's bytes, as an array of its sizes."""
    itemsize = desc.data_type.size
    typed = raw[: raw.size // itemsize * itemsize].view(desc.data_type.numpy)
    return np.lib.stride_tricks.as_strided(typed, desc.sizes, [s * itemsize for s in desc.effective_strides])


def check_extra(got: np.ndarray, desc: TensorDesc, value: ex.Store, operands: Sequence[np.ndarray | None],
                scalars: Sequence[np.generic], where: str) -> None:
    """``got`` (the extra output's buffer and TAIL bytes after it) holds ``value`` at each described element
    and SENTINEL in every other byte."""
    expected = np.asarray(evaluate(value, operands, scalars), value.type.numpy)
    expected = np.broadcast_to(expected, desc.sizes)
    assert same_values(operand_view(got.copy(), desc), expected), f"{where}: {value.type.name} values differ"
    touched = np.zeros(got.size, bool)
    offsets = np.zeros(desc.sizes, np.int64)
    for d, stride in enumerate(desc.effective_strides):
        shape = [1] * len(desc.sizes)
        shape[d] = desc.sizes[d]
        offsets = offsets + np.arange(desc.sizes[d]).reshape(shape) * stride * desc.data_type.size
    for b in range(desc.data_type.size):
        touched[offsets.reshape(-1) + b] = True
    assert (got[~touched] == SENTINEL).all(), f"{where}: bytes outside the described elements were written"


def sentinel_buffer(desc: TensorDesc) -> np.ndarray:
    return np.full(desc.total_tensor_size_in_bytes + TAIL, SENTINEL, np.uint8)


# --- element-wise kernels -------------------------------------------------------------------------------------

def dequantize_clip(intermediate: T = T.FLOAT32) -> tuple[ex.Expr, ex.Expr]:
    """x UINT8 (operand 0), scale (1), zero point UINT8 (2): the dequantized value, and it clipped to
    [q0, q1] as CLIP clips (a FLOAT16 intermediate rounded to half first)."""
    x, zero_point = ex.Widen(ex.Load(0, T.UINT8), T.INT16), ex.Widen(ex.Load(2, T.UINT8), T.INT16)
    scale = ex.Load(1, intermediate)
    if intermediate is T.FLOAT16:
        scale = ex.ToFloat32(scale)
    dequantized = ex.Multiply(ex.ToFloat32(ex.Subtract(x, zero_point)), scale)
    if intermediate is T.FLOAT16:
        dequantized = ex.ToFloat32(ex.Store(dequantized, T.FLOAT16))
    low, high = ex.Param(0, T.FLOAT32), ex.Param(1, T.FLOAT32)
    above = ex.Select(ex.Less(dequantized, low), low, dequantized)
    return dequantized, ex.Select(ex.Less(high, above), high, above)


def elementwise_spec(intermediate: T, output: T) -> KernelSpec:
    """CLIP's result as ``output``; extras: it as FLOAT32, the dequantized value as FLOAT16 (the same node a
    FLOAT16 intermediate rounds inside the element), the difference x - zero point as INT16, and the clipped
    value plus a scalar (q2) that only an extra reads."""
    dequantized, clipped = dequantize_clip(intermediate)
    difference = ex.Subtract(ex.Widen(ex.Load(0, T.UINT8), T.INT16), ex.Widen(ex.Load(2, T.UINT8), T.INT16))
    raw = dequantized.value if isinstance(dequantized, ex.ToFloat32) else dequantized
    extra = (ex.Store(clipped, T.FLOAT32), ex.Store(raw.value if isinstance(raw, ex.Store) else raw, T.FLOAT16),
             ex.Store(difference, T.INT16), ex.Store(ex.Add(clipped, ex.Param(2, T.FLOAT32)), T.FLOAT32))
    scalars = (np.float32(0.0), np.float32(6.0), np.float32(-0.5))
    return KernelSpec("FUSED", (T.UINT8, intermediate, T.UINT8), output, ex.Store(clipped, output), scalars,
                      None, extra)


def elementwise_operands(intermediate: T, sizes: Sequence[int], rng: np.random.Generator
                         ) -> tuple[list[TensorDesc], list[np.ndarray]]:
    """x packed, a per-column scale and zero point (zero strides down the rows), and their bytes."""
    columns = sizes[-1]
    broadcast = [0] * (len(sizes) - 1) + [1]
    descs = [TensorDesc(T.UINT8, sizes), TensorDesc(intermediate, sizes, broadcast),
             TensorDesc(T.UINT8, sizes, broadcast)]
    scale = edge_values(intermediate, columns, rng)
    scale[:6] = np.array([0.0, -0.0, np.nan, -1.5, 1e-3, 3.3], intermediate.numpy)
    data = [edge_values(T.UINT8, math.prod(sizes), rng), scale, edge_values(T.UINT8, columns, rng)]
    raws = []
    for desc, values in zip(descs, data):
        raw = np.zeros(desc.total_tensor_size_in_bytes, np.uint8)
        raw[: values.nbytes] = values.view(np.uint8)
        raws.append(raw)
    return descs, raws


def elementwise_layout(descs: Sequence[TensorDesc], output: TensorDesc, extras: Sequence[TensorDesc]) -> Layout:
    """The layout ElementwiseKernel makes: every operand's strides, the output's, each extra output's."""
    return collapse(output.sizes, [d.effective_strides for d in [*descs, output, *extras]])


# (sizes, kind of each extra output's layout, whether the 16-byte chunk kernel applies)
ELEMENTWISE_LAYOUTS = [
    ((8, 64), "packed", True),
    ((8, 64), "padded", True),  # rows 16 bytes longer: chunks still aligned
    ((8, 64), "transposed", False),  # column-major extras: the kernel for any strides
    ((5, 36), "packed", True),
]


def test_an_element_wise_kernel_takes_each_extra_outputs_pointer_and_stores_it_by_words() -> None:
    spec = elementwise_spec(T.FLOAT32, T.FLOAT16)
    descs, _ = elementwise_operands(T.FLOAT32, (8, 64), np.random.default_rng(1))
    out = TensorDesc(T.FLOAT16, (8, 64))
    extras = [extra_desc(value.type, (8, 64), "packed") for value in spec.extra]
    layout = elementwise_layout(descs, out, extras)
    width = elementwise_c.vector_width(spec, layout)
    assert width == 4  # 16 bytes of the widest (FLOAT32) output a chunk
    source = elementwise_c.elementwise_vector(spec, layout, width)
    assert "opendml_kernel(ull p0, ull p1, ull p2, ull pout, ull pout1, ull pout2, ull pout3, ull pout4, " \
           "float q0, float q1, float q2)" in source
    assert "float& r1, unsigned short& r2, short& r3, float& r4)" in source
    assert "*(float4*)(pout1 + oo1_0 * 4ull) = uo1.w;" in source
    assert "*(uint2*)(pout2 + oo2_0 * 2ull) = uo2.w;" in source
    assert ("uo.e[e] = apply(u0_0.u[e >> 2], e & 3, u1_0.e[e], u2_0.u[e >> 2], e & 3, q0, q1, q2, uo1.e[e], uo2.e[e], "
            "uo3.e[e], uo4.e[e]);") in source  # UINT8 x and zero point by words (expr_c.BYTES)
    transposed = [extra_desc(value.type, (8, 64), "transposed") for value in spec.extra]
    assert elementwise_c.vector_width(spec, elementwise_layout(descs, out, transposed)) is None


def test_extra_outputs_share_the_temporaries_of_the_output() -> None:
    """The clipped value is computed once, stored as the output (FLOAT16) and the first extra (FLOAT32)."""
    spec = elementwise_spec(T.FLOAT32, T.FLOAT16)
    function = elementwise_c._apply(spec)
    assert function.count("mul_rn(") == 1 and function.count("f2h(") == 2  # the output, and extra 2
    assert "r1 = " in function and "r4 = " in function and function.rstrip().endswith("}")


@needs_gxx
@pytest.mark.thin("intermediate", "kind", "vector")
@pytest.mark.parametrize("intermediate", [T.FLOAT32, T.FLOAT16])
@pytest.mark.parametrize(("sizes", "kind", "vector"), ELEMENTWISE_LAYOUTS)
def test_element_wise_extras_run_on_the_host_store_the_numpy_values(intermediate: T, sizes: tuple[int, ...],
                                                                   kind: str, vector: bool, tmp_path) -> None:
    spec = elementwise_spec(intermediate, T.FLOAT16)
    descs, raws = elementwise_operands(intermediate, sizes, np.random.default_rng(7))
    out = TensorDesc(T.FLOAT16, sizes)
    extras = [extra_desc(value.type, sizes, kind) for value in spec.extra]
    layout = elementwise_layout(descs, out, extras)
    width = elementwise_c.vector_width(spec, layout)
    assert (width is not None) is vector
    operands = [operand_view(raw, desc) for raw, desc in zip(raws, descs)]
    for shifts_out in ([0] * 5, [0, 8, 0, 0, 4]) if vector else ([0] * 5,):  # misaligned: the general kernel
        chosen = width if not any(shifts_out) else None
        buffers = [*raws, np.full(out.total_tensor_size_in_bytes + TAIL, SENTINEL, np.uint8),
                   *(sentinel_buffer(desc) for desc in extras)]
        shifts = [0, 0, 0, *shifts_out]
        for k in range(3, len(buffers)):  # the tensor starts ``shift`` bytes into its buffer
            buffers[k] = np.concatenate([np.full(shifts[k], SENTINEL, np.uint8), buffers[k]])
        got = run_elementwise_on_host(spec, layout, chosen, buffers, shifts, tmp_path)
        where = f"{kind}, shifts {shifts_out}"
        check_extra(got[3][shifts[3]:], out, spec.element, operands, spec.scalars, where)  # type: ignore[arg-type]
        for j, (desc, value) in enumerate(zip(extras, spec.extra)):
            check_extra(got[4 + j][shifts[4 + j]:], desc, value, operands, spec.scalars, f"{where}, extra {j + 1}")


@needs_gxx
def test_a_one_dimensional_element_wise_kernel_stores_its_extras_in_the_tail(tmp_path) -> None:
    """37 elements: nine 4-element chunks, then one element by the tail loop, each output's."""
    spec = elementwise_spec(T.FLOAT32, T.FLOAT16)
    x = TensorDesc(T.UINT8, [37])
    descs = [x, TensorDesc(T.FLOAT32, [37], [0]), TensorDesc(T.UINT8, [37], [0])]
    rng = np.random.default_rng(3)
    raws = [edge_values(T.UINT8, 40, rng), np.float32([1.75]).view(np.uint8), np.uint8([3, 0, 0, 0])]
    out = TensorDesc(T.FLOAT16, [37])
    extras = [extra_desc(value.type, [37], "packed") for value in spec.extra]
    layout = elementwise_layout(descs, out, extras)
    width = elementwise_c.vector_width(spec, layout)
    assert width == 4 and "i < 37ull" in elementwise_c.elementwise_vector(spec, layout, width)
    buffers = [*raws, np.full(out.total_tensor_size_in_bytes + TAIL, SENTINEL, np.uint8),
               *(sentinel_buffer(desc) for desc in extras)]
    got = run_elementwise_on_host(spec, layout, width, buffers, [0] * len(buffers), tmp_path)
    operands = [operand_view(raw, desc) for raw, desc in zip(raws, descs)]
    for j, (desc, value) in enumerate(zip(extras, spec.extra)):
        check_extra(got[4 + j], desc, value, operands, spec.scalars, f"extra {j + 1}")


# --- ARGMIN with extras -----------------------------------------------------------------------------------

def clip_extras(spec: KernelSpec, kinds: Sequence[T]) -> tuple[ex.Store, ...]:
    """Extras of a fused DEQUANTIZE_LINEAR (-> CLIP) -> ARGMIN spec: the value compared (the intermediate
    CLIP writes) stored as each of ``kinds``, the first as the graph would write it; a FLOAT16 second one
    is the dequantized value (a node a FLOAT16 intermediate also rounds inside the value)."""
    value = spec.element.value if isinstance(spec.element, ex.Store) else spec.element
    dequantized = next(node for node in ex.nodes(spec.element) if isinstance(node, ex.Multiply))
    stores = [ex.Store(value, kinds[0])]
    stores += [ex.Store(dequantized if t is T.FLOAT16 else value, t) for t in kinds[1:]]
    return tuple(stores)


def with_extras(case: Case, kinds: Sequence[T], layout: str
                ) -> tuple[KernelSpec, list[TensorDesc | None], TensorDesc, list[TensorDesc]]:
    spec, descs, out = fused(case)
    spec = dataclasses.replace(spec, extra=clip_extras(spec, kinds))
    return spec, descs, out, [extra_desc(t, case.sizes, layout) for t in kinds]


# (name, case, extra output types, their layout, misalignment of the first extra, the plan's family, group
# and whether it splits on a GPU of one multiprocessor, and the first extra's store form)
HOST_CASES = [
    ("short rows", Case(T.UINT8, (40, 64), (1,)), [T.FLOAT32, T.FLOAT16], "packed", 0, ("rows", 32, False), "words"),
    ("short rows, misaligned extra", Case(T.UINT8, (40, 64), (1,)), [T.FLOAT32], "packed", 4, ("rows", 32, False),
     "elements"),
    ("short rows, transposed extras", Case(T.UINT8, (40, 64), (1,), ROW, FULL, T.FLOAT16, True, "DECREASING"),
     [T.FLOAT16, T.FLOAT32], "transposed", 0, ("rows", 32, False), "elements"),
    ("long rows", Case(T.UINT16, (20, 3008), (1,), FULL, TENSOR, T.FLOAT32, False, "DECREASING", T.UINT32),
     [T.FLOAT32], "padded", 0, ("rows", 32, False), "words"),
    ("split rows", Case(T.UINT8, (4, 8000), (1,)), [T.FLOAT32, T.FLOAT16], "padded", 0, ("rows", 32, True), "words"),
    ("split long rows, by blocks", Case(T.UINT8, (4, 20000), (1,), COLUMN, ROW, T.FLOAT16, True, "DECREASING"),
     [T.FLOAT16], "packed", 0, ("rows", 256, True), "words"),
    ("rows, no 16-byte load", Case(T.UINT8, (20, 3001), (1,), COLUMN, ROW), [T.FLOAT32], "packed", 0,
     ("rows", 32, False), "elements"),
    ("columns, one piece", Case(T.UINT8, (64, 64), (0,), ROW, FULL, T.FLOAT16, True, "DECREASING"),
     [T.FLOAT16, T.FLOAT32], "packed", 0, ("columns", 1, False), "words"),
    ("columns, split, transposed extra", Case(T.UINT8, (1030, 32), (0,), COLUMN, ROW, T.FLOAT32, True, "DECREASING",
                                              T.UINT32), [T.FLOAT32], "transposed", 0, ("columns", 1, True), "elements"),
    ("columns, split, padded extra", Case(T.UINT8, (1030, 32), (0,), COLUMN, ROW), [T.FLOAT32], "padded", 0,
     ("columns", 1, True), "words"),
    ("non-adjacent axes", Case(T.UINT8, (12, 6, 160), (0, 2), COLUMN, FULL), [T.FLOAT32, T.FLOAT16], "packed", 0,
     ("rows", 32, False), "words"),
    ("columns over two axes", Case(T.UINT8, (8, 10, 48), (0, 1), COLUMN, ROW, T.FLOAT16), [T.FLOAT16], "transposed",
     0, ("columns", 1, False), "elements"),
    ("all axes", Case(T.UINT8, (3, 5, 8), (0, 1, 2), FULL, COLUMN), [T.FLOAT32, T.FLOAT16], "packed", 0,
     ("rows", 32, False), "words"),  # rows of 8 (a per-column zero point splits them): 4 elements a load
    ("all axes, no load of 16 bytes of the extra", Case(T.UINT8, (3, 5, 6), (0, 1, 2), FULL, COLUMN),
     [T.FLOAT32], "packed", 0, ("rows", 32, False), "elements"),
    ("transposed input", Case(T.UINT8, (2048, 20), (1,), FULL, None, x_strides=(1, 2048)), [T.FLOAT32], "packed",
     0, ("columns", 1, False), "elements"),
]


@pytest.mark.parametrize("case", [c for _, c, *_ in HOST_CASES], ids=[i for i, *_ in HOST_CASES])
def test_every_plan_path_with_extras_renders_their_pointers_and_stores(case: Case) -> None:
    kinds = [T.FLOAT32, T.FLOAT16]
    spec, descs, out, extras = with_extras(case, kinds, "packed")
    sources = argmin_sources_with(spec, descs, out, extras)
    for source in sources:
        assert source.count("{") == source.count("}")
        if "value(" not in source:
            assert "pout1" not in source  # the combine pass writes no extra output
            continue
        assert "ull pout, ull pout1, ull pout2, ull pv, ull pi" in source
        assert "float& r1, unsigned short& r2)" in source
        assert "pout1" in source.split("const ull begin")[1] and "pout2" in source.split("const ull begin")[1]


def argmin_sources_with(spec: KernelSpec, descs: Sequence[TensorDesc | None], out: TensorDesc,
                        extras: Sequence[TensorDesc]) -> list[str]:
    """As test_cuda_lowering.argmin_sources, with extra outputs."""
    assert spec.reduction is not None
    x = descs[0]
    assert x is not None
    kept, reduced = argmin_c.layouts(spec, descs, out, extras)
    plan = argmin_c.plan(spec, x, kept, reduced, 132)
    plans = [plan] if plan.vector == 1 else [plan, plan.scalar()]
    sources = [argmin_c.argmin_kernel(spec, p, spec.reduction.direction, kept, reduced) for p in plans]
    if any(p.splits > 1 and not argmin_c.one_pass(spec, p) for p in plans):
        sources.append(argmin_c.argmin_combine_kernel(spec, plan, spec.reduction.direction, kept))
    return sources


def test_row_5_loads_4_bytes_of_uint8_and_stores_16_of_its_float32_extra_beside_the_next_thread() -> None:
    """[65536, 4096] UINT8 with per-column scale and zero point, CLIP [0, 6], ARGMIN over the rows, the
    clipped FLOAT32 tensor an output too: a load holds 16 bytes of the widest output, so each thread loads 4
    UINT8 elements by one 4-byte word and stores their FLOAT32 values by one float4, at the next thread's
    position plus 16 bytes (a warp's store is 512 contiguous bytes, where four float4 stores 64 bytes apart
    from the next thread's ran at half the speed)."""
    spec, descs, out, extras = with_extras(Case(T.UINT8, (65536, 4096), (1,)), [T.FLOAT32], "packed")
    kept, reduced = argmin_c.layouts(spec, descs, out, extras)
    x = descs[0]
    assert x is not None
    plan = argmin_c.plan(spec, x, kept, reduced, 132)
    assert (plan.family, plan.group, plan.splits, plan.vector) == ("rows", 32, 1, 4)
    # The InputTensor's and the zero point's 4-byte words, the scale's and the extra's 16-byte words.
    assert argmin_c.alignments(spec, plan, kept, reduced) == [(0, 4), (1, 16), (2, 4), (3, 16)]
    source = argmin_c.argmin_kernel(spec, plan, spec.reduction.direction, kept, reduced)  # type: ignore[union-attr]
    assert "u0.w = *(const unsigned int*)(px + (ko + ro0) * 1ull);" in source
    assert "union { float4 w[1]; float e[4]; } x1_0;" in source
    assert "((float4*)(pout1 + (ke1 + re1_0) * 4ull))[0] = x1_0.w[0];" in source
    assert "x1_0.w[1]" not in source
    assert "value(u0.e[3], a1_0.e[3], a2_0.e[3], q0, q1, x1_0.e[3])" in source


def test_a_float16_extra_of_uint8_elements_loads_8_of_them() -> None:
    """The widest output sets the load: 8 UINT8 elements (8 bytes) give 16 bytes of FLOAT16."""
    spec, descs, out, extras = with_extras(Case(T.UINT8, (512, 4096), (1,)), [T.FLOAT16], "packed")
    kept, reduced = argmin_c.layouts(spec, descs, out, extras)
    x = descs[0]
    assert x is not None
    plan = argmin_c.plan(spec, x, kept, reduced, 132)
    assert plan.vector == 8
    source = argmin_c.argmin_kernel(spec, plan, spec.reduction.direction, kept, reduced)  # type: ignore[union-attr]
    assert "u0.w = *(const uint2*)(px + (ko + ro0) * 1ull);" in source
    assert "((uint4*)(pout1 + (ke1 + re1_0) * 2ull))[0] = x1_0.w[0];" in source


def test_extra_outputs_must_be_described_with_their_type_and_the_kernels_sizes() -> None:
    spec, _, _, extras = with_extras(Case(T.UINT8, (4, 64), (1,)), [T.FLOAT32], "packed")
    for wrong in ([], [TensorDesc(T.FLOAT16, (4, 64))], [TensorDesc(T.FLOAT32, (4, 1))], extras * 2):
        with pytest.raises(dml.InvalidArgumentError, match="extra_outputs must describe one tensor per extra"):
            check_extra_outputs(spec, (4, 64), wrong)
    check_extra_outputs(spec, (4, 64), extras)


@needs_nvcc
def test_every_kernel_with_extras_compiles(tmp_path) -> None:
    sources = []
    for _, case, kinds, layout, *_ in HOST_CASES:
        sources += argmin_sources_with(*with_extras(case, kinds, layout))
    for intermediate in (T.FLOAT32, T.FLOAT16):
        spec = elementwise_spec(intermediate, T.FLOAT16)
        for sizes, kind, _ in ELEMENTWISE_LAYOUTS:
            descs, _ = elementwise_operands(intermediate, sizes, np.random.default_rng(0))
            out = TensorDesc(T.FLOAT16, sizes)
            layout = elementwise_layout(descs, out, [extra_desc(v.type, sizes, kind) for v in spec.extra])
            sources += elementwise_sources(spec, layout)
    sources += argmin_sources_with(*with_extras(Case(T.UINT8, (65536, 4096), (1,)), [T.FLOAT32], "packed"))  # row 5
    plain = plain_spec(T.FLOAT16, T.INT64, AxisDirection.DECREASING, (1,))
    plain = dataclasses.replace(plain, extra=(ex.Store(ex.ToFloat32(ex.Load(0, T.FLOAT16)), T.FLOAT32),))
    x = TensorDesc(T.FLOAT16, (4, 5000))
    sources += argmin_sources_with(plain, [x], TensorDesc(T.INT64, (4, 1)), [TensorDesc(T.FLOAT32, (4, 5000))])
    ptx = compile_with_nvcc(sources, tmp_path)
    assert ptx.count(".entry opendml_kernel_") == len(sources)


@needs_gxx
@pytest.mark.thin("path", "layout", "form", "shift")  # each plan path, layout and store form; all under --slow
@pytest.mark.parametrize(("case", "kinds", "layout", "shift", "path", "form"), [tuple(c[1:]) for c in HOST_CASES],
                         ids=[c[0] for c in HOST_CASES])
def test_argmin_extras_run_on_the_host_store_each_element_once(case: Case, kinds: list[T], layout: str, shift: int,
                                                               path: tuple[str, int, bool], form: str,
                                                               tmp_path) -> None:
    """Indices as the reference kernels give them, each extra element the NumPy lowering's value (NaN ones
    too), and every byte around them untouched; on tied and on spread values."""
    spec, descs, out, extras = with_extras(case, kinds, layout)
    for spread in (False, True):
        inputs = case.inputs(np.random.default_rng(11), spread)
        with using("cpu-numpy") as cpu:
            want = run_node_by_node(cpu, case.graph(cpu), inputs, [np.zeros(out.total_tensor_size_in_bytes, np.uint8)])
        shifts = [shift] + [0] * (len(extras) - 1)
        (got, *written), plan = run_on_host(spec, descs, out, inputs, tmp_path, [0] * len(descs), extras,
                                            [sentinel_buffer(d) for d in extras], shifts)
        kept, reduced = argmin_c.layouts(spec, descs, out, extras)
        assert (plan.family, plan.group, plan.splits > 1) == path
        assert argmin_c.extras(spec, plan, kept, reduced)[0].form == form
        assert (got == want[0]).all(), f"{plan}, spread={spread}"
        operands = [None if d is None else operand_view(raw, d) for raw, d in zip(inputs, descs)]
        for j, (desc, value) in enumerate(zip(extras, spec.extra)):
            check_extra(written[j], desc, value, operands, spec.scalars, f"{plan}, spread={spread}, extra {j + 1}")


@needs_gxx
@pytest.mark.parametrize("direction", [AxisDirection.INCREASING, AxisDirection.DECREASING])
def test_a_plain_argmin_with_an_extra_output_splits_long_rows_by_blocks(direction: AxisDirection, tmp_path) -> None:
    """ARGMIN of FLOAT16 elements (no prologue: the plans of a plain ARGMIN), the elements as FLOAT32 too; the
    pieces of each row merged by the scan."""
    sizes = (4, 20000)
    spec = plain_spec(T.FLOAT16, T.INT64, direction, (1,))
    spec = dataclasses.replace(spec, extra=(ex.Store(ex.ToFloat32(ex.Load(0, T.FLOAT16)), T.FLOAT32),))
    x, out = TensorDesc(T.FLOAT16, sizes), TensorDesc(T.INT64, (4, 1))
    extras = [extra_desc(T.FLOAT32, sizes, "padded")]
    values = edge_values(T.FLOAT16, math.prod(sizes), np.random.default_rng(2))
    raw = values.view(np.uint8).copy()
    (got, written), plan = run_on_host(spec, [x], out, [raw], tmp_path, [0], extras, [sentinel_buffer(extras[0])], [0])
    assert (plan.family, plan.group, plan.splits > 1, plan.vector) == ("rows", 256, True, 4)  # 16 bytes of FLOAT32
    assert argmin_c.one_pass(spec, plan)
    with using("cpu-numpy") as cpu:
        desc = dml.ArgMinDesc(x, out, [1], direction.name)
        compiled = cpu.compile_operator(cpu.create_operator(desc))
        want = cpu.create_buffer(out.total_tensor_size_in_bytes)
        compiled.execute([cpu.buffer_from(raw)], [want])
    assert (got == want.to_numpy()).all()
    check_extra(written, extras[0], spec.extra[0], [values.reshape(sizes)], (), "plain ARGMIN")


# --- on a GPU: compile_spec with extras against the CPU NumPy reference, bit for bit -----------------------------

def _gpu_run(spec: KernelSpec, descs: Sequence[TensorDesc | None], raws: Sequence[np.ndarray], out: TensorDesc,
             extras: Sequence[TensorDesc], shifts: Sequence[int] = ()) -> tuple[np.ndarray, list[np.ndarray], Any]:
    """``spec``'s kernel compiled by the cuda backend and run over these bytes: the output's bytes, and each
    extra output's buffer (SENTINEL around it, its first element ``shifts[j]`` bytes in), and the kernel."""
    import cupy

    device = dml.Device("cuda")
    kernel = device.backend.compile_spec(device, spec, descs, out, extras)
    inputs = [cupy.asarray(raw) for raw in raws]
    output = cupy.zeros(out.total_tensor_size_in_bytes, cupy.uint8)
    shifts = list(shifts) or [0] * len(extras)
    buffers = [cupy.full(16 + desc.total_tensor_size_in_bytes + TAIL, SENTINEL, cupy.uint8) for desc in extras]
    pointers = [int(a.data.ptr) for a in inputs] + [int(output.data.ptr)]
    pointers += [int(b.data.ptr) + 16 + shift for b, shift in zip(buffers, shifts)]
    kernel.run(pointers)
    cupy.cuda.get_current_stream().synchronize()
    written = [cupy.asnumpy(b) for b in buffers]
    for buffer, shift in zip(written, shifts):
        assert (buffer[: 16 + shift] == SENTINEL).all(), "bytes before an extra output were written"
    return cupy.asnumpy(output), [b[16 + shift:] for b, shift in zip(written, shifts)], kernel


GPU_ARGMIN = [
    ("row 5 shape", Case(T.UINT8, (8192, 4096), (1,)), [T.FLOAT32], "packed", 0),
    ("short rows", Case(T.UINT8, (4096, 64), (1,), ROW, None, T.FLOAT16, True, "DECREASING", T.INT32),
     [T.FLOAT16, T.FLOAT32], "packed", 0),
    ("long rows", Case(T.UINT8, (2200, 2048), (1,), TENSOR, TENSOR, T.FLOAT32, False, "DECREASING"), [T.FLOAT32],
     "padded", 0),
    ("split rows", Case(T.INT8, (64, 256000), (1,), COLUMN, COLUMN), [T.FLOAT32, T.FLOAT16], "packed", 0),
    ("block rows", Case(T.UINT8, (37, 30000), (1,), ROW, FULL, T.FLOAT16), [T.FLOAT16], "packed", 0),
    ("rows, no 16-byte load", Case(T.UINT8, (37, 3001), (1,)), [T.FLOAT32], "packed", 0),
    ("columns, split", Case(T.UINT8, (4096, 64), (0,), COLUMN, ROW, T.FLOAT32, True, "DECREASING", T.UINT32),
     [T.FLOAT32], "packed", 0),
    ("columns", Case(T.UINT8, (64, 65536), (0,)), [T.FLOAT32], "transposed", 0),
    ("non-adjacent axes", Case(T.UINT8, (96, 24, 160), (0, 2), COLUMN, FULL), [T.FLOAT32, T.FLOAT16], "packed", 0),
    ("columns over two axes", Case(T.UINT8, (8, 100, 48), (0, 1), COLUMN, ROW, T.FLOAT16), [T.FLOAT16], "padded", 0),
    ("all axes", Case(T.UINT8, (3, 5, 8), (0, 1, 2), FULL, COLUMN), [T.FLOAT32], "packed", 0),
    ("one long row", Case(T.UINT8, (1 << 20,), (0,), TENSOR, TENSOR), [T.FLOAT32], "packed", 0),
    ("misaligned extra", Case(T.UINT8, (300, 4096), (1,)), [T.FLOAT32], "packed", 4),
]


@needs_cuda
@pytest.mark.parametrize(("case", "kinds", "layout", "shift"), [tuple(c[1:]) for c in GPU_ARGMIN],
                         ids=[c[0] for c in GPU_ARGMIN])
@pytest.mark.parametrize("spread", [False, True], ids=["ties", "spread"])
def test_argmin_with_extras_on_cuda_gives_the_numpy_reference_bits(case: Case, kinds: list[T], layout: str,
                                                                   shift: int, spread: bool) -> None:
    spec, descs, out, extras = with_extras(case, kinds, layout)
    inputs = case.inputs(np.random.default_rng(11), spread)
    got, written, kernel = _gpu_run(spec, descs, inputs, out, extras, [shift] + [0] * (len(extras) - 1))
    if shift:
        assert kernel.plan.vector == 4 and 1 in kernel._kernels  # type: ignore[attr-defined]
    with using("cpu-numpy") as cpu:
        want = run_node_by_node(cpu, case.graph(cpu), inputs, [np.zeros(out.total_tensor_size_in_bytes, np.uint8)])
    assert (got == want[0]).all()
    operands = [None if d is None else operand_view(raw, d) for raw, d in zip(inputs, descs)]
    for j, (desc, value) in enumerate(zip(extras, spec.extra)):
        check_extra(written[j], desc, value, operands, spec.scalars, f"extra {j + 1}")


@needs_cuda
@pytest.mark.parametrize("intermediate", [T.FLOAT32, T.FLOAT16])
@pytest.mark.parametrize(("sizes", "kind", "shift"), [((65536, 64), "packed", 0), ((512, 64), "padded", 0),
                                                      ((512, 64), "transposed", 0), ((512, 64), "packed", 4),
                                                      ((37, 36), "packed", 0)])
def test_element_wise_extras_on_cuda_give_the_numpy_reference_bits(intermediate: T, sizes: tuple[int, ...],
                                                                   kind: str, shift: int) -> None:
    spec = elementwise_spec(intermediate, T.FLOAT16)
    descs, raws = elementwise_operands(intermediate, sizes, np.random.default_rng(5))
    out = TensorDesc(T.FLOAT16, sizes)
    extras = [extra_desc(value.type, sizes, kind) for value in spec.extra]
    got, written, _ = _gpu_run(spec, descs, raws, out, extras, [shift] + [0] * (len(extras) - 1))
    operands = [operand_view(raw, desc) for raw, desc in zip(raws, descs)]
    want = np.asarray(evaluate(spec.element, operands, spec.scalars), np.float16)
    assert same_values(operand_view(got, out), np.broadcast_to(want, sizes))
    for j, (desc, value) in enumerate(zip(extras, spec.extra)):
        check_extra(written[j], desc, value, operands, spec.scalars, f"extra {j + 1}")


@needs_cuda
@pytest.mark.parametrize("count", [4, 1000, 1001])
def test_a_scaled_copy_kernel_writes_its_input_as_an_extra_output_on_cuda(count: int) -> None:
    """x * 2 as FLOAT16, x itself as FLOAT32 (tests/test_kernel_specs.py's spec): the copy is x's bits."""
    from tests.test_kernel_specs import _scaled

    spec = _scaled((ex.Store(ex.Load(0, T.FLOAT32), T.FLOAT32),))
    x = edge_values(T.FLOAT32, count, np.random.default_rng(count))
    desc = TensorDesc(T.FLOAT32, [count])
    got, (copy,), _ = _gpu_run(spec, [desc], [x.view(np.uint8)], TensorDesc(T.FLOAT16, [count]), [desc])
    assert (copy[: x.nbytes] == x.view(np.uint8)).all() and (copy[desc.total_tensor_size_in_bytes:] == SENTINEL).all()
    want = np.asarray(evaluate(spec.element, [x], spec.scalars), np.float16)
    assert same_values(got[: count * 2].view(np.float16), want)
