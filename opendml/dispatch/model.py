"""A model: resources, dispatchables and commands, read and checked as a whole before anything runs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .commands import Command, parse_command
from .errors import child, model_error
from .fields import expect_object, wrong_type
from .operators import Dispatchable, parse_dispatchable
from .reader import JsonObject, read_model_file
from .resources import Resource, parse_resource

MODEL_FIELDS = ("resources", "dispatchables", "commands")


@dataclass(frozen=True)
class Model:
    resources: dict[str, Resource]
    dispatchables: dict[str, Dispatchable]
    commands: list[Command]


def parse_model(document: JsonObject, model_dir: Path, output_dir: Path) -> Model:
    """Check a parsed model file; ``model_dir`` resolves sourcePaths, ``output_dir`` targetPaths.

    Keys starting with "$" ("$schema", "$comment") are ignored, as DxDispatch ignores them.
    """
    for key in document:
        if key not in MODEL_FIELDS and not key.startswith("$"):
            raise model_error(key, f"is not a field of a model (fields: {', '.join(MODEL_FIELDS)})", "an unknown field")
    expect_object(document, "", required=MODEL_FIELDS)
    resources_json = expect_object(document["resources"], "resources")
    resources = {name: parse_resource(name, value, child("resources", name), model_dir)
                 for name, value in resources_json.items()}
    dispatchables_json = expect_object(document["dispatchables"], "dispatchables")
    dispatchables = {name: parse_dispatchable(name, value, child("dispatchables", name))
                     for name, value in dispatchables_json.items()}
    if not isinstance(document["commands"], list):
        raise wrong_type("commands", "an array of commands", document["commands"])
    commands = [parse_command(k, value, child("commands", k), resources, dispatchables, output_dir)
                for k, value in enumerate(document["commands"])]
    return Model(resources, dispatchables, commands)


def load_model(path: Path, output_dir: Path) -> Model:
    return parse_model(read_model_file(path), path.parent, output_dir)
