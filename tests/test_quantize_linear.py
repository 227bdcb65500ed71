"""ELEMENT_WISE_QUANTIZE_LINEAR (SPEC 9) on every backend: hand-worked rounding cases with their expected
values written out, the generated CUDA C run on the host over random layouts against the independent
oracle, and the CPU kernel's vector code.

The table runs through the operator's NumPy reference, its expression's NumPy lowering, the CPU's Numba and
NumPy kernels, the CUDA kernels on a GPU where there is one, and the generated CUDA C run on the host (both
kernel templates). tests/test_properties.py runs random layouts on the CPU and GPU devices.
"""

from __future__ import annotations

import math
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import opendml as dml
from opendml import TensorDesc
from opendml.backends import cpu_kernels
from opendml.backends.cuda import elementwise_c
from opendml.backends.layout import collapse
from opendml.kernels.numpy_lowering import evaluate
from tests.conftest import CUDA_MISSING
from tests.cuda_emulation import ElementwiseJob, run_elementwise_jobs_on_host
from tests.elementwise_oracle import QUANTIZE_INPUT_TYPES, TYPES, quantize_element
from tests.helpers import run
from tests.test_properties import QuantizeCase, check_output, quantize_cases, quantize_expected

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
TINY = 2.0**-149  # the smallest float32 subnormal


def f32(value: float) -> float:
    """The float32 nearest ``value`` (the shortest decimal of a float32 is not that float32 as a double)."""
    return float(np.float32(value))


def f32_next(value: float, toward: float) -> float:
    return float(np.nextafter(np.float32(value), np.float32(toward)))


class Row(NamedTuple):
    input_type: str
    output_type: str
    x: float | int
    scale: float
    zero_point: int | None
    expected: int
    why: str


