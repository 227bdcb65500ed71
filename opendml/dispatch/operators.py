"""Dispatchables: DirectML operator descriptions in DxDispatch's JSON, translated to opendml descriptions.

Each operator is listed with its fields by their DirectML C names, in the order of its C struct; a
field's kind says how its JSON is read and which attribute of the opendml description receives it.
opendml itself then validates the description when the operator is created.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, cast

import numpy as np

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
    OpenDMLError,
    QuantizationType,
    QuantizeDesc,
    ReduceDesc,
    ReduceFunction,
    ScaleBias,
    TensorDesc,
    TensorFlags,
    TopK1Desc,
    TopKDesc,
)
from ..ops import OPERATORS as ALL_OPERATORS
from ..ops.definition import OperatorDefinition
from .directml_operators import DIRECTML_OPERATOR_TYPES
from .errors import ModelError, child, describe, locate, model_error
from .fields import (
    UINT64_MAX,
    Names,
    expect_float,
    expect_integer,
    expect_names,
    expect_object,
    expect_string,
    expect_uint,
    expect_uint_array,
    wrong_type,
)
from .reader import JsonObject

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
_SCALE_BIAS = Field("ScaleBias", "scale_bias", "scale_bias", optional=True)
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

DISPATCHABLE_FIELDS = ("type", "desc", "Desc", "executionFlags", "dmlCompileType", "bindings")
# DmlCompileOp (the default) compiles the operator alone; DmlCompileGraph compiles a graph of one node.
COMPILE_TYPES = ("DmlCompileOp", "DmlCompileGraph")
COMPILE_GRAPH = "DmlCompileGraph"
GRAPH_TYPE = "graph"  # opendml's dispatchable of several operator dispatchables (opendml.dispatch.graphs)
TENSOR_FIELDS = ("Type", "Desc", "DataType", "Flags", "DimensionCount", "Sizes", "Strides",
                 "TotalTensorSizeInBytes", "GuaranteedBaseOffsetAlignment")
BUFFER_TENSOR_FIELDS = TENSOR_FIELDS[2:]  # those of a DML_BUFFER_TENSOR_DESC (the rest wrap one)
# DML_SCALAR_UNION written as an object names its member: {"Int32": 5}; FLOAT16 is given by its bits.
SCALAR_MEMBERS = {
    DataType.FLOAT32: "Float32", DataType.FLOAT16: "UInt16", DataType.FLOAT64: "Float64",
    DataType.UINT8: "UInt8", DataType.UINT16: "UInt16", DataType.UINT32: "UInt32", DataType.UINT64: "UInt64",
    DataType.INT8: "Int8", DataType.INT16: "Int16", DataType.INT32: "Int32", DataType.INT64: "Int64",
}


@dataclass(frozen=True)
class Dispatchable:
    """A dispatchable of the model: an opendml description, not yet validated by a device."""

    name: str
    path: str
    operator: OperatorSpec
    desc: Any
    desc_path: str
    desc_json: JsonObject
    execution_flags: ExecutionFlags
    compile_type: str = COMPILE_TYPES[0]

    def has_tensor(self, field: Field) -> bool:
        value = getattr(self.desc, field.attribute)  # type: ignore[arg-type]
        if "[" in field.name:  # an element of a tensor array: present where the array reaches it
            return int(field.name[field.name.index("[") + 1:-1]) < len(value)
        return value is not None

    @property
    def tensor_names(self) -> tuple[str, ...]:
        """The tensors a dispatch command binds, in DirectML's field order."""
        return tuple(f.name for f in self.operator.tensors if self.has_tensor(f))

    @property
    def input_names(self) -> tuple[str | None, ...]:
        """The tensor bound to each input of the compiled object, in order; None passes no binding.

        A compiled operator takes every input field (None for an absent optional one); a graph of one
        node takes only the inputs the operator was created with, one graph input each.
        """
        names = tuple(f.name if self.has_tensor(f) else None for f in self.operator.inputs)
        return tuple(n for n in names if n is not None) if self.compile_type == COMPILE_GRAPH else names

    @property
    def output_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.operator.outputs)


