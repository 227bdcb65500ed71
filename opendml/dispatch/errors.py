"""Errors that name where in a model the problem is, as a JSON path (``dispatchables.clip.desc.Min``)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager

from .. import OpenDMLError

_PLAIN_KEY = re.compile(r"[A-Za-z_$][\w$-]*")
# The field an opendml message names: "ELEMENT_WISE_CLIP: OutputTensor.Sizes[0] must equal ..."
_MESSAGE_FIELD = re.compile(r"^[^:\s]+: (\S+) ")
_FIELD_PART = re.compile(r"[^.\[\]]+|\[\d+\]")


class ModelError(OpenDMLError, ValueError):
    """A model breaks a rule; ``path`` is the JSON path of the offending value ("" for the model itself)."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}" if path else problem)
        self.path = path
        self.problem = problem


def model_error(path: str, requirement: str, got: object) -> ModelError:
    """A ModelError in opendml's one pattern: ``<path>: <requirement>; got <actual>.``"""
    return ModelError(path, f"{requirement}; got {got}.")


def child(path: str, key: str | int) -> str:
    """The path of a member or element.

    >>> child(child(child("", "dispatchables"), "clip"), "desc")
    'dispatchables.clip.desc'
    >>> child("resources", "my input"), child("commands", 2)
    ('resources["my input"]', 'commands[2]')
    """
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _PLAIN_KEY.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


def describe(value: object, limit: int = 40) -> str:
    """A short JSON rendering of a value for error messages."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    text = json.dumps(value, separators=(", ", ": "), allow_nan=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def locate(error: OpenDMLError, base: str, value: object) -> ModelError:
    """Prefix an opendml error with the JSON path of the field it names, as deep as the JSON goes.

    ``value`` is the JSON found at ``base``; the field named by the message ("OutputTensor.Sizes[0]")
    is followed into it while the JSON has it.

    >>> from opendml.errors import invalid
    >>> desc = {"InputTensor": {"Sizes": [3]}, "OutputTensor": {"Sizes": [4]}}
    >>> err = invalid("ELEMENT_WISE_CLIP", "OutputTensor.Sizes[0]", "must equal InputTensor.Sizes[0] (3)", 4)
    >>> locate(err, "dispatchables.clip.desc", desc).path
    'dispatchables.clip.desc.OutputTensor.Sizes[0]'
    """
    if isinstance(error, ModelError):
        return error
    path = base
    match = _MESSAGE_FIELD.match(str(error))
    if match:
        for part in _FIELD_PART.findall(match[1]):
            if part.startswith("["):
                index = int(part[1:-1])
                if not isinstance(value, list) or index >= len(value):
                    break
                value, path = value[index], child(path, index)
            else:
                if not isinstance(value, dict) or part not in value:
                    break
                value, path = value[part], child(path, part)
    located = ModelError(path, str(error))
    located.__cause__ = error
    return located


@contextmanager
def guard(path: str) -> Iterator[None]:
    """Report what a model can provoke beyond opendml's own checks as a ModelError naming ``path``.

    The causes are prevented where they arise (nesting depth, file names, sizes); this is the one place
    that turns what is left (memory running out, a file system refusing) into one line, not a traceback.
    """
    try:
        yield
    except (OpenDMLError, BrokenPipeError):  # a closed stdout ends the command quietly (opendml.cli.main)
        raise
    except MemoryError:
        raise ModelError(path, "needs more memory than this machine can give.") from None
    except RecursionError:
        raise ModelError(path, "nests too deeply to be processed.") from None
    except OSError as error:
        where = f" ({error.filename})" if error.filename else ""
        raise ModelError(path, f"the system refused an operation{where}: {error.strerror or error}.") from None
