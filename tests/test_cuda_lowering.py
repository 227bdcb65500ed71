"""The CUDA C lowering of element expressions, checked without a GPU: the text of every operator's kernels
and of random expressions, scalars as kernel arguments, and (where nvcc is installed) that it compiles."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given

import opendml as dml
from opendml import DataType as T
from opendml import TensorDesc
from opendml import expr as ex
from opendml import settings as opendml_settings
from opendml.backends.cuda import argmin_c, elementwise_c, expr_c
from opendml.backends.cuda.codegen import C_TYPE, OPTIONS, PRELUDE
from opendml.backends.layout import Layout, collapse
from opendml.enums import NanPolicy
from opendml.kernels import debug
from opendml.kernels.numpy_lowering import evaluate
from opendml.kernels.spec import KernelSpec, Reduction, ReductionKind
from tests.cuda_emulation import HOST_ARITHMETIC, HOST_DOUBLES, PTX_HELPERS, run_host_program
from tests.cuda_lowering_cases import double_specs, expression_specs, operator_descs, seeded_specs
from tests.expr_strategies import DOUBLE_EDGES
from tests.helpers import edge_values, same_values

CPU = dml.Device("cpu")
SIZES = [3, 5, 8]
NVCC = shutil.which("nvcc")


def spec_of(desc: object) -> tuple[KernelSpec, list[TensorDesc | None], TensorDesc]:
    """An operator's KernelSpec with its operand and output descriptions."""
    operator = CPU.create_operator(desc)
    schema = operator.definition.schema
    return (operator.kernel_spec, [operator.tensors[f.name] for f in schema.inputs],
            operator.tensor(schema.outputs[0].name))


def elementwise_sources(spec: KernelSpec, layout: Layout) -> list[str]:
    """The general kernel, and the vector one where the layout allows it."""
    sources = [elementwise_c.elementwise_general(spec, layout)]
    width = elementwise_c.vector_width(spec, layout)
    if width is not None:
        sources.append(elementwise_c.elementwise_vector(spec, layout, width))
    return sources


def argmin_sources(spec: KernelSpec, inputs: Sequence[TensorDesc | None], out: TensorDesc) -> list[str]:
    """Every plan's kernel for the reduction over its operands (the InputTensor first), as on a GPU of 132
    multiprocessors: the plan's, the one for unaligned addresses, and the combine pass where one of them
    leaves its pieces to it (split rows are merged by their scan: argmin_c.one_pass)."""
    assert spec.reduction is not None
    x = inputs[0]
    assert x is not None
    kept, reduced = argmin_c.layouts(spec, inputs, out)
    plan = argmin_c.plan(spec, x, kept, reduced, 132)
    plans = [plan] if plan.vector == 1 else [plan, plan.scalar()]
    sources = [argmin_c.argmin_kernel(spec, p, spec.reduction.direction, kept, reduced) for p in plans]
    if any(p.splits > 1 and not argmin_c.one_pass(spec, p) for p in plans):
        sources.append(argmin_c.argmin_combine_kernel(spec, plan, spec.reduction.direction, kept))
    return sources


def sources_of(desc: object) -> tuple[KernelSpec, list[str]]:
    spec, inputs, output = spec_of(desc)
    if spec.reduction is not None:
        return spec, argmin_sources(spec, inputs, output)
    layout = collapse(output.sizes, [d.effective_strides for d in inputs if d is not None] + [output.effective_strides])
    return spec, elementwise_sources(spec, layout)


def other_scalar(v: np.generic) -> np.generic:
    """Another value of the same class for a clamp's lowering (expr_c.clamp_bounds): a nonzero float stays
    nonzero (negated: an infinity too), a float zero or NaN stays itself; integers change freely."""
    if isinstance(v, np.float32):
        return v if np.isnan(v) or v == 0 else -v
    return type(v)(1 if v == 0 else 0)


def other_scalars(spec: KernelSpec) -> KernelSpec:
    """The same structure with every scalar changed within its class: what must reuse the compiled kernel."""
    return dataclasses.replace(spec, scalars=tuple(other_scalar(v) for v in spec.scalars))


