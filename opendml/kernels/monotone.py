"""The monotone tail of a reduction's value: the steps an index reduction may apply after its min, not before;
and (below) a value's order in the InputTensor's stored integers.

An ARGMIN (ARGMAX) scan that reduces several elements to one candidate before comparing it (a GPU lane's
16-byte load, a column's group of rows) may reduce the *inner* value and apply the tail once per candidate:
for a tail f that is non-decreasing over numbers, maps NaN to NaN and every number to a number,

    min over the numbers of f(v_i) == f(min over the numbers of v_i)

and the NaN of f(v_i) are the NaN of v_i, so the candidate, its NaN test and every comparison are those of
the element-by-element scan. Which element wins is found afterwards by comparing each element's full value
with the candidate's (ties that f creates, all elements below CLIP's Min for instance, are then found).

The steps that qualify, with a scalar bound ``p`` (NaN bounds are ignored by them, so a number stays one):

- ``Select(Less(p, x), p, x)``: CLIP's Max (``x`` above ``p`` becomes ``p``; NaN ``x`` stays NaN);
- ``Select(Less(x, p), p, x)``: CLIP's Min and THRESHOLD;
- ``Store(x, FLOAT16)`` or ``Store(x, FLOAT32)`` inside an expression: an intermediate's rounding (to nearest
  even is non-decreasing; overflow gives an infinity, a number), and ``ToFloat32`` of such a FLOAT16 value
  (exact).

The inner value is the deepest FLOAT32 node the steps reach (the scan reduces FLOAT32 values).

Anything else ends the tail: a Multiply by a negative scale reverses the order, and an Add of an infinity
turns the opposite infinity into NaN.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from .. import expr as ex
from ..dtypes import DataType


@dataclass(frozen=True)
class MonotoneTail:
    """``element`` as ``outer`` over ``inner``: ``outer`` reads the inner value as ``Load(slot, FLOAT32)``."""

    inner: ex.Expr
    outer: ex.Expr
    slot: int


def clamped(node: ex.Expr) -> ex.Expr | None:
    """The clamped value ``x`` of ``Select(Less(p, x), p, x)`` or ``Select(Less(x, p), p, x)`` (``p`` a
    scalar), else None."""
    if not (isinstance(node, ex.Select) and isinstance(node.condition, ex.Less) and isinstance(node.a, ex.Param)):
        return None
    less, bound, value = node.condition, node.a, node.b
    if (less.a == bound and less.b == value) or (less.a == value and less.b == bound):
        return value
    return None


def _step(node: ex.Expr) -> ex.Expr | None:
    """The value a qualifying step of the tail applies to, else None."""
    if isinstance(node, ex.Store) and node.value.data_type is DataType.FLOAT32:
        return node.value
    if isinstance(node, ex.ToFloat32) and isinstance(node.value, ex.Store):
        return node.value  # a FLOAT16 intermediate's value: the Store below is the next step
    value = clamped(node)
    if value is not None and value.data_type is DataType.FLOAT32:
        return value
    return None


def _rebuilt(node: ex.Expr, inner: ex.Expr, placeholder: ex.Expr) -> ex.Expr:
    """The tail from ``node`` down with ``inner`` replaced by ``placeholder``."""
    if node == inner:
        return placeholder
    if isinstance(node, ex.Store):
        return ex.Store(_rebuilt(node.value, inner, placeholder), node.type)
    if isinstance(node, ex.ToFloat32):
        return ex.ToFloat32(_rebuilt(node.value, inner, placeholder))
    assert isinstance(node, ex.Select) and isinstance(node.condition, ex.Less)
    value = _rebuilt(node.b, inner, placeholder)
    less = node.condition
    condition = ex.Less(node.a, value) if less.a == node.a else ex.Less(value, node.a)
    return ex.Select(condition, node.a, value)


@functools.lru_cache(maxsize=256)  # a kernel's source asks it for every element it renders
def monotone_tail(element: ex.Expr) -> MonotoneTail | None:
    """``element`` split into its inner value and the longest qualifying tail (at least one step), or None
    where it ends in no such step. The placeholder's operand slot follows every operand ``element`` reads."""
    inner, node = None, element
    while (below := _step(node)) is not None:
        node = below
        if node.data_type is DataType.FLOAT32:
            inner = node
    if inner is None:
        return None
    slot = max(ex.loads(element), default=-1) + 1
    return MonotoneTail(inner, _rebuilt(element, inner, ex.Load(slot, DataType.FLOAT32)), slot)


# --- a value's order in the InputTensor's stored integers ------------------------------------------------------
#
# A column scan holds one output's other operands constant (a per-column scale and zero point), so each
# element's value is f(x) for one function f of the stored integer x. DEQUANTIZE_LINEAR's f(x) =
# (x - zero_point) * scale, and the clamps and roundings after it, is non-decreasing in x wherever the scale
# is positive and finite: then the least value of several elements is f of their least integer (the
# greatest, for ARGMAX), found by integer min instructions over packed bytes, and f runs once per candidate.
# Which steps qualify, x's side being the argument that depends on x and the other side constant:
#
# - Load(0) of an integer type, Widen of it, and exact integer Subtract or Add of a constant;
# - ToFloat32 (rounding to nearest is non-decreasing) and Store to FLOAT32 or FLOAT16 (likewise; an
#   overflow gives an infinity, still a number);
# - Multiply by a constant factor, where the factor is positive and finite when the kernel runs (checked
#   there, per output): then a number times it is a number, and rounding keeps the order;
# - the clamps of the monotone tail (above).
#
# Each step maps numbers to numbers, so no element's value is NaN and the NaN rules never come into play.
# Anything else (a float Add: +inf + -inf is NaN; a Divide; a Multiply of two values of x) gives no order.


@dataclass(frozen=True)
class RawOrder:
    """The element is non-decreasing in the InputTensor's stored integer (operand 0) wherever each of
    ``factors``, an expression of the constant operands and scalars, is positive and finite."""

    factors: tuple[ex.Expr, ...]


def raw_order(element: ex.Expr, constant: frozenset[int]) -> RawOrder | None:
    """``element``'s order in operand 0's stored integer, given the operands ``constant`` holds fixed (their
    values are those of one output); None where the steps above do not show one."""
    factors = _ordered(element, constant)
    return None if factors is None else RawOrder(factors)


def _ordered(node: ex.Expr, constant: frozenset[int]) -> tuple[ex.Expr, ...] | None:
    """The factors under which ``node`` is non-decreasing in operand 0, else None."""
    read = ex.loads(node)
    if 0 not in read:
        return () if set(read) <= constant else None
    if isinstance(node, ex.Load):
        return () if node.stored.is_integer else None
    if isinstance(node, ex.Widen | ex.ToFloat32) or (isinstance(node, ex.Store) and node.type.is_float):
        return _ordered(node.value, constant)
    if isinstance(node, ex.Subtract | ex.Add | ex.Multiply):
        if isinstance(node, ex.Add) and node.data_type is DataType.FLOAT32:
            return None
        sides = [node.a, node.b] if not isinstance(node, ex.Subtract) else [node.a]
        varying = [side for side in (node.a, node.b) if 0 in ex.loads(side)]
        if len(varying) != 1 or varying[0] not in sides:
            return None
        other = node.b if varying[0] is node.a else node.a
        below, fixed = _ordered(varying[0], constant), _ordered(other, constant)
        if below is None or fixed is None:
            return None
        return (*below, other) if isinstance(node, ex.Multiply) else below
    value = clamped(node)
    return None if value is None else _ordered(value, constant)
