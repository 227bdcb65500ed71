"""What the functional API routes a call with a Dask argument to (imported on the first such call)."""

from __future__ import annotations

from .elementwise import clip as clip
from .elementwise import declared as declared
from .elementwise import dequantize_linear as dequantize_linear
from .elementwise import quantize_linear as quantize_linear
from .elementwise import threshold as threshold
from .reductions import arg_reduction as arg_reduction
from .reductions import unravel_index as unravel_index
