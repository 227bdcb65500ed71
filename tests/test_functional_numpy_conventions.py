"""NumPy's and the Array API's conventions in the functional API, where they do not contradict DirectML: clip's
``min=``/``max=`` keywords, FLOAT64 refused with a hint to cast, TypeError for wrong argument types, argmin's and
argmax's ``axis=`` and ``keepdims=``. Each expectation is NumPy's, computed here."""

from __future__ import annotations

from collections.abc import Callable

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


CAST = r"; opendml has no FLOAT64 math: cast opendml\.{function}'s {argument} to float32, {cast}\.$"
TAKES = "FLOAT32, FLOAT16, INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16, UINT8"


@pytest.mark.parametrize(("value", "cast"), [(np.array([1.5]), r"x\.astype\(np\.float32\)"),
                                             ([1.5], r"np\.asarray\(x, np\.float32\)"),
                                             (3.0, r"np\.asarray\(x, np\.float32\)")])
def test_float64_is_refused_with_a_hint_to_cast(value: object, cast: str) -> None:
    pattern = (rf"^ELEMENT_WISE_CLIP: InputTensor\.DataType must be one of {TAKES} at feature level 6_4; got FLOAT64"
               + CAST.format(function="clip", argument="x", cast=cast))
    with pytest.raises(dml.InvalidArgumentError, match=pattern):
        dml.clip(value, 0, 1)
    np.testing.assert_array_equal(dml.clip(np.asarray(value, np.float32), 0, 1),
                                  np.clip(np.asarray(value, np.float32), 0, 1))


def test_float64_refused_by_every_function_naming_it_and_the_argument() -> None:
    f64 = np.zeros(3)
    cast = r"x\.astype\(np\.float32\)"
    with pytest.raises(dml.InvalidArgumentError, match=CAST.format(function="argmax", argument="x", cast=cast)):
        dml.argmax(f64)
    with pytest.raises(dml.InvalidArgumentError, match=CAST.format(function="relu", argument="x", cast=cast)):
        dml.relu(f64)
    with pytest.raises(dml.InvalidArgumentError, match=r"^ELEMENT_WISE_QUANTIZE_LINEAR: InputTensor\.DataType .*"
                       + CAST.format(function="quantize_linear", argument="x", cast=cast)):
        dml.quantize_linear(f64, np.float32(0.5))
    with pytest.raises(dml.InvalidArgumentError, match=r"^ELEMENT_WISE_QUANTIZE_LINEAR: ScaleTensor\.DataType .*"
                       + CAST.format(function="quantize_linear", argument="scale", cast=r"scale\.astype\(np\.float32\)")):
        dml.quantize_linear(np.zeros(3, np.float32), np.array([0.5]))
    with pytest.raises(dml.InvalidArgumentError, match=r"^opendml\.unravel_index: indices\.DataType must be one of "
                       r"INT64, INT32, INT16, INT8, UINT64, UINT32, UINT16, UINT8; got FLOAT64\.$"):
        dml.unravel_index(f64, (3,), 0)  # indices are integers: no hint to cast to float32


@pytest.mark.parametrize("dtype", [np.bool_, np.complex64])
def test_a_type_no_operator_takes_lists_only_the_operators_types_at_the_level(dtype: type) -> None:
    name = np.dtype(dtype).name
    with pytest.raises(dml.InvalidArgumentError, match=rf"^ELEMENT_WISE_CLIP: InputTensor\.DataType must be one of "
                       rf"{TAKES} at feature level 6_4; got {name}\.$"):
        dml.clip(np.zeros(2, dtype), 0, 1)
    with pytest.raises(dml.InvalidArgumentError, match=r"^ELEMENT_WISE_CLIP: InputTensor\.DataType must be one of "
                       rf"FLOAT32, FLOAT16, INT32, INT16, INT8, UINT32, UINT16, UINT8 at feature level 3_0; got {name}"):
        dml.clip(np.zeros(2, dtype), 0, 1, device=dml.Device("cpu", "3_0"))


F = np.array([[3.0, -1.0], [2.0, 5.0]], np.float32)
WRONG_TYPES = {
    "argmax axis string": lambda: dml.argmax(F, "a"),
    "argmin axes float": lambda: dml.argmin(F, [0.5]),
    "clip bound string": lambda: dml.clip(F, "a", 1),
    "clip integer bound string": lambda: dml.clip(np.array([1], np.int32), 0, "b"),
    "out int": lambda: dml.clip(F, 0, 1, out=3),
    "out list": lambda: dml.argmin(F, out=[0, 0]),
    "device int": lambda: dml.relu(F, device=3),
    "axis_direction float": lambda: dml.argmax(F, axis_direction=2.5),
    "output_type float": lambda: dml.argmin(F, output_type=3.5),
    "scale_bias int": lambda: dml.clip(F, 0, 1, scale_bias=3),
    "unravel shape string": lambda: dml.unravel_index(np.array([1]), "ab", 0),
    "TensorDesc size float": lambda: dml.TensorDesc("FLOAT32", [2.5]),
}


