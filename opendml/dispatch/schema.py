"""The JSON schema (draft 2020-12) of the models opendml reads: ``opendml dispatch --schema``.

It is made from the tables the reader itself uses (the model's, resources', dispatchables', operators'
and commands' fields, and the names of DirectML's enums), so a field the reader learns appears here too:
each table's fields are looked up in the value schemas below, and a field without one fails loudly.
Where the reader is lenient (names in any letter case), the schema lists DirectML's spellings.

>>> schema = model_schema()
>>> schema["required"], sorted(schema["$defs"]["command"]["properties"]["type"]["enum"])
(['resources', 'dispatchables', 'commands'], ['dispatch', 'print', 'writeFile'])
"""

from __future__ import annotations

from typing import Any

from .commands import BINDING_FIELDS, COMMAND_FIELDS
from .descriptions import BUFFER_TENSOR_FIELDS, SCALAR_MEMBERS
from .dispatchables import COMPILE_GRAPH, COMPILE_TYPES, DISPATCHABLE_FIELDS, GRAPH_TYPE
from .fields import FLOAT_WORDS, UINT32_MAX, UINT64_MAX, Names
from .graphs import EDGES, GRAPH_DESC_FIELDS, GRAPH_DESC_REQUIRED
from .model import MODEL_FIELDS
from .operators import (
    DATA_TYPE_NAMES,
    EXECUTION_FLAG_NAMES,
    OPERATOR_NAMES,
    OPERATORS,
    TENSOR_FLAG_NAMES,
    TENSOR_TYPE_NAMES,
    OperatorSpec,
)
from .resources import CONSTANT_FIELDS, FILE_FIELDS, RESOURCE_FIELDS, SEQUENCE_FIELDS

Schema = dict[str, Any]
DRAFT = "https://json-schema.org/draft/2020-12/schema"


def ref(name: str) -> Schema:
    return {"$ref": f"#/$defs/{name}"}


def _any_case(word: str) -> str:
    """A regular expression for ``word`` in any letter case (JSON schema patterns take no flags)."""
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else c for c in word)


def _names(names: Names) -> Schema:
    spelled: Schema = {"type": "string", "enum": names.spellings}
    return {"anyOf": [spelled, {"enum": list(names.numbers)}]} if names.numbers else spelled


def _one_or_array(name: str) -> Schema:
    """DxDispatch's flags: one name, or an array of names OR-ed together."""
    return {"anyOf": [ref(name), {"type": "array", "items": ref(name)}]}


def _uint(high: int, low: int = 0) -> Schema:
    return {"type": "integer", "minimum": low, "maximum": high}


def _object(fields: tuple[str, ...], schemas: dict[str, Schema], required: tuple[str, ...] = (),
            **extra: Any) -> Schema:
    """An object holding only ``fields``, each with its schema from ``schemas`` (a KeyError for a field
    without one: the schema must learn every field the reader reads)."""
    obj: Schema = {"type": "object", "properties": {f: schemas[f] for f in fields}, "additionalProperties": False}
    if required:
        obj["required"] = list(required)
    return {**obj, **extra}


_FLOAT_WORDS = "^(?:" + "|".join(_any_case(word) for word in FLOAT_WORDS) + ")$"
_UINT32_ARRAY: Schema = {"type": "array", "items": ref("uint32")}

