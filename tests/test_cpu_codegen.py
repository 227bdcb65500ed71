"""Generated CPU element-wise kernels against the operators' NumPy references and the independent oracle.

Every kernel here is generated from its operator's expression (``cpu_kernels.codegen``; the NumPy path
evaluates the same expression) and compared bit for bit with both the reference in ``opendml/ops`` and the
element-by-element model in ``tests/elementwise_oracle.py``, which shares no code with opendml: over every
data type, ScaleBias, absent bounds, absent zero points, FLOAT16 in and out, strided, broadcast and in-place
layouts, and sizes that cross the thread and streaming-store thresholds. Large tensors are checked against
the oracle through a table of their distinct inputs (an element's result depends on its inputs only).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import opendml as dml
from opendml import expr as ex
from opendml.backends import cpu_kernels
from opendml.backends.cpu_kernels import views
from opendml.dtypes import DataType
from opendml.enums import NanPolicy
from opendml.kernels import KernelSpec, Reduction, ReductionKind
from opendml.ops.clip import CLIP, CLIP1
from opendml.ops.dequantize_linear import DEQUANTIZE_LINEAR, dequantize_linear_reference
from opendml.ops.threshold import THRESHOLD
from tests import elementwise_oracle as oracle

NUMBA = pytest.mark.skipif(not cpu_kernels.numba_available(), reason="Numba is not installed (the opendml[fast] extra)")
KERNELS = [pytest.param("numba", marks=NUMBA), "numpy"]
ALL = ["FLOAT32", "FLOAT16", "INT64", "INT32", "INT16", "INT8", "UINT64", "UINT32", "UINT16", "UINT8"]
STREAMED_ELEMENTS = (1 << 25) // 4 + 77  # a FLOAT32 output of just over the streaming threshold (32 MiB)


def bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])


def same(got: np.ndarray, expected: np.ndarray) -> bool:
    """Bit-identical, except that any NaN equals any NaN (SPEC 8.5)."""
    if got.dtype != expected.dtype or got.shape != expected.shape:
        return False
    if got.dtype.kind == "f":
        nan_g, nan_e = np.isnan(got), np.isnan(expected)
        return bool(np.array_equal(nan_g, nan_e) and np.array_equal(bits(got)[~nan_g], bits(expected)[~nan_e]))
    return bool(np.array_equal(got, expected))


def sample(data_type: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Values with NaN, signed zeros, infinities, subnormals, FLOAT16's limits and the integer limits."""
    dtype, count = DataType[data_type].numpy, int(np.prod(shape))
    if dtype.kind == "f":
        values = (rng.standard_normal(count) * rng.choice([1, 100, 70000], count)).astype(np.float32)
        special = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf, 1e-45, -1e-45, 6e-8, 65504, 65520, 3.4e38], np.float32)
        picks = rng.random(count) < 0.1
        values[picks] = rng.choice(special, int(picks.sum()))
        with np.errstate(over="ignore"):
            return values.astype(dtype).reshape(shape)
    info = np.iinfo(dtype)
    values = rng.integers(info.min, info.max, count, dtype=dtype, endpoint=True)
    picks = rng.random(count) < 0.1
    values[picks] = rng.choice(np.array([info.min, info.max, 0, 1], dtype), int(picks.sum()))
    return values.reshape(shape)


def by_value(values: np.ndarray, model: Callable[[Any], Any], dtype: np.dtype) -> np.ndarray:
    """``model`` on each distinct element (by its bits: -0.0 and +0.0 apart), looked up for every element."""
    keys, inverse = np.unique(bits(values).reshape(-1), return_inverse=True)
    distinct = keys.view(values.dtype)
    kind = float if values.dtype.kind == "f" else int
    table = np.array([model(kind(v)) for v in distinct], dtype)
    return table[inverse].reshape(values.shape)


