"""top_k, softmax, log_softmax, hardmax and reduce on PyTorch tensors: host tensors run on the CPU through NumPy
(NumPy results, as every function gives for them), CUDA tensors on the GPU with PyTorch results; eager and
compiled (opendml.compile) alike, against expectations computed here."""

from __future__ import annotations

import math

import numpy as np
import pytest

import opendml as dml
from tests.conftest import CUDA_MISSING

torch = pytest.importorskip("torch", reason="PyTorch is not installed")

X = np.array([[0.5, -1.0, 2.0, 2.0, -0.0, 3.0], [1.0, 1.0, -np.inf, 0.25, 7.0, -2.0]], np.float32)


def test_host_tensors_top_k_gives_numpy_values_and_indices() -> None:
    values, indices = dml.top_k(torch.from_numpy(X), 3)
    order = np.argsort(-X, axis=1, kind="stable")[:, :3]  # decreasing, ties by ascending index
    assert isinstance(values, np.ndarray) and isinstance(indices, np.ndarray) and indices.dtype == np.uint32
    assert np.array_equal(indices, order) and np.array_equal(values, np.take_along_axis(X, order, 1))


@pytest.mark.parametrize("python", ["softmax", "log_softmax", "hardmax"])
def test_host_tensors_softmax_family_is_the_numpy_call(python: str) -> None:
    function = getattr(dml, python)
    got = function(torch.from_numpy(X), 1)
    assert isinstance(got, np.ndarray) and got.tobytes() == function(X, 1).tobytes()
    if python == "hardmax":
        assert np.array_equal(got, (np.arange(6) == np.argmax(X, 1)[:, None]).astype(np.float32))
    else:
        wide = torch.from_numpy(X).double()
        want = (torch.softmax if python == "softmax" else torch.log_softmax)(wide, 1).numpy()
        # docs/semantics.md 9g: SOFTMAX within about 1.5 FLOAT32 ulps; LOG_SOFTMAX d_i - LOG(S), S a FLOAT32 sum in
        # [1, n], so an error of about an ulp of 1 where the result is near 0 (the largest element)
        assert np.allclose(got, want, rtol=2 ** -21, atol=0 if python == "softmax" else 2 ** -22)


def test_host_tensors_reduce_sums_exactly() -> None:
    x = np.array([[1e30, 1.0, -1e30], [2.0 ** -24, 1.0, 2.0 ** -24]], np.float32)
    got = dml.reduce(torch.from_numpy(x), "SUM", 1, keepdims=False)
    assert isinstance(got, np.ndarray) and got.tolist() == [math.fsum(map(float, row)) for row in x]


def test_host_tensors_in_a_compiled_function() -> None:
    compiled = dml.compile(lambda x: (*dml.top_k(dml.clip(x, -1.0, 2.0), 2), dml.softmax(x),
                                      dml.reduce(x, "MAX", 1)))
    tensor = torch.from_numpy(X)
    got = compiled(tensor)
    want = (*dml.top_k(dml.clip(X, -1.0, 2.0), 2), dml.softmax(X), dml.reduce(X, "MAX", 1))
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.tobytes() == w.tobytes()


@pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")
def test_cuda_tensors_argmax_gives_cuda_tensors() -> None:
    tensor = torch.from_numpy(X).cuda()
    index = dml.reduce(tensor, "ARGMAX", 1)
    assert isinstance(index, torch.Tensor) and index.is_cuda
    assert index.cpu().numpy().reshape(-1).tolist() == np.argmax(X, 1).tolist()


@pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")
@pytest.mark.xfail(raises=dml.KernelUnsupportedError, strict=True,
                   reason="TOP_K has no CUDA kernel yet: the CUDA backend refuses it by name")
def test_cuda_tensors_top_k_gives_cuda_tensors() -> None:
    tensor = torch.from_numpy(X).cuda()
    values, indices = dml.top_k(tensor, 3)
    assert isinstance(values, torch.Tensor) and values.is_cuda and isinstance(indices, torch.Tensor)
    want = dml.top_k(X, 3)
    assert values.cpu().numpy().tobytes() == want[0].tobytes()
    assert np.array_equal(indices.cpu().numpy(), want[1])
    compiled = dml.compile(lambda x: dml.top_k(x, 3))
    traced = compiled(tensor)
    assert all(isinstance(t, torch.Tensor) and t.is_cuda for t in traced)
    assert traced[0].cpu().numpy().tobytes() == want[0].tobytes()
