"""argmin and argmax with return_values=True: the values read at the winning indices, against the oracle."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import opendml as dml
from tests.conftest import CUDA_MISSING
from tests.elementwise_oracle import ARGMIN_OUTPUT_TYPES, argmin_tensor, same_value
from tests.helpers import edge_values

NEEDS_CUDA = pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")
FUNCTIONS = {"ARGMIN": dml.argmin, "ARGMAX": dml.argmax}


def _python(x: np.ndarray) -> dict[tuple[int, ...], int | float]:
    return {index: float(v) if x.dtype.kind == "f" else int(v) for index, v in np.ndenumerate(x)}


def _expected(x: np.ndarray, axes: tuple[int, ...], direction: str, largest: bool, propagate: bool
              ) -> dict[tuple[int, ...], tuple[int, int | float]]:
    """The oracle's index per output element, and the input element it names (read in plain Python)."""
    read = _python(x)
    found = argmin_tensor(read, x.shape, axes, direction, largest, propagate)
    sub_shape = [x.shape[a] for a in axes]
    expected = {}
    for out_index, flat in found.items():
        full = list(out_index)
        for axis, i in zip(axes, np.unravel_index(flat, sub_shape)):
            full[axis] = int(i)
        expected[out_index] = (flat, read[tuple(full)])
    return expected


def _check(got: tuple[np.ndarray, np.ndarray], x: np.ndarray, axes: tuple[int, ...], direction: str,
           largest: bool, propagate: bool) -> None:
    indices, values = got
    assert values.dtype == x.dtype and values.shape == indices.shape
    assert type(values) is type(indices)
    for out_index, (flat, value) in _expected(x, axes, direction, largest, propagate).items():
        assert int(indices[out_index]) == flat, (out_index, axes, direction, largest, propagate)
        got_value = values[out_index].item()
        assert same_value(got_value, value), (out_index, got_value, value)
        if x.dtype.kind == "f" and value == 0:  # -0.0 and +0.0 tie: the winner's own sign comes back
            assert np.signbit(values[out_index]) == np.signbit(value), (out_index, axes, direction)


@pytest.mark.parametrize("data_type", ["FLOAT32", "FLOAT16", "INT8", "UINT16", "INT64", "UINT64"])
def test_values_are_the_oracles_extremes(data_type: str, request: pytest.FixtureRequest) -> None:
    """Edge values (NaN, infinities, -0.0, limits, ties) over every axis set, both directions, both policies,
    both reductions: the index is the oracle's and the value is the element it names. FLOAT32 on the compiled
    engines, the other types by default on the NumPy kernels (each type's eight engines would compile here only;
    test_cpu_fast runs every type's engines)."""
    if data_type != "FLOAT32":
        request.getfixturevalue("numpy_kernels_unless_slow")
    rng = np.random.default_rng(23)
    x = edge_values(dml.DataType[data_type], 3 * 4 * 5, rng).reshape(3, 4, 5)
    x[1, 2] = x[1, 2, 0]  # a row of one value: a tie
    if x.dtype.kind == "f":
        x[2, 1] = np.nan  # a row of NaN only
        x[0, 3] = [0.0, -0.0, 0.0, -0.0, 0.0]  # signed zeros tie
    for r in range(1, 4):
        for axes in itertools.combinations(range(3), r):
            for direction, name, propagate in itertools.product(["INCREASING", "DECREASING"], FUNCTIONS,
                                                                [False, True]):
                got = FUNCTIONS[name](x, axes, axis_direction=direction, return_values=True,
                                      nan_policy="PROPAGATE" if propagate else "IGNORE")
                _check(got, x, axes, direction, name == "ARGMAX", propagate)


def test_signed_zero_ties_return_the_winners_sign() -> None:
    x = np.array([[0.0, -0.0, 1.0], [-0.0, 0.0, 2.0]], np.float32)
    first, first_values = dml.argmin(x, 1, return_values=True)
    last, last_values = dml.argmin(x, 1, axis_direction="DECREASING", return_values=True)
    assert first.tolist() == [[0], [0]] and np.signbit(first_values).tolist() == [[False], [True]]
    assert last.tolist() == [[1], [1]] and np.signbit(last_values).tolist() == [[True], [False]]


