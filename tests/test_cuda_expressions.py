"""CUDA kernels lowered from element expressions give the NumPy lowering's and the references' bits.

These tests need an NVIDIA GPU with CuPy; elsewhere they skip, saying why.
"""

from __future__ import annotations

import dataclasses
import enum
import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import opendml as dml
from opendml import DataType as T
from opendml import TensorDesc
from opendml import expr as ex
from opendml.enums import NanPolicy
from opendml.kernels.numpy_lowering import evaluate
from opendml.kernels.spec import KernelSpec, Reduction, ReductionKind
from opendml.ops.argmin import ArgReductionParams, arg_reduction_reference
from tests.conftest import CUDA_MISSING
from tests.cuda_lowering_cases import expression_specs, operator_descs
from tests.helpers import edge_values, mismatches, run, same_values, stored_edge_values

pytestmark = pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")

FLOAT32S = st.floats(width=32, allow_subnormal=True)


@pytest.fixture(scope="module")
def gpu() -> dml.Device:
    return dml.Device("cuda")


def run_spec(gpu: dml.Device, spec: KernelSpec, operands: list[np.ndarray | None], count: int,
             shift: int) -> np.ndarray:
    """Run the element-wise kernel of ``spec`` over 1-D ``operands``, every pointer ``shift`` elements in
    (a shift breaks 16-byte alignment, so the general kernel runs instead of the vector one)."""
    import cupy

    from opendml.backends.cuda.backend import ElementwiseKernel

    descs = [None if t is None else TensorDesc(t, [count]) for t in spec.inputs]
    kernel = ElementwiseKernel(gpu.backend, spec, descs, TensorDesc(spec.output, [count]))
    arrays = [None if a is None else cupy.asarray(np.concatenate([a[:1]] * shift + [a])) for a in operands]
    out = cupy.zeros(count + shift, spec.output.numpy)
    pointers = [a.data.ptr + shift * a.itemsize for a in arrays if a is not None]
    kernel.run([*pointers, out.data.ptr + shift * out.itemsize])
    return cupy.asnumpy(out)[shift:]


def reference(operator: Any, inputs: list[Any], params: Any) -> np.ndarray:
    """The operator's NumPy reference (overflow to infinity is a defined result, not a warning)."""
    with np.errstate(all="ignore"):
        return operator.definition.reference(inputs, params)  # type: ignore[no-any-return]