def parse_operator_type(value: object, path: str) -> OperatorSpec:
    text = expect_string(value, path)
    name = OPERATOR_NAMES.find(text)
    if name is not None:
        return BY_NAME[name]
    if text.lower() in ("hlsl", "onnx", "dmlserializedgraph"):
        raise model_error(path, "must be a DirectML operator (opendml runs no HLSL, ONNX or serialized graphs)",
                          repr(text))
    directml_name = text.upper().removeprefix(OPERATOR_NAMES.prefix)
    if directml_name in DIRECTML_OPERATOR_TYPES:
        # One line that says what is missing, rather than the whole list of what is not.
        raise model_error(path, f"must be a DirectML operator opendml implements (DML_OPERATOR_{directml_name} is "
                          "DirectML's but not opendml's; opendml dispatch --schema lists those it runs)", repr(text))
    known = ", ".join(f"DML_OPERATOR_{op.name}" for op in OPERATORS)
    raise model_error(path, f'must be one of {known} (with or without DML_OPERATOR_), or "{GRAPH_TYPE}"',
                      repr(text))


def is_graph_type(value: object) -> bool:
    return isinstance(value, str) and value.lower() == GRAPH_TYPE


@dataclass(frozen=True)
class Common:
    """What every dispatchable holds beside its description: where the description is, and how to compile."""

    desc_key: str  # "desc" or "Desc"
    desc_path: str
    execution_flags: ExecutionFlags
    compile_type: str


def parse_common(obj: JsonObject, path: str, what: str) -> Common:
    """The fields every dispatchable shares; ``what`` names its description in errors."""
    if "desc" in obj and "Desc" in obj:
        raise model_error(child(path, "Desc"), 'must not be given together with "desc"', "both")
    key = "Desc" if "Desc" in obj else "desc"
    desc_path = child(path, key)
    if key not in obj:
        raise model_error(desc_path, f"is required (the {what})", "nothing")
    if obj.get("bindings"):
        raise model_error(child(path, "bindings"),
                          "must be empty: initialization bindings are for OWNED_BY_DML tensors, which these "
                          "operators do not take", "bindings")
    compile_type = COMPILE_TYPES[0]
    if "dmlCompileType" in obj:
        compile_type = expect_string(obj["dmlCompileType"], child(path, "dmlCompileType"))
        if compile_type not in COMPILE_TYPES:
            raise model_error(child(path, "dmlCompileType"), "must be DmlCompileOp or DmlCompileGraph",
                              repr(compile_type))
    flags = ExecutionFlags.NONE
    if "executionFlags" in obj:
        flags = _parse_flags(obj["executionFlags"], child(path, "executionFlags"), ExecutionFlags.parse,
                             "DML_EXECUTION_FLAGS", "executionFlags")
    return Common(key, desc_path, flags, compile_type)


def parse_dispatchable(name: str, value: object, path: str) -> Dispatchable:
    """An operator dispatchable (``opendml.dispatch.graphs.parse_any_dispatchable`` also reads graphs)."""
    obj = expect_object(value, path, DISPATCHABLE_FIELDS, required=("type",))
    operator = parse_operator_type(obj["type"], child(path, "type"))
    common = parse_common(obj, path, f"DML_{operator.name}_OPERATOR_DESC")
    desc_json = expect_object(obj[common.desc_key], common.desc_path, [f.name for f in operator.fields],
                              required=[f.name for f in operator.fields if not f.optional])
    desc = translate(operator, desc_json, common.desc_path)
    return Dispatchable(name, path, operator, desc, common.desc_path, desc_json, common.execution_flags,
                        common.compile_type)


