"""``OPENDML_PRINT_KERNELS=1``: every backend prints each source it generates, once, to stderr."""

from __future__ import annotations

import sys

from .. import settings

_printed: set[tuple[str, str]] = set()


def print_kernels_enabled() -> bool:
    """Whether ``OPENDML_PRINT_KERNELS`` asks for generated sources (read at each call, so it can be set late)."""
    return settings.PRINT_KERNELS.get()


def print_source(kind: str, title: str, source: str) -> None:
    """Print a generated ``source`` (``kind``: "CUDA C", "Numba"...) under a header naming ``title``, once
    per process, when the switch is on."""
    if not print_kernels_enabled() or (kind, source) in _printed:
        return
    _printed.add((kind, source))
    print(f"// ---- opendml {kind} kernel: {title} ----\n{source}", file=sys.stderr, flush=True)
