"""Element expressions: each operator's per-element math, written once and lowered by every backend.

An expression is a tree of the nodes below, each with one meaning that every lowering gives bit for bit.
The set is closed and holds no operation whose result differs between instruction sets: no min or max
(NaN and -0.0 rules vary), no fused multiply-add, no reciprocal (a Divide is IEEE division, correctly
rounded, which every target has as one instruction), no conversion whose out-of-range result is left to
the target (Saturate defines every one). Values are typed by DirectML data types; comparisons give BOOL.
Types are checked when a node is made, so a malformed expression fails where it is written, never in a
backend.

==================  ==============================================  ==================================
node                meaning                                         lowerings (NumPy / Numba / CUDA C / LLVM vector)
==================  ==============================================  ==================================
Load(k, T)          element of operand ``k``, stored as T           view[k] / ``a{k}`` (FLOAT16 bits:
                    (FLOAT16 is held as its value; FLOAT64 is a     ``half_to_float``) / ``a{k}``
                    value of its own, a double)                     (``h2f``; FLOAT64 a ``double``) /
                                                                    vector load or splat
Param(k, T)         scalar argument ``k`` of the kernel, of type T  array scalar / ``q{k}`` / kernel
                                                                    argument ``q{k}`` / splat
Widen(v, T)         integer v as the wider integer type T, exactly  ``astype`` / ``np.intN`` / C cast /
                    (lowerings may hold it wider still)             ``sext``/``zext``
Subtract(a, b)      a - b in their integer type, exact: the types'  ``np.subtract`` / ``-`` then the
                    ranges are checked to make overflow impossible  type / ``-`` / ``sub``
ToFloat32(v)        integer v rounded to nearest-even float32;      ``astype(float32)`` / ``np.float32``
                    FLOAT16 v converted exactly                     / ``cvt.rn.f32`` / ``sitofp``
Multiply(a, b)      FLOAT32 a * b, rounded once to nearest even     ``np.multiply`` / ``*`` / ``mul.rn``
                                                                    / ``fmul`` (no fast-math flags)
Add(a, b)           FLOAT32 a + b, rounded once to nearest even;    ``np.add`` / ``+`` (integers: then
                    or a + b of two integers of one type, exact     the type) / ``add.rn`` or ``+`` /
                    (ranges checked as Subtract's)                  ``fadd`` or ``add``
Divide(a, b)        FLOAT32 a / b, rounded once to nearest even     ``np.divide`` / ``divide`` (``fdiv``,
                    (IEEE: x / 0 is +-inf, 0 / 0 and inf / inf      no zero check) / ``div.rn`` / ``fdiv``
                    NaN); never a multiply by a reciprocal.         (no fast-math flags). Integers: a
                    Two integers of one type: the quotient          divisor of 0 (or -1) made 1 first,
                    truncated toward zero; x / 0 is 0, the          then ``floor_divide`` corrected /
                    smallest signed integer / -1 is itself          ``quotient`` (``sdiv``/``udiv``) /
                    (wrapping)                                      ``/`` behind ``?:`` / ``sdiv``/``udiv``
Wrapping(a, b, op)  a + b, a - b or a * b (``op``) of two integers  ``np.add``/``subtract``/``multiply``
                    of one type, modulo 2**bits (two's complement   / ``wrapping`` (``add``, ``sub``,
                    wrapping, 64-bit types too)                     ``mul``) / through ``ull``, then the
                                                                    type / ``add``, ``sub``, ``mul``
Remainder(a, b)     FLOAT32 fmod(a, b): exact, the sign of a        ``np.fmod`` / ``remainder`` (``frem``
                    (x % 0, inf % y NaN; x % inf x); two integers   ; integers ``srem``/``urem`` of a
                    of one type: C's truncated remainder, x % 0     divisor of 0 or -1 made 1) / ``fmodf``,
                    is 0 (as x % -1)                                ``%`` behind ``?:`` / ``frem``, ``srem``
Negate(v)           FLOAT32 -v, the sign flipped (exact: -0.0 of     ``np.negative`` / ``-`` (integers:
                    +0.0, NaN stays NaN); or a signed integer's     then the type) / ``-`` (integers:
                    -v in its type, wrapping (the smallest          through 64-bit unsigned, then the
                    integer is its own negation)                    type) / ``fneg``, ``neg``
BitNot(v)           an integer's bits inverted, in its type         ``np.invert`` / ``~`` then the type /
                    (~v: -v - 1 signed, MAX - v unsigned)           ``~`` then the type / ``not``
BitCount(v)         the number of an integer's bits set, in its      byte table / ``bit_count``
                    own width (a population count), as a UINT8      (``llvm.ctpop``) / ``__popc`` or
                                                                    ``__popcll`` / ``llvm.ctpop``
Sqrt(v)             FLOAT32 square root, rounded once to nearest    ``np.sqrt`` / ``square_root``
                    even (IEEE: sqrt(-0.0) is -0.0, of a negative   (``llvm.sqrt``) / ``__fsqrt_rn`` /
                    number NaN, of +inf +inf)                       ``llvm.sqrt``
Round(v)            FLOAT32 v to the nearest integer, ties to even  ``np.rint`` / ``round_even``
                    (a FLOAT32; -0.5 gives -0.0; NaN, +-inf kept)   (``llvm.rint``) / ``cvt.rni.f32`` /
                                                                    ``llvm.rint``
Saturate(v, T)      FLOAT32, FLOAT64 or integer v as the integer    clip, then ``astype`` / ``saturate_to``
                    type T: a float truncated toward zero, NaN      / ``cvt.rzi`` + clamp / ``fcmp``
                    gives 0; beyond T's range (+-inf too) T's       ``select`` ``fptosi`` (of a Round:
                    nearest limit                                   ``lrint``), ``icmp`` ``select`` ``trunc``
Less(a, b)          BOOL: a < b, false when either is NaN           ``np.less`` / ``<`` / ``setp.lt``
                    (so -0.0 < +0.0 is false)                       / ``fcmp olt``, ``icmp slt``/``ult``
IsNumber(v)         BOOL: FLOAT32 v is not NaN                      ``==`` itself / ``v == v`` /
                                                                    ``setp.num`` / ``fcmp ord``
SignBit(v)          BOOL: FLOAT32 v's sign bit is set (-0.0 and     ``np.signbit`` / ``sign_bit``
                    negative values; a NaN's own sign)              (bits) / ``__float_as_int(v) < 0``
                                                                    / bitcast, ``icmp slt 0``
Select(c, a, b)     a where c holds, else b (a, b of one type)      ``np.where`` / ``a if c else b`` /
                                                                    ``?:`` / ``select``
Store(v, T)         the value as the output type T: FLOAT32 to      ``astype`` / ``float_to_half``
                    FLOAT16 rounds once to nearest even (overflow   (FLOAT64: ``double_to_half``, ``np.
                    to infinity, NaN stays NaN); FLOAT64 to         float32``) / ``cvt.rn.f16.f32``
                    FLOAT32 or FLOAT16 rounds once too (FLOAT16     (``cvt.rn.f16.f64``, ``cvt.rn.f32.f64``)
                    straight from the double, never through a       / ``fptrunc`` (FLOAT16 outputs are
                    FLOAT32); else v's own type                     not streamed)
Bitwise(a, b, op)   a & b, a | b, a ^ b, a << b or a >> b (``op``)  ``np.bitwise_and`` ... (shifts of
                    of two integers of one type, in its width. A    ``b & (bits - 1)``) / ``bitwise_*``,
                    shift counts b modulo the width (b's low bits:  ``shift_*`` (``and``, ``shl``,
                    defined for every b); ``>>`` arithmetic for a   ``ashr``/``lshr`` of the masked
                    signed type, logical for an unsigned one        count) / the same in C, through the
                                                                    node's own type / the same
Wrap(v, T)          integer v as the integer type T modulo          ``astype`` / ``wrap_to`` (``trunc``,
                    2**bits (two's complement: a narrower T keeps   ``sext``/``zext``) / C casts through
                    the low bits, a wider one extends by v's sign)  T's own type / ``trunc``, ``sext``
Function(v, f, T)   FLOAT32 f(v) (``opendml.rounded``: EXP, LOG,    ``rounded.evaluate`` / ``rounded``'s
                    SIN...) rounded once to T (FLOAT32, or FLOAT16  compiled function / its device
                    held as FLOAT32): the double value rounded,     function (the double one, the test,
                    a hard case looked up where it lies near a      the table) / scalar code only: an
                    midpoint                                        expression of one is not streamed
ToFloat64(v)        integer v rounded to nearest-even FLOAT64       ``astype(float64)`` / ``np.float64``
                    (64-bit integers beyond 2**53 round); FLOAT32   / ``cvt.rn.f64`` (``cvt.f64.f32``) /
                    v exactly (FLOAT16: through ToFloat32)          ``sitofp``, ``uitofp``, ``fpext``
BinaryFunction(a,   FLOAT32 f(a, b) (``opendml.rounded.binary``:    ``rounded.evaluate_binary`` /
b, f, T)            POW a ** b, ATAN_YX atan2(a, b)) rounded once   ``rounded``'s compiled function /
                    to T: the double value rounded, a pair near a   its device function / scalar code
                    midpoint decided by a double-double evaluation  only (not streamed)
==================  ==============================================  ==================================

A Store below the root is a value, not a write: the value as memory of type T would hold it (a FLOAT16 one
rounded once and read back exactly, ``ToFloat32`` of it giving the float32 value). A fused kernel reads an
intermediate this way (``opendml.kernels.compose``), so each intermediate keeps its own rounding.

FLOAT64 values (CAST's, ELEMENT_WISE_IDENTITY's and ELEMENT_WISE_IF's, docs/semantics.md 9d) come from a Load or
a ToFloat64 and go only into a Select, a Saturate or a Store: no arithmetic node takes them, so no lowering
computes in doubles but its conversions, each one IEEE rounding.

Integer values may be held in any wider type by a lowering (CUDA computes 8- and 16-bit integers in 32
bits): every integer node is exact, so the width never shows in a result.

Each lowering is a table, ``LOWERINGS``, from a node class to the function lowering it: one entry per node
of ``NODES`` in each of ``opendml.kernels.numpy_lowering``, ``backends.cpu_kernels.codegen`` (Numba),
``backends.cpu_kernels.vectors`` (LLVM vector) and ``backends.cuda.expr_c`` (CUDA C). docs/kernels.md
lists what a new node takes.
"""

