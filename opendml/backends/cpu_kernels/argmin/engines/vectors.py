"""ARGMIN's lane reduction of a computed element: the prologue's value computed in vector registers where
the run is loaded, and compared there, never stored.

``lanes_typing`` is the typing of a generated intrinsic (``fast_rows``): the FLOAT32 element expression is
lowered to LLVM vectors as the streaming element-wise kernels lower theirs (``vectors._lower``: the same
instruction per node, no fast-math flags, so the values are the bits the unfused intermediate holds), and
each vector lane keeps its smallest (ARGMAX: largest) value and the vector it came from, compared as floats, as
``lanes.lane_argmin_float`` does for loaded FLOAT32 (so the same exactness rules hold: the caller
uses it only where ``floats_compare_exactly()``, and a best of +inf, ARGMAX: -inf, is not certain).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ..... import expr as ex
from .....dtypes import DataType
from ...vectors import Loop, _lower, _numba_type, _reader, i64, lanes, splat, streamable
from .lanes import FloatBest

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
    vector count, the order (None: INCREASING), the ``kind`` (``keys``: ARGMAX keeps the largest,
    PROPAGATE leaves a run that met a NaN not certain: ``lanes.FloatBest``), then the scalar
    parameters. None where they do not fit."""
    m = len(operands)
    values, count, order, kind = args[:m], args[2 * m], args[2 * m + 1], args[2 * m + 2]
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
        best = FloatBest(builder, kind, order, n)  # NaN never taken
        with cgutils.for_range_slice(builder, i64(0), llvm_args[2 * m], i64(1)) as (j, _):
            best.fold(_lower(builder, element, lambda k: reads[k](builder.mul(j, i64(n))), scalars, n), j)
        return context.make_tuple(builder, signature.return_type, best.result())

    return types.Tuple((types.int32, types.int64))(*args), codegen

