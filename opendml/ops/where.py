"""ELEMENT_WISE_IF: ``f(cond, a, b) = a if cond != 0 else b``, cond a UINT8 element, a and b the output's type.

The binary factory's ternary sibling: every tensor has the output's sizes, a broadcast operand has zero strides;
the functional ``opendml.where(condition, a, b)`` broadcasts the three as NumPy's ``where`` does."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS, INTEGERS_32, INTEGERS_64, DataType
from ..feature_levels import FeatureLevel as L
from ..kernels.spec import KernelSpec, Scalars
from ..schema import OperatorSchema, SupportRow, TensorField
from ..tensor import TensorDesc
from ..validate import check_same_data_type, check_same_sizes
from .binary import load
from .definition import Api, OperatorDefinition
from .elementwise import compute_values
from .unary import UnaryParams

TENSORS = ("ConditionTensor", "ATensor", "BTensor")


@dataclass(frozen=True)
class ElementWiseIfDesc:
    """DML_ELEMENT_WISE_IF_OPERATOR_DESC."""

    condition_tensor: TensorDesc
    a_tensor: TensorDesc
    b_tensor: TensorDesc
    output_tensor: TensorDesc


def _row(level: L, dimensions: tuple[int, int], types: frozenset[DataType]) -> SupportRow:
    return SupportRow(level, dimensions, {"ConditionTensor": frozenset({DataType.UINT8}), "ATensor": types,
                                          "BTensor": types, "OutputTensor": types})


def if_rows() -> tuple[SupportRow, ...]:
    """IF's table: ConditionTensor UINT8; FLOAT64, the floats and every 8- to 64-bit integer in 1-8 dimensions from
    5_0; the floats and the 8- to 32-bit integers in 1-8 from 3_0; FLOAT16 alone in 4 from 2_0 (the level it was
    introduced at: its page's 2_0 row lists FLOAT16 only for ATensor, BTensor and OutputTensor)."""
    narrow = FLOATS | INTEGERS_32
    return (_row(L.FL_5_0, (1, 8), narrow | INTEGERS_64 | {DataType.FLOAT64}), _row(L.FL_3_0, (1, 8), narrow),
            _row(L.FL_2_0, (4, 4), frozenset({DataType.FLOAT16})))


SCHEMA = OperatorSchema("ELEMENT_WISE_IF", L.FL_2_0,
                        (*(TensorField(name, "input") for name in TENSORS), TensorField("OutputTensor", "output")),
                        if_rows(), in_place=True)


def _prepare(desc: ElementWiseIfDesc) -> UnaryParams:
    c, a, b, o = desc.condition_tensor, desc.a_tensor, desc.b_tensor, desc.output_tensor
    check_same_data_type(SCHEMA.name, "ATensor", a, "BTensor", b)
    check_same_data_type(SCHEMA.name, "ATensor", a, "OutputTensor", o)
    for name, tensor in zip(TENSORS, (c, a, b)):  # a broadcast operand: zero strides, the output's sizes
        check_same_sizes(SCHEMA.name, "OutputTensor", o, name, tensor)
    return UnaryParams(a.data_type, None)


def _kernel(params: UnaryParams, tensors: Mapping[str, TensorDesc | None]) -> KernelSpec:
    """``Select(0 < cond, a, b)``: the chosen operand's value (FLOAT16 read exactly as float32, stored back
    exactly), so the output holds the chosen element."""
    scalars = Scalars()
    t = params.data_type
    chosen = ex.Select(ex.Less(scalars.add(np.uint8(0), DataType.UINT8), ex.Load(0, DataType.UINT8)),
                       load(1, t), load(2, t))
    return KernelSpec(SCHEMA.name, (DataType.UINT8, t, t), t, ex.Store(chosen, t), tuple(scalars.values))


def _reference(inputs: Sequence[np.ndarray | None], params: UnaryParams) -> np.ndarray:
    condition, a, b = inputs
    assert condition is not None and a is not None and b is not None  # all required
    t = params.data_type
    return np.where(condition != 0, compute_values(a, t), compute_values(b, t)).astype(t.numpy)


IF = OperatorDefinition(SCHEMA, ElementWiseIfDesc, _prepare, _reference, _kernel, (),
                        Api("where", TENSORS, (), typed=1))
