"""The CPU backend's kernels against the NumPy references, bit for bit.

Both kernel sets run (Numba where installed, the blocked NumPy path always) over every data type, over
layouts that are contiguous, strided, padded, broadcast (stride 0), offset and in place, over every ARGMIN
axis layout in both directions, and at sizes that straddle the thread, block and tile boundaries.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import opendml as dml
from opendml import thread_count
from opendml.backends import cpu_kernels
from opendml.backends.cpu_kernels import blocked, threads, views
from opendml.dtypes import DataType
from opendml.kernels import KernelSpec
from opendml.ops.arg_reduction import arg_reduction_reference
from opendml.ops.argmax import ARGMAX
from opendml.ops.argmin import ARGMIN
from opendml.ops.clip import CLIP, CLIP1
from opendml.ops.dequantize_linear import DEQUANTIZE_LINEAR, dequantize_linear_reference
from opendml.ops.threshold import THRESHOLD
from tests import elementwise_oracle as oracle
from tests.limits import HANG_SECONDS

NO_NUMBA = pytest.mark.skipif(not cpu_kernels.numba_available(), reason="Numba is not installed (the opendml[fast] extra)")
KERNELS = [
    pytest.param("numba", id="numba", marks=NO_NUMBA),
    # Every output streamed (non-temporal stores), not only those of STREAM_MIN_BYTES and more.
    pytest.param("numba-streaming", id="numba-streaming", marks=NO_NUMBA),
    # FLOAT32 ARGMIN with integer keys only, never compared as floats.
    pytest.param("numba-integer", id="numba-integer", marks=NO_NUMBA),
    # Shares on Python threads, as in a child forked from a process using GNU OpenMP (drivers.usable).
    pytest.param("numba-python-threads", id="numba-python-threads", marks=NO_NUMBA),
    pytest.param("numpy", id="numpy"),
]

ALL = ["FLOAT32", "FLOAT16", "INT64", "INT32", "INT16", "INT8", "UINT64", "UINT32", "UINT16", "UINT8"]
BIG = views.PARALLEL_MIN + 1000  # more than one thread share, and not a multiple of the share alignment
SEAM = blocked.BLOCK * 2 + 7
if cpu_kernels.numba_available():  # the fast kernels' blocks, tiles and groups, which the ARGMIN tests straddle
    from opendml.backends.cpu_kernels.argmin.engines.columns import COLUMN_TILE, ROW_CHUNK, ROW_GROUP
    from opendml.backends.cpu_kernels.argmin.engines.rows import ROW_BLOCK
else:
    COLUMN_TILE, ROW_BLOCK, ROW_CHUNK, ROW_GROUP = 8192, 256, 1 << 20, 8


@pytest.fixture(params=KERNELS)
def kernels(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    return _kernels(request.param, monkeypatch)


def _kernels(param: str, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    name = param.split("-")[0]
    module = cpu_kernels.load(name)
    if param == "numba-streaming":
        monkeypatch.setattr(module, "STREAM_MIN_BYTES", 0)
    if param == "numba-integer":
        from opendml.backends.cpu_kernels.argmin import call as argmin_engine

        monkeypatch.setattr(argmin_engine, "FLOAT_COMPARISONS", False)
    if param == "numba-python-threads":
        monkeypatch.setattr(module.drivers, "usable", lambda: False)
    return module


def bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit-identical, except that any NaN equals any NaN (payloads may differ, SPEC 8.5)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        nan_a, nan_b = np.isnan(a), np.isnan(b)
        return bool(np.array_equal(nan_a, nan_b) and np.array_equal(bits(a)[~nan_a], bits(b)[~nan_b]))
    return bool(np.array_equal(a, b))


def sample(data_type: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Values that exercise every rule: NaN, signed zeros, infinities, subnormals, type limits, ties."""
    dtype = DataType[data_type].numpy
    count = int(np.prod(shape))
    if dtype.kind == "f":
        values = rng.standard_normal(count).astype(np.float32) * np.float32(rng.choice([1, 100, 70000], count))
        special = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 1e-45, -1e-45, 6e-8, 65504, 65520, 3.4e38],
                           np.float32)
        picks = rng.random(count) < 0.08
        values[picks] = rng.choice(special, int(picks.sum()))
        with np.errstate(over="ignore"):
            return values.astype(dtype).reshape(shape)
    info = np.iinfo(dtype)
    values = rng.integers(info.min, info.max, count, dtype=dtype, endpoint=True)
    picks = rng.random(count) < 0.05
    values[picks] = rng.choice(np.array([info.min, info.max, 0], dtype), int(picks.sum()))
    return values.reshape(shape)


