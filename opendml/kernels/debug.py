"""OPENDML_PRINT_KERNELS: print the source of every generated kernel (CPU and CUDA), to read what runs."""

from __future__ import annotations

import os
import sys

ENV_PRINT_KERNELS = "OPENDML_PRINT_KERNELS"


def print_kernels_enabled() -> bool:
    """Whether OPENDML_PRINT_KERNELS asks for generated sources (``1``, ``true``, ``yes`` or ``on``)."""
    return os.environ.get(ENV_PRINT_KERNELS, "").strip().lower() in ("1", "true", "yes", "on")


def print_source(kind: str, title: str, source: str) -> None:
    """``source`` on stderr under a header naming its ``kind`` (``cpu``, ``cuda``) and ``title``."""
    rule = "-" * 72
    sys.stderr.write(f"{rule}\nopendml {kind} kernel: {title}\n{rule}\n{source.rstrip()}\n{rule}\n")
    sys.stderr.flush()
