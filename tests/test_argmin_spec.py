"""The CPU ARGMIN engines run from a kernel specification: its own element (``Load(0, T)``) or a computed one."""

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
from tests.elementwise_oracle import argmin_of

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
