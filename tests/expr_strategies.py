"""Hypothesis strategies for element expressions (``opendml.expr``), shared by every lowering's tests.

``expressions(max_depth)`` draws a random well-typed element-wise expression (a ``Store`` at the root)
from every node of the closed set, with random types, shared subtrees and scalar parameters, as an
``ExpressionCase(expr, inputs, scalars)``: ``inputs`` are the operand types (``Load(k, T)`` reads operand
``k`` of type ``inputs[k]``; every operand is read) and ``scalars[k]`` is the typed value of ``Param(k, T)``,
so ``KernelSpec("TEST", case.inputs, case.expr.type, case.expr, case.scalars)`` is a valid kernel.
``operands(inputs, count)`` draws the arrays to run it on, edge values favoured.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from hypothesis import strategies as st

from opendml import expr as ex
from opendml.dtypes import DataType

F32, F16 = DataType.FLOAT32, DataType.FLOAT16
INTEGERS: tuple[DataType, ...] = tuple(sorted(ex.INTEGERS, key=lambda t: t.value))
COMPARED: tuple[DataType, ...] = (F32, *INTEGERS)  # what Less takes
STORED: tuple[DataType, ...] = (F32, F16, *INTEGERS)


class ExpressionCase(NamedTuple):
    expr: ex.Store
    inputs: tuple[DataType, ...]
    scalars: tuple[np.generic, ...]


# --- values ------------------------------------------------------------------------------------------------

# FLOAT64 values whose rounding to FLOAT16 through a float32 would differ from the one rounding of the double (just
# past a FLOAT16 tie, by less than float32 keeps), or that sit on a tie exactly; float32 ties; 64-bit integer limits
# and the integers beyond 2**53.
DOUBLE_EDGES = [1 + 2.0**-11 + 2.0**-40, 1 + 2.0**-11, 1 + 3 * 2.0**-11 - 2.0**-40, 2.0**-25 + 2.0**-60,
                65520.0 - 2.0**-30, 65519.99, 1 + 2.0**-24, 1 + 2.0**-24 + 2.0**-50, 2.0**-149 / 2 + 2.0**-200,
                float(np.finfo(np.float32).max) * (1 + 2.0**-25), 2.0**53 + 2, 2.0**63 - 1024, 2.0**64 - 2048,
                2.0**31 - 0.5, 2.0**32 - 0.5, 127.99999999, 255.5, 1e300, 5e-324, 2.0**-1022]


def float_edges(t: DataType) -> list[float]:
    if t is DataType.FLOAT64:
        largest = float(np.finfo(np.float64).max)
        magnitudes = [*float_edges(F32)[:len(float_edges(F32)) // 2], largest, *DOUBLE_EDGES]
        return [*magnitudes, *(-v for v in magnitudes), math.nan]
    if t is F16:
        largest, normal, smallest = 65504.0, 2.0**-14, 2.0**-24
    else:
        largest, normal, smallest = float(np.finfo(np.float32).max), 2.0**-126, 2.0**-149
    magnitudes = [0.0, 1.0, 0.5, 1.5, 2.5, largest, normal, smallest, normal - smallest, 3 * smallest, math.inf,
                  65504.0 if t is F32 else 2048.0, 65520.0 if t is F32 else 1024.0]  # FLOAT16's overflow threshold
    # Saturate's limits: each integer type's 2**k and the float just below it (127.99999, 2**31 - 128...).
    limits = [2.0**k for k in (7, 8, 15, 16, 31, 32, 63, 64) if 2.0**k <= largest]
    magnitudes += limits + [float(np.nextafter(t.numpy.type(v), t.numpy.type(0))) for v in limits]
    return [*magnitudes, *(-v for v in magnitudes), math.nan]


def integer_edges(t: DataType) -> list[int]:
    low, high = t.integer_range
    # 2**24 + 1 is the first integer float32 rounds; the 2**60 and 2**63 ones round wrong through a double.
    candidates = [low, low + 1, high, high - 1, 0, 1, -1, 2, -2, high // 2, low // 2, 2**24 + 1, -(2**24) - 1,
                  2**24 + 3, 2**60 + 2**36 + 1, -(2**60) - 2**36 - 1, 2**63 + 2**39 + 1]
    return [v for v in candidates if low <= v <= high]


def edges(t: DataType) -> list[int | float]:
    """The edge values of a stored type: limits, zeros, NaN, infinities, subnormals, rounding ties."""
    return list(float_edges(t)) if t.is_float else list(integer_edges(t))


def values(t: DataType) -> st.SearchStrategy[int | float]:
    """Python values that ``t`` holds exactly, its edge values favoured."""
    if t.is_float:
        general: st.SearchStrategy[int | float] = st.floats(width=16 if t is F16 else 32)
        return st.one_of(st.sampled_from(float_edges(t)), general)
    low, high = t.integer_range
    return st.one_of(st.sampled_from(integer_edges(t)), st.integers(low, high))


def operands(inputs: Sequence[DataType], count: int) -> st.SearchStrategy[tuple[np.ndarray, ...]]:
    """One array of ``count`` elements per operand type."""
    return st.tuples(*(_array(t, count) for t in inputs))


def _array(t: DataType, count: int) -> st.SearchStrategy[np.ndarray]:
    def typed(items: list[int | float]) -> np.ndarray:
        return np.array(items, dtype=t.numpy)

    return st.lists(values(t), min_size=count, max_size=count).map(typed)


# --- trees -------------------------------------------------------------------------------------------------

def _subtract_pairs(t: DataType) -> list[tuple[DataType, DataType]]:
    """Operand types whose every difference fits in ``t`` (widened to ``t`` first)."""
    low, high = t.integer_range
    return [(a, b) for a in INTEGERS for b in INTEGERS
            if low <= a.integer_range[0] - b.integer_range[1] and a.integer_range[1] - b.integer_range[0] <= high]


def _add_pairs(t: DataType) -> list[tuple[DataType, DataType]]:
    """Operand types whose every sum fits in ``t`` (widened to ``t`` first)."""
    low, high = t.integer_range
    return [(a, b) for a in INTEGERS for b in INTEGERS
            if low <= a.integer_range[0] + b.integer_range[0] and a.integer_range[1] + b.integer_range[1] <= high]


def _narrower(t: DataType) -> list[DataType]:
    """Integer types whose values ``t`` holds exactly (``t`` itself included)."""
    low, high = t.integer_range
    return [s for s in INTEGERS if low <= s.integer_range[0] and s.integer_range[1] <= high]


class _Builder:
    """Builds one tree top-down, collecting its operands and scalars, and reusing built subtrees."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw
        self.inputs: list[DataType] = []
        self.scalars: list[np.generic] = []
        self.built: dict[ex.ValueType, list[ex.Expr]] = {}

    def choose(self, options: Sequence[str]) -> str:
        return self.draw(st.sampled_from(options))

    def reuse(self) -> bool:
        return self.draw(st.booleans())

    def load(self, t: DataType) -> ex.Expr:
        same = [k for k, s in enumerate(self.inputs) if s == t]
        if same and self.reuse():
            return ex.Load(self.draw(st.sampled_from(same)), t)
        self.inputs.append(t)
        return ex.Load(len(self.inputs) - 1, t)

    def param(self, t: DataType) -> ex.Expr:
        same = [k for k, value in enumerate(self.scalars) if np.dtype(type(value)) == t.numpy]
        if same and self.reuse():
            return ex.Param(self.draw(st.sampled_from(same)), t)
        self.scalars.append(t.numpy.type(self.draw(values(t))))
        return ex.Param(len(self.scalars) - 1, t)

    def leaf(self, t: DataType) -> ex.Expr:
        # The first leaf is a Load, so every tree reads at least one operand.
        if t is F16 or not self.inputs or self.choose(("load", "param")) == "load":
            return self.load(t)
        return self.param(t)

    def value(self, t: ex.ValueType, depth: int) -> ex.Expr:
        """A subtree of type ``t`` at most ``depth`` nodes deep (a BOOL one or two deeper)."""
        reuse = self.built.get(t, [])
        if reuse and self.draw(st.integers(0, 4)) == 0:
            return self.draw(st.sampled_from(reuse))  # a shared subtree: lowerings compute it once
        node = self._new(t, depth)
        self.built.setdefault(t, []).append(node)
        return node

    def _new(self, t: ex.ValueType, depth: int) -> ex.Expr:
        if t == ex.BOOL:
            compared = self.draw(st.sampled_from(COMPARED))
            kind = self.choose(("less", "is number", "sign bit"))
            if kind != "less":
                return (ex.IsNumber if kind == "is number" else ex.SignBit)(self.value(F32, depth - 1))
            return ex.Less(self.value(compared, depth - 1), self.value(compared, depth - 1))
        assert isinstance(t, DataType)
        if depth <= 0:
            return self.leaf(t)
        if t is F16:
            return ex.Select(self.value(ex.BOOL, depth - 1), self.value(F16, depth - 1), self.value(F16, depth - 1))
        kinds = ["leaf", "select"]
        if t is F32:
            kinds += ["to float32", "multiply", "add", "divide", "round", "negate", "sqrt", "remainder"]
        else:
            kinds += ["widen", "saturate"] + (["subtract"] if _subtract_pairs(t) else []) + \
                (["add integers"] if _add_pairs(t) else []) + (["negate"] if t.is_signed else []) + ["bit not"] + \
                (["bit count"] if DataType.UINT8 in _narrower(t) else []) + ["wrapping", "divide", "remainder"] + \
                ["bitwise", "wrap"]
        kind = self.choose(kinds)
        if kind == "leaf":
            return self.leaf(t)
        if kind == "select":
            return ex.Select(self.value(ex.BOOL, depth - 1), self.value(t, depth - 1), self.value(t, depth - 1))
        if kind == "to float32":
            return ex.ToFloat32(self.value(self.draw(st.sampled_from((F16, *INTEGERS))), depth - 1))
        if kind == "wrapping":
            op = self.draw(st.sampled_from(ex.WRAPPING_OPS))
            return ex.Wrapping(self.value(t, depth - 1), self.value(t, depth - 1), op)
        if kind == "remainder" or (kind == "divide" and t is not F32):  # an integer quotient, truncated
            node = ex.Remainder if kind == "remainder" else ex.Divide
            return node(self.value(t, depth - 1), self.value(t, depth - 1))
        if kind in ("multiply", "add", "divide"):
            node = {"multiply": ex.Multiply, "add": ex.Add, "divide": ex.Divide}[kind]
            return node(self.value(F32, depth - 1), self.value(F32, depth - 1))
        if kind == "round":
            return ex.Round(self.value(F32, depth - 1))
        if kind == "bitwise":
            op = self.draw(st.sampled_from(ex.BITWISE_OPS))
            return ex.Bitwise(self.value(t, depth - 1), self.value(t, depth - 1), op)
        if kind == "wrap":  # any integer type's value, modulo t's width
            return ex.Wrap(self.value(self.draw(st.sampled_from(INTEGERS)), depth - 1), t)
        if kind == "bit not":
            return ex.BitNot(self.value(t, depth - 1))
        if kind == "bit count":  # a UINT8, widened to t
            return ex.Widen(ex.BitCount(self.value(self.draw(st.sampled_from(INTEGERS)), depth - 1)), t)
        if kind == "sqrt":
            return ex.Sqrt(self.value(F32, depth - 1))
        if kind == "negate":
            return ex.Negate(self.value(t, depth - 1))
        if kind == "saturate":
            return ex.Saturate(self.value(self.draw(st.sampled_from(COMPARED)), depth - 1), t)
        if kind == "add integers":
            a, b = self.draw(st.sampled_from(_add_pairs(t)))
            return ex.Add(ex.Widen(self.value(a, depth - 1), t), ex.Widen(self.value(b, depth - 1), t))
        if kind == "widen":
            return ex.Widen(self.value(self.draw(st.sampled_from(_narrower(t))), depth - 1), t)
        a, b = self.draw(st.sampled_from(_subtract_pairs(t)))
        return ex.Subtract(ex.Widen(self.value(a, depth - 1), t), ex.Widen(self.value(b, depth - 1), t))


@st.composite
def expressions(draw: st.DrawFn, max_depth: int = 4) -> ExpressionCase:
    """A random well-typed element-wise expression, its operand types and its scalars."""
    builder = _Builder(draw)
    value_type = draw(st.sampled_from((F32, *STORED)))  # FLOAT32 twice: most nodes compute in it
    value = builder.value(value_type, draw(st.integers(0, max_depth)))
    stored = draw(st.sampled_from((F32, F16))) if value_type is F32 else value_type
    return ExpressionCase(ex.Store(value, stored), tuple(builder.inputs), tuple(builder.scalars))
