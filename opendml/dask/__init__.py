"""The functional API on Dask arrays: lazily, one opendml call per block, never computing an input.

``opendml.clip(dask_array, ...)`` and the other functions route here when an argument is a Dask array
(``detect``); nothing here is imported, and Dask is never imported, before such a call. ``elementwise``
builds the graphs of the declared operators' functions (clip, threshold, relu, ...), dequantize_linear
and quantize_linear (one call per block, operands
broadcast NumPy-style); ``align`` gives the arrays read by blocks one chunking, theirs and the compiled
functions' (``compiled``); ``reductions`` builds the graphs of argmin and argmax over any axes across chunks
and of unravel_index, checked on the client with the whole array's shape; ``blocks`` holds what runs on the
workers, one block at a time; ``merge`` merges the partial results of the reductions; ``checks`` holds the
checks made on the client before any graph is built; ``api`` is what the functional API routes to.
"""

from __future__ import annotations

from .detect import any_dask as any_dask
from .detect import is_dask_array as is_dask_array
