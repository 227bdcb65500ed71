"""An independent, element-by-element model of SPEC.md sections 4-8, for the property-based tests.

Written from the specification alone, in plain Python: one element at a time, Python floats with
explicit float32/FLOAT16 rounding through NumPy scalars, and exact Python ints. It shares no code with
opendml, so that opendml and this model can only agree by both following the specification.

Values are Python scalars: ``float`` for FLOAT32/FLOAT16 (always exactly representable in the type),
``int`` for the integer types.

>>> clamp_element(-0.0, "FLOAT32", None, 0.0, 1.0)  # a tie keeps the element
-0.0
>>> argmin_of([1, 2, 3, 2, 1], "DECREASING")
4
>>> arg_of([1.0, math.nan, 3.0, 3.0], "INCREASING", largest=True), arg_of([1.0, math.nan], "DECREASING", propagate=True)
(2, 1)
>>> [quantize_element(v, 1.0, 0, "INT8") for v in (0.5, 1.5, 2.5, -0.5, -1.5, math.nan, -math.inf)]
[0, 2, 2, 0, -2, 0, -128]
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np


@dataclass(frozen=True)
class ElementType:
    """A DirectML data type as the model sees it: how its bytes read and which values it holds."""

    name: str
    numpy: str  # little-endian NumPy type code, used only to read and write bytes and to round
    size: int
    integer_range: tuple[int, int] | None  # None for the float types

    @property
    def is_float(self) -> bool:
        return self.integer_range is None


TYPES: dict[str, ElementType] = {t.name: t for t in (
    ElementType("FLOAT64", "<f8", 8, None),  # CAST, ELEMENT_WISE_IDENTITY and ELEMENT_WISE_IF only
    ElementType("FLOAT32", "<f4", 4, None),
    ElementType("FLOAT16", "<f2", 2, None),
    ElementType("UINT32", "<u4", 4, (0, 2**32 - 1)),
    ElementType("UINT16", "<u2", 2, (0, 2**16 - 1)),
    ElementType("UINT8", "<u1", 1, (0, 2**8 - 1)),
    ElementType("INT32", "<i4", 4, (-(2**31), 2**31 - 1)),
    ElementType("INT16", "<i2", 2, (-(2**15), 2**15 - 1)),
    ElementType("INT8", "<i1", 1, (-(2**7), 2**7 - 1)),
    ElementType("UINT64", "<u8", 8, (0, 2**64 - 1)),
    ElementType("INT64", "<i8", 8, (-(2**63), 2**63 - 1)),
)}

FLOATS = ("FLOAT32", "FLOAT16")
INTEGERS_32 = ("INT32", "INT16", "INT8", "UINT32", "UINT16", "UINT8")
INTEGERS_64 = ("INT64", "UINT64")

# What each operator accepts at feature level 6_4 (SPEC 4-7, the newest row of each table).
CLIP_TYPES = FLOATS + INTEGERS_32 + INTEGERS_64
THRESHOLD_TYPES = FLOATS + INTEGERS_32
DEQUANTIZE_INPUT_TYPES = INTEGERS_32
DEQUANTIZE_SCALE_TYPES = FLOATS
ARGMIN_INPUT_TYPES = FLOATS + INTEGERS_32 + INTEGERS_64
ARGMIN_OUTPUT_TYPES = ("INT64", "INT32", "UINT64", "UINT32")


# --- rounding -------------------------------------------------------------------------------------------

def round_f32(x: float) -> float:
    """``x`` rounded to float32, nearest even; overflow gives an infinity."""
    with np.errstate(over="ignore"):
        return float(np.float32(x))


def round_f16(x: float) -> float:
    """``x`` rounded to FLOAT16, nearest even; overflow gives an infinity."""
    with np.errstate(over="ignore"):
        return float(np.float16(x))


def round_to(x: float, type_name: str) -> float:
    if type_name == "FLOAT64":
        return x  # a Python float is a double
    return round_f16(x) if type_name == "FLOAT16" else round_f32(x)


# (significand bits, exponent of the smallest normal, largest finite value) of each float type below FLOAT64
_FORMATS = {"FLOAT32": (24, -126, (2 - 2.0**-23) * 2.0**127), "FLOAT16": (11, -14, 65504.0)}


def round_double(x: float, type_name: str) -> float:
    """A double rounded once to FLOAT32 or FLOAT16, nearest even, in exact integer arithmetic (never through
    another float type: a double rounded to float32 first and then to FLOAT16 can land on a tie the double was
    not on); past the largest finite value by half an ulp or more, an infinity; NaN and infinities kept."""
    if not math.isfinite(x) or x == 0:
        return x
    bits, smallest_normal, largest = _FORMATS[type_name]
    fraction, exponent = math.frexp(abs(x))  # |x| = fraction * 2**exponent, 0.5 <= fraction < 1
    whole, scale = int(fraction * 2**53), exponent - 53  # |x| = whole * 2**scale exactly
    ulp = max(exponent - bits, smallest_normal - bits + 1)  # the spacing of the type around |x| (subnormals too)
    shift = ulp - scale
    if shift > 0:
        kept, dropped = divmod(whole, 1 << shift)
        half = 1 << (shift - 1)
        if dropped > half or (dropped == half and kept % 2 == 1):
            kept += 1
        whole, scale = kept, ulp
    if whole.bit_length() + scale > 1024:
        return math.copysign(math.inf, x)  # far beyond either type's range (and a double's once rounded up)
    magnitude = math.ldexp(whole, scale)  # exact: at most bits + 1 significant bits
    if magnitude > largest:
        magnitude = math.inf
    return math.copysign(magnitude, x)


# --- bytes ----------------------------------------------------------------------------------------------

def packed_strides(sizes: Sequence[int]) -> tuple[int, ...]:
    strides, step = [], 1
    for n in reversed(sizes):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def min_tensor_bytes(type_name: str, sizes: Sequence[int], strides: Sequence[int] | None) -> int:
    """DMLCalcBufferTensorSize (SPEC 2): the bytes up to the end of the furthest element, rounded up to 4.

    The furthest element is the last index vector's (every stride is non-negative); a packed tensor is
    laid out with the packed strides, so its last element ends after product(Sizes) elements.

    >>> min_tensor_bytes("FLOAT16", [5], None), min_tensor_bytes("UINT8", [3], None)  # SPEC 2's examples
    (12, 4)
    >>> min_tensor_bytes("FLOAT32", [2, 3], [0, 1])
    12
    """
    last = tuple(n - 1 for n in sizes)
    end = byte_offset(last, strides if strides is not None else packed_strides(sizes), type_name, 0) \
        + TYPES[type_name].size
    while end % 4:
        end += 1
    return end


def indices(sizes: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Every index vector, in row-major order."""
    return itertools.product(*(range(n) for n in sizes))


