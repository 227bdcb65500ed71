"""The decorator of the hand-written Numba kernels (the ARGMIN engines): ``jit`` compiles without fastmath,
releases the GIL and caches on disk.

Importing this module first puts Numba's disk cache of every kernel decorated after it in the kernel cache
directory (``opendml.kernels.cache``), whose name fingerprints the source of every kernel module: an edit
to any of them can never load stale compiled code. Element-wise kernels are generated from their
expressions (``codegen``); the FLOAT16 conversions, the row walk and the LLVM vector helpers live in
``halves``, ``rows`` and ``vectors``.
"""

from __future__ import annotations

from numba import njit

from ...kernels.cache import use_for_numba

use_for_numba()  # before the decorators: Numba picks each function's cache directory then

jit = njit(nogil=True, cache=True)
