"""ARGMAX: the index of the largest element over the reduced axes, rank kept (``arg_reduction``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..enums import AxisDirection, NanPolicy
from ..kernels.spec import ReductionKind
from ..tensor import TensorDesc
from .arg_reduction import (
    ArgReductionParams,
    arg_reduction_kernel,
    arg_reduction_reference,
    arg_reduction_schema,
    prepare_arg_reduction,
)
from .definition import OperatorDefinition

ARGMAX_SCHEMA = arg_reduction_schema(ReductionKind.ARGMAX)


@dataclass(frozen=True)
class ArgMaxDesc:
    """DML_ARGMAX_OPERATOR_DESC; AxisCount is ``len(axes)``. ``nan_policy`` is an opendml extension."""

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    axes: Sequence[int]
    axis_direction: AxisDirection | str = AxisDirection.INCREASING
    nan_policy: NanPolicy | str = NanPolicy.IGNORE


def prepare_argmax(desc: ArgMaxDesc) -> ArgReductionParams:
    return prepare_arg_reduction(ReductionKind.ARGMAX, desc)


ARGMAX = OperatorDefinition(ARGMAX_SCHEMA, ArgMaxDesc, prepare_argmax, arg_reduction_reference,
                            arg_reduction_kernel)