def byte_offset(index: Sequence[int], strides: Sequence[int], type_name: str, base: int) -> int:
    return base + sum(i * s for i, s in zip(index, strides)) * TYPES[type_name].size


def read(data: bytes | bytearray, position: int, type_name: str) -> int | float:
    """The element of ``type_name`` whose first byte is ``data[position]``, as a Python scalar."""
    t = TYPES[type_name]
    value = np.frombuffer(bytes(data[position:position + t.size]), dtype=t.numpy)[0]
    return float(value) if t.is_float else int(value)


def encode(value: int | float, type_name: str) -> bytes:
    """The bytes of a value that the type holds exactly."""
    t = TYPES[type_name]
    if t.is_float:
        assert math.isnan(value) or round_to(value, type_name) == value, value
    return np.array([value], dtype=t.numpy).tobytes()


def same_value(got: int | float, expected: int | float) -> bool:
    """Bit-identical, except that any NaN equals any NaN (SPEC 8.5 lets payloads differ)."""
    if isinstance(expected, float):
        if math.isnan(expected):
            return math.isnan(got)
        return got == expected and math.copysign(1.0, got) == math.copysign(1.0, expected)
    return got == expected


# --- CLIP, CLIP1, THRESHOLD (SPEC 4, 5, 8.1-8.5) -------------------------------------------------------

Bound = int | float | None  # None: this side bounds nothing


def float_field(value: int | float) -> float:
    """A DirectML FLOAT field (CLIP's Min/Max, THRESHOLD's Min, ScaleBias): a float32."""
    return round_f32(float(value))


def float_field_bound(value: int | float, type_name: str) -> Bound:
    """CLIP's or THRESHOLD's FLOAT bound on a tensor of ``type_name`` (SPEC 4 and 8.3)."""
    v = float_field(value)
    t = TYPES[type_name]
    if t.is_float:
        return None if math.isnan(v) else round_to(v, type_name)  # float32 first, then the tensor's type
    if math.isnan(v):
        raise ValueError("a NaN bound on an integer tensor is rejected at creation")
    low, high = t.integer_range  # type: ignore[misc]
    if math.isinf(v):
        return high if v > 0 else low
    return min(max(math.trunc(v), low), high)


def typed_bound(value: int | float, type_name: str) -> Bound:
    """CLIP1's bound: a value of MinMaxDataType, used exactly; a NaN float bound bounds nothing."""
    if TYPES[type_name].is_float:
        return None if math.isnan(value) else float(value)
    return int(value)


def scale_bias_element(x: float, scale_bias: tuple[float, float] | None) -> float:
    """``g(x) = x * Scale + Bias`` in float32: the product rounded, then the sum rounded (never fused).

    A product or sum of two float32 values computed in double and rounded once to float32 is the
    correctly rounded float32 result (a double holds the product exactly, and has enough precision
    for the sum's double rounding to be harmless).
    """
    if scale_bias is None:
        return x
    scale, bias = (float_field(v) for v in scale_bias)
    return round_f32(round_f32(x * scale) + bias)


def clamp_element(x: int | float, type_name: str, scale_bias: tuple[float, float] | None,
                  low: Bound, high: Bound) -> int | float:
    """``max(Min, min(g(x), Max))``; a bound replaces the element only when strictly beyond it.

    So a NaN element stays NaN, a NaN bound (None) replaces nothing, -0.0 against +0.0 keeps the
    element, and Min > Max gives Min. FLOAT16 is computed in float32 and rounded once at the end.
    """
    v = scale_bias_element(x, scale_bias) if TYPES[type_name].is_float else x
    if high is not None and v > high:
        v = high
    if low is not None and v < low:
        v = low
    return round_to(v, type_name) if TYPES[type_name].is_float else v