def translate(operator: OperatorSpec, desc: JsonObject, path: str) -> Any:
    """The opendml description of a JSON ``desc``; JSON shapes and types are checked here, meaning later."""
    kwargs: dict[str, Any] = {}
    for field in operator.fields:
        at = child(path, field.name)
        if field.name not in desc:
            if field.attribute is not None:
                kwargs[field.attribute] = field.absent  # an absent optional field
            continue
        value = desc[field.name]
        if field.kind == "axis_count":
            _check_axis_count(value, at, desc.get("Axes"))
        elif field.kind == "tensor_count":
            _check_tensor_count(value, at, desc.get("QuantizationTensors", []))
        elif field.kind == "input_array":
            kwargs[field.attribute] = _tensor_array(value, at, field.length)  # type: ignore[index]
        elif field.kind == "scalar":
            kwargs[field.attribute] = _scalar(value, at, desc, path)  # type: ignore[index]
        elif field.kind == "enum":
            kwargs[field.attribute] = _enum_name(value, at, field.names)  # type: ignore[index,arg-type]
        elif field.kind == "activation":
            kwargs[field.attribute] = _fused_activation(value, at)  # type: ignore[index]
        else:
            kwargs[field.attribute] = _READERS[field.kind](value, at)  # type: ignore[index]
    return operator.desc_type(**kwargs)


def _fused_activation(value: object, path: str) -> Any:
    """A fused activation, DxDispatch's form: {"Type": "ACTIVATION_RELU", and the activation's fields but its
    tensors}; its description with None tensors (DirectML's null ones). One DirectML allows fused that opendml does
    not implement yet is refused naming it."""
    from ..ops.add1 import FUSED_ACTIVATIONS

    obj = expect_object(value, path, required=("Type",))
    at = child(path, "Type")
    name = expect_string(obj["Type"], at).upper().removeprefix("DML_OPERATOR_")
    implemented = [n for n in FUSED_ACTIVATIONS if n in BY_NAME]
    if name not in FUSED_ACTIVATIONS:
        raise model_error(at, f"must be one of DirectML's fused activations ({', '.join(FUSED_ACTIVATIONS)})",
                          repr(obj["Type"]))
    if name not in BY_NAME:
        raise model_error(at, f"must be a fused activation opendml implements ({', '.join(implemented)}); "
                              f"{name} is one DirectML allows that opendml does not implement yet", repr(obj["Type"]))
    operator = BY_NAME[name]
    fields = [f for f in operator.fields if f.kind not in ("input", "output")]
    expect_object(obj, path, ["Type", *(f.name for f in fields)], required=[f.name for f in fields if not f.optional])
    return translate(operator, obj, path)  # "Type" is no field of the activation's; the tensors left out: None


def tensor_desc(value: object, path: str) -> TensorDesc:
    """A DML_TENSOR_DESC: DxDispatch's inline form, or {"Type": "DML_TENSOR_TYPE_BUFFER", "Desc": {...}}."""
    obj = expect_object(value, path, TENSOR_FIELDS)
    if "Type" in obj:
        kind = expect_string(obj["Type"], child(path, "Type"))
        if TENSOR_TYPE_NAMES.find(kind) is None:
            raise model_error(child(path, "Type"), "must be DML_TENSOR_TYPE_BUFFER", repr(kind))
    if "Desc" in obj:
        extra = [k for k in obj if k not in ("Type", "Desc")]
        if extra:
            raise model_error(child(path, extra[0]), 'must be inside "Desc" when "Desc" is given', "it beside it")
        path = child(path, "Desc")
        obj = expect_object(obj["Desc"], path, BUFFER_TENSOR_FIELDS)
    expect_object(obj, path, required=("DataType", "Sizes"))
    sizes = expect_uint_array(obj["Sizes"], child(path, "Sizes"))
    if "DimensionCount" in obj:
        count = expect_uint(obj["DimensionCount"], child(path, "DimensionCount"))
        if count != len(sizes):
            raise model_error(child(path, "DimensionCount"), f"must equal the length of Sizes ({len(sizes)})", count)
    strides = expect_uint_array(obj["Strides"], child(path, "Strides")) if "Strides" in obj else None
    flags = TensorFlags.NONE
    if "Flags" in obj:
        flags = _parse_flags(obj["Flags"], child(path, "Flags"), TensorFlags.parse, "DML_BUFFER_TENSOR_DESC", "Flags")
    # 0 means "compute it", as in DxDispatch.
    total = expect_uint(obj.get("TotalTensorSizeInBytes", 0), child(path, "TotalTensorSizeInBytes"), UINT64_MAX)
    alignment = expect_uint(obj.get("GuaranteedBaseOffsetAlignment", 0), child(path, "GuaranteedBaseOffsetAlignment"))
    data_type = expect_string(obj["DataType"], child(path, "DataType"))
    try:
        return TensorDesc(data_type, sizes, strides, flags=flags, total_tensor_size_in_bytes=total or None,
                          guaranteed_base_offset_alignment=alignment)
    except OpenDMLError as error:
        raise locate(error, path, obj) from None


