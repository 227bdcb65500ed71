"""The hard-case tables: for each function and precision, the FLOAT32 inputs (bits, sorted) whose double value
fell near a midpoint when the table was built, and their correctly rounded results' FLOAT32 bits
(``benchmarks/rounding.py --build`` writes them; ``opendml.rounded``'s docstring says why they suffice)."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import NamedTuple

import numpy as np


class HardCases(NamedTuple):
    inputs: np.ndarray  # uint32 bits, sorted
    results: np.ndarray  # uint32 bits of the FLOAT32 holding each result


_KEYS = {"FLOAT32": "f32", "FLOAT16": "f16"}


@cache
def hard_cases(name: str, precision: str) -> HardCases:
    """The table of function ``name`` (``EXP``) at ``precision`` (``FLOAT32`` or ``FLOAT16``), read-only."""
    with resources.files(__package__).joinpath("tables").joinpath(f"{name}.npz").open("rb") as handle:
        stored = np.load(handle)
        key = _KEYS[precision]
        inputs, results = (np.ascontiguousarray(stored[f"{key}_{part}"], np.uint32) for part in ("in", "out"))
    for array in (inputs, results):
        array.flags.writeable = False
    return HardCases(inputs, results)


def look_up(cases: HardCases, bits: np.ndarray, rounded: np.ndarray) -> np.ndarray:
    """``rounded`` (FLOAT32 bits of the double values rounded) with the inputs found among the hard cases
    replaced by their stored results."""
    if len(cases.inputs) == 0 or len(bits) == 0:
        return rounded
    at = np.minimum(np.searchsorted(cases.inputs, bits), len(cases.inputs) - 1)
    found = cases.inputs[at] == bits
    return np.where(found, cases.results[at], rounded)
