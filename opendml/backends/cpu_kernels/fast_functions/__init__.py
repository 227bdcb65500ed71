"""Vectorizable double evaluations of correctly rounded functions, and their checked roundings (FLOAT32, FLOAT16).

``opendml.rounded``'s method rounds a double evaluation once and trusts it wherever the double lies farther than
``NEAR`` (32) ulps from a rounding midpoint; any evaluation within ``E < NEAR`` ulps of the exact value rounds
the same there (the exact value is on the same side of every midpoint). The C library's functions meet the
bound but are scalar calls, which keep a loop from becoming vector code; the evaluations here are
straight-line double arithmetic, integer operations on bits and a table lookup, which LLVM turns into vector
code, each within a few ulps (each module proves the bounds of its own, and tests/test_fast_functions.py measures
them).

``NAME(v)`` (``EXP``...) gives a FLOAT32 value's double evaluation and whether the value is inside the
evaluation's range (infinities, NaN, overflow and underflow are left to the exact path); ``to_float32(y, inside)``
and ``to_float16(y, inside)`` give its rounding (FLOAT16's held as a float32) and whether it cannot be trusted:
outside the range, or a double within ``NEAR`` ulps of a midpoint. A generated kernel (``codegen``) runs a block
of elements with these, and evaluates the elements marked ``redo`` again with the exact scalar path
(``rounded.NAME_FLOAT32``: the C library's function and the table of hard cases), so its results are the exact
path's bits on every input.

The evaluations, each module's docstring proving its bounds: ``exponential`` (EXP, LOG and the logarithms of any
double that the inverse hyperbolic functions build on), ``hyperbolic`` (TANH, SIGMOID, SINH, COSH, EXPM1, ASINH,
ACOSH, ATANH), ``trigonometric`` (SIN, COS, TAN, ATAN, ASIN, ACOS, and ATAN_YX of two values), ``activations``
(SOFTSIGN, SOFTPLUS), ``error_function`` (ERF, GELU), ``power`` (POW, of two values); ``checks`` holds the rounding
test and the roundings.
"""

from __future__ import annotations

from .activations import SOFTPLUS, SOFTSIGN
from .checks import near_float32, prefer_wide_vectors, to_float16, to_float32
from .error_function import ERF, GELU
from .exponential import EXP, LOG, exp_double
from .hyperbolic import ACOSH, ASINH, ATANH, COSH, EXPM1, SIGMOID, SINH, TANH
from .power import POW
from .trigonometric import ACOS, ASIN, ATAN, ATAN_YX, COS, SIN, TAN

# The functions with an evaluation here (to FLOAT32 and to FLOAT16).
FAST = ("EXP", "LOG", "TANH", "SIGMOID", "SINH", "COSH", "EXPM1", "SIN", "COS", "TAN", "SOFTSIGN", "ATAN", "ASINH",
        "ACOSH", "ATANH", "ASIN", "ACOS", "SOFTPLUS", "ERF", "GELU")
# The functions of two values with an evaluation here (``BinaryFunction`` nodes).
FAST_BINARY = ("POW", "ATAN_YX")

__all__ = ["ACOS", "ACOSH", "ASIN", "ASINH", "ATAN", "ATANH", "ATAN_YX", "COS", "COSH", "ERF", "EXP", "EXPM1", "FAST",
           "FAST_BINARY", "GELU", "LOG", "POW", "SIGMOID", "SIN", "SINH", "SOFTPLUS", "SOFTSIGN", "TAN", "TANH",
           "exp_double", "near_float32", "prefer_wide_vectors", "to_float16", "to_float32"]