def layouts(shape: tuple[int, ...]) -> dict[str, Callable[[np.ndarray], np.ndarray]]:
    """Ways to lay ``shape`` out in a larger buffer: each maps packed values to a view holding them."""
    def strided(v: np.ndarray) -> np.ndarray:
        buf = np.zeros((*v.shape[:-1], v.shape[-1] * 2), v.dtype)
        buf[..., ::2] = v
        return buf[..., ::2]

    def padded(v: np.ndarray) -> np.ndarray:
        buf = np.zeros((*v.shape[:-1], v.shape[-1] + 3), v.dtype)
        buf[..., :v.shape[-1]] = v
        return buf[..., :v.shape[-1]]

    def offset(v: np.ndarray) -> np.ndarray:
        buf = np.zeros(v.size + 5, v.dtype)
        buf[5:] = v.reshape(-1)
        return buf[5:].reshape(v.shape)

    def transposed(v: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(v.T).T if v.ndim > 1 else v

    return {"packed": lambda v: v.copy(), "strided": strided, "padded": padded, "offset": offset,
            "transposed": transposed}


@dataclass(frozen=True)
class Case:
    """An operator as the kernels see it: its validated fields (for the reference) and its KernelSpec."""

    params: Any
    spec: KernelSpec
    definition: Any

    def reference(self, x: np.ndarray) -> np.ndarray:
        return self.definition.reference([x], self.params)  # type: ignore[no-any-return]

    def run(self, kernels, *arrays: np.ndarray | None, threads: int = 2) -> None:  # type: ignore
        kernels.elementwise(self.spec)(*arrays, threads)


def case_of(definition: Any, desc: Any) -> Case:
    params = definition.prepare(desc)
    return Case(params, definition.kernel(params, definition.tensors(desc)), definition)


def unary_params(op: str, data_type: str, shape: tuple[int, ...], low: float, high: float,
                 scale_bias: tuple[float, float] | None) -> Case:
    t = dml.TensorDesc(data_type, shape)
    if op == "THRESHOLD":
        return case_of(THRESHOLD, dml.ElementWiseThresholdDesc(t, t, low, scale_bias))
    if op == "CLIP1" and data_type in ALL[2:]:
        info = np.iinfo(DataType[data_type].numpy)
        return case_of(CLIP1, dml.ElementWiseClip1Desc(t, t, data_type, int(info.min) + 3, int(info.max) - 2))
    return case_of(CLIP, dml.ElementWiseClipDesc(t, t, low, high, scale_bias))


def dequantize_case(in_type: str, out_type: str, shape: tuple[int, ...], zero_point: bool) -> Case:
    t_in, t_out = dml.TensorDesc(in_type, shape), dml.TensorDesc(out_type, shape)
    return case_of(DEQUANTIZE_LINEAR, dml.ElementWiseDequantizeLinearDesc(t_in, t_out, t_in if zero_point else None,
                                                                          t_out))


def check_clamp(kernels, case: Case, x: np.ndarray, out: np.ndarray, in_place: bool = False) -> None:  # type: ignore
    with np.errstate(all="ignore"):
        expected = case.reference(x.copy())
    base = out.base if out.base is not None else out
    before = base.copy()
    case.run(kernels, x, out)
    assert same(out, expected)
    if not in_place:  # padding and everything outside the view is untouched (SPEC 8.8)
        assert np.array_equal(bits(_outside(base, out)), bits(_outside(before, out, like=base)))


def _outside(buf: np.ndarray, view: np.ndarray, like: np.ndarray | None = None) -> np.ndarray:
    """The elements of ``buf`` (shaped like the base of ``view``) that ``view`` does not address."""
    base = like if like is not None else buf
    marks = np.zeros(base.size, bool)
    start = (view.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // view.itemsize
    offsets = np.zeros(view.shape, np.int64) + start
    for k, (n, s) in enumerate(zip(view.shape, view.strides)):
        shape = [1] * view.ndim
        shape[k] = n
        offsets = offsets + (np.arange(n) * (s // view.itemsize)).reshape(shape)
    marks[offsets.reshape(-1)] = True
    return np.ascontiguousarray(buf).reshape(-1)[~marks]


@pytest.mark.thin("kernels", ("op", "data_type"))  # each operator and type once; the whole grid under --slow
@pytest.mark.parametrize("data_type", ALL)
@pytest.mark.parametrize("op", ["CLIP", "CLIP1", "THRESHOLD"])
def test_clamp_every_type_and_layout(kernels, op: str, data_type: str) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(7)
    if op == "THRESHOLD" and data_type in ("INT64", "UINT64"):
        pytest.skip("THRESHOLD has no 64-bit types (SPEC 5)")
    shape = (3, 5, 67)
    floats = data_type.startswith("FLOAT")
    for scale_bias in ([None, (1.5, -0.25), (-3.0, 1e-3)] if floats else [None]):
        params = unary_params(op, data_type, shape, -0.0 if floats else -7.9, 2.5 if floats else 100.2, scale_bias)
        values = sample(data_type, shape, rng)
        for name, place in layouts(shape).items():
            x = place(values)
            out = layouts(shape)["padded"](np.zeros(shape, values.dtype))
            check_clamp(kernels, params, x, out)
            assert same(x, values), name  # the input is never written
        x = layouts(shape)["strided"](values)
        check_clamp(kernels, params, x, x, in_place=True)


@pytest.mark.parametrize("data_type", ["FLOAT32", "FLOAT16", "INT8", "UINT16"])
def test_clamp_broadcast_input_and_bounds(kernels, data_type: str) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(3)
    row = sample(data_type, (1, 40), rng)
    x = np.broadcast_to(row, (9, 40))  # a zero stride on the first axis
    for low, high in [(-1.0, 1.0), (2.0, -2.0), (float("nan"), 0.5), (-np.inf, np.inf)]:
        if not data_type.startswith("FLOAT") and np.isnan(low):
            continue
        params = unary_params("CLIP", data_type, (9, 40), low, high, None)
        check_clamp(kernels, params, x, np.zeros((9, 40), x.dtype))


@pytest.mark.parametrize("data_type", ["FLOAT32", "FLOAT16", "UINT8"])
@pytest.mark.parametrize("size", [1, 63, 64, 65, SEAM, BIG])
def test_clamp_sizes_across_thread_and_block_seams(kernels, data_type: str, size: int) -> None:  # type: ignore
    rng = np.random.default_rng(size)
    values = sample(data_type, (size,), rng)
    sb = (0.75, 0.125) if data_type.startswith("FLOAT") else None
    params = unary_params("CLIP", data_type, (size,), -1.0, 50.0, sb)
    check_clamp(kernels, params, values.copy(), np.zeros(size, values.dtype))
    inplace = values.copy()
    check_clamp(kernels, params, inplace, inplace, in_place=True)


def test_float16_rounding_is_exact_for_every_half_and_many_floats(kernels) -> None:  # type: ignore
    """Every FLOAT16 value through ScaleBias (1, 0), and float32 values around every rounding boundary."""
    halves = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    for sb in [(1.0, 0.0), (1.0009765625, 0.0), (0.5, 0.0), (1.0, 2.0 ** -25)]:
        params = unary_params("CLIP", "FLOAT16", (65536,), float("nan"), float("nan"), sb)
        check_clamp(kernels, params, halves, np.zeros(65536, np.float16))


@pytest.mark.parametrize("data_type", ALL)
def test_streamed_outputs_at_every_alignment(data_type: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Streaming stores write whole aligned vectors: runs start at every element offset within a vector and
    end anywhere, in and out of place, with and without ScaleBias; the rest of the buffer is untouched."""
    if not cpu_kernels.numba_available():
        pytest.skip("Numba is not installed (the opendml[fast] extra)")
    fast = cpu_kernels.load("numba")
    monkeypatch.setattr(fast, "STREAM_MIN_BYTES", 0)
    rng = np.random.default_rng(6)
    dtype = DataType[data_type].numpy
    lanes = 64 // dtype.itemsize
    floats = data_type.startswith("FLOAT")
    for size in (1, lanes - 1, lanes, lanes + 1, 3 * lanes + 5, 300):
        for shift in range(0, lanes + 1, max(1, lanes // 8)):
            values = sample(data_type, (size,), rng)
            for sb in ([None, (1.5, -0.25)] if floats else [None]):
                params = unary_params("CLIP", data_type, (size,), -1.0 if floats else -7.9, 2.5 if floats else 100.2,
                                      sb)
                buf = np.zeros(size + 2 * lanes, dtype)
                check_clamp(fast, params, values.copy(), buf[shift:shift + size])
                inplace = np.zeros(size + 2 * lanes, dtype)
                inplace[shift:shift + size] = values
                check_clamp(fast, params, inplace[shift:shift + size], inplace[shift:shift + size], in_place=True)


@pytest.mark.thin("kernels", "in_type", "out_type")  # tests/test_cpu_codegen.py runs each pair on Numba
@pytest.mark.parametrize("in_type", ["INT32", "INT16", "INT8", "UINT32", "UINT16", "UINT8"])
@pytest.mark.parametrize("out_type", ["FLOAT32", "FLOAT16"])
def test_dequantize_every_type_and_broadcast(kernels, in_type: str, out_type: str) -> None:  # type: ignore
    rng = np.random.default_rng(11)
    shape = (4, 6, 70)
    x = sample(in_type, shape, rng)
    scales = {
        "per-tensor": np.broadcast_to(np.asarray(rng.standard_normal() * 0.01, DataType[out_type].numpy), shape),
        "per-channel": np.broadcast_to(sample(out_type, (1, 1, 70), rng), shape),
        "per-row": np.broadcast_to(sample(out_type, (4, 1, 1), rng), shape),
        "full": layouts(shape)["strided"](sample(out_type, shape, rng)),
    }
    zero_points = {
        "none": None,
        "per-tensor": np.broadcast_to(sample(in_type, (1, 1, 1), rng), shape),
        "per-channel": np.broadcast_to(sample(in_type, (1, 1, 70), rng), shape),
        "full": sample(in_type, shape, rng),
    }
    for zname, zp in zero_points.items():
        case = dequantize_case(in_type, out_type, shape, zp is not None)
        for sname, scale in scales.items():
            for layout, place in layouts(shape).items():
                xv = place(x)
                with np.errstate(all="ignore"):
                    expected = dequantize_linear_reference([xv, scale, zp], case.params)
                out = layouts(shape)["padded"](np.zeros(shape, DataType[out_type].numpy))
                case.run(kernels, xv, scale, zp, out)
                assert same(out, expected), (zname, sname, layout)


@pytest.mark.parametrize("in_type", ["INT32", "INT16", "INT8", "UINT32", "UINT16", "UINT8"])
def test_streamed_dequantize_at_every_alignment(in_type: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """FLOAT32 outputs streamed from every element offset within a vector: rows of per-channel and
    per-tensor scales and zero points, and none."""
    if not cpu_kernels.numba_available():
        pytest.skip("Numba is not installed (the opendml[fast] extra)")
    fast = cpu_kernels.load("numba")
    monkeypatch.setattr(fast, "STREAM_MIN_BYTES", 0)
    rng = np.random.default_rng(12)
    for columns in (1, 15, 16, 17, 53):
        shape = (3, columns)
        x = sample(in_type, shape, rng)
        channel = np.broadcast_to(sample("FLOAT32", (1, columns), rng), shape)
        tensor = np.broadcast_to(np.float32(0.0371), shape)
        zero_points = [None, np.broadcast_to(sample(in_type, (1, columns), rng), shape),
                       np.broadcast_to(sample(in_type, (1, 1), rng), shape)]
        for zp in zero_points:
            case = dequantize_case(in_type, "FLOAT32", shape, zp is not None)
            for scale in (channel, tensor):
                with np.errstate(all="ignore"):
                    expected = dequantize_linear_reference([x, scale, zp], case.params)
                for shift in range(0, 17, 3):
                    buf = np.zeros(x.size + 40, np.float32)
                    out = buf[shift:shift + x.size].reshape(shape)
                    case.run(fast, x, scale, zp, out)
                    assert same(out, expected), (columns, shift)
                    assert not buf[:shift].any() and not buf[shift + x.size:].any()


@pytest.mark.parametrize("size", [5, SEAM, BIG])
def test_dequantize_sizes_across_seams(kernels, size: int) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(size)
    x = sample("UINT8", (size,), rng)
    scale = np.broadcast_to(np.float32(0.0371), (size,))
    zp = np.broadcast_to(np.uint8(131), (size,))
    case = dequantize_case("UINT8", "FLOAT32", (size,), True)
    out = np.zeros(size, np.float32)
    case.run(kernels, x, scale, zp, out)
    assert same(out, dequantize_linear_reference([x, scale, zp], case.params))


AXES_4D = {
    "inner": (3,), "outer": (0,), "middle": (1,), "two-middle": (1, 2), "non-adjacent": (0, 2),
    "outer-and-inner": (0, 3), "three": (0, 1, 3), "all": (0, 1, 2, 3),
}


def argmin_check(kernels, x: np.ndarray, axes: tuple[int, ...], direction: str,  # type: ignore
                 out_type: str = "INT64", threads: int = 2, variant: str = "ARGMIN") -> None:
    """``variant``: the operator, with ``-PROPAGATE`` for NanPolicy PROPAGATE (ARGMIN-PROPAGATE, ARGMAX...)."""
    shape = x.shape
    out_shape = tuple(1 if k in axes else n for k, n in enumerate(shape))
    operator, _, policy = variant.partition("-")
    desc = dml.ArgMaxDesc if operator == "ARGMAX" else dml.ArgMinDesc
    params = (ARGMAX if operator == "ARGMAX" else ARGMIN).prepare(desc(
        dml.TensorDesc(DataType.parse(x.dtype).name, shape), dml.TensorDesc(out_type, out_shape), axes, direction,
        policy or "IGNORE"))
    expected = arg_reduction_reference([x], params)
    out = layouts(out_shape)["padded"](np.full(out_shape, 77, DataType[out_type].numpy))
    kernels.argmin(params)(x, out, threads)
    assert same(out, expected), (axes, direction, variant)


@pytest.mark.thin("kernels", ("data_type", "direction"))
@pytest.mark.parametrize("data_type", ALL)
@pytest.mark.parametrize("direction", ["INCREASING", "DECREASING"])
def test_argmin_every_axis_layout_type_and_direction(kernels, data_type: str, direction: str) -> None:  # type: ignore
    rng = np.random.default_rng(5)
    shape = (5, 4, 3, 37)
    values = sample(data_type, shape, rng)
    ties = values.copy()  # few distinct values: many ties, so the direction decides
    ties.reshape(-1)[:] = np.resize(values.reshape(-1)[:6], values.size)[rng.permutation(values.size)]
    if data_type.startswith("FLOAT"):
        ties[1] = np.nan  # whole reductions of NaN only
    for axes in AXES_4D.values():
        for place in layouts(shape).values():
            for data in (values, ties):
                argmin_check(kernels, place(data), axes, direction)


@pytest.mark.parametrize("direction", ["INCREASING", "DECREASING"])
@pytest.mark.parametrize("shape,axes", [
    ((BIG,), (0,)),  # one long reduction split over threads
    ((3, 70001), (1,)),  # long rows
    ((70001, 4), (0,)),  # few columns
    ((300, 2 * 2048 + 3), (0,)),  # columns across the tile seam, split over threads
    ((1100, 300), (1,)),  # many rows over threads
    ((2, 90000, 2), (1,)),  # middle
    ((20, 70001), (0,)),  # few rows of many columns: the columns split over threads
    ((2048 + 13, 129), (0,)),  # many rows of a few columns: the rows split over threads, states merged
    ((4 * ROW_GROUP + 3, COLUMN_TILE + 5), (0,)),  # two column tiles, rows not a multiple of the group
    ((SEAM,), (0,)),
])
def test_argmin_sizes_across_seams(kernels, shape: tuple[int, ...], axes: tuple[int, ...], direction: str) -> None:  # type: ignore
    rng = np.random.default_rng(len(shape))
    x = sample("FLOAT32", shape, rng)
    x[x > 0] = 1.0  # ties everywhere
    argmin_check(kernels, x, axes, direction)
    argmin_check(kernels, np.full(shape, np.nan, np.float32), axes, direction)
    argmin_check(kernels, np.where(np.isnan(x), np.inf, np.float32(np.inf)), axes, direction)


def float_specials(data_type: str) -> np.ndarray:
    """Values whose order is easy to get wrong: NaN of both signs and other payloads, signed zeros,
    infinities, the smallest subnormals, the largest finite values, and their neighbours."""
    if data_type == "FLOAT16":
        bits16 = [0x7E00, 0xFE00, 0x7C01, 0xFFFF, 0x8000, 0x0000, 0x7C00, 0xFC00, 0x0001, 0x8001, 0x7BFF, 0xFBFF,
                  0x3C00, 0xBC00, 0x3C01]
        return np.array(bits16, np.uint16).view(np.float16)
    bits32 = [0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF, 0x80000000, 0x00000000, 0x7F800000, 0xFF800000,
              0x00000001, 0x80000001, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0xBF800000, 0x3F800001]
    return np.array(bits32, np.uint32).view(np.float32)


@pytest.mark.parametrize("data_type", ["FLOAT32", "FLOAT16"])
@pytest.mark.parametrize("direction", ["INCREASING", "DECREASING"])
def test_argmin_orders_every_pair_of_special_floats(kernels, data_type: str, direction: str) -> None:  # type: ignore
    """Every ordered pair (and triple with a repeat) of special values, reduced along rows and along columns."""
    v = float_specials(data_type)
    a, b = np.meshgrid(v, v, indexing="ij")
    pairs = np.stack([a.reshape(-1), b.reshape(-1)], axis=1)  # one pair per row
    triples = np.concatenate([pairs, pairs[:, :1]], axis=1)  # the first value again, last: a tie at both ends
    for rows in (pairs, triples):
        argmin_check(kernels, rows, (1,), direction)
        argmin_check(kernels, np.ascontiguousarray(rows.T), (0,), direction)


@NO_NUMBA
def test_float32_block_minimum_agrees_with_the_keys_on_special_values() -> None:
    """The FLOAT32 block minimum (bits flipped and shifted to signed order) against the minimum of the keys,
    over blocks of special values of every length up to past two vectors, so the remainder loop runs too."""
    import numba

    from opendml.backends.cpu_kernels.argmin.engines import rows as argmin_rows
    from opendml.backends.cpu_kernels.argmin.keys import FLOAT

    block_min = numba.njit(lambda block, kind: argmin_rows.block_min(block, kind))  # an overload: compiled only
    v = float_specials("FLOAT32").view(np.int32)
    rng = np.random.default_rng(11)
    for _ in range(4000):
        block = rng.choice(v, size=int(rng.integers(1, 70)))
        assert block_min(block, FLOAT) == argmin_rows.keyed_min(block, FLOAT), block.view(np.float32)


@pytest.mark.parametrize("direction", ["INCREASING", "DECREASING"])
def test_argmin_every_half_in_one_reduction(kernels, direction: str) -> None:  # type: ignore[no-untyped-def]
    halves = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    rng = np.random.default_rng(9)
    for x in (halves, halves[rng.permutation(65536)], halves[::-1].copy()):
        argmin_check(kernels, x.reshape(256, 256), (1,), direction)
        argmin_check(kernels, x.reshape(256, 256), (0,), direction)
        argmin_check(kernels, x.reshape(1, -1), (1,), direction)


@pytest.mark.parametrize("data_type", ALL)
@pytest.mark.parametrize("direction", ["INCREASING", "DECREASING"])
def test_argmin_long_runs_with_ties_across_blocks(kernels, data_type: str, direction: str) -> None:  # type: ignore
    """Runs longer than a block, whose minimum appears in several blocks (at block edges and in the last,
    partial block), as -0.0 in one place and +0.0 in another, or after a NaN: along rows and columns."""
    block = ROW_BLOCK
    n = 3 * block + 5
    rng = np.random.default_rng(4)
    dtype = DataType[data_type].numpy
    rows = np.zeros((8, n), dtype)
    rows[...] = 100 if dtype.kind != "f" else 100.0
    rows += (rng.integers(1, 20, rows.shape)).astype(dtype)
    low = -3 if dtype.kind in "if" else 1
    places = [[block - 1, 2 * block], [0, n - 1], [block, 3 * block + 2], [n - 1], [2 * block + 7, block + 3],
              [5, block - 1, 2 * block - 1, 3 * block]]
    for r, where in enumerate(places):
        rows[r, where] = low
    if dtype.kind == "f":
        rows[6, [block + 1, 2 * block + 4]] = (-0.0, 0.0)  # equal: the direction picks
        rows[6, rows[6] > 0] = 7.0
        rows[7, :] = np.nan
        rows[7, [3 * block + 1, 3 * block + 4]] = 2.0
    for x in (rows, rows[:, ::-1].copy()):
        argmin_check(kernels, x, (1,), direction)
        argmin_check(kernels, np.ascontiguousarray(x.T), (0,), direction)
        argmin_check(kernels, x.reshape(1, -1), (1,), direction)


@pytest.mark.parametrize("data_type", ALL)
@pytest.mark.parametrize("direction", ["INCREASING", "DECREASING"])
def test_argmin_short_rows_of_every_length_around_whole_vectors(kernels, data_type: str, direction: str) -> None:  # type: ignore
    """Short rows are reduced a vector of lanes at a time, then element by element: rows of every length
    around one, two and four vectors of any element size, up to ROW_BLOCK, with the minimum in a lane, in
    the elements after the vectors, tied between both, as a signed zero pair, or absent (NaN rows)."""
    rng = np.random.default_rng(21)
    dtype = DataType[data_type].numpy
    for n in sorted({1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, ROW_BLOCK - 1, ROW_BLOCK}):
        x = sample(data_type, (12, n), rng)
        few = x.copy()
        few.reshape(-1)[:] = np.resize(x.reshape(-1)[:3], x.size)[rng.permutation(x.size)]  # ties in every row
        low = np.array(-5 if dtype.kind in "if" else 0, dtype)
        x[0, :] = x[0, ::-1].max() if dtype.kind != "f" else 9
        x[0, n - 1] = low  # in the last element (after the vectors, where there is a remainder)
        x[1, :] = x[0, :]
        x[1, [0, n - 1]] = low  # tied between the first vector and the remainder
        if dtype.kind == "f":
            x[2, :] = np.nan
            x[3, :] = 5
            x[3, [n // 3, n - 1]] = (0.0, -0.0)  # equal: the direction picks
        argmin_check(kernels, x, (1,), direction)
        argmin_check(kernels, few, (1,), direction)


@pytest.mark.parametrize("direction", ["INCREASING", "DECREASING"])
def test_argmin_rows_whose_minimum_is_infinity_next_to_nan_only_parts(kernels, direction: str) -> None:  # type: ignore
    """Rows compared as floats start every lane and block at +inf, as a part holding only NaN ends: rows
    whose minimum is +inf (after, before and between such parts), short and long, must still find it."""
    for n in (64, 200, ROW_BLOCK, 3 * ROW_BLOCK + 9):
        x = np.full((6, n), np.nan, np.float32)
        x[0, n - 1] = np.inf  # after NaN only
        x[1, 0] = np.inf  # before
        x[2, [n // 2, n - 2]] = np.inf  # between, tied
        x[3, :] = np.inf  # all +inf
        x[4, n // 3] = -np.inf
        x[5, [1, n - 1]] = (np.inf, 3.0)
        argmin_check(kernels, x, (1,), direction)
        argmin_check(kernels, x.reshape(1, -1), (1,), direction)


# ARGMAX and NanPolicy PROPAGATE run on the same engines (their keys order-reversed, NaN's key first): the
# cases above that the key transforms could get wrong, for each. The kernels: Numba (FLOAT32 rows compared
# as floats, and with integer keys only) and NumPy; the other fixtures differ only in element-wise code.
# Each (type, operator, policy, direction) compiles the engines again, so the runs share the kinds of
# tests/test_argmin_large.py: FLOAT32 ARGMAX with NaN ignored and winning, FLOAT16 ARGMAX with NaN winning
# (its lanes' reversal and its NaN rotation at once), INT64 and UINT64 ARGMAX one direction each; FLOAT32
# ARGMIN under PROPAGATE and every integer type's lanes take the short rows only.
VARIANTS = ["ARGMAX", "ARGMIN-PROPAGATE", "ARGMAX-PROPAGATE"]
ONE_DIRECTION = {t: ("INCREASING", "DECREASING")[k % 2] for k, t in enumerate(["INT64", "UINT64", "INT32", "UINT32",
                                                                              "INT16", "UINT16", "UINT8", "INT8"])}
FLOAT_VARIANTS = [("FLOAT32", "ARGMAX"), ("FLOAT32", "ARGMAX-PROPAGATE"), ("FLOAT16", "ARGMAX-PROPAGATE")]


@pytest.fixture(params=[p for p in KERNELS if p.values[0] in ("numba", "numba-integer", "numpy")])
def arg_kernels(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    return _kernels(request.param, monkeypatch)


@pytest.mark.parametrize("data_type, variant", [*FLOAT_VARIANTS, ("FLOAT32", "ARGMIN-PROPAGATE")])
def test_argmax_and_propagate_order_every_pair_of_special_floats(arg_kernels, data_type: str,  # type: ignore
                                                                 variant: str) -> None:
    """As for ARGMIN: NaN of both signs and payloads (ignored, or tied winners), signed zeros (a tie),
    infinities, subnormals and the largest finite values, along rows (short: the vector lanes) and columns."""
    v = float_specials(data_type)
    a, b = np.meshgrid(v, v, indexing="ij")
    pairs = np.stack([a.reshape(-1), b.reshape(-1)], axis=1)
    triples = np.concatenate([pairs, pairs[:, :1]], axis=1)
    wide = np.tile(triples, (1, 11))  # 33 elements a row: whole vectors, then a rest
    for direction in ("INCREASING", "DECREASING"):
        for rows in (pairs, triples, wide):
            argmin_check(arg_kernels, rows, (1,), direction, variant=variant)
            argmin_check(arg_kernels, np.ascontiguousarray(rows.T), (0,), direction, variant=variant)


@pytest.mark.parametrize("data_type, variant", [(t, "ARGMAX") for t in ALL[2:]] + FLOAT_VARIANTS
                         + [("FLOAT32", "ARGMIN-PROPAGATE")])
def test_argmax_short_rows_of_every_length_every_type(arg_kernels, data_type: str, variant: str) -> None:  # type: ignore
    """The vector lanes of every element type, order-reversed: rows of every length around whole vectors,
    the largest in a lane, after the vectors, tied between both, at the type's limits; NaN rows and a NaN
    after the largest. The integers take one direction each, signed and unsigned both (the directions'
    code is the types' own, and each compiles)."""
    dtype = DataType[data_type].numpy
    rng = np.random.default_rng(22)
    top = np.array(np.inf if dtype.kind == "f" else np.iinfo(dtype).max, dtype)
    bottom = np.array(-np.inf if dtype.kind == "f" else np.iinfo(dtype).min, dtype)
    for n in (1, 7, 8, 9, 16, 17, 33, 64, 65, 129, ROW_BLOCK):
        x = sample(data_type, (8, n), rng)
        x[0, :] = bottom
        x[0, n - 1] = top  # in the last element (after the vectors, where there is a remainder)
        x[1, :] = bottom
        x[1, [0, n - 1]] = top  # tied between the first vector and the rest
        x[2, :] = bottom  # the type's smallest only: a tie of every element
        if dtype.kind == "f":
            x[3, :] = np.nan
            x[4, :] = 5
            x[4, [n // 3, n - 1]] = (0.0, -0.0)  # equal: the direction picks
            x[5, [0, n // 2, n - 1]] = (np.inf, np.nan, -np.nan)  # NaN after the largest
        directions = ["INCREASING", "DECREASING"] if dtype.kind == "f" else [ONE_DIRECTION[data_type]]
        for direction in directions:
            argmin_check(arg_kernels, x, (1,), direction, variant=variant)


@pytest.mark.parametrize("data_type, variant", FLOAT_VARIANTS)
def test_argmax_and_propagate_long_runs_across_blocks(arg_kernels, data_type: str, variant: str) -> None:  # type: ignore
    """Runs longer than a block (searched block by block): the winner in several blocks, at block edges and
    in the last, partial block, as -0.0 in one place and +0.0 in another, a NaN in a late block only,
    NaN before an infinity; along rows and columns."""
    block = ROW_BLOCK
    n = 3 * block + 5
    rows = np.full((8, n), 1.0, DataType[data_type].numpy)
    places = [[block - 1, 2 * block], [0, n - 1], [block, 3 * block + 2], [n - 1], [2 * block + 7, block + 3],
              [5, block - 1, 2 * block - 1, 3 * block]]
    for r, where in enumerate(places):
        rows[r, where] = 3.0 if "ARGMAX" in variant else -3.0
    rows[1, [block + 9, 2 * block]] = (np.nan, -np.nan)  # NaN in the middle blocks
    rows[4, 3 * block + 1] = np.nan  # a NaN in the last, partial block only
    rows[6, [block + 1, 2 * block + 4]] = (-0.0, 0.0)  # equal: the direction picks
    rows[6, rows[6] > 0] = -7.0 if "ARGMAX" in variant else 7.0
    rows[7, :] = np.nan
    rows[7, [3 * block + 1, 3 * block + 4]] = (np.inf, -np.inf)
    for x in (rows, rows[:, ::-1].copy()):
        for direction in ("INCREASING", "DECREASING"):
            argmin_check(arg_kernels, x, (1,), direction, variant=variant)
            argmin_check(arg_kernels, np.ascontiguousarray(x.T), (0,), direction, variant=variant)
            argmin_check(arg_kernels, x.reshape(1, -1), (1,), direction, variant=variant)


@pytest.mark.parametrize("variant", ["ARGMAX", "ARGMAX-PROPAGATE"])
def test_argmax_rows_whose_largest_is_minus_infinity_next_to_nan_only_parts(arg_kernels, variant: str) -> None:  # type: ignore
    """ARGMAX compares negated values as floats, its lanes starting at +inf (-inf negated): rows whose
    largest is -inf (after, before and between NaN only parts) are reduced again; under PROPAGATE, a lane
    that met a NaN makes the run not certain as floats, whatever its best."""
    for n in (64, 200, ROW_BLOCK, 3 * ROW_BLOCK + 9):
        x = np.full((7, n), np.nan, np.float32)
        x[0, n - 1] = -np.inf  # after NaN only
        x[1, 0] = -np.inf  # before
        x[2, [n // 2, n - 2]] = -np.inf  # between, tied
        x[3, :] = -np.inf  # all -inf
        x[4, n // 3] = np.inf
        x[5, [1, n - 1]] = (-np.inf, 3.0)
        x[6, :] = 2.0
        x[6, [n // 2, n - 1]] = (np.nan, np.inf)  # one NaN among numbers
        for direction in ("INCREASING", "DECREASING"):
            argmin_check(arg_kernels, x, (1,), direction, variant=variant)
            argmin_check(arg_kernels, x.reshape(1, -1), (1,), direction, variant=variant)
            argmin_check(arg_kernels, np.ascontiguousarray(x.T), (0,), direction, variant=variant)


def test_argmax_every_axis_layout_and_output_type(arg_kernels) -> None:  # type: ignore[no-untyped-def]
    """ARGMAX of FLOAT16 under PROPAGATE (ties, NaN, whole reductions of NaN) and of INT64 and UINT64 at
    their limits (one direction each), over every axis layout, into every index type."""
    rng = np.random.default_rng(6)
    shape = (5, 4, 3, 37)
    out_types = ["INT32", "UINT32", "UINT64", "INT64"]
    for data_type, variant in (("FLOAT16", "ARGMAX-PROPAGATE"), ("INT64", "ARGMAX"), ("UINT64", "ARGMAX")):
        ties = sample(data_type, shape, rng)
        ties.reshape(-1)[:] = np.resize(ties.reshape(-1)[:6], ties.size)[rng.permutation(ties.size)]
        if data_type == "FLOAT16":
            ties[1] = np.nan
            ties[2, ::3] = np.nan
        for k, axes in enumerate(AXES_4D.values()):
            for name in ("packed", "strided", "transposed"):
                for direction in ("INCREASING", "DECREASING") if data_type == "FLOAT16" else [ONE_DIRECTION[data_type]]:
                    argmin_check(arg_kernels, layouts(shape)[name](ties), axes, direction, out_types[k % 4],
                                 variant=variant)


def test_argmax_every_half_in_one_reduction(arg_kernels) -> None:  # type: ignore[no-untyped-def]
    variant = "ARGMAX-PROPAGATE"
    halves = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    rng = np.random.default_rng(9)
    for x in (halves, halves[rng.permutation(65536)]):
        for direction in ("INCREASING", "DECREASING"):
            argmin_check(arg_kernels, x.reshape(256, 256), (1,), direction, variant=variant)
            argmin_check(arg_kernels, x.reshape(256, 256), (0,), direction, variant=variant)
            argmin_check(arg_kernels, x.reshape(1, -1), (1,), direction, variant=variant)


@pytest.mark.parametrize("direction", ["INCREASING", "DECREASING"])
def test_numpy_split_runs_merge_the_pieces_winners_by_the_operators_rule(direction: str) -> None:
    """The NumPy kernels cut a reduction longer than four blocks into pieces and reduce the pieces' winners
    again: for each operator and NaN policy, the oracle's index, with the winner in any piece, NaN in some
    pieces and not others, and rows of NaN only."""
    n = 4 * blocked.BLOCK + 5000
    rng = np.random.default_rng(12)
    x = rng.choice(np.array([1.0, -0.0, 0.0, 2.0, -3.0], np.float32), (6, n))
    x[0, :] = np.nan
    x[1, : n // 2] = np.nan  # the first pieces NaN only
    x[2, [70000, 200000]] = (np.nan, -np.nan)
    x[3, [10, n - 1]] = (np.inf, -np.inf)
    x[4, [5, 150000, n - 2]] = (-0.0, 9.0, -9.0)
    x[5, :] = 7.0
    x[5, [3, n - 1]] = np.nan
    for variant in ["ARGMIN", *VARIANTS]:
        params = (ARGMAX if variant.startswith("ARGMAX") else ARGMIN).prepare(
            (dml.ArgMaxDesc if variant.startswith("ARGMAX") else dml.ArgMinDesc)(
                dml.TensorDesc("FLOAT32", x.shape), dml.TensorDesc("INT64", (6, 1)), (1,), direction,
                "PROPAGATE" if variant.endswith("PROPAGATE") else "IGNORE"))
        out = np.zeros((6, 1), np.int64)
        blocked.argmin(params)(x, out, 2)
        want = [oracle.arg_of(row, direction, variant.startswith("ARGMAX"), variant.endswith("PROPAGATE"))
                for row in x.tolist()]
        assert out.reshape(-1).tolist() == want, variant


@NO_NUMBA
def test_block_minimum_agrees_with_the_keys_for_every_operator_and_nan_policy() -> None:
    """The block minimum of each kind against the minimum of the keys (``keyed_min``), on blocks of special
    values: FLOAT32's raw keys (order-reversed for ARGMAX, NaN rotated below -inf under PROPAGATE), and
    ARGMAX's of FLOAT16 (minus the largest key of ARGMIN with the other NaN policy) and of integers at their
    limits (the complement of the largest element)."""
    import numba

    from opendml.backends.cpu_kernels.argmin.engines import rows as argmin_rows
    from opendml.backends.cpu_kernels.argmin.keys import marker

    block_min = numba.njit(lambda block, kind: argmin_rows.block_min(block, kind))
    rng = np.random.default_rng(13)
    for data_type in ("FLOAT32", "FLOAT16"):
        v = float_specials(data_type).view(np.int32 if data_type == "FLOAT32" else np.uint16)
        for largest, propagate in ((True, False), (False, True), (True, True)):
            kind = marker(DataType[data_type].numpy, largest, propagate)
            for _ in range(500):
                block = rng.choice(v, size=int(rng.integers(1, 70)))
                assert block_min(block, kind) == argmin_rows.keyed_min(block, kind), (largest, propagate, block)
    for data_type in ("INT8", "UINT8", "INT64", "UINT64"):
        info = np.iinfo(DataType[data_type].numpy)
        values = np.array([info.min, info.min + 1, 0, 1, info.max - 1, info.max], info.dtype)
        for _ in range(200):
            block = rng.choice(values, size=int(rng.integers(1, 70)))
            assert block_min(block, marker(info.dtype, True)) == argmin_rows.keyed_min(block, marker(info.dtype, True))


def test_argmin_from_several_threads_at_once_and_in_turn(kernels) -> None:  # type: ignore[no-untyped-def]
    """Reductions keep their running state in arrays each thread reuses: calls from several threads at
    once, and calls in turn with more and fewer outputs, each give their own reference result."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(8)
    inputs = [sample("FLOAT32", (rows, 40 + k), rng) for k, rows in enumerate([3000, 50, 2000, 7, 3000, 1])]

    def one(x: np.ndarray) -> bool:
        for _ in range(3):
            argmin_check(kernels, x, (1,), "INCREASING")
        return True

    assert all(one(x) for x in inputs)  # in turn: the kept arrays grow, then serve fewer outputs
    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(one, inputs * 2))


@pytest.mark.parametrize("direction", ["INCREASING", "DECREASING"])
def test_argmin_more_rows_than_one_tile_state_holds(kernels, direction: str) -> None:  # type: ignore[no-untyped-def]
    """Past ROW_CHUNK rows a column's running state is merged and started again; the minimum on both sides."""
    x = np.full((ROW_CHUNK + 37, 2), 5, np.int8)
    x[[3, ROW_CHUNK + 30], 0] = -1  # a tie across the seam
    x[ROW_CHUNK + 1, 1] = -2  # the minimum only after it
    argmin_check(kernels, x, (0,), direction, threads=1)  # one thread: no split into smaller pieces


@pytest.mark.parametrize("out_type", ["INT32", "UINT32", "UINT64"])
def test_argmin_output_types_and_broadcast_input(kernels, out_type: str) -> None:  # type: ignore
    rng = np.random.default_rng(2)
    row = sample("INT16", (1, 50), rng)
    x = np.broadcast_to(row, (6, 50))  # every column holds one value: ties along axis 0
    for axes in [(0,), (1,), (0, 1)]:
        for direction in ["INCREASING", "DECREASING"]:
            argmin_check(kernels, x, axes, direction, out_type)


def test_thread_count_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(thread_count.ENV_THREADS, "3")
    assert dml.Device("cpu").threads == 3
    assert dml.Device("cpu", threads=1).threads == 1
    monkeypatch.delenv(thread_count.ENV_THREADS)
    assert dml.Device("cpu").threads == thread_count.available_cores()
    for bad in (0, -2, 1.5, "two", True):
        with pytest.raises(dml.InvalidArgumentError, match="Device: threads must be a positive integer"):
            dml.Device("cpu", threads=bad)  # type: ignore[arg-type]
    monkeypatch.setenv(thread_count.ENV_THREADS, "many")
    with pytest.raises(dml.InvalidArgumentError, match="OPENDML_NUM_THREADS must be a positive integer"):
        dml.Device("cpu")


def test_one_thread_and_many_threads_agree(kernels) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(1)
    x = sample("FLOAT32", (BIG,), rng)
    params = unary_params("CLIP", "FLOAT32", (BIG,), -1.0, 1.0, (2.0, 0.5))
    one, many = np.zeros_like(x), np.zeros_like(x)
    params.run(kernels, x, one, threads=1)
    params.run(kernels, x, many, threads=4)
    assert same(one, many)


@NO_NUMBA
def test_shares_run_on_numba_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every operator that is shared out goes through a Numba-parallel driver, and its result is exact."""
    from opendml.backends.cpu_kernels import drivers, fast

    launched: list[str] = []
    launch = drivers.launch
    monkeypatch.setattr(drivers, "launch", lambda d, args, w: launched.append(d.__name__) or launch(d, args, w))
    rng = np.random.default_rng(4)
    x = sample("FLOAT32", (BIG,), rng)
    check_clamp(fast, unary_params("CLIP", "FLOAT32", (BIG,), -1.0, 1.0, None), x, np.empty_like(x))
    argmin_check(fast, sample("FLOAT32", (64, 8192), rng), (0,), "INCREASING", threads=4)  # columns
    argmin_check(fast, sample("FLOAT32", (1024, 512), rng), (0,), "INCREASING", threads=4)  # rows, then merged
    argmin_check(fast, sample("INT8", (4096, 128), rng), (1,), "DECREASING", threads=4)  # output rows
    assert launched == ["driver", "columns", "columns", "short_rows"]  # CLIP's, then each plan's


@NO_NUMBA
def test_a_run_leaves_the_callers_numba_thread_count_alone() -> None:
    import numba

    from opendml.backends.cpu_kernels import fast

    x = sample("INT16", (BIG,), np.random.default_rng(9))
    numba.set_num_threads(1)
    try:
        unary_params("CLIP", "INT16", (BIG,), -5, 5, None).run(fast, x, np.empty_like(x))
        assert numba.get_num_threads() == 1
    finally:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


@NO_NUMBA
@pytest.mark.parametrize("out_type", ["INT32", "UINT32", "INT64", "UINT64"])
@pytest.mark.parametrize("direction", ["INCREASING", "DECREASING"])
def test_many_output_rows_filled_and_finished_on_the_threads(out_type: str, direction: str) -> None:
    """More output elements than one thread's share: the state is filled and the indices written out on the
    threads, NaN-only rows taking the default (SPEC 8.5), into a contiguous output of each index type."""
    from opendml.backends.cpu_kernels import fast

    rng = np.random.default_rng(8)
    rows = views.PARALLEL_MIN + 333
    x = sample("FLOAT32", (rows, 3), rng)
    x[rng.integers(0, rows, 500)] = np.nan
    params = ARGMIN.prepare(dml.ArgMinDesc(dml.TensorDesc("FLOAT32", x.shape), dml.TensorDesc(out_type, (rows, 1)),
                                           (1,), direction))
    out = np.full((rows, 1), 77, DataType[out_type].numpy)
    fast.argmin(params)(x, out, 3)
    assert same(out, arg_reduction_reference([x], params))


@NO_NUMBA
@pytest.mark.parametrize("direction", ["INCREASING", "DECREASING"])
def test_parallel_merge_of_states(direction: str) -> None:
    """Pieces' states merged slot range by slot range on Numba's threads: each slot ends with the smallest
    key any piece found, ties going to the smaller index (INCREASING) or the larger (SPEC 7)."""
    from opendml.backends.cpu_kernels import drivers
    from opendml.backends.cpu_kernels.argmin import drivers as argmin_drivers
    from opendml.backends.cpu_kernels.argmin.keys import DECREASING

    rng = np.random.default_rng(7)
    pieces, slots = 5, 3000
    cur = rng.integers(-3, 3, (pieces, slots)).astype(np.int32)  # many equal keys: the index decides
    idx = rng.integers(-1, 50, (pieces, slots)).astype(np.int64)  # -1: that piece found nothing there
    idx[:, :7] = -1  # no piece found anything there (every element NaN)
    sign = -1 if direction == "DECREASING" else 1
    want, ties = [], 0
    for s in range(slots):
        found = [(int(cur[p, s]), int(idx[p, s])) for p in range(pieces) if idx[p, s] >= 0]
        want.append(min(found, key=lambda f: (f[0], sign * f[1])) if found else None)
        ties += len({i for k, i in found if k == min(found)[0]}) > 1 if found else 0
    order = DECREASING if direction == "DECREASING" else None
    bounds = drivers.bounds_of([(0, 1000), (1000, 1001), (1001, slots)])
    drivers.launch(argmin_drivers.merge, (cur, idx, order, bounds), 3)
    assert [None if idx[0, s] < 0 else (int(cur[0, s]), int(idx[0, s])) for s in range(slots)] == want
    assert want.count(None) == 7 and ties > 1000  # the direction decides in many slots


@NO_NUMBA
def test_more_threads_than_numba_has() -> None:
    import numba

    from opendml.backends.cpu_kernels import fast

    rng = np.random.default_rng(5)
    many = numba.config.NUMBA_NUM_THREADS * 4 + 1
    x = sample("UINT8", (BIG,), rng)
    case = unary_params("CLIP", "UINT8", (BIG,), 3, 200, None)
    out = np.empty_like(x)
    case.run(fast, x, out, threads=many)
    assert same(out, case.reference(x))
    argmin_check(fast, sample("FLOAT16", (512, 2048), rng), (0, 1), "INCREASING", threads=many)


@NO_NUMBA
@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="os.fork is POSIX only")
@pytest.mark.filterwarnings("ignore:.*fork.*:DeprecationWarning")  # forking with threads running is the point
def test_a_forked_child_runs_operators() -> None:
    """After a parallel run in this process, a forked child still runs shared-out operators (on Python
    threads where Numba's threads are GNU OpenMP's, which a fork leaves unusable) and gets exact results."""
    import multiprocessing

    rng = np.random.default_rng(6)
    x = sample("FLOAT32", (8192, 64), rng)
    expected = np.asarray(dml.argmin(x, 1, device=dml.Device("cpu", threads=2)))  # starts the threads here
    context = multiprocessing.get_context("fork")
    with context.Pool(1) as pool:
        got = pool.apply_async(_child_argmin, (x,)).get(timeout=HANG_SECONDS)  # a child stuck waiting fails, not hangs
    assert np.array_equal(got, expected)


def _child_argmin(x: np.ndarray) -> np.ndarray:
    return np.asarray(dml.argmin(x, 1, device=dml.Device("cpu", threads=2)))


def test_run_tasks_keeps_order_and_bounds_concurrency() -> None:
    """Each task stays running until three run at once (or every task left is running), then a little longer:
    with the bound kept exactly three ever run together; a broken bound lets the waiting ones pile up past it.
    No clock decides: a bound below three would wait for a hang's time and then fail."""
    import threading
    import time

    count = 10
    active, peak, finished, ready = [0], [0], [0], threading.Condition()

    def task(k: int) -> int:
        with ready:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
            ready.notify_all()
            ready.wait_for(lambda: active[0] >= min(3, count - finished[0]), timeout=HANG_SECONDS)
        time.sleep(0.02)  # still running while the next tasks start
        with ready:
            active[0] -= 1
            finished[0] += 1
            ready.notify_all()
        return k * k

    assert threads.run_tasks(task, [(k,) for k in range(count)], 3) == [k * k for k in range(count)]
    assert peak[0] == 3


def test_run_tasks_deals_tasks_to_free_threads_and_the_caller_works_too() -> None:
    """A thread held up by one slow task (as by other work on its core) leaves the rest to the others: task 0
    ends only once every other task has run (elsewhere, necessarily), so no clock decides."""
    import threading
    import time

    ran_on: dict[int, int] = {}
    others, lock, others_done = [0], threading.Lock(), threading.Event()

    def task(k: int) -> int:
        ran_on[k] = threading.get_ident()
        if k == 0:
            others_done.wait(timeout=HANG_SECONDS)  # tasks dealt out ahead of time would wait behind it
            return k
        time.sleep(0.005)
        with lock:
            others[0] += 1
            if others[0] == 11:
                others_done.set()
        return k

    assert threads.run_tasks(task, [(k,) for k in range(12)], 2) == list(range(12))
    assert all(ran_on[k] != ran_on[0] for k in range(1, 12))  # none waited behind the slow task
    assert threading.get_ident() in ran_on.values()


def test_run_tasks_raises_what_a_task_raises() -> None:
    def task(k: int) -> int:
        if k == 3:
            raise dml.InvalidArgumentError("ARGMIN: Axes must be valid; got 3.")
        return k

    with pytest.raises(dml.InvalidArgumentError, match="got 3"):
        threads.run_tasks(task, [(k,) for k in range(8)], 2)