# --- DEQUANTIZE_LINEAR (SPEC 6, 8.6) ---------------------------------------------------------------------

def dequantize_element(x: int, scale: float, zero_point: int | None, output_type: str) -> float:
    """``(x - zero_point) * scale``: exact difference, to float32, times the scale in float32, then FLOAT16."""
    difference = x - (0 if zero_point is None else zero_point)  # exact Python int
    product = round_f32(round_f32(float(difference)) * scale)  # |difference| < 2**33: exact as a double
    return round_to(product, output_type)


# --- QUANTIZE_LINEAR (SPEC 9) -----------------------------------------------------------------------------

QUANTIZE_INPUT_TYPES = ("FLOAT32", "FLOAT16", "INT32")
QUANTIZE_OUTPUT_TYPES = ("INT8", "UINT8")


def quantize_scale_type(input_type: str) -> str:
    """SPEC 9: the scale is FLOAT32 for an INT32 input, else the input's own type."""
    return "FLOAT32" if input_type == "INT32" else input_type


def float32_quotient(x: float, scale: float) -> float:
    """``x / scale`` of two float32 values, rounded once to float32 (IEEE).

    The exact quotient is a Fraction, rounded to a double by ``float`` and then to float32 by ``round_f32``:
    for a quotient of two float32 values that double rounding is harmless (a double carries more than
    2 * 24 + 2 bits), so this is the correctly rounded float32 quotient. The cases without a finite, non-zero
    divisor and finite dividend follow IEEE 754: NaN in, NaN out; inf / inf and 0 / 0 are NaN; x / 0 and
    inf / y are infinities signed by both signs; x / inf and 0 / y are zeros signed so too.
    """
    if math.isnan(x) or math.isnan(scale) or (math.isinf(x) and math.isinf(scale)) or (x == 0 and scale == 0):
        return math.nan
    sign = math.copysign(1.0, x) * math.copysign(1.0, scale)
    if math.isinf(x) or scale == 0:
        return sign * math.inf
    if math.isinf(scale) or x == 0:
        return sign * 0.0
    return round_f32(float(Fraction(x) / Fraction(scale)))


def quantize_element(x: int | float, scale: float, zero_point: int | None, output_type: str) -> int:
    """``clamp(round(x / scale) + zero_point, Min, Max)`` as SPEC 9 decides it: ``x`` to float32 (an INT32
    to nearest even; a FLOAT16 exactly), one float32 division, rounded half to even to an integer (Python's
    ``round``), the zero point added exactly, saturated to the output type; +-inf saturate, NaN gives the
    zero point; an absent zero point is 0."""
    value = round_f32(float(x)) if isinstance(x, int) else x  # |x| < 2**31: exact as a double, then rounded
    quotient = float32_quotient(value, scale)
    zero = 0 if zero_point is None else zero_point
    low, high = TYPES[output_type].integer_range  # type: ignore[misc]
    if math.isnan(quotient):
        return zero
    if math.isinf(quotient):
        return high if quotient > 0 else low
    return min(max(round(quotient) + zero, low), high)


# --- ARGMIN and ARGMAX (SPEC 7, 8.5, 9) --------------------------------------------------------------------

def _is_nan(v: int | float) -> bool:
    return isinstance(v, float) and math.isnan(v)


def arg_of(values: Sequence[int | float], direction: str, largest: bool = False, propagate: bool = False) -> int:
    """Index of the smallest (largest) value; NaN ignored, or with ``propagate`` a NaN beats every number;
    ties (-0.0 == +0.0 included, and NaN with NaN) by direction: the first index or the last."""
    order = list(range(len(values)))
    if direction == "DECREASING":
        order.reverse()  # the first winner met in this order is the answer
    if propagate:
        for k in order:
            if _is_nan(values[k]):
                return k
    best: int | None = None
    for k in order:
        v = values[k]
        if _is_nan(v):
            continue
        if best is None or (v > values[best] if largest else v < values[best]):
            best = k
    return order[0] if best is None else best  # every value NaN: the first index in the direction's order


def argmin_of(values: Sequence[int | float], direction: str) -> int:
    """Index of the smallest value, NaN ignored; ties (-0.0 == +0.0 included) by direction."""
    return arg_of(values, direction)


def argmin_tensor(read_input: dict[tuple[int, ...], int | float], sizes: Sequence[int], axes: Sequence[int],
                  direction: str, largest: bool = False, propagate: bool = False) -> dict[tuple[int, ...], int]:
    """ARGMIN (ARGMAX with ``largest``) over ``axes`` of the input given by index vector; output keyed by its
    own index vectors; ``propagate``: NanPolicy PROPAGATE.

    The index counts row-major over the reduced axes only, in increasing axis order.
    """
    axes = sorted(axes)
    out_sizes = [1 if k in axes else n for k, n in enumerate(sizes)]
    result = {}
    for out_index in indices(out_sizes):
        row = []
        for reduced in indices([sizes[a] for a in axes]):
            full = list(out_index)
            for axis, i in zip(axes, reduced):
                full[axis] = i
            row.append(read_input[tuple(full)])
        result[out_index] = arg_of(row, direction, largest, propagate)
    return result


