"""The operators, listed explicitly (a completeness test checks the list against the descriptions)."""

from __future__ import annotations

from .abs import ABS
from .acos import ACOS
from .acosh import ACOSH
from .activation_identity import ACTIVATION_IDENTITY
from .activation_tanh import ACTIVATION_TANH
from .add import ADD
from .add1 import ADD1
from .argmax import ARGMAX
from .argmin import ARGMIN
from .asin import ASIN
from .asinh import ASINH
from .atan import ATAN
from .atan_yx import ATAN_YX
from .atanh import ATANH
from .bit_and import BIT_AND
from .bit_count import BIT_COUNT
from .bit_not import BIT_NOT
from .bit_or import BIT_OR
from .bit_shift_left import BIT_SHIFT_LEFT
from .bit_shift_right import BIT_SHIFT_RIGHT
from .bit_xor import BIT_XOR
from .cast import CAST
from .ceil import CEIL
from .celu import CELU
from .clip import CLIP, CLIP1
from .clip_grad import CLIP_GRAD, CLIP_GRAD1
from .constant_pow import CONSTANT_POW
from .cos import COS
from .cosh import COSH
from .definition import OperatorDefinition
from .dequantize import DEQUANTIZE
from .dequantize_linear import DEQUANTIZE_LINEAR
from .difference_square import DIFFERENCE_SQUARE
from .divide import DIVIDE
from .elementwise_tanh import TANH
from .elu import ELU
from .erf import ERF
from .exp import EXP
from .floor import FLOOR
from .gelu import GELU
from .hard_sigmoid import HARD_SIGMOID
from .hard_swish import HARD_SWISH
from .identity import IDENTITY
from .is_infinity import IS_INFINITY
from .is_nan import IS_NAN
from .leaky_relu import LEAKY_RELU
from .linear import LINEAR
from .log import LOG
from .logical_and import LOGICAL_AND
from .logical_equals import LOGICAL_EQUALS
from .logical_greater_than import LOGICAL_GREATER_THAN
from .logical_greater_than_or_equal import LOGICAL_GREATER_THAN_OR_EQUAL
from .logical_less_than import LOGICAL_LESS_THAN
from .logical_less_than_or_equal import LOGICAL_LESS_THAN_OR_EQUAL
from .logical_not import LOGICAL_NOT
from .logical_or import LOGICAL_OR
from .logical_xor import LOGICAL_XOR
from .maximum import MAX
from .mean import MEAN
from .minimum import MIN
from .modulus_floor import MODULUS_FLOOR
from .modulus_truncate import MODULUS_TRUNCATE
from .multiply import MULTIPLY
from .negate import NEGATE
from .parameterized_relu import PARAMETERIZED_RELU
from .parametric_softplus import PARAMETRIC_SOFTPLUS
from .pow import POW
from .quantize import QUANTIZE
from .quantize_linear import QUANTIZE_LINEAR
from .quantized_linear_add import QUANTIZED_LINEAR_ADD
from .recip import RECIP
from .reduce import REDUCE
from .relu import RELU
from .relu_grad import RELU_GRAD
from .round import ROUND
from .scaled_elu import SCALED_ELU
from .scaled_tanh import SCALED_TANH
from .shrink import SHRINK
from .sigmoid import SIGMOID
from .sign import SIGN
from .sin import SIN
from .sinh import SINH
from .softmax import HARDMAX, HARDMAX1, LOG_SOFTMAX, LOG_SOFTMAX1, SOFTMAX, SOFTMAX1
from .softplus import SOFTPLUS
from .softsign import SOFTSIGN
from .sqrt import SQRT
from .subtract import SUBTRACT
from .swish import SWISH
from .tan import TAN
from .threshold import THRESHOLD
from .thresholded_relu import THRESHOLDED_RELU
from .top_k import TOP_K, TOP_K1
from .where import IF

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
    BIT_AND,
    BIT_OR,
    BIT_XOR,
    BIT_SHIFT_LEFT,
    BIT_SHIFT_RIGHT,
    CAST,
    QUANTIZE,
    DEQUANTIZE,
    REDUCE,
    LOGICAL_EQUALS,
    LOGICAL_GREATER_THAN,
    LOGICAL_GREATER_THAN_OR_EQUAL,
    LOGICAL_LESS_THAN,
    LOGICAL_LESS_THAN_OR_EQUAL,
    LOGICAL_AND,
    LOGICAL_OR,
    LOGICAL_XOR,
    IF,
    CLIP_GRAD,
    CLIP_GRAD1,
    PARAMETERIZED_RELU,
    RELU_GRAD,
    QUANTIZED_LINEAR_ADD,
    TOP_K,
    TOP_K1,
    EXP,
    LOG,
    SIN,
    COS,
    TAN,
    ASIN,
    ACOS,
    ATAN,
    SINH,
    COSH,
    TANH,
    ASINH,
    ACOSH,
    ATANH,
    ERF,
    SIGMOID,
    ACTIVATION_TANH,
    SOFTPLUS,
    PARAMETRIC_SOFTPLUS,
    SOFTSIGN,
    ELU,
    CELU,
    SCALED_ELU,
    SCALED_TANH,
    GELU,
    SWISH,
    SOFTMAX,
    SOFTMAX1,
    LOG_SOFTMAX,
    LOG_SOFTMAX1,
    HARDMAX,
    HARDMAX1,
    POW,
    CONSTANT_POW,
    ATAN_YX,
)

BY_DESC_TYPE: dict[type, OperatorDefinition] = {op.desc_type: op for op in OPERATORS}
BY_NAME: dict[str, OperatorDefinition] = {op.schema.name: op for op in OPERATORS}
# The operators whose front ends are derived from their declaration (``OperatorDefinition.api``).
DECLARED: tuple[OperatorDefinition, ...] = tuple(op for op in OPERATORS if op.api is not None)
