"""Typed reads of JSON values, each error naming the value's JSON path."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from .errors import child, describe, model_error
from .reader import JsonObject

UINT32_MAX = 2**32 - 1
UINT64_MAX = 2**64 - 1
# DxDispatch accepts these strings (any case) wherever a floating-point number is expected.
FLOAT_WORDS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


@dataclass(frozen=True)
class Names:
    """The names a JSON string may give a DirectML enum: each member's name, with or without its C prefix
    (read in any letter case).

    >>> Names("DML_AXIS_DIRECTION_", ("INCREASING", "DECREASING")).spellings
    ['DML_AXIS_DIRECTION_INCREASING', 'INCREASING', 'DML_AXIS_DIRECTION_DECREASING', 'DECREASING']
    """

    prefix: str
    members: tuple[str, ...]
    numbers: tuple[int, ...] = ()  # the members' values, where a JSON integer is read too

    @property
    def spellings(self) -> list[str]:
        return [spelling for member in self.members for spelling in (self.prefix + member, member)]

    def find(self, text: str) -> str | None:
        """The member ``text`` names, or None."""
        name = text.upper().removeprefix(self.prefix)
        return name if name in self.members else None


def json_type(value: object) -> str:
    """JSON's name for a Python value parsed from JSON."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def wrong_type(path: str, wanted: str, value: object) -> Exception:
    return model_error(path, f"must be {wanted}", f"{json_type(value)} {describe(value)}")


def expect_object(value: object, path: str, allowed: Iterable[str] = (), required: Iterable[str] = (),
                  what: str = "an object") -> JsonObject:
    """``value`` as a JSON object whose keys are all in ``allowed`` (when given) and include ``required``."""
    if not isinstance(value, JsonObject):
        raise wrong_type(path, what, value)
    if value.duplicates:
        raise model_error(child(path, value.duplicates[0]), "must appear once in its object", "it twice")
    allowed = tuple(allowed)
    if allowed:
        for key in value:
            if key not in allowed:
                raise model_error(child(path, key), f"is not a known field here (known: {', '.join(allowed)})",
                                  "an unknown field")
    for key in required:
        if key not in value:
            raise model_error(child(path, key), "is required", "nothing")
    return value


def expect_string(value: object, path: str) -> str:
    if not isinstance(value, str):
        raise wrong_type(path, "a string", value)
    return value


def expect_bool(value: object, path: str) -> bool:
    if not isinstance(value, bool):
        raise wrong_type(path, "true or false", value)
    return value


def expect_integer(value: object, path: str, low: int, high: int) -> int:
    """A JSON integer in ``[low, high]`` (2.0 is not an integer here, as in DxDispatch)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise wrong_type(path, "an integer", value)
    if not low <= value <= high:
        raise model_error(path, f"must be in [{low}, {high}]", value)
    return value


def expect_uint(value: object, path: str, high: int = UINT32_MAX, low: int = 0) -> int:
    return expect_integer(value, path, low, high)


def expect_uint_array(value: object, path: str, high: int = UINT32_MAX) -> list[int]:
    if not isinstance(value, list):
        raise wrong_type(path, "an array of unsigned integers", value)
    return [expect_uint(item, child(path, k), high) for k, item in enumerate(value)]


def expect_float(value: object, path: str) -> float:
    """A JSON number, or one of the strings "nan", "inf", "-inf" (any case)."""
    if isinstance(value, str) and value.lower() in FLOAT_WORDS:
        return FLOAT_WORDS[value.lower()]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise wrong_type(path, 'a number or one of "nan", "inf", "-inf"', value)
    try:
        return float(value)
    except OverflowError:  # an integer literal beyond float64
        return math.copysign(math.inf, value)


def expect_names(value: object, path: str) -> list[str]:
    """A string or an array of strings (DxDispatch's form for flags)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [expect_string(item, child(path, k)) for k, item in enumerate(value)]
    raise wrong_type(path, "a string or an array of strings", value)
