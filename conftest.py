"""Doctest collection: modules that import CuPy are only collected where CuPy is installed."""

from __future__ import annotations

import importlib.util

collect_ignore = [] if importlib.util.find_spec("cupy") else [
    "opendml/backends/cuda/backend.py",
    "opendml/backends/cuda/compiler.py",
]
