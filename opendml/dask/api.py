"""What the functional API routes a call with a Dask argument to (``opendml.front_ends``: imported on the first
such call), and an ``opendml.compile`` function called with Dask arrays (``compiled``)."""

from __future__ import annotations

from .blocked import dequantize, quantize
from .compiled import call as compiled
from .elementwise import cast, declared, dequantize_linear, quantize_linear
from .reductions import arg_reduction, unravel_index
from .softmax import normalized
from .sums import reduce
from .top_k import top_k

__all__ = ["arg_reduction", "cast", "compiled", "declared", "dequantize", "dequantize_linear", "normalized",
           "quantize", "quantize_linear", "reduce", "top_k", "unravel_index"]
