"""The monotone tail of a reduction's value (opendml/kernels/monotone.py): which steps qualify, and the claim
the GPU scans rest on: the best of the full values is the tail of the best inner value, NaN for NaN."""

from __future__ import annotations

import numpy as np
import pytest

from opendml import DataType as T
from opendml import expr as ex
from opendml.kernels.monotone import monotone_tail, raw_order
from opendml.kernels.numpy_lowering import evaluate

HIGH, LOW = ex.Param(0, T.FLOAT32), ex.Param(1, T.FLOAT32)
PRODUCT = ex.Multiply(ex.ToFloat32(ex.Subtract(ex.Widen(ex.Load(0, T.UINT8), T.INT16),
                                               ex.Widen(ex.Load(1, T.UINT8), T.INT16))), ex.Load(2, T.FLOAT32))


def clip(v: ex.Expr) -> ex.Expr:
    v = ex.Select(ex.Less(HIGH, v), HIGH, v)
    return ex.Select(ex.Less(v, LOW), LOW, v)


def test_clip_after_dequantize_is_the_tail_and_the_product_the_inner_value() -> None:
    tail = monotone_tail(ex.Store(clip(PRODUCT), T.FLOAT32))
    assert tail is not None and tail.inner == PRODUCT and tail.slot == 3
    assert tail.outer == ex.Store(clip(ex.Load(3, T.FLOAT32)), T.FLOAT32)


def test_a_float16_intermediate_between_two_clamps_stays_in_the_tail() -> None:
    half = ex.Store(clip(PRODUCT), T.FLOAT16)
    element = ex.Store(ex.Select(ex.Less(ex.ToFloat32(half), LOW), LOW, ex.ToFloat32(half)), T.FLOAT16)
    tail = monotone_tail(element)
    assert tail is not None and tail.inner == PRODUCT
    placeholder = ex.Store(clip(ex.Load(3, T.FLOAT32)), T.FLOAT16)
    assert tail.outer == ex.Store(ex.Select(ex.Less(ex.ToFloat32(placeholder), LOW), LOW,
                                            ex.ToFloat32(placeholder)), T.FLOAT16)


@pytest.mark.parametrize("element", [
    PRODUCT,  # no step at all
    ex.Add(ex.Multiply(PRODUCT, HIGH), LOW),  # ScaleBias: a negative scale reverses the order
    ex.Select(ex.Less(PRODUCT, LOW), HIGH, PRODUCT),  # not a clamp: the bound given is not the one compared
    ex.Select(ex.Less(PRODUCT, ex.Load(2, T.FLOAT32)), ex.Load(2, T.FLOAT32), PRODUCT),  # a tensor bound
    ex.Subtract(ex.Widen(ex.Load(0, T.UINT8), T.INT16), ex.Widen(ex.Load(1, T.UINT8), T.INT16)),  # integers
])
def test_steps_that_do_not_keep_the_order_end_the_tail(element: ex.Expr) -> None:
    assert monotone_tail(element) is None


def test_a_clamp_after_scale_bias_keeps_scale_bias_in_the_inner_value() -> None:
    scaled = ex.Add(ex.Multiply(PRODUCT, ex.Param(2, T.FLOAT32)), ex.Param(3, T.FLOAT32))
    tail = monotone_tail(clip(scaled))
    assert tail is not None and tail.inner == scaled


SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 6.0, 6.0000005, -1e-45, 1e-45, 65504.0, 65520.0, -3.5],
                   np.float32)


@pytest.mark.parametrize("bounds", [(6.0, 0.0), (0.0, 6.0), (np.nan, 0.0), (6.0, np.nan), (-0.0, 0.0),
                                    (np.inf, -np.inf), (1e-45, -1e-45)])
