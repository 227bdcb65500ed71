"""Shared fixtures: every operator test runs on every backend this machine has."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

import opendml as dml

settings.register_profile("ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("OPENDML_HYPOTHESIS_PROFILE", "ci"))


def _cuda_missing() -> str | None:
    """Why the CUDA backend cannot run here, or None when it can."""
    try:
        dml.Device("cuda")
    except dml.OpenDMLError as error:
        return str(error)
    return None


CUDA_MISSING = _cuda_missing()

BACKENDS = [
    pytest.param("cpu", id="cpu"),
    pytest.param("cuda", id="cuda", marks=pytest.mark.skipif(
        CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")),
]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def device(backend: str) -> dml.Device:
    """A device at the newest feature level on each available backend."""
    return dml.Device(backend)
