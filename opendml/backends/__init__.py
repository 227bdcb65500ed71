"""Backends, found by name and imported only when first asked for (CuPy is never imported otherwise)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ..errors import invalid

if TYPE_CHECKING:
    from .base import Backend

# name -> module defining ``create() -> Backend``.
BACKENDS: dict[str, str] = {
    "cpu": "opendml.backends.cpu",
    "cuda": "opendml.backends.cuda",
}

_loaded: dict[str, Backend] = {}


def load(name: object) -> Backend:
    """The one backend instance of this name, created on first use."""
    if not isinstance(name, str) or name.lower() not in BACKENDS:
        raise invalid("Device", "backend", f"must be one of {', '.join(BACKENDS)}", repr(name))
    name = name.lower()
    if name not in _loaded:
        _loaded[name] = importlib.import_module(BACKENDS[name]).create()
    return _loaded[name]
