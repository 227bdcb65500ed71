"""Reading a model file: JSON as DxDispatch reads it (comments and trailing commas allowed).

One linear scan over the text (``scan``) blanks out comments and trailing commas and measures how deep
arrays and objects nest, so that a pathological file costs time in proportion to its size and a deeply
nested one is refused before Python's JSON parser recurses.

Why not a library: DxDispatch reads models with rapidjson's comments and trailing-commas flags, and this reads
that dialect with the standard library's parser and nothing else. ``json5`` and ``pyjson5`` read JSON5, a wider
dialect (unquoted and single-quoted keys, hexadecimal numbers, ``+1``, ``.5``), so a model they accept could fail
in DxDispatch; ``json5`` is pure Python and took 30 s on a 1.8 MB model that this reads in 0.05-0.1 s.
``python-rapidjson`` wraps RapidJSON itself and is 2-4 times faster on that model, but a compiled extension; like
``pyjson5`` it reports an error's byte offset, not its line and column, and keeps the last of two equal keys
where this reports both (a model's key given twice is an error, ``JsonObject.duplicates``). ``commentjson``
(no release since 2020) parses in pure Python: 15 s for a tenth of that model. The blanking keeps every
character's position, so the standard library's errors point into the file as written.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .errors import ModelError, guard
from .paths import check_path

MAX_DEPTH = 256  # arrays and objects nested deeper than this are refused (a real model nests about 6 deep)

# The pieces of text that matter to the scan; everything between them is skipped by the regex engine.
# Every alternative consumes what it starts, even unterminated, so the scan never retries a position:
# an unterminated string ends at the end of its line, an unterminated block comment at the end of the text.
_TOKEN = re.compile(r"""
      "[^"\\\n]*(?:\\.[^"\\\n]*)*"?    # a string
    | //[^\n]*                         # a line comment
    | /\*.*?(?:\*/|\Z)                 # a block comment
    | ,(?=[ \t\r\n]*[\]}/])            # a comma that may be trailing (a bracket or a comment follows)
    | [\[\]{}]
""", re.VERBOSE | re.DOTALL)
_JSON_SPACE = " \t\r\n"


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


def _blank(text: str) -> str:
    # Same length, newlines kept: error positions still point into the original text.
    return re.sub(r"[^\n]", " ", text)


def _position(text: str, index: int) -> str:
    line = text.count("\n", 0, index) + 1
    column = index - text.rfind("\n", 0, index)
    return f"{line}:{column}"


def scan(text: str, source: str) -> str:
    """Blank out comments and trailing commas (rapidjson's kParseCommentsFlag and kParseTrailingCommasFlag),
    and refuse nesting deeper than MAX_DEPTH; ``source`` names the text in errors.

    >>> json.loads(scan('{"a": [1, 2,], // two\\n "b": "x//y",}', "m.json"))
    {'a': [1, 2], 'b': 'x//y'}
    """
    blanks: list[tuple[int, int]] = []  # spans to blank out, found in order but for commas
    depth = 0
    comma = -1  # a comma with only space and comments after it so far
    gap_start = 0  # where the text after the previous token starts
    for match in _TOKEN.finditer(text):
        start, first = match.start(), match[0][0]
        if comma >= 0 and text[gap_start:start].strip(_JSON_SPACE):
            comma = -1  # a value came between: not a trailing comma
        gap_start = match.end()
        if first == "/":
            blanks.append((start, match.end()))
            continue
        if first in "]}" and comma >= 0:
            blanks.append((comma, comma + 1))
        comma = -1
        if first == ",":
            comma = start
        elif first in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise ModelError(f"{source}:{_position(text, start)}",
                                 f"invalid JSON: arrays and objects must nest at most {MAX_DEPTH} levels deep; "
                                 f"got level {depth} here.")
        elif first in "]}":
            depth -= 1
    return _blank_spans(text, blanks)


def _blank_spans(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    pieces, done = [], 0
    for start, end in sorted(spans):
        pieces += [text[done:start], _blank(text[start:end])]
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


def parse_json(text: str, source: str) -> JsonObject:
    """Parse a model's text; ``source`` names it in errors (``model.json:3:7: ...``)."""
    try:
        document = json.loads(scan(text, source), object_pairs_hook=_object)
    except json.JSONDecodeError as error:
        raise ModelError(f"{source}:{error.lineno}:{error.colno}", f"invalid JSON: {_phrase(error.msg)}.") from None
    if not isinstance(document, JsonObject):
        raise ModelError(source, "a model must be a JSON object with resources, dispatchables and commands.")
    return document


def _phrase(message: str) -> str:
    """Python's JSON messages end in "at" where they print the position, which the error's prefix gives."""
    return message[: -len(" at")] + " here" if message.endswith(" at") else message


def read_model_file(path: Path) -> JsonObject:
    name = str(path)
    check_path(name, "model")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ModelError(name, "no such model file.") from None
    except IsADirectoryError:
        raise ModelError(name, "a model must be a JSON file, not a directory.") from None
    except UnicodeDecodeError as error:
        raise ModelError(name, f"a model must be UTF-8 text; got byte 0x{error.object[error.start]:02X} at byte "
                               f"{error.start}.") from None
    except OSError as error:
        raise ModelError(name, f"cannot read the model: {error.strerror or error}.") from None
    except MemoryError:
        raise ModelError(name, "the model file is too large to read into memory.") from None
    with guard(name):  # memory can still run out while the JSON is parsed
        return parse_json(text, name)
