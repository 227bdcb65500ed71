"""The CPU backend's kernels, chosen once per process.

``fast`` (Numba, the ``opendml[fast]`` extra) runs each operator in one pass over memory on every core;
``blocked`` (NumPy only) evaluates it block by block on the same threads. OPENDML_CPU_KERNELS (``auto``,
``numba`` or ``numpy``) overrides the choice; both give bit-identical results. Each module compiles a
KernelSpec: ``elementwise(spec)`` for an element-wise one, ``reduction(spec)`` for a reduction (the engine
of its kind: ``argmin.spec`` says which ARGMIN specs the engines run); ``prepare_elementwise(spec, inputs,
output)`` and ``prepare_reduction(spec, shape, strides, threads)`` compile what the calls of those
descriptions (of that input layout) run; whatever they cannot lower raises ``unsupported(spec)``.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from ... import settings
from ...errors import KernelUnsupportedError, invalid, message
from ...kernels.spec import KernelSpec

ENV_KERNELS = settings.CPU_KERNELS.name

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


def choice() -> str:
    """``numba`` or ``numpy``: the kernel module in force for this process (``kernels()``), named without
    importing it."""
    if _chosen is not None:
        return "numba" if _chosen.__name__.endswith(".fast") else "numpy"
    chosen = settings.CPU_KERNELS.get()
    if chosen == "auto":
        chosen = "numba" if numba_available() else "numpy"
    return chosen


def kernels() -> ModuleType:
    """The kernel module in force for this process."""
    global _chosen
    if _chosen is None:
        _chosen = load(choice())
    return _chosen


def unsupported(spec: KernelSpec) -> KernelUnsupportedError:
    """What a KernelSpec that no CPU kernel lowers raises (never another operator's kernel)."""
    what = spec.accumulation or spec.selection or spec.normalization or spec.reduction or spec.element
    return KernelUnsupportedError(message(spec.operator, "kernel", "must be an element-wise expression or a "
                                           "reduction the CPU backend lowers", repr(what)))
