"""Greedy decoding's reduction on CUDA: ARGMAX (and ARGMIN) over the last axis of ``[batch, vocab]`` FLOAT16 or
FLOAT32 logits, and the functional calls that run it on new arrays.

A split row's pieces are merged by the scan itself, the last piece of each output merging them all
(``argmin_c.one_pass``): one kernel, no combine pass, its counters left at zero for the next launch. Its
pieces are one unrolled step of loads a thread (``plan.ROW_PIECE_LOADS``), the positions past a scan's end
taken by one guarded step. A functional call on a new CuPy array or PyTorch tensor laid out like one run
before launches the kernel on the arrays' addresses (``ArgMinKernel.prepare_addresses``), on CuPy's current
stream or PyTorch's. On the CPU, a small call writes its output from one compiled call.

Without a GPU: the plans and the sources; the kernels run on the host under emulation (tests/cuda_emulation.py)
against the independent oracle (ties, NaN, rows of NaN, +-inf, -0.0 and +0.0, odd vocabularies, unaligned
inputs, both directions, PROPAGATE), which also checks that every counter is back at zero. On a GPU: the
kernel over batch 1 to 256 against NumPy's bits computed here, through ``execute``, a recorded command list
replayed many times, and the functional API on CuPy arrays and PyTorch tensors.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import opendml as dml
from opendml import AxisDirection, TensorDesc
from opendml import DataType as T
from opendml.backends.cpu_kernels.argmin import call as argmin_engine
from opendml.backends.cuda import argmin_c
from opendml.backends.cuda.plan import BLOCK, ROW_PIECE_LOADS, plan_argmin
from opendml.backends.layout import split_axes
from opendml.enums import NanPolicy
from opendml.kernels.spec import ReductionKind
from tests.conftest import CUDA_MISSING
from tests.cuda_emulation import HostRun, run_batch_on_host
from tests.test_cuda_argmax import (
    arg_spec,
    case_variants,
    check_indices,
    compared_values,
    needs_gxx,
    prologue_inputs,
    tensor_bytes,
)
from tests.test_cuda_lowering import argmin_sources
from tests.test_cuda_prologue import Case, fused

ARGMIN, ARGMAX = ReductionKind.ARGMIN, ReductionKind.ARGMAX
IGNORE, PROPAGATE = NanPolicy.IGNORE, NanPolicy.PROPAGATE
INCREASING, DECREASING = AxisDirection.INCREASING, AxisDirection.DECREASING
needs_cuda = pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")
DECODE_SHAPES = [(b, v) for b in (1, 2, 8, 64, 256) for v in (32000, 50257, 128256, 256000)]


def decode_plan(batch: int, vocab: int, t: T, sm_count: int = 132) -> Any:
    x, out = TensorDesc(t, [batch, vocab]), TensorDesc(T.INT64, [batch, 1])
    spec = arg_spec(t, T.INT64, (1,), ARGMAX)
    kept, reduced = split_axes(x.sizes, x.effective_strides, out.effective_strides, (1,))
    return spec, plan_argmin(x.sizes, x.effective_strides, (1,), kept, reduced, sm_count, t.size)


# --- plans and sources -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("t", [T.FLOAT16, T.FLOAT32])
def test_decode_shapes_run_one_kernel_whose_pieces_are_one_unrolled_step(t: T) -> None:
    """Every decoding shape: rows of a block, cut into pieces of at least ROW_PIECE_LOADS loads a thread
    (FLOAT16 [64, 128256]: 8 pieces, not the 32 of 2 loads a thread that took 13.2 us), each row's pieces merged
    by the scan (one kernel)."""
    for batch, vocab in DECODE_SHAPES:
        spec, plan = decode_plan(batch, vocab, t)
        assert (plan.family, plan.group) == ("rows", BLOCK), (batch, vocab, plan)
        if plan.splits > 1:
            assert argmin_c.one_pass(spec, plan), (batch, vocab, plan)
            assert plan.splits <= math.ceil(vocab / (BLOCK * plan.vector * ROW_PIECE_LOADS)), (batch, vocab, plan)
    _, plan = decode_plan(64, 128256, T.FLOAT16)
    assert (plan.vector, plan.splits, plan.lanes) == (8, 8, False)  # 512 blocks: one candidate a thread
    _, plan = decode_plan(8, 128256, T.FLOAT16)
    assert (plan.vector, plan.splits, plan.lanes) == (8, 8, True)  # 64 blocks: a candidate per element
    _, plan = decode_plan(1, 50257, T.FLOAT16)  # an odd vocabulary: element by element, 2048-element pieces
    assert (plan.vector, plan.splits) == (1, 25)


def test_a_split_row_kernel_counts_its_pieces_and_takes_its_last_positions_in_one_step() -> None:
    spec, _ = decode_plan(8, 128256, T.FLOAT16)
    x, out = TensorDesc(T.FLOAT16, [8, 128256]), TensorDesc(T.INT64, [8, 1])
    sources = argmin_sources(spec, [x], out)
    assert len(sources) == 2  # the 16-byte plan's and the unaligned one's: no combine pass
    for source in sources:
        assert "ull pout, ull pv, ull pi, ull pc)" in source
        # 8 pieces of 8 warps: 64 partial results an output, the 64th warp to count merges them
        assert "((float*)pv)[o * 64ull + s * 8ull + (threadIdx.x >> 5)] = bv[0];" in source
        assert "last = atomicAdd((unsigned int*)pc + o, 1u) == 63u;" in source
        assert "((unsigned int*)pc)[o] = 0u;" in source  # the counter set back for the next launch
        assert "__ldcg((const float*)pv + o * 64ull + k)" in source
        assert "__syncthreads" not in source  # warps merge by shuffles alone
        assert "for (; q < stop; q += 256ull)" not in source and "for (; r < stop; r += 256ull)" not in source
    assert "const ull c7 = q + 7ull * 256ull < stop ? q + 7ull * 256ull : stop - 1ull;" in sources[0]
    assert "if (q + 7ull * 256ull < stop) {" in sources[0]
    # a candidate per element of a load (lanes), merged pairwise after the scan
    assert "bv[8]; ull bi[8];" in sources[0] and "scan_take(bv[7], bi[7], v, (c7) * 8ull + 7ull)" in sources[0]
    assert "take(bv[0], bi[0], bv[4], bi[4]);" in sources[0] and "bv[1]; ull bi[1];" in sources[1]


def test_columns_and_the_ballot_scan_keep_their_combine_pass() -> None:
    spec = arg_spec(T.FLOAT32, T.INT64, (0,))
    x, out = TensorDesc(T.FLOAT32, [4096, 64]), TensorDesc(T.INT64, [1, 64])
    kept, reduced = argmin_c.layouts(spec, [x], out)
    plan = argmin_c.plan(spec, x, kept, reduced, 132)
    assert plan.family == "columns" and plan.splits > 1 and not argmin_c.one_pass(spec, plan)
    assert len(argmin_sources(spec, [x], out)) == 3
    spec, descs, out = fused(Case(T.INT8, (1024, 65536), (1,)))
    kept, reduced = argmin_c.layouts(spec, descs, out)
    plan = argmin_c.plan(spec, descs[0], kept, reduced, 132)  # type: ignore[arg-type]
    assert argmin_c.uses_ballot(spec, plan) and plan.splits > 1 and not argmin_c.one_pass(spec, plan)


# --- on the host, under emulation ------------------------------------------------------------------------------

# (name, InputTensor type, sizes, bytes the input is off its buffer's alignment, whether a thread keeps a
# candidate per element of a load); on one multiprocessor (lanes where the pieces are at most 2)
DECODE_HOST = [
    ("FLOAT16, 16-byte loads", T.FLOAT16, (4, 40000), 0, False),
    ("FLOAT16, an odd vocabulary", T.FLOAT16, (3, 40001), 0, False),
    ("FLOAT32, unaligned", T.FLOAT32, (2, 33000), 4, False),
    ("FLOAT32, one row", T.FLOAT32, (1, 70000), 0, False),
    ("FLOAT16, pieces of a last partial step", T.FLOAT16, (5, 20000), 0, False),
    ("FLOAT16, lanes", T.FLOAT16, (1, 20000), 0, True),
    ("FLOAT32, lanes", T.FLOAT32, (1, 16000), 0, True),
]


@needs_gxx
def test_decode_kernels_run_on_the_host_give_the_oracles_indices(tmp_path: Path) -> None:
    """Each case under ARGMAX and ARGMIN, IGNORE and PROPAGATE, both directions: rows of edge values, of numbers
    only (ties of -0.0 and +0.0 among them), with some NaN, all NaN and of the type's limits (+-inf)."""
    rng = np.random.default_rng(31)
    runs, checks = [], []
    variants = [(ARGMAX, IGNORE, INCREASING), (ARGMAX, PROPAGATE, DECREASING), (ARGMIN, IGNORE, DECREASING),
                (ARGMIN, PROPAGATE, INCREASING)]
    for name, t, sizes, shift, lanes in DECODE_HOST:
        x, out = TensorDesc(t, sizes), TensorDesc(T.INT64, [sizes[0], 1])
        raw = tensor_bytes(x, (1,), rng)  # the harness places it ``shift`` bytes into its buffer
        for kind, nan, direction in variants:
            spec = arg_spec(t, T.INT64, (1,), kind, nan, direction)
            runs.append(HostRun(spec, [x], out, [raw], [shift]))
            checks.append((f"{name}: {kind.name} {nan.name} {direction.name}", spec, x, out, raw, shift, lanes))
    results = run_batch_on_host(runs, tmp_path)
    for (where, spec, x, out, raw, shift, lanes), ((got, *_), plan) in zip(checks, results):
        assert plan.splits > 1 and argmin_c.one_pass(spec, plan) and plan.lanes is lanes, (where, plan)
        assert (plan.vector == 1) == (shift > 0 or x.sizes[1] % 2 == 1), (where, plan)
        check_indices(where, spec, compared_values(spec, [x], [raw]), out, got)


