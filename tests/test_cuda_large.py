"""CUDA kernels on tensors large enough to cross every threshold of their plans, against the independent oracle.

The other CUDA tests compare large tensors only with the CPU backend or opendml's NumPy references; here
the expected values come from ``tests/elementwise_oracle.py``, which shares no code with opendml. Each
ARGMIN case is shaped to take one plan of ``cuda/plan.py`` (rows reduced by a warp or by a block, long rows
split into pieces merged by a combine pass of a block or of a warp, columns with and without pieces, 16-byte
vectors and single loads) and checks that it does, on the GPU it runs on and, without a GPU, on the sizes
of an H100 and its neighbours. Element-wise cases run CLIP and DEQUANTIZE_LINEAR on several million
elements through the 16-byte vector kernel (with its scalar tail) and, from pointers one element off
alignment, through the general kernel.

Expected values stay cheap: inputs are drawn from small pools (rows of ARGMIN, values of the element-wise
operators), the oracle runs once per pool entry, and a gather spreads its answers over the tensor.

The GPU tests need an NVIDIA GPU with CuPy; elsewhere they skip, saying why.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import opendml as dml
from opendml import DataType as T
from opendml import TensorDesc
from opendml.backends.cuda import elementwise_c
from opendml.backends.cuda.plan import BLOCK, ArgMinPlan, plan_argmin
from opendml.backends.layout import Layout, collapse, split_axes
from tests import elementwise_oracle as oracle
from tests.conftest import CUDA_MISSING
from tests.helpers import edge_values, same_values

GPU = pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")
SM_COUNTS = (114, 132, 144)  # H100 PCIe, H100 SXM and H200, and a little more: the cases hold on each
CPU = dml.Device("cpu")


@pytest.fixture(scope="module")
def gpu() -> dml.Device:
    return dml.Device("cuda")


def on_gpu(host: np.ndarray, shift: int) -> tuple[Any, int]:
    """``host`` copied to the GPU ``shift`` elements into a fresh allocation (CuPy's are 256-byte aligned),
    and the address of its first element."""
    import cupy

    flat = host.reshape(-1)
    device = cupy.asarray(np.concatenate([flat[:1]] * shift + [flat]))
    return device, int(device.data.ptr) + shift * flat.itemsize


# --- ARGMIN ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ArgMinCase:
    shape: tuple[int, ...]
    axes: tuple[int, ...]
    takes: Callable[[ArgMinPlan], bool]  # the plan this case is for
    pool: int = 64  # distinct reduced rows


def _rows(group: int, split: bool, vector: bool, combine: int | None = None) -> Callable[[ArgMinPlan], bool]:
    def takes(p: ArgMinPlan) -> bool:
        return (p.family == "rows" and p.group == group and (p.splits > 1) == split and (p.vector > 1) == vector
                and (combine is None or p.combine_group == combine))
    return takes


def _columns(split: bool, vector: bool, combine: int | None = None) -> Callable[[ArgMinPlan], bool]:
    def takes(p: ArgMinPlan) -> bool:
        return (p.family == "columns" and (p.splits > 1) == split and (p.vector > 1) == vector
                and (combine is None or p.combine_group == combine))
    return takes


ARGMIN_CASES = {
    "rows of a warp": ArgMinCase((4096, 1000), (1,), _rows(32, False, True)),
    "rows of a warp, single loads": ArgMinCase((4096, 999), (1,), _rows(32, False, False)),
    "rows of a block": ArgMinCase((4000, 1536), (1,), _rows(BLOCK, False, True)),
    "rows of a block, single loads": ArgMinCase((3000, 1999), (1,), _rows(BLOCK, False, False)),
    "few long rows, a block combines": ArgMinCase((3, 400_000), (1,), _rows(BLOCK, True, True, BLOCK), pool=3),
    "few rows of a cluster": ArgMinCase((3, 100_000), (1,), _rows(BLOCK, True, True, BLOCK), pool=3),
    "rows in pieces, many outputs": ArgMinCase((1000, 20000), (1,), _rows(BLOCK, True, True)),
    "one long vector in pieces": ArgMinCase((1_000_003,), (0,), _rows(BLOCK, True, False, BLOCK), pool=1),
    "reduced axes around a kept one": ArgMinCase((30, 200, 1000), (0, 2), _rows(BLOCK, True, True, BLOCK), pool=8),
    "columns in pieces, a block combines": ArgMinCase((20_000, 320), (0,), _columns(True, True, BLOCK), pool=16),
    "columns in pieces, a warp combines": ArgMinCase((3000, 2000), (0,), _columns(True, True, 32), pool=32),
    "columns in pieces, single loads": ArgMinCase((5000, 1001), (0,), _columns(True, False), pool=16),
    "many columns": ArgMinCase((4, 2_000_000), (0,), _columns(False, True)),
    "a middle axis": ArgMinCase((50, 3000, 40), (1,), _columns(True, True), pool=16),
}
ARGMIN_TYPES = {"FLOAT32": T.INT64, "INT16": T.UINT32}  # input type: output type

# The case of fewer rows than half the multiprocessors, each of at most plan.CLUSTER_ROW_BYTES: on a GPU with
# thread-block clusters (sm_90 on) each row is one cluster's blocks (plan.cluster_plan); the GPU tests run it a
# second time with clusters off, so the split plan it takes elsewhere is checked there too. Longer rows ("few long
# rows", "one long vector") are split whatever the GPU.
CLUSTERED_CASES = ("few rows of a cluster",)
# (case, whether clusters may be planned): every case as the device plans it, the clustered ones without too
CLUSTER_SETTINGS = [(name, True) for name in ARGMIN_CASES] + [(name, False) for name in CLUSTERED_CASES]


def plan_setting(gpu: dml.Device, name: str, clusters: bool, monkeypatch: pytest.MonkeyPatch) -> Callable[
        [ArgMinPlan], bool]:
    """Turns the device's clusters off where ``clusters`` is false; the test of the plan ``name`` then takes."""
    if not clusters:
        monkeypatch.setattr(gpu.backend, "cluster_blocks", 1)
    if name in CLUSTERED_CASES and gpu.backend.cluster_blocks > 1:  # type: ignore[attr-defined]
        return lambda p: p.cluster and p.splits > 1
    return ARGMIN_CASES[name].takes


def argmin_plan(case: ArgMinCase, data_type: T, sm_count: int, clusters: int = 1) -> ArgMinPlan:
    """The plan ``cuda/plan.py`` makes for a packed input of ``case`` on ``sm_count`` multiprocessors, with
    thread-block clusters of at most ``clusters`` blocks."""
    x, out = argmin_descs(case, data_type)
    kept, reduced = split_axes(x.sizes, x.effective_strides, out.effective_strides, case.axes)
    return plan_argmin(x.sizes, x.effective_strides, case.axes, kept, reduced, sm_count, data_type.size,
                       clusters=clusters)


def argmin_descs(case: ArgMinCase, data_type: T) -> tuple[TensorDesc, TensorDesc]:
    out_shape = [1 if k in case.axes else n for k, n in enumerate(case.shape)]
    return TensorDesc(data_type, case.shape), TensorDesc(ARGMIN_TYPES[data_type.name], out_shape)


def pool_rows(data_type: T, count: int, length: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` distinct rows of values from a small set (ties everywhere; FLOAT32 with NaN, -0.0 and
    +0.0). Of three rows or more, row 0 is one repeated value (FLOAT32: NaN only: no value at all) and row 1
    is left as drawn (its smallest value a zero of either sign); the others (all of fewer rows) hold one or
    three copies of a smaller value (always three in rows of fewer), the last of three at the row's end (in
    the last piece of a split reduction)."""
    if data_type is T.FLOAT32:
        base = np.array([np.nan, 0.0, -0.0, 1.5, 2.0, np.inf], np.float32)
        smaller, same = np.array([-3.0, -1e-45, -np.inf], np.float32), np.float32(np.nan)
    else:
        base = np.arange(-5, 6, dtype=np.int16)
        smaller, same = np.array([-32768, -7, -6], np.int16), np.int16(7)
    rows = rng.choice(base, (count, length))
    special = 2 if count >= 3 else 0
    for r in range(special, count):
        copies = int(rng.choice([1, 3])) if count >= 3 else 3
        at = rng.integers(0, length, copies)
        if copies == 3:
            at[-1] = length - 1
        rows[r, at] = rng.choice(smaller)
    if special:
        rows[0] = same
    return rows


def argmin_input(case: ArgMinCase, data_type: T, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """A packed input of ``case`` whose reduced rows come from a pool, and the oracle's indices by direction.

    A reduced row runs over the reduced axes in increasing order, row-major (SPEC 7); output elements run
    over the kept axes, row-major."""
    shape, axes = case.shape, case.axes
    kept = [k for k in range(len(shape)) if k not in axes]
    length = math.prod(shape[k] for k in axes)
    outputs = math.prod(shape) // length
    pool = pool_rows(data_type, min(case.pool, outputs), length, rng)
    pick = rng.integers(0, pool.shape[0], outputs)
    pick[: pool.shape[0]] = np.arange(pool.shape[0])  # every pool row is used
    order = kept + sorted(axes)
    x = np.ascontiguousarray(np.transpose(pool[pick].reshape([shape[k] for k in order]), np.argsort(order)))
    out_shape = tuple(1 if k in axes else n for k, n in enumerate(shape))
    expected = {}
    for direction in ("INCREASING", "DECREASING"):
        found = np.array([oracle.argmin_of(row, direction) for row in pool.tolist()], np.int64)
        expected[direction] = found[pick].reshape(out_shape)
    return x, expected


@pytest.mark.parametrize("data_type", list(ARGMIN_TYPES))
@pytest.mark.parametrize("name", list(ARGMIN_CASES))
def test_argmin_cases_take_their_plans_on_gpus_of_several_sizes(name: str, data_type: str) -> None:
    """The case table itself, without a GPU: each shape takes the plan it is named for."""
    for sm_count in SM_COUNTS:
        plan = argmin_plan(ARGMIN_CASES[name], T[data_type], sm_count)
        assert ARGMIN_CASES[name].takes(plan), (name, data_type, sm_count, plan)
        clustered = argmin_plan(ARGMIN_CASES[name], T[data_type], sm_count, clusters=8)
        assert clustered.cluster == (name in CLUSTERED_CASES), (name, data_type, sm_count, clustered)


@GPU
@pytest.mark.parametrize("data_type", list(ARGMIN_TYPES))
@pytest.mark.parametrize(("name", "clusters"), CLUSTER_SETTINGS)
def test_large_argmin_matches_the_oracle(gpu: dml.Device, name: str, clusters: bool, data_type: str,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Both directions, from a 16-byte aligned input (vector loads where the plan has them) and from one
    an element off (single loads: the same plan's scalar kernel)."""
    import cupy

    takes = plan_setting(gpu, name, clusters, monkeypatch)
    case, t = ARGMIN_CASES[name], T[data_type]
    x, expected = argmin_input(case, t, np.random.default_rng(sorted(ARGMIN_CASES).index(name)))
    x_desc, out_desc = argmin_descs(case, t)
    for direction in ("INCREASING", "DECREASING"):
        desc = dml.ArgMinDesc(x_desc, out_desc, case.axes, direction)
        kernel: Any = gpu.compile_operator(gpu.create_operator(desc)).kernel
        assert takes(kernel.plan), (name, kernel.plan)
        for shift in (0, 1):
            x_gpu, x_address = on_gpu(x, shift)  # held until the result is read: its memory stays ours
            index = out_desc.data_type.numpy
            out = cupy.full(out_desc.element_count, np.iinfo(index).max, dtype=index)  # no index is all ones
            kernel.run([x_address, int(out.data.ptr)])
            if shift and kernel.plan.vector > 1:
                assert 1 in kernel._kernels, f"{name}: a misaligned input should take the single-load kernel"
            got = cupy.asnumpy(out).reshape(expected[direction].shape).astype(np.int64)
            del x_gpu
            bad = np.flatnonzero(got != expected[direction])
            assert bad.size == 0, (f"{name} {data_type} {direction} shift {shift}: {bad.size} outputs differ, first "
                                   f"{bad[:4].tolist()}: got {got.reshape(-1)[bad[:4]].tolist()}, expected "
                                   f"{expected[direction].reshape(-1)[bad[:4]].tolist()}")


# --- CLIP and DEQUANTIZE_LINEAR ----------------------------------------------------------------------------

# Element counts by data type, each with a remainder past whole 16-byte chunks: the vector kernel's tail.
CLIP_CASES = {
    "FLOAT32": 5_000_003, "FLOAT16": 4_000_005, "INT8": 3_000_015, "UINT64": 2_000_001}


def clip_desc(type_name: str, count: int) -> tuple[object, oracle.Bound, oracle.Bound, tuple[float, float] | None]:
    """A CLIP of ``count`` elements and the oracle's reading of its fields."""
    x = TensorDesc(type_name, [count])
    if T[type_name].is_float:
        low, high, scale_bias = -1.0, 1.0, (1.5, -0.25)
    else:
        low, high, scale_bias = -7.9, 100.2, None
    desc = dml.ElementWiseClipDesc(x, x, low, high, None if scale_bias is None else dml.ScaleBias(*scale_bias))
    return desc, oracle.float_field_bound(low, type_name), oracle.float_field_bound(high, type_name), scale_bias


def clip_input(type_name: str, count: int, rng: np.random.Generator,
               low: oracle.Bound, high: oracle.Bound, scale_bias: tuple[float, float] | None) -> tuple[np.ndarray, np.ndarray]:
    """``count`` values from a pool of 4096 (edge values among them), and the oracle's results."""
    pool = edge_values(T[type_name], 4096, rng)
    pick = rng.integers(0, pool.size, count)
    kind = float if T[type_name].is_float else int
    with np.errstate(over="ignore"):
        table = np.array([oracle.clamp_element(kind(v), type_name, scale_bias, low, high) for v in pool.tolist()],
                         pool.dtype)
    return pool[pick], table[pick]


def run_elementwise(kernel: Any, operands: list[np.ndarray], out_type: np.dtype, count: int, shift: int) -> np.ndarray:
    """The kernel over ``operands`` (each the memory its description spans), every pointer ``shift`` elements
    past 16-byte alignment; the output, which starts as all ones (NaN for floats) so a skipped one shows."""
    import cupy

    held = [on_gpu(a, shift) for a in operands]
    out = cupy.full((count + shift) * np.dtype(out_type).itemsize, 0xFF, dtype=np.uint8)
    out_address = int(out.data.ptr) + shift * np.dtype(out_type).itemsize
    kernel.run([address for _, address in held] + [out_address])
    return cupy.asnumpy(out).view(out_type)[shift:]


def check_paths(kernel: Any, run: Callable[[int], np.ndarray], expected: np.ndarray, what: str) -> None:
    """The 16-byte vector kernel from aligned pointers, then the general kernel from misaligned ones."""
    assert kernel.width is not None, f"{what}: the layout should take the vector kernel"
    assert same_values(run(0), expected), f"{what}: vector kernel"
    assert kernel._general is None, f"{what}: aligned pointers should not need the general kernel"
    assert same_values(run(1), expected), f"{what}: general kernel"
    assert kernel._general is not None, f"{what}: misaligned pointers should take the general kernel"


def kernel_layout(desc: object) -> tuple[Any, Layout]:
    """An operator's KernelSpec and the merged layout its element-wise CUDA kernel walks (as the backend
    makes it: the operands' strides, then the output's)."""
    operator = CPU.create_operator(desc)
    schema = operator.definition.schema
    inputs = [operator.tensors[f.name] for f in schema.inputs]
    output = operator.tensor(schema.outputs[0].name)
    strides = [d.effective_strides for d in inputs if d is not None] + [output.effective_strides]
    return operator.kernel_spec, collapse(output.sizes, strides)


@GPU
@pytest.mark.parametrize("type_name", list(CLIP_CASES))
def test_large_clip_matches_the_oracle(gpu: dml.Device, type_name: str) -> None:
    count = CLIP_CASES[type_name]
    desc, low, high, scale_bias = clip_desc(type_name, count)
    values, expected = clip_input(type_name, count, np.random.default_rng(count), low, high, scale_bias)
    kernel: Any = gpu.compile_operator(gpu.create_operator(desc)).kernel
    assert kernel.width is not None and count % kernel.width, f"{count} elements leave no tail after chunks of {kernel.width}"
    check_paths(kernel, lambda shift: run_elementwise(kernel, [values], values.dtype, count, shift), expected,
                f"CLIP {type_name}")


def dequantize_table(x_type: str, out_type: str, scales: np.ndarray, zero_points: np.ndarray) -> np.ndarray:
    """The oracle's result for every input value x (all of its type: 8-bit), scale and zero point:
    ``table[x - low, scale index, zero point index]``."""
    low, high = oracle.TYPES[x_type].integer_range  # type: ignore[misc]
    with np.errstate(over="ignore"):
        return np.array([[[oracle.dequantize_element(x, float(s), int(z), out_type) for z in zero_points.tolist()]
                          for s in scales.tolist()] for x in range(low, high + 1)], T[out_type].numpy)


ROWS, COLUMNS = 1500, 4000
PER_CHANNEL = dml.ElementWiseDequantizeLinearDesc(  # a scale per column (strides 0, 1), a zero point per row (1, 0)
    TensorDesc("UINT8", [ROWS, COLUMNS]), TensorDesc("FLOAT32", [ROWS, COLUMNS], [0, 1]),
    TensorDesc("UINT8", [ROWS, COLUMNS], [1, 0]), TensorDesc("FLOAT32", [ROWS, COLUMNS]))
COUNT = 5_000_007
TO_HALF = dml.ElementWiseDequantizeLinearDesc(  # one scale for the tensor (stride 0), a zero point per element
    TensorDesc("INT8", [COUNT]), TensorDesc("FLOAT16", [COUNT], [0]), TensorDesc("INT8", [COUNT]),
    TensorDesc("FLOAT16", [COUNT]))


@GPU
def test_large_per_channel_dequantize_matches_the_oracle(gpu: dml.Device) -> None:
    """UINT8 to FLOAT32 over 1500 x 4000, its scales and zero points broadcast: rows of whole chunks."""
    rng = np.random.default_rng(21)
    scale_pool = np.array([0.0371, -2.5, 1e-40, 3e38], np.float32)  # a subnormal, and one that overflows
    zero_pool = np.array([131, 0, 255, 7], np.uint8)
    column_kind, row_kind = rng.integers(0, 4, COLUMNS), rng.integers(0, 4, ROWS)
    x = rng.integers(0, 256, (ROWS, COLUMNS), dtype=np.uint8)
    kernel: Any = gpu.compile_operator(gpu.create_operator(PER_CHANNEL)).kernel
    table = dequantize_table("UINT8", "FLOAT32", scale_pool, zero_pool)
    expected = table[x, column_kind[None, :], row_kind[:, None]].reshape(-1)
    operands: list[np.ndarray] = [x, scale_pool[column_kind], zero_pool[row_kind]]  # what each description spans
    check_paths(kernel, lambda shift: run_elementwise(kernel, operands, np.dtype(np.float32), ROWS * COLUMNS, shift),
                expected, "DEQUANTIZE_LINEAR per channel")


@GPU
def test_large_dequantize_to_float16_matches_the_oracle(gpu: dml.Device) -> None:
    """INT8 to FLOAT16 over 5000007 elements: 16-byte chunks of output, 8-byte ones of each input, a tail."""
    rng = np.random.default_rng(22)
    scale = np.array([0.3], np.float16)
    x = rng.integers(-128, 128, COUNT, dtype=np.int8)
    zero_point = rng.integers(-128, 128, COUNT, dtype=np.int8)
    kernel: Any = gpu.compile_operator(gpu.create_operator(TO_HALF)).kernel
    assert kernel.width is not None and COUNT % kernel.width, f"{COUNT} elements leave no tail after chunks of {kernel.width}"
    table = dequantize_table("INT8", "FLOAT16", scale.astype(np.float32), np.arange(-128, 128))
    expected = table[x.astype(np.int64) + 128, 0, zero_point.astype(np.int64) + 128]
    check_paths(kernel, lambda shift: run_elementwise(kernel, [x, scale, zero_point], np.dtype(np.float16), COUNT,
                                                      shift), expected, "DEQUANTIZE_LINEAR to FLOAT16")


def test_element_wise_cases_take_the_vector_kernel() -> None:
    """Without a GPU: each layout above takes the vector kernel, with a tail where it is 1-D (rows of
    whole chunks where it is not)."""
    cases = {f"CLIP {t}": clip_desc(t, n)[0] for t, n in CLIP_CASES.items()}
    cases.update({"per channel": PER_CHANNEL, "to FLOAT16": TO_HALF})
    for name, desc in cases.items():
        spec, layout = kernel_layout(desc)
        width = elementwise_c.vector_width(spec, layout)
        assert width is not None, name
        if name == "per channel":
            assert layout.rank == 2 and layout.sizes[-1] % width == 0, (name, layout)
        else:
            assert layout.rank == 1 and math.prod(layout.sizes) % width, (name, layout, width)
