"""Mutated DxDispatch models for ``opendml dispatch``: the bundled examples, changed structurally.

A model starts as one of the bundled examples (``opendml/dispatch/examples``) or DirectML's own
DxDispatch models (``tests/data/dxdispatch``), parsed to Python objects. Mutations delete, duplicate and
retype fields, put odd strings (NUL bytes included) and edge numbers in them, point ``sourcePath`` and
``targetPath`` at files of the sandbox (absolute, ``..``, through a symbolic link, a directory, an .npz
named .npy), bind tensors badly, and change the text itself (truncated, commented, a BOM, bytes that are
not UTF-8). "Heavy" mutations (huge sizes, deep nesting, a string that is slow to scan) run only in a
subprocess with a memory cap and a timeout.

Every path a mutation writes lies inside the example's sandbox folder: nothing outside it is named.
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

import opendml.dispatch

EXAMPLES = sorted(Path(opendml.dispatch.__file__).parent.joinpath("examples").glob("*.json"))
DXDISPATCH = sorted(Path(__file__).resolve().parent.parent.joinpath("data", "dxdispatch").glob("*.json"))
SOURCES = EXAMPLES + DXDISPATCH

# Fields whose values size a resource's memory: huge values there are heavy (subprocess only).
ALLOCATING = frozenset({"valueCount", "sizeInBytes", "initialValuesOffsetInBytes"})

# Sandbox layout (relative to its root): the model's folder, the working folder, the output folder two
# levels down (so that "../.." stays inside), and a folder nothing may touch.
MODEL_DIR, CWD, OUTPUT, OUTSIDE = "model", "cwd", "o1/out", "outside"
SANDBOX = "@SANDBOX@"  # replaced by the sandbox's absolute path when the model is written


class Raw:
    """A JSON token written as is (``1e400``, ``NaN``)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"Raw({self.text!r})"


class Pairs:
    """A JSON object that may hold one key twice."""

    def __init__(self, items: list[tuple[str, Any]]) -> None:
        self.items = items

    def __repr__(self) -> str:
        return f"Pairs({self.items!r})"


@dataclass
class Model:
    """A model to run: its tree, text changes, command-line options, and whether it is heavy."""

    source: str
    tree: Any
    text_changes: list[tuple[str, Any]] = field(default_factory=list)
    options: list[str] = field(default_factory=list)
    heavy: list[str] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)  # what was done, for the report

    def __repr__(self) -> str:
        return (f"Model({self.source}, changes={self.changes}, text={[k for k, _ in self.text_changes]}, "
                f"options={self.options}, heavy={self.heavy})")