# The value schemas of each table's fields, by field name.
_TENSOR: dict[str, Schema] = {
    "Type": ref("tensorType"),
    "Desc": ref("bufferTensorDesc"),
    "DataType": ref("dataType"),
    "Flags": _one_or_array("tensorFlag"),
    "DimensionCount": ref("uint32"),
    "Sizes": {"type": "array", "items": _uint(UINT32_MAX, low=1), "minItems": 1},
    "Strides": _UINT32_ARRAY,
    "TotalTensorSizeInBytes": {**ref("uint64"), "description": "0 (or left out): DMLCalcBufferTensorSize's minimum"},
    "GuaranteedBaseOffsetAlignment": ref("uint32"),
}
_FIELD_KINDS: dict[str, Schema] = {  # operator fields, by their kind
    "input": ref("tensorDesc"),
    "output": ref("tensorDesc"),
    "float": ref("float"),
    "scalar": ref("scalarUnion"),
    "data_type": ref("dataType"),
    "scale_bias": ref("scaleBias"),
    "axes": _UINT32_ARRAY,
    "axis_count": {**ref("uint32"), "description": "the number of Axes (may be left out)"},
    "uint": ref("uint32"),
    "input_array": {"type": "array", "items": ref("tensorDesc"), "maxItems": 2},
    "tensor_count": {**ref("uint32"), "description": "the number of QuantizationTensors (may be left out)"},
}
_DISPATCHABLE: dict[str, Schema] = {
    "type": ref("operatorType"),
    "desc": {"type": "object", "description": "the operator's DML_*_OPERATOR_DESC, its fields by their C names"},
    "Desc": {"type": "object", "description": 'the same as "desc"'},
    "executionFlags": _one_or_array("executionFlag"),
    "dmlCompileType": {"enum": list(COMPILE_TYPES)},
    "bindings": {"type": ["object", "array"], "maxProperties": 0, "maxItems": 0,
                 "description": "initialization bindings: none (these operators take no OWNED_BY_DML tensors)"},
}
_GRAPH_DISPATCHABLE: dict[str, Schema] = {
    **_DISPATCHABLE,
    "type": {"const": GRAPH_TYPE},
    "desc": ref("graphDesc"),
    "Desc": ref("graphDesc"),
    "dmlCompileType": {"const": COMPILE_GRAPH},
}
_NAMES: Schema = {"type": "array", "items": {"type": "string", "minLength": 1}, "uniqueItems": True}
_GRAPH_DESC: dict[str, Schema] = {
    "Inputs": {**_NAMES, "description": "the graph inputs' names (InputCount is their number), bound by them"},
    "Outputs": {**_NAMES, "minItems": 1, "description": "the graph outputs' names, bound by them"},
    "Nodes": {"type": "array", "items": {"type": "string"}, "minItems": 1,
              "description": "operator dispatchables of the model, by name; Nodes[k] is node k"},
    **{key: {"type": "array", "items": ref(key[0].lower() + key[1:-1])} for key in EDGES},
}
_EDGE: dict[str, Schema] = {"Name": {"type": "string"}}  # every other field of an edge is an index

_RESOURCE: dict[str, Schema] = {
    "type": {"const": "buffer"},
    "initialValuesDataType": ref("dataType"),
    "initialValues": {"oneOf": [ref("arrayInitializer"), ref("constantInitializer"), ref("sequenceInitializer"),
                                ref("fileInitializer")]},
    "initialValuesOffsetInBytes": ref("uint64"),
    "sizeInBytes": _uint(UINT64_MAX, low=1),
}
_INITIALIZER: dict[str, Schema] = {
    "valueCount": _uint(UINT32_MAX, low=1),
    "value": ref("float"),
    "valueStart": ref("float"),
    "valueDelta": ref("float"),
    "sourcePath": {"type": "string", "minLength": 1,
                   "description": "a .npy file, or raw little-endian bytes of initialValuesDataType"},
}
_COMMAND: dict[str, Schema] = {
    "dispatchable": {"type": "string"},
    "bindings": {"type": "object", "additionalProperties": ref("binding"),
                 "properties": {name: ref("bindingArray") for op in OPERATORS for name in op.arrays}},
    "threadGroupCount": _UINT32_ARRAY,
    "resource": {"type": "string"},
    "verbose": {"type": "boolean"},
    "targetPath": {"type": "string", "minLength": 1},
    "dimensions": {"type": "array", "items": _uint(UINT32_MAX, low=1), "minItems": 1},
}
_BINDING: dict[str, Schema] = {
    "name": {"type": "string"},
    "elementOffset": ref("uint64"),
    "elementSizeInBytes": _uint(UINT32_MAX, low=1),
    "elementCount": ref("uint64"),
}


