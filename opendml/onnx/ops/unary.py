"""ONNX's unary operators that are one declared opendml operator each (``opendml.ops.DECLARED``), as DirectML's
execution provider maps them: Identity, Abs, Neg, Ceil, Floor, Round (ties to even), Sign, Reciprocal, Sqrt, IsNaN,
IsInf, Not, BitwiseNot, LeakyRelu, ThresholdedRelu, Shrink, HardSigmoid and HardSwish; the correctly rounded
functions (Exp ... Erf) and activations: Sigmoid, Softplus, Softsign, Elu, Celu, Selu and Gelu (its erf form: a
Gelu of ``approximate="tanh"`` is refused by name, DirectML's ACTIVATION_GELU has no tanh form).

One generic mapping per ONNX operator: the element types are those of the DirectML operator's newest support
row (a device at a lower level refuses the rest when the step is created), the ONNX attributes become the
description's fields (with ONNX's defaults), and the tensor is described as it lies, with the leading 1s a 4-D
level asks for. ONNX's BOOL tensors (IsNaN's, IsInf's and Not's) are held as UINT8 0 and 1 (``types.data_type``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from ...device import Device
from ...enums import IsInfinityMode
from ...ops import BY_NAME
from ...ops.definition import OperatorDefinition
from .. import types
from ..graph import NodeView, Value
from .base import (
    Lowered,
    Mapping,
    describe,
    expect_type,
    leading_ones,
    make_step,
    newest_types,
    output_value,
    problem,
)


def _allowed(op: OperatorDefinition) -> frozenset[int]:
    return newest_types(op.schema, "InputTensor")


def unary_mapping(op_type: str, operator: str, attributes: dict[str, tuple[str, Any]] | None = None,
                  fixed: dict[str, Any] | None = None, *, inputs: Collection[int] | None = None,
                  output: int | None = None, derived: Callable[[NodeView], dict[str, Any]] | None = None,
                  refuse: Callable[[NodeView, Value | None], list[str]] | None = None) -> Mapping:
    """``op_type`` as DirectML's ``operator``; ``attributes``: ONNX attribute -> (functional keyword, ONNX's
    default); ``fixed``: keyword values ONNX does not let a model choose (HardSwish's Alpha and Beta);
    ``inputs``: X's ONNX types where they are not the operator's newest row's (Not's BOOL); ``output``: Y's ONNX
    type where it is not X's (IsNaN's BOOL); ``derived``: keyword values computed from the node's attributes
    (IsInf's InfinityMode); ``refuse``: the problems of a node whose attributes DirectML cannot express."""
    op = BY_NAME[operator]
    assert op.api is not None
    allowed = frozenset(inputs) if inputs is not None else _allowed(op)

    def check(node: NodeView, values: Sequence[Value | None]) -> list[str]:
        return expect_type(node, "X", values[0], allowed) + (refuse(node, values[0]) if refuse else [])

    def lower(node: NodeView, values: Sequence[Value | None], device: Device) -> Lowered:
        x = values[0]
        assert x is not None and x.data_type is not None and op.api is not None
        shape = x.concrete_shape
        pad = leading_ones(op.schema, device, len(shape))
        tensor = describe(x.data_type, shape, pad=pad)
        out_tensor = tensor if op.api.output is None else describe(op.api.output, shape, pad=pad)
        given = {keyword: node.attribute(name, default) for name, (keyword, default) in (attributes or {}).items()}
        chosen = {**given, **(fixed or {}), **(derived(node) if derived else {})}
        fields = [None if f.kind == "scale_bias" else chosen.get(f.python, f.default) for f in op.api.keywords]
        out = output_value(node, x.onnx_type if output is None else output, shape)
        return Lowered((out,), make_step(node, device, op.describe((tensor,), out_tensor, fields), [x.name], out))

    return Mapping(op_type, None, check, lower)


def _infinity_mode(node: NodeView) -> dict[str, Any]:
    negative, positive = bool(node.attribute("detect_negative", 1)), bool(node.attribute("detect_positive", 1))
    mode = IsInfinityMode.EITHER if negative and positive else \
        IsInfinityMode.NEGATIVE if negative else IsInfinityMode.POSITIVE
    return {"infinity_mode": mode}


def _detects_something(node: NodeView, x: Value | None) -> list[str]:
    if node.attribute("detect_negative", 1) or node.attribute("detect_positive", 1):
        return []
    requirement = "must not both be 0 (ELEMENT_WISE_IS_INFINITY's InfinityMode detects -inf, +inf or either)"
    return [problem(node, "detect_negative and detect_positive", requirement, "0, 0")]


def _shrink_fields(node: NodeView, x: Value | None) -> list[str]:
    """ONNX tests x < -lambd first, DirectML x > Threshold: the same answers unless lambd < 0. On integers DirectML
    casts Bias to X's type first, ONNX subtracts the float: the same answers for a whole Bias."""
    found = []
    lambd, bias = float(node.attribute("lambd", 0.5)), float(node.attribute("bias", 0.0))
    if lambd < 0:
        found.append(problem(node, "lambd", "must not be negative (ONNX's Shrink tests x < -lambd first, "
                                             "DirectML's ACTIVATION_SHRINK x > Threshold)", lambd))
    if x is not None and x.data_type is not None and x.data_type.is_integer and not bias.is_integer():
        requirement = (f"must be a whole number on {types.type_name(x.onnx_type)} X (ACTIVATION_SHRINK casts Bias "
                       "to X's type first, ONNX subtracts the float)")
        found.append(problem(node, "bias", requirement, bias))
    return found


IDENTITY = unary_mapping("Identity", "ELEMENT_WISE_IDENTITY")
ABS = unary_mapping("Abs", "ELEMENT_WISE_ABS")
NEG = unary_mapping("Neg", "ELEMENT_WISE_NEGATE")
CEIL = unary_mapping("Ceil", "ELEMENT_WISE_CEIL")
FLOOR = unary_mapping("Floor", "ELEMENT_WISE_FLOOR")
ROUND = unary_mapping("Round", "ELEMENT_WISE_ROUND", fixed={"rounding_mode": "HALVES_TO_NEAREST_EVEN"})
SIGN = unary_mapping("Sign", "ELEMENT_WISE_SIGN")
RECIPROCAL = unary_mapping("Reciprocal", "ELEMENT_WISE_RECIP")
SQRT = unary_mapping("Sqrt", "ELEMENT_WISE_SQRT")
IS_NAN = unary_mapping("IsNaN", "ELEMENT_WISE_IS_NAN", output=types.BOOL)
IS_INF = unary_mapping("IsInf", "ELEMENT_WISE_IS_INFINITY", output=types.BOOL, derived=_infinity_mode,
                       refuse=_detects_something)
NOT = unary_mapping("Not", "ELEMENT_WISE_LOGICAL_NOT", inputs={types.BOOL}, output=types.BOOL)
BITWISE_NOT = unary_mapping("BitwiseNot", "ELEMENT_WISE_BIT_NOT")
LEAKY_RELU = unary_mapping("LeakyRelu", "ACTIVATION_LEAKY_RELU", {"alpha": ("alpha", 0.01)})
THRESHOLDED_RELU = unary_mapping("ThresholdedRelu", "ACTIVATION_THRESHOLDED_RELU", {"alpha": ("alpha", 1.0)})
SHRINK = unary_mapping("Shrink", "ACTIVATION_SHRINK", {"bias": ("bias", 0.0), "lambd": ("threshold", 0.5)},
                       refuse=_shrink_fields)
HARD_SIGMOID = unary_mapping("HardSigmoid", "ACTIVATION_HARD_SIGMOID", {"alpha": ("alpha", 0.2), "beta": ("beta", 0.5)})
HARD_SWISH = unary_mapping("HardSwish", "ACTIVATION_HARD_SWISH", fixed={"alpha": 1 / 6, "beta": 0.5})

# The correctly rounded functions (opendml.rounded): ONNX's name, DirectML's ELEMENT_WISE_ operator.
ROUNDED = tuple(unary_mapping(onnx_name, f"ELEMENT_WISE_{name}") for onnx_name, name in (
    ("Exp", "EXP"), ("Log", "LOG"), ("Sin", "SIN"), ("Cos", "COS"), ("Tan", "TAN"), ("Asin", "ASIN"),
    ("Acos", "ACOS"), ("Atan", "ATAN"), ("Sinh", "SINH"), ("Cosh", "COSH"), ("Tanh", "TANH"), ("Asinh", "ASINH"),
    ("Acosh", "ACOSH"), ("Atanh", "ATANH"), ("Erf", "ERF")))



def _erf_form(node: NodeView, x: Value | None) -> list[str]:
    approximate = node.attribute("approximate", "none")
    approximate = approximate.decode() if isinstance(approximate, bytes) else approximate
    if approximate == "none":
        return []
    return [problem(node, "approximate", 'must be "none" (DirectML\'s ACTIVATION_GELU is the erf form only)',
                    approximate)]


# The activations on the correctly rounded functions (docs/semantics.md 9f), with ONNX's defaults.
SIGMOID = unary_mapping("Sigmoid", "ACTIVATION_SIGMOID")
SOFTPLUS = unary_mapping("Softplus", "ACTIVATION_SOFTPLUS", fixed={"steepness": 1.0})
SOFTSIGN = unary_mapping("Softsign", "ACTIVATION_SOFTSIGN")
ELU = unary_mapping("Elu", "ACTIVATION_ELU", {"alpha": ("alpha", 1.0)})
CELU = unary_mapping("Celu", "ACTIVATION_CELU", {"alpha": ("alpha", 1.0)})
SELU = unary_mapping("Selu", "ACTIVATION_SCALED_ELU", {"alpha": ("alpha", 1.67326319217681884765625),
                                                       "gamma": ("gamma", 1.05070102214813232421875)})
GELU = unary_mapping("Gelu", "ACTIVATION_GELU", refuse=_erf_form)
ACTIVATIONS = (SIGMOID, SOFTPLUS, SOFTSIGN, ELU, CELU, SELU, GELU)

UNARY_MAPPINGS = (IDENTITY, ABS, NEG, CEIL, FLOOR, ROUND, SIGN, RECIPROCAL, SQRT, IS_NAN, IS_INF, NOT, BITWISE_NOT,
                  LEAKY_RELU, THRESHOLDED_RELU, SHRINK, HARD_SIGMOID, HARD_SWISH, *ROUNDED, *ACTIVATIONS)
