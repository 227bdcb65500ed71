"""The Numba text of an element expression: each node's scalar Numba expression over its children's locals
(``LOWERINGS``, the Numba column of the table in ``opendml.expr``), and the expression rebuilt node by node in
a generated module (``expression``), which the streaming intrinsic lowers when Numba compiles a kernel.
``codegen`` assembles them into a generated module's functions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ... import expr as ex
from ...dtypes import DataType


def operands(element: ex.Expr, extra: tuple[ex.Expr, ...] = ()) -> tuple[int, ...]:
    """The operands a kernel takes (those its expressions load), in DirectML input order."""
    found = tuple(sorted({k for root in (element, *extra) for k in ex.loads(root)}))
    if not found:
        raise ex.ExpressionError(f"{element!r} loads no operand: an element-wise kernel walks at least one")
    return found


def _constructor(node: ex.Expr, names: dict[ex.Expr, str]) -> str:
    args = []
    for value in node._fields():
        if isinstance(value, ex.Expr):
            args.append(names[value])
        elif isinstance(value, DataType):
            args.append(f"DataType.{value.name}")
        else:
            args.append(repr(value))
    return f"ex.{type(node).__name__}({', '.join(args)})"


def expression(roots: tuple[ex.Store, ...]) -> str:
    """``ROOTS`` (the element, then the extra values) rebuilt node by node, ``ELEMENT`` the first (the
    streaming intrinsic lowers them when Numba compiles a kernel)."""
    names: dict[ex.Expr, str] = {}
    lines = ["def _element():"]
    for root in roots:
        for node in ex.nodes(root):
            if node not in names:
                names[node] = f"e{len(names)}"
                lines.append(f"    {names[node]} = {_constructor(node, names)}")
    lines += [f"    return ({''.join(names[root] + ', ' for root in roots).rstrip()})", "", "",
              "ROOTS = _element()", "ELEMENT = ROOTS[0]", f"OPERANDS = {operands(roots[0], roots[1:])!r}"]
    return "\n".join(lines)


def numpy_type(t: DataType) -> str:
    return f"np.{t.numpy.name}"


def scalar(node: ex.Expr, of: dict[ex.Expr, str], root: bool = False) -> str:
    """One node's Numba expression over its children's locals (the Numba column of expr's table). The
    ``root`` Store gives the stored form (FLOAT16 bits); a Store inside the expression (a fused kernel's
    intermediate) gives its value as the stored type holds it, FLOAT16 rounded and held as float32."""
    lowering = LOWERINGS.get(type(node))
    if lowering is None:
        raise ex.ExpressionError(f"no Numba lowering of {type(node).__name__}")
    return lowering(node, of.__getitem__, root)


def _load(node: ex.Load, v: Callable[[ex.Expr], str], root: bool) -> str:
    return f"half_to_float(a{node.operand})" if node.stored is DataType.FLOAT16 else f"a{node.operand}"


def _to_float32(node: ex.ToFloat32, v: Callable[[ex.Expr], str], root: bool) -> str:
    held = node.value.data_type is DataType.FLOAT16  # already float32 (converted where loaded)
    return v(node.value) if held else f"np.float32({v(node.value)})"


def _add(node: ex.Add, v: Callable[[ex.Expr], str], root: bool) -> str:
    if node.data_type is DataType.FLOAT32:
        return f"{v(node.a)} + {v(node.b)}"
    return f"{numpy_type(node.data_type)}({v(node.a)} + {v(node.b)})"  # type: ignore[arg-type]


def _negate(node: ex.Negate, v: Callable[[ex.Expr], str], root: bool) -> str:
    if node.data_type is DataType.FLOAT32:
        return f"-{v(node.value)}"  # the sign flipped (fneg): -0.0 of +0.0; integers wrap (Numba truncates)
    return f"{numpy_type(node.data_type)}(-{v(node.value)})"  # type: ignore[arg-type]


_WRAPPING = {"+": "wrapping_add", "-": "wrapping_subtract", "*": "wrapping_multiply"}


_BITWISE = {"&": "bitwise_and", "|": "bitwise_or", "^": "bitwise_xor", "<<": "shift_left", ">>": "shift_right"}


def _own(node: ex.Expr, v: Callable[[ex.Expr], str]) -> str:
    """A child's local as its own type exactly (Numba may type an expression wider)."""
    return f"{numpy_type(node.data_type)}({v(node)})"  # type: ignore[arg-type]


def _divide(node: ex.Divide, v: Callable[[ex.Expr], str], root: bool) -> str:
    if node.data_type is DataType.FLOAT32:
        return f"divide({v(node.a)}, {v(node.b)})"
    return f"int_quotient({_own(node.a, v)}, {_own(node.b, v)})"


def _remainder(node: ex.Remainder, v: Callable[[ex.Expr], str], root: bool) -> str:
    if node.data_type is DataType.FLOAT32:
        return f"remainder({v(node.a)}, {v(node.b)})"
    return f"remainder({_own(node.a, v)}, {_own(node.b, v)})"


def _saturate(node: ex.Saturate, v: Callable[[ex.Expr], str], root: bool) -> str:
    if isinstance(node.value, ex.Round):  # one rounding conversion (``arithmetic.saturate``)
        return f"round_saturate_to({v(node.value.value)}, {numpy_type(node.type)})"
    return f"saturate_to({v(node.value)}, {numpy_type(node.type)})"


def _store(node: ex.Store, v: Callable[[ex.Expr], str], root: bool) -> str:
    value = v(node.value)
    if node.type is not DataType.FLOAT16:
        return f"{numpy_type(node.type)}({value})"  # FLOAT64 to FLOAT32: fptrunc, rounded once
    if node.value.data_type is DataType.FLOAT64:  # rounded once from the double (``halves``)
        return f"double_to_half({value})" if root else f"round_double_to_half({value})"
    return f"float_to_half({value})" if root else f"round_to_half({value})"


# A node's lowering: the node, its children's locals (``v(child)``) and whether it is a root Store, to its
# Numba expression.
Lowering = Callable[[Any, Callable[[ex.Expr], str], bool], str]

# One entry per node of ``ex.NODES`` (the Numba column of the table in opendml.expr).
LOWERINGS: dict[type[ex.Expr], Lowering] = {
    ex.Load: _load,
    ex.Param: lambda n, v, root: f"q{n.index}",
    ex.Widen: lambda n, v, root: f"{numpy_type(n.type)}({v(n.value)})",
    ex.Subtract: lambda n, v, root: f"{numpy_type(n.data_type)}({v(n.a)} - {v(n.b)})",
    ex.ToFloat32: _to_float32,
    ex.Multiply: lambda n, v, root: f"{v(n.a)} * {v(n.b)}",
    ex.Add: _add,
    ex.Divide: _divide,
    ex.Wrapping: lambda n, v, root: f"{_WRAPPING[n.op]}({_own(n.a, v)}, {_own(n.b, v)})",
    ex.Remainder: _remainder,
    ex.Negate: _negate,
    ex.BitNot: lambda n, v, root: f"{numpy_type(n.data_type)}(~{v(n.value)})",  # the type's bits (Numba truncates)
    # llvm.ctpop on the value as its own type (so a signed one's bits, never a wider sign-extension of them)
    ex.BitCount: lambda n, v, root: f"bit_count({numpy_type(n.value.data_type)}({v(n.value)}))",
    ex.Sqrt: lambda n, v, root: f"square_root({v(n.value)})",
    ex.Round: lambda n, v, root: f"round_even({v(n.value)})",
    ex.Saturate: _saturate,
    ex.Less: lambda n, v, root: f"{v(n.a)} < {v(n.b)}",  # ordered: false when either is NaN
    ex.IsNumber: lambda n, v, root: f"{v(n.value)} == {v(n.value)}",
    ex.SignBit: lambda n, v, root: f"sign_bit({v(n.value)})",
    ex.Select: lambda n, v, root: f"{v(n.a)} if {v(n.condition)} else {v(n.b)}",
    ex.Store: _store,
    ex.Bitwise: lambda n, v, root: f"{_BITWISE[n.op]}({_own(n.a, v)}, {_own(n.b, v)})",
    ex.Wrap: lambda n, v, root: f"wrap_to({_own(n.value, v)}, {numpy_type(n.type)})",
    ex.Function: lambda n, v, root: f"rounded.{n.name}_{n.precision.name}({v(n.value)})",
    # sitofp or uitofp (nearest even), fpext of a float32 (exact)
    ex.ToFloat64: lambda n, v, root: f"np.float64({v(n.value)})",
    ex.BinaryFunction: lambda n, v, root: f"rounded.{n.name}_{n.precision.name}({v(n.a)}, {v(n.b)})",
}
