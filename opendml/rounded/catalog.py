"""The correctly rounded functions: each one's name and its double-precision evaluation on each backend (NumPy's
function, the C library's through Numba's ``math``, CUDA's) and in the table builder's reference (mpmath)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class RoundedFunction:
    """``name`` (DirectML's, as in ELEMENT_WISE_EXP: ``EXP``), ``numpy`` (float64 array to float64 array),
    ``scalar`` (Python's ``math`` function, which Numba compiles to the C library's), ``c`` (the CUDA double
    function's name), ``mp`` (mpmath's function's name)."""

    name: str
    numpy: Callable[[np.ndarray], np.ndarray]
    scalar: Callable[[float], float]
    c: str
    mp: str


def _erf(x: np.ndarray) -> np.ndarray:
    """NumPy has no erf: the C library's, element by element (NumPy's lowering is the slow tier)."""
    return np.frompyfunc(math.erf, 1, 1)(x).astype(np.float64)


def _entry(name: str, numpy: Callable[[np.ndarray], np.ndarray], scalar: Callable[[float], float], c: str,
           mp: str | None = None) -> RoundedFunction:
    return RoundedFunction(name, numpy, scalar, c, mp or c)


FUNCTIONS: dict[str, RoundedFunction] = {f.name: f for f in (
    _entry("EXP", np.exp, math.exp, "exp"),
    _entry("LOG", np.log, math.log, "log", "ln"),
    _entry("SIN", np.sin, math.sin, "sin"),
    _entry("COS", np.cos, math.cos, "cos"),
    _entry("TAN", np.tan, math.tan, "tan"),
    _entry("ASIN", np.arcsin, math.asin, "asin"),
    _entry("ACOS", np.arccos, math.acos, "acos"),
    _entry("ATAN", np.arctan, math.atan, "atan"),
    _entry("SINH", np.sinh, math.sinh, "sinh"),
    _entry("COSH", np.cosh, math.cosh, "cosh"),
    _entry("TANH", np.tanh, math.tanh, "tanh"),
    _entry("ASINH", np.arcsinh, math.asinh, "asinh"),
    _entry("ACOSH", np.arccosh, math.acosh, "acosh"),
    _entry("ATANH", np.arctanh, math.atanh, "atanh"),
    _entry("ERF", _erf, math.erf, "erf"),
)}