from __future__ import annotations

from collections.abc import Iterator

from .dtypes import DataType
from .expr_arithmetic import BITWISE_OPS as BITWISE_OPS
from .expr_arithmetic import WRAPPING_OPS as WRAPPING_OPS
from .expr_arithmetic import Add as Add
from .expr_arithmetic import BitCount as BitCount
from .expr_arithmetic import BitNot as BitNot
from .expr_arithmetic import Bitwise as Bitwise
from .expr_arithmetic import Divide as Divide
from .expr_arithmetic import Multiply as Multiply
from .expr_arithmetic import Negate as Negate
from .expr_arithmetic import Remainder as Remainder
from .expr_arithmetic import Saturate as Saturate
from .expr_arithmetic import Subtract as Subtract
from .expr_arithmetic import ToFloat32 as ToFloat32
from .expr_arithmetic import ToFloat64 as ToFloat64
from .expr_arithmetic import Widen as Widen
from .expr_arithmetic import Wrap as Wrap
from .expr_arithmetic import Wrapping as Wrapping
from .expr_arithmetic import integer_range as integer_range
from .expr_arithmetic import saturated_range as saturated_range
from .expr_base import BOOL as BOOL
from .expr_base import INTEGERS as INTEGERS
from .expr_base import SATURATED_FLOATS as SATURATED_FLOATS
from .expr_base import SIGNED_INTEGERS as SIGNED_INTEGERS
from .expr_base import STORED as STORED
from .expr_base import Expr as Expr
from .expr_base import ExpressionError as ExpressionError
from .expr_base import Load as Load
from .expr_base import Param as Param
from .expr_base import ValueType as ValueType
from .expr_choices import IsNumber as IsNumber
from .expr_choices import Less as Less
from .expr_choices import Select as Select
from .expr_choices import SignBit as SignBit
from .expr_functions import BinaryFunction as BinaryFunction
from .expr_functions import Function as Function
from .expr_functions import Round as Round
from .expr_functions import Sqrt as Sqrt
from .expr_nodes import NODES as NODES
from .expr_nodes import Store as Store


