"""LLVM vector code: the streaming stores of element-wise kernels, lowered from their element expression.

An ordinary store first reads the cache line it writes (to own it) and leaves it in the caches, so an
element-wise operator on a tensor larger than the caches moves its output's bytes over the memory bus twice
and evicts everything else. A non-temporal store writes whole lines straight to memory. LLVM's loop
vectoriser will not emit one unless the scalar store is aligned to the whole vector, which it cannot know,
so the bulk of a large contiguous output is written by vector code built here (``stream_typing``): each call
runs ``count`` elements (a multiple of VECTOR_BYTES / output itemsize) from ``o[bo]``, which the caller has
aligned to VECTOR_BYTES (``rows.streamed``), loading per-element operands unaligned and splatting hoisted
ones (stride 0) and the scalar parameters.

Each node is the instruction the table in ``opendml.expr`` names, from its entry of ``LOWERINGS``:
``sext``/``zext``, ``sub``, ``sitofp`` or ``uitofp`` (to float32 or float64), ``fpext`` and ``fptrunc``, ``fmul``,
``fadd`` and ``fdiv`` without fast-math flags (never contracted into a fused multiply-add, never a reciprocal),
``add`` of integers, ``llvm.ctpop``, ``llvm.rint`` and the saturating conversions of ``arithmetic``, ordered
``fcmp`` and signed or unsigned ``icmp``, ``select``; integer nodes compute in the expression's own types (an 8-bit
DEQUANTIZE_LINEAR difference in INT16, as its expression says). FLOAT16 operands and outputs are not streamed (the
conversions, not the memory, take their time), nor expressions of a correctly rounded Function (its double
evaluation, not the memory, takes the time; its table lookup is scalar code). Other targets split or scalarise the
vectors; the results do not change.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.np.numpy_support import from_dtype

from ... import expr as ex
from ...dtypes import DataType
from . import arithmetic

VECTOR_BYTES = 64  # one cache line: every store writes a whole line


def lanes(itemsize: int) -> int:
    """Elements of ``itemsize`` bytes per vector."""
    return VECTOR_BYTES // itemsize


def i64(value: int) -> ir.Constant:
    return ir.Constant(ir.IntType(64), value)


def splat(builder: ir.IRBuilder, value: ir.Value, count: int) -> ir.Value:
    vector = ir.VectorType(value.type, count)
    undef = ir.Constant(vector, ir.Undefined)
    first = builder.insert_element(undef, value, ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(first, undef, ir.Constant(ir.VectorType(ir.IntType(32), count), [0] * count))


class Loop:
    """The vector loop of one call: element pointers of its arrays, vector loads and the streaming store."""

    def __init__(self, context: Any, builder: ir.IRBuilder, out_type: types.Array, count: int) -> None:
        self.context, self.builder, self.count = context, builder, count
        self.nontemporal = builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)])
        self.out_type = out_type

    def base(self, array_type: types.Array, array: ir.Value, start: ir.Value) -> ir.Value:
        data = self.context.make_array(array_type)(self.context, self.builder, array).data
        return self.builder.gep(data, [start])

    def load(self, base: ir.Value, k: ir.Value, dtype: types.Type) -> ir.Value:
        element = self.context.get_data_type(dtype)
        vector = ir.VectorType(element, self.count)
        pointer = self.builder.bitcast(self.builder.gep(base, [k]), vector.as_pointer())
        return self.builder.load(pointer, align=self.context.get_abi_sizeof(element))

    def store(self, base: ir.Value, k: ir.Value, value: ir.Value) -> None:
        pointer = self.builder.bitcast(self.builder.gep(base, [k]), value.type.as_pointer())
        self.builder.store(value, pointer, align=VECTOR_BYTES).set_metadata("nontemporal", self.nontemporal)

    def store_cached(self, base: ir.Value, k: ir.Value, value: ir.Value) -> None:
        """An ordinary vector store, aligned to its element only: for an output read back right after (a
        reduction's scratch tile), written beside streamed ones."""
        pointer = self.builder.bitcast(self.builder.gep(base, [k]), value.type.as_pointer())
        self.builder.store(value, pointer, align=self.context.get_abi_sizeof(value.type.element))

    def run(self, total: ir.Value, body: Callable[[ir.Value], None]) -> None:
        with cgutils.for_range_slice(self.builder, i64(0), total, i64(self.count)) as (k, _):
            body(k)


def streamable(*roots: ex.Expr) -> bool:
    """Whether ``stream_typing`` lowers ``roots`` (an element, and the extra values its kernel writes): no
    FLOAT16 operand or output, and one element size for every output (one vector width for every store)."""
    return len({root.data_type.size for root in roots}) == 1 and all(  # type: ignore[union-attr]
        node.data_type is not DataType.FLOAT16 and not isinstance(node, (ex.Function, ex.BinaryFunction))
        for root in roots for node in ex.nodes(root))


def _numba_type(t: DataType) -> types.Type:
    return from_dtype(t.numpy)


def stream_typing(roots: ex.Expr | Sequence[ex.Expr], operands: Sequence[int], args: Sequence[types.Type],
                  cached: Sequence[bool] = ()) -> Any:
    """The typing of a streaming intrinsic of ``roots`` (``numba.extending.intrinsic``: one element, or an
    element and the extra values its kernel writes): ``args`` are the operands ``operands`` (each an array,
    or one value: hoisted), the output arrays (one per root), each operand's first element, each output's,
    the count, then the scalar parameters. None where they do not fit. Several outputs are stored from one
    vector computation of the nodes they share, each with its own streaming store (the caller aligns
    them all: ``rows.in_phase``), but those ``cached`` flags: ordinary stores, aligned or not (a scratch
    tile that a reduction reads back)."""
    roots = (roots,) if isinstance(roots, ex.Expr) else tuple(roots)
    m, n = len(operands), len(roots)
    values, outs, count = args[:m], args[m:m + n], args[2 * m + 2 * n]
    loaded = {k: t for root in roots for k, t in ex.loads(root).items()}
    wanted = [_numba_type(loaded[k]) for k in operands]
    if not (streamable(*roots) and isinstance(count, types.Integer) and all(
            isinstance(o, types.Array) and o.dtype == _numba_type(r.data_type) for o, r in zip(outs, roots))):  # type: ignore
        return None
    for v, t in zip(values, wanted):
        if (v.dtype if isinstance(v, types.Array) else v) != t:
            return None

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, llvm_args: Sequence[ir.Value]) -> Any:
        loop = Loop(context, builder, outs[0], lanes(roots[0].data_type.size))  # type: ignore[union-attr]
        bases = [loop.base(o, llvm_args[m + q], llvm_args[2 * m + n + q]) for q, o in enumerate(outs)]
        reads = {k: _reader(loop, values[p], wanted[p], llvm_args[p], llvm_args[m + n + p])
                 for p, k in enumerate(operands)}
        scalars = [splat(builder, v, loop.count) for v in llvm_args[2 * m + 2 * n + 1:]]

        def body(j: ir.Value) -> None:
            lowered = _lower_all(builder, roots, lambda k: reads[k](j), scalars, loop.count)
            for q, (base, root) in enumerate(zip(bases, roots)):
                (loop.store_cached if q < len(cached) and cached[q] else loop.store)(base, j, lowered[root])

        loop.run(llvm_args[2 * m + 2 * n], body)
        return context.get_dummy_value()

    return types.void(*args), codegen


