"""Functions on arrays: each builds a description of the arrays as they lie in memory and runs it.

``devices`` resolves the device a call runs on and takes its arguments as arrays of that device's kind;
``placement`` describes arrays as tensors in buffers (copying only layouts no description can state) and
runs one operator over them; ``results`` makes the arrays results go to (``out=`` included); ``operands``
checks the scale and zero point of DEQUANTIZE_LINEAR and QUANTIZE_LINEAR; ``fastpath`` runs a call laid
out like one already run straight through its kernel, and a call repeated on the same arrays through the
call prepared for them. The functions themselves: ``declared`` (every declared operator's: clip,
threshold, relu, ...), ``quantization`` (dequantize_linear, quantize_linear) and ``reductions`` (argmin, argmax,
unravel_index).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# The helpers re-exported below (``X as X``) are used by opendml.tracing, which traces these functions
# with the same rules.
from ..buffer import BufferBinding as BufferBinding
from .blocked import dequantize, quantize
from .conversion import cast
from .declared import FUNCTIONS as FUNCTIONS
from .devices import _as_array as _as_array
from .devices import _on_gpu as _on_gpu
from .devices import _resolve_device as _resolve_device
from .devices import _to_host as _to_host
from .devices import default_device
from .fastpath import _direct as _direct
from .operands import _broadcast as _broadcast
from .operands import _check_output_type as _check_output_type
from .operands import _quantize_scale as _quantize_scale
from .operands import _quantize_zero_point as _quantize_zero_point
from .operands import _scale as _scale
from .operands import _zero_point as _zero_point
from .placement import _leading_ones as _leading_ones
from .placement import _padded_empty as _padded_empty
from .placement import _place_input as _place_input
from .placement import _plain as _plain
from .placement import _view_as as _view_as
from .quantization import dequantize_linear, quantize_linear, quantized_linear_add
from .reduce import reduce
from .reductions import ARG_REDUCTIONS as ARG_REDUCTIONS
from .reductions import _normalize_axes as _normalize_axes
from .reductions import argmax, argmin, unravel_index
from .softmax import hardmax, log_softmax, softmax
from .top_k import top_k

__all__ = ["argmax", "argmin", "cast", "clip", "default_device", "dequantize", "dequantize_linear", "quantize",
           "quantize_linear", "quantized_linear_add", "reduce", "threshold", "top_k", "unravel_index"]
__all__ += ["hardmax", "log_softmax", "softmax"]

# The declared operators' functions (``declared``), each under its Python name: clip, threshold, relu, ...
# Made at import, so type checkers read their signatures from the stub generated from them (``declared_stub``).
if TYPE_CHECKING:
    from .declared_api import *  # noqa: F403
else:
    clip = FUNCTIONS["ELEMENT_WISE_CLIP"]
    threshold = FUNCTIONS["ELEMENT_WISE_THRESHOLD"]
    globals().update({f.__name__: f for f in FUNCTIONS.values()})
__all__ += sorted(f.__name__ for f in FUNCTIONS.values() if f.__name__ not in __all__)