def emit(value: Any, ascii_only: bool = True) -> str:
    """JSON text of a tree (Raw tokens kept, Pairs written with their repeated keys)."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, (dict, Pairs)):
        items = value.items if isinstance(value, Pairs) else list(value.items())
        return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=ascii_only)}: {emit(v, ascii_only)}" for k, v in items) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(emit(v, ascii_only) for v in value) + "]"
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return json.dumps(value, ensure_ascii=ascii_only)


def render(model: Model, sandbox: Path) -> bytes:
    """The model file's bytes, with the sandbox's path filled in."""
    text = emit(model.tree, ascii_only=not any(kind == "unicode" for kind, _ in model.text_changes))
    text = text.replace(SANDBOX, json.dumps(str(sandbox))[1:-1])
    data = text.encode("utf-8")
    for kind, arg in model.text_changes:
        if kind == "truncate":
            data = data[:int(len(data) * arg)]
        elif kind == "comment":
            data = b"// a comment, as DxDispatch allows\n/* and another */ " + data
        elif kind == "trailing comma" and data.rstrip().endswith(b"}"):
            data = data.rstrip()[:-1] + b", }"
        elif kind == "bom":
            data = b"\xef\xbb\xbf" + data
        elif kind == "not utf-8":
            data = data[:len(data) // 2] + b"\xff\xfe" + data[len(data) // 2:]
        elif kind == "nul":
            data = data[:len(data) // 2] + b"\x00" + data[len(data) // 2:]
        elif kind == "slow string":  # an unterminated string of escaped quotes, at the end of the file
            data = data + b' "' + b'\\"' * arg
    return data


def load_source(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


# --- locations in a tree -------------------------------------------------------------------------------

def locations(tree: Any, at: tuple = ()) -> list[tuple]:
    """Every member and element, as a path of keys and indices."""
    found = []
    if isinstance(tree, dict):
        for key, value in tree.items():
            found.append((*at, key))
            found += locations(value, (*at, key))
    elif isinstance(tree, list):
        for k, value in enumerate(tree):
            found.append((*at, k))
            found += locations(value, (*at, k))
    return found


def get(tree: Any, path: tuple) -> Any:
    for key in path:
        tree = tree[key]
    return tree


def set_at(tree: Any, path: tuple, value: Any) -> None:
    get(tree, path[:-1])[path[-1]] = value


def delete_at(tree: Any, path: tuple) -> None:
    parent = get(tree, path[:-1])
    if isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent.pop(path[-1])


# --- palettes ----------------------------------------------------------------------------------------------

ODD_STRINGS = ("", " ", "\x00", "a\x00b", "../../x", "\U0001f600", "\\", "x" * 3000, "nan", "-inf", "DML_OPERATOR_",
               "DML_TENSOR_DATA_TYPE_", "FLOAT32 ", "float32", "$comment", "\u202e", "\ud7ff", "{}")
LIGHT_NUMBERS = (0, -1, 1, 2, 3, 1.5, -0.0, 255, 256, 65536, 2**31, 2**32 - 1, 2**32, 2**63, 2**64, -(2**63) - 1,
                 1e-300, Raw("1e400"), Raw("-1e400"), Raw("NaN"), Raw("Infinity"), Raw("18446744073709551616"))
HUGE_NUMBERS = (2**32, 2**33, 2**40, 2**62, 2**64 - 1, 5_000_000, 300_000_000)
ANY_VALUES = (None, True, False, 0, -1, 1.5, "", "x", [], {}, [1, 2], {"a": 1}, Raw("1e400"))

TARGETS = ("t.npy", "sub/dir/t.npy", "t.bin", "t.dat", "../../outside/t.npy", "../t.npy", f"{SANDBOX}/outside/abs.npy",
           f"{SANDBOX}/{OUTPUT}/abs.npy", f"{SANDBOX}/{MODEL_DIR}/model.json", "link/t.npy", "", ".", "t.png",
           "a\x00b.npy", "n" * 300 + ".npy", "existing_dir", "existing.npy", "sub/", "./t.npy")
SOURCES_PATHS = ("data.npy", "raw.bin", "fake.npy", "empty.bin", "odd.bin", "missing.npy", "dir", "x.png",
                 f"{SANDBOX}/{MODEL_DIR}/data.npy", "../model/data.npy", "a\x00.npy", "n" * 300 + ".bin", "text.npy")


# --- mutations ---------------------------------------------------------------------------------------------

def _resource_names(tree: Any) -> list[str]:
    resources = tree.get("resources") if isinstance(tree, dict) else None
    return list(resources) if isinstance(resources, dict) else []


def _some_resource(draw: st.DrawFn, model: Model) -> dict[str, Any] | None:
    """One of the model's resources that is still an object (mutations may have made some something else)."""
    names = _resource_names(model.tree)
    if not names:
        return None
    resource = model.tree["resources"][draw(st.sampled_from(names))]
    return resource if isinstance(resource, dict) else None


def m_delete(draw: st.DrawFn, model: Model) -> None:
    places = locations(model.tree)
    if places:
        path = draw(st.sampled_from(places))
        delete_at(model.tree, path)
        model.changes.append(f"delete {path}")


def m_retype(draw: st.DrawFn, model: Model) -> None:
    places = locations(model.tree)
    if places:
        path = draw(st.sampled_from(places))
        value = copy.deepcopy(draw(st.sampled_from(ANY_VALUES)))  # a fresh copy: later mutations may change it
        set_at(model.tree, path, value)
        model.changes.append(f"retype {path} to {value!r}")


def m_duplicate_key(draw: st.DrawFn, model: Model) -> None:
    places = [p for p in locations(model.tree) if isinstance(get(model.tree, p[:-1]), dict)]
    if places:
        path = draw(st.sampled_from(places))
        parent = get(model.tree, path[:-1])
        items = list(parent.items())
        items.append((path[-1], draw(st.sampled_from([parent[path[-1]], 0, "x"]))))
        replacement = Pairs(items)
        if path[:-1]:
            set_at(model.tree, path[:-1], replacement)
        else:
            model.tree = replacement
        model.changes.append(f"duplicate key {path}")


def m_odd_string(draw: st.DrawFn, model: Model) -> None:
    places = [p for p in locations(model.tree) if isinstance(get(model.tree, p), str)]
    keys = [p for p in locations(model.tree) if isinstance(get(model.tree, p[:-1]), dict)]
    if places and draw(st.booleans()):
        path = draw(st.sampled_from(places))
        set_at(model.tree, path, draw(st.sampled_from(ODD_STRINGS)))
        model.changes.append(f"odd string at {path}")
    elif keys:  # an odd key: rename a member
        path = draw(st.sampled_from(keys))
        parent = get(model.tree, path[:-1])
        parent[draw(st.sampled_from(ODD_STRINGS))] = parent.pop(path[-1])
        model.changes.append(f"odd key at {path}")


