"""Commands of a model: dispatch, print and writeFile, checked against the model's names."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .errors import child, model_error
from .fields import UINT64_MAX, expect_bool, expect_object, expect_string, expect_uint, expect_uint_array, wrong_type
from .graphs import AnyDispatchable
from .paths import IMAGE_SUFFIXES, check_replaceable, resolve_output
from .reader import JsonObject
from .resources import Resource

# Each command's fields, and those it requires, by its "type" (matched in any letter case).
COMMAND_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "dispatch": (("type", "dispatchable", "bindings", "threadGroupCount"), ("dispatchable", "bindings")),
    "print": (("type", "resource", "verbose"), ("resource",)),
    "writeFile": (("type", "resource", "targetPath", "dimensions"), ("resource", "targetPath")),
}
BINDING_FIELDS = ("name", "elementOffset", "elementSizeInBytes", "elementCount")


@dataclass(frozen=True)
class Binding:
    """A resource bound to a tensor, from ``offset`` bytes to the end of the resource (as DxDispatch)."""

    resource: str
    offset: int
    path: str


@dataclass(frozen=True)
class DispatchCommand:
    index: int
    path: str
    source: str  # the command's JSON, for --print-commands
    dispatchable: str
    bindings: dict[str, Binding]  # tensor field name -> binding
    bindings_path: str
    bindings_json: JsonObject


@dataclass(frozen=True)
class PrintCommand:
    index: int
    path: str
    source: str
    resource: str
    verbose: bool


@dataclass(frozen=True)
class WriteFileCommand:
    index: int
    path: str
    source: str
    resource: str
    target: Path
    dimensions: tuple[int, ...] | None


Command = DispatchCommand | PrintCommand | WriteFileCommand


def parse_command(index: int, value: object, path: str, resources: Mapping[str, Resource],
                  dispatchables: Mapping[str, AnyDispatchable], output_dir: Path,
                  allow_outside_output_path: bool = False) -> Command:
    obj = expect_object(value, path, required=("type",))
    kind = expect_string(obj["type"], child(path, "type"))
    name = next((known for known in COMMAND_FIELDS if known.lower() == kind.lower()), None)
    if name is None:
        raise model_error(child(path, "type"), 'must be "dispatch", "print" or "writeFile"', repr(kind))
    allowed, required = COMMAND_FIELDS[name]
    expect_object(obj, path, allowed, required=required)
    source = json.dumps(obj, separators=(",", ":"))
    if name == "dispatch":
        if "threadGroupCount" in obj:  # HLSL's; DirectML operators ignore it, as in DxDispatch
            expect_uint_array(obj["threadGroupCount"], child(path, "threadGroupCount"))
        dispatchable = _reference(obj["dispatchable"], child(path, "dispatchable"), dispatchables, "dispatchable")
        return _dispatch(index, path, source, obj, dispatchables[dispatchable], resources)
    resource = _reference(obj["resource"], child(path, "resource"), resources, "resource")
    if name == "print":
        verbose = expect_bool(obj.get("verbose", False), child(path, "verbose"))
        return PrintCommand(index, path, source, resource, verbose)
    target = _target(obj["targetPath"], child(path, "targetPath"), output_dir, allow_outside_output_path)
    dimensions = None
    if "dimensions" in obj:
        dimensions = _dimensions(obj["dimensions"], child(path, "dimensions"), resources[resource])
    return WriteFileCommand(index, path, source, resource, target, dimensions)


def _reference(value: object, path: str, names: Mapping[str, object], what: str) -> str:
    name = expect_string(value, path)
    if name not in names:
        known = ", ".join(repr(n) for n in names) or "none"
        raise model_error(path, f"must name a {what} of the model (known: {known})", repr(name))
    return name


def _dispatch(index: int, path: str, source: str, obj: JsonObject, dispatchable: AnyDispatchable,
              resources: Mapping[str, Resource]) -> DispatchCommand:
    bindings_path = child(path, "bindings")
    tensors = dispatchable.tensor_names  # an operator's tensor fields, or a graph's input and output names
    bindings_json = expect_object(obj["bindings"], bindings_path, what="an object mapping tensors to resources")
    bindings: dict[str, Binding] = {}
    arrays = getattr(getattr(dispatchable, "operator", None), "arrays", {})
    for tensor, value in bindings_json.items():
        at = child(bindings_path, tensor)
        if tensor in arrays:  # a tensor array's bind point: one resource for each of its tensors, in order
            bound = [t for t in tensors if t.startswith(f"{tensor}[")]
            items = value if isinstance(value, list) else [value]
            if len(items) != len(bound):
                raise model_error(at, f"must bind {len(bound)} resources, one for each of {tensor} (a list)",
                                  f"{len(items)} bindings")
            for k, (element, item) in enumerate(zip(bound, items)):
                bindings[element] = _binding(item, child(at, k) if isinstance(value, list) else at, resources)
            continue
        if tensor not in tensors:
            raise model_error(at, f"must be a tensor of {dispatchable.name!r} (tensors: {', '.join(tensors)})",
                              "a tensor it does not have")
        bindings[tensor] = _binding(value, at, resources)
    for tensor in tensors:
        if tensor not in bindings:
            raise model_error(child(bindings_path, tensor.partition("[")[0]), "must be bound to a resource",
                              "no binding")
    return DispatchCommand(index, path, source, dispatchable.name, bindings, bindings_path, bindings_json)


def _binding(value: object, path: str, resources: Mapping[str, Resource]) -> Binding:
    """A resource name, {"name", "elementOffset"?, ...}, or an array holding one of these."""
    if isinstance(value, list):
        if len(value) != 1:
            raise model_error(path, "must bind one resource (these operators take one buffer per tensor)",
                              f"{len(value)} bindings")
        value, path = value[0], child(path, 0)
    if isinstance(value, str):
        return Binding(_reference(value, path, resources, "resource"), 0, path)
    if not isinstance(value, dict):
        raise wrong_type(path, 'a resource name or an object {"name", "elementOffset"}', value)
    obj = expect_object(value, path, BINDING_FIELDS, required=("name",))
    name = _reference(obj["name"], child(path, "name"), resources, "resource")
    element_offset = expect_uint(obj.get("elementOffset", 0), child(path, "elementOffset"), UINT64_MAX)
    element_size = resources[name].data_type.size
    if "elementSizeInBytes" in obj:
        element_size = expect_uint(obj["elementSizeInBytes"], child(path, "elementSizeInBytes"), low=1)
    if "elementCount" in obj:  # a view's length for HLSL; a DirectML binding runs to the buffer's end
        expect_uint(obj["elementCount"], child(path, "elementCount"), UINT64_MAX)
    offset = element_offset * element_size
    size = resources[name].size_in_bytes
    if offset >= size:  # a binding runs from its offset to the end of the resource: it must hold something
        raise model_error(child(path, "elementOffset"), f"must start the binding inside resource {name!r} "
                          f"({size} bytes)", f"byte {offset}")
    return Binding(name, offset, path)


def _target(value: object, path: str, output_dir: Path, allow_outside: bool) -> Path:
    target = resolve_output(expect_string(value, path), path, output_dir, allow_outside)
    if target.suffix.lower() in IMAGE_SUFFIXES:
        raise model_error(path, "must be a .npy or raw binary file (images are not supported)", str(target))
    check_replaceable(target, path)  # checked again just before the file is replaced
    return target


def _dimensions(value: object, path: str, resource: Resource) -> tuple[int, ...]:
    dimensions = tuple(expect_uint_array(value, path))
    available = resource.size_in_bytes // resource.data_type.size
    if not dimensions or 0 in dimensions or math.prod(dimensions) > available:
        raise model_error(path, f"must be non-zero sizes of at most {available} elements in all "
                          f"(the size of {resource.name!r})", list(dimensions))
    return dimensions