# --- the unary family: ELEMENT_WISE_IDENTITY and the exact ACTIVATION_* (SPEC 11; docs/semantics.md) --------
# Each takes the element (a float32 or FLOAT16 value as a Python float, or an int) and the description's FLOAT
# fields, and computes in float32 (each product and sum rounded once), rounding once to the type at the end.

def _f32_product(a: float, b: float) -> float:
    return round_f32(a * b)  # exact in double, then rounded once


def _finish(v: int | float, type_name: str) -> int | float:
    return round_to(v, type_name) if TYPES[type_name].is_float else v


def identity_element(x: int | float, type_name: str, scale_bias: tuple[float, float] | None) -> int | float:
    return _finish(scale_bias_element(x, scale_bias) if TYPES[type_name].is_float else x, type_name)


def relu_element(x: int | float, type_name: str) -> int | float:
    """max(0, x): NaN stays NaN, -0.0 stays -0.0 (a tie keeps the element); integers exactly."""
    zero = 0.0 if TYPES[type_name].is_float else 0
    return _finish(zero if x < 0 else x, type_name)


def leaky_relu_element(x: float, type_name: str, alpha: float) -> float:
    return _finish(_f32_product(x, float_field(alpha)) if x < 0 else x, type_name)


def thresholded_relu_element(x: float, type_name: str, alpha: float) -> float:
    """x where x > Alpha, else 0.0 (a NaN element too: the comparison is false)."""
    return _finish(x if x > float_field(alpha) else 0.0, type_name)


def linear_element(x: float, type_name: str, alpha: float, beta: float) -> float:
    return _finish(round_f32(_f32_product(x, float_field(alpha)) + float_field(beta)), type_name)


def _hard_sigmoid_f32(x: float, alpha: float, beta: float) -> float:
    t = round_f32(_f32_product(x, float_field(alpha)) + float_field(beta))
    if t > 1.0:
        t = 1.0
    if t < 0.0:
        t = 0.0
    return t  # NaN stays NaN: neither comparison holds


def hard_sigmoid_element(x: float, type_name: str, alpha: float, beta: float) -> float:
    return _finish(_hard_sigmoid_f32(x, alpha, beta), type_name)


def hard_swish_element(x: float, type_name: str, alpha: float, beta: float) -> float:
    return _finish(_f32_product(x, _hard_sigmoid_f32(x, alpha, beta)), type_name)


def shrink_element(x: int | float, type_name: str, bias: float, threshold: float) -> int | float:
    """The page's formula in its order: x - Bias above Threshold, x + Bias below -Threshold, else 0 (NaN too).
    Floats: in float32, each sum rounded once. Integers: compared with Threshold exactly, Bias truncated toward zero
    (an infinity: the type's limit), the sum or difference wrapped (SPEC 11.3)."""
    t, b = float_field(threshold), float_field(bias)
    if TYPES[type_name].is_float:
        return _finish(round_f32(x - b) if x > t else round_f32(x + b) if x < -t else 0.0, type_name)
    low, high = TYPES[type_name].integer_range  # type: ignore[misc]
    whole = math.trunc(b) if math.isfinite(b) else high if b > 0 else low
    return _wrapped(x - whole if x > t else x + whole if x < -t else 0, type_name)  # type: ignore[operator]


def _wrapped(v: int, type_name: str) -> int:
    """An integer result wrapped into the type's range (two's complement, SPEC 11.3)."""
    low, high = TYPES[type_name].integer_range  # type: ignore[misc]
    return (v - low) % (high - low + 1) + low


def abs_element(x: int | float, type_name: str, scale_bias: tuple[float, float] | None) -> int | float:
    """|g(x)|: +0.0 for either zero, NaN stays NaN; |INT_MIN| wraps to INT_MIN."""
    if not TYPES[type_name].is_float:
        return _wrapped(abs(int(x)), type_name)
    return _finish(math.fabs(scale_bias_element(x, scale_bias)), type_name)


def negate_element(x: int | float, type_name: str) -> int | float:
    """-x: floats' sign flipped (-0.0 of 0.0); -INT_MIN wraps to INT_MIN."""
    return -x if TYPES[type_name].is_float else _wrapped(-int(x), type_name)


def floor_element(x: float, type_name: str, scale_bias: tuple[float, float] | None) -> float:
    v = scale_bias_element(x, scale_bias)
    return _finish(v if not math.isfinite(v) or v == 0 else float(math.floor(v)), type_name)


def ceil_element(x: float, type_name: str, scale_bias: tuple[float, float] | None) -> float:
    """ceil, -0.0 for values in (-1, 0) and for -0.0 (IEEE's ceil)."""
    v = scale_bias_element(x, scale_bias)
    if not math.isfinite(v) or v == 0:
        return _finish(v, type_name)
    c = float(math.ceil(v))
    return _finish(-0.0 if c == 0 and v < 0 else c, type_name)