def test_nan_values_under_both_policies() -> None:
    nan = np.nan
    x = np.array([[nan, nan, nan], [3.0, nan, 1.0], [2.0, 5.0, -1.0]], np.float32)
    for function in FUNCTIONS.values():
        _, ignored = function(x, 1, return_values=True)
        assert np.isnan(ignored[0, 0]) and not np.isnan(ignored[1:]).any()  # NaN: the whole row was NaN
        _, propagated = function(x, 1, nan_policy="PROPAGATE", return_values=True)
        assert np.isnan(propagated[:2]).all() and not np.isnan(propagated[2, 0])  # NaN: a NaN won
    assert dml.argmin(x, 1, return_values=True)[1][1:].tolist() == [[1.0], [-1.0]]
    assert dml.argmax(x, 1, return_values=True)[1][1:].tolist() == [[3.0], [5.0]]


@pytest.mark.parametrize("output_type", ARGMIN_OUTPUT_TYPES)
def test_every_index_type(output_type: str) -> None:
    x = np.random.default_rng(4).integers(-1000, 1000, (4, 6, 5)).astype(np.int32)
    for axes in [(1,), (0, 2), (0, 1, 2)]:
        for name in FUNCTIONS:
            got = FUNCTIONS[name](x, axes, output_type=output_type, return_values=True)
            assert got[0].dtype == dml.DataType[output_type].numpy
            _check(got, x, axes, "INCREASING", name == "ARGMAX", False)


def test_out_receives_the_indices() -> None:
    x = np.random.default_rng(8).standard_normal((5, 7)).astype(np.float16)
    canvas = np.full((5, 3), 99, np.uint32)
    view = canvas[:, 1:2]
    indices, values = dml.argmax(x, 1, out=view, output_type="UINT32", return_values=True)
    assert indices is view and (canvas[:, [0, 2]] == 99).all()
    assert view[:, 0].tolist() == np.argmax(x, axis=1).tolist()
    assert values.dtype == np.float16 and values[:, 0].tolist() == x.max(axis=1).tolist()


def test_views_scalars_and_empty_results() -> None:
    base = np.random.default_rng(6).permutation(6 * 8 * 4).astype(np.int16).reshape(6, 8, 4)
    for view in (base[::2, 1:7:3], base.transpose(2, 0, 1), base[:, ::-1]):
        _, values = dml.argmin(view, (0, 2), return_values=True)
        assert values.tolist() == view.min(axis=(0, 2), keepdims=True).tolist()
    indices, values = dml.argmax(np.float32(-2.5), return_values=True)
    assert indices.shape == values.shape == () and indices.item() == 0 and values.item() == -2.5
    indices, values = dml.argmin(np.zeros((0, 3), np.uint8), 1, return_values=True)
    assert indices.shape == values.shape == (0, 1) and values.dtype == np.uint8


def test_return_values_must_be_a_bool_and_is_refused_when_traced() -> None:
    with pytest.raises(dml.InvalidArgumentError, match=r"^ARGMIN: return_values must be True or False; got 'yes'\.$"):
        dml.argmin(np.zeros(3, np.float32), return_values="yes")  # type: ignore[arg-type]

    @dml.compile
    def traced(x: np.ndarray) -> object:
        return dml.argmax(x, 0, return_values=True)

    with pytest.raises(dml.InvalidArgumentError,
                       match=r"^ARGMAX: return_values must be False in a function traced by opendml\.compile; got True\.$"):
        traced(np.zeros(3, np.float32))


@NEEDS_CUDA
def test_values_on_cupy_arrays() -> None:
    import cupy

    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 5, 6)).astype(np.float32)
    x[1, 2, 3] = x[3, 0, 0] = np.nan
    for name, policy, axes in itertools.product(FUNCTIONS, ("IGNORE", "PROPAGATE"), ((2,), (0, 2), (0, 1, 2))):
        indices, values = FUNCTIONS[name](cupy.asarray(x), axes, nan_policy=policy, return_values=True)
        assert isinstance(indices, cupy.ndarray) and isinstance(values, cupy.ndarray)
        _check((cupy.asnumpy(indices), cupy.asnumpy(values)), x, axes, "INCREASING", name == "ARGMAX",
               policy == "PROPAGATE")
    host_out = np.zeros((4, 1, 1), np.int64)
    indices, values = dml.argmin(cupy.asarray(x), (1, 2), out=host_out, return_values=True)
    assert indices is host_out and isinstance(values, np.ndarray)
    _check((indices, values), x, (1, 2), "INCREASING", False, False)