@dataclass(frozen=True)
class Clamp:
    """CLIP, CLIP1 or THRESHOLD: its KernelSpec, its validated fields, and the oracle's reading of them."""

    spec: KernelSpec
    params: Any
    definition: Any
    type_name: str
    scale_bias: tuple[float, float] | None
    low: oracle.Bound
    high: oracle.Bound

    def oracle(self, values: np.ndarray) -> np.ndarray:
        model = lambda v: oracle.clamp_element(v, self.type_name, self.scale_bias, self.low, self.high)  # noqa: E731
        with np.errstate(over="ignore"):
            return by_value(values, model, values.dtype)


def clamp_case(op: str, type_name: str, low: float, high: float | None = None,
               scale_bias: tuple[float, float] | None = None) -> Clamp:
    t = dml.TensorDesc(type_name, (1,))
    definition: Any
    if op == "CLIP1":
        definition, desc = CLIP1, dml.ElementWiseClip1Desc(t, t, type_name, low, high, scale_bias)
        bounds = oracle.typed_bound(low, type_name), oracle.typed_bound(high, type_name)  # type: ignore[arg-type]
    elif op == "THRESHOLD":
        definition, desc = THRESHOLD, dml.ElementWiseThresholdDesc(t, t, low, scale_bias)
        bounds = oracle.float_field_bound(low, type_name), None
    else:
        definition, desc = CLIP, dml.ElementWiseClipDesc(t, t, low, high, scale_bias)
        bounds = (oracle.float_field_bound(low, type_name),
                  oracle.float_field_bound(high, type_name))  # type: ignore[arg-type]
    params = definition.prepare(desc)
    spec = definition.kernel(params, definition.tensors(desc))
    return Clamp(spec, params, definition, type_name, scale_bias, *bounds)


def check_clamp(kernels: Any, case: Clamp, x: np.ndarray, out: np.ndarray, threads: int = 2) -> None:
    expected = case.oracle(np.ascontiguousarray(x))
    with np.errstate(all="ignore"):
        reference = case.definition.reference([x.copy()], case.params)
    kernels.elementwise(case.spec)(x, out, threads)
    assert same(out, reference), "differs from the NumPy reference"
    assert same(out, expected), "differs from the oracle"


def clamp_cases(type_name: str) -> list[Clamp]:
    """Each form of the expression: both bounds, ScaleBias, a bound absent, both absent, Min > Max."""
    if type_name.startswith("FLOAT"):
        nan = float("nan")
        return [clamp_case("CLIP", type_name, -0.0, 2.5), clamp_case("CLIP", type_name, -1.0, 1.0, (1.5, -0.25)),
                clamp_case("CLIP", type_name, nan, 0.5), clamp_case("CLIP", type_name, nan, nan, (-3.0, 1e-3)),
                clamp_case("CLIP", type_name, 2.0, -2.0), clamp_case("THRESHOLD", type_name, 0.0),
                clamp_case("THRESHOLD", type_name, -1.0, None, (0.5, 0.125)),
                clamp_case("CLIP1", type_name, -0.0, 0.0)]
    info = np.iinfo(DataType[type_name].numpy)
    cases = [clamp_case("CLIP", type_name, -7.9, 100.2), clamp_case("CLIP", type_name, -np.inf, 3.0),
             clamp_case("CLIP", type_name, 5.0, -5.0), clamp_case("CLIP1", type_name, int(info.min) + 3, int(info.max) - 2)]
    if type_name not in ("INT64", "UINT64"):  # THRESHOLD has no 64-bit types (SPEC 5)
        cases.append(clamp_case("THRESHOLD", type_name, 1.0))
    return cases