def m_number(draw: st.DrawFn, model: Model) -> None:
    places = [p for p in locations(model.tree)
              if isinstance(get(model.tree, p), (int, float)) and not isinstance(get(model.tree, p), bool)]
    if places:
        path = draw(st.sampled_from(places))
        value = draw(st.sampled_from(LIGHT_NUMBERS))
        big = isinstance(value, Raw) or (not isinstance(value, bool) and value > 4096)  # type: ignore[operator]
        if big and any(key in ALLOCATING for key in path if isinstance(key, str)):
            model.heavy.append("huge allocation")
        set_at(model.tree, path, value)
        model.changes.append(f"number {value!r} at {path}")


def m_huge(draw: st.DrawFn, model: Model) -> None:
    """A resource of a huge declared size (heavy: run with a memory cap)."""
    resource = _some_resource(draw, model)
    if resource is None:
        return
    kind = draw(st.sampled_from(["valueCount", "sizeInBytes", "initialValuesOffsetInBytes"]))
    value = draw(st.sampled_from(HUGE_NUMBERS))
    if kind == "valueCount":
        resource["initialValues"] = {"valueCount": value, "value": 1}
    else:
        resource[kind] = value
    model.heavy.append(f"huge {kind}")
    model.changes.append(f"{kind} {value}")


def m_deep(draw: st.DrawFn, model: Model) -> None:
    """A value nested thousands of levels deep (heavy: a recursive reader would overflow its stack)."""
    places = locations(model.tree)
    depth = draw(st.sampled_from([300, 2000, 50_000, 200_000]))
    opener, closer = draw(st.sampled_from([("[", "]"), ('{"a": ', "}")]))
    value = Raw(opener * depth + "0" + closer * depth)
    if places:
        set_at(model.tree, draw(st.sampled_from(places)), value)
    else:
        model.tree = value
    model.heavy.append(f"nesting {depth}")
    model.changes.append(f"nesting {depth}")


def m_slow_string(draw: st.DrawFn, model: Model) -> None:
    count = draw(st.sampled_from([20_000, 60_000]))
    model.text_changes.append(("slow string", count))
    model.heavy.append(f"unterminated string of {count} escaped quotes")


def m_write_file(draw: st.DrawFn, model: Model) -> None:
    """A writeFile command to one of the target paths (inside, outside, through a link, odd)."""
    names = _resource_names(model.tree)
    commands = model.tree.get("commands") if isinstance(model.tree, dict) else None
    if not names or not isinstance(commands, list):
        return
    for _ in range(draw(st.integers(1, 2))):  # two: the second may fail after the first was written
        target = draw(st.sampled_from(TARGETS))
        command: dict[str, Any] = {"type": "writeFile", "resource": draw(st.sampled_from(names)), "targetPath": target}
        if draw(st.integers(0, 4)) == 0:
            command["dimensions"] = draw(st.sampled_from([[1], [2, 2], [0], [2**32], [3, 1, 1]]))
        commands.insert(draw(st.integers(0, len(commands))), command)
        model.changes.append(f"writeFile {target!r}")


def m_source(draw: st.DrawFn, model: Model) -> None:
    """A resource read from a file of the sandbox (or one that is not there, or not a file)."""
    resource = _some_resource(draw, model)
    if resource is None:
        return
    source = draw(st.sampled_from(SOURCES_PATHS))
    resource["initialValues"] = {"sourcePath": source}
    if draw(st.booleans()):
        resource.pop("initialValuesDataType", None)
    model.changes.append(f"sourcePath {source!r}")


def m_binding(draw: st.DrawFn, model: Model) -> None:
    commands = model.tree.get("commands") if isinstance(model.tree, dict) else None
    if not isinstance(commands, list):
        return
    dispatches = [c for c in commands if isinstance(c, dict) and isinstance(c.get("bindings"), dict) and c["bindings"]]
    names = _resource_names(model.tree) or ["nothing"]
    if not dispatches:
        return
    bindings = draw(st.sampled_from(dispatches))["bindings"]
    tensor = draw(st.sampled_from(sorted(bindings)))
    name = draw(st.sampled_from(names))
    value = draw(st.sampled_from([
        "unknown", name, {"name": name, "elementOffset": 1}, {"name": name, "elementOffset": 4},
        {"name": name, "elementOffset": 2**40}, [name, name], [name], {"elementOffset": 0}, {"name": name, "elementSizeInBytes": 0},
        {"name": name, "elementSizeInBytes": 3, "elementOffset": 16}, {"name": name, "extra": 1}, None, 3,
    ]))
    bindings[tensor] = value
    model.changes.append(f"binding {tensor} = {value!r}")


