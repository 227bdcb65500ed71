"""The example models shipped inside the package (``opendml dispatch --example NAME``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from .errors import ModelError


@dataclass(frozen=True)
class Example:
    name: str
    path: Path
    description: str  # the model's "$comment"


def examples_dir() -> Path:
    # The package is installed as plain files (never zipped), so the folder is a real path.
    return Path(str(resources.files("opendml.dispatch").joinpath("examples")))


def list_examples() -> list[Example]:
    found = []
    for path in sorted(examples_dir().glob("*.json")):
        comment = json.loads(path.read_text(encoding="utf-8")).get("$comment", "")
        found.append(Example(path.stem, path, comment))
    return found


def find_example(name: str) -> Example:
    wanted = name.removesuffix(".json")
    for example in list_examples():
        if example.name == wanted:
            return example
    known = ", ".join(e.name for e in list_examples())
    raise ModelError("--example", f"must be one of {known}; got {name!r}.")
