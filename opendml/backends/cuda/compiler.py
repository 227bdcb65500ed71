"""Compiling generated CUDA C with CuPy: memoized per device and source, kept in CuPy's disk cache.

Scalars are kernel arguments, so the source, and the compiled kernel, is shared by every operator that
differs only in field values.
"""

from __future__ import annotations

from typing import Any

import cupy

from ...kernels import notices
from ...kernels.debug import print_source
from ...kernels.spec import KernelSpec
from .codegen import OPTIONS

_kernels: dict[tuple[int, str], Any] = {}


def kernel(source: str, title: str) -> Any:
    """The compiled ``opendml_kernel`` of ``source`` on the current device; ``title`` heads the source when
    ``OPENDML_PRINT_KERNELS`` prints it."""
    key = (cupy.cuda.Device().id, source)
    found = _kernels.get(key)
    if found is None:
        print_source("CUDA C", title, source)
        with notices.slow(title):  # NVRTC, unless CuPy's disk cache has it (milliseconds: no notice)
            module = cupy.RawModule(code=source, options=OPTIONS)
            found = _kernels[key] = module.get_function("opendml_kernel")
    return found


def compiled_count() -> int:
    """Kernels compiled in this process (on every device): what reusing a kernel leaves unchanged."""
    return len(_kernels)


def title(spec: KernelSpec, template: str) -> str:
    """How a printed kernel source is headed: the operator, its operand and output types, the template."""
    inputs = ", ".join("absent" if t is None else t.name for t in spec.inputs)
    return f"{spec.operator} ({inputs}) -> {spec.output.name}, {template}"