def m_structure(draw: st.DrawFn, model: Model) -> None:
    """Copies and removals of whole resources, dispatchables and commands; unknown fields."""
    tree = model.tree
    if not isinstance(tree, dict):
        return
    kind = draw(st.sampled_from(["copy resource", "copy dispatchable", "copy command", "unknown field",
                                 "drop section", "reverse commands", "dispatchable type"]))
    if kind == "copy resource" and isinstance(tree.get("resources"), dict) and tree["resources"]:
        name = draw(st.sampled_from(sorted(tree["resources"])))
        tree["resources"][name + "2"] = json.loads(json.dumps(tree["resources"][name], default=str))
    elif kind == "copy dispatchable" and isinstance(tree.get("dispatchables"), dict) and tree["dispatchables"]:
        name = draw(st.sampled_from(sorted(tree["dispatchables"])))
        tree["dispatchables"][name + "2"] = json.loads(json.dumps(tree["dispatchables"][name], default=str))
    elif kind == "copy command" and isinstance(tree.get("commands"), list) and tree["commands"]:
        tree["commands"].append(json.loads(json.dumps(draw(st.sampled_from(tree["commands"])), default=str)))
    elif kind == "unknown field":
        places = [p for p in locations(tree) if isinstance(get(tree, p), dict)]
        target = get(tree, draw(st.sampled_from(places))) if places else tree
        target[draw(st.sampled_from(["extra", "$extra", "Desc", "desc", "type", "bindings"]))] = 1
    elif kind == "drop section":
        tree.pop(draw(st.sampled_from(["resources", "dispatchables", "commands"])), None)
    elif kind == "reverse commands" and isinstance(tree.get("commands"), list):
        tree["commands"].reverse()
    elif kind == "dispatchable type" and isinstance(tree.get("dispatchables"), dict) and tree["dispatchables"]:
        target = tree["dispatchables"][draw(st.sampled_from(sorted(tree["dispatchables"])))]
        if isinstance(target, dict):
            target["type"] = draw(st.sampled_from(["DML_OPERATOR_ARGMAX", "DML_OPERATOR_ELEMENT_WISE_CLIP1", "ARGMIN",
                                                   "DML_OPERATOR_ELEMENT_WISE_IDENTITY", "dml_operator_element_wise_clip",
                                                   "DML_OPERATOR_ELEMENT_WISE_ADD", "ELEMENT_WISE_DIVIDE",
                                                   "DML_OPERATOR_ELEMENT_WISE_ADD1", "ACTIVATION_ELU"]))
    model.changes.append(kind)


def m_text(draw: st.DrawFn, model: Model) -> None:
    kind = draw(st.sampled_from(["truncate", "comment", "trailing comma", "bom", "not utf-8", "nul", "unicode"]))
    model.text_changes.append((kind, draw(st.floats(0, 1)) if kind == "truncate" else None))


def m_options(draw: st.DrawFn, model: Model) -> None:
    model.options += draw(st.sampled_from([
        ["--feature-level", "5_0"], ["--feature-level", "2_1"], ["-i", "2"], ["--print-commands"], ["-v", "2"],
        ["-i", "0"], ["--bogus"], ["--feature-level", "9_9"], ["-t", "-1"], ["--example", "clip"], ["-r", "x"],
        ["--dispatch_iterations", "2", "-w", "3"],
    ]))


LIGHT = (m_delete, m_retype, m_duplicate_key, m_odd_string, m_number, m_write_file, m_write_file, m_source, m_source,
         m_binding, m_binding, m_structure, m_text, m_options)
HEAVY = (m_huge, m_deep, m_slow_string)


@st.composite
def models(draw: st.DrawFn, heavy: bool = False) -> Model:
    """A bundled model with one to three light mutations, plus one heavy mutation when ``heavy``."""
    source = draw(st.sampled_from(SOURCES))
    model = Model(source.name, load_source(source))
    for _ in range(draw(st.integers(0 if heavy else 1, 3))):
        draw(st.sampled_from(LIGHT))(draw, model)
    if heavy:
        draw(st.sampled_from(HEAVY))(draw, model)
    return model