def model_schema() -> Schema:
    """The schema of a model file, as a JSON-ready dict."""
    defs: Schema = {
        "uint32": _uint(UINT32_MAX),
        "uint64": _uint(UINT64_MAX),
        "float": {"anyOf": [{"type": "number"}, {"type": "string", "pattern": _FLOAT_WORDS}],
                  "description": 'a number, or "nan", "inf", "-inf" (any case)'},
        "dataType": _names(DATA_TYPE_NAMES),
        "tensorFlag": _names(TENSOR_FLAG_NAMES),
        "executionFlag": _names(EXECUTION_FLAG_NAMES),
        "tensorType": _names(TENSOR_TYPE_NAMES),
        "operatorType": _names(OPERATOR_NAMES),
        **_resource_defs(),
        **_dispatchable_defs(),
        **_command_defs(),
    }
    collections = {
        "resources": {"type": "object", "additionalProperties": ref("resource")},
        "dispatchables": {"type": "object", "additionalProperties": ref("dispatchable")},
        "commands": {"type": "array", "items": ref("command")},
    }
    return {
        "$schema": DRAFT,
        "title": "opendml dispatch model",
        "description": "A DxDispatch model of DirectML operators, as opendml reads it. Keys starting with $ are "
                       "ignored; the reader also takes comments, trailing commas, and enum names in any case.",
        **_object(MODEL_FIELDS, collections, MODEL_FIELDS, patternProperties={"^\\$": True}),
        "$defs": defs,
    }


def _resource_defs() -> Schema:
    def form(fields: tuple[str, ...]) -> Schema:
        return _object(fields, _INITIALIZER, fields)

    # initialValuesDataType may be left out only for a .npy file, which carries its type.
    npy_file = {"type": "object", "required": ["sourcePath"],
                "properties": {"sourcePath": {"type": "string", "pattern": f"\\.{_any_case('npy')}$"}}}
    return {
        "resource": _object(RESOURCE_FIELDS, _RESOURCE, ("initialValues",),
                            **{"if": {"properties": {"initialValues": npy_file}},
                               "else": {"required": ["initialValuesDataType"]}}),
        "arrayInitializer": {"type": "array", "items": ref("float"), "minItems": 1},
        "constantInitializer": form(CONSTANT_FIELDS),
        "sequenceInitializer": form(SEQUENCE_FIELDS),
        "fileInitializer": form(FILE_FIELDS),
    }


def _dispatchable_defs() -> Schema:
    defs: Schema = {
        "bufferTensorDesc": _object(BUFFER_TENSOR_FIELDS, _TENSOR, ("DataType", "Sizes")),
        "tensorDesc": {"oneOf": [
            _object(("Type", "Desc"), _TENSOR, ("Desc",)),
            _object(("Type", *BUFFER_TENSOR_FIELDS), _TENSOR, ("DataType", "Sizes")),
        ]},
        "scaleBias": _object(("Scale", "Bias"), {"Scale": ref("float"), "Bias": ref("float")}, ("Scale", "Bias")),
        "scalarUnion": {"anyOf": [ref("float"), _scalar_members()],
                        "description": 'a value of MinMaxDataType, or DML_SCALAR_UNION\'s member: {"Int32": 5}'},
    }
    chosen = []
    for op in OPERATORS:
        defs[f"desc_{op.name}"] = _desc(op, defs)
        spellings = [f"{OPERATOR_NAMES.prefix}{op.name}", op.name]
        chosen.append({"if": {"properties": {"type": {"enum": spellings}}},
                       "then": {"properties": {"desc": ref(f"desc_{op.name}"), "Desc": ref(f"desc_{op.name}")}}})
    one_desc = [{"required": ["desc"]}, {"required": ["Desc"]}]
    defs["operatorDispatchable"] = _object(DISPATCHABLE_FIELDS, _DISPATCHABLE, ("type",), oneOf=one_desc,
                                           allOf=chosen)
    defs.update(_graph_defs(one_desc))
    defs["dispatchable"] = {"if": {"required": ["type"], "properties": {"type": {"const": GRAPH_TYPE}}},
                            "then": ref("graphDispatchable"), "else": ref("operatorDispatchable")}
    return defs