# (input, output, x, scale, zero point, expected, why): each expected value worked out by hand from SPEC 9.
TABLE = [Row(*row) for row in [
    ("FLOAT32", "INT8", 0.5, 1.0, None, 0, "a half rounds to even: 0"),
    ("FLOAT32", "INT8", 1.5, 1.0, None, 2, "a half rounds to even: 2"),
    ("FLOAT32", "INT8", 2.5, 1.0, None, 2, "a half rounds to even: 2, not 3"),
    ("FLOAT32", "INT8", 3.5, 1.0, None, 4, "a half rounds to even: 4"),
    ("FLOAT32", "INT8", -0.5, 1.0, None, 0, "-0.5 rounds to -0, stored as 0"),
    ("FLOAT32", "INT8", -1.5, 1.0, None, -2, "negative halves round to even too"),
    ("FLOAT32", "INT8", -2.5, 1.0, None, -2, "negative halves round to even too"),
    ("FLOAT32", "INT8", f32_next(2.5, 3.0), 1.0, None, 3, "just above a half rounds up"),
    ("FLOAT32", "INT8", f32_next(2.5, 2.0), 1.0, None, 2, "just below a half rounds down"),
    ("FLOAT32", "INT8", f32_next(-2.5, -3.0), 1.0, None, -3, "just beyond -2.5 rounds away"),
    ("FLOAT32", "INT8", math.inf, 1.0, None, 127, "+inf saturates"),
    ("FLOAT32", "INT8", -math.inf, 1.0, None, -128, "-inf saturates"),
    ("FLOAT32", "INT8", math.nan, 1.0, None, 0, "NaN quantizes to the zero point, absent: 0"),
    ("FLOAT32", "INT8", 127.5, 1.0, None, 127, "128 saturates to 127"),
    ("FLOAT32", "INT8", -128.5, 1.0, None, -128, "-128.5 rounds to -128, in range"),
    ("FLOAT32", "INT8", -129.0, 1.0, None, -128, "-129 saturates"),
    ("FLOAT32", "INT8", f32(1e30), f32(1e-30), None, 127, "a quotient past float32 is +inf, saturated"),
    ("FLOAT32", "INT8", 1.0, 0.0, None, 127, "x / 0 is +inf"),
    ("FLOAT32", "INT8", -1.0, 0.0, None, -128, "-x / 0 is -inf"),
    ("FLOAT32", "INT8", 1.0, -0.0, None, -128, "x / -0 is -inf"),
    ("FLOAT32", "INT8", 0.0, 0.0, None, 0, "0 / 0 is NaN: the zero point"),
    ("FLOAT32", "INT8", math.inf, math.inf, None, 0, "inf / inf is NaN: the zero point"),
    ("FLOAT32", "INT8", 1.0, math.nan, None, 0, "a NaN scale gives NaN: the zero point"),
    ("FLOAT32", "INT8", 3.0, -2.0, None, -2, "a negative scale: -1.5 rounds to -2"),
    ("FLOAT32", "INT8", 5.0, math.inf, None, 0, "x / inf is 0"),
    ("FLOAT32", "INT8", f32(-237.2832), f32(1.9529482), None, -122,
     "the quotient is -121.5 exactly (to even: -122); x * (1 / scale) is -121.49999 and would give -121"),
    ("FLOAT32", "INT8", TINY, TINY, None, 1, "subnormals are kept: 2**-149 / 2**-149 is 1"),
    ("FLOAT32", "INT8", 3 * TINY, 2 * TINY, None, 2, "subnormals are kept: 1.5 rounds to 2"),
    ("FLOAT32", "INT8", TINY, 1.0, None, 0, "a subnormal quotient rounds to 0"),
    ("FLOAT32", "INT8", 0.5, 1.0, 1, 1, "the zero point is added after rounding: 0 + 1, not round(1.5)"),
    ("FLOAT32", "INT8", -0.5, 1.0, 1, 1, "-0 + 1"),
    ("FLOAT32", "INT8", 1.5, 1.0, -1, 1, "2 - 1, not round(0.5)"),
    ("FLOAT32", "INT8", 100.0, 1.0, 100, 127, "the sum saturates at the top"),
    ("FLOAT32", "INT8", -100.0, 1.0, -100, -128, "the sum saturates at the bottom"),
    ("FLOAT32", "INT8", math.nan, 1.0, 7, 7, "NaN gives the zero point"),
    ("FLOAT32", "INT8", 0.0, 0.0, -3, -3, "0 / 0 gives the zero point"),
    ("FLOAT32", "INT8", math.inf, 1.0, -128, 127, "+inf saturates whatever the zero point"),
    ("FLOAT32", "INT8", 3.0, -2.0, 10, 8, "-2 + 10"),
    ("FLOAT32", "INT8", 40000.0, 1.0, -128, 127, "a quotient beyond INT16 still saturates after the zero point"),
    ("FLOAT32", "UINT8", 254.5, 1.0, None, 254, "a half rounds to even: 254"),
    ("FLOAT32", "UINT8", 255.5, 1.0, None, 255, "256 saturates to 255"),
    ("FLOAT32", "UINT8", -1.0, 1.0, None, 0, "negative values saturate to 0"),
    ("FLOAT32", "UINT8", -0.5, 1.0, None, 0, "-0.5 rounds to -0: 0"),
    ("FLOAT32", "UINT8", math.inf, 1.0, None, 255, "+inf saturates"),
    ("FLOAT32", "UINT8", -math.inf, 1.0, None, 0, "-inf saturates"),
    ("FLOAT32", "UINT8", math.nan, 1.0, None, 0, "NaN: the absent zero point, 0"),
    ("FLOAT32", "UINT8", f32(11.064732), f32(0.59809357), None, 18,
     "the quotient is 18.5 exactly (to even: 18); x * (1 / scale) is 18.500002 and would give 19"),
    ("FLOAT32", "UINT8", 0.25, f32(0.1), None, 2, "0.25 / 0.1f rounds to 2.5 in float32, then to even: 2"),
    ("FLOAT32", "UINT8", 1.0, 0.0, None, 255, "x / 0 is +inf"),
    ("FLOAT32", "UINT8", 200.0, 1.0, 100, 255, "the sum saturates at the top"),
    ("FLOAT32", "UINT8", -3.0, 1.0, 2, 0, "the sum saturates at the bottom"),
    ("FLOAT32", "UINT8", 0.5, 1.0, 128, 128, "0 + 128"),
    ("FLOAT32", "UINT8", 1.5, 1.0, 128, 130, "2 + 128"),
    ("FLOAT32", "UINT8", math.nan, 1.0, 128, 128, "NaN gives the zero point"),
    ("FLOAT32", "UINT8", -math.inf, 1.0, 200, 0, "-inf saturates whatever the zero point"),
    ("FLOAT32", "UINT8", 1e10, 1.0, 0, 255, "a quotient beyond INT16 saturates"),
    ("FLOAT32", "UINT8", -1e10, 1.0, 255, 0, "a quotient below INT16 saturates"),
    ("INT32", "UINT8", 16777217, 2.0**25, None, 0,
     "2**24 + 1 is 2**24 as float32: 0.5 rounds to 0 (the exact 0.50000003 would give 1)"),
    ("INT32", "UINT8", 16777219, 2.0**25, None, 1, "2**24 + 3 is 2**24 + 4 as float32 (a tie, to even): 1"),
    ("INT32", "INT8", -16777217, 2.0**25, None, 0, "-(2**24 + 1) is -2**24: -0.5 rounds to 0"),
    ("INT32", "INT8", -16777219, 2.0**25, None, -1, "-(2**24 + 3) is -(2**24 + 4): -1"),
    ("INT32", "UINT8", 5, 2.0, None, 2, "2.5 rounds to even: 2"),
    ("INT32", "UINT8", 7, 2.0, None, 4, "3.5 rounds to even: 4"),
    ("INT32", "INT8", -7, 2.0, None, -4, "-3.5 rounds to even: -4"),
    ("INT32", "UINT8", 2147483647, 2.0**24, None, 128, "2**31 - 1 is 2**31 as float32: 128"),
    ("INT32", "INT8", -2147483648, 2.0**24, None, -128, "-2**31 / 2**24 is -128"),
    ("INT32", "UINT8", 300, 1.0, None, 255, "saturates"),
    ("INT32", "UINT8", 1, 0.0, None, 255, "x / 0 is +inf"),
    ("INT32", "UINT8", 0, 0.0, 9, 9, "0 / 0 gives the zero point"),
    ("INT32", "INT8", 3, 2.0, -1, 1, "2 - 1"),
    ("FLOAT16", "UINT8", 0.25, 0.0999755859375, None, 3,
     "the FLOAT16 scale 0.1 is 0.0999755859375: 2.5006, rounded to 3"),
    ("FLOAT16", "UINT8", 2.5, 1.0, None, 2, "a half rounds to even: 2"),
    ("FLOAT16", "UINT8", 65504.0, 0.5, None, 255, "131008 saturates"),
    ("FLOAT16", "UINT8", 2.0**-24, 2.0**-24, None, 1, "FLOAT16 subnormals, converted exactly"),
    ("FLOAT16", "UINT8", 3 * 2.0**-24, 2.0**-23, None, 2, "FLOAT16 subnormals: 1.5 rounds to 2"),
    ("FLOAT16", "INT8", -math.inf, 1.0, None, -128, "-inf saturates"),
    ("FLOAT16", "INT8", math.nan, 1.0, 5, 5, "NaN gives the zero point"),
    ("FLOAT16", "INT8", 1.0, 0.0, None, 127, "x / 0 is +inf"),
    ("FLOAT16", "INT8", -65504.0, 65504.0, None, -1, "-1 exactly"),
    ("FLOAT16", "INT8", 0.5, -1.0, 3, 3, "-0.5 rounds to -0: 0 + 3"),
]]