def check_scalars_are_arguments(spec: KernelSpec, source: str) -> None:
    """Each Param is a typed parameter of the kernel and of the device function, never a literal."""
    kernel = re.search(r'extern "C" __global__ void (?:__launch_bounds__\([^)]*\) )?opendml_kernel\(([^)]*)\)', source)
    assert kernel is not None
    arguments = [a.strip() for a in kernel.group(1).split(",")]
    wanted = [f"{expr_c.held_type(t)} q{k}" for k, t in sorted(ex.params(spec.element).items())]
    assert arguments[len(arguments) - len(wanted):] == wanted
    function = "value" if spec.reduction is not None else "apply"
    declaration = re.search(rf"__device__ __forceinline__ [\w ]+ {function}\(([^)]*)\)", source)
    assert declaration is not None and declaration.group(1).endswith(", ".join(wanted))
    # no float constant baked in (small_i2f's magic number, 2**23 that a byte is written into, and the sign bit
    # a FLOAT32 Negate flips are the conversions' and the node's, not a scalar's)
    unrelated = source.replace(expr_c.SMALL_TO_FLOAT, "").replace("__int_as_float(prmt(0x4B000000u, ", "")
    assert "__int_as_float" not in re.sub(r"__int_as_float\(__float_as_int\(\w+\) \^ 0x80000000\)", "", unrelated)


OPERATORS = operator_descs(SIZES)


@pytest.mark.parametrize("desc", [d for _, d in OPERATORS], ids=[i for i, _ in OPERATORS])
def test_every_operator_renders_with_scalars_as_arguments(desc: object) -> None:
    spec, sources = sources_of(desc)
    assert sources
    for source in sources:
        assert source.startswith(PRELUDE) and source.count("{") == source.count("}")
        check_scalars_are_arguments(spec, source)
    changed = other_scalars(spec)
    if spec.reduction is None:
        layout = collapse([120], [[1]] * (sum(t is not None for t in spec.inputs) + 1))
        assert elementwise_sources(spec, layout) == elementwise_sources(changed, layout)


def test_two_clips_with_other_bounds_render_one_source() -> None:
    x = TensorDesc(T.FLOAT32, [4, 64])
    first, _ = sources_of(dml.ElementWiseClipDesc(x, x, -1.0, 1.0, dml.ScaleBias(2.0, 0.5)))
    second, _ = sources_of(dml.ElementWiseClipDesc(x, x, -3.5, 0.25, dml.ScaleBias(-1.0, 7.0)))
    assert first.scalars != second.scalars and first.key == second.key
    assert sources_of(dml.ElementWiseClipDesc(x, x, -1.0, 1.0, dml.ScaleBias(2.0, 0.5)))[1] == \
        sources_of(dml.ElementWiseClipDesc(x, x, -3.5, 0.25, dml.ScaleBias(-1.0, 7.0)))[1]


# (Min, Max, whether Min is a max.NaN, whether Max is a min.NaN, the selects left: CLIP leaves a NaN bound out)
BOUND_CLASSES = [(-1.0, 1.0, True, True, 0), (0.0, 6.0, False, True, 1), (-0.0, 6.0, False, True, 1),
                 (-6.0, -0.0, True, False, 1), (float("nan"), float("inf"), False, True, 0),
                 (-float("inf"), float("nan"), True, False, 0)]


@pytest.mark.parametrize("low, high, below, above, selects", BOUND_CLASSES)
def test_a_clamp_is_a_min_or_max_only_against_a_nonzero_number(low: float, high: float, below: bool, above: bool,
                                                               selects: int) -> None:
    """CLIP's Min and Max lower to max.NaN and min.NaN where the bound is a nonzero number (an x equal to it
    has its bits; a NaN x stays NaN), else to the exact select: a zero bound (the other zero of x is not the
    min's or max's answer) and a NaN bound (the select keeps x). The GPU tests check the bits."""
    x = TensorDesc(T.FLOAT32, [4, 64])
    _, (source, *_) = sources_of(dml.ElementWiseClipDesc(x, x, low, high))
    apply = source[source.index(" apply("):]
    assert ("clamp_below(" in apply) == below and ("clamp_above(" in apply) == above
    assert apply.count("lt(") == selects
    assert ("min.NaN.f32" in source) == (above or below)


def test_a_bound_of_another_class_renders_another_source() -> None:
    x = TensorDesc(T.FLOAT32, [4, 64])
    assert sources_of(dml.ElementWiseClipDesc(x, x, 0.0, 6.0))[1] != sources_of(dml.ElementWiseClipDesc(x, x, 1.0, 6.0))[1]
    assert sources_of(dml.ElementWiseClipDesc(x, x, 1.0, 6.0))[1] == sources_of(dml.ElementWiseClipDesc(x, x, -2.0, 0.5))[1]