def _graph_defs(one_desc: list[Schema]) -> Schema:
    """opendml's graph dispatchable: DML_GRAPH_DESC, its nodes naming operator dispatchables."""
    defs: Schema = {
        "graphDispatchable": _object(DISPATCHABLE_FIELDS, _GRAPH_DISPATCHABLE, ("type",), oneOf=one_desc),
        "graphDesc": _object(GRAPH_DESC_FIELDS, _GRAPH_DESC, GRAPH_DESC_REQUIRED,
                             description="DML_GRAPH_DESC (an opendml extension of DxDispatch's models)"),
    }
    for key, (_, fields) in EDGES.items():
        schemas = {field: _EDGE.get(field, ref("uint32")) for field in fields}
        defs[key[0].lower() + key[1:-1]] = _object(fields, schemas, fields[:-1],
                                                   description=f"DML_{_c_name(key[:-1])}_DESC")
    return defs


def _fused_activation() -> Schema:
    """A FusedActivation: {"Type": one of DirectML's fused activations, and that activation's fields (FLOATs) but
    its tensors}; which fields go with which Type, the reader checks."""
    from ..ops.add1 import FUSED_ACTIVATIONS
    from .operators import BY_NAME

    fields = sorted({f.name for name in FUSED_ACTIVATIONS if name in BY_NAME for f in BY_NAME[name].fields
                     if f.kind not in ("input", "output")})
    schemas: dict[str, Schema] = {"Type": {"type": "string", "description": "ACTIVATION_RELU, ..."},
                                  **{name: ref("float") for name in fields}}
    return _object(("Type", *fields), schemas, ("Type",),
                   description='a fused activation: {"Type": "ACTIVATION_LEAKY_RELU", "Alpha": 0.1}')


def _c_name(name: str) -> str:
    """DirectML's C name of an edge kind: "InputEdge" -> "INPUT_GRAPH_EDGE"."""
    return f"{name.removesuffix('Edge').upper()}_GRAPH_EDGE"


def _desc(op: OperatorSpec, defs: Schema) -> Schema:
    schemas = {}
    for field in op.fields:
        if field.names is not None:
            defs.setdefault(field.name[0].lower() + field.name[1:], _names(field.names))
            schemas[field.name] = ref(field.name[0].lower() + field.name[1:])
        elif field.kind == "activation":
            schemas[field.name] = _fused_activation()
        else:
            schemas[field.name] = _FIELD_KINDS[field.kind]
        if field.description:
            schemas[field.name] = {**schemas[field.name], "description": field.description}
    fields = tuple(f.name for f in op.fields)
    return _object(fields, schemas, tuple(f.name for f in op.fields if not f.optional),
                   description=f"DML_{op.name}_OPERATOR_DESC")


def _scalar_members() -> Schema:
    """{"Float32": 2.5}, {"Int32": 5}, {"UInt16": 15360} (FLOAT16 is given by its bits): one member."""
    members = {name: ref("float") if name.startswith("Float") else {"type": "integer"}
               for name in dict.fromkeys(SCALAR_MEMBERS.values())}
    return {"type": "object", "properties": members, "additionalProperties": False,
            "minProperties": 1, "maxProperties": 1}


def _command_defs() -> Schema:
    defs: Schema = {}
    chosen = []
    for kind, (fields, required) in COMMAND_FIELDS.items():
        defs[f"{kind}Command"] = _object(fields, {**_COMMAND, "type": {"const": kind}}, ("type", *required))
        chosen.append({"if": {"properties": {"type": {"const": kind}}}, "then": ref(f"{kind}Command")})
    defs["command"] = {"type": "object", "required": ["type"],
                       "properties": {"type": {"enum": list(COMMAND_FIELDS)}}, "allOf": chosen}
    binding = _object(BINDING_FIELDS, _BINDING, ("name",))
    one = {"anyOf": [{"type": "string"}, binding]}
    defs["binding"] = {"anyOf": [one, {"type": "array", "items": one, "minItems": 1, "maxItems": 1}],
                       "description": 'a resource name, {"name", "elementOffset"}, or an array of one of these'}
    defs["bindingArray"] = {"anyOf": [one, {"type": "array", "items": one, "minItems": 1, "maxItems": 2}],
                            "description": "a tensor array's resources (QuantizationTensors): one for each of its "
                                          "tensors, in order"}
    return defs