@needs_gxx
def test_pieces_merged_by_blocks_give_the_oracles_indices(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``merge.WARP_PARTIALS_MOST`` partial results an output (lowered to 8 here, so the decode cases take
    it), each piece merges over its block and counts once, and the last block to count merges every piece
    with all its threads: ARGMAX PROPAGATE and ARGMIN IGNORE of the cases' rows give the oracle's indices."""
    monkeypatch.setattr(argmin_c.merge, "WARP_PARTIALS_MOST", 8)
    rng = np.random.default_rng(32)
    runs, checks = [], []
    for name, t, sizes, shift, _ in DECODE_HOST:
        x, out = TensorDesc(t, sizes), TensorDesc(T.INT64, [sizes[0], 1])
        raw = tensor_bytes(x, (1,), rng)
        for kind, nan, direction in [(ARGMAX, PROPAGATE, INCREASING), (ARGMIN, IGNORE, DECREASING)]:
            spec = arg_spec(t, T.INT64, (1,), kind, nan, direction)
            runs.append(HostRun(spec, [x], out, [raw], [shift]))
            checks.append((f"{name}: {kind.name} {nan.name} {direction.name}", spec, x, out, raw))
    results = run_batch_on_host(runs, tmp_path)
    for (where, spec, x, out, raw), ((got, *_), plan) in zip(checks, results):
        assert argmin_c.merge.by_block(spec, plan), (where, plan)
        check_indices(where, spec, compared_values(spec, [x], [raw]), out, got)


def test_a_reduction_of_many_pieces_merges_them_by_blocks() -> None:
    """ARGMIN over all of 2**28 FLOAT32 elements: 2112 pieces of 8 warps, so each piece merges over its block,
    its first thread stores and counts, and the last block's 256 threads merge the 2112 results."""
    spec = arg_spec(T.FLOAT32, T.INT64, (0,), ARGMIN)
    x, out = TensorDesc(T.FLOAT32, [1 << 28]), TensorDesc(T.INT64, [1])
    (source, *_) = argmin_sources(spec, [x], out)
    assert "last = atomicAdd((unsigned int*)pc + o, 1u) == 2111u;" in source
    assert "((float*)pv)[o * 2112ull + s] = bv[0];" in source
    assert "for (ull k = threadIdx.x; k < 2112ull; k += 256ull) {" in source


@needs_gxx
def test_a_warps_pieces_merged_by_the_scan_give_the_oracles_indices(tmp_path: Path) -> None:
    """A fused DEQUANTIZE_LINEAR -> CLIP -> ARGMIN over few rows no 16-byte load divides: a warp's pieces (the
    scan of one take an element), merged by the scan's last warp of each output."""
    case = Case(T.UINT8, (2, 7001), (1,))
    rng = np.random.default_rng(5)
    runs = []
    for n, changed in enumerate(case_variants(case, 1) + case_variants(case, 2)):
        spec, descs, out = fused(changed)
        for kind in ("ties", "some nan"):
            runs.append((f"{kind}: {n}", HostRun(spec, descs, out, prologue_inputs(changed, kind, rng),
                                                 [0] * len(descs))))
    results = run_batch_on_host([run for _, run in runs], tmp_path)
    for (where, run), ((got, *_), plan) in zip(runs, results):
        assert (plan.group, plan.vector) == (32, 1) and plan.splits > 1 and argmin_c.one_pass(run.spec, plan), plan
        check_indices(where, run.spec, compared_values(run.spec, run.descs, run.inputs), run.out, got)


# --- the CPU: a small call is one compiled call ----------------------------------------------------------------

def expected_indices(x: np.ndarray, largest: bool, propagate: bool, decreasing: bool) -> np.ndarray:
    """Each row's index computed here: the first (last) of the largest (smallest) numbers, -0.0 equal to +0.0;
    NaN skipped (a row of only NaN: index 0, or the last under DECREASING), or under PROPAGATE the first (last)
    NaN."""
    values = x.astype(np.float64)[:, ::-1] if decreasing else x.astype(np.float64)  # the first found is the one
    nan = np.isnan(values)
    filled = np.where(nan, -np.inf if largest else np.inf, values)
    best = filled.max(axis=1) if largest else filled.min(axis=1)
    first = ((filled == best[:, None]) & ~nan).argmax(axis=1)
    first = np.where(nan.all(axis=1), 0, first)
    if propagate:
        first = np.where(nan.any(axis=1), nan.argmax(axis=1), first)
    found = values.shape[1] - 1 - first if decreasing else first
    return found.astype(np.int64).reshape(-1, 1)


def special_logits(shape: tuple[int, int], dtype: Any, rng: np.random.Generator) -> np.ndarray:
    """Rows in turn: random values with their largest twice, -0.0 and +0.0 the largest, some NaN, all NaN,
    +inf and -inf, only -inf and NaN."""
    batch, vocab = shape
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    for r in range(batch):
        row = x[r]
        kind = r % 6
        if kind == 0:
            row[rng.integers(0, vocab)] = row.max()
        elif kind == 1:
            row[:] = -np.abs(row) - 1
            row[rng.integers(0, vocab, 3)] = -0.0
            row[rng.integers(0, vocab, 3)] = 0.0
        elif kind == 2:
            row[rng.integers(0, vocab, 5)] = np.nan
        elif kind == 3:
            row[:] = np.nan
        elif kind == 4:
            row[rng.integers(0, vocab, 2)] = np.inf
            row[rng.integers(0, vocab, 2)] = -np.inf
        else:
            row[:] = -np.inf
            row[rng.integers(0, vocab, 4)] = np.nan
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_a_small_cpu_call_on_new_arrays_writes_its_output_from_one_compiled_call(dtype: Any,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """After the first call of a layout, functional ARGMAX/ARGMIN on new small arrays take no per-slot state
    (greedy decoding on the CPU: the call's cost was its host work), and give the indices computed here."""
    rng = np.random.default_rng(3)
    cpu = dml.Device("cpu")
    for largest, propagate, decreasing in [(True, False, False), (False, True, True), (True, True, False)]:
        kwargs = {"nan_policy": "PROPAGATE" if propagate else "IGNORE",
                  "axis_direction": "DECREASING" if decreasing else "INCREASING", "device": cpu}
        call = dml.argmax if largest else dml.argmin
        first = special_logits((12, 300), dtype, rng)
        call(first, 1, **kwargs)  # remembers the layout
        with monkeypatch.context() as patched:
            patched.setattr(argmin_engine.State, "reused", _refuse)
            for _ in range(3):
                x = special_logits((12, 300), dtype, rng)
                got = call(x, 1, **kwargs)
                assert got.dtype == np.int64 and got.shape == (12, 1)
                assert (got == expected_indices(x, largest, propagate, decreasing)).all()


def _refuse(*args: object) -> None:
    raise AssertionError("a per-slot state was made")


def test_a_cpu_call_into_a_strided_out_goes_by_state() -> None:
    x = special_logits((6, 40), np.float32, np.random.default_rng(4))
    out = np.zeros((6, 2), np.int64)[:, :1]  # every other element: not C-contiguous
    dml.argmax(x, 1, out=out, device="cpu")
    got = dml.argmax(x.copy(), 1, out=out, device="cpu")
    assert got is out and (out == expected_indices(x, True, False, False)).all()


# --- on a GPU ---------------------------------------------------------------------------------------------------

GPU_SHAPES = [(1, 32000), (3, 50257), (8, 128256), (64, 128256), (256, 32000), (2, 256000), (65, 50257)]


@pytest.fixture
def cupy() -> Iterator[Any]:
    if CUDA_MISSING is not None:
        pytest.skip(f"no usable CUDA GPU: {CUDA_MISSING}")
    import cupy

    yield cupy


@needs_cuda
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("shape", GPU_SHAPES, ids=[f"{b}x{v}" for b, v in GPU_SHAPES])
def test_the_decode_kernel_on_cuda_gives_the_indices_computed_here(cupy: Any, shape: tuple[int, int],
                                                                   dtype: Any) -> None:
    """Functional calls on new CuPy arrays (the first runs the ordinary path, the rest the prepared launch),
    ARGMAX and ARGMIN under both policies and directions, from an aligned input and one an element off."""
    rng = np.random.default_rng(shape[0] * 7 + shape[1])
    for largest, propagate, decreasing in [(True, False, False), (True, True, True), (False, False, True),
                                           (False, True, False)]:
        call = dml.argmax if largest else dml.argmin
        kwargs = {"nan_policy": "PROPAGATE" if propagate else "IGNORE",
                  "axis_direction": "DECREASING" if decreasing else "INCREASING"}
        for shift in (0, 1):
            for _ in range(3):
                host = special_logits(shape, dtype, rng)
                x = cupy.empty(host.size + shift, dtype)[shift:].reshape(shape)
                x[...] = cupy.asarray(host)
                got = call(x, 1, **kwargs)
                assert isinstance(got, cupy.ndarray) and got.shape == (shape[0], 1)
                want = expected_indices(host, largest, propagate, decreasing)
                bad = np.flatnonzero(cupy.asnumpy(got) != want)
                assert bad.size == 0, (shape, dtype, largest, propagate, decreasing, shift, bad[:4])


@needs_cuda
def test_a_recorded_dispatch_replayed_many_times_leaves_its_counters_at_zero(cupy: Any,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A command list of one split ARGMAX over two inputs in turn, executed 300 times by a queue with CUDA
    graphs and by one without: every answer right, so every launch found its counters at zero."""
    device = dml.Device("cuda")
    monkeypatch.setattr(device.backend, "cluster_blocks", 1)  # rows split with counters, not a cluster's blocks
    x_desc, out_desc = TensorDesc("FLOAT16", [8, 128256]), TensorDesc("INT64", [8, 1])
    op = device.compile_operator(device.create_operator(dml.ArgMaxDesc(x_desc, out_desc, [1])))
    assert argmin_c.one_pass(op.kernel.spec, op.kernel.plan)  # type: ignore[attr-defined]
    rng = np.random.default_rng(8)
    hosts = [special_logits((8, 128256), np.float16, rng) for _ in range(2)]
    inputs = [device.buffer_from(h) for h in hosts]
    outputs = [device.create_buffer(64) for _ in hosts]
    recorder, work = device.create_command_recorder(), device.create_command_list()
    for x, out in zip(inputs, outputs):
        table = device.create_binding_table(op)
        table.bind_inputs([x])
        table.bind_outputs([out])
        recorder.record_dispatch(work, op, table)
    work.close()
    for graphs in (True, False):
        queue = device.create_command_queue(cuda_graphs=graphs)
        for _ in range(300):
            queue.execute_command_lists([work])
        queue.wait()
        for host, out in zip(hosts, outputs):
            assert (out.to_numpy().view(np.int64).reshape(-1, 1) == expected_indices(host, True, False, False)).all()
    for host, x, out in zip(hosts, inputs, outputs):  # execute: partial results and counters of its own
        op.execute([x], [out])
        assert (out.to_numpy().view(np.int64).reshape(-1, 1) == expected_indices(host, True, False, False)).all()


@needs_cuda
def test_a_functional_call_on_a_new_cupy_array_launches_without_the_ordinary_path(
        cupy: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's 237-260 us a call: every call described, bound and validated its operator again. Now a
    call laid out as one before launches the prepared kernel: no ``_run``; on another stream too."""
    from opendml.functional import reductions

    rng = np.random.default_rng(9)
    host = special_logits((8, 128256), np.float16, rng)
    dml.argmax(cupy.asarray(host), 1)
    monkeypatch.setattr(reductions, "_run", _refuse)
    for _ in range(3):
        host = special_logits((8, 128256), np.float16, rng)
        got = dml.argmax(cupy.asarray(host), 1)
        assert (cupy.asnumpy(got) == expected_indices(host, True, False, False)).all()
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        x = cupy.asarray(host)
        got = dml.argmax(x, 1)
        stream.synchronize()
    assert (cupy.asnumpy(got) == expected_indices(host, True, False, False)).all()


@pytest.fixture
def torch() -> Iterator[Any]:
    if CUDA_MISSING is not None:
        pytest.skip(f"no usable CUDA GPU: {CUDA_MISSING}")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA here")
    yield torch


@needs_cuda
def test_a_functional_call_on_a_new_torch_tensor_launches_on_pytorchs_stream(
        torch: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's 475 us on a PyTorch tensor: after the first call of a layout, a new tensor's call launches
    the prepared kernel on the tensors' addresses and PyTorch's current stream (a side stream here, whose
    work is all the result waits for), its result a new int64 tensor; out= too."""
    from opendml.functional import reductions

    rng = np.random.default_rng(10)
    host = special_logits((64, 50257), np.float32, rng)
    first = dml.argmax(torch.from_numpy(host).cuda(), 1)
    assert isinstance(first, torch.Tensor) and first.dtype == torch.int64
    monkeypatch.setattr(reductions, "_run", _refuse)
    side = torch.cuda.Stream()
    for _ in range(3):
        host = special_logits((64, 50257), np.float32, rng)
        with torch.cuda.stream(side):
            x = torch.from_numpy(host).to("cuda", non_blocking=False)
            got = dml.argmax(x, 1)
        side.synchronize()
        assert got.device == x.device and got.dtype == torch.int64 and tuple(got.shape) == (64, 1)
        assert (got.cpu().numpy() == expected_indices(host, True, False, False)).all()
    out = torch.full((64, 1), -1, dtype=torch.int64, device="cuda")
    monkeypatch.undo()
    dml.argmax(x, 1, out=out)  # a new layout of out: the ordinary path, remembered
    monkeypatch.setattr(reductions, "_run", _refuse)
    x2 = torch.from_numpy(special_logits((64, 50257), np.float32, rng)).cuda()
    assert dml.argmax(x2, 1, out=out) is out
    assert (out.cpu().numpy() == expected_indices(x2.cpu().numpy(), True, False, False)).all()


@needs_cuda
def test_a_torch_tensor_that_requires_grad_or_an_overlapping_out_takes_the_ordinary_path(torch: Any) -> None:
    from opendml.functional import tensors
    from opendml.functional.fastpath import _exact

    x = torch.randn(8, 32000, device="cuda")
    dml.argmax(x, 1)
    key = (ReductionKind.ARGMAX, *(_exact(a) for a in (1, "INCREASING", "INT64", "IGNORE")), True)  # argmax(x, 1)'s
    assert tensors.direct(None, key, torch.randn(8, 32000, device="cuda"), None) is not None
    grad = torch.randn(8, 32000, device="cuda", requires_grad=True)
    assert tensors.direct(None, key, grad, None) is None
    with pytest.raises((dml.OpenDMLError, RuntimeError)):  # as before: the protocols refuse such a tensor
        dml.argmax(grad, 1)
    ints = torch.randint(0, 9, (8, 1), device="cuda", dtype=torch.int64)
    assert (dml.argmax(ints, 1, out=ints).cpu() == 0).all()  # out is x: computed apart, then copied
