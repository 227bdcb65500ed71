"""ARGMAX and NanPolicy PROPAGATE on the CUDA reduction engine: one engine, the comparison as data.

A kind's and a policy's sources differ from ARGMIN's only in the comparison (ARGMIN alone renders what it
always did: tests/test_cuda_prologue.py and tests/test_cuda_extra_outputs.py hold its digests). On every
plan family (rows of a warp and of a block, split pieces and the combine pass of a block and of a warp,
columns, non-adjacent axes, all axes, unaligned addresses, prologues of fused chains, the min-and-ballot
row scan with several rows a warp, extra outputs) the kernels run on the host under emulation
(tests/cuda_emulation.py, a few programs of many runs each) give the independent oracle's indices
(tests/elementwise_oracle.py); every source compiles with nvcc; ARGMAX costs ARGMIN's registers and
instructions; and on a GPU the kernels give the oracle's indices.
"""

from __future__ import annotations

import dataclasses
import math
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import opendml as dml
from opendml import AxisDirection, TensorDesc
from opendml import DataType as T
from opendml import expr as ex
from opendml.backends.cuda import argmin_c
from opendml.backends.cuda.codegen import OPTIONS
from opendml.enums import NanPolicy
from opendml.kernels.numpy_lowering import evaluate
from opendml.kernels.spec import KernelSpec, Reduction, ReductionKind
from opendml.ops.arg_reduction import ArgReductionParams, arg_reduction_reference
from tests import elementwise_oracle as oracle
from tests.conftest import CUDA_MISSING
from tests.cuda_emulation import HostRun, run_batch_on_host
from tests.graph_helpers import run_graph
from tests.helpers import edge_values, packed_bytes
from tests.test_cuda_extra_outputs import argmin_sources_with, check_extra, sentinel_buffer, with_extras
from tests.test_cuda_large import ARGMIN_CASES, CLUSTERED_CASES, ArgMinCase, argmin_descs, on_gpu, plan_setting
from tests.test_cuda_lowering import NVCC, needs_nvcc, translation_unit
from tests.test_cuda_prologue import COLUMN, FULL, ROW, TENSOR, Case, broadcast, fused
from tests.test_cuda_prologue_rows import fused_clip, special_inputs
from tests.test_graph_fusion import assert_fused_equals_unfused, using

ARGMIN, ARGMAX = ReductionKind.ARGMIN, ReductionKind.ARGMAX
IGNORE, PROPAGATE = NanPolicy.IGNORE, NanPolicy.PROPAGATE
INCREASING, DECREASING = AxisDirection.INCREASING, AxisDirection.DECREASING
INDEX_TYPES = [T.INT64, T.UINT32, T.INT32, T.UINT64]
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")


def arg_spec(t: T, index: T, axes: tuple[int, ...], kind: ReductionKind = ARGMIN, nan: NanPolicy = IGNORE,
             direction: AxisDirection = INCREASING) -> KernelSpec:
    """ARGMIN's or ARGMAX's own KernelSpec: the values compared are the InputTensor's elements."""
    return KernelSpec(kind.value, (t,), index, ex.Load(0, t), (),
                      Reduction(kind, axes, direction, nan, index))


def variant(spec: KernelSpec, kind: ReductionKind, nan: NanPolicy, direction: AxisDirection) -> KernelSpec:
    """``spec`` with another reduction kind, NaN policy and direction (a fused spec keeps its prologue)."""
    assert spec.reduction is not None
    reduction = dataclasses.replace(spec.reduction, kind=kind, nan_rule=nan, direction=direction)
    return dataclasses.replace(spec, reduction=reduction)


# --- the expected indices: the oracle over the values the element expression gives ------------------------

