"""Small DirectML enums and flags: TensorFlags, ExecutionFlags, AxisDirection, RoundingMode, IsInfinityMode;
opendml's NanPolicy; and the one enum parser."""

from __future__ import annotations

import enum
import functools
import operator
from collections.abc import Callable, Collection
from typing import TypeVar

import numpy as np

from .errors import invalid, invalid_type

E = TypeVar("E", bound=enum.Enum)


def parse_enum(cls: type[E], value: object, owner: str, field: str, *, prefix: str = "",
               name_of: Callable[[str], str] | None = None, exclude: Collection[E] = (),
               label: Callable[[E], str] = lambda member: member.name) -> E:
    """A defined member of ``cls`` given as a member, its DirectML value or its name.

    Names are case-insensitive, with or without DirectML's C ``prefix``; ``name_of`` maps other spellings
    to a member name, and ``label`` spells members in the error. Flags also take ``|``-joined names, and
    values made of defined bits only. A value no member defines (``TensorFlags(2)``, -1) and the members
    in ``exclude`` (a placeholder such as DataType.UNKNOWN where a real type is needed) are refused.
    """
    member = _member(cls, value, prefix, name_of)
    if member is None or member in exclude:
        known = ", ".join(label(m) for m in cls.__members__.values() if m not in exclude)
        if issubclass(cls, enum.Flag):
            known += f", or a bitwise OR of them (0 to {_mask(cls):#x})"
        given = value.name if isinstance(value, enum.Enum) and value.name else repr(value)
        refuse = invalid_type if _wrong_kind(value) else invalid
        raise refuse(owner, field, f"must be one of {known}", given)
    return member


def _wrong_kind(value: object) -> bool:
    """Whether a value is of no kind an enum is given as (a member, a value, a name, a type): 3.5, a list, True."""
    return isinstance(value, (bool, np.bool_)) or not isinstance(value, (str, int, np.integer, enum.Enum, type,
                                                                          np.dtype))


def _member(cls: type[E], value: object, prefix: str, name_of: Callable[[str], str] | None) -> E | None:
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, enum.Enum) and not isinstance(value, cls)):
        return None  # True is an int to Python, and so is DataType.FLOAT32, but neither is this enum's value
    if isinstance(value, (int, np.integer)):  # members too: TensorFlags(2) holds an undefined bit
        return _by_value(cls, int(value))
    if not isinstance(value, str):
        return None
    parts = value.split("|") if issubclass(cls, enum.Flag) else [value]
    members = [_by_name(cls, part, prefix, name_of) for part in parts]
    if any(m is None for m in members):
        return None
    return functools.reduce(operator.or_, members)  # type: ignore[arg-type]


def _by_value(cls: type[E], value: int) -> E | None:
    if issubclass(cls, enum.Flag):
        # Python keeps undefined bits (and turns -1 into every bit) where DirectML's API would not.
        return cls(value) if value >= 0 and not value & ~_mask(cls) else None
    return cls._value2member_map_.get(value)  # type: ignore[return-value]


def _by_name(cls: type[E], text: str, prefix: str, name_of: Callable[[str], str] | None) -> E | None:
    name = text.strip().upper()
    name = name_of(name) if name_of is not None else name.removeprefix(prefix)
    return cls.__members__.get(name)


def _mask(cls: type[enum.Flag]) -> int:
    return functools.reduce(operator.or_, (m.value for m in cls), 0)


class TensorFlags(enum.IntFlag):
    """DML_TENSOR_FLAGS."""

    NONE = 0
    OWNED_BY_DML = 1

    @classmethod
    def parse(cls, value: object, *, owner: str = "opendml", field: str = "Flags") -> TensorFlags:
        return parse_enum(cls, value, owner, field, prefix="DML_TENSOR_FLAG_")


