"""TOP_K and TOP_K1 on CUDA (opendml/backends/cuda/top_k_c.py): the selection kernel runs on the host under
emulation (tests/cuda_emulation.py) against the oracle of tests/top_k_oracle.py (Python's ``sorted``), over every
type, both directions, ties at the K boundary, NaN of either sign, signed zeros, every axis of a 3-D tensor and
strided outputs; its sources compile with nvcc; K past the kernel's shared memory is refused by name; on a GPU,
the operator and the functional API give the oracle's answer."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pytest

import opendml as dml
from opendml.backends.cuda import top_k_c
from opendml.errors import KernelUnsupportedError
from opendml.kernels.spec import KernelSpec
from tests.conftest import CUDA_MISSING
from tests.cuda_emulation import TopKRun, run_top_k_batch_on_host
from tests.test_cuda_lowering import compile_with_nvcc, needs_nvcc
from tests.top_k_oracle import TYPES, assert_same, oracle, random_values

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")


def described(x: np.ndarray, axis: int, k: int, largest: bool | None, index_type: str = "UINT32",
              strided_values: bool = False) -> tuple[KernelSpec, dml.TensorDesc, dml.TensorDesc, dml.TensorDesc]:
    """TOP_K (``largest`` None) or TOP_K1 over ``x``: its kernel spec and descriptions (the values, where
    ``strided_values``, through strides twice the packed ones: every other element)."""
    t = dml.DataType.parse(x.dtype.name.upper())
    sizes = list(x.shape)
    out = sizes.copy()
    out[axis] = k
    packed = [math.prod(out[a + 1:]) for a in range(len(out))]
    values = dml.TensorDesc(t, out, [2 * s for s in packed] if strided_values else None)
    indices = dml.TensorDesc(index_type, out)
    desc: object
    if largest is None:
        desc = dml.TopKDesc(dml.TensorDesc(t, sizes), values, indices, axis, k)
    else:
        desc = dml.TopK1Desc(dml.TensorDesc(t, sizes), values, indices, axis, k,
                             "DECREASING" if largest else "INCREASING")
    spec = dml.Device().create_operator(desc).kernel_spec
    return spec, dml.TensorDesc(t, sizes), values, indices


def results(raw: tuple[np.ndarray, np.ndarray], x: np.ndarray, values: dml.TensorDesc,
            indices: dml.TensorDesc) -> tuple[np.ndarray, np.ndarray]:
    """The values and indices a run wrote, read through their descriptions' strides."""
    v_raw, i_raw = raw
    index_dtype = np.dtype(indices.data_type.numpy)
    got_values = np.lib.stride_tricks.as_strided(
        v_raw.view(x.dtype), values.sizes, [s * x.dtype.itemsize for s in values.effective_strides])
    got_indices = i_raw[:indices.element_count * index_dtype.itemsize].view(index_dtype).reshape(indices.sizes)
    return np.array(got_values), got_indices


@needs_gxx
def test_every_type_and_direction_against_the_oracle(tmp_path: Path) -> None:
    """Rows of few distinct values (ties everywhere, at the K boundary too; NaN of both signs, infinities, signed
    zeros and the integer limits in the pool), each type, TOP_K and TOP_K1 in both directions, K of 1, a few, a
    power of two, and the whole row; 64-bit indices once."""
    rng = np.random.default_rng(41)
    runs, cases = [], []
    for n, type_name in enumerate(TYPES):
        x = random_values(rng, type_name, (5, 300), 6 + n)
        for largest in (None, True, False):
            for k in (1, 7, 64, 300) if largest is None else (5, 300):
                index_type = "UINT64" if (type_name, k) == ("FLOAT16", 7) else "UINT32"
                spec, desc, values, indices = described(x, 1, k, largest, index_type)
                runs.append(TopKRun(spec, desc, values, indices, np.ascontiguousarray(x)))
                cases.append((x, 1, k, largest is not False, values, indices))
    check(runs, cases, tmp_path)


@needs_gxx
def test_every_axis_strided_outputs_and_long_rows(tmp_path: Path) -> None:
    """A 3-D tensor along each axis (the sequences' elements strided in the input), values written through
    strides, one grid block for many sequences; rows long enough for several index digits (70,000 elements)
    with ties at the boundary."""
    rng = np.random.default_rng(43)
    x = random_values(rng, "FLOAT32", (4, 6, 35), 9)
    runs, cases = [], []
    for axis in range(3):
        for strided in (False, True):
            spec, desc, values, indices = described(x, axis, 3, True, strided_values=strided)
            runs.append(TopKRun(spec, desc, values, indices, np.ascontiguousarray(x), grid=1 + axis))
            cases.append((x, axis, 3, True, values, indices))
    long = random_values(rng, "FLOAT16", (2, 70000), 40)
    for k, largest in ((50, True), (1000, False)):
        spec, desc, values, indices = described(long, 1, k, largest)
        runs.append(TopKRun(spec, desc, values, indices, long))
        cases.append((long, 1, k, largest, values, indices))
    check(runs, cases, tmp_path)


