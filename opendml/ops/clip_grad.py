"""ELEMENT_WISE_CLIP_GRAD and ELEMENT_WISE_CLIP_GRAD1: ``f(x, g) = 0 if x <= Min or x >= Max, else g``.

The page's rule exactly: the gradient is stopped at the bounds themselves (x == Min, x == Max) and
passed strictly between them. A NaN input compares false with both bounds, so its gradient is passed (the page's
conditions read literally; PyTorch's hardtanh backward does the same); a NaN bound on a float tensor stops nothing.
The bounds are typed as the tensor's compute values as CLIP's and CLIP1's are (``typed_bound``): CLIP_GRAD's FLOAT
bounds rounded to float32 then to the tensor's type (integers: truncated toward zero, then saturated; NaN
refused); CLIP_GRAD1's exact values of MinMaxDataType, which must equal the tensors' type."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS, INTEGERS_32, INTEGERS_64
from ..dtypes import DataType as T
from ..feature_levels import FeatureLevel as L
from ..schema import OperatorSchema
from ..tensor import TensorDesc
from .binary import binary, binary_row
from .clip import _number, exact_bounds, float_bounds
from .definition import Adapter, Describe, Field
from .elementwise import typed_bound
from .relu_grad import GRAD_NAMES
from .unary import Constants, UnaryParams, float_parameter

_CLIP_GRAD, _CLIP_GRAD1 = "ELEMENT_WISE_CLIP_GRAD", "ELEMENT_WISE_CLIP_GRAD1"


@dataclass(frozen=True)
class ElementWiseClipGradDesc:
    """DML_ELEMENT_WISE_CLIP_GRAD_OPERATOR_DESC; Min and Max are FLOAT (float32) fields."""

    input_tensor: TensorDesc
    input_gradient_tensor: TensorDesc
    output_gradient_tensor: TensorDesc
    min: float
    max: float


@dataclass(frozen=True)
class ElementWiseClipGrad1Desc:
    """DML_ELEMENT_WISE_CLIP_GRAD1_OPERATOR_DESC; Min and Max are values of MinMaxDataType."""

    input_tensor: TensorDesc
    input_gradient_tensor: TensorDesc
    output_gradient_tensor: TensorDesc
    min_max_data_type: T | str
    min: int | float
    max: int | float


def clip_grad(x: ex.Expr, gradient: ex.Expr, p: UnaryParams, c: Constants) -> ex.Expr:
    """The gradient where ``x`` lies strictly between the bounds present, else 0. ``x <= Min`` is ``not (Min <
    x)`` on integers; on floats also ``x`` a number (a NaN compares false with everything); ``x >= Max`` alike."""
    value = gradient
    for name in ("Min", "Max"):
        bound = p.values.get(name)
        if bound is None:  # a NaN bound on a float tensor: no comparison with it is true
            continue
        b = c(bound)
        inside = ex.Less(b, x) if name == "Min" else ex.Less(x, b)
        at_or_beyond: ex.Expr = ex.Select(ex.IsNumber(x), c(0), value) if p.data_type.is_float else c(0)
        value = ex.Select(inside, value, at_or_beyond)
    return value


def clip_grad_reference(x: np.ndarray, gradient: np.ndarray, p: UnaryParams) -> np.ndarray:
    low, high = p.values.get("Min"), p.values.get("Max")
    zero = x.dtype.type(0)
    gradient = np.broadcast_to(gradient, np.broadcast_shapes(x.shape, gradient.shape))
    if low is not None:
        gradient = np.where(x <= low, zero, gradient)
    if high is not None:
        gradient = np.where(x >= high, zero, gradient)
    return gradient


def _clip_grad_over_arrays(level: L, dtype: Any, values: tuple[Any, ...]) -> tuple[OperatorSchema, Describe]:
    """Integer tensors run ELEMENT_WISE_CLIP_GRAD1, with exact typed bounds, where the device's feature level has
    it (as ``clip`` runs CLIP1). Both bounds are required: on an integer tensor a bound at the type's limit still
    stops the gradient there, so no value stands for an absent one."""
    low, high = values
    data_type = T.parse(dtype, owner=_CLIP_GRAD, field="InputTensor.DataType")
    if data_type.is_integer and level >= CLIP_GRAD1.schema.introduced:
        lo = typed_bound(_number(low, _CLIP_GRAD1, "Min"), data_type, _CLIP_GRAD1, "Min")
        hi = typed_bound(_number(high, _CLIP_GRAD1, "Max"), data_type, _CLIP_GRAD1, "Max")
        assert lo is not None and hi is not None  # an integer bound is never None: typed_bound refuses NaN
        return CLIP_GRAD1.schema, lambda x, g, o: ElementWiseClipGrad1Desc(x, g, o, data_type, int(lo), int(hi))
    return CLIP_GRAD.schema, lambda x, g, o: ElementWiseClipGradDesc(x, g, o, low, high)


_EVERY = FLOATS | INTEGERS_32 | INTEGERS_64

CLIP_GRAD = binary(
    _CLIP_GRAD, ElementWiseClipGradDesc, L.FL_3_1,
    (binary_row(L.FL_5_0, (1, 8), _EVERY, GRAD_NAMES), binary_row(L.FL_3_1, (1, 8), FLOATS | INTEGERS_32, GRAD_NAMES)),
    element=clip_grad, reference=clip_grad_reference, python="clip_grad", names=GRAD_NAMES,
    fields=(float_parameter("Min"), float_parameter("Max")), read=float_bounds(_CLIP_GRAD),
    adapter=Adapter(_clip_grad_over_arrays))

# No front end by its own name: ``clip_grad`` runs it on integers.
CLIP_GRAD1 = binary(
    _CLIP_GRAD1, ElementWiseClipGrad1Desc, L.FL_5_0, (binary_row(L.FL_5_0, (1, 8), _EVERY, GRAD_NAMES),),
    element=clip_grad, reference=clip_grad_reference, python=None, names=GRAD_NAMES,
    fields=(Field("MinMaxDataType", "data_type", "min_max_data_type"), Field("Min", "scalar", "min"),
            Field("Max", "scalar", "max")), read=exact_bounds(_CLIP_GRAD1, "OutputGradientTensor"))
