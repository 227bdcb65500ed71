"""The operators, listed explicitly (a completeness test checks the list against the descriptions)."""

from __future__ import annotations

from .argmax import ARGMAX
from .argmin import ARGMIN
from .clip import CLIP, CLIP1
from .definition import OperatorDefinition
from .dequantize_linear import DEQUANTIZE_LINEAR
from .quantize_linear import QUANTIZE_LINEAR
from .threshold import THRESHOLD

OPERATORS: tuple[OperatorDefinition, ...] = (CLIP, CLIP1, THRESHOLD, DEQUANTIZE_LINEAR, ARGMIN, ARGMAX,
                                             QUANTIZE_LINEAR)

BY_DESC_TYPE: dict[type, OperatorDefinition] = {op.desc_type: op for op in OPERATORS}
BY_NAME: dict[str, OperatorDefinition] = {op.schema.name: op for op in OPERATORS}