def recip_element(x: float, type_name: str, scale_bias: tuple[float, float] | None) -> float:
    return _finish(float32_quotient(1.0, scale_bias_element(x, scale_bias)), type_name)


def sign_element(x: int | float, type_name: str) -> int | float:
    """The page's formula as written: -1 below 0, 1 above, 0 otherwise (-0.0 and NaN too)."""
    result = -1 if x < 0 else 1 if x > 0 else 0
    return float(result) if TYPES[type_name].is_float else result


def round_element(x: float, type_name: str, mode: str) -> float:
    """ROUND (DirectML's page): HALVES_TO_NEAREST_EVEN, TOWARD_ZERO (truncation) or TOWARD_INFINITY (ties away
    from zero); the sign kept on a zero result, NaN and the infinities as they are."""
    if not math.isfinite(x):
        return x
    if mode == "HALVES_TO_NEAREST_EVEN":
        whole = float(round(x))  # Python rounds ties to even
    elif mode == "TOWARD_ZERO":
        whole = float(math.trunc(x))
    else:
        whole = float(math.floor(abs(x) + 0.5))  # |x| + 0.5 is exact in a double for a float32 x
    return _finish(math.copysign(abs(whole), x), type_name)


def is_nan_element(x: float) -> int:
    return int(math.isnan(x))


def is_infinity_element(x: float, mode: str) -> int:
    wanted = {"EITHER": (math.inf, -math.inf), "POSITIVE": (math.inf,), "NEGATIVE": (-math.inf,)}[mode]
    return int(x in wanted)


def sqrt_element(x: float, type_name: str, scale_bias: tuple[float, float] | None) -> float:
    """The square root rounded once (a double's root of a float32 rounds correctly to float32): -0.0 stays,
    NaN below zero."""
    v = scale_bias_element(x, scale_bias)
    if math.isnan(v) or v < 0:
        return math.nan
    return _finish(v if v == 0 or math.isinf(v) else math.sqrt(v), type_name)


def rounded_element(name: str) -> Callable[[float, str, tuple[float, float] | None], float]:
    """A correctly rounded function's element (EXP, LOG, ... ERF): the ScaleBias'd value's exact function value
    rounded once to the type (tests/rounding_oracle.py, from mpmath)."""
    from tests.rounding_oracle import correctly_rounded

    def element(x: float, type_name: str, scale_bias: tuple[float, float] | None) -> float:
        return correctly_rounded(name, scale_bias_element(x, scale_bias), type_name)

    return element


def rounded_pair_element(name: str) -> Callable[[float, float, str], float]:
    """POW or ATAN_YX of two float32 values: the exact value rounded once to the type (tests/rounding_oracle.py)."""
    from tests.rounding_oracle import correctly_rounded_pair

    def element(a: float, b: float, type_name: str) -> float:
        return correctly_rounded_pair(name, a, b, type_name)

    return element


def rounded_activation(name: str) -> Callable[[float, str], float]:
    """An activation correctly rounded as a whole (SIGMOID, TANH, SOFTSIGN, GELU): the exact value rounded once."""
    from tests.rounding_oracle import correctly_rounded

    def element(x: float, type_name: str) -> float:
        return correctly_rounded(name, x, type_name)

    return element


def _cr32(name: str, x: float) -> float:
    """A composition's step: ``name``'s exact value at a float32, rounded once to FLOAT32."""
    from tests.rounding_oracle import correctly_rounded

    return correctly_rounded(name, x, "FLOAT32")


def _f32_quotient(a: float, b: float) -> float:
    if a == 0 or b == 0 or math.isinf(a) or math.isinf(b) or math.isnan(a) or math.isnan(b):
        with np.errstate(all="ignore"):
            return float(np.float32(a) / np.float32(b))  # IEEE's special cases (and a zero's sign)
    return round_f32(float(Fraction(a) / Fraction(b)))  # the exact quotient, rounded once


def _f32_sum(a: float, b: float) -> float:
    return round_f32(a + b)  # two float32 values: exact in double, then rounded once


def softplus_element(x: float, type_name: str, steepness: float = 1.0) -> float:
    """ACTIVATION_SOFTPLUS: correctly rounded at Steepness 1, else SOFTPLUS(Steepness * x) / Steepness."""
    s = float_field(steepness)
    if s == 1:
        return rounded_activation("SOFTPLUS")(x, type_name)
    return _finish(_f32_quotient(_cr32("SOFTPLUS", _f32_product(x, s)), s), type_name)


def parametric_softplus_element(x: float, type_name: str, alpha: float, beta: float) -> float:
    return _finish(_f32_product(float_field(alpha), _cr32("SOFTPLUS", _f32_product(float_field(beta), x))),
                   type_name)


def elu_element(x: float, type_name: str, alpha: float) -> float:
    return _finish(_f32_product(float_field(alpha), _cr32("EXPM1", x)) if x < 0 else x, type_name)


def celu_element(x: float, type_name: str, alpha: float) -> float:
    """max(0, x) + min(0, Alpha * EXPM1(x / Alpha)); NaN stays NaN."""
    a = float_field(alpha)
    t = _f32_product(a, _cr32("EXPM1", _f32_quotient(x, a)))
    return _finish(_f32_sum(0.0 if x < 0 else x, 0.0 if t > 0 else t), type_name)


