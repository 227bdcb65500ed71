"""The NumPy lowering of element expressions: whole arrays, node by node (the NumPy CPU path).

Every node maps onto a NumPy function with an explicit result type (see the table in ``opendml.expr``),
one entry of ``LOWERINGS`` per node; FLOAT16 data is converted to float32 exactly and stored back rounded
once, as the other lowerings do.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from .. import expr as ex
from ..dtypes import DataType
from ..rounded import evaluate as rounded


class Inputs(NamedTuple):
    """What a node reads besides its children's values: the operands' arrays and the scalars."""

    operands: Sequence[np.ndarray | None]
    scalars: Sequence[np.generic]


def _load(node: ex.Load, operands: Sequence[np.ndarray | None]) -> np.ndarray:
    array = operands[node.operand]
    assert array is not None, f"operand {node.operand} is absent"
    return np.asarray(array, dtype=node.stored.numpy)


def _widen(node: ex.Widen, value: np.ndarray) -> np.ndarray:
    return value.astype(node.type.numpy)


def _to_float32(node: ex.ToFloat32, value: np.ndarray) -> np.ndarray:
    return value.astype(np.float32)  # integers: nearest even (C conversion); FLOAT16: exact


def _saturate(node: ex.Saturate, value: np.ndarray) -> np.ndarray:
    """The value as ``node.type``, truncated toward zero, NaN as 0, beyond the type's range its limits."""
    target = node.type.numpy
    low, high = node.type.integer_range
    if value.dtype.kind != "f":  # an integer: clipped in its own type to the limits it can reach, exactly
        source_low, source_high = np.iinfo(value.dtype).min, np.iinfo(value.dtype).max
        bounds = (value.dtype.type(max(low, min(source_low, high))), value.dtype.type(min(high, max(source_high, low))))
        return np.clip(value, *bounds).astype(target)
    whole = np.trunc(np.asarray(value, np.float64))  # float32 values are exact as doubles (FLOAT64 ones are doubles)
    whole = np.where(np.isnan(whole), 0.0, whole)
    # low and high + 1 are 0 or powers of two, so exact as doubles: compared exactly, where a clip to high
    # itself would round it (2**63 - 1 is no double) and the conversion would overflow.
    over, under = whole >= float(high + 1), whole < float(low)
    inside = np.where(over | under, 0.0, whole).astype(target)  # every value left fits the type
    return np.where(over, target.type(high), np.where(under, target.type(low), inside))


def _safe_divisor(b: np.ndarray) -> np.ndarray:
    """The integer divisor with 0 (and, signed, -1) made 1: the quotient and remainder by it never trap or warn,
    and the callers put the defined answers for those divisors in place."""
    special = (b == 0) | (b == -1) if np.issubdtype(b.dtype, np.signedinteger) else (b == 0)
    return np.where(special, b.dtype.type(1), b)