@given(spec=expression_specs(), count=st.integers(1, 300), seed=st.integers(0, 2**32 - 1))
def test_random_expressions_match_the_numpy_lowering(gpu, spec: KernelSpec, count: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    operands = [None if t is None else edge_values(t, count, rng) for t in spec.inputs]
    expected = np.broadcast_to(evaluate(spec.element, operands, spec.scalars), (count,))
    for shift in (0, 1):  # the vector kernel (where the layout allows it), then the general one
        got = run_spec(gpu, spec, operands, count, shift)
        assert same_values(got, expected), f"{spec.element} shift {shift}: got {got[:8]}, expected {expected[:8]}"


# 1000 elements: the vector kernel and a scalar tail; 5 x 67: rows no chunk fits, the general kernel.
OPERATORS = [(f"{name}-{'x'.join(map(str, sizes))}", desc) for sizes in ([1000], [5, 67])
             for name, desc in operator_descs(sizes)]


@pytest.mark.parametrize("desc", [d for _, d in OPERATORS], ids=[i for i, _ in OPERATORS])
def test_every_operator_matches_its_reference(gpu, desc: object) -> None:
    """Each operator x data type x option on the GPU against its NumPy reference (the independent oracle)."""
    operator = gpu.create_operator(desc)
    fields = operator.definition.schema.inputs
    rng = np.random.default_rng(len(fields))
    pairs = [None if (t := operator.tensors[f.name]) is None else stored_edge_values(t, rng) for f in fields]
    inputs = [None if p is None else p[1] for p in pairs]  # each as its description reads it (broadcasts too)
    expected = reference(operator, inputs, operator.params)
    got = run(gpu, desc, [None if p is None else p[0] for p in pairs])  # the buffers hold the stored elements
    assert same_values(got, expected), mismatches(got, expected, inputs)
    spec = operator.kernel_spec
    if spec.reduction is None:  # the expression, lowered to NumPy, agrees with the reference too
        assert same_values(evaluate(spec.element, inputs, spec.scalars), expected)


@given(data_type=st.sampled_from([T.FLOAT32, T.FLOAT16]), low=FLOAT32S, high=FLOAT32S,
       scale_bias=st.none() | st.tuples(FLOAT32S, FLOAT32S))
def test_clip_with_any_bounds_matches_the_reference(gpu, data_type: T, low: float, high: float,
                                                     scale_bias: tuple[float, float] | None) -> None:
    x = TensorDesc(data_type, [4, 100])
    values = edge_values(data_type, x.element_count, np.random.default_rng(7)).reshape(4, 100)
    desc = dml.ElementWiseClipDesc(x, x, low, high, None if scale_bias is None else dml.ScaleBias(*scale_bias))
    operator = gpu.create_operator(desc)
    assert same_values(run(gpu, desc, [values]), reference(operator, [values], operator.params))


@given(data_type=st.sampled_from(sorted(ex.INTEGERS, key=lambda t: t.value)), data=st.data())
def test_clip1_with_any_integer_bounds_matches_the_reference(gpu, data_type: T, data: st.DataObject) -> None:
    low, high = (data.draw(st.integers(*data_type.integer_range)) for _ in range(2))
    x = TensorDesc(data_type, [300])
    values = edge_values(data_type, 300, np.random.default_rng(8))
    desc = dml.ElementWiseClip1Desc(x, x, data_type, low, high)
    try:
        operator = gpu.create_operator(desc)
    except dml.InvalidArgumentError:
        assume(False)  # a combination DirectML rejects
    assert same_values(run(gpu, desc, [values]), reference(operator, [values], operator.params))


def test_clips_with_other_bounds_reuse_one_compiled_kernel(gpu) -> None:
    from opendml.backends.cuda import compiler

    x = TensorDesc(T.FLOAT32, [8, 1024])
    values = edge_values(T.FLOAT32, x.element_count, np.random.default_rng(9)).reshape(8, 1024)
    first = dml.ElementWiseClipDesc(x, x, -1.0, 1.0, dml.ScaleBias(2.0, 0.5))
    second = dml.ElementWiseClipDesc(x, x, -3.5, 0.25, dml.ScaleBias(-1.0, 7.0))
    compiled_first = gpu.compile_operator(gpu.create_operator(first))
    count = compiler.compiled_count()
    compiled_second = gpu.compile_operator(gpu.create_operator(second))
    assert compiler.compiled_count() == count
    assert compiled_first._kernel._vector is compiled_second._kernel._vector
    for desc in (first, second):  # the shared kernel takes each operator's own bounds
        operator = gpu.create_operator(desc)
        assert same_values(run(gpu, desc, [values]), reference(operator, [values], operator.params))


@pytest.mark.parametrize("direction", ["INCREASING", "DECREASING"])
def test_argmin_compares_the_values_of_its_element_expression(gpu, direction: str) -> None:
    """A computed value (x * q0 + q1 of INT16 elements, q0 negative) feeds the hand-tuned ARGMIN engine."""
    import cupy

    from opendml.backends.cuda.backend import ArgMinKernel

    direction_enum = dml.AxisDirection.parse(direction, owner="ARGMIN")
    element = ex.Add(ex.Multiply(ex.ToFloat32(ex.Load(0, T.INT16)), ex.Param(0, T.FLOAT32)), ex.Param(1, T.FLOAT32))
    scalars = (np.float32(-0.5), np.float32(3.0))
    for sizes, axes in [([37, 3000], (1,)), ([3000, 37], (0,)), ([3, 200000], (1,))]:  # rows, columns, pieces
        out_sizes = [1 if k in axes else n for k, n in enumerate(sizes)]
        reduction = Reduction(ReductionKind.ARGMIN, axes, direction_enum, NanPolicy.IGNORE, T.INT64)
        spec = KernelSpec("ARGMIN", (T.INT16,), T.INT64, element, scalars, reduction)
        kernel = ArgMinKernel(gpu.backend, spec, [TensorDesc(T.INT16, sizes)], TensorDesc(T.INT64, out_sizes))
        x = edge_values(T.INT16, int(np.prod(sizes)), np.random.default_rng(10)).reshape(sizes)
        x_gpu, out = cupy.asarray(x), cupy.zeros(out_sizes, np.int64)
        kernel.run([x_gpu.data.ptr, out.data.ptr])
        values = evaluate(element, [x], scalars)
        params = ArgReductionParams(axes, direction_enum, T.INT64, ReductionKind.ARGMIN, NanPolicy.IGNORE)
        expected = arg_reduction_reference([values], params)
        assert np.array_equal(cupy.asnumpy(out), expected)


class _OtherKind(enum.Enum):
    SUM = "SUM"


def test_a_reduction_without_a_cuda_engine_is_refused_by_name(gpu) -> None:
    from opendml import KernelUnsupportedError

    x = TensorDesc(T.FLOAT32, [4, 8])
    operator = gpu.create_operator(dml.ArgMinDesc(x, TensorDesc(T.INT64, [4, 1]), [1], "INCREASING"))
    spec = operator.kernel_spec
    assert spec.reduction is not None
    other = dataclasses.replace(spec.reduction, kind=_OtherKind.SUM)
    operator.__dict__["kernel_spec"] = dataclasses.replace(spec, reduction=other)
    with pytest.raises(KernelUnsupportedError, match=r"^ARGMIN: kernel must be element-wise or an ARGMIN or "
                                                      r"ARGMAX reduction on backend 'cuda'; got a SUM reduction\.$"):
        gpu.backend.compile(operator)


def test_print_kernels_prints_each_generated_source_once() -> None:
    code = ("import numpy as np, opendml as dml\n"
            "d = dml.Device('cuda')\n"
            "for low in (-1.0, -2.0): dml.clip(np.ones(1000, np.float32), low, 1.0, device=d)\n")
    env = dict(os.environ, OPENDML_PRINT_KERNELS="1")
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    headers = [line for line in result.stderr.splitlines() if line.startswith("// ---- opendml CUDA C kernel:")]
    assert headers == ["// ---- opendml CUDA C kernel: ELEMENT_WISE_CLIP (FLOAT32) -> FLOAT32, "
                       "element-wise, 16-byte chunks ----"]
    assert 'extern "C" __global__ void opendml_kernel(ull p0, ull pout, float q0, float q1)' in result.stderr
