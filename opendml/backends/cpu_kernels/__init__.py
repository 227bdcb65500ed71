"""The CPU backend's kernels, chosen once per process.

``fast`` (Numba, the ``opendml[fast]`` extra) runs each operator in one pass over memory on every core;
``blocked`` (NumPy only) runs the reference block by block on the same threads. OPENDML_CPU_KERNELS
(``auto``, ``numba`` or ``numpy``) overrides the choice; both give bit-identical results.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from types import ModuleType

from ...errors import invalid

ENV_KERNELS = "OPENDML_CPU_KERNELS"
CHOICES = ("auto", "numba", "numpy")

_chosen: ModuleType | None = None


def numba_available() -> bool:
    return importlib.util.find_spec("numba") is not None


def load(name: str) -> ModuleType:
    """The kernel module ``numba`` (fast) or ``numpy`` (blocked), imported on first use."""
    if name == "numba":
        if not numba_available():
            raise invalid("Device", ENV_KERNELS, "may be 'numba' only where Numba is installed "
                          "(pip install 'opendml[fast]')", "numba")
        return importlib.import_module(f"{__name__}.fast")
    return importlib.import_module(f"{__name__}.blocked")


def kernels() -> ModuleType:
    """The kernel module in force for this process."""
    global _chosen
    if _chosen is None:
        choice = os.environ.get(ENV_KERNELS, "auto").strip().lower() or "auto"
        if choice not in CHOICES:
            raise invalid("Device", ENV_KERNELS, f"must be one of {', '.join(CHOICES)}", repr(choice))
        if choice == "auto":
            choice = "numba" if numba_available() else "numpy"
        _chosen = load(choice)
    return _chosen
