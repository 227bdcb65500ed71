"""Kernel specifications of the operators.

1. Completeness: every operator in the registry, at every support row's every type combination, gets a
   KernelSpec of its own whose expression type-checks, and compiles and runs through every lowering path
   this machine has, matching the independent oracle (tests/elementwise_oracle.py): the CPU backend's NumPy
   path (no Numba), its Numba kernels (the scalar lowering), the same with every output streamed (the LLVM
   vector lowering, which otherwise only outputs of 32 MiB reach), and CUDA. A new operator without a
   description and an oracle here fails, and one whose spec falls into another operator's kernel shows in
   the results. The Numba threaded drivers run these same kernels over thread shares (no lowering of
   their own): tests/test_cpu_fast.py runs them.
2. Each operator's expression through the NumPy lowering, bit for bit against the independent oracle
   (tests/elementwise_oracle.py) over edge values: NaN, infinities, -0.0, ties at the bounds, type limits,
   subnormals, and FLOAT16 overflow on store.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pytest

import opendml as dml
from opendml import expr as ex
from opendml.backends import cpu_kernels
from opendml.dtypes import DataType as T
from opendml.kernels import numpy_lowering
from opendml.kernels.spec import KernelSpec, ReductionKind, Scalars
from opendml.ops import BY_NAME, OPERATORS
from opendml.ops.unary import Constants, wrapped
from opendml.schema import OperatorSchema, SupportRow
from tests import elementwise_oracle as oracle
from tests import reduce_oracle, suite
from tests.conftest import CUDA_MISSING
from tests.expr_strategies import edges
from tests.helpers import edge_values, run

Tensors = Mapping[str, dml.TensorDesc | None]

# --- the descriptions: one per operator, so that a new operator fails until it has one ---------------------


def _clip(t: Tensors) -> object:
    x, y = t["InputTensor"], t["OutputTensor"]
    assert x is not None and y is not None
    return dml.ElementWiseClipDesc(x, y, -1.5, 100.0, scale_bias=dml.ScaleBias(1.5, 0.25) if x.data_type.is_float else None)


def _clip1(t: Tensors) -> object:
    x, y = t["InputTensor"], t["OutputTensor"]
    assert x is not None and y is not None
    low, high = (-1.5, 2.5) if x.data_type.is_float else (1, 100)
    return dml.ElementWiseClip1Desc(x, y, x.data_type, low, high)


def _threshold(t: Tensors) -> object:
    x, y = t["InputTensor"], t["OutputTensor"]
    assert x is not None and y is not None
    return dml.ElementWiseThresholdDesc(x, y, 0.5, scale_bias=dml.ScaleBias(-2.0, 1.0) if x.data_type.is_float else None)


def _dequantize(t: Tensors) -> object:
    x, scale, zero_point, y = (t[n] for n in ("InputTensor", "ScaleTensor", "ZeroPointTensor", "OutputTensor"))
    assert x is not None and scale is not None and y is not None
    return dml.ElementWiseDequantizeLinearDesc(x, scale, zero_point, y)


def _quantize(t: Tensors) -> object:
    x, scale, zero_point, y = (t[n] for n in ("InputTensor", "ScaleTensor", "ZeroPointTensor", "OutputTensor"))
    assert x is not None and scale is not None and y is not None
    return dml.ElementWiseQuantizeLinearDesc(x, scale, zero_point, y)


def _quantized_linear_add(t: Tensors) -> object:
    return dml.ElementWiseQuantizedLinearAddDesc(*(t[f.name] for f in BY_NAME["ELEMENT_WISE_QUANTIZED_LINEAR_ADD"]
                                                   .schema.tensors))


def _argmin(t: Tensors) -> object:
    x, y = t["InputTensor"], t["OutputTensor"]
    assert x is not None and y is not None
    return dml.ArgMinDesc(x, y, [x.dimension_count - 1], "DECREASING")


def _argmax(t: Tensors) -> object:
    x, y = t["InputTensor"], t["OutputTensor"]
    assert x is not None and y is not None
    return dml.ArgMaxDesc(x, y, [x.dimension_count - 1], "INCREASING", "PROPAGATE")


INDEX_TYPES = {T.INT64, T.INT32, T.UINT64, T.UINT32}


def _reduce_function(x: dml.TensorDesc, y: dml.TensorDesc) -> str:
    """The REDUCE function a combination of types exercises: the union of the functions' tables is the row,
    so each type of it is reached through one function that takes it (an index output: ARGMAX; an 8- or
    16-bit integer: MAX; else SUM)."""
    if y.data_type in INDEX_TYPES and y.data_type != x.data_type:
        return "ARGMAX"
    if x.data_type.is_float or x.data_type in (T.INT32, T.UINT32):
        return "SUM"
    return "MAX"


def _reduce(t: Tensors) -> object:
    x, y = t["InputTensor"], t["OutputTensor"]
    assert x is not None and y is not None
    return dml.ReduceDesc(_reduce_function(x, y), x, y, [x.dimension_count - 1])


def _unary(make: Callable[[dml.TensorDesc, dml.TensorDesc], object]) -> Callable[[Tensors], object]:
    def describe(t: Tensors) -> object:
        x, y = t["InputTensor"], t["OutputTensor"]
        assert x is not None and y is not None
        return make(x, y)

    return describe


def _binary(make: Callable[[dml.TensorDesc, dml.TensorDesc, dml.TensorDesc], object]) -> Callable[[Tensors], object]:
    def describe(t: Tensors) -> object:
        a, b, y = t["ATensor"], t["BTensor"], t["OutputTensor"]
        assert a is not None and b is not None and y is not None
        return make(a, b, y)

    return describe


def _gradient(make: Callable[[dml.TensorDesc, dml.TensorDesc, dml.TensorDesc], object]
              ) -> Callable[[Tensors], object]:
    """The gradient operators' tensors: InputTensor, InputGradientTensor, OutputGradientTensor."""
    def describe(t: Tensors) -> object:
        x, g, y = t["InputTensor"], t["InputGradientTensor"], t["OutputGradientTensor"]
        assert x is not None and g is not None and y is not None
        return make(x, g, y)

    return describe


def _clip_grad1(x: dml.TensorDesc, g: dml.TensorDesc, y: dml.TensorDesc) -> object:
    low, high = (-1.5, 2.5) if x.data_type.is_float else (1, 100)
    return dml.ElementWiseClipGrad1Desc(x, g, y, x.data_type, low, high)


ADD1_ALPHA = 0.1  # ELEMENT_WISE_ADD1's FusedActivation: an ACTIVATION_LEAKY_RELU of this Alpha

# The unary family's fields here; the same values reach the oracle through EXPECTED.
UNARY_FIELDS: dict[str, tuple[float, ...]] = {
    "ACTIVATION_LINEAR": (1.5, -0.25), "ACTIVATION_LEAKY_RELU": (0.1,), "ACTIVATION_THRESHOLDED_RELU": (0.5,),
    "ACTIVATION_HARD_SIGMOID": (0.2, 0.5), "ACTIVATION_HARD_SWISH": (1 / 6, 0.5),
    "ACTIVATION_SHRINK": (100.5, -50.5),  # Bias, Threshold: UINT8's differences and INT8's above -50 wrap
    "ACTIVATION_SOFTPLUS": (2.5,), "ACTIVATION_PARAMETRIC_SOFTPLUS": (0.75, 1.5), "ACTIVATION_ELU": (0.5,),
    "ACTIVATION_CELU": (1.5,), "ACTIVATION_SCALED_ELU": (1.6732632, 1.050701), "ACTIVATION_SCALED_TANH": (1.5, 0.75),
    "ACTIVATION_SWISH": (1.25,),
}