def scaled_elu_element(x: float, type_name: str, alpha: float, gamma: float) -> float:
    inner = x if x > 0 else _f32_product(float_field(alpha), _cr32("EXPM1", x))
    return _finish(_f32_product(float_field(gamma), inner), type_name)


def scaled_tanh_element(x: float, type_name: str, alpha: float, beta: float) -> float:
    return _finish(_f32_product(float_field(alpha), _cr32("TANH", _f32_product(float_field(beta), x))), type_name)


def swish_element(x: float, type_name: str, scale: float) -> float:
    return _finish(_f32_product(x, _cr32("SIGMOID", _f32_product(float_field(scale), x))), type_name)


def logical_not_element(x: int, type_name: str) -> int:
    return 1 if x == 0 else 0


def bit_count_element(x: int, type_name: str) -> int:
    """The bits set in the element's encoding (two's complement for a signed type), of its own width."""
    return bin(int(x) % (1 << (TYPES[type_name].size * 8))).count("1")


def bit_not_element(x: int, type_name: str) -> int:
    """Every bit of the element's encoding inverted."""
    size = TYPES[type_name].size * 8
    return _wrapped(~int(x) & ((1 << size) - 1), type_name)


# --- the binary family: f(a, b) of two elements of one type --------------------------------------------------
# Floats: the exact result in double (a sum, difference, product or quotient of two float32 values rounds
# correctly to float32 through double: 53 >= 2 * 24 + 2 bits), rounded once to float32, and once more to FLOAT16
# where the tensor is one. Integers: the exact result wrapped into the type (two's complement, SPEC 11.3).

ARITHMETIC_TYPES = FLOATS + INTEGERS_32 + INTEGERS_64


def _float_result(exact: float, type_name: str) -> float:
    return round_to(round_f32(exact), type_name)


def add_element(a: int | float, b: int | float, type_name: str) -> int | float:
    """a + b (ELEMENT_WISE_ADD)."""
    if TYPES[type_name].is_float:
        return _float_result(a + b, type_name)
    return _wrapped(int(a) + int(b), type_name)


def subtract_element(a: int | float, b: int | float, type_name: str) -> int | float:
    """a - b (ELEMENT_WISE_SUBTRACT)."""
    if TYPES[type_name].is_float:
        return _float_result(a - b, type_name)
    return _wrapped(int(a) - int(b), type_name)


def multiply_element(a: int | float, b: int | float, type_name: str) -> int | float:
    """a * b (ELEMENT_WISE_MULTIPLY)."""
    if TYPES[type_name].is_float:
        return _float_result(a * b, type_name)
    return _wrapped(int(a) * int(b), type_name)