def test_scalars_launch_in_their_compute_type() -> None:
    x = TensorDesc(T.INT8, [8])
    spec, _ = sources_of(dml.ElementWiseClip1Desc(x, x, T.INT8, -128, 5))
    arguments = expr_c.launch_scalars(spec.element, spec.scalars)
    assert [(type(a), int(a)) for a in arguments] == [(np.int32, 5), (np.int32, -128)]  # Max, then Min
    h = TensorDesc(T.FLOAT16, [8])
    spec, _ = sources_of(dml.ElementWiseThresholdDesc(h, h, -0.0))
    (low,) = expr_c.launch_scalars(spec.element, spec.scalars)
    assert type(low) is np.float32 and np.signbit(low) and low == 0


@pytest.mark.parametrize(("source", "helper"), [
    (T.INT8, "i2f_rn"), (T.INT16, "i2f_rn"), (T.INT32, "i2f_rn"), (T.INT64, "ll2f_rn"),
    (T.UINT8, "u2f_rn"), (T.UINT16, "u2f_rn"), (T.UINT32, "u2f_rn"), (T.UINT64, "ull2f_rn"),
])
def test_integers_convert_to_float32_by_their_own_signedness_and_width(source: T, helper: str) -> None:
    # A signed conversion of a UINT32 above 2**31 (or a 32-bit one of a 64-bit value) would be wrong.
    lines, _ = expr_c.body(ex.Store(ex.ToFloat32(ex.Load(0, source)), T.FLOAT32))
    assert lines[1] == f"const float t1 = {helper}(t0);"


def test_one_temporary_per_distinct_node() -> None:
    x = ex.Load(0, T.FLOAT32)
    shared = ex.Multiply(x, ex.Param(0, T.FLOAT32))
    lines, result = expr_c.body(ex.Store(ex.Add(shared, shared), T.FLOAT32))
    assert lines == ["const float t0 = ((float)(a0));", "const float t1 = q0;",
                     "const float t2 = mul_rn(t0, t1);", "const float t3 = add_rn(t2, t2);",
                     "const float t4 = ((float)(t3));"]
    assert result == "t4"


@given(expression_specs())
def test_random_expressions_render_with_scalars_as_arguments(spec: KernelSpec) -> None:
    present = sum(t is not None for t in spec.inputs)
    layouts = [collapse([37], [[1]] * (present + 1)), collapse([4, 6], [[1, 4]] * present + [[6, 1]])]
    for layout in layouts:
        sources = elementwise_sources(spec, layout)
        assert sources == elementwise_sources(other_scalars(spec), layout)
        for source in sources:
            check_scalars_are_arguments(spec, source)
    lines, _ = expr_c.body(spec.element)
    assert len(lines) == len(list(ex.nodes(spec.element)))


def test_reduction_values_it_cannot_compare_are_refused_by_name() -> None:
    # A BOOL is no value to compare; an operand the kernel does not have cannot be read.
    for inputs, element in [((T.INT8,), ex.Less(ex.Load(0, T.INT8), ex.Load(0, T.INT8))),
                            ((T.FLOAT32,), ex.Load(1, T.FLOAT32))]:
        with pytest.raises(dml.KernelUnsupportedError, match=r"^ARGMIN: ") as caught:
            expr_c.value_function("ARGMIN", inputs, element)
        assert isinstance(caught.value, dml.OpenDMLError)
    with pytest.raises(dml.KernelUnsupportedError, match=r"^CLIP: element expression must be a Store"):
        expr_c.apply_function("CLIP", (T.FLOAT32,), ex.Load(0, T.FLOAT32))