DESCRIPTIONS: dict[str, Callable[[Tensors], object]] = {
    "ELEMENT_WISE_CLIP": _clip,
    "ELEMENT_WISE_CLIP1": _clip1,
    "ELEMENT_WISE_THRESHOLD": _threshold,
    "ELEMENT_WISE_DEQUANTIZE_LINEAR": _dequantize,
    "ELEMENT_WISE_QUANTIZE_LINEAR": _quantize,
    "ELEMENT_WISE_QUANTIZED_LINEAR_ADD": _quantized_linear_add,
    "ARGMIN": _argmin,
    "ARGMAX": _argmax,
    "ELEMENT_WISE_IDENTITY": _unary(lambda x, y: dml.ElementWiseIdentityDesc(  # FLOAT64: a copy, no ScaleBias
        x, y, dml.ScaleBias(2.0, -1.0) if x.data_type in (T.FLOAT32, T.FLOAT16) else None)),
    "ELEMENT_WISE_ABS": _unary(lambda x, y: dml.ElementWiseAbsDesc(
        x, y, dml.ScaleBias(-1.5, 0.25) if x.data_type.is_float else None)),
    "ELEMENT_WISE_NEGATE": _unary(dml.ElementWiseNegateDesc),
    "ELEMENT_WISE_CEIL": _unary(lambda x, y: dml.ElementWiseCeilDesc(x, y, dml.ScaleBias(0.5, -0.25))),
    "ELEMENT_WISE_FLOOR": _unary(dml.ElementWiseFloorDesc),
    "ELEMENT_WISE_SIGN": _unary(dml.ElementWiseSignDesc),
    "ELEMENT_WISE_RECIP": _unary(lambda x, y: dml.ElementWiseRecipDesc(x, y, dml.ScaleBias(2.0, 0.0))),
    "ELEMENT_WISE_LOGICAL_NOT": _unary(dml.ElementWiseLogicalNotDesc),
    "ELEMENT_WISE_BIT_NOT": _unary(dml.ElementWiseBitNotDesc),
    "ELEMENT_WISE_BIT_COUNT": _unary(dml.ElementWiseBitCountDesc),
    "ELEMENT_WISE_SQRT": _unary(lambda x, y: dml.ElementWiseSqrtDesc(x, y, dml.ScaleBias(3.0, -0.5))),
    "ELEMENT_WISE_EXP": _unary(lambda x, y: dml.ElementWiseExpDesc(x, y, dml.ScaleBias(0.5, -0.25))),
    "ELEMENT_WISE_LOG": _unary(lambda x, y: dml.ElementWiseLogDesc(x, y, dml.ScaleBias(2.0, 0.5))),
    "ELEMENT_WISE_SIN": _unary(lambda x, y: dml.ElementWiseSinDesc(x, y, dml.ScaleBias(3.0, 0.25))),
    "ELEMENT_WISE_COS": _unary(lambda x, y: dml.ElementWiseCosDesc(x, y, dml.ScaleBias(3.0, 0.25))),
    "ELEMENT_WISE_TAN": _unary(lambda x, y: dml.ElementWiseTanDesc(x, y, dml.ScaleBias(0.75, 0.1))),
    "ELEMENT_WISE_ASIN": _unary(lambda x, y: dml.ElementWiseAsinDesc(x, y, dml.ScaleBias(0.25, 0.125))),
    "ELEMENT_WISE_ACOS": _unary(lambda x, y: dml.ElementWiseAcosDesc(x, y, dml.ScaleBias(0.25, -0.125))),
    "ELEMENT_WISE_ATAN": _unary(lambda x, y: dml.ElementWiseAtanDesc(x, y, dml.ScaleBias(4.0, 0.5))),
    "ELEMENT_WISE_SINH": _unary(lambda x, y: dml.ElementWiseSinhDesc(x, y, dml.ScaleBias(1.5, -0.5))),
    "ELEMENT_WISE_COSH": _unary(lambda x, y: dml.ElementWiseCoshDesc(x, y, dml.ScaleBias(1.5, 0.5))),
    "ELEMENT_WISE_TANH": _unary(lambda x, y: dml.ElementWiseTanhDesc(x, y, dml.ScaleBias(0.5, 0.25))),
    "ELEMENT_WISE_ASINH": _unary(lambda x, y: dml.ElementWiseAsinhDesc(x, y, dml.ScaleBias(8.0, 1.0))),
    "ELEMENT_WISE_ACOSH": _unary(lambda x, y: dml.ElementWiseAcoshDesc(x, y, dml.ScaleBias(2.0, 1.5))),
    "ELEMENT_WISE_ATANH": _unary(lambda x, y: dml.ElementWiseAtanhDesc(x, y, dml.ScaleBias(0.25, 0.0625))),
    "ELEMENT_WISE_ERF": _unary(lambda x, y: dml.ElementWiseErfDesc(x, y, dml.ScaleBias(0.75, -0.25))),
    "ELEMENT_WISE_ROUND": _unary(lambda x, y: dml.ElementWiseRoundDesc(x, y, "TOWARD_INFINITY")),
    "ELEMENT_WISE_IS_NAN": _unary(dml.ElementWiseIsNanDesc),
    "ELEMENT_WISE_IS_INFINITY": _unary(lambda x, y: dml.ElementWiseIsInfinityDesc(x, y, "NEGATIVE")),
    "ACTIVATION_IDENTITY": _unary(dml.ActivationIdentityDesc),
    "ACTIVATION_RELU": _unary(dml.ActivationReluDesc),
    "ACTIVATION_LINEAR": _unary(lambda x, y: dml.ActivationLinearDesc(x, y, *UNARY_FIELDS["ACTIVATION_LINEAR"])),
    "ACTIVATION_LEAKY_RELU": _unary(lambda x, y: dml.ActivationLeakyReluDesc(
        x, y, *UNARY_FIELDS["ACTIVATION_LEAKY_RELU"])),
    "ACTIVATION_THRESHOLDED_RELU": _unary(lambda x, y: dml.ActivationThresholdedReluDesc(
        x, y, *UNARY_FIELDS["ACTIVATION_THRESHOLDED_RELU"])),
    "ACTIVATION_HARD_SIGMOID": _unary(lambda x, y: dml.ActivationHardSigmoidDesc(
        x, y, *UNARY_FIELDS["ACTIVATION_HARD_SIGMOID"])),
    "ACTIVATION_HARD_SWISH": _unary(lambda x, y: dml.ActivationHardSwishDesc(
        x, y, *UNARY_FIELDS["ACTIVATION_HARD_SWISH"])),
    "ACTIVATION_SHRINK": _unary(lambda x, y: dml.ActivationShrinkDesc(x, y, *UNARY_FIELDS["ACTIVATION_SHRINK"])),
    "ACTIVATION_SIGMOID": _unary(dml.ActivationSigmoidDesc),
    "ACTIVATION_TANH": _unary(dml.ActivationTanhDesc),
    "ACTIVATION_SOFTSIGN": _unary(dml.ActivationSoftsignDesc),
    "ACTIVATION_GELU": _unary(dml.ActivationGeluDesc),
    "ACTIVATION_SOFTPLUS": _unary(lambda x, y: dml.ActivationSoftplusDesc(x, y, *UNARY_FIELDS["ACTIVATION_SOFTPLUS"])),
    "ACTIVATION_PARAMETRIC_SOFTPLUS": _unary(lambda x, y: dml.ActivationParametricSoftplusDesc(
        x, y, *UNARY_FIELDS["ACTIVATION_PARAMETRIC_SOFTPLUS"])),
    "ACTIVATION_ELU": _unary(lambda x, y: dml.ActivationEluDesc(x, y, *UNARY_FIELDS["ACTIVATION_ELU"])),
    "ACTIVATION_CELU": _unary(lambda x, y: dml.ActivationCeluDesc(x, y, *UNARY_FIELDS["ACTIVATION_CELU"])),
    "ACTIVATION_SCALED_ELU": _unary(lambda x, y: dml.ActivationScaledEluDesc(
        x, y, *UNARY_FIELDS["ACTIVATION_SCALED_ELU"])),
    "ACTIVATION_SCALED_TANH": _unary(lambda x, y: dml.ActivationScaledTanhDesc(
        x, y, *UNARY_FIELDS["ACTIVATION_SCALED_TANH"])),
    "ACTIVATION_SWISH": _unary(lambda x, y: dml.ActivationSwishDesc(x, y, *UNARY_FIELDS["ACTIVATION_SWISH"])),
    "ELEMENT_WISE_ADD": _binary(dml.ElementWiseAddDesc),
    "ELEMENT_WISE_SUBTRACT": _binary(dml.ElementWiseSubtractDesc),
    "ELEMENT_WISE_MULTIPLY": _binary(dml.ElementWiseMultiplyDesc),
    "ELEMENT_WISE_DIVIDE": _binary(dml.ElementWiseDivideDesc),
    "ELEMENT_WISE_ATAN_YX": _binary(dml.ElementWiseAtanYxDesc),
    "ELEMENT_WISE_POW": lambda t: dml.ElementWisePowDesc(t["InputTensor"], t["ExponentTensor"], t["OutputTensor"],
                                                         dml.ScaleBias(0.5, 1.25)),
    "ELEMENT_WISE_CONSTANT_POW": _unary(lambda x, y: dml.ElementWiseConstantPowDesc(x, y, 2.5, dml.ScaleBias(1.5, 0.25))),
    "ELEMENT_WISE_MIN": _binary(dml.ElementWiseMinDesc),
    "ELEMENT_WISE_MAX": _binary(dml.ElementWiseMaxDesc),
    "ELEMENT_WISE_MEAN": _binary(dml.ElementWiseMeanDesc),
    "ELEMENT_WISE_DIFFERENCE_SQUARE": _binary(dml.ElementWiseDifferenceSquareDesc),
    "ELEMENT_WISE_MODULUS_FLOOR": _binary(dml.ElementWiseModulusFloorDesc),
    "ELEMENT_WISE_MODULUS_TRUNCATE": _binary(dml.ElementWiseModulusTruncateDesc),
    "ELEMENT_WISE_LOGICAL_EQUALS": _binary(dml.ElementWiseLogicalEqualsDesc),
    "ELEMENT_WISE_LOGICAL_GREATER_THAN": _binary(dml.ElementWiseLogicalGreaterThanDesc),
    "ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL": _binary(dml.ElementWiseLogicalGreaterThanOrEqualDesc),
    "ELEMENT_WISE_LOGICAL_LESS_THAN": _binary(dml.ElementWiseLogicalLessThanDesc),
    "ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL": _binary(dml.ElementWiseLogicalLessThanOrEqualDesc),
    "ELEMENT_WISE_LOGICAL_AND": _binary(dml.ElementWiseLogicalAndDesc),
    "ELEMENT_WISE_LOGICAL_OR": _binary(dml.ElementWiseLogicalOrDesc),
    "ELEMENT_WISE_LOGICAL_XOR": _binary(dml.ElementWiseLogicalXorDesc),
    "ELEMENT_WISE_IF": lambda t: dml.ElementWiseIfDesc(t["ConditionTensor"], t["ATensor"], t["BTensor"],  # type: ignore[arg-type]
                                                      t["OutputTensor"]),
    "ELEMENT_WISE_BIT_AND": _binary(dml.ElementWiseBitAndDesc),
    "ELEMENT_WISE_BIT_OR": _binary(dml.ElementWiseBitOrDesc),
    "ELEMENT_WISE_BIT_XOR": _binary(dml.ElementWiseBitXorDesc),
    "ELEMENT_WISE_BIT_SHIFT_LEFT": _binary(dml.ElementWiseBitShiftLeftDesc),
    "ELEMENT_WISE_BIT_SHIFT_RIGHT": _binary(dml.ElementWiseBitShiftRightDesc),
    "CAST": _unary(dml.CastDesc),
    "ELEMENT_WISE_ADD1": _binary(lambda a, b, y: dml.ElementWiseAdd1Desc(a, b, y, dml.ActivationLeakyReluDesc(
        None, None, ADD1_ALPHA))),
    "ACTIVATION_PARAMETERIZED_RELU": lambda t: dml.ActivationParameterizedReluDesc(
        t["InputTensor"], t["SlopeTensor"], t["OutputTensor"]),
    "ACTIVATION_RELU_GRAD": _gradient(dml.ActivationReluGradDesc),
    "ELEMENT_WISE_CLIP_GRAD": _gradient(lambda x, g, y: dml.ElementWiseClipGradDesc(x, g, y, -1.5, 100.0)),
    "ELEMENT_WISE_CLIP_GRAD1": _gradient(_clip_grad1),
    "REDUCE": _reduce,
}
REDUCTIONS = {"ARGMIN": ReductionKind.ARGMIN, "ARGMAX": ReductionKind.ARGMAX}  # every other operator is element-wise