def difference_type(*types: DataType) -> DataType:
    """The narrowest signed type holding every difference of values of ``types`` exactly (the one
    choice of DEQUANTIZE_LINEAR's width: 8-bit operands subtract in INT16, 16-bit in INT32, else INT64)."""
    low = min(t.integer_range[0] for t in types)
    high = max(t.integer_range[1] for t in types)
    for wide in (DataType.INT16, DataType.INT32, DataType.INT64):
        w_low, w_high = wide.integer_range
        if w_low <= low - high and high - low <= w_high:
            return wide
    raise ExpressionError(f"no exact difference type for {types}")


def nodes(expr: Expr) -> Iterator[Expr]:
    """Every distinct node once, children before parents (the order lowerings emit them in)."""
    seen: set[Expr] = set()

    def visit(node: Expr) -> Iterator[Expr]:
        if node in seen:
            return
        for child in node.children:
            yield from visit(child)
        seen.add(node)
        yield node

    yield from visit(expr)


def loads(expr: Expr) -> dict[int, DataType]:
    """The operands an expression reads, with their stored types."""
    return {node.operand: node.stored for node in nodes(expr) if isinstance(node, Load)}


def params(expr: Expr) -> dict[int, DataType]:
    """The scalar parameters an expression takes, with their types."""
    return {node.index: node.type for node in nodes(expr) if isinstance(node, Param)}