class ExecutionFlags(enum.IntFlag):
    """DML_EXECUTION_FLAGS. opendml's results never depend on them (see docs/semantics.md)."""

    NONE = 0
    ALLOW_HALF_PRECISION_COMPUTATION = 0x1
    DISABLE_META_COMMANDS = 0x2
    DESCRIPTORS_VOLATILE = 0x4

    @classmethod
    def parse(cls, value: object, *, owner: str = "opendml", field: str = "ExecutionFlags") -> ExecutionFlags:
        return parse_enum(cls, value, owner, field, prefix="DML_EXECUTION_FLAG_")


class AxisDirection(enum.IntEnum):
    """DML_AXIS_DIRECTION: which index wins a tie."""

    INCREASING = 0
    DECREASING = 1

    @classmethod
    def parse(cls, value: object, *, owner: str = "opendml", field: str = "AxisDirection") -> AxisDirection:
        return parse_enum(cls, value, owner, field, prefix="DML_AXIS_DIRECTION_")


class RoundingMode(enum.IntEnum):
    """DML_ROUNDING_MODE: ELEMENT_WISE_ROUND's direction (ties to even; truncation; ties away from zero)."""

    HALVES_TO_NEAREST_EVEN = 0
    TOWARD_ZERO = 1
    TOWARD_INFINITY = 2

    @classmethod
    def parse(cls, value: object, *, owner: str = "opendml", field: str = "RoundingMode") -> RoundingMode:
        return parse_enum(cls, value, owner, field, prefix="DML_ROUNDING_MODE_")


class QuantizationType(enum.IntEnum):
    """DML_QUANTIZATION_TYPE: which QuantizationTensors QUANTIZE and DEQUANTIZE take (feature level 6_3): none,
    a scale, or a scale and a zero point."""

    NONE = 0
    SCALE = 1
    SCALE_ZERO_POINT = 2

    @classmethod
    def parse(cls, value: object, *, owner: str = "opendml", field: str = "QuantizationType") -> QuantizationType:
        return parse_enum(cls, value, owner, field, prefix="DML_QUANTIZATION_TYPE_")

    @property
    def tensor_count(self) -> int:
        """The QuantizationTensorCount it takes: 0, 1 (the scale) or 2 (the scale, then the zero point)."""
        return int(self)


class IsInfinityMode(enum.IntEnum):
    """DML_IS_INFINITY_MODE: which infinities ELEMENT_WISE_IS_INFINITY finds."""

    EITHER = 0
    POSITIVE = 1
    NEGATIVE = 2

    @classmethod
    def parse(cls, value: object, *, owner: str = "opendml", field: str = "InfinityMode") -> IsInfinityMode:
        return parse_enum(cls, value, owner, field, prefix="DML_IS_INFINITY_MODE_")


class NanPolicy(enum.IntEnum):
    """How ARGMIN and ARGMAX treat NaN elements: an opendml extension, not a DirectML field (SPEC 9).

    IGNORE (DirectML's behaviour, the default): NaN elements are skipped; a reduction of NaN only gives the
    first index (INCREASING) or the last (DECREASING). PROPAGATE: a NaN counts as smaller than everything for
    ARGMIN and larger than everything for ARGMAX, so the first NaN in the direction's order wins, as in
    NumPy, PyTorch and ONNX Runtime.
    """

    IGNORE = 0
    PROPAGATE = 1

    @classmethod
    def parse(cls, value: object, *, owner: str = "opendml", field: str = "NanPolicy") -> NanPolicy:
        return parse_enum(cls, value, owner, field, prefix="NAN_POLICY_")


class ReduceFunction(enum.IntEnum):
    """DML_REDUCE_FUNCTION: what REDUCE computes over its axes (values as DirectML's header numbers them)."""

    ARGMAX = 0
    ARGMIN = 1
    AVERAGE = 2
    L1 = 3
    L2 = 4
    LOG_SUM = 5
    LOG_SUM_EXP = 6
    MAX = 7
    MIN = 8
    MULTIPLY = 9
    SUM = 10
    SUM_SQUARE = 11

    @classmethod
    def parse(cls, value: object, *, owner: str = "opendml", field: str = "Function") -> ReduceFunction:
        return parse_enum(cls, value, owner, field, prefix="DML_REDUCE_FUNCTION_")
