"""Reading a model file: JSON as DxDispatch reads it (comments and trailing commas allowed)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .errors import ModelError

# Strings are matched first so that "//" or "," inside a string is left alone.
_COMMENTS = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.DOTALL)
_TRAILING_COMMAS = re.compile(r'"(?:\\.|[^"\\])*"|,(?=\s*[\]}])')


class JsonObject(dict):  # type: ignore[type-arg]
    """A JSON object that remembers keys it saw more than once (checked where the object is used)."""

    duplicates: tuple[str, ...] = ()


def _object(pairs: list[tuple[str, Any]]) -> JsonObject:
    obj = JsonObject(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        repeated: list[str] = []
        for key, _ in pairs:
            if key in seen:
                repeated.append(key)
            seen.add(key)
        obj.duplicates = tuple(repeated)
    return obj


def _blank(match: re.Match[str]) -> str:
    text = match[0]
    if text.startswith('"'):
        return text
    # Same length, newlines kept: error positions still point into the original text.
    return re.sub(r"[^\n]", " ", text)


def relax(text: str) -> str:
    """Blank out comments and trailing commas (rapidjson's kParseCommentsFlag and kParseTrailingCommasFlag).

    >>> json.loads(relax('{"a": [1, 2,], // two\\n "b": "x//y",}'))
    {'a': [1, 2], 'b': 'x//y'}
    """
    return _TRAILING_COMMAS.sub(_blank, _COMMENTS.sub(_blank, text))


def parse_json(text: str, source: str) -> JsonObject:
    """Parse a model's text; ``source`` names it in errors (``model.json:3:7: ...``)."""
    try:
        document = json.loads(text, object_pairs_hook=_object)
    except json.JSONDecodeError:
        try:  # plain JSON parses fast; only a file with comments or trailing commas is relaxed
            document = json.loads(relax(text), object_pairs_hook=_object)
        except json.JSONDecodeError as error:
            raise ModelError(f"{source}:{error.lineno}:{error.colno}", f"invalid JSON: {error.msg}.") from None
    if not isinstance(document, JsonObject):
        raise ModelError(source, "a model must be a JSON object with resources, dispatchables and commands.")
    return document


def read_model_file(path: Path) -> JsonObject:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ModelError(str(path), "no such model file.") from None
    except IsADirectoryError:
        raise ModelError(str(path), "a model must be a JSON file, not a directory.") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ModelError(str(path), f"cannot read the model: {error}.") from None
    return parse_json(text, str(path))