def _reader(loop: Loop, kind: types.Type, dtype: types.Type, value: ir.Value,
            start: ir.Value) -> Callable[[ir.Value], ir.Value]:
    """Vectors of an operand at element ``j`` of the run: loaded from an array, or one value splatted."""
    if isinstance(kind, types.Array):
        base = loop.base(kind, value, start)
        return lambda j: loop.load(base, j, dtype)
    whole = splat(loop.builder, value, loop.count)
    return lambda j: whole


_FLOATS = {DataType.FLOAT32: ir.FloatType(), DataType.FLOAT64: ir.DoubleType()}


def _vector(t: DataType, count: int) -> ir.VectorType:
    return ir.VectorType(_FLOATS.get(t) or ir.IntType(8 * t.size), count)


def _lower(builder: ir.IRBuilder, element: ex.Expr, load: Callable[[int], ir.Value], scalars: Sequence[ir.Value],
           count: int) -> ir.Value:
    """The vector value of ``element``, node by node in ``ex.nodes`` order (shared subtrees once)."""
    return _lower_all(builder, (element,), load, scalars, count)[element]


def _lower_all(builder: ir.IRBuilder, roots: Sequence[ex.Expr], load: Callable[[int], ir.Value],
               scalars: Sequence[ir.Value], count: int) -> dict[ex.Expr, ir.Value]:
    """The vector values of ``roots``' nodes, node by node in ``ex.nodes`` order (shared subtrees once)."""
    values: dict[ex.Expr, ir.Value] = {}
    at = Vectors(builder, load, scalars, count)
    for root in roots:
        for node in ex.nodes(root):
            if node not in values:
                lowering = LOWERINGS.get(type(node))
                if lowering is None:
                    raise ex.ExpressionError(f"no vector lowering of {type(node).__name__}")
                values[node] = lowering(node, values.__getitem__, at)
    return values


