"""``opendml.dequantize`` and ``opendml.quantize`` on CuPy and PyTorch arrays: GPU arrays on the CUDA device give
results of their own kind (4-bit values one a byte, int8 or uint8: those libraries have no 4-bit dtype), host
PyTorch tensors go through NumPy, and the CPU device refuses GPU memory by name. Values computed here from the
rule."""

from __future__ import annotations

import numpy as np
import pytest

import opendml as dml
from tests.conftest import CUDA_MISSING

Q = np.array([[0, 8, 15, 1], [3, 3, 9, 2]], np.uint8)  # UINT4 values
SCALE = np.float32([[1, 0.5], [2, 1]])  # blocks of 2 along the last axis
ZERO = np.array([[8, 0], [1, 2]], np.uint8)
DEQUANTIZED = np.float32([[-8, 0, 7.5, 0.5], [4, 4, 7, 0]])  # (q - zero point) * scale, block by block

needs_cuda = pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")


class _GpuLike:
    """An object in GPU memory as far as the protocols say (what a CuPy array shows the CPU device)."""

    @property
    def __cuda_array_interface__(self) -> dict[str, object]:
        return {"shape": (2, 4), "typestr": "|u1", "data": (0, False), "version": 3}


def test_the_cpu_device_refuses_gpu_memory_by_name() -> None:
    with pytest.raises(dml.InvalidArgumentError, match=r"array must be in host memory for a cpu device"):
        dml.dequantize(_GpuLike(), SCALE, ZERO, data_type="UINT4", device="cpu")


@needs_cuda
def test_cupy_arrays_give_cupy_results() -> None:
    import cupy

    got = dml.dequantize(cupy.asarray(Q), cupy.asarray(SCALE), cupy.asarray(ZERO), data_type="UINT4")
    assert isinstance(got, cupy.ndarray) and got.get().tobytes() == DEQUANTIZED.tobytes()
    back = dml.quantize(got, cupy.asarray(SCALE), cupy.asarray(ZERO), output_type="UINT4")
    assert isinstance(back, cupy.ndarray) and back.dtype == cupy.uint8 and back.get().tolist() == Q.tolist()


@needs_cuda
def test_torch_cuda_tensors_give_torch_results() -> None:
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    to = {"device": "cuda"}
    got = dml.dequantize(torch.tensor(Q, **to), torch.tensor(SCALE, **to), torch.tensor(ZERO, **to), data_type="UINT4")
    assert isinstance(got, torch.Tensor) and got.is_cuda
    assert got.cpu().numpy().tobytes() == DEQUANTIZED.tobytes()


def test_torch_host_tensors_run_on_the_cpu() -> None:
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    got = dml.dequantize(torch.tensor(Q), torch.tensor(SCALE), torch.tensor(ZERO), data_type="UINT4", device="cpu")
    assert got.tobytes() == DEQUANTIZED.tobytes()
    back = dml.quantize(torch.tensor(DEQUANTIZED), torch.tensor(SCALE), torch.tensor(ZERO), output_type="UINT4",
                        device="cpu")
    assert back.astype(np.uint8).tolist() == Q.tolist()
