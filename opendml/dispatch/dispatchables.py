"""Operator dispatchables: a model's dispatchable of one DirectML operator (``parse_dispatchable``), its operator type
(``parse_operator_type``), the fields every dispatchable shares (``parse_common``: graphs' too), and what a
dispatchable binds (``Dispatchable``).

The operators and their fields are listed by ``operators``; a description's JSON is translated by ``descriptions``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import ExecutionFlags
from .descriptions import _parse_flags, translate
from .directml_operators import DIRECTML_OPERATOR_TYPES
from .errors import child, model_error
from .fields import expect_object, expect_string
from .operators import BY_NAME, OPERATOR_NAMES, OPERATORS, Field, OperatorSpec
from .reader import JsonObject

DISPATCHABLE_FIELDS = ("type", "desc", "Desc", "executionFlags", "dmlCompileType", "bindings")
# DmlCompileOp (the default) compiles the operator alone; DmlCompileGraph compiles a graph of one node.
COMPILE_TYPES = ("DmlCompileOp", "DmlCompileGraph")
COMPILE_GRAPH = "DmlCompileGraph"
GRAPH_TYPE = "graph"  # opendml's dispatchable of several operator dispatchables (opendml.dispatch.graphs)


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
