"""REDUCE: one of twelve functions (DML_REDUCE_FUNCTION) over any set of axes, rank kept.

DirectML's page gives a support table per group of functions; the schema's rows are their union (what
``opendml support`` lists and the front ends consult), and ``schema_of`` gives the validator the table of
the description's own function. ARGMIN and ARGMAX run the ARGMIN/ARGMAX engines (their ``Reduction``
record: INCREASING, NaN ignored, as the stand-alone operators' defaults); the value functions are an
``Accumulation`` record, whose sums are exact (docs/semantics.md, **REDUCE**).

The reference below is the oracle of the kernels: exact sums by ``math.fsum`` (the float64 nearest the
exact sum), corrected where that float64 lies on a midpoint of the output type, so that the result is the
exact sum rounded once; the kernels compute it another way (``backends/cpu_kernels/sum_accumulator.py`` and
``sum_rounding.py``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS, from_numpy
from ..dtypes import DataType as T
from ..enums import AxisDirection, NanPolicy, ReduceFunction
from ..errors import invalid
from ..feature_levels import FeatureLevel as L
from ..kernels.spec import Accumulation, KernelSpec, Reduction, ReductionKind
from ..schema import OperatorSchema, SupportRow, TensorField
from ..tensor import TensorDesc
from .arg_reduction import (
    ArgReductionParams,
    arg_reduction_reference,
    check_axes,
    check_index_capacity,
    check_reduced_sizes,
)
from .definition import OperatorDefinition

F = ReduceFunction
NAME = "REDUCE"
TENSORS = (TensorField("InputTensor", "input"), TensorField("OutputTensor", "output"))
INDEX_FUNCTIONS = frozenset({F.ARGMIN, F.ARGMAX})
SUMS = frozenset({F.SUM, F.AVERAGE, F.L1, F.SUM_SQUARE})  # the exact sum rounded once
FLOAT_ONLY = frozenset({F.AVERAGE, F.L1, F.L2, F.LOG_SUM, F.LOG_SUM_EXP, F.SUM_SQUARE})
_SMALL = frozenset({T.INT32, T.INT16, T.INT8, T.UINT32, T.UINT16, T.UINT8})
_U32 = frozenset({T.UINT32})


def _row(level: L, dims: tuple[int, int], x: frozenset[T], out: frozenset[T]) -> SupportRow:
    return SupportRow(level, dims, {"InputTensor": x, "OutputTensor": out})


# DirectML's tables, by group of functions, newest first.
TABLES: dict[frozenset[ReduceFunction], tuple[SupportRow, ...]] = {
    frozenset(INDEX_FUNCTIONS): (
        _row(L.FL_3_0, (1, 8), FLOATS | _SMALL, frozenset({T.INT64, T.INT32, T.UINT64, T.UINT32})),
        _row(L.FL_2_1, (4, 4), FLOATS | _SMALL, _U32),
        _row(L.FL_1_0, (4, 4), FLOATS, _U32),
    ),
    frozenset(FLOAT_ONLY): (
        _row(L.FL_3_0, (1, 8), FLOATS, FLOATS),
        _row(L.FL_1_0, (4, 4), FLOATS, FLOATS),
    ),
    frozenset({F.MIN, F.MAX}): (
        _row(L.FL_3_0, (1, 8), FLOATS | _SMALL, FLOATS | _SMALL),
        _row(L.FL_2_1, (4, 4), FLOATS | {T.INT32, T.UINT32}, FLOATS | {T.INT32, T.UINT32}),
        _row(L.FL_1_0, (4, 4), FLOATS, FLOATS),
    ),
    frozenset({F.MULTIPLY, F.SUM}): (
        _row(L.FL_3_0, (1, 8), FLOATS | {T.INT32, T.UINT32}, FLOATS | {T.INT32, T.UINT32}),
        _row(L.FL_2_1, (4, 4), FLOATS | {T.INT32, T.UINT32}, FLOATS | {T.INT32, T.UINT32}),
        _row(L.FL_1_0, (4, 4), FLOATS, FLOATS),
    ),
}


def _union(level: L) -> SupportRow:
    """The union of every group's row in force at ``level``: what some function of REDUCE accepts there."""
    rows = [max((r for r in rows if r.level <= level), key=lambda r: r.level) for rows in TABLES.values()]
    return SupportRow(level, (min(r.dimensions[0] for r in rows), max(r.dimensions[1] for r in rows)),
                      {t.name: frozenset().union(*(r.types[t.name] for r in rows)) for t in TENSORS})


