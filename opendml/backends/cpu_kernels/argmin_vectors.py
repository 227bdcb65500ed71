"""ARGMIN's lane reduction of a computed element: the prologue's value computed in vector registers where
the run is loaded, and compared there, never stored.

``lanes_typing`` is the typing of a generated intrinsic (``argmin_fast``): the FLOAT32 element expression is
lowered to LLVM vectors as the streaming element-wise kernels lower theirs (``vectors._lower``: the same
instruction per node, no fast-math flags, so the values are the bits the unfused intermediate holds), and
each vector lane keeps its smallest value and the vector it came from, compared as floats, as
``argmin_lanes.lane_argmin_float`` does for loaded FLOAT32 (so the same exactness rules hold: the caller
uses it only where ``floats_compare_exactly()``, and a best of +inf is not certain).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ... import expr as ex
from ...dtypes import DataType
from .argmin_lanes import NanSeen, _chosen_position, _float_minimum, float_order
from .vectors import Loop, _lower, _numba_type, _reader, i64, lanes, splat, streamable

__all__ = ["bits_of", "lanes_typing", "vectorised"]


def vectorised(element: ex.Expr) -> bool:
    """Whether ``lanes_typing`` lowers ``element``: a FLOAT32 value with no FLOAT16 anywhere."""
    return element.data_type is DataType.FLOAT32 and streamable(element)


@intrinsic
def bits_of(typingctx, value):  # type: ignore[no-untyped-def]
    """A float32's bits as int32 (the engines' FLOAT32 keys are made from these)."""
    if value != types.float32:
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.bitcast(args[0], ir.IntType(32))

    return types.int32(types.float32), codegen


def lanes_typing(element: ex.Expr, operands: Sequence[int], args: Sequence[types.Type]) -> Any:
    """The typing of ``(bits, position)`` of the best value of ``element`` over ``count`` whole vectors:
    ``args`` are the operands ``operands`` (an array, or one value: hoisted), each one's first element, the
    vector count, the order (None: INCREASING), the ``kind`` (``argmin_keys``: ARGMAX compares the values
    negated, and the bits returned are those compared; PROPAGATE gives +inf's bits, not certain, where a
    NaN was met), then the scalar parameters. None where they do not fit."""
    m = len(operands)
    values, count, kind = args[:m], args[2 * m], args[2 * m + 2]
    increasing = isinstance(args[2 * m + 1], types.NoneType)
    loaded = ex.loads(element)
    wanted = [_numba_type(loaded[k]) for k in operands]
    if not (vectorised(element) and isinstance(count, types.Integer)):
        return None
    for v, t in zip(values, wanted):
        if (v.dtype if isinstance(v, types.Array) else v) != t:
            return None

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, llvm_args: Sequence[ir.Value]) -> Any:
        n = lanes(4)
        loop = Loop(context, builder, None, n)  # type: ignore[arg-type]
        reads = {k: _reader(loop, values[p], wanted[p], llvm_args[p], llvm_args[m + p]) for p, k in enumerate(operands)}
        scalars = [splat(builder, v, n) for v in llvm_args[2 * m + 3:]]
        f32, i32 = ir.FloatType(), ir.IntType(32)
        best = cgutils.alloca_once_value(builder, splat(builder, ir.Constant(f32, float("inf")), n))
        where = cgutils.alloca_once_value(builder, ir.Constant(ir.VectorType(i32, n), [0] * n))
        nan = NanSeen(builder, kind, n)
        with cgutils.for_range_slice(builder, i64(0), llvm_args[2 * m], i64(1)) as (j, _):
            at = builder.mul(j, i64(n))
            v = float_order(builder, _lower(builder, element, lambda k: reads[k](at), scalars, n), kind)
            nan.note(v)
            old = builder.load(best)
            takes = builder.fcmp_ordered("<" if increasing else "<=", v, old)  # NaN never taken
            builder.store(builder.select(takes, v, old), best)
            builder.store(builder.select(takes, splat(builder, builder.trunc(j, i32), n), builder.load(where)), where)
        found = builder.load(best)
        smallest = _float_minimum(builder, found)
        holds = builder.fcmp_ordered("==", found, splat(builder, smallest, n))
        position = _chosen_position(builder, holds, builder.load(where), increasing)
        return context.make_tuple(builder, signature.return_type, [nan.result(builder.bitcast(smallest, i32)),
                                                                   position])

    return types.Tuple((types.int32, types.int64))(*args), codegen