# --- each description's expected output, element by element from the oracle ---------------------------------

Values = list[int | float]


def cuda_lowers(spec: KernelSpec) -> bool:
    """Whether the CUDA backend lowers this REDUCE value function (else it refuses it by name)."""
    from opendml.backends.cuda import reduce_c
    from opendml.errors import KernelUnsupportedError

    try:
        reduce_c.mode(spec)
    except KernelUnsupportedError:
        return False
    return True


def _name(t: object) -> str:
    """A DataType, AxisDirection or NanPolicy field as its DirectML name (given as an enum or a string)."""
    return str(getattr(t, "name", t))


def _type(tensors: Tensors, field: str) -> str:
    desc = tensors[field]
    assert desc is not None
    return desc.data_type.name


def _pair(scale_bias: dml.ScaleBias | None) -> tuple[float, float] | None:
    return None if scale_bias is None else (scale_bias.scale, scale_bias.bias)


def _each(inputs: Sequence[np.ndarray | None], element: Callable[..., int | float]) -> Values:
    """``element`` of each position's input values (None for an absent input), in row-major order."""
    columns = [None if a is None else [_python(v) for v in a.reshape(-1)] for a in inputs]
    count = max(len(c) for c in columns if c is not None)
    return [element(*(None if c is None else c[i] for c in columns)) for i in range(count)]


def _expect_clip(desc: dml.ElementWiseClipDesc, tensors: Tensors, inputs: Sequence[np.ndarray | None]) -> Values:
    t = _type(tensors, "InputTensor")
    low, high = oracle.float_field_bound(desc.min, t), oracle.float_field_bound(desc.max, t)
    return _each(inputs, lambda x: oracle.clamp_element(x, t, _pair(desc.scale_bias), low, high))


def _expect_clip1(desc: dml.ElementWiseClip1Desc, tensors: Tensors, inputs: Sequence[np.ndarray | None]) -> Values:
    t, bounds = _type(tensors, "InputTensor"), _name(desc.min_max_data_type)
    low, high = oracle.typed_bound(desc.min, bounds), oracle.typed_bound(desc.max, bounds)
    return _each(inputs, lambda x: oracle.clamp_element(x, t, _pair(desc.scale_bias), low, high))


def _expect_clip_grad(desc: dml.ElementWiseClipGradDesc | dml.ElementWiseClipGrad1Desc, tensors: Tensors,
                      inputs: Sequence[np.ndarray | None]) -> Values:
    """CLIP_GRAD's FLOAT bounds typed as CLIP's, CLIP_GRAD1's exact values of MinMaxDataType as CLIP1's."""
    t = _type(tensors, "InputTensor")
    bound = (oracle.float_field_bound if isinstance(desc, dml.ElementWiseClipGradDesc)
             else lambda v, _: oracle.typed_bound(v, t))
    low, high = bound(desc.min, t), bound(desc.max, t)
    return _each(inputs, lambda x, g: oracle.clip_grad_element(x, g, t, low, high))


def _expect_threshold(desc: dml.ElementWiseThresholdDesc, tensors: Tensors,
                      inputs: Sequence[np.ndarray | None]) -> Values:
    t = _type(tensors, "InputTensor")
    low = oracle.float_field_bound(desc.min, t)
    return _each(inputs, lambda x: oracle.clamp_element(x, t, _pair(desc.scale_bias), low, None))


def _expect_dequantize(desc: object, tensors: Tensors, inputs: Sequence[np.ndarray | None]) -> Values:
    out = _type(tensors, "OutputTensor")
    return _each(inputs, lambda x, scale, zero_point: oracle.dequantize_element(x, scale, zero_point, out))


def _expect_quantize(desc: object, tensors: Tensors, inputs: Sequence[np.ndarray | None]) -> Values:
    out = _type(tensors, "OutputTensor")
    return _each(inputs, lambda x, scale, zero_point: oracle.quantize_element(x, scale, zero_point, out))


def _expect_quantized_linear_add(desc: object, tensors: Tensors, inputs: Sequence[np.ndarray | None]) -> Values:
    out = _type(tensors, "OutputTensor")
    return _each(inputs, lambda *values: oracle.quantized_linear_add_element(*values, out))


def _expect_arg(desc: dml.ArgMinDesc | dml.ArgMaxDesc, tensors: Tensors, inputs: Sequence[np.ndarray | None],
                largest: bool) -> Values:
    x = inputs[0]
    assert x is not None
    values = {index: _python(x[index]) for index in np.ndindex(x.shape)}
    found = oracle.argmin_tensor(values, x.shape, desc.axes, _name(desc.axis_direction), largest,
                                 _name(desc.nan_policy) == "PROPAGATE")
    return list(found.values())  # in the output's row-major order


