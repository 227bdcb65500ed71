"""Kernel specifications: what every backend compiles, in place of a choice by operator name.

An operator's definition turns its validated description into a ``KernelSpec``: the operand types (in
DirectML's input order, None for an absent optional tensor), the output type, the element expression
(``opendml.expr``) and, for a reduction, a ``Reduction`` record. Backends compile the structure
(``KernelSpec.key``) and pass ``scalars`` as kernel arguments, so operators that differ only in their
field values (a new Min) share one compiled kernel (on CUDA, one per class of clamp bound: a nonzero
number's clamp is one min or max instruction, ``expr_c.CLAMPS``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import DataType
from ..enums import AxisDirection, NanPolicy


class ReductionKind(enum.Enum):
    """Which element an index reduction finds: the smallest (ARGMIN) or the largest (ARGMAX). Backends run
    both on one engine: ARGMAX compares in the reversed order."""

    ARGMIN = "ARGMIN"
    ARGMAX = "ARGMAX"


@dataclass(frozen=True)
class Reduction:
    """An index reduction over ``axes``: the element expression gives the values compared."""

    kind: ReductionKind
    axes: tuple[int, ...]
    direction: AxisDirection
    nan_rule: NanPolicy  # IGNORE: NaN elements skipped; PROPAGATE: a NaN beats every number
    index_type: DataType


@dataclass(frozen=True)
class Accumulation:
    """A value reduction over ``axes`` (REDUCE's functions other than ARGMIN and ARGMAX, whose index
    reductions are ``Reduction`` records): ``function`` is a ``ReduceFunction``'s name, the output holds values
    of the spec's output type. The element expression is the input's own elements (``Load(0, T)``)."""

    function: str
    axes: tuple[int, ...]


@dataclass(frozen=True)
class Selection:
    """TOP_K's selection along ``axis``: the ``k`` first elements of each sequence in the order of (value,
    index), values decreasing (``largest``) or increasing, NaN after every number, ties by ascending index
    (docs/semantics.md, **TOP_K**). The spec's output holds the values; the kernel writes the indices, of
    ``index_type``, to a second output."""

    axis: int
    k: int
    largest: bool
    index_type: DataType


@dataclass(frozen=True)
class Normalization:
    """SOFTMAX's, LOG_SOFTMAX's or HARDMAX's (``function``) normalization over ``axes``: each output element from
    its whole row (the elements sharing its coordinates off the axes), by the composition of correctly rounded
    steps of docs/semantics.md 9g. The spec's output has the input's sizes."""

    function: str
    axes: tuple[int, ...]


@dataclass(frozen=True)
class KernelSpec:
    """One operator as a backend sees it.

    Element-wise (``reduction`` None): ``element`` is a ``Store`` of the output type. Reduction: ``element``
    is the value of each input element compared (a ``Load`` of the input, or a fused chain's value: its
    prologue) and the output holds indices of ``reduction.index_type``.

    ``extra`` (a fused kernel's intermediates that are also graph outputs) are more values the kernel
    writes, each a ``Store`` over the same operands and scalars, to an output of its own (outputs 1, 2...
    after the main one), element for element over the kernel's iteration: the output's sizes for an
    element-wise kernel, the reduced input's sizes for a reduction. A backend lowers them where
    ``Backend.fused_outputs`` says so.
    """

    operator: str
    inputs: tuple[DataType | None, ...]
    output: DataType
    element: ex.Expr
    scalars: tuple[np.generic, ...] = ()
    reduction: Reduction | None = None
    extra: tuple[ex.Store, ...] = ()
    accumulation: Accumulation | None = None  # a value reduction (REDUCE's SUM...): never with ``reduction``
    selection: Selection | None = None  # TOP_K's values and indices: never with another record
    normalization: Normalization | None = None  # SOFTMAX's and its kin's rows: never with another record

    def __post_init__(self) -> None:
        for value in self.extra:
            if not isinstance(value, ex.Store):
                raise ex.ExpressionError(f"{self.operator}: an extra output stores its value; got {value!r}")
        for expression in (self.element, *self.extra):
            for k, t in ex.loads(expression).items():
                if k >= len(self.inputs) or self.inputs[k] != t:
                    raise ex.ExpressionError(f"{self.operator}: Load({k}, {t.name}) reads no such operand")
        wanted = {k: t for expression in (self.element, *self.extra) for k, t in ex.params(expression).items()}
        if sorted(wanted) != list(range(len(self.scalars))):
            raise ex.ExpressionError(f"{self.operator}: parameters {sorted(wanted)} for {len(self.scalars)} scalars")
        for k, t in wanted.items():
            if np.dtype(type(self.scalars[k])) != t.numpy:
                raise ex.ExpressionError(f"{self.operator}: scalar {k} is not {t.name}")
        records = [r for r in (self.reduction, self.accumulation, self.selection, self.normalization)
                   if r is not None]
        if len(records) > 1:
            raise ex.ExpressionError(f"{self.operator}: an index reduction, a value reduction, a selection or a "
                                     "normalization, one at most")
        if not self.is_reduction and not (isinstance(self.element, ex.Store) and self.element.type == self.output):
            raise ex.ExpressionError(f"{self.operator}: an element-wise kernel's expression stores {self.output.name}")

    @property
    def key(self) -> tuple:
        """What a compiled kernel depends on: everything but the scalars' values."""
        return self.operator, self.inputs, self.output, self.element, self.reduction, self.extra, self.accumulation, \
            self.selection, self.normalization

    @property
    def is_reduction(self) -> bool:
        """An index reduction (``reduction``), a value reduction (``accumulation``), a selection
        (``selection``) or a normalization (``normalization``): not element-wise."""
        return (self.reduction is not None or self.accumulation is not None or self.selection is not None
                or self.normalization is not None)


class Scalars:
    """Collects an expression's parameters in order: ``add`` returns the Param node of a new scalar."""

    def __init__(self) -> None:
        self.values: list[np.generic] = []

    def add(self, value: np.generic, data_type: DataType) -> ex.Param:
        self.values.append(data_type.numpy.type(value))
        return ex.Param(len(self.values) - 1, data_type)
