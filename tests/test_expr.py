"""Element expressions (opendml.expr): every node's type rule, shared nodes, equality, kernel specifications,
and random well-typed trees through the NumPy lowering against an element-by-element evaluator.

The evaluator below is written from the table in opendml/expr.py's docstring alone: Python ints (exact),
Python floats rounded to float32 or FLOAT16 through NumPy scalars. It never imports the lowering.
"""

from __future__ import annotations

import importlib
import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import opendml as dml
from opendml import expr as ex
from opendml.backends import cpu_kernels
from opendml.dtypes import DataType as T
from opendml.enums import AxisDirection, NanPolicy
from opendml.kernels import numpy_lowering
from opendml.kernels.spec import KernelSpec, Reduction, ReductionKind, Scalars
from tests import expr_strategies as ex_strategies
from tests.elementwise_oracle import (
    float32_quotient,
    round_double,
    round_f16,
    round_f32,
    same_value,
    truncated_quotient,
)
from tests.expr_strategies import ExpressionCase, expressions, operands
from tests.rounding_oracle import correctly_rounded, correctly_rounded_pair

F32, F16, F64 = T.FLOAT32, T.FLOAT16, T.FLOAT64
NO_NUMBA = pytest.mark.skipif(not cpu_kernels.numba_available(), reason="Numba is not installed (the opendml[fast] extra)")


def load(t: T, k: int = 0) -> ex.Expr:
    return ex.Load(k, t)


def less() -> ex.Expr:
    return ex.Less(load(F32), ex.Param(0, F32))


# --- type rules --------------------------------------------------------------------------------------------