def test_the_reciprocal_cases_tell_a_division_from_a_multiply_by_the_reciprocal() -> None:
    """The table's two such cases: the one correctly rounded division is a tie, the product is not."""
    for x, scale, quotient in [(f32(-237.2832), f32(1.9529482), -121.5), (f32(11.064732), f32(0.59809357), 18.5)]:
        a, b = np.float32(x), np.float32(scale)
        assert np.divide(a, b, dtype=np.float32) == quotient
        product = np.multiply(a, np.divide(np.float32(1), b, dtype=np.float32), dtype=np.float32)
        assert product != quotient and np.rint(product) != np.rint(quotient)


@pytest.mark.parametrize("row", TABLE, ids=[f"{r.input_type}-{r.output_type}-{r.why}" for r in TABLE])
def test_the_oracle_gives_the_hand_worked_values(row: Row) -> None:
    assert quantize_element(row.x, row.scale, row.zero_point, row.output_type) == row.expected


class Group(NamedTuple):
    """The table's rows of one (input type, output type, zero point present) as one operator's operands."""

    desc: dml.ElementWiseQuantizeLinearDesc
    inputs: list[np.ndarray | None]
    expected: np.ndarray
    rows: list[Row]


def groups() -> Iterator[Group]:
    keys = sorted({(r.input_type, r.output_type, r.zero_point is not None) for r in TABLE})
    for input_type, output_type, with_zero_point in keys:
        rows = [r for r in TABLE if (r.input_type, r.output_type, r.zero_point is not None) ==
                (input_type, output_type, with_zero_point)]
        scale_type = "FLOAT32" if input_type == "INT32" else input_type
        n = len(rows)
        x = np.array([r.x for r in rows], TYPES[input_type].numpy)
        scale = np.array([r.scale for r in rows], TYPES[scale_type].numpy)
        assert all(float(v) == r.x or math.isnan(r.x) for v, r in zip(x, rows))  # each value held exactly
        assert all(float(v) == r.scale or math.isnan(r.scale) for v, r in zip(scale, rows))
        zero_point = np.array([r.zero_point for r in rows], TYPES[output_type].numpy) if with_zero_point else None
        desc = dml.ElementWiseQuantizeLinearDesc(TensorDesc(input_type, [n]), TensorDesc(scale_type, [n]),
                                                 TensorDesc(output_type, [n]) if with_zero_point else None,
                                                 TensorDesc(output_type, [n]))
        yield Group(desc, [x, scale, zero_point], np.array([r.expected for r in rows], TYPES[output_type].numpy),
                    rows)