def _parse_flags(value: object, path: str, parse: Callable[..., Any], owner: str, field: str) -> Any:
    """Flags as DxDispatch writes them: one name, or an array of names OR-ed together."""
    names = expect_names(value, path)
    flags = parse("NONE")
    for k, name in enumerate(names):
        try:
            flags |= parse(name, owner=owner, field=field)
        except OpenDMLError as error:
            raise ModelError(child(path, k) if isinstance(value, list) else path, str(error)) from None
    return flags


def _scale_bias(value: object, path: str) -> ScaleBias:
    obj = expect_object(value, path, ("Scale", "Bias"), required=("Scale", "Bias"))
    return ScaleBias(expect_float(obj["Scale"], child(path, "Scale")), expect_float(obj["Bias"], child(path, "Bias")))


def _enum_name(value: object, path: str, names: Names) -> str | int:
    """An enum's name (any case, with or without its prefix) or its number; opendml reads it."""
    if isinstance(value, int) and not isinstance(value, bool) and value in names.numbers:
        return value
    if isinstance(value, str) and names.find(value) is not None:
        return value
    numbers = f", or {', '.join(map(str, names.numbers))}" if names.numbers else ""
    raise model_error(path, f"must be one of {', '.join(names.members)} (with or without {names.prefix}){numbers}",
                      describe(value))


def _check_tensor_count(value: object, path: str, tensors: object) -> None:
    count = expect_uint(value, path)
    if isinstance(tensors, list) and count != len(tensors):
        raise model_error(path, f"must equal the number of QuantizationTensors ({len(tensors)})", count)


def _tensor_array(value: object, path: str, length: int) -> list[TensorDesc]:
    """An array of DML_TENSOR_DESCs (QuantizationTensors: at most ``length``; the operator checks the count)."""
    if not isinstance(value, list):
        raise wrong_type(path, "an array of tensor descriptions", value)
    if len(value) > length:
        raise model_error(path, f"must hold at most {length} tensor descriptions", len(value))
    return [tensor_desc(item, child(path, k)) for k, item in enumerate(value)]


def _check_axis_count(value: object, path: str, axes: object) -> None:
    count = expect_uint(value, path)
    if isinstance(axes, list) and count != len(axes):
        raise model_error(path, f"must equal the number of Axes ({len(axes)})", count)


def _scalar(value: object, path: str, desc: JsonObject, desc_path: str) -> int | float:
    """A DML_SCALAR_UNION of MinMaxDataType: a number, or an object naming its member ({"Int32": 5})."""
    try:
        data_type = DataType.parse(desc.get("MinMaxDataType"), owner="ELEMENT_WISE_CLIP1", field="MinMaxDataType")
    except OpenDMLError as error:
        raise locate(error, desc_path, desc) from None
    if isinstance(value, dict):
        member = SCALAR_MEMBERS[data_type]
        obj = expect_object(value, path, (member,), required=(member,))
        path, value = child(path, member), obj[member]
        if data_type == DataType.FLOAT16:
            bits = expect_integer(value, path, 0, 0xFFFF)
            return float(np.array([bits], dtype=np.uint16).view(np.float16)[0])
    if data_type.is_float:
        return expect_float(value, path)
    if isinstance(value, bool) or not isinstance(value, int):
        raise wrong_type(path, f"an integer (MinMaxDataType is {data_type.name})", value)
    return value  # opendml checks the range of the type


_READERS: dict[str, Callable[[object, str], Any]] = {
    "input": tensor_desc,
    "output": tensor_desc,
    "float": expect_float,
    "data_type": expect_string,  # opendml checks the name, and its relation to the tensors
    "scale_bias": _scale_bias,
    "axes": expect_uint_array,
    "uint": expect_uint,
}