MALFORMED: dict[str, Callable[[], ex.Expr]] = {
    "Load of a negative operand": lambda: ex.Load(-1, F32),
    "Param of a negative index": lambda: ex.Param(-1, F32),
    "Param of FLOAT16": lambda: ex.Param(0, F16),
    "Param of FLOAT64": lambda: ex.Param(0, T.FLOAT64),
    "Widen to a narrower type": lambda: ex.Widen(load(T.INT16), T.INT8),
    "Widen UINT8 to INT8 (255 is not an INT8)": lambda: ex.Widen(load(T.UINT8), T.INT8),
    "Widen INT8 to UINT16 (negatives)": lambda: ex.Widen(load(T.INT8), T.UINT16),
    "Widen UINT64 to INT64": lambda: ex.Widen(load(T.UINT64), T.INT64),
    "Widen INT64 to UINT64": lambda: ex.Widen(load(T.INT64), T.UINT64),
    "Widen of FLOAT32": lambda: ex.Widen(load(F32), T.INT64),
    "Widen to FLOAT32": lambda: ex.Widen(load(T.INT8), F32),
    "Widen of BOOL": lambda: ex.Widen(less(), T.INT32),
    "Widen of a difference wider than the type": lambda: ex.Widen(
        ex.Subtract(ex.Widen(load(T.UINT8), T.INT16), ex.Widen(load(T.UINT8, 1), T.INT16)), T.INT8),
    "Widen of a Select whose branch is wider than the type": lambda: ex.Widen(
        ex.Select(less(), ex.Widen(load(T.INT8), T.INT16), ex.Widen(load(T.UINT8, 1), T.INT16)), T.INT8),
    "Subtract INT8 - INT8 in INT8": lambda: ex.Subtract(load(T.INT8), load(T.INT8, 1)),
    "Subtract UINT8 - UINT8 in UINT8": lambda: ex.Subtract(load(T.UINT8), load(T.UINT8, 1)),
    "Subtract INT64 - INT64": lambda: ex.Subtract(load(T.INT64), load(T.INT64, 1)),
    "Subtract of UINT32s widened to UINT64": lambda: ex.Subtract(ex.Widen(load(T.UINT32), T.UINT64),
                                                                 ex.Widen(load(T.UINT32, 1), T.UINT64)),
    "Subtract of mixed types": lambda: ex.Subtract(ex.Widen(load(T.INT8), T.INT16), ex.Widen(load(T.INT8), T.INT32)),
    "Subtract of FLOAT32": lambda: ex.Subtract(load(F32), load(F32, 1)),
    "Subtract of two differences that may overflow INT16": lambda: ex.Subtract(
        ex.Subtract(ex.Widen(load(T.INT8), T.INT16), ex.Widen(load(T.INT8, 1), T.INT16)),
        ex.Widen(load(T.INT16, 2), T.INT16)),
    "ToFloat32 of FLOAT32": lambda: ex.ToFloat32(load(F32)),
    "ToFloat32 of BOOL": lambda: ex.ToFloat32(less()),
    "Multiply of an integer": lambda: ex.Multiply(load(T.INT32), load(T.INT32, 1)),
    "Multiply of FLOAT16": lambda: ex.Multiply(load(F16), load(F16, 1)),
    "Multiply of FLOAT32 and FLOAT16": lambda: ex.Multiply(load(F32), load(F16, 1)),
    "Add of an integer and FLOAT32": lambda: ex.Add(load(T.UINT8), load(F32, 1)),
    "Add of BOOL": lambda: ex.Add(less(), less()),
    "Add of FLOAT16": lambda: ex.Add(load(F16), load(F16, 1)),
    "Add INT8 + INT8 in INT8": lambda: ex.Add(load(T.INT8), load(T.INT8, 1)),
    "Add UINT32 + UINT32 in UINT32": lambda: ex.Add(load(T.UINT32), load(T.UINT32, 1)),
    "Add of mixed integer types": lambda: ex.Add(ex.Widen(load(T.INT8), T.INT16), ex.Widen(load(T.INT8), T.INT32)),
    "Divide of mixed integer types": lambda: ex.Divide(load(T.INT32), load(T.UINT32, 1)),
    "Divide of BOOL": lambda: ex.Divide(less(), less()),
    "Wrapping of FLOAT32": lambda: ex.Wrapping(load(F32), load(F32, 1), "+"),
    "Wrapping of mixed integer types": lambda: ex.Wrapping(load(T.INT8), load(T.UINT8, 1), "*"),
    "Wrapping of an unknown operation": lambda: ex.Wrapping(load(T.INT8), load(T.INT8, 1), "/"),
    "Remainder of FLOAT16": lambda: ex.Remainder(load(F16), load(F16, 1)),
    "Remainder of mixed types": lambda: ex.Remainder(load(F32), load(T.INT32, 1)),
    "Divide of FLOAT16": lambda: ex.Divide(load(F16), load(F16, 1)),
    "Round of FLOAT16": lambda: ex.Round(load(F16)),
    "Round of an integer": lambda: ex.Round(load(T.INT32)),
    "Saturate to FLOAT32": lambda: ex.Saturate(load(F32), F32),
    "Saturate of FLOAT16": lambda: ex.Saturate(load(F16), T.INT8),
    "Saturate of BOOL": lambda: ex.Saturate(less(), T.UINT8),
    "Less of mixed types": lambda: ex.Less(load(F32), load(T.INT32, 1)),
    "Less of mixed integer types": lambda: ex.Less(load(T.INT8), load(T.INT16, 1)),
    "Less of FLOAT16": lambda: ex.Less(load(F16), load(F16, 1)),
    "Less of BOOL": lambda: ex.Less(less(), less()),
    "BitCount of FLOAT32": lambda: ex.BitCount(load(F32)),
    "BitCount of BOOL": lambda: ex.BitCount(less()),
    "Bitwise of FLOAT32": lambda: ex.Bitwise(load(F32), load(F32, 1), "&"),
    "Bitwise of mixed integer types": lambda: ex.Bitwise(load(T.UINT8), load(T.UINT16, 1), "|"),
    "Bitwise of an unknown operation": lambda: ex.Bitwise(load(T.UINT8), load(T.UINT8, 1), ">>>"),
    "Wrap of FLOAT32": lambda: ex.Wrap(load(F32), T.INT32),
    "Wrap to FLOAT32": lambda: ex.Wrap(load(T.INT32), F32),
    "Wrap of BOOL": lambda: ex.Wrap(less(), T.UINT8),
    "IsNumber of FLOAT16": lambda: ex.IsNumber(load(F16)),
    "IsNumber of an integer": lambda: ex.IsNumber(load(T.INT32)),
    "SignBit of FLOAT16": lambda: ex.SignBit(load(F16)),
    "SignBit of an integer": lambda: ex.SignBit(load(T.INT8)),
    "Select of BOOL": lambda: ex.Select(less(), less(), less()),
    "Select on a FLOAT32 condition": lambda: ex.Select(load(F32), load(F32), load(F32)),
    "Select of mixed types": lambda: ex.Select(less(), load(T.INT8), load(T.INT16, 1)),
    "Select of FLOAT32 and FLOAT16": lambda: ex.Select(less(), load(F32), load(F16, 1)),
    "Store FLOAT32 as INT8": lambda: ex.Store(load(F32), T.INT8),
    "Store INT32 as FLOAT32": lambda: ex.Store(load(T.INT32), F32),
    "Store INT8 as INT16": lambda: ex.Store(load(T.INT8), T.INT16),
    "Store FLOAT16 as FLOAT32": lambda: ex.Store(load(F16), F32),
    "Store FLOAT32 as FLOAT64": lambda: ex.Store(load(F32), T.FLOAT64),
    "Store of BOOL": lambda: ex.Store(less(), T.UINT8),
    "Store FLOAT16 as FLOAT64": lambda: ex.Store(load(F16), F64),
    "Store INT64 as FLOAT64": lambda: ex.Store(load(T.INT64), F64),
    "Store FLOAT64 as INT32": lambda: ex.Store(load(F64), T.INT32),
    "ToFloat64 of FLOAT16": lambda: ex.ToFloat64(load(F16)),
    "ToFloat64 of FLOAT64": lambda: ex.ToFloat64(load(F64)),
    "ToFloat64 of BOOL": lambda: ex.ToFloat64(less()),
    "ToFloat32 of FLOAT64": lambda: ex.ToFloat32(load(F64)),
    "Multiply of FLOAT64": lambda: ex.Multiply(load(F64), load(F64, 1)),
    "Add of FLOAT64": lambda: ex.Add(load(F64), load(F64, 1)),
    "Divide of FLOAT64": lambda: ex.Divide(load(F64), load(F64, 1)),
    "Less of FLOAT64": lambda: ex.Less(load(F64), load(F64, 1)),
    "Negate of FLOAT64": lambda: ex.Negate(load(F64)),
    "Round of FLOAT64": lambda: ex.Round(load(F64)),
    "IsNumber of FLOAT64": lambda: ex.IsNumber(load(F64)),
    "Select of FLOAT64 and FLOAT32": lambda: ex.Select(less(), load(F64), load(F32, 1)),
    "Saturate FLOAT64 to FLOAT32": lambda: ex.Saturate(load(F64), F32),
    "Wrap of FLOAT64": lambda: ex.Wrap(load(F64), T.INT64),
    "BinaryFunction of FLOAT16": lambda: ex.BinaryFunction(load(F16), load(F32, 1), "POW", F32),
    "BinaryFunction of an unknown function": lambda: ex.BinaryFunction(load(F32), load(F32, 1), "HYPOT", F32),
    "BinaryFunction to INT32": lambda: ex.BinaryFunction(load(F32), load(F32, 1), "ATAN_YX", T.INT32),
}


