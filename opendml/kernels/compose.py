"""Composing element expressions: one kernel's expression made of several operators' expressions.

A consumer reads an intermediate through ``Load(k, T)``. In the composed expression that Load becomes the
producer's expression read back as memory of type T would hold it (``read_back``): ``Store(v, T)`` used as
a value where storing rounds (FLOAT32 to FLOAT16: rounded once to half, then read back exactly), ``v``
itself where T holds v unchanged (FLOAT32, integers: a Store would change nothing). So a composed kernel
gives the bits of its operators run one by one, each intermediate rounded to its own type.

Operands and scalars renumber: ``Composer`` gives each distinct external operand (a graph input, a value
written by another kernel) one ``Load`` index, in the order first met, and appends each operator's scalars
after those of the operators composed before it.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import numpy as np

from .. import expr as ex
from ..dtypes import DataType
from .spec import KernelSpec


def substitute(expr: ex.Expr, loads: Mapping[int, ex.Expr], param_offset: int = 0) -> ex.Expr:
    """``expr`` with each ``Load(k, T)`` replaced by ``loads[k]`` (of type T) and each ``Param(j, T)`` by
    ``Param(j + param_offset, T)``; shared subtrees stay shared."""
    rebuilt: dict[ex.Expr, ex.Expr] = {}
    for node in ex.nodes(expr):
        if isinstance(node, ex.Load):
            new = loads[node.operand]
            if new.data_type != node.stored:
                raise ex.ExpressionError(f"{node!r} replaced by a value of {new.data_type}")
        elif isinstance(node, ex.Param):
            new = ex.Param(node.index + param_offset, node.type)
        else:
            fields = [rebuilt[f] if isinstance(f, ex.Expr) else f for f in node._fields()]
            new = type(node)(*fields)
        rebuilt[node] = new
    return rebuilt[expr]


def read_back(stored: ex.Expr) -> ex.Expr:
    """The value an element-wise expression (a root ``Store``) leaves in memory, as a reader loads it."""
    if not isinstance(stored, ex.Store):
        raise ex.ExpressionError(f"an intermediate is a stored value; got {stored!r}")
    if stored.value.data_type == stored.type:
        return stored.value  # the type holds the value as it is: no rounding to express
    return stored


class Composer:
    """Builds one kernel from several specs: ``operand`` numbers external operands, ``add`` composes a
    spec over given operand values, ``spec`` makes the composed KernelSpec."""

    def __init__(self) -> None:
        self._operands: dict[Hashable, int] = {}
        self.inputs: list[DataType] = []
        self.scalars: list[np.generic] = []

    def operand(self, key: Hashable, data_type: DataType) -> ex.Load:
        """The Load of the external operand ``key`` (one index per distinct key, in the order first asked)."""
        index = self._operands.get(key)
        if index is None:
            index = self._operands[key] = len(self.inputs)
            self.inputs.append(data_type)
        elif self.inputs[index] != data_type:
            raise ex.ExpressionError(f"operand {key!r} read as {data_type.name} and {self.inputs[index].name}")
        return ex.Load(index, data_type)

    def add(self, spec: KernelSpec, inputs: Sequence[ex.Expr | None]) -> ex.Expr:
        """``spec``'s element over ``inputs`` (one value per operand of ``spec``, None where it reads none),
        its scalars appended to the composed kernel's. A reduction's element is the value it compares: over
        a computed input, that input's value (its prologue)."""
        loads = {k: value for k, value in enumerate(inputs) if value is not None}
        composed = substitute(spec.element, loads, len(self.scalars))
        self.scalars.extend(spec.scalars)
        return composed

    def spec(self, operator: str, element: ex.Expr, extra: Sequence[ex.Store] = ()) -> KernelSpec:
        """The composed element-wise KernelSpec (``element``: a root ``Store``, as ``add`` returns), writing
        the values ``extra`` too (``KernelSpec.extra``: stores as ``add`` returns them)."""
        if not isinstance(element, ex.Store):
            raise ex.ExpressionError(f"{operator}: an element-wise kernel stores its value; got {element!r}")
        return KernelSpec(operator, tuple(self.inputs), element.type, element, tuple(self.scalars), None,
                          tuple(extra))

    def reduction_spec(self, operator: str, element: ex.Expr, reduction: KernelSpec,
                       extra: Sequence[ex.Store] = ()) -> KernelSpec:
        """The composed KernelSpec of ``reduction`` comparing ``element`` (as ``add`` returns for it), writing
        the values ``extra`` over its input's elements too."""
        if reduction.reduction is None:
            raise ex.ExpressionError(f"{reduction.operator}: not a reduction")
        return KernelSpec(operator, tuple(self.inputs), reduction.output, element, tuple(self.scalars),
                          reduction.reduction, tuple(extra))