@pytest.mark.parametrize("call", WRONG_TYPES.values(), ids=WRONG_TYPES.keys())
def test_a_wrong_argument_type_is_a_type_error(call: Callable[[], object]) -> None:
    """NumPy raises TypeError for these (np.argmax(x, axis="a")); opendml's error is one, and an opendml error."""
    with pytest.raises(TypeError) as caught:
        call()
    assert isinstance(caught.value, dml.InvalidArgumentTypeError)
    assert isinstance(caught.value, dml.InvalidArgumentError) and isinstance(caught.value, dml.OpenDMLError)


WRONG_VALUES = {
    "axis out of range": lambda: dml.argmax(F, 2),
    "repeated axis": lambda: dml.argmax(F, [0, -2]),
    "unknown device name": lambda: dml.relu(F, device="gpu"),
    "unknown output type": lambda: dml.argmin(F, output_type="FLOAT99"),
    "read-only out": lambda: dml.clip(F, 0, 1, out=np.broadcast_to(np.float32(0), F.shape)),
    "out of a wrong shape": lambda: dml.clip(F, 0, 1, out=np.zeros(3, np.float32)),
    "float64 array": lambda: dml.clip(F.astype(np.float64), 0, 1),
    "NaN bound on integers": lambda: dml.clip(np.array([1], np.int32), float("nan"), 1),
}


@pytest.mark.parametrize("call", WRONG_VALUES.values(), ids=WRONG_VALUES.keys())
def test_a_wrong_value_stays_a_value_error(call: Callable[[], object]) -> None:
    with pytest.raises(dml.InvalidArgumentError) as caught:
        call()
    assert isinstance(caught.value, ValueError) and not isinstance(caught.value, TypeError)


R = np.random.default_rng(7).standard_normal((3, 4, 5)).astype(np.float32)


@pytest.mark.parametrize("function", [dml.argmin, dml.argmax], ids=["argmin", "argmax"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_argmin_argmax_take_numpy_s_axis_and_keepdims(function: Callable[..., np.ndarray], axis: int | None) -> None:
    expected = getattr(np, function.__name__)(R, axis=axis, keepdims=True)
    np.testing.assert_array_equal(function(R, axis=axis), expected)  # DirectML's rank kept by default
    np.testing.assert_array_equal(function(R, axis=axis, keepdims=True), expected)
    dropped = getattr(np, function.__name__)(R, axis=axis)
    got = function(R, axis=axis, keepdims=False)
    assert got.shape == np.shape(dropped)
    np.testing.assert_array_equal(got, dropped)


def test_keepdims_false_shapes_out_and_the_values_as_numpy() -> None:
    out = np.empty((3, 5), np.int64)
    assert dml.argmin(R, axis=1, keepdims=False, out=out) is out
    np.testing.assert_array_equal(out, np.argmin(R, axis=1))
    indices, values = dml.argmax(R, axis=2, keepdims=False, return_values=True)
    np.testing.assert_array_equal(indices, np.argmax(R, axis=2))
    np.testing.assert_array_equal(values, R.max(axis=2))
    with pytest.raises(dml.InvalidArgumentError, match=r"^ARGMIN: out must have shape \(3, 5\) and dtype int64"):
        dml.argmin(R, axis=1, keepdims=False, out=np.empty((3, 1, 5), np.int64))
    with pytest.raises(TypeError, match=r"^ARGMIN: axis must not be given beside axes"):
        dml.argmin(R, 1, axis=1)
    with pytest.raises(TypeError, match=r"^ARGMAX: keepdims must be True or False; got 'no'"):
        dml.argmax(R, keepdims="no")  # type: ignore[arg-type]


def test_keepdims_false_under_dask_and_compile() -> None:
    da = pytest.importorskip("dask.array")
    lazy = dml.argmin(da.from_array(R, chunks=2), axis=1, keepdims=False)
    assert lazy.shape == (3, 5)
    np.testing.assert_array_equal(lazy.compute(), np.argmin(R, axis=1))
    compiled = dml.compile(lambda a: dml.argmax(a, axis=2, keepdims=False))
    np.testing.assert_array_equal(compiled(R), np.argmax(R, axis=2))


def test_the_default_call_keeps_its_fast_path_and_keepdims_false_never_takes_it() -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    for _ in range(3):  # a repeated default call, then one dropping the axes on the same arrays
        np.testing.assert_array_equal(dml.argmax(x, axis=1), np.argmax(x, axis=1, keepdims=True))
        np.testing.assert_array_equal(dml.argmax(x, axis=1, keepdims=False), np.argmax(x, axis=1))
