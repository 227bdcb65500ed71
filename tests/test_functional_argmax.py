"""The functional argmax, argmin's nan_policy= and unravel_index, against literal values and the oracle."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import opendml as dml
from tests.conftest import CUDA_MISSING
from tests.elementwise_oracle import argmin_tensor
from tests.helpers import edge_values

NEEDS_CUDA = pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")
X = np.array([[[5, 1], [0, 7]], [[2, 2], [9, -1]]], np.int32)


def test_argmax_axes_forms() -> None:
    assert dml.argmax(X).tolist() == [[[6]]]  # 9 is the 7th element
    assert dml.argmax(X, -1).tolist() == [[[0], [1]], [[0], [0]]]  # [2, 2] ties: the first
    assert dml.argmax(X, (0, 2)).tolist() == [[[0], [2]]]  # rows [5, 1, 2, 2] and [0, 7, 9, -1]
    last = dml.argmax(X, [2, 0], axis_direction="DECREASING", output_type="UINT32")
    assert last.dtype == np.uint32 and last.tolist() == [[[0], [2]]]
    assert dml.argmax(X, 2, axis_direction="DECREASING").tolist() == [[[0], [1]], [[1], [0]]]
    assert dml.argmax(X, 1, output_type=dml.DataType.INT32).tolist() == [[[0, 1]], [[1, 0]]]
    with pytest.raises(dml.InvalidArgumentError, match=r"^ARGMAX: Axes\[0\] must be an integer in \[-3, 2\]; got 3\.$"):
        dml.argmax(X, 3)
    with pytest.raises(dml.InvalidArgumentError, match=r"^ARGMAX: Axes must not repeat an axis"):
        dml.argmax(X, [1, -2])
    with pytest.raises(dml.InvalidArgumentError, match=r"^ARGMAX: OutputTensor.DataType must be one of"):
        dml.argmax(X, 1, output_type="FLOAT32")


def test_argmax_is_exported_beside_argmin() -> None:
    assert dml.argmax is dml.functional.argmax and "argmax" in dml.__all__
    assert dml.argmin(X, -1).tolist() != dml.argmax(X, -1).tolist()


def test_nan_policy_on_both_reductions() -> None:
    nan = np.nan
    x = np.array([[1.0, nan, 3.0, nan], [nan, nan, nan, nan], [-0.0, 0.0, -1.0, 5.0]], np.float32)
    assert dml.argmax(x, 1).tolist() == [[2], [0], [3]]  # IGNORE (DirectML's): NaN skipped; all NaN: the first
    assert dml.argmax(x, 1, axis_direction="DECREASING").tolist() == [[2], [3], [3]]
    assert dml.argmax(x, 1, nan_policy="PROPAGATE").tolist() == [[1], [0], [3]]  # the first NaN wins
    assert dml.argmax(x, 1, nan_policy=dml.NanPolicy.PROPAGATE, axis_direction="DECREASING").tolist() == [[3], [3], [3]]
    assert dml.argmin(x, 1).tolist() == [[0], [0], [2]]
    assert dml.argmin(x, 1, nan_policy="NAN_POLICY_PROPAGATE").tolist() == [[1], [0], [2]]
    assert dml.argmin(x, 1, nan_policy=1, axis_direction="DECREASING").tolist() == [[3], [3], [2]]
    assert dml.argmax(x[2:], 1, nan_policy="propagate").tolist() == [[3]]  # no NaN: as IGNORE
    ties = np.array([[-0.0, 0.0]], np.float32)  # -0.0 equals +0.0: a tie broken by the direction
    assert dml.argmax(ties, 1).tolist() == [[0]] and dml.argmax(ties, 1, axis_direction=1).tolist() == [[1]]
    # NumPy's answer, the reason for PROPAGATE:
    assert dml.argmax(x[0], nan_policy="PROPAGATE").item() == np.argmax(x[0])
    assert dml.argmin(x[0], nan_policy="PROPAGATE").item() == np.argmin(x[0])


@pytest.mark.parametrize("function", [dml.argmin, dml.argmax])
@pytest.mark.parametrize("bad", ["SOMETIMES", 2, -1, None, True, 1.0])
def test_bad_nan_policy_is_refused(function: object, bad: object) -> None:
    name = "ARGMIN" if function is dml.argmin else "ARGMAX"
    with pytest.raises(dml.InvalidArgumentError, match=rf"^{name}: NanPolicy must be one of IGNORE, PROPAGATE; got "):
        function(np.zeros(3, np.float32), nan_policy=bad)  # type: ignore[operator]


def _oracle(x: np.ndarray, axes: tuple[int, ...], direction: str, largest: bool, propagate: bool) -> np.ndarray:
    """The oracle's answer as an array of the reduction's output shape."""
    read = {index: float(v) if x.dtype.kind == "f" else int(v) for index, v in np.ndenumerate(x)}
    found = argmin_tensor(read, x.shape, axes, direction, largest, propagate)
    result = np.zeros(tuple(1 if k in axes else n for k, n in enumerate(x.shape)), np.int64)
    for index, value in found.items():
        result[index] = value
    return result


# Each type compiles the engines for each of its eight kinds (operator, policy, direction), seconds each: a
# float and a signed type by default; the half, unsigned and 64-bit key transforms run through the engines in
# tests/test_cpu_fast.py by default (and through this front end in the fuzz suite), and here under --slow.
@pytest.mark.parametrize("data_type", ["FLOAT32", "INT8", *(pytest.param(t, marks=pytest.mark.slow)
                                                            for t in ("FLOAT16", "UINT16", "INT64", "UINT64"))])
def test_argmax_and_argmin_against_the_oracle(data_type: str) -> None:
    """Edge values (NaN, infinities, -0.0, limits, ties) over every axis set, both directions and policies."""
    rng = np.random.default_rng(11)
    x = edge_values(dml.DataType[data_type], 3 * 4 * 5, rng).reshape(3, 4, 5)
    x[1, 2] = x[1, 2, 0]  # a row of one value: a tie
    if x.dtype.kind == "f":
        x[2, 1] = np.nan  # a row of NaN only
    for r in range(1, 4):
        for axes in itertools.combinations(range(3), r):
            for direction, largest, propagate in itertools.product(["INCREASING", "DECREASING"], [False, True],
                                                                   [False, True]):
                function = dml.argmax if largest else dml.argmin
                got = function(x, axes, axis_direction=direction, nan_policy="PROPAGATE" if propagate else "IGNORE")
                expected = _oracle(x, axes, direction, largest, propagate)
                assert np.array_equal(got, expected), (axes, direction, largest, propagate)


def test_argmax_out_parameter_and_levels() -> None:
    x = np.random.default_rng(3).standard_normal((5, 7)).astype(np.float32)
    canvas = np.full((5, 3), 99, np.int64)
    view = canvas[:, 1:2]
    assert dml.argmax(x, 1, out=view) is view
    assert view[:, 0].tolist() == np.argmax(x, axis=1).tolist() and (canvas[:, [0, 2]] == 99).all()
    with pytest.raises(dml.InvalidArgumentError, match=r"^ARGMAX: out must have shape \(5, 1\) and dtype int64"):
        dml.argmax(x, 1, out=np.zeros((5, 1), np.int32))
    assert dml.argmax(np.float32(3)).shape == ()
    old = dml.Device("cpu", "3_0")
    assert dml.argmax(x, 1, device=old).tolist() == np.argmax(x, axis=1, keepdims=True).tolist()
    with pytest.raises(dml.UnsupportedFeatureLevelError, match=r"ARGMAX: .*INT64"):  # INT64 inputs from 4_1
        dml.argmax(np.zeros(3, np.int64), device=old)
    with pytest.raises(dml.UnsupportedFeatureLevelError, match=r"ARGMAX"):  # introduced at 3_0
        dml.argmax(x, 1, device=dml.Device("cpu", "2_1"))


def test_argmax_reads_views_where_they_lie() -> None:
    base = np.random.default_rng(5).integers(-50, 50, (6, 8, 4)).astype(np.int16)
    for view in (base[::2, 1:7:3], base.transpose(2, 0, 1), base[:, ::-1], base[..., 3]):
        for axes in (0, -1, (0, view.ndim - 1)):
            expected = _oracle(np.ascontiguousarray(view), tuple(sorted({a % view.ndim for a in np.atleast_1d(axes)})),
                               "INCREASING", True, False)
            assert np.array_equal(dml.argmax(view, axes), expected)


# --- unravel_index -------------------------------------------------------------------------------------------


def test_unravel_index_by_hand() -> None:
    rows, cols = dml.unravel_index(dml.argmax(X, (0, 2)), X.shape, (0, 2))
    assert rows.tolist() == [[[0], [1]]] and cols.tolist() == [[[0], [0]]]  # 5 at [0, 0, 0]; 9 at [1, 1, 0]
    (only,) = dml.unravel_index(np.array([[4], [0]], np.uint32), (2, 5), 1)
    assert only.dtype == np.uint32 and only.tolist() == [[4], [0]]
    a, b, c = dml.unravel_index(np.array([[[23]]]), (2, 3, 4))
    assert (a.item(), b.item(), c.item()) == (1, 2, 3)
    (scalar,) = dml.unravel_index(dml.argmax(np.float32(2)), ())
    assert scalar.shape == () and scalar.item() == 0


@pytest.mark.parametrize("axes", [(0, 1), (0, 2), (1, 3), (0, 1, 2, 3), (-1, 0), (2,)])
def test_unravel_index_round_trip(axes: tuple[int, ...]) -> None:
    """The multi-axis index of argmax, split per axis, picks the largest element; np.unravel_index on the
    reduced sub-shape gives the same split."""
    shape = (3, 4, 2, 5)
    x = np.random.default_rng(9).permutation(math.prod(shape)).astype(np.float32).reshape(shape)  # no ties
    reduced = sorted(a % 4 for a in axes)
    flat = dml.argmax(x, axes, output_type="INT32")
    parts = dml.unravel_index(flat, shape, axes)
    assert len(parts) == len(reduced) and all(p.shape == flat.shape and p.dtype == np.int32 for p in parts)
    expected = np.unravel_index(flat, tuple(shape[a] for a in reduced))
    assert all(np.array_equal(p, e) for p, e in zip(parts, expected))
    index = list(np.indices(flat.shape))
    for axis, part in zip(reduced, parts):
        index[axis] = part
    assert np.array_equal(x[tuple(index)], np.max(x, axis=tuple(reduced), keepdims=True))


def test_unravel_index_errors() -> None:
    owner = r"^opendml\.unravel_index: "
    with pytest.raises(dml.InvalidArgumentError, match=owner + r"indices must lie in \[0, 11\] \(the 12 elements "
                       r"of the reduced axes' sizes \(3, 4\)\); got 12\.$"):
        dml.unravel_index(np.array([0, 12]), (3, 4), (0, 1))
    with pytest.raises(dml.InvalidArgumentError, match=owner + r"indices must lie in \[0, 3\] .*; got -1\.$"):
        dml.unravel_index(np.array([-1]), (3, 4), 1)
    with pytest.raises(dml.InvalidArgumentError, match=owner + r"Axes\[1\] must be an integer in \[-2, 1\]; got 2\.$"):
        dml.unravel_index(np.array([0]), (3, 4), (0, 2))
    with pytest.raises(dml.InvalidArgumentError, match=owner + r"Axes must not repeat an axis"):
        dml.unravel_index(np.array([0]), (3, 4), (1, -1))
    with pytest.raises(dml.InvalidArgumentError, match=owner + r"indices.DataType must be an integer type .*float32"):
        dml.unravel_index(np.array([0.0], np.float32), (3, 4), 0)
    with pytest.raises(dml.InvalidArgumentError, match=owner + r"shape\[1\] must be a positive integer; got 0\.$"):
        dml.unravel_index(np.array([0]), (3, 0), 0)
    with pytest.raises(dml.InvalidArgumentError, match=owner + r"shape must be a sequence of sizes"):
        dml.unravel_index(np.array([0]), "34", 0)
    assert [p.shape for p in dml.unravel_index(np.zeros((0, 1), np.int64), (3, 4), 1)] == [(0, 1)]


@NEEDS_CUDA
def test_gpu_argmax_nan_policy_and_unravel_index_on_cupy() -> None:
    import cupy

    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 5, 6)).astype(np.float32)
    x[1, 2, 3] = x[3, 0, 0] = np.nan
    for policy in ("IGNORE", "PROPAGATE"):
        for axes in (2, (0, 2), None):
            got = dml.argmax(cupy.asarray(x), axes, nan_policy=policy)
            assert isinstance(got, cupy.ndarray)
            assert np.array_equal(cupy.asnumpy(got), dml.argmax(x, axes, nan_policy=policy))
    flat = dml.argmin(cupy.asarray(x), (0, 2), nan_policy="PROPAGATE")
    parts = dml.unravel_index(flat, x.shape, (0, 2))
    assert all(isinstance(p, cupy.ndarray) for p in parts)
    expected = dml.unravel_index(cupy.asnumpy(flat), x.shape, (0, 2))
    assert all(np.array_equal(cupy.asnumpy(p), e) for p, e in zip(parts, expected))
