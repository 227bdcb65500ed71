"""Compiling generated CUDA C with NVRTC: memoized per device and source, the binaries kept on disk.

Scalars are kernel arguments, so the source, and the compiled kernel, is shared by every operator that
differs only in field values.

NVRTC gets exactly ``codegen.OPTIONS``. CuPy's ``RawModule`` appends ``-ftz=true`` to every option list (its
own kernels flush float32 denormals), and NVRTC takes the last of two settings, which would flush the
denormals that the conversions between float32 and double, and the square roots, written in C read and
give; so the source goes to NVRTC through ``nvrtc_compiler.compile_using_nvrtc``, which adds only the
architecture, and the binary is loaded as a module. Binaries are kept in the kernel cache directory
(``opendml/kernels/cache.py``) under a hash of the source, the options, the NVRTC version and the device's
compute capability, so a later process loads them without compiling.
"""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path
from typing import Any

import cupy
from cupy.cuda import compiler as nvrtc_compiler
from cupy.cuda import function, nvrtc

from ...kernels import cache, notices
from ...kernels.debug import print_source
from ...kernels.spec import KernelSpec
from .codegen import OPTIONS

_kernels: dict[tuple[int, str], Any] = {}


def kernel(source: str, title: str) -> Any:
    """The compiled ``opendml_kernel`` of ``source`` on the current device; ``title`` heads the source when
    ``OPENDML_PRINT_KERNELS`` prints it."""
    device = cupy.cuda.Device()
    key = (device.id, source)
    found = _kernels.get(key)
    if found is None:
        print_source("CUDA C", title, source)
        module = function.Module()
        module.load(_binary(source, device.compute_capability, title))
        found = _kernels[key] = module.get_function("opendml_kernel")
    return found


def _binary(source: str, capability: str, title: str) -> bytes:
    """The cubin (or PTX) of ``source`` for devices of ``capability``: from the disk cache, else NVRTC's."""
    path = _cached_path(source, capability)
    try:
        return path.read_bytes()
    except OSError:
        pass
    with notices.slow(title):  # NVRTC: a notice where it takes long
        binary, _ = nvrtc_compiler.compile_using_nvrtc(source, options=OPTIONS, cache_in_memory=True)
    binary = binary if isinstance(binary, bytes) else binary.encode()
    with contextlib.suppress(OSError):  # caching is only a speed-up
        cache.write_bytes(path, binary)
    return binary


def _cached_path(source: str, capability: str) -> Path:
    """Where the binary of ``source`` is kept: named by everything that decides its bytes."""
    version = ".".join(map(str, nvrtc.getVersion()))
    text = "\0".join([source, *OPTIONS, version, capability, cupy.__version__])
    return cache.directory() / "cuda" / f"{hashlib.sha256(text.encode()).hexdigest()[:32]}.bin"


def compiled_count() -> int:
    """Kernels compiled in this process (on every device): what reusing a kernel leaves unchanged."""
    return len(_kernels)


def title(spec: KernelSpec, template: str) -> str:
    """How a printed kernel source is headed: the operator, its operand and output types, the template."""
    inputs = ", ".join("absent" if t is None else t.name for t in spec.inputs)
    return f"{spec.operator} ({inputs}) -> {spec.output.name}, {template}"