def operand_view(raw: np.ndarray, desc: TensorDesc) -> np.ndarray:
    """The elements a description reads from its buffer's bytes, as an array of its sizes."""
    itemsize = desc.data_type.size
    typed = raw[: raw.size // itemsize * itemsize].view(desc.data_type.numpy)
    return np.lib.stride_tricks.as_strided(typed, desc.sizes, [s * itemsize for s in desc.effective_strides])


def compared_values(spec: KernelSpec, descs: Sequence[TensorDesc | None], raws: Sequence[np.ndarray]) -> np.ndarray:
    """The value each InputTensor element is compared by (the element itself, or a prologue's value)."""
    x = descs[0]
    assert x is not None
    operands = [None if d is None else operand_view(raw, d) for raw, d in zip(raws, descs)]
    return np.broadcast_to(np.asarray(evaluate(spec.element, operands, spec.scalars)), x.sizes)


def oracle_indices(spec: KernelSpec, values: np.ndarray, out: TensorDesc) -> np.ndarray:
    """The oracle's index for each output element, in row-major order."""
    reduction = spec.reduction
    assert reduction is not None
    read = dict(zip(oracle.indices(values.shape), values.reshape(-1).tolist()))
    found = oracle.argmin_tensor(read, values.shape, reduction.axes, reduction.direction.name,
                                 largest=reduction.kind is ARGMAX, propagate=reduction.nan_rule is PROPAGATE)
    return np.array([found[i] for i in oracle.indices(out.sizes)], np.int64)


def indices_of(got: np.ndarray, out: TensorDesc) -> np.ndarray:
    """The output bytes of a packed OutputTensor as int64 indices."""
    return got[: out.element_count * out.data_type.size].view(out.data_type.numpy).astype(np.int64)


# --- values: rows of chosen kinds --------------------------------------------------------------------------

FLOAT_ROWS = ["edge", "numbers", "some nan", "all nan", "limits"]
INTEGER_ROWS = ["edge", "limits"]


def row_values(t: T, length: int, kind: str, rng: np.random.Generator) -> np.ndarray:
    """One reduction's values: ``edge`` (edge_values: NaN, +-inf, +-0.0, denormals, limits, ties), ``numbers``
    (the same, NaN made -0.0 or +0.0), ``some nan`` (numbers, and NaN at one to three places, one of them
    last), ``all nan``, ``limits`` (the type's least and greatest values and their neighbours, for floats
    +-inf and +-max, many times each)."""
    values = edge_values(t, length, rng)
    if kind == "edge":
        return values
    if kind == "limits":
        if t.is_float:
            info = np.finfo(t.numpy)
            pool = np.array([np.inf, -np.inf, info.max, -info.max, 0.0, -0.0], t.numpy)
        else:
            low, high = t.integer_range
            pool = np.array([low, high, low + 1, high - 1, 0], t.numpy)
        return rng.choice(pool, length)
    if kind == "all nan":
        return np.full(length, np.nan, t.numpy)
    values[np.isnan(values)] = rng.choice(np.array([0.0, -0.0], t.numpy), int(np.isnan(values).sum()))
    if kind == "some nan":
        places = rng.integers(0, length, int(rng.integers(1, 4)))
        values[places] = np.nan
        values[-1] = np.nan
    return values


def tensor_bytes(desc: TensorDesc, axes: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """The bytes of an InputTensor whose reductions (over ``axes``) run through the row kinds in turn."""
    sizes = desc.sizes
    kept = [k for k in range(len(sizes)) if k not in axes]
    length = math.prod(sizes[a] for a in axes)
    kinds = FLOAT_ROWS if desc.data_type.is_float else INTEGER_ROWS
    rows = np.stack([row_values(desc.data_type, length, kinds[n % len(kinds)], rng)
                     for n in range(math.prod(sizes) // length)])
    order = kept + sorted(axes)
    values = np.transpose(rows.reshape([sizes[k] for k in order]), np.argsort(order))
    raw = np.zeros(-(-desc.total_tensor_size_in_bytes // 16) * 16, np.uint8)
    desc.numpy_view(raw, 0)[...] = values  # a broadcast description keeps one of its elements' values
    return raw


# --- plain reductions on every plan family ----------------------------------------------------------------

@dataclass(frozen=True)
class Plain:
    """An ARGMIN or ARGMAX of the InputTensor's own elements."""

    t: T
    sizes: tuple[int, ...]
    axes: tuple[int, ...]
    strides: tuple[int, ...] | None = None
    shift: int = 0  # bytes the InputTensor's address is off its buffer's 256-byte alignment

    def descs(self, index: T) -> tuple[TensorDesc, TensorDesc]:
        out = TensorDesc(index, [1 if k in self.axes else n for k, n in enumerate(self.sizes)])
        return TensorDesc(self.t, self.sizes, self.strides), out


# (name, case, the plan's family, group, whether it splits and elements a load on one multiprocessor: a warp
# combines the pieces of more than 512 outputs, a block those of fewer)
PLAIN = [
    ("rows of a warp", Plain(T.FLOAT32, (40, 64), (1,)), ("rows", 32, False, 4)),
    ("rows of a warp, unaligned", Plain(T.FLOAT32, (40, 64), (1,), shift=4), ("rows", 32, False, 1)),
    ("rows of a warp, single loads", Plain(T.FLOAT16, (40, 63), (1,)), ("rows", 32, False, 1)),
    ("rows of a block", Plain(T.FLOAT32, (16, 3008), (1,)), ("rows", 256, False, 4)),
    ("rows in pieces, a block combines", Plain(T.FLOAT16, (4, 20000), (1,)), ("rows", 256, True, 8)),
    ("one long row in pieces", Plain(T.INT8, (50000,), (0,)), ("rows", 256, True, 16)),
    ("columns", Plain(T.FLOAT32, (8, 4096), (0,)), ("columns", 1, False, 4)),
    ("columns in pieces, a warp combines", Plain(T.FLOAT32, (300, 600), (0,)), ("columns", 1, True, 4)),  # 600 outputs,
    ("columns in pieces, single loads", Plain(T.UINT16, (500, 33), (0,)), ("columns", 1, True, 1)),
    ("non-adjacent axes", Plain(T.FLOAT16, (12, 6, 160), (0, 2)), ("rows", 256, False, 8)),
    ("columns over two axes", Plain(T.FLOAT32, (8, 10, 48), (0, 1)), ("columns", 1, True, 4)),
    ("all axes", Plain(T.FLOAT32, (3, 5, 8), (0, 1, 2)), ("rows", 32, False, 4)),
    ("transposed input", Plain(T.FLOAT16, (6, 40, 48), (1,), (4000, 1, 80)), ("rows", 32, False, 8)),
    ("broadcast input", Plain(T.FLOAT32, (16, 40), (0,), (0, 1)), ("columns", 1, True, 4)),
    ("INT64 rows", Plain(T.INT64, (20, 64), (1,)), ("rows", 32, False, 2)),
    ("UINT64 columns", Plain(T.UINT64, (4, 2048), (0,)), ("columns", 1, False, 2)),
    ("INT32 rows of a block", Plain(T.INT32, (16, 1200), (1,)), ("rows", 256, False, 4)),
    ("UINT32 rows", Plain(T.UINT32, (40, 64), (1,)), ("rows", 32, False, 4)),
    ("INT16 columns", Plain(T.INT16, (3, 8192), (0,)), ("columns", 1, False, 8)),
    ("UINT8 rows", Plain(T.UINT8, (40, 160), (1,)), ("rows", 32, False, 16)),
]


def plain_variants(n: int) -> list[tuple[ReductionKind, NanPolicy, AxisDirection]]:
    """Case ``n``'s runs: ARGMAX (NaN ignored) in one direction, PROPAGATE (ARGMIN or ARGMAX by turns) in
    the other."""
    first, second = (INCREASING, DECREASING) if n % 2 == 0 else (DECREASING, INCREASING)
    return [(ARGMAX, IGNORE, first), ((ARGMIN, ARGMAX)[n // 2 % 2], PROPAGATE, second)]


@needs_gxx
def test_plain_reductions_run_on_the_host_give_the_oracles_indices(tmp_path: Path) -> None:
    rng = np.random.default_rng(15)
    runs, checks = [], []
    for n, (name, case, path) in enumerate(PLAIN):
        index = INDEX_TYPES[n % len(INDEX_TYPES)]
        x, out = case.descs(index)
        raw = tensor_bytes(x, case.axes, rng)
        for kind, nan, direction in plain_variants(n):
            spec = arg_spec(case.t, index, case.axes, kind, nan, direction)
            runs.append(HostRun(spec, [x], out, [raw], [case.shift]))
            checks.append((f"{name} {kind.name} {nan.name} {direction.name}", spec, x, out, raw, path))
    results = run_batch_on_host(runs, tmp_path)
    for (where, spec, x, out, raw, path), ((got, *_), plan) in zip(checks, results):
        assert (plan.family, plan.group, plan.splits > 1, plan.vector) == path, (where, plan)
        values = compared_values(spec, [x], [raw])
        want = oracle_indices(spec, values, out)
        assert spec.reduction is not None
        r = spec.reduction
        reference = arg_reduction_reference([np.asarray(values)],
                                            ArgReductionParams(r.axes, r.direction, out.data_type, r.kind, r.nan_rule))
        assert (reference.reshape(-1).astype(np.int64) == want).all(), f"{where}: the reference and the oracle differ"
        bad = np.flatnonzero(indices_of(got, out) != want)
        assert bad.size == 0, (f"{where}: {bad.size} of {want.size} outputs differ, first {bad[:4].tolist()}: got "
                               f"{indices_of(got, out)[bad[:4]].tolist()}, expected {want[bad[:4]].tolist()}")


# (name, case, blocks of a row's cluster, elements a load) on an H100's 132 multiprocessors, clusters of 8
CLUSTERED = [
    ("one row, 4 blocks", Plain(T.FLOAT16, (1, 32000), (1,)), 4, 8),
    ("8 rows, unaligned", Plain(T.FLOAT32, (8, 8192), (1,), shift=4), 4, 1),
    ("rows of 2 blocks", Plain(T.FLOAT32, (40, 5000), (1,)), 2, 4),
    ("UINT8, 16 lanes", Plain(T.UINT8, (1, 40000), (1,)), 4, 16),
    ("INT64, a short last piece", Plain(T.INT64, (3, 4099), (1,)), 8, 1),
]


@needs_gxx
def test_clustered_rows_run_on_the_host_give_the_oracles_indices(tmp_path: Path) -> None:
    """Rows cut into the blocks of a thread-block cluster (sm_90: plan.cluster_plan), merged through the
    cluster's shared memory: every block's candidate reaches block 0, under both policies and directions."""
    rng = np.random.default_rng(16)
    runs, checks = [], []
    for n, (name, case, blocks, vector) in enumerate(CLUSTERED):
        index = INDEX_TYPES[n % len(INDEX_TYPES)]
        x, out = case.descs(index)
        raw = tensor_bytes(x, case.axes, rng)
        for kind, nan, direction in plain_variants(n):
            spec = arg_spec(case.t, index, case.axes, kind, nan, direction)
            runs.append(HostRun(spec, [x], out, [raw], [case.shift], sm_count=132, clusters=8))
            checks.append((f"{name} {kind.name} {nan.name} {direction.name}", spec, x, out, raw, (blocks, vector)))
    for (where, spec, x, out, raw, path), ((got, *_), plan) in zip(checks, run_batch_on_host(runs, tmp_path)):
        assert plan.cluster and (plan.splits, plan.vector) == path, (where, plan)
        check_indices(where, spec, compared_values(spec, [x], [raw]), out, got)


# --- fused prologues, the min-and-ballot scan and extra outputs -------------------------------------------

def some_nan_inputs(case: Case, rng: np.random.Generator) -> list[np.ndarray]:
    """Spread values (each output's index anywhere in its reduction) with NaN and +inf scales here and
    there: some reductions hold a NaN, some several, some none; +inf gives +inf, or 6 under CLIP (ties at
    the top)."""
    arrays = case.inputs(rng, spread=True)
    _, count = broadcast(case.intermediate, case.sizes, case.scale)
    scale = arrays[1][: count * case.intermediate.size].view(case.intermediate.numpy)
    picks = rng.random(count)
    scale[picks < 0.02] = np.nan
    scale[(picks >= 0.02) & (picks < 0.04)] = np.inf
    return arrays


def prologue_inputs(case: Case, kind: str, rng: np.random.Generator) -> list[np.ndarray]:
    return some_nan_inputs(case, rng) if kind == "some nan" else special_inputs(case, kind, rng)


def case_variants(case: Case, n: int) -> list[Case]:
    """Case ``n``'s graphs: into ARGMAX (NaN ignored) in one direction, into ARGMIN or ARGMAX (by turns)
    under PROPAGATE in the other."""
    return [dataclasses.replace(case, kind=kind.name, nan_policy=nan.name, direction=direction.name)
            for kind, nan, direction in plain_variants(n)]


# (name, case, whether the min-and-ballot scan runs it, kinds of inputs; plans of one multiprocessor)
PROLOGUE = [
    ("rows, no 16-byte load", Case(T.UINT8, (20, 3001), (1,), COLUMN, ROW), False, ["ties", "some nan"]),
    ("split long rows, by blocks", Case(T.UINT8, (4, 20000), (1,)), False, ["some nan"]),
    ("columns, split", Case(T.UINT8, (1030, 32), (0,), COLUMN, ROW, T.FLOAT32, True, "DECREASING", T.UINT32), False,
     ["ties", "some nan"]),
    ("columns", Case(T.INT8, (4, 16384), (0,), COLUMN, ROW, T.FLOAT32, True, "DECREASING", T.INT32), False,
     ["some nan"]),
    ("columns over two axes", Case(T.UINT8, (8, 10, 48), (0, 1), COLUMN, ROW, T.FLOAT16), False, ["ties", "some nan"]),
    ("all axes", Case(T.UINT8, (3, 5, 8), (0, 1, 2), FULL, COLUMN), False, ["some nan"]),
    ("transposed, elements", Case(T.UINT8, (2048, 20), (1,), FULL, None, x_strides=(1, 2048)), False, ["some nan"]),
    ("non-adjacent axes", Case(T.UINT8, (12, 6, 160), (0, 2), COLUMN, FULL), True, ["some nan"]),
    ("8 rows, a last group of 3", Case(T.UINT8, (131, 64), (1,)), True, ["ties", "zeros", "some nan", "one number"]),
    ("8 rows, FLOAT16", Case(T.UINT8, (128, 128), (1,), COLUMN, COLUMN, T.FLOAT16, True, "DECREASING", T.UINT32),
     True, ["some nan", "nan"]),
    ("+inf rows", Case(T.UINT8, (40, 64), (1,), COLUMN, TENSOR, T.FLOAT32, False), True, ["inf", "some nan"]),
    ("split pieces", Case(T.UINT8, (4, 8000), (1,), ROW, COLUMN, T.FLOAT32, True, "DECREASING", T.INT32), True,
     ["zeros", "some nan"]),
    ("split pieces by blocks", Case(T.UINT8, (8, 40000), (1,), COLUMN, TENSOR), True, ["some nan"]),
    ("block rows", Case(T.INT8, (16, 8208), (1,), FULL, ROW, T.FLOAT16, False, "DECREASING"), True, ["some nan"]),
]
# (name, case, extra output types, their layout, misalignment of the first extra)
EXTRAS = [
    ("short rows", Case(T.UINT8, (40, 64), (1,)), [T.FLOAT32, T.FLOAT16], "packed", 0),
    ("short rows, misaligned extra", Case(T.UINT8, (40, 64), (1,)), [T.FLOAT32], "packed", 4),
    ("split rows", Case(T.UINT8, (4, 8000), (1,)), [T.FLOAT32, T.FLOAT16], "padded", 0),
    ("columns, split, transposed extra", Case(T.UINT8, (1030, 32), (0,), COLUMN, ROW, T.FLOAT32, True, "DECREASING",
                                              T.UINT32), [T.FLOAT32], "transposed", 0),
]


def check_indices(where: str, spec: KernelSpec, values: np.ndarray, out: TensorDesc, got: np.ndarray) -> None:
    want = oracle_indices(spec, values, out)
    found = indices_of(got, out)
    bad = np.flatnonzero(found != want)
    assert bad.size == 0, (f"{where}: {bad.size} of {want.size} outputs differ, first {bad[:4].tolist()}: got "
                           f"{found[bad[:4]].tolist()}, expected {want[bad[:4]].tolist()}")


@needs_gxx
def test_prologues_and_extra_outputs_run_on_the_host_give_the_oracles_indices(tmp_path: Path) -> None:
    """Fused DEQUANTIZE_LINEAR (-> CLIP) chains into ARGMAX, and ARGMIN and ARGMAX under PROPAGATE: the
    scan of one take per element, the min-and-ballot scan (several rows a warp, split pieces by warps and by
    blocks, block rows) and kernels writing extra outputs, which store the values themselves."""
    rng = np.random.default_rng(16)
    runs: list[tuple[str, bool, HostRun]] = []  # (what, whether the ballot scan runs it, the run)
    for n, (name, case, ballot, kinds) in enumerate(PROLOGUE):
        by_kind = {kind: prologue_inputs(case, kind, rng) for kind in kinds}
        for changed in case_variants(case, n):
            spec, descs, out = fused(changed)
            for kind in kinds:
                where = f"{name}, {kind}: {changed.kind} {changed.nan_policy} {changed.direction}"
                runs.append((where, ballot, HostRun(spec, descs, out, by_kind[kind], [0] * len(descs))))
    for n, (name, case, types, layout, shift) in enumerate(EXTRAS):
        inputs = some_nan_inputs(case, rng)
        for changed in case_variants(case, n):
            spec, descs, out, extras = with_extras(changed, types, layout)
            shifts = [shift] + [0] * (len(extras) - 1)
            runs.append((f"{name}: {changed.kind} {changed.nan_policy} {changed.direction}", False,
                         HostRun(spec, descs, out, inputs, [0] * len(descs), extras,
                                 [sentinel_buffer(d) for d in extras], shifts)))
    results = run_batch_on_host([run for _, _, run in runs], tmp_path)
    for (where, ballot, run), ((got, *written), plan) in zip(runs, results):
        assert argmin_c.uses_ballot(run.spec, plan) is ballot, (where, plan)
        check_indices(where, run.spec, compared_values(run.spec, run.descs, run.inputs), run.out, got)
        operands = [None if d is None else operand_view(raw, d) for raw, d in zip(run.inputs, run.descs)]
        for j, (desc, value) in enumerate(zip(run.extra_outputs, run.spec.extra)):
            check_extra(written[j], desc, value, operands, run.spec.scalars, f"{where}, extra {j + 1}")


@needs_gxx
def test_integer_values_of_the_ballot_scan_run_on_the_host_give_the_oracles_indices(tmp_path: Path) -> None:
    """CLIP [-5, 7] (or [0, 7]) of integers -> ARGMAX: the integer max and ties at the upper bound; PROPAGATE
    changes nothing for values that hold no NaN."""
    runs, checks = [], []
    for n, (t, index) in enumerate([(T.INT16, T.INT64), (T.UINT8, T.UINT32), (T.INT32, T.INT32), (T.UINT64, T.UINT64),
                                    (T.INT64, T.INT64)]):
        low = 0 if t.integer_range[0] == 0 else -5
        spec, descs, out = fused_clip(t, (20, 64), low, 7, "INCREASING", index)
        x = edge_values(t, 20 * 64, np.random.default_rng(n))
        inputs = [packed_bytes(x, -(-x.nbytes // 4) * 4)]
        for reduction, nan, direction in plain_variants(n):
            changed = variant(spec, reduction, nan, direction)
            runs.append(HostRun(changed, descs, out, inputs, [0]))
            checks.append((f"{t.name}: {reduction.name} {nan.name} {direction.name}", changed, descs, out, inputs))
    for (where, spec, descs, out, inputs), ((got, *_), plan) in zip(checks, run_batch_on_host(runs, tmp_path)):
        assert argmin_c.uses_ballot(spec, plan), where
        check_indices(where, spec, compared_values(spec, descs, inputs), out, got)


# --- compiled by nvcc (ptxas checks each PTX instruction), where it is installed ---------------------------

def cubin(sources: Sequence[str], folder: Path, arch: str = "sm_90") -> dict[str, tuple[int, int]]:
    """Each kernel of ``sources`` compiled together for ``arch`` as the backend compiles them: its registers
    (ptxas -v) and its instructions (its .text section's bytes, 16 a Hopper instruction)."""
    assert NVCC is not None
    source, binary = folder / f"kernels_{arch}.cu", folder / f"kernels_{arch}.cubin"
    source.write_text(translation_unit(sources))
    command = [NVCC, "-cubin", f"-arch={arch}", *OPTIONS, "-Xptxas", "-v", str(source), "-o", str(binary)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    registers, kernel = {}, None
    for line in result.stderr.splitlines():
        entry = re.search(r"Compiling entry function '(\w+)'", line)
        kernel = entry.group(1) if entry else kernel
        used = re.search(r"Used (\d+) registers", line)
        if used and kernel is not None:
            registers[kernel] = int(used.group(1))
    sizes = _text_sizes(binary.read_bytes())
    assert set(sizes) == set(registers) and len(sizes) == len(sources)
    return {name: (registers[name], sizes[name] // 16) for name in sizes}


def _text_sizes(elf: bytes) -> dict[str, int]:
    """The byte size of each ``.text.<kernel>`` section of a 64-bit little-endian ELF file (a cubin)."""
    def number(at: int, size: int) -> int:
        return int.from_bytes(elf[at:at + size], "little")

    start, size, count, names = number(0x28, 8), number(0x3A, 2), number(0x3C, 2), number(0x3E, 2)
    headers = [start + k * size for k in range(count)]
    strings = number(headers[names] + 0x18, 8)
    found = {}
    for header in headers:
        at = strings + number(header, 4)
        name = elf[at:elf.index(b"\0", at)].decode()
        if name.startswith(".text."):
            found[name[len(".text."):]] = number(header + 0x20, 8)
    return found


VARIANTS = [(ARGMAX, IGNORE, INCREASING), (ARGMIN, PROPAGATE, DECREASING), (ARGMAX, PROPAGATE, INCREASING)]


def gpu_sources(spec: KernelSpec, descs: Sequence[TensorDesc | None], out: TensorDesc,
                extras: Sequence[TensorDesc] = ()) -> list[str]:
    """Every kernel of ``spec`` as on a GPU of 132 multiprocessors: its plan's, the one for unaligned
    addresses, the combine pass."""
    return argmin_sources_with(spec, descs, out, extras)


def compiled_sources() -> list[str]:
    """Every plan family's kernels under ARGMAX and PROPAGATE: plain reductions of several types, fused
    chains (the min-and-ballot scan with 8 rows a warp, by blocks, in pieces; columns), extra outputs."""
    sources = []
    for _, plain, _ in [PLAIN[k] for k in (0, 3, 4, 7, 8, 14)]:
        x, out = plain.descs(T.INT64)
        for kind, nan, direction in VARIANTS:
            sources += gpu_sources(arg_spec(plain.t, T.INT64, plain.axes, kind, nan, direction), [x], out)
    for case in [Case(T.UINT8, (65536, 4096), (1,)), Case(T.INT8, (4096, 32000), (1,), TENSOR, TENSOR, T.FLOAT32, False),
                 Case(T.UINT8, (64, 256000), (1,), COLUMN, COLUMN, T.FLOAT16), Case(T.UINT8, (48, 65536), (0,))]:
        spec, descs, out = fused(case)
        for kind, nan, direction in VARIANTS:
            sources += gpu_sources(variant(spec, kind, nan, direction), descs, out)
    spec, descs, out, extras = with_extras(Case(T.UINT8, (4096, 64), (1,)), [T.FLOAT32, T.FLOAT16], "packed")
    for kind, nan, direction in VARIANTS:
        sources += gpu_sources(variant(spec, kind, nan, direction), descs, out, extras)
    spec, descs, out = fused_clip(T.INT16, (64, 4096), -5, 7, "INCREASING", T.INT64)
    sources += gpu_sources(variant(spec, ARGMAX, PROPAGATE, DECREASING), descs, out)
    return sources


@needs_nvcc
def test_every_argmax_and_propagate_kernel_compiles_for_sm_90(tmp_path: Path) -> None:
    sources = compiled_sources()
    assert sum("__ballot_sync" in s for s in sources) >= 7 and sum("beats(" in s for s in sources) >= 20
    assert len(cubin(sources, tmp_path)) == len(sources)


@needs_nvcc
def test_the_nan_propagating_ballot_scan_compiles_before_sm_80(tmp_path: Path) -> None:
    """min.NaN.f32 and max.NaN.f32 are sm_80's: earlier GPUs take the min or max, or NaN by a select."""
    sources = [s for s in compiled_sources() if "__ballot_sync" in s and ".NaN.f32" in s]
    assert len(sources) >= 4
    assert len(cubin(sources, tmp_path, "sm_75")) == len(sources)


@needs_nvcc
def test_argmax_takes_the_registers_and_instructions_of_argmin(tmp_path: Path) -> None:
    """ARGMAX is ARGMIN's kernel with the comparison mirrored: on sm_90 each of its kernels uses as many
    registers and instructions as ARGMIN's, on the benchmarks' shapes (rows and columns of FLOAT32, rows of
    FLOAT16, INT8 split in pieces, all axes, DEQUANTIZE_LINEAR -> CLIP fused into the ballot scan)."""
    pairs = []
    for t, sizes, axes in [(T.FLOAT32, (16384, 16384), (1,)), (T.FLOAT32, (16384, 16384), (0,)),
                           (T.FLOAT16, (16384, 16384), (1,)), (T.INT8, (4, 1 << 20), (1,)), (T.FLOAT32, (1 << 24,), (0,))]:
        x = TensorDesc(t, sizes)
        out = TensorDesc(T.INT64, [1 if k in axes else n for k, n in enumerate(sizes)])
        pairs.append([gpu_sources(arg_spec(t, T.INT64, axes, kind), [x], out) for kind in (ARGMIN, ARGMAX)])
    spec, descs, out = fused(Case(T.UINT8, (65536, 4096), (1,)))
    pairs.append([gpu_sources(variant(spec, kind, IGNORE, INCREASING), descs, out) for kind in (ARGMIN, ARGMAX)])
    (tmp_path / "argmin").mkdir()
    argmin = cubin([s for pair in pairs for s in pair[0]], tmp_path / "argmin")
    argmax = cubin([s for pair in pairs for s in pair[1]], tmp_path)
    assert len(argmin) == 13 and argmin == argmax  # split rows: one kernel (argmin_c.one_pass)


# --- on a GPU: the plain kernels against the oracle, the fused ones against the reference ------------------

needs_cuda = pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")
GPU_VARIANTS = [(ARGMAX, IGNORE), (ARGMIN, PROPAGATE), (ARGMAX, PROPAGATE)]


def pooled_input(case: ArgMinCase, t: T, rng: np.random.Generator, first_kind: int) -> tuple[np.ndarray, np.ndarray,
                                                                                              np.ndarray]:
    """A packed input of ``case`` whose reductions are rows of a small pool (rows of each kind in turn): the
    input, the pool and which pool row each output reduces (row-major over the kept axes)."""
    shape, axes = case.shape, case.axes
    kept = [k for k in range(len(shape)) if k not in axes]
    length = math.prod(shape[k] for k in axes)
    outputs = math.prod(shape) // length
    kinds = FLOAT_ROWS if t.is_float else INTEGER_ROWS
    pool = np.stack([row_values(t, length, kinds[(first_kind + n) % len(kinds)], rng)
                     for n in range(min(case.pool, outputs))])
    pick = rng.integers(0, pool.shape[0], outputs)
    pick[: pool.shape[0]] = np.arange(pool.shape[0])  # every pool row is used
    order = kept + sorted(axes)
    x = np.ascontiguousarray(np.transpose(pool[pick].reshape([shape[k] for k in order]), np.argsort(order)))
    return x, pool, pick


# Every plan of tests/test_cuda_large.py on FLOAT32; INT16 (no NaN: ARGMAX alone) on one plan of each family.
# The clustered cases also with clusters off (test_cuda_large.CLUSTERED_CASES).
LARGE = [(name, "FLOAT32", True) for name in ARGMIN_CASES] + [
    (name, "INT16", True) for name in ("rows of a warp", "rows of a block", "few long rows, a block combines",
                                       "columns in pieces, a warp combines", "many columns")] + [
    (name, "FLOAT32", False) for name in CLUSTERED_CASES]


@needs_cuda
@pytest.mark.parametrize(("name", "data_type", "clusters"), LARGE)
def test_large_argmax_and_propagate_match_the_oracle(name: str, data_type: str, clusters: bool,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Each plan under ARGMAX and PROPAGATE, directions by turns, from an aligned input and (ARGMAX) from one
    an element off (the single-load kernel)."""
    import cupy

    gpu = dml.Device("cuda")
    takes = plan_setting(gpu, name, clusters, monkeypatch)
    case, t = ARGMIN_CASES[name], T[data_type]
    n = sorted(ARGMIN_CASES).index(name)
    x, pool, pick = pooled_input(case, t, np.random.default_rng(n), n)
    x_desc, out_desc = argmin_descs(case, t)
    for k, (kind, nan) in enumerate(GPU_VARIANTS if t.is_float else GPU_VARIANTS[:1]):
        direction = ("INCREASING", "DECREASING")[(n + k) % 2]
        make = dml.ArgMaxDesc if kind is ARGMAX else dml.ArgMinDesc
        kernel: Any = gpu.compile_operator(gpu.create_operator(make(x_desc, out_desc, case.axes, direction,
                                                                    nan.name))).kernel
        assert takes(kernel.plan), (name, kernel.plan)
        found = np.array([oracle.arg_of(row, direction, kind is ARGMAX, nan is PROPAGATE) for row in pool.tolist()])
        expected = found[pick]
        for shift in ((0, 1) if k == 0 else (0,)):
            x_gpu, x_address = on_gpu(x, shift)  # held until the result is read: its memory stays ours
            index = out_desc.data_type.numpy
            out = cupy.full(out_desc.element_count, np.iinfo(index).max, dtype=index)  # no index is all ones
            kernel.run([x_address, int(out.data.ptr)])
            got = cupy.asnumpy(out).astype(np.int64)
            del x_gpu
            bad = np.flatnonzero(got != expected)
            assert bad.size == 0, (f"{name} {data_type} {kind.name} {nan.name} {direction} shift {shift}: {bad.size} "
                                   f"outputs differ, first {bad[:4].tolist()}: got {got[bad[:4]].tolist()}, "
                                   f"expected {expected[bad[:4]].tolist()}")


# (name, case, whether the min-and-ballot scan runs it on 132 multiprocessors, kinds of inputs)
GPU_FUSED = [
    ("8 rows", Case(T.UINT8, (20000, 1024), (1,)), True, ["ties", "some nan"]),
    ("8 rows, a last group of 3, FLOAT16", Case(T.UINT8, (20003, 1024), (1,), COLUMN, COLUMN, T.FLOAT16), True,
     ["some nan"]),
    ("block rows", Case(T.INT8, (2200, 16384), (1,), TENSOR, TENSOR, T.FLOAT32, False), True, ["some nan"]),
    ("pieces by warps", Case(T.UINT8, (64, 8192), (1,), COLUMN, ROW), True, ["ties", "some nan"]),
    ("pieces by blocks", Case(T.INT8, (1024, 65536), (1,), TENSOR, TENSOR, T.FLOAT32, False), True, ["some nan"]),
    ("pieces of few loads", Case(T.INT8, (64, 256000), (1,), COLUMN, COLUMN), False, ["some nan"]),
    ("columns", Case(T.UINT8, (64, 65536), (0,), ROW, FULL, T.FLOAT16), False, ["some nan"]),
    ("columns, split", Case(T.UINT8, (4096, 64), (0,), COLUMN, ROW, T.FLOAT32, True, "DECREASING", T.UINT32), False,
     ["ties", "some nan"]),
]


@needs_cuda
@pytest.mark.parametrize(("case", "ballot", "kinds"), [c[1:] for c in GPU_FUSED], ids=[c[0] for c in GPU_FUSED])
def test_fused_argmax_and_propagate_on_cuda_equal_unfused_and_the_reference(case: Case, ballot: bool,
                                                                            kinds: list[str]) -> None:
    """DEQUANTIZE_LINEAR (-> CLIP) -> ARGMAX, and ARGMIN and ARGMAX under PROPAGATE: the fused kernel, the
    graph without fusion and the nodes one by one give the same indices on the GPU, which are the NumPy
    reference's over the values the chain gives."""
    n = [c for _, c, *_ in GPU_FUSED].index(case)
    rng = np.random.default_rng(n)
    for changed in case_variants(case, n):
        spec, descs, out = fused(changed)
        assert spec.reduction is not None
        r = spec.reduction
        for kind in kinds:
            inputs = prologue_inputs(changed, kind, rng)
            with using("cuda") as device:
                kernel: Any = device.backend.compile_spec(device, spec, descs, out)
                assert argmin_c.uses_ballot(spec, kernel.plan) is ballot
                graph = changed.graph(device)
                assert_fused_equals_unfused(device, graph, inputs)
                (got,) = run_graph(device, graph, inputs, [np.zeros(out.total_tensor_size_in_bytes, np.uint8)])
            values = compared_values(spec, descs, inputs)
            want = arg_reduction_reference([np.asarray(values)],
                                           ArgReductionParams(r.axes, r.direction, out.data_type, r.kind, r.nan_rule))
            assert (indices_of(got, out) == want.reshape(-1).astype(np.int64)).all(), \
                f"{kind}: {changed.kind} {changed.nan_policy} {changed.direction}"
