"""A DirectML operator description's JSON, as DxDispatch writes it, translated to the opendml description
(``translate``): each field read by its kind, with the JSON's shapes and types checked here and their meaning
later, by opendml; tensor descriptions (``tensor_desc``), flags, enums, scalars and fused activations.

The operators and their fields are listed by ``operators``; the dispatchables that hold the descriptions are read
by ``dispatchables``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import DataType, OpenDMLError, ScaleBias, TensorDesc, TensorFlags
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
from .operators import BY_NAME, TENSOR_TYPE_NAMES, OperatorSpec
from .reader import JsonObject

TENSOR_FIELDS = ("Type", "Desc", "DataType", "Flags", "DimensionCount", "Sizes", "Strides",
                 "TotalTensorSizeInBytes", "GuaranteedBaseOffsetAlignment")
BUFFER_TENSOR_FIELDS = TENSOR_FIELDS[2:]  # those of a DML_BUFFER_TENSOR_DESC (the rest wrap one)
# DML_SCALAR_UNION written as an object names its member: {"Int32": 5}; FLOAT16 is given by its bits.
SCALAR_MEMBERS = {
    DataType.FLOAT32: "Float32", DataType.FLOAT16: "UInt16", DataType.FLOAT64: "Float64",
    DataType.UINT8: "UInt8", DataType.UINT16: "UInt16", DataType.UINT32: "UInt32", DataType.UINT64: "UInt64",
    DataType.INT8: "Int8", DataType.INT16: "Int16", DataType.INT32: "Int32", DataType.INT64: "Int64",
}


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
