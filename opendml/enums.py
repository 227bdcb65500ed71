"""Small DirectML enums and flags: TensorFlags, ExecutionFlags, AxisDirection."""

from __future__ import annotations

import enum
from typing import TypeVar

from .errors import invalid

E = TypeVar("E", bound=enum.Enum)


def parse_enum(cls: type[E], value: object, prefix: str, owner: str, field: str) -> E:
    """Accept an enum member, its value, or its name with or without DirectML's C prefix."""
    if isinstance(value, cls):
        return value
    if isinstance(value, str):
        name = value.strip().upper().removeprefix(prefix)
        if name in cls.__members__:
            return cls[name]
    elif isinstance(value, int) and not isinstance(value, bool):
        try:
            return cls(value)
        except ValueError:
            pass
    known = ", ".join(cls.__members__)
    raise invalid(owner, field, f"must be one of {known}", repr(value))


class TensorFlags(enum.IntFlag):
    """DML_TENSOR_FLAGS."""

    NONE = 0
    OWNED_BY_DML = 1

    @classmethod
    def parse(cls, value: object, *, owner: str = "opendml", field: str = "Flags") -> TensorFlags:
        return parse_enum(cls, value, "DML_TENSOR_FLAG_", owner, field)


class ExecutionFlags(enum.IntFlag):
    """DML_EXECUTION_FLAGS. opendml's results never depend on them (see docs/semantics.md)."""

    NONE = 0
    ALLOW_HALF_PRECISION_COMPUTATION = 0x1
    DISABLE_META_COMMANDS = 0x2
    DESCRIPTORS_VOLATILE = 0x4

    @classmethod
    def parse(cls, value: object, *, owner: str = "opendml", field: str = "ExecutionFlags") -> ExecutionFlags:
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 0x7:
            return cls(value)
        return parse_enum(cls, value, "DML_EXECUTION_FLAG_", owner, field)


class AxisDirection(enum.IntEnum):
    """DML_AXIS_DIRECTION: which index wins a tie."""

    INCREASING = 0
    DECREASING = 1

    @classmethod
    def parse(cls, value: object, *, owner: str = "opendml", field: str = "AxisDirection") -> AxisDirection:
        return parse_enum(cls, value, "DML_AXIS_DIRECTION_", owner, field)
