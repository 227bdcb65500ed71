"""The CPU ARGMIN and ARGMAX engines run from a kernel specification: its own element (``Load(0, T)``) or a computed
one; ARGMAX's descriptions and hand-worked examples, NanPolicy PROPAGATE's."""

from __future__ import annotations

import dataclasses
from types import ModuleType

import numpy as np
import pytest

import opendml as dml
from opendml import expr as ex
from opendml.backends import cpu_kernels
from opendml.dtypes import DataType
from opendml.kernels.spec import KernelSpec
from tests.elementwise_oracle import arg_of, argmin_of
from tests.helpers import run

MODULES = [pytest.param("numba", marks=pytest.mark.skipif(not cpu_kernels.numba_available(),
                                                          reason="Numba is not installed (the opendml[fast] extra)")),
           "numpy"]


def _spec(direction: str) -> KernelSpec:
    device = dml.Device("cpu", threads=2)
    op = device.create_operator(dml.ArgMinDesc(dml.TensorDesc("FLOAT32", (3, 5)), dml.TensorDesc("INT32", (3, 1)),
                                               (1,), direction))
    return op.kernel_spec


@pytest.fixture(params=MODULES)
def kernels(request: pytest.FixtureRequest) -> ModuleType:
    return cpu_kernels.load(request.param)


@pytest.mark.parametrize("direction", ["INCREASING", "DECREASING"])
def test_the_operators_own_specification_runs(kernels: ModuleType, direction: str) -> None:
    x = np.array([[2, -0.0, 0.0, np.nan, 1], [np.nan] * 5, [3, 1, 4, 1, 5]], np.float32)
    out = np.full((3, 1), 77, np.int32)
    kernels.reduction(_spec(direction))(x, out, 2)
    assert out.reshape(-1).tolist() == [argmin_of(row, direction) for row in x.tolist()]


def test_a_computed_element_is_compared_not_the_input(kernels: ModuleType) -> None:
    """x * -1 compared: the largest x wins (NaN still skipped, ties to the first index)."""
    spec = _spec("INCREASING")
    negated = ex.Multiply(ex.Load(0, DataType.FLOAT32), ex.Param(0, DataType.FLOAT32))
    computed = dataclasses.replace(spec, element=negated, scalars=(np.float32(-1),))
    x = np.array([[2, -0.0, 0.0, np.nan, 1], [np.nan] * 5, [3, 5, 4, 5, 1]], np.float32)
    out = np.full((3, 1), 77, np.int32)
    kernels.reduction(computed)(x, out, 2)
    assert out.reshape(-1).tolist() == [0, 0, 1]


def test_an_element_wise_specification_is_refused(kernels: ModuleType) -> None:
    spec = _spec("INCREASING")
    store = dataclasses.replace(spec, element=ex.Store(ex.Load(0, DataType.FLOAT32), DataType.FLOAT32),
                                output=DataType.FLOAT32, reduction=None)
    with pytest.raises(dml.KernelUnsupportedError, match=r"^ARGMIN: Reduction must be an ARGMIN or ARGMAX record.*got None\.$"):
        kernels.reduction(store)


# --- ARGMAX and NanPolicy PROPAGATE: the same engines, from the operator's own specification ---------------

def _reduce(kernels: ModuleType, operator: str, x: np.ndarray, axes: tuple[int, ...], direction: str = "INCREASING",
            nan_policy: str = "IGNORE") -> list[int]:
    """The indices the kernel module computes from the operator's KernelSpec (a CPU device's, two threads)."""
    desc = dml.ArgMaxDesc if operator == "ARGMAX" else dml.ArgMinDesc
    out_shape = tuple(1 if k in axes else n for k, n in enumerate(x.shape))
    spec = dml.Device("cpu", threads=2).create_operator(desc(
        dml.TensorDesc(DataType.parse(x.dtype).name, x.shape), dml.TensorDesc("INT64", out_shape), axes, direction,
        nan_policy)).kernel_spec
    out = np.full(out_shape, 77, np.int64)
    kernels.reduction(spec)(x, out, 2)
    return out.reshape(-1).tolist()  # type: ignore[no-any-return]


@pytest.mark.parametrize("data_type", ["FLOAT32", "INT64", "UINT64"])
def test_argmax_hand_worked_examples(kernels: ModuleType, data_type: str) -> None:
    """[[1, 2, 3], [3, 0, 4], [2, 5, 2]]: per column the rows of 3, 5 and 4; per row the columns of 3, 4
    and 5; over both, the flattened index of 5 (row 2, column 1: 2 * 3 + 1)."""
    x = np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], DataType[data_type].numpy)
    assert _reduce(kernels, "ARGMAX", x, (0,)) == [1, 2, 1]
    assert _reduce(kernels, "ARGMAX", x, (1,)) == [2, 2, 1]
    assert _reduce(kernels, "ARGMAX", x, (0, 1)) == [7]
    ties = np.array([[3, 1, 3]], DataType[data_type].numpy)
    assert _reduce(kernels, "ARGMAX", ties, (1,), "INCREASING") == [0]
    assert _reduce(kernels, "ARGMAX", ties, (1,), "DECREASING") == [2]