def test_print_source_prints_each_source_once_under_a_header(monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENDML_PRINT_KERNELS", "1")
    source = "extern \"C\" __global__ void opendml_kernel() { /* test_print_source */ }"
    debug.print_source("CUDA C", "CLIP (FLOAT32) -> FLOAT32", source)
    debug.print_source("CUDA C", "CLIP (FLOAT32) -> FLOAT32", source)
    err = capsys.readouterr().err
    assert err.count(source) == 1 and "opendml CUDA C kernel: CLIP (FLOAT32) -> FLOAT32" in err
    for off in ("0", ""):
        monkeypatch.setenv("OPENDML_PRINT_KERNELS", off)
        assert not debug.print_kernels_enabled()
        debug.print_source("CUDA C", "other", source + " ")
    assert capsys.readouterr().err == ""


# --- compiled by nvcc, where it is installed ------------------------------------------------------------

def own_unit(body: str) -> str:
    """A kernel's text made its own unit inside a larger file: the include guards it defines (the helpers a source
    may carry twice: opendml.backends.cuda.rounded_c) are undefined after it, as a file of its own would leave
    them for the next."""
    guards = re.findall(r"^#define (\w+)$", body, flags=re.MULTILINE)
    return body + "".join(f"\n#undef {guard}" for guard in guards) + "\n"


def translation_unit(sources: Sequence[str]) -> str:
    """Many kernels in one file: the prelude once, each kernel in a namespace under a name of its own."""
    parts = [PRELUDE]
    for n, source in enumerate(sources):
        assert source.startswith(PRELUDE)
        body = source[len(PRELUDE):].replace("opendml_kernel", f"opendml_kernel_{n}")
        parts.append(f"namespace k{n} {{\n{own_unit(body)}}}\n")
    return "".join(parts)


def compile_with_nvcc(sources: Sequence[str], tmp_path) -> str:
    """The PTX of all ``sources``, compiled as the backend compiles them (warnings are errors)."""
    path = tmp_path / "kernels.cu"
    path.write_text(translation_unit(sources))
    command = [NVCC, "-ptx", "-arch=sm_80", *OPTIONS, str(path), "-o",
               str(tmp_path / "kernels.ptx")]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    return (tmp_path / "kernels.ptx").read_text()


needs_nvcc = pytest.mark.skipif(NVCC is None or opendml_settings.SKIP_NVCC.get(),
                                reason="nvcc (the CUDA toolkit's compiler) is not installed")


def _nvrtc() -> Any:
    """CuPy's binding of NVRTC, the compiler the backend runs, where it and the library load (no GPU needed)."""
    try:
        from cupy_backends.cuda.libs import nvrtc

        nvrtc.getVersion()
    except Exception:  # not installed, or the library is missing: whatever the binding raises
        return None
    return nvrtc


NVRTC = _nvrtc()


@pytest.mark.skipif(NVRTC is None, reason="CuPy's NVRTC binding or the NVRTC library is not installed")
def test_every_operator_kernel_compiles_with_nvrtc() -> None:
    """As the backend compiles them: NVRTC with exactly codegen.OPTIONS. nvcc's front end accepts more than
    NVRTC does (hexadecimal floating literals under --std=c++14, which NVRTC refused)."""
    sources = [source for _, desc in OPERATORS for source in sources_of(desc)[1]]
    program = NVRTC.createProgram(translation_unit(sources), "kernels.cu", [], [])
    try:
        NVRTC.compileProgram(program, (*OPTIONS, "-arch=compute_80", "--device-as-default-execution-space"))
    except NVRTC.NVRTCError:
        pytest.fail(NVRTC.getProgramLog(program)[-4000:])
    finally:
        NVRTC.destroyProgram(program)


@pytest.mark.slow  # 18 s of nvcc where it is installed; NVRTC compiles the same kernels in the default run
@needs_nvcc
def test_every_operator_kernel_compiles(tmp_path) -> None:
    sources = [source for _, desc in OPERATORS for source in sources_of(desc)[1]]
    ptx = compile_with_nvcc(sources, tmp_path)
    assert ptx.count(".entry opendml_kernel_") == len(sources)


@needs_nvcc
def test_argmin_on_a_computed_value_with_scalars_compiles(tmp_path) -> None:
    """The prologue a fused kernel will put before ARGMIN: x * q0 + q1 of INT16 elements."""
    element = ex.Add(ex.Multiply(ex.ToFloat32(ex.Load(0, T.INT16)), ex.Param(0, T.FLOAT32)), ex.Param(1, T.FLOAT32))
    sources = []
    for sizes, axes in [([37, 3000], (1,)), ([3000, 37], (0,)), ([3, 200000], (1,))]:  # rows, columns, pieces
        reduction = Reduction(ReductionKind.ARGMIN, axes, dml.AxisDirection.DECREASING, NanPolicy.IGNORE, T.INT64)
        spec = KernelSpec("ARGMIN", (T.INT16,), T.INT64, element, (np.float32(-0.5), np.float32(3)), reduction)
        out = TensorDesc(T.INT64, [1 if k in axes else n for k, n in enumerate(sizes)])
        sources += argmin_sources(spec, [TensorDesc(T.INT16, sizes)], out)
    for source in sources:
        if "__device__ __forceinline__ float value(" in source:  # not the combine pass, which takes no value
            check_scalars_are_arguments(spec, source)
    ptx = compile_with_nvcc(sources, tmp_path)
    # each shape's kernel, its element-by-element twin where it loads vectors, and a combine pass where a
    # prologue's plan cuts reductions into pieces that its scan does not merge (the rows' min-and-ballot scan,
    # the columns; the long rows' pieces are merged by their scan: argmin_c.one_pass)
    assert ptx.count(".entry opendml_kernel_") == len(sources) == 7


@needs_nvcc
def test_random_expression_kernels_compile(tmp_path) -> None:
    specs = seeded_specs(150) + double_specs()
    sources = [s for spec in specs for s in elementwise_sources(spec, collapse([64], [[1]] * (len(spec.inputs) + 1)))]
    ptx = compile_with_nvcc(sources, tmp_path)
    assert ptx.count(".entry opendml_kernel_") == len(sources)


# --- the lowered C run on the host, where a C++ compiler with _Float16 is installed ---------------------

HOST_PRELUDE = r"""
#include <cmath>
#include <cstdio>
#include <cstring>
typedef unsigned long long ull; typedef long long ll;
#define __device__
#define __forceinline__ inline
using std::isinf;  // CUDA's device code has C's isinf of a double in the global namespace
static inline float __fsqrt_rn(float a) { return std::sqrt(a); }  // IEEE on the host: rounded once
""" + PTX_HELPERS + r"""
template <typename T> static T from_bits(ull b) { T v; memcpy(&v, &b, sizeof(T)); return v; }
template <typename T> static ull to_bits(T v) { ull b = 0; memcpy(&b, &v, sizeof(T)); return b; }
"""
HOST_ELEMENTS = 64


def _bits(value: np.ndarray | np.generic) -> list[int]:
    array = np.atleast_1d(np.asarray(value))
    return [int(b) for b in array.view(f"u{array.itemsize}")]


def host_program(specs: Sequence[KernelSpec], operands: Sequence[Sequence[np.ndarray | None]]) -> str:
    """Each spec's ``apply`` called on its operands' elements; every result printed as its bits."""
    parts = [HOST_PRELUDE]
    for n, (spec, arrays) in enumerate(zip(specs, operands)):
        scalars = expr_c.launch_scalars(spec.element, spec.scalars)
        function = expr_c.apply_function(spec.operator, spec.inputs, spec.element)
        lines = [f"namespace k{n} {{", own_unit(function.replace(expr_c.ARITHMETIC, HOST_ARITHMETIC).replace(
            expr_c.DOUBLES, HOST_DOUBLES))]
        lines += [f"static const ull r{k}[] = {{{', '.join(f'{b}ull' for b in _bits(a))}}};"
                  for k, a in enumerate(arrays) if a is not None]
        arguments = [f"from_bits<{C_TYPE[t]}>(r{k}[i])" for k, t in enumerate(spec.inputs) if t is not None]
        arguments += [f"from_bits<{parameter.rsplit(' ', 1)[0]}>({_bits(q)[0]}ull)"
                      for parameter, q in zip(expr_c.scalar_parameters(spec.element), scalars)]
        lines.append(f"void run() {{ for (int i = 0; i < {HOST_ELEMENTS}; ++i) "
                     f"printf(\"%llu\\n\", to_bits(apply({', '.join(arguments)}))); }}\n}}")
        parts.append("\n".join(lines) + "\n")
    parts.append("int main() { " + " ".join(f"k{n}::run();" for n in range(len(specs))) + " return 0; }\n")
    return "".join(parts)


def _host_values(t: T, rng: np.random.Generator) -> np.ndarray:
    """Edge values of ``t``; FLOAT64's lead with the doubles a rounding through float32 would get wrong."""
    values = edge_values(t, HOST_ELEMENTS, rng)
    if t is T.FLOAT64:
        doubles = DOUBLE_EDGES + [-v for v in DOUBLE_EDGES]
        values[:len(doubles)] = doubles
    return values


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
def test_lowered_c_run_on_the_host_matches_the_numpy_lowering(tmp_path) -> None:
    operators = [spec_of(desc)[0] for _, desc in OPERATORS]
    specs = [s for s in operators if s.reduction is None] + seeded_specs(200, seed=5) + double_specs()
    rng = np.random.default_rng(13)
    operands = [[None if t is None else _host_values(t, rng) for t in spec.inputs] for spec in specs]
    printed = run_host_program(host_program(specs, operands), tmp_path)
    assert len(printed) == HOST_ELEMENTS * len(specs)
    for n, (spec, arrays) in enumerate(zip(specs, operands)):
        bits = np.array([int(b) for b in printed[n * HOST_ELEMENTS:(n + 1) * HOST_ELEMENTS]], np.uint64)
        got = bits.astype(f"u{spec.output.size}").view(spec.output.numpy)
        expected = np.broadcast_to(evaluate(spec.element, arrays, spec.scalars), got.shape)
        assert same_values(got, expected), f"{spec.operator} {spec.element}: got {got[:6]}, expected {expected[:6]}"