def _expect_reduce(desc: dml.ReduceDesc, tensors: Tensors, inputs: Sequence[np.ndarray | None]) -> Values:
    """REDUCE over the last axis: ARGMAX as ARGMAX's oracle (INCREASING, NaN ignored), SUM of floats the exact
    sum rounded once, of integers modulo 2**32, MAX the largest."""
    x = inputs[0]
    assert x is not None
    if desc.function == "ARGMAX":
        values = {index: _python(x[index]) for index in np.ndindex(x.shape)}
        return list(oracle.argmin_tensor(values, x.shape, desc.axes, "INCREASING", True, False).values())
    rows = x.reshape(-1, x.shape[-1])
    if desc.function == "MAX":
        return [_python(row.max()) for row in rows]
    if x.dtype.kind == "f":
        return [_python(reduce_oracle.oracle_sum(row, x.dtype.type)) for row in rows]
    return [_python(np.array(sum(int(v) for v in row) % 2 ** 32, np.uint64).astype(np.uint32).view(x.dtype))
            for row in rows]


Expect = Callable[[Any, Tensors, Sequence[np.ndarray | None]], Values]


def _expect_unary(element: Callable[..., int | float]) -> Expect:
    """A unary operator's expectation: ``element(x, type, *fields)`` at each element, the fields UNARY_FIELDS'."""
    def expect(desc: Any, tensors: Tensors, inputs: Sequence[np.ndarray | None]) -> Values:
        t = _type(tensors, "InputTensor")
        fields = UNARY_FIELDS.get(_declared_name(desc), ())
        return _each(inputs, lambda x: element(x, t, *fields))

    return expect


def _expect_scale_bias(element: Callable[..., int | float]) -> Expect:
    """An ELEMENT_WISE_* operator's expectation: ``element(x, type, (scale, bias) or None)`` at each element."""
    def expect(desc: Any, tensors: Tensors, inputs: Sequence[np.ndarray | None]) -> Values:
        t = _type(tensors, "InputTensor")
        return _each(inputs, lambda x: element(x, t, _pair(desc.scale_bias)))

    return expect


def _expect_binary(element: Callable[..., int | float]) -> Expect:
    """A binary operator's expectation: ``element(a, b, type)`` at each element."""
    def expect(desc: Any, tensors: Tensors, inputs: Sequence[np.ndarray | None]) -> Values:
        t = _type(tensors, "ATensor")
        return _each(inputs, lambda a, b: element(a, b, t))

    return expect


def _declared_name(desc: object) -> str:
    return next(name for name, op in BY_NAME.items() if op.desc_type is type(desc))

EXPECTED: dict[str, Expect] = {
    "ELEMENT_WISE_CLIP": _expect_clip,
    "ELEMENT_WISE_CLIP1": _expect_clip1,
    "ELEMENT_WISE_THRESHOLD": _expect_threshold,
    "ELEMENT_WISE_DEQUANTIZE_LINEAR": _expect_dequantize,
    "ELEMENT_WISE_QUANTIZE_LINEAR": _expect_quantize,
    "ELEMENT_WISE_QUANTIZED_LINEAR_ADD": _expect_quantized_linear_add,
    "ARGMIN": lambda desc, tensors, inputs: _expect_arg(desc, tensors, inputs, largest=False),
    "ARGMAX": lambda desc, tensors, inputs: _expect_arg(desc, tensors, inputs, largest=True),
    "ELEMENT_WISE_IDENTITY": _expect_scale_bias(oracle.identity_element),
    "ELEMENT_WISE_ABS": _expect_scale_bias(oracle.abs_element),
    "ELEMENT_WISE_NEGATE": _expect_unary(oracle.negate_element),
    "ELEMENT_WISE_CEIL": _expect_scale_bias(oracle.ceil_element),
    "ELEMENT_WISE_FLOOR": _expect_scale_bias(oracle.floor_element),
    "ELEMENT_WISE_SIGN": _expect_unary(oracle.sign_element),
    "ELEMENT_WISE_RECIP": _expect_scale_bias(oracle.recip_element),
    "ELEMENT_WISE_LOGICAL_NOT": _expect_unary(oracle.logical_not_element),
    "ELEMENT_WISE_BIT_NOT": _expect_unary(oracle.bit_not_element),
    "ELEMENT_WISE_BIT_COUNT": _expect_unary(oracle.bit_count_element),
    "ELEMENT_WISE_SQRT": _expect_scale_bias(oracle.sqrt_element),
    "ELEMENT_WISE_EXP": _expect_scale_bias(oracle.rounded_element("EXP")),
    "ELEMENT_WISE_LOG": _expect_scale_bias(oracle.rounded_element("LOG")),
    "ELEMENT_WISE_SIN": _expect_scale_bias(oracle.rounded_element("SIN")),
    "ELEMENT_WISE_COS": _expect_scale_bias(oracle.rounded_element("COS")),
    "ELEMENT_WISE_TAN": _expect_scale_bias(oracle.rounded_element("TAN")),
    "ELEMENT_WISE_ASIN": _expect_scale_bias(oracle.rounded_element("ASIN")),
    "ELEMENT_WISE_ACOS": _expect_scale_bias(oracle.rounded_element("ACOS")),
    "ELEMENT_WISE_ATAN": _expect_scale_bias(oracle.rounded_element("ATAN")),
    "ELEMENT_WISE_SINH": _expect_scale_bias(oracle.rounded_element("SINH")),
    "ELEMENT_WISE_COSH": _expect_scale_bias(oracle.rounded_element("COSH")),
    "ELEMENT_WISE_TANH": _expect_scale_bias(oracle.rounded_element("TANH")),
    "ELEMENT_WISE_ASINH": _expect_scale_bias(oracle.rounded_element("ASINH")),
    "ELEMENT_WISE_ACOSH": _expect_scale_bias(oracle.rounded_element("ACOSH")),
    "ELEMENT_WISE_ATANH": _expect_scale_bias(oracle.rounded_element("ATANH")),
    "ELEMENT_WISE_ERF": _expect_scale_bias(oracle.rounded_element("ERF")),
    "ELEMENT_WISE_ROUND": lambda desc, tensors, inputs: _each(
        inputs, lambda x: oracle.round_element(x, _type(tensors, "InputTensor"), _name(desc.rounding_mode))),
    "ELEMENT_WISE_IS_NAN": lambda desc, tensors, inputs: _each(inputs, oracle.is_nan_element),
    "ELEMENT_WISE_IS_INFINITY": lambda desc, tensors, inputs: _each(
        inputs, lambda x: oracle.is_infinity_element(x, _name(desc.infinity_mode))),
    "ACTIVATION_IDENTITY": _expect_unary(lambda x, t: x),
    "ACTIVATION_RELU": _expect_unary(oracle.relu_element),
    "ACTIVATION_LINEAR": _expect_unary(oracle.linear_element),
    "ACTIVATION_LEAKY_RELU": _expect_unary(oracle.leaky_relu_element),
    "ACTIVATION_THRESHOLDED_RELU": _expect_unary(oracle.thresholded_relu_element),
    "ACTIVATION_HARD_SIGMOID": _expect_unary(oracle.hard_sigmoid_element),
    "ACTIVATION_HARD_SWISH": _expect_unary(oracle.hard_swish_element),
    "ACTIVATION_SIGMOID": _expect_unary(oracle.rounded_activation("SIGMOID")),
    "ACTIVATION_TANH": _expect_unary(oracle.rounded_activation("TANH")),
    "ACTIVATION_SOFTSIGN": _expect_unary(oracle.rounded_activation("SOFTSIGN")),
    "ACTIVATION_GELU": _expect_unary(oracle.rounded_activation("GELU")),
    "ACTIVATION_SOFTPLUS": _expect_unary(oracle.softplus_element),
    "ACTIVATION_PARAMETRIC_SOFTPLUS": _expect_unary(oracle.parametric_softplus_element),
    "ACTIVATION_ELU": _expect_unary(oracle.elu_element),
    "ACTIVATION_CELU": _expect_unary(oracle.celu_element),
    "ACTIVATION_SCALED_ELU": _expect_unary(oracle.scaled_elu_element),
    "ACTIVATION_SCALED_TANH": _expect_unary(oracle.scaled_tanh_element),
    "ACTIVATION_SWISH": _expect_unary(oracle.swish_element),
    "ACTIVATION_SHRINK": _expect_unary(oracle.shrink_element),
    "ELEMENT_WISE_ADD": _expect_binary(oracle.add_element),
    "ELEMENT_WISE_SUBTRACT": _expect_binary(oracle.subtract_element),
    "ELEMENT_WISE_MULTIPLY": _expect_binary(oracle.multiply_element),
    "ELEMENT_WISE_DIVIDE": _expect_binary(oracle.divide_element),
    "ELEMENT_WISE_ATAN_YX": _expect_binary(oracle.rounded_pair_element("ATAN_YX")),
    "ELEMENT_WISE_POW": lambda desc, tensors, inputs: _each(inputs, lambda x, e: oracle.rounded_pair_element("POW")(
        oracle.scale_bias_element(x, _pair(desc.scale_bias)), e, _type(tensors, "InputTensor"))),
    "ELEMENT_WISE_CONSTANT_POW": lambda desc, tensors, inputs: _each(inputs, lambda x: oracle.rounded_pair_element(
        "POW")(oracle.scale_bias_element(x, _pair(desc.scale_bias)), 2.5, _type(tensors, "InputTensor"))),
    "ELEMENT_WISE_MIN": _expect_binary(oracle.min_element),
    "ELEMENT_WISE_MAX": _expect_binary(oracle.max_element),
    "ELEMENT_WISE_MEAN": _expect_binary(oracle.mean_element),
    "ELEMENT_WISE_DIFFERENCE_SQUARE": _expect_binary(oracle.difference_square_element),
    "ELEMENT_WISE_MODULUS_FLOOR": _expect_binary(oracle.modulus_floor_element),
    "ELEMENT_WISE_MODULUS_TRUNCATE": _expect_binary(oracle.modulus_truncate_element),
    "ELEMENT_WISE_LOGICAL_EQUALS": _expect_binary(oracle.equals_element),
    "ELEMENT_WISE_LOGICAL_GREATER_THAN": _expect_binary(oracle.greater_than_element),
    "ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL": _expect_binary(oracle.greater_than_or_equal_element),
    "ELEMENT_WISE_LOGICAL_LESS_THAN": _expect_binary(oracle.less_than_element),
    "ELEMENT_WISE_LOGICAL_LESS_THAN_OR_EQUAL": _expect_binary(oracle.less_than_or_equal_element),
    "ELEMENT_WISE_LOGICAL_AND": _expect_binary(oracle.logical_and_element),
    "ELEMENT_WISE_LOGICAL_OR": _expect_binary(oracle.logical_or_element),
    "ELEMENT_WISE_LOGICAL_XOR": _expect_binary(oracle.logical_xor_element),
    "ELEMENT_WISE_IF": lambda desc, tensors, inputs: _each(
        inputs, lambda c, a, b: oracle.if_element(c, a, b, _type(tensors, "ATensor"))),
    "ELEMENT_WISE_BIT_AND": _expect_binary(oracle.bit_and_element),
    "ELEMENT_WISE_BIT_OR": _expect_binary(oracle.bit_or_element),
    "ELEMENT_WISE_BIT_XOR": _expect_binary(oracle.bit_xor_element),
    "ELEMENT_WISE_BIT_SHIFT_LEFT": _expect_binary(oracle.bit_shift_left_element),
    "ELEMENT_WISE_BIT_SHIFT_RIGHT": _expect_binary(oracle.bit_shift_right_element),
    "CAST": lambda desc, tensors, inputs: _each(inputs, lambda x: oracle.cast_element(
        x, _type(tensors, "InputTensor"), _type(tensors, "OutputTensor"))),
    "ELEMENT_WISE_ADD1": _expect_binary(lambda a, b, t: oracle.add1_element(a, b, t, ("LEAKY_RELU", ADD1_ALPHA))),
    "ACTIVATION_PARAMETERIZED_RELU": lambda desc, tensors, inputs: _each(
        inputs, lambda x, s: oracle.parameterized_relu_element(x, s, _type(tensors, "InputTensor"))),
    "ACTIVATION_RELU_GRAD": lambda desc, tensors, inputs: _each(
        inputs, lambda x, g: oracle.relu_grad_element(x, g, _type(tensors, "InputTensor"))),
    "ELEMENT_WISE_CLIP_GRAD": _expect_clip_grad,
    "ELEMENT_WISE_CLIP_GRAD1": _expect_clip_grad,
    "REDUCE": _expect_reduce,
}