def _divide(node: ex.Divide, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """FLOAT32 IEEE division; integers truncated toward zero (x / 0 is 0, x / -1 is -x wrapping)."""
    if node.data_type is DataType.FLOAT32:
        return np.divide(a, b, dtype=np.float32)
    return integer_quotient(a, b)


def integer_quotient(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer a / b of one type truncated toward zero; x / 0 is 0, x / -1 is -x wrapping."""
    t = np.asarray(b).dtype
    a, b = np.asarray(a, t), np.asarray(b, t)
    safe = _safe_divisor(b)
    floor = np.floor_divide(a, safe)
    # The floor quotient is one less than the truncated one where the remainder is nonzero and the signs differ
    # (unsigned types: never); that + 1 cannot overflow.
    inexact = (np.remainder(a, safe) != 0) & ((a < 0) != (safe < 0))
    quotient = np.add(floor, inexact.astype(t), dtype=t)
    quotient = np.where(b == 0, t.type(0), quotient)
    if np.issubdtype(t, np.signedinteger):
        quotient = np.where(b == -1, np.negative(a, dtype=t), quotient)  # wrapping: the smallest is its own
    return quotient


def _remainder(node: ex.Remainder, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """FLOAT32 fmod (exact); integers C's truncated remainder, x % 0 is 0."""
    if node.data_type is DataType.FLOAT32:
        return np.fmod(a, b, dtype=np.float32)
    t = node.data_type.numpy  # type: ignore[union-attr]
    a, b = np.asarray(a, t), np.asarray(b, t)
    return np.fmod(a, _safe_divisor(b))  # integer fmod is C's %; by 1, 0


_WRAPPING = {"+": np.add, "-": np.subtract, "*": np.multiply}

_BITS_OF_BYTE = np.array([bin(b).count("1") for b in range(256)], np.uint8)


def _bit_count(value: np.ndarray) -> np.ndarray:
    """Each element's bits set, summed over its bytes (NumPy before 2.0 has no ``bitwise_count``)."""
    flat = np.ascontiguousarray(value).reshape(-1)  # a 0-d value or a broadcast view: its elements, packed
    counts = _BITS_OF_BYTE[flat.view(np.uint8)].reshape(flat.size, flat.itemsize).sum(axis=1, dtype=np.uint8)
    return counts.reshape(np.shape(value))


_BITWISE = {"&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor, "<<": np.left_shift, ">>": np.right_shift}


def _bitwise(node: ex.Bitwise, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a op b in the node's type; a shift counts b modulo the width (NumPy's own rule for larger counts is not
    the node's), arithmetic ``>>`` for a signed type (NumPy's)."""
    t = np.dtype(node.data_type.numpy)  # type: ignore[union-attr]
    a, b = np.asarray(a, t), np.asarray(b, t)
    if node.op in ("<<", ">>"):
        b = np.bitwise_and(b, t.type(8 * t.itemsize - 1))
    return _BITWISE[node.op](a, b, dtype=t)


def _store(node: ex.Store, value: np.ndarray) -> np.ndarray:
    # float32 -> float16 and float64 -> float32 round to nearest even, overflow to inf; NumPy's float64 -> float16
    # rounds the double once, directly (npy_double_to_half), never through a float32.
    return value.astype(node.type.numpy)


def _is_number(node: ex.IsNumber, v: Callable[[ex.Expr], np.ndarray], inputs: Inputs) -> np.ndarray:
    value = v(node.value)
    return np.equal(value, value)


# A node's lowering: the node, its children's values (``v(child)``) and the inputs, to its value.
Lowering = Callable[[Any, Callable[[ex.Expr], np.ndarray], Inputs], np.ndarray]

# One entry per node of ``ex.NODES`` (the NumPy column of the table in opendml.expr).
LOWERINGS: dict[type[ex.Expr], Lowering] = {
    ex.Load: lambda n, v, inputs: _load(n, inputs.operands),
    ex.Param: lambda n, v, inputs: np.asarray(inputs.scalars[n.index], dtype=n.type.numpy),
    ex.Widen: lambda n, v, inputs: _widen(n, v(n.value)),
    ex.Subtract: lambda n, v, inputs: np.subtract(v(n.a), v(n.b), dtype=n.a.data_type.numpy),
    ex.ToFloat32: lambda n, v, inputs: _to_float32(n, v(n.value)),
    ex.Multiply: lambda n, v, inputs: np.multiply(v(n.a), v(n.b), dtype=np.float32),
    # FLOAT32, or integers whose sum fits their type (checked by the node)
    ex.Add: lambda n, v, inputs: np.add(v(n.a), v(n.b), dtype=n.data_type.numpy),
    ex.Divide: lambda n, v, inputs: _divide(n, v(n.a), v(n.b)),
    # Integer ufuncs wrap modulo 2**bits (no overflow check on arrays)
    ex.Wrapping: lambda n, v, inputs: _WRAPPING[n.op](v(n.a), v(n.b), dtype=n.data_type.numpy),
    ex.Remainder: lambda n, v, inputs: _remainder(n, v(n.a), v(n.b)),
    ex.Negate: lambda n, v, inputs: np.negative(v(n.value), dtype=n.data_type.numpy),  # integers wrap
    ex.BitNot: lambda n, v, inputs: np.invert(v(n.value)),
    ex.BitCount: lambda n, v, inputs: _bit_count(v(n.value)),
    ex.Sqrt: lambda n, v, inputs: np.sqrt(v(n.value), dtype=np.float32),  # correctly rounded (IEEE)
    ex.Round: lambda n, v, inputs: np.rint(v(n.value)),  # ties to even, in float32
    ex.Saturate: lambda n, v, inputs: _saturate(n, np.asarray(v(n.value))),
    ex.Less: lambda n, v, inputs: np.less(v(n.a), v(n.b)),
    ex.IsNumber: _is_number,
    ex.SignBit: lambda n, v, inputs: np.signbit(v(n.value)),
    ex.Select: lambda n, v, inputs: np.where(v(n.condition), v(n.a), v(n.b)),
    ex.Store: lambda n, v, inputs: _store(n, v(n.value)),
    ex.Bitwise: lambda n, v, inputs: _bitwise(n, v(n.a), v(n.b)),
    ex.Wrap: lambda n, v, inputs: np.asarray(v(n.value)).astype(n.type.numpy),  # integer astype wraps (C's casts)
    ex.Function: lambda n, v, inputs: rounded.evaluate(n.name, v(n.value), n.precision.name),
    # integers: nearest even (C conversion; 64-bit ones beyond 2**53 round); FLOAT32: exact
    ex.ToFloat64: lambda n, v, inputs: np.asarray(v(n.value)).astype(np.float64),
    ex.BinaryFunction: lambda n, v, inputs: rounded.evaluate_binary(n.name, v(n.a), v(n.b), n.precision.name),
}


def evaluate(expr: ex.Expr, operands: Sequence[np.ndarray | None], scalars: Sequence[np.generic]) -> np.ndarray:
    """The expression's value over arrays of one shape (or broadcast views of one), as an array."""
    return evaluate_all((expr,), operands, scalars)[0]


def evaluate_all(exprs: Sequence[ex.Expr], operands: Sequence[np.ndarray | None],
                 scalars: Sequence[np.generic]) -> list[np.ndarray]:
    """Several expressions' values over the same operands (a kernel with extra outputs), each node they
    share computed once."""
    values: dict[ex.Expr, np.ndarray] = {}
    inputs = Inputs(operands, scalars)
    with np.errstate(all="ignore"):  # overflow to infinity and NaN are the defined results
        for expr in exprs:
            for node in ex.nodes(expr):
                if node not in values:
                    values[node] = _lowering(node)(node, values.__getitem__, inputs)
    return [values[expr] for expr in exprs]


def _lowering(node: ex.Expr) -> Lowering:
    lowering = LOWERINGS.get(type(node))
    if lowering is None:
        raise ex.ExpressionError(f"no NumPy lowering of {type(node).__name__}")
    return lowering