def _source(node: ex.Expr) -> tuple[bool, int, int] | None:
    """A Saturate's source as ``arithmetic.saturate`` takes it: None for FLOAT32 and FLOAT64, else (signed, range)
    of the integer type it is held in (its own)."""
    t = node.data_type
    if t in ex.SATURATED_FLOATS:
        return None
    low, high = t.integer_range  # type: ignore[union-attr]
    return t.is_signed, low, high  # type: ignore[union-attr]


def _target(t: DataType) -> tuple[bool, int, int, int]:
    low, high = t.integer_range
    return t.is_signed, 8 * t.size, low, high


def _signed(node: ex.Expr) -> bool:
    return node.data_type.is_signed  # type: ignore[union-attr]


class Vectors(NamedTuple):
    """What a node's vector code is built with besides its children's values."""

    builder: ir.IRBuilder
    load: Callable[[int], ir.Value]  # operand k's vector at the current element
    scalars: Sequence[ir.Value]  # the scalar parameters, splatted
    width: int  # lanes per vector


def _widen(node: ex.Widen, v: Callable[[ex.Expr], ir.Value], at: Vectors) -> ir.Value:
    wide = _vector(node.type, at.width)
    return (at.builder.sext if _signed(node.value) else at.builder.zext)(v(node.value), wide)


def _to_float32(node: ex.ToFloat32, v: Callable[[ex.Expr], ir.Value], at: Vectors) -> ir.Value:
    convert = at.builder.sitofp if _signed(node.value) else at.builder.uitofp
    return convert(v(node.value), _vector(DataType.FLOAT32, at.width))


def _to_float64(node: ex.ToFloat64, v: Callable[[ex.Expr], ir.Value], at: Vectors) -> ir.Value:
    """``fpext`` of FLOAT32 (exact), ``sitofp``/``uitofp`` of an integer (nearest even)."""
    wide = _vector(DataType.FLOAT64, at.width)
    if node.value.data_type is DataType.FLOAT32:
        return at.builder.fpext(v(node.value), wide)
    return (at.builder.sitofp if _signed(node.value) else at.builder.uitofp)(v(node.value), wide)


def _store(node: ex.Store, v: Callable[[ex.Expr], ir.Value], at: Vectors) -> ir.Value:
    """The value's own type, or a FLOAT64 one rounded once to FLOAT32 (``fptrunc``); FLOAT16 values, stored or not,
    are not streamed."""
    if node.value.data_type is DataType.FLOAT64 and node.type is DataType.FLOAT32:
        return at.builder.fptrunc(v(node.value), _vector(DataType.FLOAT32, at.width))
    return v(node.value)


def _add(node: ex.Add, v: Callable[[ex.Expr], ir.Value], at: Vectors) -> ir.Value:
    if node.data_type is DataType.FLOAT32:
        return at.builder.fadd(v(node.a), v(node.b))
    return at.builder.add(v(node.a), v(node.b))  # exact: the node's type rules


def _saturate(node: ex.Saturate, v: Callable[[ex.Expr], ir.Value], at: Vectors) -> ir.Value:
    rounded = v(node.value.value) if isinstance(node.value, ex.Round) else None
    return arithmetic.saturate(at.builder, v(node.value), _source(node.value), _target(node.type), rounded)


