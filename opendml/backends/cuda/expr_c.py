"""The CUDA C lowering of element expressions (``opendml.expr``): one C temporary per node, each node's C
expression from its entry of ``LOWERINGS`` (``node_c``), and the device functions kernels call.

Values are held in their compute type (``codegen.COMPUTE_TYPE``): FLOAT16 as its float value, 8- and
16-bit integers in 32 bits (every integer node is exact, so the width never shows), BOOL as ``bool``.
Float math, conversions and comparisons go through the PTX helpers of ``codegen.PRELUDE`` (division,
rounding and saturating conversions through those of ``ARITHMETIC``), which no compiler setting can change.
``Param(k, T)`` is the kernel argument ``q{k}`` in T's compute type, never a literal, so operators that
differ only in scalar values share one compiled kernel.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from ... import expr as ex
from ...dtypes import DataType
from ...kernels.monotone import MonotoneTail
from . import rounded_binary_c, rounded_c
from .codegen import C_TYPE, COMPUTE_NUMPY
from .node_c import (
    ARITHMETIC,
    ARITHMETIC_NODES,
    BYTES,
    CLAMPS,
    DOUBLES,
    LOWERINGS,
    SMALL_TO_FLOAT,
    Lowering,
    Options,
    clamp_bounds,
    holds_double,
    unsupported,
)
from .node_conversions_c import held_type, storage_form

__all__ = [
    "ARITHMETIC",
    "BYTES",
    "CLAMPS",
    "C_TYPE",
    "DOUBLES",
    "LOWERINGS",
    "SMALL_TO_FLOAT",
    "Lowering",
    "Options",
    "clamp_bounds",
    "held_type",
    "unsupported",
]


def _temporary_type(node: ex.Expr, root: bool) -> str:
    return C_TYPE[node.type] if isinstance(node, ex.Store) and root else held_type(node.data_type)


def body(expr: ex.Expr, stored: bool = True, small: bool = False) -> tuple[list[str], str]:
    """The statements computing ``expr``, one ``const`` temporary per distinct node, and the result's name.
    Only the root Store gives the storage form, where ``stored`` (an element-wise kernel's output); any other
    Store is a value of its compute type (a reduction compares a FLOAT16 intermediate as its value).
    ``small``: small integers convert to float through ``small_i2f`` (SMALL_TO_FLOAT must precede)."""
    lines, (result,) = bodies([(expr, stored)], small)
    return lines, result


def bodies(roots: Sequence[tuple[ex.Expr, bool]], small: bool = False, packed: frozenset[int] = frozenset(),
           bounds: frozenset[int] = frozenset()) -> tuple[list[str], list[str]]:
    """``body`` of several expressions at once (a kernel's value and its extra outputs), each distinct node
    computed once for all of them, and each root's result name. A root given ``stored`` True that is a
    Store gets its storage form on a line of its own, so the same Store met inside another root stays a
    value there. ``packed``: 8-bit operands given as a word and a byte place (BYTES)."""
    names: dict[ex.Expr, str] = {}
    lines: list[str] = []

    at = Options(small, packed, bounds)

    def lower(node: ex.Expr) -> str:
        lowering = LOWERINGS.get(type(node))
        if lowering is None:
            raise unsupported("CUDA", "element expression", "must use the nodes of opendml.expr",
                              type(node).__name__)
        return lowering(node, names.__getitem__, at)

    results = []
    for root, stored in roots:
        storage = stored and isinstance(root, ex.Store)
        for node in ex.nodes(root.value if storage else root):  # type: ignore[attr-defined]
            if node not in names:
                lines.append(f"const {_temporary_type(node, False)} t{len(lines)} = {lower(node)};")
                names[node] = f"t{len(lines) - 1}"
        if storage:
            assert isinstance(root, ex.Store)
            value = storage_form(root.type, root.value, names[root.value])
            lines.append(f"const {_temporary_type(root, True)} t{len(lines)} = {value};")
            results.append(f"t{len(lines) - 1}")
        else:
            results.append(names[root])
    return _live(lines, results), results


def _live(lines: list[str], results: Sequence[str]) -> list[str]:
    """The statements the ``results`` depend on: a lowering that reads a node's operands directly (the
    offset difference) leaves the node's own temporary unread, which compilers warn about."""
    kept: list[str] = []
    wanted = set(results)
    for line in reversed(lines):
        name = line.split(" = ", 1)[0].rsplit(" ", 1)[1]
        if name in wanted:
            kept.append(line)
            wanted.update(re.findall(r"\bt\d+\b", line.split(" = ", 1)[1]))
    return kept[::-1]


def _params(exprs: Sequence[ex.Expr]) -> dict[int, DataType]:
    return {k: t for expr in exprs for k, t in ex.params(expr).items()}


def scalar_parameters(expr: ex.Expr, extra: Sequence[ex.Expr] = ()) -> list[str]:
    """The kernel (and device function) parameters of the scalars of the expression and of ``extra`` (a
    kernel's extra outputs), in index order."""
    return [f"{held_type(t)} q{k}" for k, t in sorted(_params([expr, *extra]).items())]


def scalar_names(expr: ex.Expr, extra: Sequence[ex.Expr] = ()) -> list[str]:
    return [f"q{k}" for k in sorted(_params([expr, *extra]))]


def launch_scalars(expr: ex.Expr, scalars: Sequence[np.generic],
                   extra: Sequence[ex.Expr] = ()) -> tuple[np.generic, ...]:
    """The kernel arguments of ``scalars``: typed NumPy scalars of each parameter's compute type."""
    types = _params([expr, *extra])  # widening casts: exact, and every bit of a float32 (NaN payloads too) kept
    return tuple(_as(COMPUTE_NUMPY[held_type(types[k])], value) for k, value in enumerate(scalars))


def _as(numpy_type: type, value: np.generic) -> np.generic:
    return value.astype(numpy_type)  # a NumPy scalar stays one


def device_function(name: str, result_type: str, operands: Sequence[tuple[int, DataType]], expr: ex.Expr,
                    stored: bool = True, small: bool = False, extra: Sequence[ex.Store] = (),
                    packed: frozenset[int] = frozenset(), helpers: bool = True,
                    bounds: frozenset[int] = frozenset()) -> str:
    """``result_type name(a{k}..., q{k}...)`` computing ``expr`` from stored operands and scalars (a root
    Store in its storage form where ``stored``, else as a value; ``small`` as in ``body``). Each ``extra``
    Store is computed beside it, sharing every common node, and written in its storage form through a
    reference parameter ``r1, r2...`` after the scalars. ``helpers``: preceded by the helper functions it
    calls (BYTES, ARITHMETIC, CLAMPS), unless an earlier function of the source defines them; ``bounds`` as in
    ``bodies``."""
    lines, (result, *written) = bodies([(expr, stored), *((value, True) for value in extra)], small, packed, bounds)
    parameters = [f"unsigned int a{k}, unsigned int s{k}" if k in packed else f"{C_TYPE[t]} a{k}" for k, t in operands]
    parameters += scalar_parameters(expr, extra)
    parameters += [f"{C_TYPE[value.type]}& r{j}" for j, value in enumerate(extra, start=1)]
    lines += [f"r{j} = {value};" for j, value in enumerate(written, start=1)]
    statements = "\n    ".join([*lines, f"return {result};"])
    uses = helpers and any(isinstance(node, ARITHMETIC_NODES) for root in (expr, *extra) for node in ex.nodes(root))
    clamps = helpers and any("clamp_above(" in line or "clamp_below(" in line for line in lines)
    doubles = helpers and holds_double((expr, *extra))
    return ((BYTES if packed and helpers else "") + (ARITHMETIC if uses else "") + (CLAMPS if clamps else "")
            + (DOUBLES if doubles else "") + rounded_c.helpers((expr, *extra))
            + rounded_binary_c.helpers((expr, *extra))
            + f"__device__ __forceinline__ {result_type} {name}({', '.join(parameters)}) {{\n    {statements}\n}}\n")


def call(name: str, operands: Sequence[str], expr: ex.Expr, extra: Sequence[ex.Expr] = (),
         results: Sequence[str] = ()) -> str:
    """A call of ``name`` (made by ``device_function``) on these operand expressions and the scalars, its
    extra outputs written to ``results`` (lvalues, one per ``extra``)."""
    return f"{name}({', '.join([*operands, *scalar_names(expr, extra), *results])})"


def apply_function(operator: str, inputs: Sequence[DataType | None], element: ex.Expr,
                   extra: Sequence[ex.Store] = (), packed: frozenset[int] = frozenset(),
                   bounds: frozenset[int] = frozenset()) -> str:
    """An element-wise kernel's ``apply``: every present operand in (``packed`` ones as a word and a byte's
    place, BYTES), the stored output value out (and each extra output's through its reference)."""
    if not isinstance(element, ex.Store):
        raise unsupported(operator, "element expression", "must be a Store for an element-wise kernel",
                          type(element).__name__)
    operands = [(k, t) for k, t in enumerate(inputs) if t is not None]
    return device_function("apply", C_TYPE[element.type], operands, element, extra=extra, packed=packed,
                           bounds=bounds)


def value_type(operator: str, element: ex.Expr) -> DataType:
    """The type a reduction compares: a float or integer value (FLOAT16 held as its float value). A root
    Store is a fused intermediate's value as its type holds it (FLOAT32 rounded to half, read back)."""
    t = element.data_type
    if t == ex.BOOL:
        raise unsupported(operator, "reduction value", "must be a number, not a BOOL value", element)
    return t  # type: ignore[return-value]


def value_function(operator: str, inputs: Sequence[DataType | None], element: ex.Expr,
                   extra: Sequence[ex.Store] = (), name: str = "value", packed: frozenset[int] = frozenset(),
                   helpers: bool = True, bounds: frozenset[int] = frozenset()) -> str:
    """A reduction's ``value``: one element of each present operand in (the InputTensor's, and a fused
    prologue's other operands'), the value compared out, and each extra output's stored value through its
    reference (computed where the value is, from the same temporaries). ``name``: another function of the
    same operands (a monotone tail's inner value); ``helpers`` and ``bounds`` as in ``device_function``."""
    operands = [(k, t) for k, t in enumerate(inputs) if t is not None]
    read = {k for expression in (element, *extra) for k in ex.loads(expression)}
    if not read <= {k for k, _ in operands}:
        raise unsupported(operator, "reduction value", f"must read only its operands {[k for k, _ in operands]}",
                          sorted(read))
    # The conversion runs once per element compared, beside few other instructions: a quarter-rate one
    # would bound the scan (element-wise kernels keep cvt.rn, which their stores outweigh).
    function = device_function(name, held_type(value_type(operator, element)), operands, element,
                               stored=False, small=True, extra=extra, packed=packed, helpers=helpers, bounds=bounds)
    return (SMALL_TO_FLOAT if helpers and "small_i2f(" in function else "") + function


def tail_functions(operator: str, inputs: Sequence[DataType | None], tail: MonotoneTail,
                   packed: frozenset[int] = frozenset(), bounds: frozenset[int] = frozenset()) -> str:
    """``inner`` (the inner value of each element, from the operands ``value`` takes, ``packed`` ones as
    words) and ``outer`` (the tail, from one inner value) of a monotone tail (``opendml.kernels.monotone``),
    to follow ``value``: the inner value is part of the value, so ``value_function`` has defined every
    helper it needs but BYTES (the tail's steps need none but CLAMPS, which the value's clamps defined, given
    the same ``bounds``)."""
    value = held_type(value_type(operator, tail.outer))
    inner = value_function(operator, inputs, tail.inner, name="inner", packed=packed, helpers=False, bounds=bounds)
    outer = device_function("outer", value, [(tail.slot, DataType.FLOAT32)], tail.outer, stored=False,
                            helpers=False, bounds=bounds)
    return (BYTES if packed else "") + inner + outer
