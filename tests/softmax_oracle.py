"""SOFTMAX's, LOG_SOFTMAX's and HARDMAX's oracle: docs/semantics.md 9g's steps computed one element at a time with
fractions (each step's exact value, rounded once by ``reduce_oracle.rounded``) and mpmath's correctly rounded EXP
and LOG (``rounding_oracle``). It shares no code with opendml.

>>> softmax_row([0.0, 0.0, -math.inf], "SOFTMAX", np.float32)
[0.5, 0.5, 0.0]
>>> hardmax_row([math.nan, -math.inf, -math.inf])
[0.0, 1.0, 0.0]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from tests.reduce_oracle import rounded
from tests.rounding_oracle import correctly_rounded


def _f32(exact: Fraction) -> float:
    return float(rounded(exact, np.float32))


def _subtract(a: float, b: float) -> float:
    """``a - b`` as one IEEE FLOAT32 subtraction (both FLOAT32 values, b finite or a -inf minus a finite)."""
    if math.isinf(a):
        return a
    exact = Fraction(a) - Fraction(b)
    if exact == 0:  # round to nearest: -0.0 only for -0.0 - +0.0
        return -0.0 if a == 0 and math.copysign(1, a) < 0 and math.copysign(1, b) > 0 else 0.0
    return _f32(exact)


def _largest(row: Sequence[float]) -> float:
    """The largest element, +0.0 above -0.0 (no NaN in ``row``)."""
    m = max(row)
    if m == 0:
        return 0.0 if any(v == 0 and math.copysign(1, v) > 0 for v in row) else -0.0
    return m


def softmax_row(row: Sequence[float], function: str, dtype: type) -> list[float]:
    """SOFTMAX or LOG_SOFTMAX of one row of FLOAT32 or FLOAT16 values, as Python floats of ``dtype``."""
    values = [float(v) for v in row]
    if any(math.isnan(v) for v in values) or math.isinf(_largest(values)):
        return [math.nan] * len(values)
    m = _largest(values)
    d = [_subtract(v, m) for v in values]
    e = [correctly_rounded("EXP", v, "FLOAT32") for v in d]
    s = _f32(sum((Fraction(v) for v in e), Fraction(0)))
    if function == "SOFTMAX":
        y = [_f32(Fraction(v) / Fraction(s)) if v else 0.0 for v in e]
    else:
        log_s = correctly_rounded("LOG", s, "FLOAT32")
        y = [_subtract(v, log_s) for v in d]
    return [float(dtype(v)) if dtype is np.float32 else float(rounded(Fraction(v), dtype)) if math.isfinite(v)
            else v for v in y]


def hardmax_row(row: Sequence[float]) -> list[float]:
    """1 at the first largest number (NaN ignored; the first element where every one is NaN), 0 elsewhere."""
    best = None
    for i, v in enumerate(row):
        if not math.isnan(v) and (best is None or v > row[best]):
            best = i
    return [1.0 if i == (best or 0) else 0.0 for i in range(len(row))]


def oracle(x: np.ndarray, function: str, axes: Sequence[int]) -> np.ndarray:
    """The operator over ``axes`` of ``x``, row by row, shaped and typed as ``x``."""
    kept = [k for k in range(x.ndim) if k not in axes]
    order = kept + sorted(axes)
    rows = np.transpose(x, order).reshape(-1, int(np.prod([x.shape[a] for a in axes])))
    out = []
    for row in rows.astype(np.float32).tolist():
        out.append(hardmax_row(row) if function == "HARDMAX" else softmax_row(row, function, x.dtype.type))
    result = np.array(out, dtype=x.dtype).reshape([x.shape[k] for k in order])
    return np.transpose(result, np.argsort(order))
