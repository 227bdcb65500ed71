"""Compiling generated CUDA C with CuPy: memoized per device and source, kept in CuPy's disk cache."""

from __future__ import annotations

import os
import sys
from typing import Any

import cupy

# Set OPENDML_CUDA_DEBUG=1 to print every generated kernel's source when it is first compiled.
DEBUG = os.environ.get("OPENDML_CUDA_DEBUG", "") not in ("", "0")

# IEEE float32 as the CPU reference computes it: no contraction of multiply-adds that were not written as
# intrinsics, and denormals kept (flush-to-zero would also change comparisons against them).
OPTIONS = ("--std=c++14", "--fmad=false", "--ftz=false", "--prec-div=true", "--prec-sqrt=true")

_kernels: dict[tuple[int, str], Any] = {}


def kernel(source: str) -> Any:
    """The compiled ``opendml_kernel`` of ``source`` on the current device."""
    key = (cupy.cuda.Device().id, source)
    found = _kernels.get(key)
    if found is None:
        if DEBUG:
            print(f"// opendml: compiling\n{source}", file=sys.stderr)
        module = cupy.RawModule(code=source, options=OPTIONS)
        found = _kernels[key] = module.get_function("opendml_kernel")
    return found
