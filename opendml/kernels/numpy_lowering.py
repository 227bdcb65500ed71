"""The NumPy lowering of element expressions: whole arrays, node by node (the NumPy CPU path).

Every node maps onto a NumPy function with an explicit result type (see the table in ``opendml.expr``);
FLOAT16 data is converted to float32 exactly and stored back rounded once, as the other lowerings do.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import expr as ex


def _load(node: ex.Expr, operands: Sequence[np.ndarray | None]) -> np.ndarray:
    assert isinstance(node, ex.Load)
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
    if value.dtype != np.float32:  # an integer: clipped in its own type to the limits it can reach, exactly
        source_low, source_high = np.iinfo(value.dtype).min, np.iinfo(value.dtype).max
        bounds = (value.dtype.type(max(low, min(source_low, high))), value.dtype.type(min(high, max(source_high, low))))
        return np.clip(value, *bounds).astype(target)
    whole = np.trunc(np.asarray(value, np.float64))  # float32 values are exact as doubles
    whole = np.where(np.isnan(whole), 0.0, whole)
    # low and high + 1 are 0 or powers of two, so exact as doubles: compared exactly, where a clip to high
    # itself would round it (2**63 - 1 is no double) and the conversion would overflow.
    over, under = whole >= float(high + 1), whole < float(low)
    inside = np.where(over | under, 0.0, whole).astype(target)  # every value left fits the type
    return np.where(over, target.type(high), np.where(under, target.type(low), inside))


def _store(node: ex.Store, value: np.ndarray) -> np.ndarray:
    return value.astype(node.type.numpy)  # float32 -> float16 rounds to nearest even, overflow to inf


def evaluate(expr: ex.Expr, operands: Sequence[np.ndarray | None], scalars: Sequence[np.generic]) -> np.ndarray:
    """The expression's value over arrays of one shape (or broadcast views of one), as an array."""
    return evaluate_all((expr,), operands, scalars)[0]


def evaluate_all(exprs: Sequence[ex.Expr], operands: Sequence[np.ndarray | None],
                 scalars: Sequence[np.generic]) -> list[np.ndarray]:
    """Several expressions' values over the same operands (a kernel with extra outputs), each node they
    share computed once."""
    values: dict[ex.Expr, np.ndarray] = {}
    with np.errstate(all="ignore"):  # overflow to infinity and NaN are the defined results
        for expr in exprs:
            for node in ex.nodes(expr):
                if node not in values:
                    values[node] = _node(node, values, operands, scalars)
    return [values[expr] for expr in exprs]


def _node(node: ex.Expr, values: dict[ex.Expr, np.ndarray], operands: Sequence[np.ndarray | None],
          scalars: Sequence[np.generic]) -> np.ndarray:
    def of(child: ex.Expr) -> np.ndarray:
        return values[child]

    if isinstance(node, ex.Load):
        return _load(node, operands)
    if isinstance(node, ex.Param):
        return np.asarray(scalars[node.index], dtype=node.type.numpy)
    if isinstance(node, ex.Widen):
        return _widen(node, of(node.value))
    if isinstance(node, ex.Subtract):
        return np.subtract(of(node.a), of(node.b), dtype=node.a.data_type.numpy)  # type: ignore[union-attr]
    if isinstance(node, ex.ToFloat32):
        return _to_float32(node, of(node.value))
    if isinstance(node, ex.Multiply):
        return np.multiply(of(node.a), of(node.b), dtype=np.float32)
    if isinstance(node, ex.Add):  # FLOAT32, or integers whose sum fits their type (checked by the node)
        return np.add(of(node.a), of(node.b), dtype=node.data_type.numpy)  # type: ignore[union-attr]
    if isinstance(node, ex.Divide):
        return np.divide(of(node.a), of(node.b), dtype=np.float32)
    if isinstance(node, ex.Round):
        return np.rint(of(node.value))  # ties to even, in float32
    if isinstance(node, ex.Saturate):
        return _saturate(node, np.asarray(of(node.value)))
    if isinstance(node, ex.Less):
        return np.less(of(node.a), of(node.b))
    if isinstance(node, ex.IsNumber):
        value = of(node.value)
        return np.equal(value, value)
    if isinstance(node, ex.Select):
        return np.where(of(node.condition), of(node.a), of(node.b))
    if isinstance(node, ex.Store):
        return _store(node, of(node.value))
    raise ex.ExpressionError(f"no NumPy lowering of {type(node).__name__}")