def layouts(values: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(input, output) views holding ``values``: packed, strided both ways, broadcast (stride 0), in place."""
    strided = np.zeros((*values.shape[:-1], values.shape[-1] * 2), values.dtype)
    strided[..., ::2] = values
    row = values[:1]
    in_place = values.copy()
    return {"packed": (values.copy(), np.empty_like(values)),
            "strided": (strided[..., ::2], np.zeros_like(strided)[..., 1::2]),
            "broadcast": (np.broadcast_to(row, values.shape), np.empty_like(values)),
            "in place": (in_place, in_place)}


@pytest.mark.parametrize("kernel_set", KERNELS)
@pytest.mark.parametrize("type_name", ALL)
def test_clamp_kernels_match_reference_and_oracle(kernel_set: str, type_name: str) -> None:
    kernels = cpu_kernels.load(kernel_set)
    rng = np.random.default_rng(len(type_name))
    values = sample(type_name, (4, 67), rng)
    for case in clamp_cases(type_name):
        for name, (x, out) in layouts(values).items():
            try:
                check_clamp(kernels, case, x, out)
            except AssertionError as error:
                raise AssertionError(f"{case.spec.operator} {case.spec.element!r}, {name}: {error}") from None


def dequantize_expected(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray | None, out_type: str) -> np.ndarray:
    flat_x, flat_s = x.reshape(-1), np.ascontiguousarray(scale).reshape(-1)
    flat_z = None if zero_point is None else np.ascontiguousarray(zero_point).reshape(-1)
    result = [oracle.dequantize_element(int(flat_x[k]), float(flat_s[k]), None if flat_z is None else int(flat_z[k]),
                                        out_type) for k in range(flat_x.size)]
    with np.errstate(over="ignore"):
        return np.array(result, DataType[out_type].numpy).reshape(x.shape)


def dequantize_spec(in_type: str, out_type: str, shape: tuple[int, ...], zero_point: bool) -> tuple[KernelSpec, Any]:
    t_in, t_out = dml.TensorDesc(in_type, shape), dml.TensorDesc(out_type, shape)
    desc = dml.ElementWiseDequantizeLinearDesc(t_in, t_out, t_in if zero_point else None, t_out)
    params = DEQUANTIZE_LINEAR.prepare(desc)
    return DEQUANTIZE_LINEAR.kernel(params, DEQUANTIZE_LINEAR.tensors(desc)), params


@pytest.mark.thin(("kernel_set", "in_type"), ("kernel_set", "out_type"))  # every pair of types under --slow
@pytest.mark.parametrize("kernel_set", KERNELS)
@pytest.mark.parametrize("out_type", ["FLOAT32", "FLOAT16"])
@pytest.mark.parametrize("in_type", ["INT32", "INT16", "INT8", "UINT32", "UINT16", "UINT8"])
def test_dequantize_kernels_match_reference_and_oracle(kernel_set: str, in_type: str, out_type: str) -> None:
    kernels = cpu_kernels.load(kernel_set)
    rng = np.random.default_rng(3)
    shape = (3, 2, 24)
    x = sample(in_type, shape, rng)
    scales = {"per-tensor": np.broadcast_to(np.asarray(0.0371, DataType[out_type].numpy), shape),
              "per-channel": np.broadcast_to(sample(out_type, (1, 1, 24), rng), shape),
              "full": sample(out_type, shape, rng)}
    zero_points = {"absent": None, "per-tensor": np.broadcast_to(sample(in_type, (1, 1, 1), rng), shape),
                   "per-row": np.broadcast_to(sample(in_type, (3, 1, 1), rng), shape), "full": sample(in_type, shape, rng)}
    for zname, zp in zero_points.items():
        spec, params = dequantize_spec(in_type, out_type, shape, zp is not None)
        for sname, scale in scales.items():
            expected = dequantize_expected(x, scale, zp, out_type)
            for layout, (xv, out) in layouts(x).items():
                if layout in ("broadcast", "in place"):  # an integer input is never its float output
                    continue
                with np.errstate(all="ignore"):
                    reference = dequantize_linear_reference([xv, scale, zp], params)
                out = np.zeros(shape, DataType[out_type].numpy)
                kernels.elementwise(spec)(xv, scale, zp, out, 2)
                assert same(out, reference) and same(out, expected), (zname, sname, layout)


@NUMBA
@pytest.mark.parametrize("type_name", ["FLOAT32", "FLOAT16", "INT8", "UINT32"])
def test_clamp_across_the_thread_threshold(type_name: str) -> None:
    """More elements than one thread's share: shared out on Numba's threads, offset and strided outputs."""
    fast = cpu_kernels.load("numba")
    n = 2 * (views.PARALLEL_MIN + 1001)
    values = sample(type_name, (n,), np.random.default_rng(n))
    for case in clamp_cases(type_name)[:2]:
        buf = np.zeros(n + 3, values.dtype)
        check_clamp(fast, case, values, buf[3:])  # not aligned to a vector
        check_clamp(fast, case, values[::2], np.zeros(n, values.dtype)[1::2])  # strided: element by element


@NUMBA
def test_streamed_clamp_of_a_large_output_matches_the_oracle() -> None:
    """A FLOAT32 output past STREAM_MIN_BYTES, unaligned: streaming stores between scalar heads and tails."""
    fast = cpu_kernels.load("numba")
    assert STREAMED_ELEMENTS * 4 >= fast.STREAM_MIN_BYTES
    pool = sample("FLOAT32", (4096,), np.random.default_rng(1))
    values = pool[np.random.default_rng(2).integers(0, pool.size, STREAMED_ELEMENTS)]
    buf = np.zeros(STREAMED_ELEMENTS + 5, np.float32)
    check_clamp(fast, clamp_case("CLIP", "FLOAT32", -1.0, 1.0, (1.5, -0.25)), values, buf[5:])
    assert not buf[:5].any()


@NUMBA
def test_streamed_per_channel_dequantize_of_a_large_output_matches_the_oracle() -> None:
    fast = cpu_kernels.load("numba")
    columns = 4096
    rows = -(-STREAMED_ELEMENTS // columns)
    rng = np.random.default_rng(4)
    x = rng.integers(0, 256, (rows, columns), dtype=np.uint8)
    kinds = rng.integers(0, 4, columns)  # four distinct (scale, zero point) channels, for the oracle's table
    scale_of, zero_of = np.array([0.0371, -2.5, 1e-40, 3e38], np.float32), np.array([131, 0, 255, 7], np.uint8)
    scale, zp = np.broadcast_to(scale_of[kinds], x.shape), np.broadcast_to(zero_of[kinds], x.shape)
    spec, params = dequantize_spec("UINT8", "FLOAT32", x.shape, True)
    out = np.empty(x.shape, np.float32)
    fast.elementwise(spec)(x, scale, zp, out, 2)
    table = np.array([[oracle.dequantize_element(v, float(scale_of[c]), int(zero_of[c]), "FLOAT32") for c in range(4)]
                      for v in range(256)], np.float32)
    assert same(out, table[x, kinds[None, :]])
    with np.errstate(all="ignore"):
        assert same(out, dequantize_linear_reference([x, scale, zp], params))


@NUMBA
def test_one_compiled_kernel_serves_every_scalar_value() -> None:
    """Min, Max, Scale and Bias are kernel arguments: other values reuse the module and its one compilation."""
    from opendml.backends.cpu_kernels import codegen

    fast = cpu_kernels.load("numba")
    first = clamp_case("CLIP", "FLOAT32", -1.0, 1.0, (2.0, 0.5))
    second = clamp_case("CLIP", "FLOAT32", -3.5, 0.25, (-1.0, 7.0))
    assert first.spec.key == second.spec.key and first.spec.scalars != second.spec.scalars
    module = codegen.compiled(first.spec.element)
    assert codegen.compiled(second.spec.element) is module
    values = sample("FLOAT32", (5, 40), np.random.default_rng(5))
    check_clamp(fast, first, values, np.empty_like(values))
    compiled_once = list(module.kernel.signatures)  # (earlier tests may have run other layouts)
    check_clamp(fast, second, values, np.empty_like(values))
    check_clamp(fast, first, values, np.empty_like(values))
    assert module.kernel.signatures == compiled_once


@NUMBA
def test_print_switch_prints_each_generated_source_once(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    from opendml.backends.cpu_kernels import codegen

    monkeypatch.setattr(codegen, "_modules", {})  # as in a fresh process
    element = clamp_case("CLIP", "INT16", -9.0, 9.0).spec.element
    monkeypatch.delenv("OPENDML_PRINT_KERNELS", raising=False)
    codegen.compiled(element)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(codegen, "_modules", {})
    monkeypatch.setenv("OPENDML_PRINT_KERNELS", "1")
    codegen.compiled(element)
    codegen.compiled(element)
    err = capsys.readouterr().err
    assert err.count("opendml cpu kernel: elementwise_") == 1
    assert "def value(a0, q0, q1):" in err and "def kernel(" in err and "np.int16(t" in err


CPU_BACKEND = dml.Device("cpu").backend


def operator_with_spec(spec: KernelSpec) -> Any:
    """A CLIP operator whose KernelSpec is ``spec``: what the backend compiles is the spec, not the name."""
    t = dml.TensorDesc("FLOAT32", (2, 9))
    operator = dml.Device("cpu").create_operator(dml.ElementWiseClipDesc(t, t, -1.0, 1.0))
    operator.__dict__["kernel_spec"] = spec  # the cached property, replaced
    return operator


@pytest.mark.parametrize("kernel_set", KERNELS)
def test_the_cpu_backend_compiles_the_spec_not_the_name(kernel_set: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cpu_kernels, "_chosen", cpu_kernels.load(kernel_set))
    threshold = clamp_case("THRESHOLD", "FLOAT32", 0.5)
    kernel = CPU_BACKEND.compile(operator_with_spec(threshold.spec))
    x = sample("FLOAT32", (2, 9), np.random.default_rng(6))
    out = np.empty_like(x)
    kernel.run_arrays([x], out)
    assert same(out, threshold.oracle(x))


@pytest.mark.parametrize("kernel_set", KERNELS)
def test_a_computed_argmin_element_runs_on_both_kernel_sets(kernel_set: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reduction comparing x * -1 (a fused prologue's shape) finds the largest x: the element is computed
    before it is compared, never replaced by a load of the input."""
    monkeypatch.setattr(cpu_kernels, "_chosen", cpu_kernels.load(kernel_set))
    computed = ex.Multiply(ex.ToFloat32(ex.Load(0, DataType.FLOAT16)), ex.Param(0, DataType.FLOAT32))
    argmin = Reduction(ReductionKind.ARGMIN, (1,), dml.AxisDirection.INCREASING, NanPolicy.IGNORE, DataType.INT64)
    spec = KernelSpec("ARGMIN", (DataType.FLOAT16,), DataType.INT64, computed, (np.float32(-1.0),), argmin)
    x = np.random.default_rng(8).permutation(np.arange(1, 19, dtype=np.float16)).reshape(2, 9)
    kernel = CPU_BACKEND.compile_spec(dml.Device("cpu"), spec, [dml.TensorDesc("FLOAT16", (2, 9))],
                                      dml.TensorDesc("INT64", (2, 1)))
    out = np.full((2, 1), -1, np.int64)
    kernel.run_arrays([x], out)
    assert out.reshape(-1).tolist() == np.argmax(x, axis=1).tolist()


@NUMBA
def test_a_reduction_element_no_cpu_kernel_lowers_is_a_clear_error() -> None:
    argmin = Reduction(ReductionKind.ARGMIN, (1,), dml.AxisDirection.INCREASING, NanPolicy.IGNORE, DataType.INT64)
    spec = KernelSpec("ARGMIN", (DataType.FLOAT32,), DataType.INT64, ex.Param(0, DataType.FLOAT32),
                      (np.float32(1),), argmin)
    with pytest.raises(dml.KernelUnsupportedError, match=r"^ARGMIN: kernel must be an element-wise expression or a "
                       r"reduction the CPU backend lowers; got Reduction\(.*\)\.$"):
        cpu_kernels.load("numba").reduction(spec)


@NUMBA
def test_an_expression_loading_no_operand_is_a_clear_error() -> None:
    spec = KernelSpec("FILL", (), DataType.FLOAT32, ex.Store(ex.Param(0, DataType.FLOAT32), DataType.FLOAT32),
                      (np.float32(1),))
    with pytest.raises(dml.KernelUnsupportedError, match=r"^FILL: kernel must be an element-wise expression .*; got Store"):
        cpu_kernels.load("numba").elementwise(spec)
