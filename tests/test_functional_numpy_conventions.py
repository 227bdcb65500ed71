"""NumPy's and the Array API's conventions in the functional API, where they do not contradict DirectML: clip's
``min=``/``max=`` keywords, FLOAT64 refused with a hint to cast, TypeError for wrong argument types, argmin's and
argmax's ``axis=`` and ``keepdims=``. Each expectation is NumPy's, computed here."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendml as dml

X = np.array([-2.5, -0.0, 0.25, 1.5, 7.0, np.nan], np.float32)


@pytest.mark.parametrize("kwargs", [{"min": 0}, {"max": 1}, {"min": -1, "max": 1}, {}, {"min": None, "max": 2}])
def test_clip_takes_min_and_max_keywords_an_absent_bound_bounding_nothing(kwargs: dict[str, float | None]) -> None:
    expected = np.clip(X, kwargs.get("min"), kwargs.get("max"))
    np.testing.assert_array_equal(dml.clip(X, **kwargs), expected)


def test_clip_keeps_its_positional_forms() -> None:
    np.testing.assert_array_equal(dml.clip(X, 0, 1), np.clip(X, 0, 1))
    np.testing.assert_array_equal(dml.clip(X, 0, max=1), np.clip(X, 0, 1))
    np.testing.assert_array_equal(dml.clip(X, None, 1), np.clip(X, None, 1))
    ints = np.array([-9, 0, 3, 2**40], np.int64)
    np.testing.assert_array_equal(dml.clip(ints, min=0), np.clip(ints, 0, None))
    np.testing.assert_array_equal(dml.clip(ints, max=5), np.clip(ints, None, 5))


@settings(max_examples=20, deadline=None)
@given(st.lists(st.floats(-100, 100, width=32), min_size=1, max_size=8),
       st.one_of(st.none(), st.integers(-50, 50)), st.one_of(st.none(), st.integers(-50, 50)))
def test_clip_keywords_agree_with_numpy(values: list[float], low: int | None, high: int | None) -> None:
    """DirectML's order, max(Min, min(x, Max)): where Min > Max the result is Min (NumPy's np.clip gives Max)."""
    x = np.array(values, np.float32)
    expected = x if high is None else np.minimum(x, np.float32(high))
    expected = expected if low is None else np.maximum(expected, np.float32(low))
    np.testing.assert_array_equal(dml.clip(x, min=low, max=high), expected)