def truncated_quotient(a: int, b: int) -> int:
    """The exact quotient of two Python integers rounded toward zero (C's ``/``: the page's "truncated")."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def divide_element(a: int | float, b: int | float, type_name: str) -> int | float:
    """a / b (ELEMENT_WISE_DIVIDE). Floats as IEEE divides: x / 0 an infinity of the signs' product (NaN for
    0 / 0 and NaN / 0), inf / inf NaN. Integers: truncated toward zero (the page), x / 0 is 0 (opendml's
    decision, as NumPy's integer division gives), the smallest signed integer / -1 wraps to itself."""
    if not TYPES[type_name].is_float:
        return 0 if b == 0 else _wrapped(truncated_quotient(int(a), int(b)), type_name)
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        negative = (math.copysign(1.0, a) < 0) != (math.copysign(1.0, b) < 0)
        return -math.inf if negative else math.inf
    return _float_result(a / b, type_name)


def _sign_bit(x: float) -> bool:
    return math.copysign(1.0, x) < 0


def min_element(a: int | float, b: int | float, type_name: str) -> int | float:
    """min(a, b) (ELEMENT_WISE_MIN). Floats: a NaN operand gives the other (NaN only when both are, as HLSL's min
    and IEEE 754-2019's minimumNumber), and -0.0 is less than +0.0 (opendml's decisions)."""
    if not TYPES[type_name].is_float:
        return min(int(a), int(b))
    if math.isnan(a):
        return b
    if math.isnan(b) or a < b:
        return a
    if b < a:
        return b
    return a if _sign_bit(a) else b  # equal: -0.0 where either is


def max_element(a: int | float, b: int | float, type_name: str) -> int | float:
    """max(a, b) (ELEMENT_WISE_MAX): as min_element, +0.0 greater than -0.0."""
    if not TYPES[type_name].is_float:
        return max(int(a), int(b))
    if math.isnan(a):
        return b
    if math.isnan(b) or a > b:
        return a
    if b > a:
        return b
    return b if _sign_bit(a) else a  # equal: +0.0 where either is


def mean_element(a: int | float, b: int | float, type_name: str) -> int | float:
    """(a + b) / 2 (ELEMENT_WISE_MEAN). Floats: the sum rounded to float32, halved (rounded again only where
    subnormal), rounded to FLOAT16 where the tensor is one. Integers: the exact sum halved, truncated toward zero."""
    if not TYPES[type_name].is_float:
        return truncated_quotient(int(a) + int(b), 2)
    return round_to(round_f32(round_f32(a + b) / 2), type_name)


def difference_square_element(a: int | float, b: int | float, type_name: str) -> int | float:
    """(a - b) * (a - b) (ELEMENT_WISE_DIFFERENCE_SQUARE): the difference rounded to float32, its square rounded
    again; integers wrapped (two's complement)."""
    if not TYPES[type_name].is_float:
        return _wrapped((int(a) - int(b)) ** 2, type_name)
    d = round_f32(a - b)
    return _float_result(d * d, type_name)


def _fmod(a: float, b: float) -> float:
    """C's fmod: exact (so a float32 result of float32 operands), the sign of a; NaN for x % 0 and inf % y."""
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or b == 0:
        return math.nan
    return math.fmod(a, b)


def modulus_truncate_element(a: int | float, b: int | float, type_name: str) -> int | float:
    """a - b * trunc(a / b) (ELEMENT_WISE_MODULUS_TRUNCATE: C's modulus, the dividend's sign). Integers: x % 0 is
    0 (opendml's decision)."""
    if not TYPES[type_name].is_float:
        return 0 if b == 0 else int(a) - truncated_quotient(int(a), int(b)) * int(b)
    return round_to(_fmod(a, b), type_name)


def modulus_floor_element(a: int | float, b: int | float, type_name: str) -> int | float:
    """a - b * floor(a / b) (ELEMENT_WISE_MODULUS_FLOOR: "the same results as the Python modulus", the divisor's
    sign). Floats as Python's float % computes it: fmod, plus b where the signs differ (rounded), a zero result
    signed as b; x % 0 NaN. Integers: Python's %, x % 0 is 0 (opendml's decision)."""
    if not TYPES[type_name].is_float:
        return 0 if b == 0 else int(a) % int(b)
    r = _fmod(a, b)
    if math.isnan(r):
        return r
    if r == 0:
        return math.copysign(0.0, b)
    if (r < 0) != (b < 0):
        r = round_f32(r + b)
    return round_to(r, type_name)


def add1_element(a: float, b: float, type_name: str, activation: tuple[str, float] | None = None) -> float:
    """FusedActivation(a + b) (ELEMENT_WISE_ADD1): the sum as ADD gives it (rounded to the tensors' type), then the
    activation as its own operator gives it; ``activation``: (the activation's name, its Alpha), or None."""
    total = add_element(a, b, type_name)
    if activation is None:
        return total
    name, alpha = activation
    if name == "RELU":
        return relu_element(total, type_name)
    assert name == "LEAKY_RELU", name
    return leaky_relu_element(total, type_name, alpha)


# --- comparisons, logical operators and IF ---------------------------------------------------------------------
# The comparison pages: "1 for true, 0 for false", f(a, b) = (a == b), (a > b), (a >= b), (a < b), (a <= b), over
# the two elements' values (Python's float comparisons are IEEE's: NaN compares false, -0.0 == +0.0; integers
# exact). The logical pages: f(a, b) = a && b, a || b, (!!a) != (!!b), any nonzero element true. IF's page:
# f(cond, a, b) = a if cond != 0, else b (the element's bits as they are).

def equals_element(a: int | float, b: int | float, type_name: str) -> int:
    return int(a == b)


def greater_than_element(a: int | float, b: int | float, type_name: str) -> int:
    return int(a > b)


def greater_than_or_equal_element(a: int | float, b: int | float, type_name: str) -> int:
    return int(a >= b)


def less_than_element(a: int | float, b: int | float, type_name: str) -> int:
    return int(a < b)


def less_than_or_equal_element(a: int | float, b: int | float, type_name: str) -> int:
    return int(a <= b)


def logical_and_element(a: int, b: int, type_name: str) -> int:
    return int(a != 0 and b != 0)


def logical_or_element(a: int, b: int, type_name: str) -> int:
    return int(a != 0 or b != 0)


def logical_xor_element(a: int, b: int, type_name: str) -> int:
    return int((a != 0) != (b != 0))


def if_element(condition: int, a: int | float, b: int | float, type_name: str) -> int | float:
    return a if condition != 0 else b
# --- the bitwise operators: the pages' "native encoding", of the element's width ---------------------------------

def _bits_of(x: int, type_name: str) -> int:
    """The element's encoding as an unsigned number of its width (two's complement for a signed type)."""
    return int(x) % (1 << (TYPES[type_name].size * 8))


def bit_and_element(a: int, b: int, type_name: str) -> int:
    """a & b on the encodings (ELEMENT_WISE_BIT_AND)."""
    return _wrapped(_bits_of(a, type_name) & _bits_of(b, type_name), type_name)


def bit_or_element(a: int, b: int, type_name: str) -> int:
    """a | b on the encodings (ELEMENT_WISE_BIT_OR)."""
    return _wrapped(_bits_of(a, type_name) | _bits_of(b, type_name), type_name)


def bit_xor_element(a: int, b: int, type_name: str) -> int:
    """a ^ b on the encodings (ELEMENT_WISE_BIT_XOR)."""
    return _wrapped(_bits_of(a, type_name) ^ _bits_of(b, type_name), type_name)


def bit_shift_left_element(a: int, b: int, type_name: str) -> int:
    """a << b, "a logical left shift" (ELEMENT_WISE_BIT_SHIFT_LEFT, unsigned types): a * 2**b modulo 2**bits, so 0
    where b is the width or more (opendml's decision)."""
    bits = TYPES[type_name].size * 8
    return 0 if int(b) >= bits else _wrapped(_bits_of(a, type_name) * 2 ** int(b), type_name)  # 2**bits divides it


def bit_shift_right_element(a: int, b: int, type_name: str) -> int:
    """a >> b, "a logical right shift" (ELEMENT_WISE_BIT_SHIFT_RIGHT, unsigned types): floor(a / 2**b), so 0 where
    b is the width or more."""
    bits = TYPES[type_name].size * 8
    return 0 if int(b) >= bits else _bits_of(a, type_name) // 2 ** int(b)  # a < 2**bits


# --- CAST: opendml's rules (docs/semantics.md 9d), in exact Python arithmetic --------------------------------------

def _round_to_float(n: int, type_name: str) -> float:
    """The integer ``n`` rounded once, to nearest even, to the float type (beyond its largest finite value by half
    an ulp or more: an infinity), in exact integer arithmetic (no double in between)."""
    mantissa, top = {"FLOAT64": (53, 1023), "FLOAT32": (24, 127), "FLOAT16": (11, 15)}[type_name]
    magnitude = abs(n)
    shift = max(magnitude.bit_length() - mantissa, 0)
    kept, dropped = divmod(magnitude, 1 << shift)
    half = (1 << shift) >> 1
    if shift and (dropped > half or (dropped == half and kept % 2 == 1)):
        kept += 1
    value = kept << shift
    largest = ((1 << mantissa) - 1) << (top - mantissa + 1)
    result = math.inf if value > largest else float(value)
    return -result if n < 0 else result


def cast_element(x: int | float, source: str, target: str) -> int | float:
    """CAST of one element from ``source`` to ``target``: float to float rounded to nearest even; float to integer
    truncated toward zero, saturated at the limits, NaN 0; integer to integer wrapped (two's complement); integer to
    float rounded to nearest even, once (FLOAT64: a float to FLOAT64 exact, FLOAT64 to a narrower float rounded once,
    straight from the double; integers beyond 2**53 rounded)."""
    to = TYPES[target]
    if TYPES[source].is_float:
        if to.is_float:
            if source == "FLOAT64" and target != "FLOAT64":
                return round_double(float(x), target)
            return round_to(float(x), target)  # FLOAT16 -> FLOAT32 is exact; FLOAT32 -> FLOAT16 rounds once
        low, high = to.integer_range  # type: ignore[misc]
        if math.isnan(x):
            return 0
        if math.isinf(x):
            return high if x > 0 else low
        return min(max(math.trunc(x), low), high)
    if to.is_float:
        return _round_to_float(int(x), target)
    return _wrapped(int(x), target)
def parameterized_relu_element(x: int | float, slope: int | float, type_name: str) -> int | float:
    """``x if x >= 0 else slope * x`` (ACTIVATION_PARAMETERIZED_RELU's page); the product as MULTIPLY's."""
    return x if x >= 0 else multiply_element(slope, x, type_name)


def relu_grad_element(x: int | float, gradient: int | float, type_name: str) -> int | float:
    """``X > 0 ? dY : 0`` (ACTIVATION_RELU_GRAD's page): -0.0 and NaN inputs give +0.0."""
    return gradient if x > 0 else 0.0


def clip_grad_element(x: int | float, gradient: int | float, type_name: str, low: Bound, high: Bound) -> int | float:
    """``0 if x <= Min; 0 if x >= Max; else gradient`` (ELEMENT_WISE_CLIP_GRAD's page); ``low`` and ``high``:
    the bounds typed as CLIP's (``float_field_bound``) or CLIP1's (``typed_bound``), None where a NaN bound on a
    float tensor compares false with everything."""
    zero = 0.0 if TYPES[type_name].is_float else 0
    if low is not None and x <= low:
        return zero
    if high is not None and x >= high:
        return zero
    return gradient


def quantized_linear_add_element(a: int, a_scale: float, a_zero_point: int | None, b: int, b_scale: float,
                                 b_zero_point: int | None, output_scale: float, output_zero_point: int | None,
                                 output_type: str) -> int:
    """ELEMENT_WISE_QUANTIZED_LINEAR_ADD's page: ``AValue = (A - AZeroPoint) * AScale``, ``BValue`` alike,
    ``clamp(round((AValue + BValue) / OutputScale) + OutputZeroPoint, Min, Max)``; each value as
    DEQUANTIZE_LINEAR gives it in FLOAT32, their float32 sum, quantized as QUANTIZE_LINEAR (SPEC 9)."""
    total = add_element(dequantize_element(a, a_scale, a_zero_point, "FLOAT32"),
                        dequantize_element(b, b_scale, b_zero_point, "FLOAT32"), "FLOAT32")
    return quantize_element(total, output_scale, output_zero_point, output_type)
