"""The CUDA backend gives the CPU reference's bits on every data type, layout and reduction strategy.

These tests need an NVIDIA GPU with CuPy; elsewhere they skip, saying why.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import opendml as dml
from opendml import DataType as T
from opendml import TensorDesc
from tests.conftest import CUDA_MISSING
from tests.helpers import edge_values, same_values

pytestmark = pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")

ALL = [T.FLOAT32, T.FLOAT16, T.INT64, T.INT32, T.INT16, T.INT8, T.UINT64, T.UINT32, T.UINT16, T.UINT8]
FLOATS = [T.FLOAT32, T.FLOAT16]


@pytest.fixture(scope="module")
def cpu() -> dml.Device:
    return dml.Device("cpu")


@pytest.fixture(scope="module")
def gpu() -> dml.Device:
    return dml.Device("cuda")


def raw_for(desc: TensorDesc, values: np.ndarray, offset: int, rng: np.random.Generator) -> np.ndarray:
    """A byte buffer holding ``values`` laid out by ``desc`` at ``offset``, other bytes random."""
    raw = rng.integers(0, 256, offset + desc.total_tensor_size_in_bytes + 16, dtype=np.uint8)
    desc.numpy_view(raw, offset)[...] = values.reshape(desc.sizes)
    return raw


def compare(cpu: dml.Device, gpu: dml.Device, desc: object, in_raw: list, offsets: list[int],
            out_offset: int = 32, in_place: bool = False) -> None:
    """Run ``desc`` on both devices over the same bytes; every output byte must agree (NaN aside)."""
    outputs = []
    for device in (cpu, gpu):
        op = device.compile_operator(device.create_operator(desc))
        schema = op.operator.definition.schema
        out_desc = op.operator.tensors[schema.outputs[0].name]
        buffers = [None if r is None else device.buffer_from(r) for r in in_raw]
        bindings = [None if b is None else dml.BufferBinding(b, off) for b, off in zip(buffers, offsets)]
        if in_place:
            out_binding = bindings[0]
        else:
            size = out_offset + out_desc.total_tensor_size_in_bytes + 16
            out_binding = dml.BufferBinding(device.buffer_from(np.full(size, 0x5A, np.uint8)), out_offset)
        op.execute(bindings, [out_binding])
        outputs.append(out_binding.buffer.to_numpy())
    expected, got = outputs
    offset = offsets[0] if in_place else out_offset
    got_values, expected_values = out_desc.numpy_view(got, offset), out_desc.numpy_view(expected, offset)
    if not same_values(got_values, expected_values):
        bad = np.argwhere(~((got_values == expected_values) | (np.isnan(got_values) & np.isnan(expected_values))
                            if got_values.dtype.kind == "f" else got_values != expected_values))[:5]
        pytest.fail(f"{desc}: first mismatches at {bad.tolist()}: "
                    f"got {[got_values[tuple(i)] for i in bad]}, expected {[expected_values[tuple(i)] for i in bad]}")
    mask = np.ones(expected.size, bool)
    out_desc.numpy_view(mask.view(np.uint8), offset)[...] = 0
    assert (got[mask] == expected[mask]).all(), "bytes outside the output's elements differ"


# Layouts: (sizes, input strides or None, output strides or None)
LAYOUTS = [
    ([1001], None, None),                  # 1-D vector path with a scalar tail
    ([4, 64], None, None),                 # packed: one dimension after collapsing
    ([3, 5, 7], [80, 14, 2], None),        # strided, padded input: the general path
    ([6, 8], [1, 6], None),                # transposed input
    ([5, 16], [0, 1], None),               # broadcast input rows
    ([4, 32], None, [40, 1]),              # padded output rows, vector loads per row
    ([2, 3, 2, 2, 1, 2, 3, 2], None, None),  # eight dimensions
]


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda case: "x".join(map(str, case[0])))
@pytest.mark.parametrize("data_type", ALL, ids=lambda t: t.name)
def test_clip_matches_cpu(cpu, gpu, data_type: T, layout) -> None:
    rng = np.random.default_rng(data_type.value)
    sizes, in_strides, out_strides = layout
    x, y = TensorDesc(data_type, sizes, in_strides), TensorDesc(data_type, sizes, out_strides)
    values = edge_values(data_type, x.element_count, rng)
    if data_type.is_float:
        descs = [dml.ElementWiseClipDesc(x, y, -1.25, 2.5, dml.ScaleBias(1.5, -0.25)),
                 dml.ElementWiseClipDesc(x, y, 3.0, -1.0), dml.ElementWiseThresholdDesc(x, y, float("nan")),
                 dml.ElementWiseClip1Desc(x, y, data_type, -0.0, 0.75)]
    else:
        low, high = data_type.integer_range
        descs = [dml.ElementWiseClipDesc(x, y, -2.7, 1e30), dml.ElementWiseClip1Desc(x, y, data_type, low + 3, high - 1)]
        if data_type.size < 8:
            descs.append(dml.ElementWiseThresholdDesc(x, y, 1.5))
    for desc in descs:
        compare(cpu, gpu, desc, [raw_for(x, values, 16, rng)], [16])


SPECIAL_BOUNDS = [-np.inf, -2.5, -1e-45, -0.0, 0.0, 1e-45, 0.75, 65504.0, 1e30, np.inf, np.nan]


@pytest.mark.parametrize("data_type", FLOATS, ids=lambda t: t.name)
def test_clamps_match_cpu_for_every_class_of_bound(cpu, gpu, data_type: T) -> None:
    """A clamp is a min.NaN or max.NaN on the GPU where its bound is a nonzero number, a select elsewhere
    (expr_c.CLAMPS): every pair of special bounds (zeros of both signs, denormals, the FLOAT16 limit,
    infinities, NaN) over every special value and each bound itself, against the CPU, bit for bit; with a
    ScaleBias and without (the 16-byte chunk kernel), and THRESHOLD."""
    values = np.array([*SPECIAL_BOUNDS, -np.nan, -1.0, 1.0, 3e-39, -3e-39, 2.0, -65504.0, 0.5, 6.0, 1e-40,
                       100.0, 7e4, 0.3], np.float32)
    with np.errstate(over="ignore"):  # FLOAT16: 1e30 and 7e4 become infinities
        values = np.concatenate([values, -values]).astype(data_type.numpy)  # 48 a row: 16-byte chunks fit
    x = TensorDesc(data_type, [2, values.size])
    rng = np.random.default_rng(5)
    for k, low in enumerate(SPECIAL_BOUNDS):
        descs = [dml.ElementWiseThresholdDesc(x, x, low)]
        for high in SPECIAL_BOUNDS[k::2]:
            descs += [dml.ElementWiseClipDesc(x, x, low, high), dml.ElementWiseClipDesc(x, x, low, high, (0.5, -0.0))]
        for desc in descs:
            compare(cpu, gpu, desc, [raw_for(x, np.concatenate([values, values[::-1]]), 16, rng)], [16])


@pytest.mark.parametrize("data_type", ALL, ids=lambda t: t.name)
def test_in_place_matches_cpu(cpu, gpu, data_type: T) -> None:
    rng = np.random.default_rng(1)
    for strides in (None, [24, 2]):
        t = TensorDesc(data_type, [5, 9] if strides is None else [5, 2], strides)
        values = edge_values(data_type, t.element_count, rng)
        desc = dml.ElementWiseClip1Desc(t, t, data_type, 0, 100) if data_type.is_integer else \
            dml.ElementWiseClipDesc(t, t, -0.5, 0.5, (2.0, 0.125))
        compare(cpu, gpu, desc, [raw_for(t, values, 48, rng)], [48], in_place=True)


@pytest.mark.parametrize("zero_point", [True, False])
@pytest.mark.parametrize("scale_type", FLOATS, ids=lambda t: t.name)
@pytest.mark.parametrize("input_type", [T.INT32, T.INT16, T.INT8, T.UINT32, T.UINT16, T.UINT8], ids=lambda t: t.name)
def test_dequantize_matches_cpu(cpu, gpu, input_type: T, scale_type: T, zero_point: bool) -> None:
    rng = np.random.default_rng(input_type.value)
    for sizes, scale_strides, zp_strides in [([1001], [0], [0]), ([6, 64], [0, 1], [1, 0]), ([3, 4, 5], [20, 5, 1], [0, 0, 1])]:
        x = TensorDesc(input_type, sizes)
        scale = TensorDesc(scale_type, sizes, scale_strides)
        zp = TensorDesc(input_type, sizes, zp_strides) if zero_point else None
        out = TensorDesc(scale_type, sizes)
        raws = [raw_for(x, edge_values(input_type, x.element_count, rng), 0, rng),
                raw_for(scale, edge_values(scale_type, x.element_count, rng), 16, rng),
                None if zp is None else raw_for(zp, edge_values(input_type, x.element_count, rng), 32, rng)]
        compare(cpu, gpu, dml.ElementWiseDequantizeLinearDesc(x, scale, zp, out), raws, [0, 16, 32])


# ARGMIN shapes chosen to reach every strategy of the plan: (sizes, axes)
ARGMIN_CASES = [
    ([37, 300], [1]),            # rows, a warp per output
    ([1500, 3000], [1]),         # rows, a block per output
    ([3, 200000], [1]),          # rows cut into pieces, then combined
    ([1000003], [0]),            # all axes of a long vector: pieces
    ([300, 700], [0]),           # columns, pieces
    ([20, 600000], [0]),         # columns, many outputs
    ([7, 11, 13], [1]),          # a middle axis
    ([6, 5, 40, 3], [0, 2]),     # two non-adjacent axes
    ([4, 6, 5], [2, 0, 1]),      # every axis, listed out of order
    ([2, 2, 2, 2, 2, 2, 2, 3], [1, 4, 7]),
]


@pytest.mark.parametrize("direction", ["INCREASING", "DECREASING"])
@pytest.mark.parametrize("case", ARGMIN_CASES, ids=lambda c: "x".join(map(str, c[0])) + "-" + "".join(map(str, c[1])))
def test_argmin_strategies_match_cpu(cpu, gpu, case, direction: str) -> None:
    rng = np.random.default_rng(len(case[0]))
    sizes, axes = case
    x = TensorDesc("FLOAT32", sizes)
    values = edge_values(T.FLOAT32, x.element_count, rng)
    values[: values.size // 50] = np.nan  # whole NaN stretches
    out = TensorDesc("INT64", [1 if k in axes else n for k, n in enumerate(sizes)])
    compare(cpu, gpu, dml.ArgMinDesc(x, out, axes, direction), [raw_for(x, values, 0, rng)], [0])


@pytest.mark.parametrize("output_type", [T.INT64, T.INT32, T.UINT64, T.UINT32], ids=lambda t: t.name)
@pytest.mark.parametrize("data_type", ALL, ids=lambda t: t.name)
def test_argmin_types_match_cpu(cpu, gpu, data_type: T, output_type: T) -> None:
    rng = np.random.default_rng(data_type.value)
    for sizes, strides, axes in [([9, 130], [131, 1], [1]), ([64, 33], None, [0]), ([5, 7, 2], [1, 10, 80], [0, 2])]:
        x = TensorDesc(data_type, sizes, strides)
        out = TensorDesc(output_type, [1 if k in axes else n for k, n in enumerate(sizes)])
        values = edge_values(data_type, x.element_count, rng)
        for direction in ("INCREASING", "DECREASING"):
            compare(cpu, gpu, dml.ArgMinDesc(x, out, axes, direction), [raw_for(x, values, 16, rng)], [16])


def test_all_nan_rows(cpu, gpu) -> None:
    x = TensorDesc("FLOAT16", [4, 3000])
    values = np.full(x.element_count, np.nan, np.float16)
    for axes in ([1], [0], [0, 1]):
        for direction in ("INCREASING", "DECREASING"):
            out = TensorDesc("UINT32", [1 if k in axes else n for k, n in enumerate(x.sizes)])
            compare(cpu, gpu, dml.ArgMinDesc(x, out, axes, direction), [values.view(np.uint8).copy()], [0])


def test_functional_keeps_the_array_kind(gpu) -> None:
    import cupy

    rng = np.random.default_rng(3)
    host = rng.standard_normal((64, 33)).astype(np.float32)
    on_gpu = cupy.asarray(host)
    result = dml.clip(on_gpu[:, 1:], -0.5, 0.5)  # a view at an offset that breaks 16-byte alignment
    assert isinstance(result, cupy.ndarray)
    assert np.array_equal(cupy.asnumpy(result), dml.clip(host[:, 1:], -0.5, 0.5))
    through_gpu = dml.argmin(host, 0, device=gpu)
    assert isinstance(through_gpu, np.ndarray) and np.array_equal(through_gpu, dml.argmin(host, 0))
    q = cupy.asarray(rng.integers(0, 255, (8, 16), dtype=np.uint8))
    scale = cupy.asarray(rng.random(16, dtype=np.float32))
    assert np.array_equal(cupy.asnumpy(dml.dequantize_linear(q, scale, 7)),
                          dml.dequantize_linear(cupy.asnumpy(q), cupy.asnumpy(scale), 7))
    out = cupy.zeros_like(on_gpu)
    assert dml.threshold(on_gpu, 0.0, out=out) is out
    before = cupy.asnumpy(on_gpu)
    assert dml.clip(on_gpu, 0, 0.25, out=on_gpu) is on_gpu  # in place
    assert np.array_equal(cupy.asnumpy(on_gpu), np.clip(before, np.float32(0), np.float32(0.25)))
    assert (cupy.asnumpy(on_gpu) == 0.25).any() and (cupy.asnumpy(on_gpu) == 0).any()  # both bounds bit
    indices = cupy.full((3, 64), 99, np.int64)
    view = indices[1:2].T  # a strided view of a CuPy array
    assert dml.argmin(on_gpu, 1, out=view) is view
    assert np.array_equal(cupy.asnumpy(indices[1]), np.argmin(cupy.asnumpy(on_gpu), 1))
    assert (cupy.asnumpy(indices[[0, 2]]) == 99).all()


def test_functional_on_pytorch_tensors() -> None:
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device")
    t = torch.linspace(-3, 3, 1000, device="cuda").reshape(10, 100)
    result = dml.clip(t.T, -1, 1)
    assert isinstance(result, torch.Tensor) and result.is_cuda
    assert torch.equal(result, torch.clamp(t.T, -1, 1))
    assert torch.equal(dml.argmin(t, 1).reshape(-1), torch.argmin(t, 1))


def test_importing_opendml_does_not_import_cupy() -> None:
    code = "import sys, opendml, numpy; opendml.clip(numpy.ones(3, 'f4'), 0, 1); assert 'cupy' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_uploads_keep_every_bit(gpu) -> None:
    # A 0-d -0.0 must reach the GPU as -0.0: (-2^31) * (-0.0) is +0.0, (-2^31) * (+0.0) would be -0.0.
    result = dml.dequantize_linear(np.array([-(2**31)], np.int32), np.float32(-0.0), device=gpu)
    assert not np.signbit(result).any()
    assert np.signbit(dml.threshold(np.float32(-1.0), -0.0, device=gpu))