# Operators whose kernels run over a layout of their own (4-bit operands staged a byte an element, blocked
# quantization tensors): their every type, layout and quantization type against an oracle of their own.
TESTED_APART = {"QUANTIZE": "tests/test_blocked_quantization.py", "DEQUANTIZE": "tests/test_blocked_quantization.py",
                "TOP_K": "tests/test_top_k.py", "TOP_K1": "tests/test_top_k.py"}  # two outputs
# Each output element from its whole row: against the fraction and mpmath oracle of tests/softmax_oracle.py.
TESTED_APART.update({name: "tests/test_softmax.py" for name in (
    "ACTIVATION_SOFTMAX", "ACTIVATION_SOFTMAX1", "ACTIVATION_LOG_SOFTMAX", "ACTIVATION_LOG_SOFTMAX1",
    "ACTIVATION_HARDMAX", "ACTIVATION_HARDMAX1")})


def test_every_operator_has_a_case() -> None:
    assert set(DESCRIPTIONS) == set(EXPECTED) == set(BY_NAME) - set(TESTED_APART)
    assert set(BY_NAME) == {op.schema.name for op in OPERATORS}


# --- every type combination of every row -------------------------------------------------------------------

def _sizes(schema: OperatorSchema, row: SupportRow, name: str, last: int = 3) -> list[int]:
    """A 2 x ``last`` tensor, with leading ones to the row's fewest dimensions; ARGMIN's output reduces the
    last."""
    sizes = [2, last] if row.dimensions[0] <= 2 else [1] * (row.dimensions[0] - 2) + [2, last]
    if name == "OutputTensor" and (schema.name in REDUCTIONS or schema.name == "REDUCE"):
        sizes[-1] = 1
    return sizes


def combinations(schema: OperatorSchema, row: SupportRow, last: int = 3) -> Iterator[dict[str, dml.TensorDesc | None]]:
    """Every choice of a listed type (or absence, where the row allows it) for every tensor."""
    choices: list[list[T | None]] = []
    for field in schema.tensors:
        types: list[T | None] = [*sorted(row.types[field.name], key=lambda t: t.value)]
        choices.append([*types, None] if field.name in row.may_be_absent else types)
    for picked in itertools.product(*choices):
        yield {f.name: None if t is None else dml.TensorDesc(t, _sizes(schema, row, f.name, last))
               for f, t in zip(schema.tensors, picked)}


def accepted(schema: OperatorSchema, row: SupportRow, last: int = 3) -> list[tuple[dml.Operator, Tensors]]:
    """The combinations the operator's rules accept at the row's level; the others are refused for a type."""
    device = dml.Device("cpu", row.level)
    found: list[tuple[dml.Operator, Tensors]] = []
    for tensors in combinations(schema, row, last):
        try:
            found.append((device.create_operator(DESCRIPTIONS[schema.name](tensors)), tensors))
        except (dml.InvalidArgumentError, dml.UnsupportedFeatureLevelError) as error:
            # two tensors whose types must agree; REDUCE: a pair that no function's table takes at this level
            assert "DataType" in str(error), error
    return found


ROWS = [pytest.param(op.schema, row, id=f"{op.schema.name}-{row.level.label}") for op in OPERATORS
        for row in op.schema.rows if op.schema.name not in TESTED_APART]


def _covered(schema: OperatorSchema, row: SupportRow) -> bool:
    """Whether a later row of the operator takes every type of each of ``row``'s tensors in as many dimensions:
    its kernels are those of that row, compiled and run there."""
    return any(other.level > row.level and other.dimensions[0] <= row.dimensions[0]
               and other.dimensions[1] >= row.dimensions[1]
               and all(row.types[name] <= other.types.get(name, frozenset()) for name in row.types)
               for other in schema.rows)