def _less(node: ex.Less, v: Callable[[ex.Expr], ir.Value], at: Vectors) -> ir.Value:
    a, b = v(node.a), v(node.b)
    if node.a.data_type is DataType.FLOAT32:
        return at.builder.fcmp_ordered("<", a, b)  # false when either is NaN
    return at.builder.icmp_signed("<", a, b) if _signed(node.a) else at.builder.icmp_unsigned("<", a, b)


def _negate(node: ex.Negate, v: Callable[[ex.Expr], ir.Value], at: Vectors) -> ir.Value:
    # fneg flips the sign bit (-0.0 of +0.0, no fast-math); an integer's neg (0 - v) wraps.
    return (at.builder.fneg if node.data_type is DataType.FLOAT32 else at.builder.neg)(v(node.value))


def _divide(node: ex.Divide, v: Callable[[ex.Expr], ir.Value], at: Vectors) -> ir.Value:
    if node.data_type is DataType.FLOAT32:
        return at.builder.fdiv(v(node.a), v(node.b))  # no fast-math flags: no reciprocal
    return arithmetic.quotient(at.builder, v(node.a), v(node.b), _signed(node))


def _remainder(node: ex.Remainder, v: Callable[[ex.Expr], ir.Value], at: Vectors) -> ir.Value:
    if node.data_type is DataType.FLOAT32:
        return at.builder.frem(v(node.a), v(node.b))  # fmod: exact
    return arithmetic.integer_remainder(at.builder, v(node.a), v(node.b), _signed(node))


def _is_number(node: ex.IsNumber, v: Callable[[ex.Expr], ir.Value], at: Vectors) -> ir.Value:
    value = v(node.value)
    return at.builder.fcmp_ordered("ord", value, value)


def _function(node: ex.Function | ex.BinaryFunction, v: Callable[[ex.Expr], ir.Value], at: Vectors) -> ir.Value:
    """Never reached: ``streamable`` leaves an expression of a Function or BinaryFunction to the scalar
    kernels."""
    raise ex.ExpressionError(f"{node!r} has no vector lowering: its expressions run as scalar code (streamable)")


# A node's lowering: the node, its children's vectors (``v(child)``) and the builder's context, to its vector.
Lowering = Callable[[Any, Callable[[ex.Expr], ir.Value], Vectors], ir.Value]

# One entry per node of ``ex.NODES`` (the LLVM vector column of the table in opendml.expr).
LOWERINGS: dict[type[ex.Expr], Lowering] = {
    ex.Load: lambda n, v, at: at.load(n.operand),
    ex.Param: lambda n, v, at: at.scalars[n.index],
    ex.Widen: _widen,
    ex.Subtract: lambda n, v, at: at.builder.sub(v(n.a), v(n.b)),
    ex.ToFloat32: _to_float32,
    ex.Multiply: lambda n, v, at: at.builder.fmul(v(n.a), v(n.b)),  # no fast-math flags: never contracted
    ex.Add: _add,
    ex.Divide: _divide,
    ex.Wrapping: lambda n, v, at: arithmetic.wrapping(at.builder, n.op, v(n.a), v(n.b)),
    ex.Remainder: _remainder,
    ex.Negate: _negate,
    ex.BitNot: lambda n, v, at: at.builder.not_(v(n.value)),  # xor with every bit set
    ex.BitCount: lambda n, v, at: arithmetic.ctpop(at.builder, v(n.value)),  # each lane's, truncated to 8 bits
    ex.Sqrt: lambda n, v, at: arithmetic.sqrt(at.builder, v(n.value)),
    ex.Round: lambda n, v, at: arithmetic.rint(at.builder, v(n.value)),
    ex.Saturate: _saturate,
    ex.Less: _less,
    ex.IsNumber: _is_number,
    ex.SignBit: lambda n, v, at: arithmetic.sign_of(at.builder, v(n.value)),
    ex.Select: lambda n, v, at: at.builder.select(v(n.condition), v(n.a), v(n.b)),
    ex.Store: _store,
    ex.Bitwise: lambda n, v, at: arithmetic.bitwise(at.builder, n.op, v(n.a), v(n.b), _signed(n)),
    ex.Wrap: lambda n, v, at: arithmetic.wrap(at.builder, v(n.value), n.type.bits, _signed(n.value)),
    ex.Function: _function,
    ex.ToFloat64: _to_float64,
    ex.BinaryFunction: _function,
}