@needs_gxx
def test_few_sequences_cut_into_slices_then_merged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sequences too few to fill the GPU: each cut into slices (here of a few dozen elements: ties across every
    slice boundary), the K first of each slice listed, the K first of the lists selected and sorted; both
    directions, K of 1 and up to a quarter of the slice, each type width."""
    monkeypatch.setattr(top_k_c, "SLICE", 1)
    rng = np.random.default_rng(53)
    runs, cases = [], []
    for type_name, k, largest in (("FLOAT16", 1, True), ("FLOAT32", 10, False), ("INT8", 7, True),
                                  ("UINT64", 12, False), ("FLOAT32", 25, True)):
        x = random_values(rng, type_name, (2, 1001), 5)
        spec, desc, values, indices = described(x, 1, k, largest)
        run = TopKRun(spec, desc, values, indices, x)
        assert top_k_c.plan_top_k(spec, desc, values, indices, run.sm_count).slices > 8, type_name
        runs.append(run)
        cases.append((x, 1, k, largest, values, indices))
    check(runs, cases, tmp_path)


def test_decoding_shapes_are_cut_where_their_sequences_are_few() -> None:
    """[8, 128256] logits: 15 slices of 8,551 elements a sequence (120 blocks, then 8); [256, 128256] and short
    rows: a block a sequence."""
    x = np.zeros((8, 128256), np.float16)
    plan = top_k_c.plan_top_k(*described(x, 1, 50, True))
    assert (plan.slices, plan.chunk, plan.candidates) == (15, 8551, 8 * 15 * 50)
    assert top_k_c.plan_top_k(*described(np.zeros((256, 128256), np.float16), 1, 50, True)).slices == 1
    assert top_k_c.plan_top_k(*described(np.zeros((2, 5000), np.float16), 1, 50, True)).slices == 1


def check(runs: list[TopKRun], cases: list, folder: Path) -> None:
    got = run_top_k_batch_on_host(runs, folder)
    for raw, (x, axis, k, largest, values, indices) in zip(got, cases):
        assert_same(results(raw, x, values, indices), oracle(x, axis, k, largest))


def test_k_past_the_shared_memory_and_overlong_rows_are_refused_by_name() -> None:
    spec, x, values, indices = described(np.zeros((2, 3000), np.float32), 1, 2049, None)
    with pytest.raises(KernelUnsupportedError, match=r"^TOP_K: K must be at most 2048 on backend 'cuda'; got 2049\.$"):
        top_k_c.plan_top_k(spec, x, values, indices)
    with pytest.raises(KernelUnsupportedError, match=r"sequences of fewer than 2\*\*32 - 1 elements"):
        top_k_c.check("TOP_K", 4, (1 << 32) - 1)


@needs_nvcc
def test_every_type_compiles_with_nvcc(tmp_path: Path) -> None:
    sources = []
    for type_name in TYPES:
        x = np.zeros((3, 100), np.dtype(type_name.lower()))
        for largest, index_type in ((None, "UINT32"), (False, "UINT64")):
            spec, desc, values, indices = described(x, 1, 10, largest, index_type)
            plan = top_k_c.plan_top_k(spec, desc, values, indices)
            assert spec.selection is not None
            sources.append(top_k_c.top_k_kernel(spec, plan, spec.selection.index_type))
    long = np.zeros((2, 50000), np.float16)  # cut into slices: both stages
    spec, desc, values, indices = described(long, 1, 64, True)
    plan = top_k_c.plan_top_k(spec, desc, values, indices)
    assert plan.slices > 1 and spec.selection is not None
    sources += [top_k_c.top_k_kernel(spec, plan, spec.selection.index_type, stage)
                for stage in (top_k_c.SLICES, top_k_c.MERGE)]
    ptx = compile_with_nvcc(sources, tmp_path)
    assert ptx.count(".entry opendml_kernel_") == len(sources)


# --- on a GPU ----------------------------------------------------------------------------------------------

needs_cuda = pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")


@needs_cuda
@pytest.mark.parametrize("type_name", ["FLOAT16", "FLOAT32", "INT64", "UINT8"])
def test_on_the_gpu_the_oracles_answer(type_name: str) -> None:
    """The operator on a CUDA device (create -> compile -> execute) and the functional API on CuPy arrays:
    decoding's [8, 128256] logits with K up to 64, and a column reduction."""
    import cupy

    rng = np.random.default_rng(47)
    device = dml.Device("cuda")
    x = random_values(rng, type_name, (8, 128256), 3000)
    for k, largest in ((1, True), (50, True), (64, False)):
        _, desc, values, indices = described(x, 1, k, largest)
        op = device.compile_operator(device.create_operator(dml.TopK1Desc(
            desc, values, indices, 1, k, "DECREASING" if largest else "INCREASING")))
        out_v = device.create_buffer(values.total_tensor_size_in_bytes)
        out_i = device.create_buffer(indices.total_tensor_size_in_bytes)
        op.execute([device.buffer_from(x)], [out_v, out_i])
        got = (out_v.to_numpy().view(x.dtype).reshape(values.sizes),
               out_i.to_numpy().view(np.uint32).reshape(indices.sizes))
        assert_same(got, oracle(x, 1, k, largest))
    column = random_values(rng, type_name, (5000, 3), 50)
    got_v, got_i = dml.top_k(cupy.asarray(column), 20, axis=0)
    assert_same((cupy.asnumpy(got_v), cupy.asnumpy(got_i)), oracle(column, 0, 20, True))
