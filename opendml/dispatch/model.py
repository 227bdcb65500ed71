"""A model: resources, dispatchables and commands, read and checked as a whole before anything runs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .commands import Command, parse_command
from .errors import child, guard, model_error
from .fields import expect_object, wrong_type
from .graphs import AnyDispatchable, GraphDispatchable, check_nodes, parse_any_dispatchable
from .reader import JsonObject, read_model_file
from .resources import MAX_RESOURCE_BYTES, Resource, parse_resource

MODEL_FIELDS = ("resources", "dispatchables", "commands")


@dataclass(frozen=True)
class Model:
    resources: dict[str, Resource]
    dispatchables: dict[str, AnyDispatchable]
    commands: list[Command]


def parse_model(document: JsonObject, model_dir: Path, output_dir: Path, *, allow_outside_output_path: bool = False,
                max_resource_bytes: int = MAX_RESOURCE_BYTES) -> Model:
    """Check a parsed model file; ``model_dir`` resolves sourcePaths, ``output_dir`` targetPaths.

    Keys starting with "$" ("$schema", "$comment") are ignored, as DxDispatch ignores them. writeFile
    targets must stay inside ``output_dir`` unless ``allow_outside_output_path``; no resource may be
    larger than ``max_resource_bytes``. Nothing is allocated here beyond the model's own numbers.
    """
    for key in document:
        if key not in MODEL_FIELDS and not key.startswith("$"):
            raise model_error(key, f"is not a field of a model (fields: {', '.join(MODEL_FIELDS)})", "an unknown field")
    expect_object(document, "", required=MODEL_FIELDS)
    resources: dict[str, Resource] = {}
    for name, value in expect_object(document["resources"], "resources").items():
        with guard(path := child("resources", name)):
            resources[name] = parse_resource(name, value, path, model_dir, max_resource_bytes)
    dispatchables: dict[str, AnyDispatchable] = {}
    for name, value in expect_object(document["dispatchables"], "dispatchables").items():
        with guard(path := child("dispatchables", name)):
            dispatchables[name] = parse_any_dispatchable(name, value, path)
    for dispatchable in dispatchables.values():  # a graph may name dispatchables that follow it
        if isinstance(dispatchable, GraphDispatchable):
            check_nodes(dispatchable, dispatchables)
    if not isinstance(document["commands"], list):
        raise wrong_type("commands", "an array of commands", document["commands"])
    commands: list[Command] = []
    for k, value in enumerate(document["commands"]):
        with guard(path := child("commands", k)):
            commands.append(parse_command(k, value, path, resources, dispatchables, output_dir,
                                          allow_outside_output_path))
    return Model(resources, dispatchables, commands)


def load_model(path: Path, output_dir: Path, *, allow_outside_output_path: bool = False,
               max_resource_bytes: int = MAX_RESOURCE_BYTES) -> Model:
    return parse_model(read_model_file(path), path.parent, output_dir,
                       allow_outside_output_path=allow_outside_output_path, max_resource_bytes=max_resource_bytes)
