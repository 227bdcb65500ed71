"""The logarithm of an exact sum, correctly rounded: REDUCE's LOG_SUM (``ln S``) and LOG_SUM_EXP (``m + ln S``),
where ``S`` is an exact sum held as an integer ``V`` in units of ``2**-unit``.

The route
---------
``V > 0`` is written ``2**q (1 + t)`` with ``1 + t`` in about ``[sqrt(1/2), sqrt(2)]``: ``q`` is the position of
``V``'s top bit, one more where ``V``'s leading 53 bits exceed ``SQRT2_LEAD`` (``floor(sqrt(2) 2**52)``), an integer
comparison every backend makes alike. ``D = V - 2**q`` is an exact integer subtraction, so ``t = D / 2**q`` is
exact however close ``S`` lies to a power of two (``S = 1 + 2**-140`` keeps its ``2**-140``); ``t`` is carried as
the double-double of ``|D|``'s top 106 bits, truncated (relative error below ``2**-105``). Then
``binary.log_scaled`` gives ``ln S = (q - unit) ln 2 + 2 atanh(t / (2 + t))`` as a double-double (error below about
``2**-100`` of ``|ln S|``, the ``atanh`` series being relative to ``t``), ``addend`` (LOG_SUM_EXP's ``m``) is added
as a double-double, and ``binary.round_double_double`` rounds the sum once to the output format by the side of
its nearest midpoint.

``ln S`` of a dyadic ``S != 1`` is transcendental, so neither it nor ``m + ln S`` is ever a midpoint. LOG_SUM is
correctly rounded unless ``ln S`` lies within ``binary.TIE = 2**-93`` (relative) of a midpoint of the output format,
where the test takes it as the tie (as POW's decided pairs: heuristically about ``2**-69`` a sum for FLOAT32, and
none is known). LOG_SUM_EXP's ``m + ln S`` likewise where it does not cancel; where ``|m + ln S|`` is far below
``|m|``, the double-double's error (about ``2**-100 (|m| + |ln S|)``) grows against the result, and a value within
that error of a midpoint may round to its other neighbour. The result is the same bits on every backend either way.
``S = 1`` gives ``ln S = +0.0`` exactly.

The steps are written here on Python integers (the NumPy path, Dask's merged words), in Numba on an
accumulator's carried digits (``backends/cpu_kernels/log_sums.py``) and in CUDA C
(``backends/cuda/reduce_finish_c.py``): the same integers, the same double-double operations, the same bits.
"""

from __future__ import annotations

import math

from .binary import _add, log_scaled, round_double_double
from .method import Precision

SQRT2_LEAD = 6369051672525772  # floor(sqrt(2) * 2**52): leading 53 bits at most this put 1 + t in [1, sqrt(2)]


def scaled_parts(total: int) -> tuple[int, float, float]:
    """A positive integer as ``2**q (1 + t)``: ``q`` and the double-double ``t = th + tl`` (the top 106 bits of
    ``|total - 2**q|``, truncated, over ``2**q``)."""
    top = total.bit_length() - 1
    lead = total >> (top - 52) if top >= 52 else total << (52 - top)
    q = top if lead <= SQRT2_LEAD else top + 1
    d = total - (1 << q)
    magnitude = abs(d)
    if magnitude == 0:
        return q, 0.0, 0.0
    shift = magnitude.bit_length() - 53  # the high part's lowest bit
    high = magnitude >> shift if shift >= 0 else magnitude << -shift
    rest = magnitude - (high << shift) if shift > 0 else 0
    low_shift = max(shift - 53, 0)
    th = math.ldexp(float(high), shift - q)
    tl = math.ldexp(float(rest >> low_shift), low_shift - q)
    return (q, -th, -tl) if d < 0 else (q, th, tl)


def log_of_integer(total: int, unit: int, addend: float, precision: Precision) -> float:
    """``addend + ln(total * 2**-unit)`` rounded once to ``precision`` (as a double it converts to exactly), for a
    positive integer ``total`` and a finite ``addend``."""
    q, th, tl = scaled_parts(total)
    lh, ll = log_scaled(float(q - unit), th, tl)
    h, low = _add(addend, 0.0, lh, ll)
    return round_double_double(h, low, precision.base, precision.lowest, precision.top)