REDUCE_SCHEMA = OperatorSchema(name=NAME, introduced=L.FL_1_0, tensors=TENSORS,
                               rows=tuple(_union(level) for level in (L.FL_3_0, L.FL_2_1, L.FL_1_0)))
FUNCTION_SCHEMAS: dict[ReduceFunction, OperatorSchema] = {
    function: replace(REDUCE_SCHEMA, rows=rows) for group, rows in TABLES.items() for function in group}


@dataclass(frozen=True)
class ReduceDesc:
    """DML_REDUCE_OPERATOR_DESC, its fields in DirectML's order; AxisCount is ``len(axes)``."""

    function: ReduceFunction | str | int
    input_tensor: TensorDesc
    output_tensor: TensorDesc
    axes: Sequence[int]


@dataclass(frozen=True)
class ReduceParams:
    function: ReduceFunction
    axes: tuple[int, ...]  # sorted increasingly
    input_type: T
    output_type: T


def prepare_reduce(desc: ReduceDesc) -> ReduceParams:
    """The rules of REDUCE's description that hold at every feature level (the page's tensor constraints)."""
    function = ReduceFunction.parse(desc.function, owner=NAME)
    x, out = desc.input_tensor, desc.output_tensor
    axes = check_axes(NAME, desc.axes, x.dimension_count)
    check_reduced_sizes(NAME, x, out, axes)
    if function in INDEX_FUNCTIONS:
        check_index_capacity(NAME, out.data_type, math.prod(x.sizes[a] for a in axes))
    elif out.data_type != x.data_type:
        raise invalid(NAME, "OutputTensor.DataType", f"must be InputTensor.DataType ({x.data_type.name}) with "
                      f"Function {function.name} (only ARGMIN and ARGMAX output indices)", out.data_type.name)
    return ReduceParams(function, axes, x.data_type, out.data_type)


def schema_of(params: ReduceParams) -> OperatorSchema:
    """The support table of the description's function, which the validator checks."""
    return FUNCTION_SCHEMAS[params.function]


