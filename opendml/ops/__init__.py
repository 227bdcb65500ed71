"""The operators, listed explicitly (a completeness test checks the list against the descriptions)."""

from __future__ import annotations

from .abs import ABS
from .activation_identity import ACTIVATION_IDENTITY
from .add import ADD
from .add1 import ADD1
from .argmax import ARGMAX
from .argmin import ARGMIN
from .bit_count import BIT_COUNT
from .bit_not import BIT_NOT
from .ceil import CEIL
from .clip import CLIP, CLIP1
from .definition import OperatorDefinition
from .dequantize import DEQUANTIZE
from .dequantize_linear import DEQUANTIZE_LINEAR
from .difference_square import DIFFERENCE_SQUARE
from .divide import DIVIDE
from .floor import FLOOR
from .hard_sigmoid import HARD_SIGMOID
from .hard_swish import HARD_SWISH
from .identity import IDENTITY
from .is_infinity import IS_INFINITY
from .is_nan import IS_NAN
from .leaky_relu import LEAKY_RELU
from .linear import LINEAR
from .logical_not import LOGICAL_NOT
from .maximum import MAX
from .mean import MEAN
from .minimum import MIN
from .modulus_floor import MODULUS_FLOOR
from .modulus_truncate import MODULUS_TRUNCATE
from .multiply import MULTIPLY
from .negate import NEGATE
from .quantize import QUANTIZE
from .quantize_linear import QUANTIZE_LINEAR
from .recip import RECIP
from .reduce import REDUCE
from .relu import RELU
from .round import ROUND
from .shrink import SHRINK
from .sign import SIGN
from .sqrt import SQRT
from .subtract import SUBTRACT
from .threshold import THRESHOLD
from .thresholded_relu import THRESHOLDED_RELU
from .top_k import TOP_K, TOP_K1

OPERATORS: tuple[OperatorDefinition, ...] = (
    CLIP, CLIP1, THRESHOLD, DEQUANTIZE_LINEAR, ARGMIN, ARGMAX, QUANTIZE_LINEAR,
    IDENTITY,
    ABS,
    NEGATE,
    CEIL,
    FLOOR,
    ROUND,
    SIGN,
    IS_NAN,
    IS_INFINITY,
    RECIP,
    SQRT,
    LOGICAL_NOT,
    BIT_NOT,
    BIT_COUNT,
    ACTIVATION_IDENTITY,
    LINEAR,
    RELU,
    LEAKY_RELU,
    THRESHOLDED_RELU,
    SHRINK,
    HARD_SIGMOID,
    HARD_SWISH,
    ADD,
    SUBTRACT,
    MULTIPLY,
    DIVIDE,
    MIN,
    MAX,
    MEAN,
    DIFFERENCE_SQUARE,
    MODULUS_FLOOR,
    MODULUS_TRUNCATE,
    ADD1,
    QUANTIZE,
    DEQUANTIZE,
    REDUCE,
    TOP_K,
    TOP_K1,
)

BY_DESC_TYPE: dict[type, OperatorDefinition] = {op.desc_type: op for op in OPERATORS}
BY_NAME: dict[str, OperatorDefinition] = {op.schema.name: op for op in OPERATORS}
# The operators whose front ends are derived from their declaration (``OperatorDefinition.api``).
DECLARED: tuple[OperatorDefinition, ...] = tuple(op for op in OPERATORS if op.api is not None)
