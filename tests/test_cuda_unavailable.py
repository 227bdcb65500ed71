"""Without CuPy or a GPU, asking for the CUDA backend is a clear error, and nothing else needs CuPy."""

from __future__ import annotations

import subprocess
import sys

import pytest

import opendml as dml
from tests.conftest import CUDA_MISSING


@pytest.mark.skipif(CUDA_MISSING is None, reason="this machine has a usable CUDA GPU")
def test_cuda_device_without_a_gpu_is_a_clear_error() -> None:
    with pytest.raises(dml.BackendUnavailableError, match=r"^Device: backend 'cuda' needs"):
        dml.Device("cuda")


def test_import_needs_only_numpy() -> None:
    code = ("import sys, opendml; "
            "assert not {'cupy', 'torch', 'onnx', 'numba'} & set(sys.modules), sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)