# The compiling grid's rows: a row whose types a later row of its operator takes too is slow (docs/testing.md),
# its kernels being that row's; every row's kernel specs are still checked above.
# ELEMENT_WISE_QUANTIZED_LINEAR_ADD's one row holds 64 kernels (three data types and three optional zero points),
# CAST's newest 121 (every pair of its eleven types, FLOAT64 among them from 4_1; 5 minutes of cold compiles on 2
# cores): slow too, their kernels run by default in tests/test_quantized_linear_add.py and tests/test_cast.py (a pair
# from and to every type, FLOAT64's too).
# GREATER_THAN and GREATER_THAN_OR_EQUAL are LESS_THAN and LESS_THAN_OR_EQUAL with their operands swapped, and
# LESS_THAN's nodes (Less, Select) are among LESS_THAN_OR_EQUAL's (ops/comparison.py): their 20 kernels a row are
# slow, LESS_THAN_OR_EQUAL's and EQUALS' compiled by default.
# The correctly rounded functions share one node (Function) and one kernel shape: EXP's kernels are compiled by
# default, the others' run there through test_rounded's compiled functions and the NumPy lowering. Of the
# activations on them, SIGMOID's (whole) and SOFTPLUS's (a composition at Steepness 2.5) are compiled by default.
MANY_KERNELS = {"ELEMENT_WISE_QUANTIZED_LINEAR_ADD", "CAST", "ELEMENT_WISE_LOGICAL_GREATER_THAN",
                "ELEMENT_WISE_LOGICAL_GREATER_THAN_OR_EQUAL", "ELEMENT_WISE_LOGICAL_LESS_THAN"} | {
                    f"ELEMENT_WISE_{name}" for name in ("LOG", "SIN", "COS", "TAN", "ASIN", "ACOS", "ATAN", "SINH", "COSH", "TANH", "ASINH", "ACOSH", "ATANH", "ERF")} | {
                    f"ACTIVATION_{name}" for name in ("TANH", "SOFTSIGN", "GELU", "PARAMETRIC_SOFTPLUS", "ELU", "CELU",
                                                      "SCALED_ELU", "SCALED_TANH", "SWISH")}
# POW's kernels are compiled by default; ATAN_YX's and CONSTANT_POW's share its node (BinaryFunction).
MANY_KERNELS |= {"ELEMENT_WISE_ATAN_YX", "ELEMENT_WISE_CONSTANT_POW"}
COMPILED_ROWS = [pytest.param(*p.values, id=p.id, marks=[pytest.mark.slow] if _covered(*p.values)
                              or p.values[0].name in MANY_KERNELS else [])
                 for p in ROWS]


@pytest.mark.parametrize(("schema", "row"), ROWS)
def test_every_type_of_every_row_gets_its_own_kernel_spec(schema: OperatorSchema, row: SupportRow) -> None:
    found = accepted(schema, row)
    for field in schema.tensors:  # no listed type goes untested
        used = {tensors[field.name].data_type for _, tensors in found if tensors[field.name] is not None}  # type: ignore[union-attr]
        assert used == set(row.types[field.name]), field.name
    for op, tensors in found:
        spec = op.kernel_spec
        assert isinstance(spec, KernelSpec) and spec.operator == schema.name
        assert spec.inputs == tuple(None if tensors[f.name] is None else tensors[f.name].data_type  # type: ignore[union-attr]
                                    for f in schema.inputs)
        (output,) = schema.outputs
        assert spec.output == tensors[output.name].data_type  # type: ignore[union-attr]
        assert set(ex.loads(spec.element)) <= {k for k, t in enumerate(spec.inputs) if t is not None}
        if schema.name in REDUCTIONS:
            assert spec.reduction is not None and spec.reduction.kind is REDUCTIONS[schema.name]
            assert spec.reduction.index_type == spec.output
        elif schema.name == "REDUCE":  # an index reduction (ARGMAX) or a value one
            assert (spec.reduction is None) != (spec.accumulation is None)
        else:
            assert spec.reduction is None and isinstance(spec.element, ex.Store) and spec.element.type == spec.output


NO_NUMBA = pytest.mark.skipif(not cpu_kernels.numba_available(), reason="Numba is not installed (the opendml[fast] extra)")