GROUPS = list(groups())


def mismatches(group: Group, got: np.ndarray) -> list[str]:
    return [f"{r.x!r} / {r.scale!r} + {r.zero_point}: got {g}, expected {r.expected} ({r.why})"
            for r, g in zip(group.rows, got.tolist()) if g != r.expected]


def test_the_reference_and_the_expression_give_the_hand_worked_values() -> None:
    device = dml.Device("cpu")
    for group in GROUPS:
        operator = device.create_operator(group.desc)
        assert not mismatches(group, operator.definition.reference(group.inputs, operator.params))
        spec = operator.kernel_spec
        assert not mismatches(group, evaluate(spec.element, group.inputs, spec.scalars))


DEVICES = [
    pytest.param("cpu", "numba", id="cpu-numba", marks=pytest.mark.skipif(
        not cpu_kernels.numba_available(), reason="Numba is not installed (the opendml[fast] extra)")),
    pytest.param("cpu", "numpy", id="cpu-numpy"),
    pytest.param("cuda", None, id="cuda", marks=pytest.mark.skipif(
        CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")),
]


@pytest.mark.parametrize(("backend", "kernels"), DEVICES)
def test_every_backend_gives_the_hand_worked_values(backend: str, kernels: str | None,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    if kernels is not None:
        monkeypatch.setattr(cpu_kernels, "_chosen", cpu_kernels.load(kernels))
    device = dml.Device(backend)
    for group in GROUPS:
        got = run(device, group.desc, group.inputs, fill=0xA5)
        assert not mismatches(group, got)


def _elementwise_job(desc: dml.ElementWiseQuantizeLinearDesc, buffers: list[np.ndarray], shifts: list[int],
                     general: bool) -> ElementwiseJob:
    """The job running ``desc``'s kernel as CudaBackend does: the 16-byte chunk kernel where the layout allows
    it (unless ``general``), else the kernel for any strides."""
    operator = dml.Device("cpu").create_operator(desc)
    described = [d for d in (desc.input_tensor, desc.scale_tensor, desc.zero_point_tensor, desc.output_tensor)
                 if d is not None]
    layout = collapse(desc.output_tensor.sizes, [d.effective_strides for d in described])
    width = None if general else elementwise_c.vector_width(operator.kernel_spec, layout)
    return ElementwiseJob(operator.kernel_spec, layout, width, buffers, shifts)


@needs_gxx
def test_the_generated_cuda_c_gives_the_hand_worked_values_on_the_host(tmp_path: Path) -> None:
    jobs, wanted = [], []
    for group in GROUPS:
        out = group.desc.output_tensor
        buffers = [a.view(np.uint8) for a in group.inputs if a is not None]
        buffers.append(np.full(out.total_tensor_size_in_bytes, 0xA5, np.uint8))
        for general in (False, True):
            jobs.append(_elementwise_job(group.desc, buffers, [0] * len(buffers), general))
            wanted.append(group)
    assert any(job.width is not None for job in jobs)  # the chunk kernel ran too
    for job, group, found in zip(jobs, wanted, run_elementwise_jobs_on_host(jobs, tmp_path)):
        count = len(group.rows)
        got = found[-1][:count].view(group.expected.dtype)
        assert not mismatches(group, got), f"width {job.width}"
        assert (found[-1][count:] == 0xA5).all()  # nothing written past the elements


# --- the generated CUDA C over random layouts, on the host -------------------------------------------------

CASES_PER_PROGRAM = 3  # each example compiles one program for its cases (a g++ run is the cost)


@needs_gxx
@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.data_too_large,
                                 HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(data=st.data())
def test_the_generated_cuda_c_matches_the_model_over_random_layouts(tmp_path_factory: pytest.TempPathFactory,
                                                                     data: st.DataObject) -> None:
    """Layouts of tests/test_properties.py (ranks 1-8, broadcast scales and zero points, padding, offsets),
    each case's kernel compiled as CudaBackend compiles it and run on the host over the case's buffers."""
    cases: list[QuantizeCase] = [data.draw(quantize_cases(t), f"case {k}") for k in range(CASES_PER_PROGRAM)
                                 for t in [data.draw(st.sampled_from(QUANTIZE_INPUT_TYPES), f"type {k}")]]
    jobs, raws = [], []
    for case in cases:
        operands = [case.input, case.scale, case.zero_point]
        raw = [None if t is None else t.initial_bytes() for t in operands]
        desc = dml.ElementWiseQuantizeLinearDesc(*(None if t is None else t.desc() for t in operands),
                                                 case.output.desc())
        present = [(t, r) for t, r in zip(operands, raw) if t is not None and r is not None]
        buffers = [np.frombuffer(bytes(r), np.uint8) for _, r in present]
        buffers.append(np.frombuffer(bytes(case.output.initial_bytes()), np.uint8))
        shifts = [t.offset for t, _ in present] + [case.output.offset]
        jobs.append(_elementwise_job(desc, buffers, shifts, general=False))
        raws.append(raw)
    found = run_elementwise_jobs_on_host(jobs, tmp_path_factory.mktemp("quantize"))
    for case, raw, buffers in zip(cases, raws, found):
        before = bytes(case.output.initial_bytes())
        check_output(case.output, quantize_expected(case, raw), before, buffers[-1].tobytes())


# --- the CPU kernel's vector code ---------------------------------------------------------------------------

@pytest.mark.skipif(not cpu_kernels.numba_available(), reason="Numba is not installed: the generated kernels")
@pytest.mark.parametrize("zero_point", [False, True], ids=["no-zero-point", "zero-point"])
def test_float32_to_uint8_runs_vectorise_per_tensor_and_per_channel(zero_point: bool) -> None:
    """Every loop of the generated ``run`` (the scale and zero point hoisted, per tensor or along an outer
    channel axis, or read per element, a channel along the last axis) divides, and rounds and converts,
    whole vectors; and large outputs take the streaming vector code (``stream``)."""
    from opendml.backends.cpu_kernels import codegen

    n = 64
    x, scale, out = TensorDesc("FLOAT32", [n]), TensorDesc("FLOAT32", [n], [0]), TensorDesc("UINT8", [n])
    spec = dml.Device("cpu").create_operator(
        dml.ElementWiseQuantizeLinearDesc(x, scale, out if zero_point else None, out)).kernel_spec
    source = codegen.source(spec.element)
    assert "def kernel_streamed(" in source and "stream(" in source
    # A copy compiled without the disk cache: Numba shows no LLVM IR of cached code.
    namespace: dict = {}
    exec(compile(source.replace("cache=True", "cache=False"), "<quantize>", "exec"), namespace)
    others = 2 if zero_point else 1
    arrays = [np.ones(n, np.float32)] + [np.ones(n, np.float32), np.ones(n, np.uint8)][:others]
    namespace["run"](*arrays, np.zeros(n, np.uint8), *([1] * others))
    (ir,) = namespace["run"].inspect_llvm().values()
    loops = 2**others  # each combination of hoisted operands is a loop of its own
    assert len(re.findall(r"= fdiv <\d+ x float>", ir)) >= loops
    # Rounded and converted at once: the quotient clamped as floats, then one rounding conversion.
    assert len(re.findall(r"call <\d+ x i32> @llvm\.lrint\.v\d+i32\.v\d+f32", ir)) >= loops
    assert "fast" not in re.findall(r"fdiv (\w+)", ir)  # no fast-math flag: never a reciprocal
