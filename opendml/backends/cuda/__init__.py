"""The CUDA backend: device memory and generated kernels through CuPy.

This package is the only place opendml imports CuPy, and only when a CUDA device is asked for.
"""

from __future__ import annotations

from ...errors import BackendUnavailableError


def create() -> object:
    """The CUDA backend, or a clear error when CuPy or a GPU is missing."""
    try:
        import cupy
    except Exception as error:  # ImportError, or a broken CUDA installation
        raise BackendUnavailableError(
            "Device: backend 'cuda' needs CuPy (pip install 'opendml[cuda]'); "
            f"got {type(error).__name__}: {error}.") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:
        raise BackendUnavailableError(f"Device: backend 'cuda' needs an NVIDIA GPU; got {error}.") from None
    if count < 1:
        raise BackendUnavailableError("Device: backend 'cuda' needs an NVIDIA GPU; got none.")
    from .backend import CudaBackend

    return CudaBackend()