@pytest.mark.parametrize("half", [False, True])
def test_the_best_full_value_is_the_tail_of_the_best_inner_value(bounds: tuple[float, float], half: bool) -> None:
    """Blocks of 8 inner values (specials and random ones, NaN among them): the least number among the
    full values equals the tail of the least inner number (as values: -0.0 == +0.0), and a full value is
    NaN exactly where its inner value is."""
    element = ex.Store(clip(ex.Load(0, T.FLOAT32)), T.FLOAT16 if half else T.FLOAT32)
    tail = monotone_tail(element)
    assert tail is not None and tail.inner == ex.Load(0, T.FLOAT32)
    rng = np.random.default_rng(1)
    inner = np.concatenate([SPECIAL, rng.choice(SPECIAL, 4000), rng.normal(0, 8, 4000).astype(np.float32)])
    inner = inner[: len(inner) // 8 * 8]
    scalars = [np.float32(bounds[0]), np.float32(bounds[1])]
    full = np.asarray(evaluate(element, [inner], scalars), np.float32)
    assert (np.isnan(full) == np.isnan(inner)).all()
    for block, values in zip(inner.reshape(-1, 8), full.reshape(-1, 8)):
        if np.isnan(block).all():
            continue
        least = np.nanmin(block)
        outer = np.asarray(evaluate(tail.outer, [None] * tail.slot + [np.array([least])], scalars), np.float32)
        assert outer[0] == np.nanmin(values), (block, values)
        largest = np.nanmax(block)
        outer = np.asarray(evaluate(tail.outer, [None] * tail.slot + [np.array([largest])], scalars), np.float32)
        assert outer[0] == np.nanmax(values), (block, values)


# --- the order in the InputTensor's stored integers (monotone.raw_order) ---------------------------------------

SCALE = ex.Load(2, T.FLOAT32)
HALF_SCALE = ex.ToFloat32(ex.Load(2, T.FLOAT16))


def dequantize(x: T, scale: ex.Expr = SCALE) -> ex.Expr:
    wide = T.INT16
    return ex.Multiply(ex.ToFloat32(ex.Subtract(ex.Widen(ex.Load(0, x), wide), ex.Widen(ex.Load(1, x), wide))), scale)


def test_dequantize_then_clip_is_ordered_by_the_integers_where_the_scale_is_positive() -> None:
    for element, scale in [(ex.Store(clip(dequantize(T.UINT8)), T.FLOAT32), SCALE),
                           (ex.Store(clip(ex.ToFloat32(ex.Store(dequantize(T.INT8, HALF_SCALE), T.FLOAT16))),
                                     T.FLOAT16), HALF_SCALE)]:
        order = raw_order(element, frozenset({1, 2}))
        assert order is not None and order.factors == (scale,)


@pytest.mark.parametrize("element, constant", [
    (ex.Add(ex.Multiply(dequantize(T.UINT8), HIGH), LOW), {1, 2}),  # a float Add: +inf + -inf is NaN
    (dequantize(T.UINT8), {1}),  # the scale varies along the reduction
    (ex.Multiply(dequantize(T.UINT8), dequantize(T.UINT8)), {1, 2}),  # a product of two values of x
    (ex.Multiply(ex.Load(0, T.FLOAT32), SCALE), {2}),  # a float InputTensor has no integer order
    (ex.ToFloat32(ex.Subtract(ex.Widen(ex.Load(1, T.UINT8), T.INT16), ex.Widen(ex.Load(0, T.UINT8), T.INT16))),
     {1}),  # zero point - x decreases in x
    (ex.Divide(dequantize(T.UINT8), SCALE), {1, 2}),  # no Divide
])
def test_other_steps_give_no_order(element: ex.Expr, constant: set[int]) -> None:
    assert raw_order(element, frozenset(constant)) is None


SCALES = np.array([1e-45, 1.2e-38, 0.01, 0.5, 3.0, 1e30, 3.4e38], np.float32)


@pytest.mark.parametrize("x", [T.UINT8, T.INT8])
@pytest.mark.parametrize("bounds", [(6.0, 0.0), (np.nan, -0.0), (0.0, 6.0), (np.inf, -np.inf)])
@pytest.mark.parametrize("half", [False, True])
def test_the_value_is_non_decreasing_in_every_integer_where_the_factor_is_positive(x: T, bounds: tuple[float, float],
                                                                                   half: bool) -> None:
    """Every stored integer, each zero point, positive finite scales from denormal to the largest float (the
    product overflows to an infinity): the values, in the integers' order, never decrease and are numbers;
    a negative scale reverses them (the check the kernel makes is needed)."""
    element = ex.Store(clip(ex.ToFloat32(ex.Store(dequantize(x), T.FLOAT16)) if half else dequantize(x)), T.FLOAT32)
    order = raw_order(element, frozenset({1, 2}))
    assert order is not None and order.factors == (SCALE,)
    low, high = x.integer_range
    integers = np.arange(low, high + 1).astype(x.numpy)
    scalars = [np.float32(bounds[0]), np.float32(bounds[1])]
    for zero_point in (low, 0, 7, high):
        for scale in [*SCALES, np.float32(-0.5)]:
            operands = [integers, np.full_like(integers, zero_point), np.full(integers.size, scale, np.float32)]
            values = np.asarray(evaluate(element, operands, scalars), np.float32)
            assert not np.isnan(values).any()
            if scale > 0:
                assert (values[1:] >= values[:-1]).all(), (zero_point, scale)
            elif bounds == (np.inf, -np.inf):  # unclipped, the negative scale's values decrease
                assert (values[1:] < values[:-1]).any()
