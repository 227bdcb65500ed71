"""Correctly rounded element functions: ``exp``, ``log``, ``sin``... of a FLOAT32 value, rounded once to FLOAT32
or FLOAT16, with the same bits on every backend.

The method
----------
Let ``v`` be the exact value ``f(x)`` of a FLOAT32 input ``x`` and ``y`` a float64 evaluation of it (each backend's
own double-precision function: NumPy's, the C library's through Numba, CUDA's), with ``|y - v|`` at most ``E``
units in the last place of a double (``E = 8`` bounds every library used: CUDA's documented bounds are 1 to 3
ulps, the C libraries' and NumPy's 1 to 4). Rounding ``v`` to nearest (ties to even) at a format's precision
depends only on which side of the format's nearest *midpoint* (the value halfway between two neighbours) ``v``
lies; ``y`` is on the same side unless ``y`` is within ``E`` ulps of a midpoint. So each backend rounds ``y``, and
measures ``d``, the distance from ``y`` to the nearest midpoint in ulps of ``y`` (``midpoint_distance``: integer
arithmetic on ``y``'s bits):

- ``d > NEAR`` (``NEAR = 32 >= E``): ``v`` is on ``y``'s side: ``y`` rounded is the correctly rounded result.
  (A double at or beyond the format's ``top``, 2**128 or 2**16, rounds to infinity whatever its low bits: it is
  never near; the last midpoint, between the largest value and ``top``, lies below it.)
- ``d <= NEAR``: the input is looked up in the function's table of hard cases (``tables``): the inputs whose
  double evaluation, by the one that built the table, fell within ``BUILD = 256`` ulps of a midpoint, each
  rounded from a 256-bit evaluation (mpmath) and stored. A flagged input is always in the table: its exact
  value is within ``NEAR + E`` ulps of the midpoint, so the builder's evaluation (error at most ``E``, well
  inside ``BUILD - NEAR - E``) was within ``BUILD``. Should an input be absent all the same, ``y`` rounded is
  used, which the argument above shows is then correct.

The tables are built once from every one of the 2**32 FLOAT32 inputs (``benchmarks/rounding.py --build``), at
the two precisions (FLOAT32, and FLOAT16, whose values a FLOAT32 input reaches through ScaleBias too); the same
tool proves the result by comparing every backend with an independent reference on every input. Special
inputs and results (NaN, infinities, zeros and their signs, overflow and underflow) are the double function's,
which C99's Annex F fixes for every backend alike; NaN payloads may differ (docs/semantics.md).
"""

from __future__ import annotations

from .catalog import FUNCTIONS, RoundedFunction
from .method import BUILD, NEAR, PRECISIONS, Precision, midpoint_distance, round_to

__all__ = ["BUILD", "FUNCTIONS", "NEAR", "PRECISIONS", "Precision", "RoundedFunction", "midpoint_distance",
           "round_to"]
