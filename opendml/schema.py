"""Operator schemas as data: tensor fields and DirectML's support tables, read by one validator."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from .dtypes import DataType
from .feature_levels import FeatureLevel


@dataclass(frozen=True)
class TensorField:
    """One tensor of an operator, in DirectML's binding order.

    An element of a tensor array (QUANTIZE's QuantizationTensors, bound one after another as DirectML binds an
    array's tensors) is a field of its own, named ``"QuantizationTensors[0]"``: ``index`` is its position, and
    the description holds the array as a sequence; an element past the array's end is absent.
    """

    name: str  # DirectML's field name, "InputTensor"
    kind: Literal["input", "output"]
    optional: bool = False
    index: int | None = None  # an element of a tensor array: its position in the array

    @property
    def attribute(self) -> str:
        """The snake_case attribute holding this tensor (or its array) on a description ("input_tensor")."""
        return snake_case(self.name.partition("[")[0])

    def value(self, desc: object) -> object:
        """This tensor of a description (None where an optional one, or an array's element, is absent); a
        malformed array gives the array itself as its first element, for the caller to refuse."""
        value = getattr(desc, self.attribute)
        if self.index is None:
            return value
        if not isinstance(value, (list, tuple)):
            return value if self.index == 0 else None
        return value[self.index] if self.index < len(value) else None


@dataclass(frozen=True)
class SupportRow:
    """One "DML_FEATURE_LEVEL_X and above" table of an operator page."""

    level: FeatureLevel
    dimensions: tuple[int, int]  # the lowest and highest dimension count accepted
    types: Mapping[str, frozenset[DataType]]  # tensor field name -> data types accepted
    may_be_absent: frozenset[str] = field(default_factory=frozenset)  # optional tensors allowed out


@dataclass(frozen=True)
class OperatorSchema:
    """What the validator needs to know about an operator, all of it data."""

    name: str  # DirectML's name without the DML_OPERATOR_ prefix
    introduced: FeatureLevel
    tensors: tuple[TensorField, ...]
    rows: tuple[SupportRow, ...]
    in_place: bool = False

    @property
    def inputs(self) -> tuple[TensorField, ...]:
        return tuple(t for t in self.tensors if t.kind == "input")

    @property
    def outputs(self) -> tuple[TensorField, ...]:
        return tuple(t for t in self.tensors if t.kind == "output")

    def row_at(self, level: FeatureLevel) -> SupportRow | None:
        """The table in force at ``level``: the highest one at or below it."""
        rows = [row for row in self.rows if row.level <= level]
        return max(rows, key=lambda row: row.level) if rows else None


def snake_case(name: str) -> str:
    """DirectML field name to Python attribute name: ``ZeroPointTensor`` -> ``zero_point_tensor``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
