"""The operator mappings, listed explicitly (a completeness test checks the list against the modules)."""

from __future__ import annotations

from .arg_reduction import ARGMAX, ARGMIN
from .base import Lowered, Mapping, Step
from .binary import BINARY_MAPPINGS
from .bitwise import BITWISE_MAPPINGS
from .cast import CAST
from .clip import CLIP
from .comparison import COMPARISON_MAPPINGS
from .constant import CONSTANT_MAPPING
from .dequantize_linear import DEQUANTIZE_LINEAR
from .quantize_linear import QUANTIZE_LINEAR
from .reduce import REDUCE_MAPPINGS
from .relu import RELU
from .softmax import SOFTMAX_MAPPINGS
from .top_k import TOP_K
from .unary import UNARY_MAPPINGS

MAPPINGS: tuple[Mapping, ...] = (ARGMAX, ARGMIN, CLIP, CONSTANT_MAPPING, DEQUANTIZE_LINEAR, QUANTIZE_LINEAR, RELU,
                                 *UNARY_MAPPINGS, *BINARY_MAPPINGS, *COMPARISON_MAPPINGS, *BITWISE_MAPPINGS, CAST,
                                 *REDUCE_MAPPINGS, TOP_K)
MAPPINGS += SOFTMAX_MAPPINGS

BY_OP_TYPE: dict[str, Mapping] = {m.op_type: m for m in MAPPINGS}

__all__ = ["BY_OP_TYPE", "MAPPINGS", "Lowered", "Mapping", "Step"]