def _rows(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """``x`` as 2-D: one row per output element (the kept axes in order), the reduced axes flattened."""
    kept = [k for k in range(x.ndim) if k not in axes]
    n = math.prod(x.shape[a] for a in axes)
    return np.transpose(x, kept + list(axes)).reshape(-1, n)


def _exact_float(values: np.ndarray, out: np.dtype) -> float:
    """The exact sum of ``values`` (float64, each exact) as a float64 that rounds to ``out`` as the exact sum
    does: ``math.fsum`` (the float64 nearest the exact sum) rounds the same way unless it lies exactly on a
    midpoint of two neighbours in ``out`` (the largest finite value's upper neighbour counted as the power of
    two past it): there it is moved one float64 ulp towards the exact sum."""
    items = values.tolist()
    total = math.fsum(items)
    if out == np.float64 or not math.isfinite(total) or total == 0.0:
        return total
    size = abs(total)
    with np.errstate(over="ignore"):  # a sum past the type's range: its infinity, as the rounding gives
        near = np.asarray(size).astype(out)
    low = near if float(near) <= size else np.nextafter(near, out.type(0))
    biggest = np.finfo(out).max
    high = float(np.nextafter(low, out.type(np.inf))) if low < biggest else 2.0 ** np.finfo(out).maxexp
    if float(low) != size and (float(low) + high) / 2 == size:
        residual = math.fsum([*items, -total])  # the exact sum minus ``total``, correctly rounded: its sign
        if residual:
            total = float(np.nextafter(total, math.copysign(math.inf, residual)))
    return total


def _sum_row(row: np.ndarray, out: np.dtype, divide: int = 1) -> float:
    """The exact sum of a float row rounded once to ``out`` (NaN, infinities and -0.0 as
    docs/semantics.md says); ``divide``: AVERAGE's count, the exact quotient rounded once."""
    wide = row.astype(np.float64)
    if np.isnan(wide).any() or (np.isposinf(wide).any() and np.isneginf(wide).any()):
        return math.nan
    if np.isinf(wide).any():
        return float(wide[np.isinf(wide)][0])
    if not wide.any():
        return -0.0 if wide.size and np.signbit(wide).all() else 0.0
    if divide == 1:
        return _exact_float(wide, out)
    return float(_exact_quotient(wide, divide, out))


def _exact_quotient(wide: np.ndarray, count: int, out: np.dtype) -> np.generic:
    """The exact sum divided by ``count``, rounded once to ``out`` (by integers: the sum is an integer
    multiple of 2**-1074)."""
    from fractions import Fraction

    exact = sum((Fraction(v) for v in wide.tolist()), Fraction(0)) / count
    return _round_fraction(exact, out)


def _round_fraction(value: object, out: np.dtype) -> np.generic:
    """A Fraction rounded to nearest even in ``out``."""
    from fractions import Fraction

    assert isinstance(value, Fraction)
    guess = np.asarray(float(value)).astype(out)  # within an ulp of ``out``
    best = None
    for candidate in (np.nextafter(guess, out.type(-np.inf)), guess, np.nextafter(guess, out.type(np.inf))):
        if not np.isfinite(candidate):
            continue
        key = (abs(Fraction(float(candidate)) - value), int(np.asarray(candidate).view(f"u{out.itemsize}")) & 1)
        if best is None or key < best[0]:
            best = (key, candidate)
    assert best is not None
    biggest = np.finfo(out).max
    top = Fraction(float(biggest)) + (Fraction(float(biggest)) - Fraction(float(np.nextafter(biggest,
                                                                                             out.type(0))))) / 2
    if abs(value) >= top:
        return out.type(math.copysign(math.inf, value))
    if best[1] == 0:
        return out.type(math.copysign(0.0, value))
    return best[1]  # type: ignore[return-value]


SUM_UNIT = 149  # every FLOAT32 (and FLOAT16) is an integer multiple of 2**-149


def exact_units(values: np.ndarray) -> int:
    """The exact sum of finite FLOAT32 or FLOAT16 values (or their exact float64 copies) as an integer in units of
    ``2**-149``."""
    return sum(map(int, np.ldexp(values.astype(np.float64), SUM_UNIT).tolist()))


def log_of_units(total: int, addend: float, out: np.dtype) -> float:
    """``addend + ln(total * 2**-149)`` correctly rounded to ``out`` (``opendml.rounded.log_sum``), as a float64
    that converts to it exactly: LOG_SUM's and LOG_SUM_EXP's finish. ``log(0)`` is -inf, of a negative sum NaN."""
    from ..rounded.log_sum import log_of_integer
    from ..rounded.method import PRECISIONS

    if total <= 0:
        return -math.inf if total == 0 else math.nan
    return log_of_integer(total, SUM_UNIT, addend, PRECISIONS[from_numpy(out).name])


def _root_of_squares(squares: np.ndarray, out: np.dtype) -> float:
    """L2: the square root of the exact sum of ``squares`` (float64, each exact) correctly rounded to ``out``, as a
    float64 that converts to it exactly. A guess from the float64 root is within one step of the answer; a
    neighbour's midpoint ``m`` (at most 25 significant bits: ``m * m`` is exact) lies below the root exactly where
    ``m * m`` is below the exact sum, which ``math.fsum`` (correctly rounded) tells by its sign."""
    items = squares.tolist()
    total = math.fsum(items)
    if math.isnan(total) or total == math.inf:
        return total
    if total == 0:
        return 0.0  # every square is +0.0
    biggest = float(np.finfo(out).max)
    past = 2.0 ** np.finfo(out).maxexp  # the upper neighbour of the largest finite value, for rounding

    def step(c: float, up: bool) -> float:
        if up:
            return past if c == biggest else float(np.nextafter(out.type(c), out.type(np.inf)))
        return biggest if c == math.inf else float(np.nextafter(out.type(c), out.type(0)))

    def odd(c: float) -> bool:
        return c != math.inf and int(np.asarray(c).astype(out).view(f"u{out.itemsize}")) & 1 == 1

    with np.errstate(over="ignore"):
        c = float(np.asarray(math.sqrt(total)).astype(out))
    for _ in range(2):
        value = past if c == math.inf else c
        low = (step(c, False) + value) / 2 if c > 0 else 0.0
        high = (c + step(c, True)) / 2 if c != math.inf else math.inf
        below = -1.0 if low == 0 else math.fsum([*items, -low * low])  # the exact sum minus low**2: its sign
        above = 1.0 if high == math.inf else math.fsum([*items, -high * high])
        if below < 0 or (below == 0 and odd(c)):
            c = step(c, False)
        elif above > 0 or (above == 0 and odd(c)):
            c = step(c, True)
            c = math.inf if c == past else c
        else:
            break
    return c


def _ordered(values: np.ndarray, largest: bool) -> np.ndarray:
    """MAX or MIN of each row: NaN where a NaN occurs, else the largest (smallest) with -0.0 < +0.0. NumPy's
    ``max`` and ``min`` give NaN where one occurs; only a zero result can have the wrong sign, and such rows are
    settled by whether a zero of the winning sign is among their elements."""
    result = values.max(axis=-1) if largest else values.min(axis=-1)
    if values.dtype.kind != "f":
        return result
    zero = np.flatnonzero(result == 0)
    if zero.size:
        rows = values[zero]
        wanted = (rows == 0) & (np.signbit(rows) != largest)  # +0.0 for MAX, -0.0 for MIN
        signed = np.where(wanted.any(axis=-1), 0.0 if largest else -0.0, -0.0 if largest else 0.0)
        result[zero] = signed.astype(values.dtype)
    return result


def _product(values: np.ndarray) -> np.ndarray:
    """MULTIPLY of each row: integers wrap (modulo 2**width); floats multiply in float64 as a fixed pairwise
    tree over the row's flattened index (first half by second half, an odd middle kept), then round once."""
    if values.dtype.kind in "iu":
        wide = values.astype(np.uint64)
        return np.multiply.reduce(wide, axis=-1).astype(values.dtype)
    wide = values.astype(np.float64)
    with np.errstate(all="ignore"):  # inf * 0 is NaN, overflow infinity: the defined results
        while wide.shape[-1] > 1:
            n = wide.shape[-1]
            half, rest = n // 2, n - n // 2
            merged = wide[:, :half] * wide[:, rest:]
            wide = merged if half == rest else np.concatenate([merged, wide[:, half:rest]], axis=-1)
    return wide[:, 0]


def reduce_reference(inputs: Sequence[np.ndarray | None], params: ReduceParams) -> np.ndarray:
    """REDUCE of the input over ``params.axes``, shaped and typed as the output."""
    (x,) = inputs
    assert x is not None
    f = params.function
    out_type = params.output_type.numpy
    out_shape = tuple(1 if k in params.axes else n for k, n in enumerate(x.shape))
    if f in INDEX_FUNCTIONS:
        kind = ReductionKind.ARGMIN if f is F.ARGMIN else ReductionKind.ARGMAX
        return arg_reduction_reference([x], ArgReductionParams(params.axes, AxisDirection.INCREASING,
                                                               params.output_type, kind, NanPolicy.IGNORE))
    rows = _rows(x, params.axes)
    if f in (F.MAX, F.MIN):
        return _ordered(rows, f is F.MAX).astype(out_type).reshape(out_shape)
    if f is F.MULTIPLY:
        with np.errstate(over="ignore"):  # a product past the output's range rounds to infinity
            return _product(rows).astype(out_type).reshape(out_shape)
    if rows.dtype.kind in "iu":  # SUM of integers: modulo 2**width (wrap)
        return rows.astype(np.uint64).sum(axis=-1, dtype=np.uint64).astype(out_type).reshape(out_shape)
    values = [_float_row(f, row, out_type) for row in rows]
    with np.errstate(over="ignore"):  # a result past the output's range rounds to infinity
        return np.array(values, dtype=np.float64).astype(out_type).reshape(out_shape)


def _float_row(f: ReduceFunction, row: np.ndarray, out: np.dtype) -> float:
    wide = row.astype(np.float64)
    if f is F.SUM:
        return _sum_row(wide, out)
    if f is F.AVERAGE:
        return _sum_row(wide, out, row.size)
    if f is F.L1:
        return _sum_row(np.abs(wide), out)
    squares = wide * wide  # exact: 48 significant bits
    if f is F.SUM_SQUARE:
        return _sum_row(squares, out)
    if f is F.L2:
        return _root_of_squares(squares, out)
    if f is F.LOG_SUM:
        if np.isnan(wide).any() or np.isneginf(wide).any():
            return math.nan
        return math.inf if np.isposinf(wide).any() else log_of_units(exact_units(wide), 0.0, out)
    return _log_sum_exp_row(row, out)


def _log_sum_exp_row(row: np.ndarray, out: np.dtype) -> float:
    """LOG_SUM_EXP: NaN if an element is NaN; the largest element ``m`` where it is infinite; else ``m + ln S``
    correctly rounded, ``S`` the exact sum of ``EXP(x - m)`` (the FLOAT32 difference, EXP correctly rounded to
    FLOAT32), as SOFTMAX's steps 1 to 4 (docs/semantics.md 9c)."""
    from ..rounded.evaluate import evaluate

    x = row.astype(np.float32)
    if np.isnan(x).any():
        return math.nan
    m = x.max()
    if np.isinf(m):
        return float(m)
    with np.errstate(over="ignore"):  # a difference past FLOAT32's range is -inf, whose EXP is 0
        e = evaluate("EXP", x - m, "FLOAT32")
    return log_of_units(exact_units(e), float(m), out)


def reduce_kernel(params: ReduceParams, tensors: Mapping[str, TensorDesc | None]) -> KernelSpec:
    """ARGMIN and ARGMAX: the index reduction record the ARGMIN engines run; the rest: an Accumulation."""
    x = tensors["InputTensor"]
    assert x is not None
    load = ex.Load(0, x.data_type)
    if params.function in INDEX_FUNCTIONS:
        kind = ReductionKind.ARGMIN if params.function is F.ARGMIN else ReductionKind.ARGMAX
        record = Reduction(kind, params.axes, AxisDirection.INCREASING, NanPolicy.IGNORE, params.output_type)
        return KernelSpec(NAME, (x.data_type,), params.output_type, load, reduction=record)
    return KernelSpec(NAME, (x.data_type,), params.output_type, load,
                      accumulation=Accumulation(params.function.name, params.axes))


REDUCE = OperatorDefinition(REDUCE_SCHEMA, ReduceDesc, prepare_reduce, reduce_reference, reduce_kernel,
                            schema_of=schema_of)
