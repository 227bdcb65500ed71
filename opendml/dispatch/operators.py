"""DirectML operators as a DxDispatch model names them (``OPERATORS``, ``BY_NAME``): each listed with its fields by
their DirectML C names, in the order of its C struct; a field's kind says how its JSON is read and which attribute
of the opendml description receives it. Most operators' fields are their declaration's (``declared``); a few are
written out here. And the names of DirectML's enums, as a model may spell them.

A dispatchable naming an operator is read by ``dispatchables``, its description's JSON translated to an opendml
description by ``descriptions``; opendml itself then validates the description when the operator is created.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, cast

from .. import (
    ActivationHardmax1Desc,
    ActivationLogSoftmax1Desc,
    ActivationSoftmax1Desc,
    ArgMaxDesc,
    ArgMinDesc,
    AxisDirection,
    DataType,
    DequantizeDesc,
    ElementWiseDequantizeLinearDesc,
    ElementWiseQuantizeLinearDesc,
    ExecutionFlags,
    NanPolicy,
    QuantizationType,
    QuantizeDesc,
    ReduceDesc,
    ReduceFunction,
    TensorFlags,
    TopK1Desc,
    TopKDesc,
)
from ..ops import OPERATORS as ALL_OPERATORS
from ..ops.definition import OperatorDefinition
from .fields import Names

Kind = Literal["input", "output", "float", "scalar", "data_type", "scale_bias", "axes", "axis_count", "enum",
               "activation", "input_array", "tensor_count", "uint"]


@dataclass(frozen=True)
class Field:
    """A field of a DirectML operator description."""

    name: str  # DirectML's C name, used in JSON: "InputTensor"
    kind: Kind  # "input"/"output" are tensors, bound by a dispatch command under this name
    attribute: str | None  # the opendml description's attribute (None: read and checked, not passed on)
    optional: bool = False
    names: Names | None = None  # an "enum" field's names
    absent: Any = None  # what an optional field left out gives the description
    description: str = ""  # said in the JSON schema (opendml's extensions say so)
    length: int = 0  # an "input_array" field's most tensors (QuantizationTensors: 2)

    @property
    def is_tensor(self) -> bool:
        return self.kind in ("input", "output")

    def elements(self) -> tuple[Field, ...]:
        """An "input_array" field's tensors as fields of their own, ``QuantizationTensors[k]``, each optional
        (as the operator's schema lists them); any other field is itself."""
        if self.kind != "input_array":
            return (self,)
        return tuple(Field(f"{self.name}[{k}]", "input", self.attribute, optional=True) for k in range(self.length))


@dataclass(frozen=True)
class OperatorSpec:
    name: str  # DirectML's name without DML_OPERATOR_
    desc_type: type
    fields: tuple[Field, ...]

    @property
    def inputs(self) -> tuple[Field, ...]:
        return tuple(e for f in self.fields for e in f.elements() if e.kind == "input")

    @property
    def outputs(self) -> tuple[Field, ...]:
        return tuple(f for f in self.fields if f.kind == "output")

    @property
    def tensors(self) -> tuple[Field, ...]:
        """The bind points, in DirectML's order: a tensor array's elements each its own (``Field.elements``)."""
        return tuple(e for f in self.fields for e in f.elements() if e.is_tensor)

    @property
    def arrays(self) -> dict[str, Field]:
        """The tensor array fields by name: a model binds each to a list of resources."""
        return {f.name: f for f in self.fields if f.kind == "input_array"}


# The names of DirectML's enums as a model may spell them (opendml's enums read them; the schema lists them).
DATA_TYPE_NAMES = Names("DML_TENSOR_DATA_TYPE_", tuple(t.name for t in DataType if t is not DataType.UNKNOWN))
TENSOR_FLAG_NAMES = Names("DML_TENSOR_FLAG_", tuple(TensorFlags.__members__))
EXECUTION_FLAG_NAMES = Names("DML_EXECUTION_FLAG_", tuple(ExecutionFlags.__members__))
AXIS_DIRECTION_NAMES = Names("DML_AXIS_DIRECTION_", tuple(AxisDirection.__members__),
                             tuple(int(m) for m in AxisDirection))
REDUCE_FUNCTION_NAMES = Names("DML_REDUCE_FUNCTION_", tuple(ReduceFunction.__members__),
                              tuple(int(m) for m in ReduceFunction))
TENSOR_TYPE_NAMES = Names("DML_TENSOR_TYPE_", ("BUFFER",))
# opendml's NanPolicy (an extension: DirectML has no such enum), spelled as opendml.NanPolicy parses it.
NAN_POLICY_NAMES = Names("NAN_POLICY_", tuple(NanPolicy.__members__), tuple(int(m) for m in NanPolicy))

_INPUT = Field("InputTensor", "input", "input_tensor")
_OUTPUT = Field("OutputTensor", "output", "output_tensor")
_SCALE = Field("ScaleTensor", "input", "scale_tensor")
_ZERO_POINT = Field("ZeroPointTensor", "input", "zero_point_tensor", optional=True)
# ARGMIN's and ARGMAX's fields; NanPolicy, after DirectML's own, is opendml's extension (IGNORE if left out).
_ARG_REDUCTION = (
    _INPUT, _OUTPUT, Field("AxisCount", "axis_count", None, optional=True), Field("Axes", "axes", "axes"),
    Field("AxisDirection", "enum", "axis_direction", names=AXIS_DIRECTION_NAMES),
    Field("NanPolicy", "enum", "nan_policy", optional=True, names=NAN_POLICY_NAMES, absent=NanPolicy.IGNORE,
          description="an opendml extension, not DirectML's: IGNORE (DirectML's behaviour, the default) skips NaN "
                      "elements; PROPAGATE makes the first NaN win, as NumPy and ONNX Runtime do"))


# TOP_K's fields (TOP_K1 adds AxisDirection): two outputs, then two UINTs.
_TOP_K = (_INPUT, Field("OutputValueTensor", "output", "output_value_tensor"),
          Field("OutputIndexTensor", "output", "output_index_tensor"), Field("Axis", "uint", "axis"),
          Field("K", "uint", "k"))

# SOFTMAX1's, LOG_SOFTMAX1's and HARDMAX1's fields (DirectMLSchema.h): the tensors, then AxisCount and Axes.
_NORMALIZATION = (_INPUT, _OUTPUT, Field("AxisCount", "axis_count", None, optional=True), Field("Axes", "axes", "axes"))


def declared(op: OperatorDefinition) -> OperatorSpec:
    """A declared operator's fields (``OperatorDefinition.fields``): its tensors, then its other fields in
    DirectML's order, each read by its kind; an optional ScaleBias may be left out."""
    fields = [Field(t.name, t.kind, t.attribute, optional=t.optional) for t in op.schema.tensors]
    fields += [Field(f.name, cast(Kind, f.kind), f.attribute, optional=f.kind in ("scale_bias", "activation"),
                     names=None if f.enum is None else Names(f.prefix, tuple(f.enum.__members__),
                                                             tuple(int(m) for m in f.enum)))
               for f in op.fields]
    return OperatorSpec(op.schema.name, op.desc_type, tuple(fields))


QUANTIZATION_TYPE_NAMES = Names("DML_QUANTIZATION_TYPE_", tuple(QuantizationType.__members__),
                                tuple(int(m) for m in QuantizationType))
# QUANTIZE's and DEQUANTIZE's fields (DirectMLSchema.h): QuantizationTensorCount is read and checked against the
# array, which a model binds as a list of resources (DxDispatch's bind point of several resources).
_BLOCKED_QUANTIZATION = (
    _INPUT, Field("QuantizationType", "enum", "quantization_type", names=QUANTIZATION_TYPE_NAMES),
    Field("QuantizationTensorCount", "tensor_count", None, optional=True),
    Field("QuantizationTensors", "input_array", "quantization_tensors", optional=True, absent=(), length=2),
    _OUTPUT)

# The operators whose fields are written out here; every other one's are its declaration's (``declared``).
_WRITTEN: tuple[OperatorSpec, ...] = (
    OperatorSpec("QUANTIZE", QuantizeDesc, _BLOCKED_QUANTIZATION),
    OperatorSpec("DEQUANTIZE", DequantizeDesc, _BLOCKED_QUANTIZATION),
    OperatorSpec("ELEMENT_WISE_DEQUANTIZE_LINEAR", ElementWiseDequantizeLinearDesc, (
        _INPUT, _SCALE, _ZERO_POINT, _OUTPUT)),
    OperatorSpec("ELEMENT_WISE_QUANTIZE_LINEAR", ElementWiseQuantizeLinearDesc, (
        _INPUT, _SCALE, _ZERO_POINT, _OUTPUT)),
    OperatorSpec("ARGMIN", ArgMinDesc, _ARG_REDUCTION),
    OperatorSpec("ARGMAX", ArgMaxDesc, _ARG_REDUCTION),
    OperatorSpec("TOP_K", TopKDesc, _TOP_K),
    OperatorSpec("TOP_K1", TopK1Desc, (*_TOP_K, Field("AxisDirection", "enum", "axis_direction",
                                                      names=AXIS_DIRECTION_NAMES))),
    OperatorSpec("ACTIVATION_SOFTMAX1", ActivationSoftmax1Desc, _NORMALIZATION),
    OperatorSpec("ACTIVATION_LOG_SOFTMAX1", ActivationLogSoftmax1Desc, _NORMALIZATION),
    OperatorSpec("ACTIVATION_HARDMAX1", ActivationHardmax1Desc, _NORMALIZATION),
    OperatorSpec("REDUCE", ReduceDesc, (
        Field("Function", "enum", "function", names=REDUCE_FUNCTION_NAMES), _INPUT, _OUTPUT,
        Field("AxisCount", "axis_count", None, optional=True), Field("Axes", "axes", "axes"))),
)
_BY_DESC_TYPE = {spec.desc_type: spec for spec in _WRITTEN}
# In the operators' registry order (``opendml.ops.OPERATORS``).
OPERATORS: tuple[OperatorSpec, ...] = tuple(_BY_DESC_TYPE.get(op.desc_type) or declared(op) for op in ALL_OPERATORS)

BY_NAME: dict[str, OperatorSpec] = {op.name: op for op in OPERATORS}
OPERATOR_NAMES = Names("DML_OPERATOR_", tuple(BY_NAME))