@pytest.mark.parametrize("operator", ["ARGMIN", "ARGMAX"])
@pytest.mark.parametrize("data_type", ["FLOAT32", "FLOAT16"])
def test_nan_policy_hand_worked_examples(kernels: ModuleType, operator: str, data_type: str) -> None:
    """PROPAGATE: the first NaN (INCREASING) or the last wins over every number, -inf and +inf included;
    IGNORE: NaN skipped, and a reduction of NaN only gives the first or the last index."""
    t = DataType[data_type].numpy
    nan_one_nan = np.array([[np.nan, 1, np.nan], [-np.inf, np.nan, np.inf]], t)
    assert _reduce(kernels, operator, nan_one_nan, (1,), "INCREASING", "PROPAGATE") == [0, 1]
    assert _reduce(kernels, operator, nan_one_nan, (1,), "DECREASING", "PROPAGATE") == [2, 1]
    assert _reduce(kernels, operator, nan_one_nan, (1,), "INCREASING", "IGNORE") == (
        [1, 2] if operator == "ARGMAX" else [1, 0])
    every_nan = np.full((2, 4), np.nan, t)
    every_nan[1] = -every_nan[1]  # NaN of the other sign
    for policy in ("IGNORE", "PROPAGATE"):
        assert _reduce(kernels, operator, every_nan, (1,), "INCREASING", policy) == [0, 0]
        assert _reduce(kernels, operator, every_nan, (1,), "DECREASING", policy) == [3, 3]
        assert _reduce(kernels, operator, every_nan, (0, 1), "DECREASING", policy) == [7]
    zeros = np.array([[0.0, -0.0, 0.0]], t)  # -0.0 == +0.0: a tie
    assert _reduce(kernels, operator, zeros, (1,), "INCREASING", "PROPAGATE") == [0]
    assert _reduce(kernels, operator, zeros, (1,), "DECREASING", "IGNORE") == [2]


def test_argmax_of_a_computed_element_compares_it(kernels: ModuleType) -> None:
    """x * -1 compared by ARGMAX: the smallest x wins (NaN skipped, ties to the first index)."""
    spec = dml.Device("cpu", threads=2).create_operator(dml.ArgMaxDesc(
        dml.TensorDesc("FLOAT32", (3, 5)), dml.TensorDesc("INT32", (3, 1)), (1,))).kernel_spec
    negated = ex.Multiply(ex.Load(0, DataType.FLOAT32), ex.Param(0, DataType.FLOAT32))
    computed = dataclasses.replace(spec, element=negated, scalars=(np.float32(-1),))
    x = np.array([[2, -0.0, 0.0, np.nan, 1], [np.nan] * 5, [3, 1, 4, 1, 5]], np.float32)
    out = np.full((3, 1), 77, np.int32)
    kernels.reduction(computed)(x, out, 2)
    assert out.reshape(-1).tolist() == [1, 0, 1]


BAD_ARGMAX = [
    ((3, 5), (3, 1), (), "IGNORE", r"Axes must be a non-empty sequence of axes \(AxisCount >= 1\); got \[\]"),
    ((3, 5), (3, 1), (2,), "IGNORE", r"Axes\[0\] must be an integer in \[0, 1\]; got 2"),
    ((3, 5), (3, 1), (1, 1), "IGNORE", r"Axes must not repeat an axis; got \[1, 1\]"),
    ((3, 5), (3, 2), (1,), "IGNORE", r"OutputTensor.Sizes\[1\] must be 1 \(a reduced axis\); got 2"),
    ((3, 5), (3, 1, 1), (1,), "IGNORE",
     r"OutputTensor.DimensionCount must equal InputTensor.DimensionCount \(2\); got 3"),
    ((3, 5), (3, 1), (1,), "LOUD", r"NanPolicy must be one of IGNORE, PROPAGATE; got 'LOUD'"),
]


@pytest.mark.parametrize("sizes, out_sizes, axes, nan_policy, message", BAD_ARGMAX)
def test_bad_argmax_descriptions_name_argmax(sizes: tuple[int, ...], out_sizes: tuple[int, ...],
                                             axes: tuple[int, ...], nan_policy: str, message: str) -> None:
    desc = dml.ArgMaxDesc(dml.TensorDesc("FLOAT32", sizes), dml.TensorDesc("INT32", out_sizes), axes,
                          nan_policy=nan_policy)
    with pytest.raises(dml.InvalidArgumentError, match=rf"^ARGMAX: {message}\.$"):
        dml.Device("cpu").create_operator(desc)


def test_argmax_runs_through_the_device_and_matches_the_oracle() -> None:
    """Every operator, direction and NaN policy on a CPU device, against the oracle's ``arg_of``."""
    device = dml.Device("cpu")
    x = np.array([[np.nan, 2, -0.0, 0.0, 2, np.nan], [1, -np.inf, np.nan, 5, -np.inf, 5], [np.nan] * 6], np.float32)
    for operator, desc in (("ARGMIN", dml.ArgMinDesc), ("ARGMAX", dml.ArgMaxDesc)):
        for direction in ("INCREASING", "DECREASING"):
            for policy in ("IGNORE", "PROPAGATE"):
                got = run(device, desc(dml.TensorDesc("FLOAT32", (3, 6)), dml.TensorDesc("UINT32", (3, 1)), (1,),
                                       direction, policy), [x])
                want = [arg_of(row, direction, operator == "ARGMAX", policy == "PROPAGATE") for row in x.tolist()]
                assert got.reshape(-1).tolist() == want, (operator, direction, policy)
