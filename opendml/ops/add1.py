"""ELEMENT_WISE_ADD1: ``f(a, b) = FusedActivation(a + b)``, ELEMENT_WISE_ADD on floats with an optional fused
activation (an activation's description whose tensors are None: DirectML's null tensors of a fused operator).

DirectML's fused-activations page lists the activations an operator may carry (``FUSED_ACTIVATIONS``); those
opendml implements are taken, any other description refused naming it. The result is bit for bit ADD and then the
activation run as operators of their own: the sum rounded to the tensors' type, then the activation's own math
(its expression composed onto the sum's, ``kernels.compose``: one kernel)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS
from ..errors import invalid, invalid_type
from ..feature_levels import FeatureLevel as L
from ..kernels.compose import Composer, read_back
from ..kernels.spec import KernelSpec
from ..tensor import TensorDesc
from .add import ADD
from .binary import INPUTS, BinaryDesc, binary, binary_row
from .definition import Api, Field, OperatorDefinition
from .unary import UnaryParams

NAME = "ELEMENT_WISE_ADD1"
# The operators DirectML's fused-activations page allows as a FusedActivation, by DirectML's name.
FUSED_ACTIVATIONS = tuple(f"ACTIVATION_{a}" for a in (
    "LINEAR", "SIGMOID", "HARD_SIGMOID", "TANH", "SCALED_TANH", "RELU", "LEAKY_RELU", "THRESHOLDED_RELU", "ELU",
    "CELU", "SCALED_ELU", "SOFTPLUS", "PARAMETRIC_SOFTPLUS", "SOFTSIGN", "IDENTITY", "SHRINK", "GELU"))
FUSED_ACTIVATION = Field("FusedActivation", "activation", "fused_activation", default=None)


@dataclass(frozen=True)
class ElementWiseAdd1Desc(BinaryDesc):
    """DML_ELEMENT_WISE_ADD1_OPERATOR_DESC."""

    fused_activation: Any = None


@dataclass(frozen=True)
class Add1Params(UnaryParams):
    """ADD's parameters, and the fused activation's operator and parameters (None: no activation)."""

    activation: tuple[OperatorDefinition, Any] | None = None


def fused_activation(owner: str, desc: Any, tensor: TensorDesc) -> tuple[OperatorDefinition, Any] | None:
    """The fused activation ``desc`` (None: none) as its operator and its parameters over ``tensor``, the
    operator's output; refused unless it is an activation DirectML allows fused that opendml implements, with
    null tensors and fields its own operator takes."""
    if desc is None:
        return None
    from . import BY_DESC_TYPE  # the registry imports this module

    op = BY_DESC_TYPE.get(type(desc))
    allowed = [n for n in FUSED_ACTIVATIONS if any(o.schema.name == n for o in BY_DESC_TYPE.values())]
    if op is None or op.schema.name not in FUSED_ACTIVATIONS:
        got = type(desc).__name__ if op is None else op.schema.name
        raise invalid_type(owner, "FusedActivation", "must be an activation's description that DirectML allows "
                           f"fused and opendml implements ({', '.join(allowed)}), or None", got)
    for field in ("input_tensor", "output_tensor"):
        if getattr(desc, field) is not None:
            raise invalid(owner, f"FusedActivation.{op.schema.tensors[0 if field == 'input_tensor' else 1].name}",
                          "must be None (a fused activation reads and writes the operator's output)", "a tensor")
    return op, op.prepare(replace(desc, input_tensor=tensor, output_tensor=tensor))


def _prepare(desc: ElementWiseAdd1Desc) -> Add1Params:
    base = ADD_PREPARE(desc)
    return Add1Params(base.data_type, None, activation=fused_activation(NAME, desc.fused_activation,
                                                                        desc.output_tensor))


def _kernel(params: Add1Params, tensors: Mapping[str, TensorDesc | None]) -> KernelSpec:
    added = ADD.kernel(UnaryParams(params.data_type, None), tensors)
    if params.activation is None:
        return replace(added, operator=NAME)
    op, activation_params = params.activation
    t = params.data_type
    composer = Composer()
    total = composer.add(added, [composer.operand(k, t) for k in range(2)])
    activated = composer.add(op.kernel(activation_params, {"InputTensor": tensors["OutputTensor"],
                                                            "OutputTensor": tensors["OutputTensor"]}),
                             [read_back(total)])
    return composer.spec(NAME, activated)


def _reference(inputs: Sequence[np.ndarray | None], params: Add1Params) -> np.ndarray:
    total = ADD.reference(inputs, UnaryParams(params.data_type, None))
    if params.activation is None:
        return total
    op, activation_params = params.activation
    return op.reference([total], activation_params)


_BASE = binary(NAME, ElementWiseAdd1Desc, L.FL_2_0,
               (binary_row(L.FL_3_0, (1, 8), FLOATS), binary_row(L.FL_2_0, (4, 5), FLOATS)),
               element=lambda a, b, p, c: ex.Add(a, b), reference=lambda a, b, p: np.add(a, b, dtype=np.float32),
               python="add1")
ADD_PREPARE = _BASE.prepare
ADD1 = replace(_BASE, prepare=_prepare, kernel=_kernel, reference=_reference, fields=(FUSED_ACTIVATION,),
               api=Api("add1", INPUTS, (FUSED_ACTIVATION,)))
