"""The CUDA backend (CuPy). Importing this module is the only place opendml touches CuPy."""

from __future__ import annotations

from ..errors import BackendUnavailableError


def create() -> object:
    raise BackendUnavailableError("Device: backend 'cuda' is not available yet; got a request for it.")
