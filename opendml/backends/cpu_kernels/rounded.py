"""The correctly rounded functions (``opendml.rounded``) compiled by Numba: ``rounded.EXP_FLOAT32``,
``rounded.TANH_FLOAT16``... (``NAME_PRECISION``, made on first use), each a FLOAT32 value to its result held
as a FLOAT32: the C library's double function, the rounding test and rounding of ``opendml.rounded.method``
compiled as they are written, and the function's hard cases frozen into the compiled code as constants."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from ...rounded import FUNCTIONS, NEAR, PRECISIONS
from ...rounded.binary import BINARY_FUNCTIONS
from ...rounded.method import midpoint_distance, register_for_numba, round_to
from ...rounded.tables import hard_cases

register_for_numba()  # the method's and the catalog's scalar functions, compiled where they are called
_distance = njit(nogil=True)(midpoint_distance)
_round = njit(nogil=True)(round_to)


@intrinsic
def _double_bits(typingctx, value):  # type: ignore[no-untyped-def]
    """A float64's bits as an int64."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.bitcast(args[0], ir.IntType(64))
    return types.int64(types.float64), codegen


@intrinsic
def _bits_double(typingctx, value):  # type: ignore[no-untyped-def]
    """An int64's bits as a float64 (a register move)."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


@intrinsic
def _float_bits(typingctx, value):  # type: ignore[no-untyped-def]
    """A float32's bits as a uint32."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.bitcast(args[0], ir.IntType(32))
    return types.uint32(types.float32), codegen


@intrinsic
def _bits_float(typingctx, value):  # type: ignore[no-untyped-def]
    """A uint32's bits as a float32."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.bitcast(args[0], ir.FloatType())
    return types.float32(types.uint32), codegen


def _named(function: Any, name: str) -> Any:
    """``function`` compiled by Numba under the qualified name ``name`` (EXP_FLOAT32).

    Numba names a function's machine code after its qualified name and a number counted per process, and a
    cached kernel that calls it carries that code under that name. Every closure of ``compiled`` has the
    qualified name ``compiled.<locals>.rounded``: a kernel cached by one process (calling EXPM1 as
    ``rounded$7``) loaded by another where ``rounded$7`` is EXP's would run EXP. Named after the function and
    precision, a name always stands for the same code (the kernel cache is per version of the tables)."""
    function.__name__ = function.__qualname__ = name
    return njit(nogil=True)(function)


def compiled(name: str, precision: str) -> Any:
    """The Numba function of ``name`` (EXP) rounded to ``precision`` (FLOAT32 or FLOAT16)."""
    f = FUNCTIONS[name].scalar
    grid = PRECISIONS[precision]
    base, lowest, top, narrow = grid.base, grid.lowest, grid.top, precision == "FLOAT16"
    cases = hard_cases(name, precision)
    inputs, results = np.array(cases.inputs), np.array(cases.results)
    last = len(inputs) - 1

    def rounded(v):  # type: ignore[no-untyped-def]
        y = f(np.float64(v))
        if not math.isfinite(y):
            return np.float32(y)
        bits = _double_bits(y)
        r = np.float32(_round(y, bits, base, lowest, top)) if narrow else np.float32(y)
        if last >= 0 and _distance(bits, base, lowest, top) <= NEAR:
            key = _float_bits(v)
            at = min(np.searchsorted(inputs, key), last)
            if inputs[at] == key:
                return _bits_float(results[at])
        return r

    return _named(rounded, f"{name}_{precision}")


def compiled_binary(name: str, precision: str) -> Any:
    """The Numba function of the binary ``name`` (POW, ATAN_YX: ``opendml.rounded.binary``) of two FLOAT32
    values rounded to ``precision``: the C library's double function, the rounding test, and the flagged pairs
    decided by the double-double evaluation compiled as it is written."""
    function = BINARY_FUNCTIONS[name]
    f, decided = function.scalar, njit(nogil=True)(function.decided)
    grid = PRECISIONS[precision]
    base, lowest, top, narrow = grid.base, grid.lowest, grid.top, precision == "FLOAT16"

    def rounded(a, b):  # type: ignore[no-untyped-def]
        x, e = np.float64(a), np.float64(b)
        y = f(x, e)
        if not math.isfinite(y):
            return np.float32(y)
        bits = _double_bits(y)
        if _distance(bits, base, lowest, top) <= NEAR:
            return np.float32(decided(x, e, base, lowest, top))
        return np.float32(_round(y, bits, base, lowest, top)) if narrow else np.float32(y)

    return _named(rounded, f"{name}_{precision}")


def __getattr__(attribute: str) -> Any:
    """``EXP_FLOAT32``, ``POW_FLOAT16``...: compiled on first use and kept as this module's attribute."""
    name, _, precision = attribute.rpartition("_")
    if (name not in FUNCTIONS and name not in BINARY_FUNCTIONS) or precision not in PRECISIONS:
        raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
    function = compiled(name, precision) if name in FUNCTIONS else compiled_binary(name, precision)
    globals()[attribute] = function
    return function