# Each lowering path: (backend, CPU kernels as OPENDML_CPU_KERNELS chooses them, every output streamed).
PATHS = [
    pytest.param("cpu", "numpy", False, id="cpu-numpy"),  # numpy_lowering, block by block
    pytest.param("cpu", "numba", False, id="cpu-numba", marks=NO_NUMBA),  # codegen's scalar value()
    # The streaming kernels' LLVM vector code (vectors.py) between scalar heads and tails: the threshold
    # lowered to 0, and rows long enough to hold whole aligned vectors of every output type (64 bytes).
    pytest.param("cpu", "numba", True, id="cpu-numba-streaming", marks=NO_NUMBA),
    pytest.param("cuda", None, False, id="cuda", marks=pytest.mark.skipif(
        CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")),
]
STREAMED_ROW = 96  # 2 x 96 elements: at least two whole aligned 64-byte vectors, even of a 1-byte output


def _one_per_element_kind(combinations: list[tuple[dml.Operator, Tensors]],
                          output: str) -> list[tuple[dml.Operator, Tensors]]:
    """The streaming kernels of a default run: the first type combination of each kind of output element (its
    size, float or integer), whose vector code is the part that differs; every combination's under --slow (each
    is also compiled and run without streaming by the cpu-numba case)."""
    kept: dict[tuple[int, bool], tuple[dml.Operator, Tensors]] = {}
    for op, tensors in combinations:
        out = tensors[output]
        assert out is not None
        kept.setdefault((out.data_type.numpy.itemsize, out.data_type.is_float), (op, tensors))
    return list(kept.values())


def _covering(combinations: list[tuple[dml.Operator, Tensors]]) -> list[tuple[dml.Operator, Tensors]]:
    """The compiled kernels of a default run: the combinations that give some tensor a type no combination kept
    before gave it, so every type of every tensor is compiled and run at least once (ARGMAX's 40 input and
    output pairs: 10); every combination under --slow (and through the NumPy lowering in every run)."""
    seen: set[tuple[str, object]] = set()
    kept = []
    for op, tensors in combinations:
        pairs = {(name, None if t is None else t.data_type) for name, t in tensors.items()}
        if not pairs <= seen:
            kept.append((op, tensors))
            seen |= pairs
    return kept


@pytest.mark.parametrize(("backend", "kernels", "streamed"), PATHS)
@pytest.mark.parametrize(("schema", "row"), COMPILED_ROWS)
def test_every_type_of_every_row_compiles_and_runs_through_every_lowering(
        backend: str, kernels: str | None, streamed: bool, schema: OperatorSchema, row: SupportRow,
        monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    if kernels is not None:
        monkeypatch.setattr(cpu_kernels, "_chosen", cpu_kernels.load(kernels))  # as OPENDML_CPU_KERNELS chooses
    if streamed:
        if schema.name in REDUCTIONS or schema.name == "REDUCE":
            pytest.skip("a reduction streams no output: its engines take the element (tests/test_cpu_fast.py)")
        monkeypatch.setattr(cpu_kernels.load("numba"), "STREAM_MIN_BYTES", 0)
    device = dml.Device(backend, row.level)
    rng = np.random.default_rng(13)
    combinations = accepted(schema, row, STREAMED_ROW if streamed else 3)
    if streamed and not suite.slow_tests_wanted(request.config):
        combinations = _one_per_element_kind(combinations, schema.outputs[0].name)
    elif kernels == "numba" and not suite.slow_tests_wanted(request.config):
        combinations = _covering(combinations)
    for op, tensors in combinations:
        if backend == "cuda" and op.kernel_spec.accumulation is not None and not cuda_lowers(op.kernel_spec):
            continue  # a REDUCE value function CUDA does not lower yet (refused by name: test_cuda_reduce.py)
        inputs = [None if tensors[f.name] is None
                  else edge_values(tensors[f.name].data_type, math.prod(tensors[f.name].sizes), rng)  # type: ignore[union-attr]
                  .reshape(tensors[f.name].sizes)  # type: ignore[union-attr]
                  for f in schema.inputs]
        got = run(device, op.desc, inputs)
        expected = EXPECTED[schema.name](op.desc, tensors, inputs)
        (output,) = schema.outputs
        assert got.dtype == tensors[output.name].data_type.numpy and got.size == len(expected)  # type: ignore[union-attr]
        mismatched = [(i, g, e) for i, (g, e) in enumerate(zip(got.reshape(-1), expected))
                      if not oracle.same_value(_python(g), e)]
        assert not mismatched, (tensors, inputs, mismatched[:5])


# --- the NumPy lowering of each operator's expression against the oracle -----------------------------------

NEWEST = dml.Device("cpu")


def _spec(desc: object) -> KernelSpec:
    return NEWEST.create_operator(desc).kernel_spec


def _values(type_name: str, extra: Sequence[float | int | None]) -> np.ndarray:
    """The type's edge values, plus ``extra`` values (bounds and their neighbours) that the type holds."""
    t = T[type_name]
    items: list[float | int] = list(edges(t))
    for v in extra:
        if v is None or (not t.is_float and not math.isfinite(v)):
            continue
        if t.is_float:
            items += [v, -v, float(np.nextafter(np.float32(v), np.float32(math.inf)))]
        else:
            low, high = t.integer_range
            items += [w for w in (int(v) - 1, int(v), int(v) + 1) if low <= w <= high]
    with np.errstate(over="ignore"):
        return np.array(items, dtype=t.numpy)


def _scale_bias(pair: tuple[float, float] | None) -> dml.ScaleBias | None:
    return None if pair is None else dml.ScaleBias(*pair)


def _python(value: np.generic) -> int | float:
    return float(value) if isinstance(value, np.floating) else int(value)


def _check(spec: KernelSpec, operands: Sequence[np.ndarray | None],
           expected: Callable[[Sequence[int | float | None]], int | float]) -> None:
    got = numpy_lowering.evaluate(spec.element, operands, spec.scalars)
    assert got.dtype == spec.output.numpy
    for i in range(got.size):
        row = [None if a is None else _python(a[i]) for a in operands]
        want = expected(row)
        assert oracle.same_value(_python(got[i]), want), (row, got[i], want)


FLOAT_CLIPS: list[tuple[float, float, tuple[float, float] | None]] = [
    (-1.5, 2.5, None), (math.nan, 1.0, None), (-1.0, math.nan, None), (math.nan, math.nan, None),
    (-0.0, 0.0, None), (0.0, -0.0, None), (2.0, 1.0, None), (-math.inf, math.inf, None),
    (2.0**-149, 2.0**-126, None), (1 / 3, 2 / 3, None), (65504.0, 65520.0, None),
    (-1.5, 2.5, (2.0, 0.5)), (math.nan, math.nan, (1000.0, -3.0)), (-10.0, math.nan, (0.1, 0.2)),
]
INTEGER_CLIPS: list[tuple[float, float]] = [
    (-1.5, 2.5), (-math.inf, math.inf), (-1e10, 1e10), (2.0, 1.0), (0.0, 100.7), (-5.0, 3.0), (127.0, 128.0),
    (2.0**31, 2.0**32),
]


def _clip_cases() -> Iterator[object]:
    for name in oracle.CLIP_TYPES:
        cases = FLOAT_CLIPS if name in oracle.FLOATS else [(lo, hi, None) for lo, hi in INTEGER_CLIPS]
        for low, high, scale_bias in cases:
            yield pytest.param(name, low, high, scale_bias, id=f"{name}-{low}-{high}-{scale_bias}")


@pytest.mark.parametrize(("type_name", "low", "high", "scale_bias"), list(_clip_cases()))
def test_clip_expression_matches_the_oracle(type_name: str, low: float, high: float,
                                            scale_bias: tuple[float, float] | None) -> None:
    x = dml.TensorDesc(type_name, [1])
    spec = _spec(dml.ElementWiseClipDesc(x, x, low, high, scale_bias=_scale_bias(scale_bias)))
    lo, hi = oracle.float_field_bound(low, type_name), oracle.float_field_bound(high, type_name)
    # An absent bound (a NaN on a float tensor) is no node at all, and takes no scalar.
    less = [n for n in ex.nodes(spec.element) if isinstance(n, ex.Less)]
    assert len(less) == (lo is not None) + (hi is not None)
    assert len(spec.scalars) == len(less) + (2 if scale_bias else 0)
    values = _values(type_name, [lo, hi, low, high])
    _check(spec, [values], lambda row: oracle.clamp_element(row[0], type_name, scale_bias, lo, hi))  # type: ignore[arg-type]


def _clip1_cases() -> Iterator[object]:
    for name in oracle.CLIP_TYPES:
        t = oracle.TYPES[name]
        if t.is_float:
            bounds: list[tuple[float | int, float | int, tuple[float, float] | None]] = [
                (math.nan, 1.5, None), (-0.0, 0.0, None), (1.5, -1.5, None), (-2.0**-24, 2.0**-24, None),
                (-1.0, 65504.0, (2.0, -1.0)), (math.nan, math.nan, (300.0, 0.0))]
        else:
            low, high = t.integer_range  # type: ignore[misc]
            bounds = [(low, high, None), (low + 1, high - 1, None), (0, 0, None), (max(low, -7), 5, None),
                      (5, max(low, -5), None), (high // 2, high // 2 + 1, None)]
        for lo, hi, scale_bias in bounds:
            yield pytest.param(name, lo, hi, scale_bias, id=f"{name}-{lo}-{hi}-{scale_bias}")


@pytest.mark.parametrize(("type_name", "low", "high", "scale_bias"), list(_clip1_cases()))
def test_clip1_expression_matches_the_oracle(type_name: str, low: float | int, high: float | int,
                                             scale_bias: tuple[float, float] | None) -> None:
    x = dml.TensorDesc(type_name, [1])
    spec = _spec(dml.ElementWiseClip1Desc(x, x, type_name, low, high, scale_bias=_scale_bias(scale_bias)))
    lo, hi = oracle.typed_bound(low, type_name), oracle.typed_bound(high, type_name)
    values = _values(type_name, [lo, hi])
    _check(spec, [values], lambda row: oracle.clamp_element(row[0], type_name, scale_bias, lo, hi))  # type: ignore[arg-type]


THRESHOLD_MINS = [-1.5, math.nan, math.inf, -math.inf, 0.0, -0.0, 2.0**-149, 3.7, 1e10, -1e10, 65520.0]


def _threshold_cases() -> Iterator[object]:
    for name in oracle.THRESHOLD_TYPES:
        is_float = name in oracle.FLOATS
        for low in THRESHOLD_MINS if is_float else [v for v in THRESHOLD_MINS if not math.isnan(v)]:
            for scale_bias in [None, (-3.0, 0.5)] if is_float else [None]:  # integers refuse both (SPEC 8.2, 8.3)
                yield pytest.param(name, low, scale_bias, id=f"{name}-{low}-{scale_bias}")


@pytest.mark.parametrize(("type_name", "low", "scale_bias"), list(_threshold_cases()))
def test_threshold_expression_matches_the_oracle(type_name: str, low: float,
                                                 scale_bias: tuple[float, float] | None) -> None:
    x = dml.TensorDesc(type_name, [1])
    spec = _spec(dml.ElementWiseThresholdDesc(x, x, low, scale_bias=_scale_bias(scale_bias)))
    lo = oracle.float_field_bound(low, type_name)
    assert sum(isinstance(n, ex.Less) for n in ex.nodes(spec.element)) == (lo is not None)  # never a Max
    values = _values(type_name, [lo, low])
    _check(spec, [values], lambda row: oracle.clamp_element(row[0], type_name, scale_bias, lo, None))  # type: ignore[arg-type]


@pytest.mark.parametrize("zero_point", [True, False], ids=["zero-point", "no-zero-point"])
@pytest.mark.parametrize("scale_type", oracle.DEQUANTIZE_SCALE_TYPES)
@pytest.mark.parametrize("input_type", oracle.DEQUANTIZE_INPUT_TYPES)
def test_dequantize_linear_expression_matches_the_oracle(input_type: str, scale_type: str, zero_point: bool) -> None:
    x, scale = dml.TensorDesc(input_type, [1]), dml.TensorDesc(scale_type, [1])
    spec = _spec(dml.ElementWiseDequantizeLinearDesc(x, scale, x if zero_point else None, scale))
    integers, scales = edges(T[input_type]), edges(T[scale_type])
    rows = list(itertools.product(integers, scales, integers if zero_point else [None]))
    operands = [np.array([r[k] for r in rows], dtype=t.numpy) for k, t in ((0, T[input_type]), (1, T[scale_type]))]
    zero = np.array([r[2] for r in rows], dtype=T[input_type].numpy) if zero_point else None
    _check(spec, [*operands, zero],
           lambda row: oracle.dequantize_element(row[0], row[1], row[2], scale_type))  # type: ignore[arg-type]


QUANTIZE_SCALES = [1.0, 0.5, -2.0, 0.1, 3.0, 1e-30, 255.0]  # besides the scale type's edge values
QUANTIZE_ZERO_POINTS = {"INT8": [None, 0, -128, 127, 5, -3], "UINT8": [None, 0, 255, 128, 1]}


@pytest.mark.parametrize("output_type", oracle.QUANTIZE_OUTPUT_TYPES)
@pytest.mark.parametrize("input_type", oracle.QUANTIZE_INPUT_TYPES)
def test_quantize_linear_expression_matches_the_oracle(input_type: str, output_type: str) -> None:
    scale_type = oracle.quantize_scale_type(input_type)
    x, scale, out = (dml.TensorDesc(t, [1]) for t in (input_type, scale_type, output_type))
    inputs = _values(input_type, [0.5, 2.5, 127.5, 128.5, 255.5, 300.0])
    scales = _values(scale_type, QUANTIZE_SCALES)
    for zero_point in QUANTIZE_ZERO_POINTS[output_type]:
        spec = _spec(dml.ElementWiseQuantizeLinearDesc(x, scale, None if zero_point is None else out, out))
        rows = list(itertools.product(inputs, scales))
        operands = [np.array([r[0] for r in rows], inputs.dtype), np.array([r[1] for r in rows], scales.dtype),
                    None if zero_point is None else np.full(len(rows), zero_point, T[output_type].numpy)]
        _check(spec, operands,
               lambda row: oracle.quantize_element(row[0], row[1], row[2], output_type))  # type: ignore[arg-type]


@pytest.mark.parametrize("input_type", oracle.ARGMIN_INPUT_TYPES)
def test_argmin_compares_the_elements_themselves(input_type: str) -> None:
    x, y = dml.TensorDesc(input_type, [2, 3]), dml.TensorDesc("UINT32", [2, 1])
    spec = _spec(dml.ArgMinDesc(x, y, [1], "DECREASING"))
    assert spec.reduction is not None and spec.reduction.axes == (1,)
    assert spec.reduction.direction is dml.AxisDirection.DECREASING and spec.reduction.index_type is T.UINT32
    values = _values(input_type, [])
    got = numpy_lowering.evaluate(spec.element, [values], spec.scalars)
    assert all(oracle.same_value(_python(g), _python(v)) for g, v in zip(got, values))


def test_argmax_and_nan_policy_reach_the_reduction_record() -> None:
    x, y = dml.TensorDesc("FLOAT16", [2, 3]), dml.TensorDesc("INT32", [1, 3])
    spec = _spec(dml.ArgMaxDesc(x, y, [0], nan_policy="PROPAGATE"))
    assert spec.operator == "ARGMAX" and spec.reduction is not None
    assert spec.reduction.kind is ReductionKind.ARGMAX and spec.reduction.nan_rule is dml.NanPolicy.PROPAGATE
    assert spec.reduction.axes == (0,) and spec.reduction.direction is dml.AxisDirection.INCREASING
    assert spec.element == ex.Load(0, T.FLOAT16)
    ignored = _spec(dml.ArgMinDesc(x, y, [0]))
    assert ignored.reduction is not None and ignored.reduction.nan_rule is dml.NanPolicy.IGNORE
    assert ignored.key != spec.key


# --- extra outputs: a fused kernel's intermediates that are graph outputs ----------------------------------


def _scaled(extra: tuple[ex.Store, ...]) -> KernelSpec:
    x = ex.Load(0, T.FLOAT32)
    doubled = ex.Multiply(x, ex.Param(0, T.FLOAT32))
    return KernelSpec("twice", (T.FLOAT32,), T.FLOAT16, ex.Store(doubled, T.FLOAT16), (np.float32(2),), None, extra)


def test_extra_outputs_are_part_of_what_a_kernel_compiles() -> None:
    plain = _scaled(())
    with_copy = _scaled((ex.Store(ex.Load(0, T.FLOAT32), T.FLOAT32),))
    assert plain.key != with_copy.key
    assert with_copy.extra[0].type is T.FLOAT32


@pytest.mark.parametrize("extra, message", [
    ((ex.Load(0, T.FLOAT32),), "an extra output stores its value"),
    ((ex.Store(ex.Load(1, T.FLOAT32), T.FLOAT32),), "Load(1, FLOAT32) reads no such operand"),
    ((ex.Store(ex.Param(1, T.FLOAT32), T.FLOAT32),), "parameters [0, 1] for 1 scalars"),
])
def test_an_extra_output_must_store_a_value_of_the_kernels_operands(extra: tuple, message: str) -> None:
    with pytest.raises(ex.ExpressionError) as raised:
        _scaled(extra)
    assert message in str(raised.value)


@pytest.mark.parametrize("backend", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}"))])
def test_a_backend_without_fused_outputs_refuses_extra_outputs(backend: str) -> None:
    device = dml.Device(backend)
    if device.backend.fused_outputs():
        pytest.skip(f"backend {backend!r} lowers extra outputs (tests/test_graph_fusion.py runs them)")
    spec = _scaled((ex.Store(ex.Load(0, T.FLOAT32), T.FLOAT32),))
    desc = dml.TensorDesc("FLOAT32", [4])
    with pytest.raises(dml.KernelUnsupportedError, match="twice: extra must be empty"):
        device.backend.compile_spec(device, spec, [desc], dml.TensorDesc("FLOAT16", [4]), [desc])


@pytest.mark.parametrize("type_name", oracle.FLOATS)
@pytest.mark.parametrize("mode", ["HALVES_TO_NEAREST_EVEN", "TOWARD_ZERO", "TOWARD_INFINITY"])
def test_round_expression_in_each_mode_matches_the_oracle(mode: str, type_name: str) -> None:
    x = dml.TensorDesc(type_name, [1])
    spec = _spec(dml.ElementWiseRoundDesc(x, x, mode))
    ties = [v + 0.5 for v in range(-4, 4)] + [0.49999997, -0.49999997, 2.0**23 - 0.5, 1.5 * 2.0**23]
    _check(spec, [_values(type_name, ties)], lambda row: oracle.round_element(row[0], type_name, mode))  # type: ignore[arg-type]


@pytest.mark.parametrize("type_name", oracle.FLOATS)
@pytest.mark.parametrize("mode", ["EITHER", "POSITIVE", "NEGATIVE"])
def test_is_infinity_expression_in_each_mode_matches_the_oracle(mode: str, type_name: str) -> None:
    x = dml.TensorDesc(type_name, [1])
    spec = _spec(dml.ElementWiseIsInfinityDesc(x, dml.TensorDesc("UINT8", [1]), mode))
    _check(spec, [_values(type_name, [65504.0, 3.0e38])], lambda row: oracle.is_infinity_element(row[0], mode))  # type: ignore[arg-type]


@pytest.mark.parametrize("type_name", oracle.INTEGERS_32)
def test_wrapped_sums_and_differences_wrap_as_twos_complement(type_name: str) -> None:
    """The unary family's wrap-around (SPEC 11.3) of an exact sum or difference, over every pair of edge values."""
    t = T[type_name]
    low, high = t.integer_range
    wide = ex.difference_type(t)
    pairs = list(itertools.product(edges(t), repeat=2))
    operands = [np.array([pair[k] for pair in pairs], t.numpy) for k in (0, 1)]
    a, b = (ex.Widen(ex.Load(k, t), wide) for k in (0, 1))
    for node, exact in [(ex.Add, lambda x, y: x + y), (ex.Subtract, lambda x, y: x - y)]:
        scalars = Scalars()
        element = ex.Store(wrapped(node(a, b), t, Constants(scalars, t, t)), t)
        got = numpy_lowering.evaluate(element, operands, scalars.values)
        expected = [(exact(x, y) - low) % (high - low + 1) + low for x, y in pairs]
        assert got.dtype == t.numpy and got.tolist() == expected, node.__name__


SHRINK_FIELDS = [(0.0, 0.5), (0.25, 0.5), (-1.5, 2.5), (100.5, -50.5), (-100.5, 50.5), (3.0e38, 0.0), (0.0, -0.0),
                 (1.0, math.inf), (1.0, -math.inf), (math.nan, 1.0), (1.0, math.nan), (2.0**-149, 2.0**-149),
                 (1e10, 65504.0), (-1e10, -1e10)]


@pytest.mark.parametrize(("bias", "threshold"), SHRINK_FIELDS)
@pytest.mark.parametrize("type_name", oracle.FLOATS + oracle.INTEGERS_32)
def test_shrink_expression_matches_the_oracle(type_name: str, bias: float, threshold: float) -> None:
    """Above Threshold first, then below -Threshold; floats: NaN and ties give +0.0; integers: the fields cast,
    the sums wrapped both ways, a NaN field refused."""
    x = dml.TensorDesc(type_name, [1])
    if not T[type_name].is_float and (math.isnan(bias) or math.isnan(threshold)):
        with pytest.raises(dml.InvalidArgumentError, match=r"^ACTIVATION_SHRINK: (Bias|Threshold) must not be NaN"):
            NEWEST.create_operator(dml.ActivationShrinkDesc(x, x, bias, threshold))
        return
    spec = _spec(dml.ActivationShrinkDesc(x, x, bias, threshold))
    values = _values(type_name, [threshold, bias, -bias, 0.5, 49.0, 60.0])
    _check(spec, [values], lambda row: oracle.shrink_element(row[0], type_name, bias, threshold))  # type: ignore[arg-type]