@pytest.mark.parametrize("make", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_nodes_are_refused_where_they_are_made(make: Callable[[], ex.Expr]) -> None:
    with pytest.raises(ex.ExpressionError):
        make()


def test_expression_errors_say_what_is_wrong() -> None:
    with pytest.raises(ex.ExpressionError, match=r"^Subtract in INT8 may overflow$"):
        ex.Subtract(load(T.INT8), load(T.INT8, 1))
    with pytest.raises(ex.ExpressionError, match=r"^Widen of UINT8 to INT8 is not exact$"):
        ex.Widen(load(T.UINT8), T.INT8)


WELL_TYPED: dict[str, tuple[Callable[[], ex.Expr], ex.ValueType]] = {
    "Load FLOAT16 holds FLOAT16": (lambda: load(F16), F16),
    "Param of UINT64": (lambda: ex.Param(3, T.UINT64), T.UINT64),
    "Widen INT8 to INT16": (lambda: ex.Widen(load(T.INT8), T.INT16), T.INT16),
    "Widen UINT32 to INT64": (lambda: ex.Widen(load(T.UINT32), T.INT64), T.INT64),
    "Widen UINT32 to UINT64": (lambda: ex.Widen(load(T.UINT32), T.UINT64), T.UINT64),
    "Widen to its own type": (lambda: ex.Widen(load(T.INT8), T.INT8), T.INT8),
    "Widen of a Select known to fit": (lambda: ex.Widen(ex.Select(less(), ex.Widen(load(T.INT8), T.INT32),
                                                                  ex.Widen(load(T.UINT8, 1), T.INT32)), T.INT16), T.INT16),
    "Subtract INT8 - UINT8 in INT16": (lambda: ex.Subtract(ex.Widen(load(T.INT8), T.INT16),
                                                           ex.Widen(load(T.UINT8, 1), T.INT16)), T.INT16),
    "Subtract UINT32 - INT32 in INT64": (lambda: ex.Subtract(ex.Widen(load(T.UINT32), T.INT64),
                                                             ex.Widen(load(T.INT32, 1), T.INT64)), T.INT64),
    "Subtract of two 8-bit differences in INT16": (lambda: ex.Subtract(
        ex.Subtract(ex.Widen(load(T.INT8), T.INT16), ex.Widen(load(T.INT8, 1), T.INT16)),
        ex.Subtract(ex.Widen(load(T.UINT8, 2), T.INT16), ex.Widen(load(T.UINT8, 3), T.INT16))), T.INT16),
    "ToFloat32 of UINT64": (lambda: ex.ToFloat32(load(T.UINT64)), F32),
    "ToFloat32 of FLOAT16": (lambda: ex.ToFloat32(load(F16)), F32),
    "Multiply of FLOAT32": (lambda: ex.Multiply(load(F32), ex.Param(0, F32)), F32),
    "Add of FLOAT32": (lambda: ex.Add(load(F32), ex.Param(0, F32)), F32),
    "Add INT16 + UINT8 in INT32": (lambda: ex.Add(ex.Widen(load(T.INT16), T.INT32), ex.Widen(load(T.UINT8, 1), T.INT32)),
                                   T.INT32),
    "Add of two UINT8 in UINT16": (lambda: ex.Add(ex.Widen(load(T.UINT8), T.UINT16),
                                                  ex.Widen(load(T.UINT8, 1), T.UINT16)), T.UINT16),
    "Divide of FLOAT32": (lambda: ex.Divide(load(F32), ex.Param(0, F32)), F32),
    "Divide of INT64": (lambda: ex.Divide(load(T.INT64), load(T.INT64, 1)), T.INT64),
    "Wrapping INT8 * INT8 in INT8": (lambda: ex.Wrapping(load(T.INT8), load(T.INT8, 1), "*"), T.INT8),
    "Wrapping UINT64 - UINT64": (lambda: ex.Wrapping(load(T.UINT64), ex.Param(0, T.UINT64), "-"), T.UINT64),
    "Remainder of FLOAT32": (lambda: ex.Remainder(load(F32), load(F32, 1)), F32),
    "SignBit of FLOAT32 is a BOOL": (lambda: ex.SignBit(load(F32)), ex.BOOL),
    "Remainder of UINT16": (lambda: ex.Remainder(load(T.UINT16), load(T.UINT16, 1)), T.UINT16),
    "Round of FLOAT32": (lambda: ex.Round(load(F32)), F32),
    "Saturate FLOAT32 to UINT8": (lambda: ex.Saturate(load(F32), T.UINT8), T.UINT8),
    "Saturate INT64 to INT8": (lambda: ex.Saturate(load(T.INT64), T.INT8), T.INT8),
    "Saturate UINT8 to INT64": (lambda: ex.Saturate(load(T.UINT8), T.INT64), T.INT64),
    "BitCount of INT64 is a UINT8": (lambda: ex.BitCount(load(T.INT64)), T.UINT8),
    "Bitwise UINT8 << UINT8": (lambda: ex.Bitwise(load(T.UINT8), load(T.UINT8, 1), "<<"), T.UINT8),
    "Bitwise INT64 ^ INT64": (lambda: ex.Bitwise(load(T.INT64), ex.Param(0, T.INT64), "^"), T.INT64),
    "Wrap INT64 to UINT8": (lambda: ex.Wrap(load(T.INT64), T.UINT8), T.UINT8),
    "Wrap INT8 to UINT64": (lambda: ex.Wrap(load(T.INT8), T.UINT64), T.UINT64),
    "Less of UINT64": (lambda: ex.Less(load(T.UINT64), ex.Param(0, T.UINT64)), ex.BOOL),
    "Less of FLOAT32": (less, ex.BOOL),
    "IsNumber of FLOAT32": (lambda: ex.IsNumber(load(F32)), ex.BOOL),
    "Select of FLOAT16": (lambda: ex.Select(less(), load(F16, 1), load(F16, 2)), F16),
    "Select of INT64": (lambda: ex.Select(less(), load(T.INT64, 1), ex.Param(1, T.INT64)), T.INT64),
    "Store FLOAT32 as FLOAT16": (lambda: ex.Store(load(F32), F16), F16),
    "Store FLOAT16 as FLOAT16": (lambda: ex.Store(load(F16), F16), F16),
    "Store UINT16 as UINT16": (lambda: ex.Store(load(T.UINT16), T.UINT16), T.UINT16),
    "Load FLOAT64 holds FLOAT64": (lambda: load(F64), F64),
    "ToFloat64 of UINT64": (lambda: ex.ToFloat64(load(T.UINT64)), F64),
    "ToFloat64 of FLOAT32": (lambda: ex.ToFloat64(load(F32)), F64),
    "Saturate FLOAT64 to INT64": (lambda: ex.Saturate(load(F64), T.INT64), T.INT64),
    "Select of FLOAT64": (lambda: ex.Select(less(), load(F64, 1), load(F64, 2)), F64),
    "Store FLOAT64 as FLOAT64": (lambda: ex.Store(load(F64), F64), F64),
    "Store FLOAT64 as FLOAT32": (lambda: ex.Store(load(F64), F32), F32),
    "Store FLOAT64 as FLOAT16": (lambda: ex.Store(load(F64), F16), F16),
    "BinaryFunction POW to FLOAT16 is a FLOAT32": (lambda: ex.BinaryFunction(load(F32), load(F32, 1), "POW", F16),
                                                   F32),
}


@pytest.mark.parametrize(("make", "data_type"), WELL_TYPED.values(), ids=WELL_TYPED.keys())
def test_well_typed_nodes_have_their_type(make: Callable[[], ex.Expr], data_type: ex.ValueType) -> None:
    assert make().data_type == data_type


def test_integer_range_follows_add_and_saturate() -> None:
    total = ex.Add(ex.Widen(load(T.INT8), T.INT32), ex.Widen(load(T.UINT16, 1), T.INT32))
    assert ex.integer_range(total) == (-128, 127 + 65535)
    assert ex.integer_range(ex.Saturate(total, T.UINT8)) == (0, 255)
    assert ex.integer_range(ex.Saturate(load(T.INT8), T.UINT32)) == (0, 127)  # the source's reach, clamped
    assert ex.integer_range(ex.Saturate(load(F32), T.INT16)) == (-32768, 32767)
    # So a Saturate makes a sum exact that the type's own range would not: INT16 + UINT8 needs INT32 ...
    with pytest.raises(ex.ExpressionError, match=r"^Add in INT16 may overflow$"):
        ex.Add(load(T.INT16), ex.Widen(load(T.UINT8, 1), T.INT16))
    # ... but a value saturated to INT8 plus a UINT8 fits INT16.
    narrowed = ex.Widen(ex.Saturate(load(F32), T.INT8), T.INT16)
    assert ex.Add(narrowed, ex.Widen(load(T.UINT8, 1), T.INT16)).data_type is T.INT16


def test_integer_range_follows_subtract_select_and_widen() -> None:
    diff = ex.Subtract(ex.Widen(load(T.INT8), T.INT32), ex.Widen(load(T.UINT16, 1), T.INT32))
    assert ex.integer_range(diff) == (-128 - 65535, 127)
    assert ex.integer_range(ex.Widen(diff, T.INT64)) == (-65663, 127)
    assert ex.integer_range(ex.Select(less(), ex.Widen(load(T.INT8), T.INT16),
                                      ex.Widen(load(T.UINT8), T.INT16))) == (-128, 255)
    assert ex.integer_range(ex.Param(0, T.UINT32)) == (0, 4294967295)
    with pytest.raises(ex.ExpressionError):
        ex.integer_range(load(F32))


# --- difference_type ---------------------------------------------------------------------------------------

# The narrowest signed type holding every a - b, worked out by hand from the types' ranges
# ("-": none, since a difference of 64-bit values needs 65 bits).
DIFFERENCE_TABLE = """
         INT8   UINT8  INT16  UINT16 INT32  UINT32 INT64  UINT64
INT8     INT16  INT16  INT32  INT32  INT64  INT64  -      -
UINT8    INT16  INT16  INT32  INT32  INT64  INT64  -      -
INT16    INT32  INT32  INT32  INT32  INT64  INT64  -      -
UINT16   INT32  INT32  INT32  INT32  INT64  INT64  -      -
INT32    INT64  INT64  INT64  INT64  INT64  INT64  -      -
UINT32   INT64  INT64  INT64  INT64  INT64  INT64  -      -
INT64    -      -      -      -      -      -      -      -
UINT64   -      -      -      -      -      -      -      -
"""


def _difference_cases() -> list[tuple[T, T, T | None]]:
    header, *rows = (line.split() for line in DIFFERENCE_TABLE.strip().splitlines())
    return [(T[row[0]], T[column], None if cell == "-" else T[cell])
            for row in rows for column, cell in zip(header, row[1:])]


@pytest.mark.parametrize(("a", "b", "expected"), _difference_cases(), ids=lambda v: getattr(v, "name", "none"))
def test_difference_type_of_every_pair(a: T, b: T, expected: T | None) -> None:
    if expected is None:
        with pytest.raises(ex.ExpressionError):
            ex.difference_type(a, b)
        return
    assert ex.difference_type(a, b) is expected
    wide = ex.Subtract(ex.Widen(load(a), expected), ex.Widen(load(b, 1), expected))  # and the node accepts it
    assert wide.data_type is expected


def test_difference_type_of_one_type() -> None:
    assert ex.difference_type(T.UINT8) is T.INT16
    assert ex.difference_type(T.UINT32) is T.INT64


# --- nodes, loads, params ----------------------------------------------------------------------------------

def test_nodes_lists_children_first_and_shared_nodes_once() -> None:
    p = ex.Param(0, F32)
    x = load(F16)
    v = ex.ToFloat32(x)
    test = ex.Less(p, v)
    select = ex.Select(test, p, v)
    store = ex.Store(select, F16)
    assert list(ex.nodes(store)) == [p, x, v, test, select, store]
    assert ex.loads(store) == {0: F16}
    assert ex.params(store) == {0: F32}


def test_nodes_counts_equal_subtrees_built_apart_once() -> None:
    def widened() -> ex.Expr:
        return ex.Widen(ex.Load(0, T.INT8), T.INT16)

    diff = ex.Subtract(widened(), widened())  # two separate but equal objects
    assert [type(n).__name__ for n in ex.nodes(diff)] == ["Load", "Widen", "Subtract"]


@given(expressions(max_depth=5))
def test_nodes_of_random_trees(case: ExpressionCase) -> None:
    listed = list(ex.nodes(case.expr))
    assert len(set(listed)) == len(listed) and listed[-1] == case.expr
    for k, node in enumerate(listed):
        assert all(child in listed[:k] for child in node.children)
    assert ex.loads(case.expr) == dict(enumerate(case.inputs))
    assert ex.params(case.expr) == {k: T.parse(np.dtype(type(v))) for k, v in enumerate(case.scalars)}


# --- the node set and the lowering tables ------------------------------------------------------------------

def _lower_numpy(expr: ex.Store) -> None:
    numpy_lowering.evaluate(expr, [np.zeros(2, np.float32)], ())


def _lower_numba(expr: ex.Store) -> None:
    from opendml.backends.cpu_kernels import codegen

    codegen.source(expr)


def _lower_vector(expr: ex.Store) -> None:
    """Into a function of one FLOAT32 vector argument, as the streaming kernels lower it when they compile."""
    from llvmlite import ir

    from opendml.backends.cpu_kernels import vectors

    vector = ir.VectorType(ir.FloatType(), 16)
    function = ir.Function(ir.Module(), ir.FunctionType(ir.VoidType(), [vector]), "f")
    vectors._lower(ir.IRBuilder(function.append_basic_block()), expr, lambda k: function.args[k], (), 16)


def _lower_cuda(expr: ex.Store) -> None:
    from opendml.backends.cuda import expr_c

    expr_c.apply_function("TEST", [F32], expr)  # text only: no GPU needed


# Every lowering of the nodes, a table (``LOWERINGS``) from node class to its lowering in each module, and a
# call lowering one FLOAT32 expression through it.
LOWERINGS = [
    pytest.param("opendml.kernels.numpy_lowering", _lower_numpy, id="numpy"),
    pytest.param("opendml.backends.cpu_kernels.nodes", _lower_numba, id="numba", marks=NO_NUMBA),
    pytest.param("opendml.backends.cpu_kernels.vectors", _lower_vector, id="llvm-vector", marks=NO_NUMBA),
    pytest.param("opendml.backends.cuda.node_c", _lower_cuda, id="cuda-c"),
]


def _node_classes() -> set[type[ex.Expr]]:
    """The concrete node classes of opendml.expr (defined in its node modules, opendml.expr_*): every subclass of
    Expr there but the private bases."""
    found: set[type[ex.Expr]] = set()
    pending: list[type[ex.Expr]] = [ex.Expr]
    while pending:
        for cls in pending.pop().__subclasses__():
            pending.append(cls)
            if cls.__module__.startswith("opendml.expr_") and not cls.__name__.startswith("_"):
                found.add(cls)
    return found


def test_the_node_set_is_every_node_class() -> None:
    assert len(set(ex.NODES)) == len(ex.NODES)
    assert set(ex.NODES) == _node_classes()


def _names(classes: set[type[ex.Expr]]) -> list[str]:
    return sorted(cls.__name__ for cls in classes)


@pytest.mark.parametrize(("module", "lower"), LOWERINGS)
def test_each_lowering_is_a_table_of_exactly_the_nodes(module: str, lower: Callable[[ex.Store], None]) -> None:
    table = importlib.import_module(module).LOWERINGS
    missing, extra = set(ex.NODES) - set(table), set(table) - set(ex.NODES)
    assert not missing and not extra, f"{module}.LOWERINGS lacks {_names(missing)}, has extra {_names(extra)}"


@pytest.mark.parametrize(("module", "lower"), LOWERINGS)
def test_a_node_missing_from_a_table_is_named_where_it_is_lowered(module: str, lower: Callable[[ex.Store], None],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    expr = ex.Store(ex.Round(load(F32)), F32)
    lower(expr)  # every node in the table: lowered
    monkeypatch.delitem(importlib.import_module(module).LOWERINGS, ex.Round)
    with pytest.raises((ex.ExpressionError, dml.KernelUnsupportedError), match="Round"):
        lower(expr)


# --- equality and hashing ----------------------------------------------------------------------------------

def _dequantize_tree() -> ex.Expr:
    difference = ex.Subtract(ex.Widen(ex.Load(0, T.UINT8), T.INT16), ex.Widen(ex.Load(2, T.UINT8), T.INT16))
    return ex.Store(ex.Multiply(ex.ToFloat32(difference), ex.ToFloat32(ex.Load(1, F16))), F16)


def test_equal_trees_built_apart_are_equal_and_hash_alike() -> None:
    a, b = _dequantize_tree(), _dequantize_tree()
    assert a is not b and a == b and hash(a) == hash(b)
    assert {a: "kernel"}[b] == "kernel"
    assert repr(a) == repr(b)


@pytest.mark.parametrize(("a", "b"), [
    (ex.Load(0, T.INT8), ex.Load(0, T.UINT8)),
    (ex.Load(0, T.INT8), ex.Load(1, T.INT8)),
    (ex.Load(0, T.INT32), ex.Param(0, T.INT32)),
    (ex.Multiply(ex.Load(0, F32), ex.Param(0, F32)), ex.Add(ex.Load(0, F32), ex.Param(0, F32))),
    (ex.Multiply(ex.Load(0, F32), ex.Param(0, F32)), ex.Multiply(ex.Param(0, F32), ex.Load(0, F32))),
    (ex.Store(ex.Load(0, F32), F32), ex.Store(ex.Load(0, F32), F16)),
], ids=["type", "operand", "load vs param", "node kind", "operand order", "store type"])
def test_trees_that_differ_are_not_equal(a: ex.Expr, b: ex.Expr) -> None:
    assert a != b and b != a
    assert len({a, b}) == 2


# --- kernel specifications ---------------------------------------------------------------------------------

def _clip_like(scalars: tuple[np.generic, ...] = (np.float32(1),)) -> KernelSpec:
    v = ex.Load(0, F32)
    return KernelSpec("TEST", (F32,), F32, ex.Store(ex.Select(ex.Less(ex.Param(0, F32), v), ex.Param(0, F32), v), F32),
                      scalars)


BAD_SPECS: dict[str, Callable[[], KernelSpec]] = {
    "Load of a missing operand": lambda: KernelSpec("TEST", (F32,), F32, ex.Store(ex.Load(1, F32), F32)),
    "Load of an absent operand": lambda: KernelSpec(
        "TEST", (T.UINT8, F32, None), F32,
        ex.Store(ex.ToFloat32(ex.Widen(ex.Load(2, T.UINT8), T.INT16)), F32)),
    "Load of another type than the operand's": lambda: KernelSpec("TEST", (T.UINT8,), T.INT8,
                                                                  ex.Store(ex.Load(0, T.INT8), T.INT8)),
    "Param 1 without Param 0": lambda: KernelSpec(
        "TEST", (F32,), F32, ex.Store(ex.Add(ex.Load(0, F32), ex.Param(1, F32)), F32), (np.float32(0), np.float32(1))),
    "a Param without a scalar": lambda: KernelSpec(
        "TEST", (F32,), F32, ex.Store(ex.Add(ex.Load(0, F32), ex.Param(0, F32)), F32)),
    "a scalar without a Param": lambda: _clip_like((np.float32(1), np.float32(2))),
    "a FLOAT64 scalar for a FLOAT32 Param": lambda: _clip_like((np.float64(1),)),
    "a Python float scalar": lambda: _clip_like((1.0,)),  # type: ignore[arg-type]
    "an INT64 scalar for an INT32 Param": lambda: KernelSpec(
        "TEST", (T.INT32,), T.INT32, ex.Store(ex.Select(ex.Less(ex.Load(0, T.INT32), ex.Param(0, T.INT32)),
                                                        ex.Param(0, T.INT32), ex.Load(0, T.INT32)), T.INT32),
        (np.int64(3),)),
    "an element-wise spec not ending in Store": lambda: KernelSpec(
        "TEST", (F32,), F32, ex.Add(ex.Load(0, F32), ex.Load(0, F32))),
    "an element-wise spec storing another type": lambda: KernelSpec("TEST", (F32,), F32, ex.Store(ex.Load(0, F32), F16)),
}


@pytest.mark.parametrize("make", BAD_SPECS.values(), ids=BAD_SPECS.keys())
def test_malformed_kernel_specs_are_refused(make: Callable[[], KernelSpec]) -> None:
    with pytest.raises(ex.ExpressionError):
        make()


def test_kernel_spec_key_leaves_out_the_scalar_values() -> None:
    one, two = _clip_like((np.float32(1),)), _clip_like((np.float32(2),))
    assert one.key == two.key and hash(one.key) == hash(two.key)
    assert one != two  # the specs differ, the compiled kernel does not
    other = KernelSpec("TEST", (F32,), F16, ex.Store(ex.Load(0, F32), F16))
    assert other.key != one.key
    assert not one.is_reduction


def test_a_reduction_spec_compares_a_value_and_stores_indices() -> None:
    reduction = Reduction(ReductionKind.ARGMIN, (1,), AxisDirection.DECREASING, NanPolicy.IGNORE, T.UINT32)
    spec = KernelSpec("ARGMIN", (F16,), T.UINT32, ex.Load(0, F16), reduction=reduction)
    assert spec.is_reduction and spec.reduction in spec.key
    with pytest.raises(ex.ExpressionError):  # it still reads only its operands
        KernelSpec("ARGMIN", (F16,), T.UINT32, ex.Load(0, F32), reduction=reduction)


def test_scalars_number_params_in_order_and_type_them() -> None:
    scalars = Scalars()
    first, second = scalars.add(np.float64(0.1), F32), scalars.add(np.int64(300), T.INT16)
    assert (first, second) == (ex.Param(0, F32), ex.Param(1, T.INT16))
    assert [type(v) for v in scalars.values] == [np.float32, np.int16]
    assert scalars.values[0] == np.float32(0.1) and scalars.values[1] == 300


# --- random trees: the NumPy lowering against an element-by-element evaluator ------------------------------

def float32_of_int(n: int) -> float:
    """``n`` rounded to float32, nearest even, in exact integer arithmetic (no double in between)."""
    magnitude = abs(n)
    shift = max(magnitude.bit_length() - 24, 0)
    kept, dropped = divmod(magnitude, 1 << shift)
    half = (1 << shift) >> 1
    if shift and (dropped > half or (dropped == half and kept % 2 == 1)):
        kept += 1
    value = float(kept << shift)  # at most 25 significant bits: a double holds it exactly
    return round_f32(-value if n < 0 else value)


@pytest.mark.parametrize(("n", "expected"), [
    (2**24 + 1, 2.0**24), (2**24 + 3, 2.0**24 + 4), (-(2**24) - 1, -(2.0**24)),
    (2**60 + 2**36 + 1, 2.0**60 + 2.0**37),  # through a double this would round to 2**60
    (2**64 - 1, 2.0**64), (-(2**63), -(2.0**63)), (7, 7.0),
])
def test_float32_of_int(n: int, expected: float) -> None:
    assert float32_of_int(n) == expected


def in_range(value: int, t: ex.ValueType) -> int:
    assert isinstance(t, T)
    low, high = t.integer_range
    assert low <= value <= high, f"{value} is no {t.name}: the node is not exact"
    return value


def element(node: ex.Expr, row: Sequence[int | float], scalars: Sequence[int | float]) -> int | float | bool:
    """One element of ``node``'s value, by the docstring table of opendml/expr.py."""
    def of(child: ex.Expr) -> int | float | bool:
        return element(child, row, scalars)

    if isinstance(node, ex.Load):
        return row[node.operand]
    if isinstance(node, ex.Param):
        return scalars[node.index]
    if isinstance(node, ex.Widen):
        return in_range(int(of(node.value)), node.type)
    if isinstance(node, ex.Subtract):
        return in_range(int(of(node.a)) - int(of(node.b)), node.data_type)
    if isinstance(node, ex.ToFloat64):
        value = of(node.value)
        return value if isinstance(value, float) else float(int(value))  # Python's int to float: nearest even
    if isinstance(node, ex.ToFloat32):
        value = of(node.value)
        return value if isinstance(value, float) else float32_of_int(int(value))  # FLOAT16: exact already
    if isinstance(node, ex.Multiply):
        return round_f32(float(of(node.a)) * float(of(node.b)))  # a double holds the product exactly
    if isinstance(node, ex.Add):
        if node.data_type is not F32:
            return in_range(int(of(node.a)) + int(of(node.b)), node.data_type)
        return round_f32(float(of(node.a)) + float(of(node.b)))  # double rounding is harmless here
    if isinstance(node, ex.Divide):
        if node.data_type is not F32:
            a, b = int(of(node.a)), int(of(node.b))
            return 0 if b == 0 else wrapped(truncated_quotient(a, b), node.data_type)  # INT_MIN / -1 wraps
        return float32_quotient(float(of(node.a)), float(of(node.b)))
    if isinstance(node, ex.Wrapping):
        a, b = int(of(node.a)), int(of(node.b))
        return wrapped(a + b if node.op == "+" else a - b if node.op == "-" else a * b, node.data_type)
    if isinstance(node, ex.Remainder):
        if node.data_type is F32:
            a, b = float(of(node.a)), float(of(node.b))
            if math.isnan(a) or math.isnan(b) or math.isinf(a) or b == 0:
                return math.nan
            return math.fmod(a, b)  # exact, of float32 values held exactly as doubles: a float32 itself
        a, b = int(of(node.a)), int(of(node.b))
        return 0 if b == 0 else a - truncated_quotient(a, b) * b  # the sign of a; x % -1 is 0
    if isinstance(node, ex.Negate):
        value = of(node.value)
        if isinstance(value, float):
            return -value  # the sign flipped: -0.0 of 0.0, NaN stays NaN
        low, high = node.data_type.integer_range  # type: ignore[union-attr]
        return (-int(value) - low) % (high - low + 1) + low  # wrapping: the smallest integer is its own negation
    if isinstance(node, ex.BitNot):
        low, high = node.data_type.integer_range  # type: ignore[union-attr]
        return -int(of(node.value)) - 1 if low < 0 else high - int(of(node.value))  # every bit inverted
    if isinstance(node, ex.BitCount):
        bits = 8 * node.value.data_type.size  # type: ignore[union-attr]
        return bin(int(of(node.value)) & ((1 << bits) - 1)).count("1")  # the two's complement bits of its width
    if isinstance(node, ex.Bitwise):
        return bitwise(node.op, int(of(node.a)), int(of(node.b)), node.data_type)
    if isinstance(node, ex.Wrap):
        return wrapped(int(of(node.value)), node.type)  # the value modulo 2**bits, into the type's range
    if isinstance(node, ex.Sqrt):
        value = float(of(node.value))
        if math.isnan(value) or value < 0:
            return math.nan
        return value if value == 0 or math.isinf(value) else round_f32(math.sqrt(value))  # -0.0 stays
    if isinstance(node, ex.Function):  # the exact value rounded once (the mpmath model)
        return correctly_rounded(node.name, float(of(node.value)), node.precision.name)
    if isinstance(node, ex.BinaryFunction):  # the exact value rounded once (the mpmath model)
        return correctly_rounded_pair(node.name, float(of(node.a)), float(of(node.b)), node.precision.name)
    if isinstance(node, ex.Round):
        value = float(of(node.value))
        if not math.isfinite(value):
            return value
        return math.copysign(float(round(value)), value)  # ties to even; -0.4 gives -0.0
    if isinstance(node, ex.Saturate):
        return saturated(of(node.value), node.type)
    if isinstance(node, ex.Less):
        return bool(of(node.a) < of(node.b))  # False when either is NaN
    if isinstance(node, ex.IsNumber):
        value = of(node.value)
        return value == value
    if isinstance(node, ex.SignBit):
        return math.copysign(1.0, float(of(node.value))) < 0  # -0.0 and a NaN's sign too
    if isinstance(node, ex.Select):
        return of(node.a) if of(node.condition) else of(node.b)
    if isinstance(node, ex.Store):
        value = of(node.value)
        if node.type is F16 and node.value.data_type is F32:
            return round_f16(float(value))
        if node.value.data_type is F64 and node.type is not F64:
            return round_double(float(value), node.type.name)  # once, straight from the double
        return value
    raise AssertionError(f"no meaning for {node!r}")


def wrapped(value: int, t: ex.ValueType) -> int:
    """An exact integer brought into ``t``'s range modulo 2**bits (two's complement)."""
    low, high = t.integer_range  # type: ignore[union-attr]
    return (value - low) % (high - low + 1) + low


def bitwise(op: str, a: int, b: int, t: ex.ValueType) -> int:
    """Bitwise's meaning on Python integers (two's complement, of any width): the operation on the bits, a shift
    by b modulo the width, ``>>`` of a signed value filling with its sign (Python's own ``>>``)."""
    assert isinstance(t, T)
    if op in ("<<", ">>"):
        count = b % t.bits
        return wrapped(a << count, t) if op == "<<" else a >> count
    return wrapped({"&": a & b, "|": a | b, "^": a ^ b}[op], t)


def saturated(value: int | float | bool, t: T) -> int:
    """Saturate's meaning: truncated toward zero, NaN as 0, clamped to ``t``'s range."""
    low, high = t.integer_range
    if isinstance(value, float):
        if math.isnan(value):
            return 0
        if math.isinf(value):
            return high if value > 0 else low
        value = math.trunc(value)
    return min(max(int(value), low), high)


def python_value(value: np.generic) -> int | float:
    return float(value) if isinstance(value, np.floating) else int(value)


@given(data=st.data(), case=expressions(max_depth=5), count=st.integers(1, 6))
def test_numpy_lowering_matches_the_element_evaluator(data: st.DataObject, case: ExpressionCase, count: int) -> None:
    arrays = data.draw(operands(case.inputs, count))
    spec = KernelSpec("TEST", case.inputs, case.expr.type, case.expr, case.scalars)  # a valid kernel
    got = numpy_lowering.evaluate(spec.element, arrays, spec.scalars)
    assert got.dtype == case.expr.type.numpy and got.shape == (count,)
    scalars = [python_value(v) for v in case.scalars]
    for i in range(count):
        row = [python_value(a[i]) for a in arrays]
        expected = element(case.expr, row, scalars)
        assert same_value(python_value(got[i]), expected), (case.expr, row, scalars, got[i], expected)


def _node_cases() -> dict[str, tuple[ex.Store, tuple[T, ...]]]:
    """One small tree per node and type, to run over every pair of edge values."""
    l0, l1 = ex.Load(0, F32), ex.Load(1, F32)
    cases: dict[str, tuple[ex.Store, tuple[T, ...]]] = {
        "Multiply": (ex.Store(ex.Multiply(l0, l1), F32), (F32, F32)),
        "Param": (ex.Store(ex.Multiply(l0, ex.Param(0, F32)), F32), (F32,)),  # NODE_SCALARS
        "Add": (ex.Store(ex.Add(l0, l1), F32), (F32, F32)),
        "Add stored as FLOAT16": (ex.Store(ex.Add(l0, l1), F16), (F32, F32)),
        "Less FLOAT32": (ex.Store(ex.Select(ex.Less(l0, l1), l1, l0), F32), (F32, F32)),
        "IsNumber": (ex.Store(ex.Select(ex.IsNumber(l0), l0, l1), F32), (F32, F32)),
        "SignBit": (ex.Store(ex.Select(ex.SignBit(l0), l0, l1), F32), (F32, F32)),
        "Divide": (ex.Store(ex.Divide(l0, l1), F32), (F32, F32)),
        "Remainder FLOAT32": (ex.Store(ex.Remainder(l0, l1), F32), (F32, F32)),
        "Round": (ex.Store(ex.Round(ex.Divide(l0, l1)), F32), (F32, F32)),
        "Negate FLOAT32": (ex.Store(ex.Negate(ex.Add(l0, l1)), F32), (F32, F32)),
        "Sqrt": (ex.Store(ex.Sqrt(ex.Multiply(l0, l1)), F32), (F32, F32)),
        "Function EXP": (ex.Store(ex.Function(ex.Multiply(l0, l1), "EXP", F32), F32), (F32, F32)),
        "Function LOG to FLOAT16": (ex.Store(ex.Function(ex.ToFloat32(ex.Load(0, F16)), "LOG", F16), F16), (F16,)),
        "BinaryFunction POW": (ex.Store(ex.BinaryFunction(l0, l1, "POW", F32), F32), (F32, F32)),
        "BinaryFunction ATAN_YX to FLOAT16": (ex.Store(ex.BinaryFunction(l0, l1, "ATAN_YX", F16), F16), (F32, F32)),
        "ToFloat32 of FLOAT16": (ex.Store(ex.Multiply(ex.ToFloat32(ex.Load(0, F16)), l1), F32), (F16, F32)),
        "Select of FLOAT16": (ex.Store(ex.Select(ex.Less(l1, ex.ToFloat32(ex.Load(0, F16))), ex.Load(0, F16),
                                                 ex.Load(2, F16)), F16), (F16, F32, F16)),
        **_double_cases(),
    }
    for t in ex_strategies.INTEGERS:
        a, b = ex.Load(0, t), ex.Load(1, t)
        cases[f"ToFloat32 of {t.name}"] = (ex.Store(ex.ToFloat32(a), F32), (t,))
        cases[f"ToFloat64 of {t.name}"] = (ex.Store(ex.ToFloat64(a), F64), (t,))
        cases[f"Saturate FLOAT64 to {t.name}"] = (ex.Store(ex.Saturate(ex.Load(0, F64), t), t), (F64,))
        cases[f"Saturate FLOAT32 to {t.name}"] = (ex.Store(ex.Saturate(ex.Multiply(l0, l1), t), t), (F32, F32))
        for s in ex_strategies.INTEGERS:
            cases[f"Saturate {s.name} to {t.name}"] = (ex.Store(ex.Saturate(ex.Load(0, s), t), t), (s,))
        cases[f"Less {t.name}"] = (ex.Store(ex.Select(ex.Less(a, b), a, b), t), (t, t))
        cases[f"BitNot {t.name}"] = (ex.Store(ex.BitNot(a), t), (t,))
        for op in ex.WRAPPING_OPS:
            cases[f"Wrapping {t.name} {op}"] = (ex.Store(ex.Wrapping(a, b, op), t), (t, t))
        cases[f"Divide {t.name}"] = (ex.Store(ex.Divide(a, b), t), (t, t))
        cases[f"Remainder {t.name}"] = (ex.Store(ex.Remainder(a, b), t), (t, t))
        cases[f"BitCount {t.name}"] = (ex.Store(ex.BitCount(a), T.UINT8), (t,))
        for op in ex.BITWISE_OPS:
            cases[f"Bitwise {t.name} {op}"] = (ex.Store(ex.Bitwise(a, b, op), t), (t, t))
        for s in ex_strategies.INTEGERS:
            cases[f"Wrap {s.name} to {t.name}"] = (ex.Store(ex.Wrap(ex.Load(0, s), t), t), (s,))
        if t.is_signed:  # the type's limits among the edges: the smallest wraps to itself
            cases[f"Negate {t.name}"] = (ex.Store(ex.Negate(a), t), (t,))
        for s in ex_strategies.INTEGERS:
            if t.size < 8 and s.size < 8:  # 64-bit values have no exact difference type
                wide = ex.difference_type(t, s)
                difference = ex.Subtract(ex.Widen(a, wide), ex.Widen(ex.Load(1, s), wide))
                cases[f"Subtract {t.name} - {s.name}"] = (ex.Store(difference, wide), (t, s))
                if t.size < 4 and s.size < 4:  # a sum of two 32-bit values needs 64 bits (a difference type)
                    total = ex.Add(ex.Widen(a, T.INT32), ex.Widen(ex.Load(1, s), T.INT32))
                    cases[f"Add {t.name} + {s.name}"] = (ex.Store(total, T.INT32), (t, s))
    return cases


def _double_cases() -> dict[str, tuple[ex.Store, tuple[T, ...]]]:
    """FLOAT64 loaded and stored as itself, as FLOAT32 and FLOAT16 (rounded once, inside an expression too), widened
    from FLOAT32 and FLOAT16, and selected."""
    d0, d1 = ex.Load(0, F64), ex.Load(1, F64)
    half = ex.Store(d0, F16)  # a fused kernel's FLOAT16 intermediate: the double rounded once, read back
    return {
        "Load and Store FLOAT64": (ex.Store(d0, F64), (F64,)),
        "Store FLOAT64 as FLOAT32": (ex.Store(d0, F32), (F64,)),
        "Store FLOAT64 as FLOAT16": (ex.Store(d0, F16), (F64,)),
        "Store FLOAT64 as FLOAT16 inside": (ex.Store(ex.ToFloat64(ex.ToFloat32(half)), F64), (F64,)),
        "ToFloat64 of FLOAT32": (ex.Store(ex.ToFloat64(ex.Load(0, F32)), F64), (F32,)),
        "ToFloat64 of FLOAT16": (ex.Store(ex.ToFloat64(ex.ToFloat32(ex.Load(0, F16))), F64), (F16,)),
        "Select of FLOAT64": (ex.Store(ex.Select(ex.SignBit(ex.Store(d0, F32)), d0, d1), F64), (F64, F64)),
    }


NODE_CASES = _node_cases()
NODE_SCALARS = (np.float32(-1.5),)  # the value of Param(0, FLOAT32) in a case


def test_every_node_has_a_case_over_edge_values() -> None:
    covered = {type(node) for expr, _ in NODE_CASES.values() for node in ex.nodes(expr)}
    assert covered == set(ex.NODES), _names(set(ex.NODES) - covered)


@pytest.mark.parametrize(("expr", "inputs"), NODE_CASES.values(), ids=NODE_CASES.keys())
def test_numpy_lowering_of_each_node_over_edge_values(expr: ex.Store, inputs: tuple[T, ...]) -> None:
    rows = list(itertools.product(*(ex_strategies.edges(t) for t in inputs)))
    arrays = [np.array([row[k] for row in rows], dtype=t.numpy) for k, t in enumerate(inputs)]
    got = numpy_lowering.evaluate(expr, arrays, NODE_SCALARS)
    for i, row in enumerate(rows):
        typed = [python_value(a[i]) for a in arrays]
        expected = element(expr, typed, [python_value(v) for v in NODE_SCALARS])
        assert same_value(python_value(got[i]), expected), (row, got[i], expected)
