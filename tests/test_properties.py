"""Property-based tests: every operator, every data type, ranks 1-8, random layouts, against a model.

The expected values come from ``elementwise_oracle``, an element-by-element model of SPEC.md written
apart from opendml. Each case is run through the low-level API (descriptions, buffers, bindings with
offsets, execute) over buffers filled with a byte pattern, and checks that every element the output
description addresses equals the model bit for bit and that no other byte of the output's buffer
changed (padding, bytes before the offset, bytes after the tensor: SPEC 8.8).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import opendml as dml
from opendml.backends import cpu_kernels
from tests.elementwise_oracle import (
    ARGMIN_INPUT_TYPES,
    ARGMIN_OUTPUT_TYPES,
    CLIP_TYPES,
    DEQUANTIZE_INPUT_TYPES,
    DEQUANTIZE_SCALE_TYPES,
    QUANTIZE_INPUT_TYPES,
    QUANTIZE_OUTPUT_TYPES,
    THRESHOLD_TYPES,
    TYPES,
    Bound,
    argmin_tensor,
    byte_offset,
    clamp_element,
    dequantize_element,
    encode,
    float_field,
    float_field_bound,
    indices,
    min_tensor_bytes,
    packed_strides,
    quantize_element,
    quantize_scale_type,
    read,
    round_to,
    same_value,
    typed_bound,
)
from tests.helpers import disjoint_strides

# The device fixture is made once per test function; reusing it across examples is what we want. The strategies
# filter nothing, but a case of up to 8 dimensions drawn value by value can outgrow Hypothesis's buffer, which it
# counts as filtered: on a derandomized run it once failed filter_too_much (9 cases drawn, 50 too large).
per_test_device = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                                  HealthCheck.filter_too_much])

MAX_ELEMENTS = 64  # keeps the pure-Python model fast
Index = tuple[int, ...]
Value = int | float


# --- element values ------------------------------------------------------------------------------------

def _float_edges(type_name: str) -> list[float]:
    if type_name == "FLOAT16":
        largest, smallest_normal, smallest = 65504.0, 2.0**-14, 2.0**-24
    else:
        largest, smallest_normal, smallest = float(np.finfo(np.float32).max), 2.0**-126, 2.0**-149
    edges = [0.0, 1.0, 0.5, 1.5, 2.5, 2.0**-10, largest, smallest_normal, smallest, smallest_normal - smallest,
             math.inf, 3.0 * smallest]
    return [*edges, *(-v for v in edges), math.nan]


def _integer_edges(type_name: str) -> list[int]:
    low, high = TYPES[type_name].integer_range  # type: ignore[misc]
    # 2**24 + 1 is the first integer float32 rounds; 2049 * 2**13 + 1 rounds onto a FLOAT16 tie (times 2**-10).
    candidates = [low, low + 1, high, high - 1, 0, 1, -1, 2, -2, high // 2, low // 2,
                  2**24 + 1, -(2**24) - 1, 2049 * 2**13 + 1]
    return [v for v in candidates if low <= v <= high]


def values_of(type_name: str, palette: Sequence[Value] = ()) -> st.SearchStrategy[Value]:
    """Values the type holds exactly, with its edge values and ``palette`` (to make ties) favoured."""
    t = TYPES[type_name]
    if t.is_float:
        general: st.SearchStrategy[Value] = st.floats(width=16 if type_name == "FLOAT16" else 32)
        edges: list[Value] = list(_float_edges(type_name))
    else:
        low, high = t.integer_range  # type: ignore[misc]
        general = st.integers(low, high)
        edges = list(_integer_edges(type_name))
    favoured = st.sampled_from([*palette, *edges])
    if not palette:
        return st.one_of(favoured, general)
    return st.one_of(favoured, general, st.sampled_from(palette), st.sampled_from(palette))


def in_type(value: Bound, type_name: str) -> list[Value]:
    """``value`` and its neighbours where the type holds them (for ties and near-ties with a bound)."""
    if value is None:
        return []
    if TYPES[type_name].is_float:
        return [value, -value] if math.isfinite(value) else [value]
    low, high = TYPES[type_name].integer_range  # type: ignore[misc]
    return [v for v in (value - 1, value, value + 1) if low <= v <= high]


def near_bound(raw: Value | None, bound: Bound, type_name: str) -> list[Value]:
    """Elements that tell the right reading of a bound from plausible wrong ones.

    Besides the bound itself: the value given, taken without the float32 field rounding (truncated
    for integer tensors, rounded straight to FLOAT16), and for floats both zeros and NaN.
    """
    near = in_type(bound, type_name)
    if raw is None or (isinstance(raw, float) and not math.isfinite(raw)):
        return near
    if TYPES[type_name].is_float:
        return [*near, *in_type(round_to(float(raw), type_name), type_name), 0.0, -0.0, math.nan]
    return near + in_type(math.trunc(raw), type_name)


# --- tensor layouts ------------------------------------------------------------------------------------

@st.composite
def shapes(draw: st.DrawFn, max_elements: int = MAX_ELEMENTS) -> tuple[int, ...]:
    """Rank 1-8, at most ``max_elements`` elements, the larger sizes on any axis."""
    rank = draw(st.integers(1, 8))
    sizes, budget = [], max_elements
    for _ in range(rank):
        n = draw(st.integers(1, min(4, budget)))
        sizes.append(n)
        budget //= n
    return tuple(draw(st.permutations(sizes)))


@st.composite
def strides_for(draw: st.DrawFn, sizes: Sequence[int], writable: bool) -> tuple[int, ...] | None:
    """None (packed by default), packed, permuted and padded, or for inputs broadcast or arbitrary."""
    kinds = ["default", "packed", "padded"] + ([] if writable else ["broadcast", "arbitrary"])
    kind = draw(st.sampled_from(kinds))
    if kind == "default":
        return None
    if kind == "packed":
        return packed_strides(sizes)
    if kind == "arbitrary":  # inputs may read one element many times
        return tuple(draw(st.lists(st.integers(0, 6), min_size=len(sizes), max_size=len(sizes))))
    zero_axes = draw(st.sets(st.sampled_from(range(len(sizes))))) if kind == "broadcast" else ()
    return disjoint_strides(draw, sizes, zero_axes)


@st.composite
def broadcast_strides(draw: st.DrawFn, sizes: Sequence[int]) -> tuple[int, ...] | None:
    """A scale or zero point: per tensor (all strides 0), per axis, or any input layout."""
    kind = draw(st.sampled_from(["per-tensor", "per-axis", "any"]))
    if kind == "per-tensor":
        return (0,) * len(sizes)
    if kind == "per-axis":
        kept = draw(st.integers(0, len(sizes) - 1))
        return disjoint_strides(draw, sizes, [k for k in range(len(sizes)) if k != kept])
    return draw(strides_for(sizes, writable=False))


@dataclass
class Tensor:
    """A tensor description placed in its own buffer: filler bytes, then the elements at their offsets."""

    type_name: str
    sizes: tuple[int, ...]
    strides: tuple[int, ...] | None
    total: int | None  # TotalTensorSizeInBytes as given; None: the default minimum
    offset: int  # binding offset, a multiple of 16
    tail: int  # buffer bytes after the tensor's total size
    bound_size: int | None  # BufferBinding.size_in_bytes; None: to the end of the buffer
    fill: int  # seed of the filler byte pattern
    values: list[Value] | None = None  # row-major, for inputs

    @property
    def effective_strides(self) -> tuple[int, ...]:
        return self.strides if self.strides is not None else packed_strides(self.sizes)

    @property
    def total_bytes(self) -> int:
        return self.total if self.total is not None else min_tensor_bytes(self.type_name, self.sizes, self.strides)

    def desc(self) -> dml.TensorDesc:
        desc = dml.TensorDesc(self.type_name, self.sizes, self.strides, total_tensor_size_in_bytes=self.total)
        assert desc.total_tensor_size_in_bytes == self.total_bytes  # DMLCalcBufferTensorSize's minimum
        return desc

    def positions(self) -> dict[Index, int]:
        """The first byte of every element, by index vector, in the buffer."""
        return {i: byte_offset(i, self.effective_strides, self.type_name, self.offset) for i in indices(self.sizes)}

    def initial_bytes(self) -> bytearray:
        """The buffer's bytes: a pattern everywhere, then each value written in row-major order.

        Where an input's strides reach one element from several index vectors the last write wins;
        the model reads the values back from these bytes, so it sees what the operator sees.
        """
        size = self.offset + self.total_bytes + self.tail
        data = bytearray((self.fill + 89 * k) % 256 for k in range(size))
        if self.values is not None:
            for value, position in zip(self.values, self.positions().values()):
                raw = encode(value, self.type_name)
                data[position:position + len(raw)] = raw
        return data

    def binding(self, buffer: dml.Buffer) -> dml.BufferBinding:
        return dml.BufferBinding(buffer, self.offset, self.bound_size)


@st.composite
def tensors(draw: st.DrawFn, type_name: str, sizes: Sequence[int], values: st.SearchStrategy[Value] | None = None,
            *, writable: bool = False, strides: st.SearchStrategy | None = None) -> Tensor:
    """A tensor of the given type and sizes with a random layout, placement and (for inputs) values."""
    sizes = tuple(sizes)
    chosen = draw(strides if strides is not None else strides_for(sizes, writable))
    minimum = min_tensor_bytes(type_name, sizes, chosen)
    total = draw(st.one_of(st.none(), st.integers(minimum, minimum + 40)))
    total_bytes = minimum if total is None else total
    offset = 16 * draw(st.integers(0, 3))
    tail = draw(st.integers(0, 24))
    bound_size = draw(st.one_of(st.none(), st.integers(total_bytes, total_bytes + tail)))
    fill = draw(st.integers(0, 255))
    drawn = None
    if values is not None:
        count = math.prod(sizes)
        drawn = draw(st.lists(values, min_size=count, max_size=count))
    return Tensor(type_name, sizes, chosen, total, offset, tail, bound_size, fill, drawn)


# --- running a case and checking the output ------------------------------------------------------------

def input_values(tensor: Tensor, data: bytes | bytearray) -> dict[Index, Value]:
    """What the operator reads at each index vector of an input."""
    return {i: read(data, p, tensor.type_name) for i, p in tensor.positions().items()}


def execute(device: dml.Device, desc: object, inputs: Sequence[tuple[Tensor, bytearray] | None],
            output: Tensor) -> tuple[bytes, bytes]:
    """Run ``desc`` once through create -> compile -> bind -> execute; the output buffer before and after."""
    compiled = device.compile_operator(device.create_operator(desc))
    bindings = [None if i is None else i[0].binding(device.buffer_from(np.frombuffer(i[1], np.uint8)))
                for i in inputs]
    before = bytes(output.initial_bytes())
    out_buffer = device.buffer_from(np.frombuffer(before, np.uint8))
    compiled.execute(bindings, [output.binding(out_buffer)])
    return before, out_buffer.to_numpy().tobytes()


def check_output(output: Tensor, expected: dict[Index, Value], before: bytes, after: bytes) -> None:
    """Every addressed element equals the model bit for bit; every other byte is as it was."""
    assert len(after) == len(before)
    size = TYPES[output.type_name].size
    untouched = np.ones(len(before), dtype=bool)
    mismatches = []
    for index, position in output.positions().items():
        got = read(after, position, output.type_name)
        if not same_value(got, expected[index]):
            mismatches.append(f"{index}: got {got!r}, expected {expected[index]!r}")
        untouched[position:position + size] = False
    assert not mismatches, "elements differ from SPEC: " + "; ".join(mismatches[:8])
    changed = np.flatnonzero(untouched & (np.frombuffer(after, np.uint8) != np.frombuffer(before, np.uint8)))
    assert changed.size == 0, f"bytes outside the output's elements were written at {changed.tolist()[:16]}"


# --- ELEMENT_WISE_CLIP, CLIP1 and THRESHOLD ------------------------------------------------------------

def float_bounds(type_name: str) -> st.SearchStrategy[int | float]:
    """Values for a FLOAT field: any double (rounded to float32 by the field), ints, type limits, ties."""
    t = TYPES[type_name]
    # Doubles whose float32 rounding matters: integers float32 cannot hold, FLOAT16 ties once rounded to
    # float32 (1 + 2**-11 + 2**-40 and 65520 - 2**-30 round to 1 and to infinity, not up and to 65504).
    special = [-2.5, -0.5, 0.5, 2.7, -2.7, 0.0, -0.0, 1e-40, 16777217, 2147483645, -(2**31) - 1, 2**63, 2**64 - 1,
               1 + 2**-11 + 2**-40, -1 - 2**-11 - 2**-40, 65520 - 2**-30, -65520 + 2**-30, math.inf, -math.inf]
    if t.is_float:
        special.append(math.nan)
    choices: list[st.SearchStrategy] = [
        st.floats(allow_nan=t.is_float),
        st.floats(width=32, allow_nan=t.is_float),
        st.sampled_from(special),
        st.sampled_from(special),
    ]
    if t.is_float:
        choices.append(values_of(type_name))
    else:
        low, high = t.integer_range  # type: ignore[misc]
        choices.append(st.integers(low - 2, high + 2))
    return st.one_of(choices)


def scale_biases(type_name: str) -> st.SearchStrategy[tuple[float, float] | None]:
    """ScaleBias only on float tensors (SPEC 8.2); its fields are FLOAT (float32) too."""
    if not TYPES[type_name].is_float:
        return st.none()
    field_values = st.one_of(st.sampled_from([1.0, -1.0, 0.5, 3.0, 0.1, 1e-3, 0.0, -0.0]), st.floats(width=32),
                             st.floats())
    return st.one_of(st.none(), st.tuples(field_values, field_values))


@dataclass
class ClampCase:
    """One CLIP, CLIP1 or THRESHOLD case."""

    operator: str
    type_name: str
    min: Value | None
    max: Value | None
    scale_bias: tuple[float, float] | None
    input: Tensor
    output: Tensor
    low: Bound  # as the model types them (None: bounds nothing)
    high: Bound

    def desc(self, input_desc: dml.TensorDesc, output_desc: dml.TensorDesc) -> object:
        sb = None if self.scale_bias is None else dml.ScaleBias(*self.scale_bias)
        if self.operator == "ELEMENT_WISE_CLIP":
            return dml.ElementWiseClipDesc(input_desc, output_desc, self.min, self.max, sb)
        if self.operator == "ELEMENT_WISE_CLIP1":
            return dml.ElementWiseClip1Desc(input_desc, output_desc, self.type_name, self.min, self.max, sb)
        return dml.ElementWiseThresholdDesc(input_desc, output_desc, self.min, sb)

    def expected(self, values: dict[Index, Value]) -> dict[Index, Value]:
        return {i: clamp_element(v, self.type_name, self.scale_bias, self.low, self.high) for i, v in values.items()}


CLAMP_TYPES = {"ELEMENT_WISE_CLIP": CLIP_TYPES, "ELEMENT_WISE_CLIP1": CLIP_TYPES,
               "ELEMENT_WISE_THRESHOLD": THRESHOLD_TYPES}


@st.composite
def clamp_cases(draw: st.DrawFn, type_names: Sequence[str], in_place: bool = False) -> ClampCase:
    type_name = draw(st.sampled_from(type_names))
    operator = draw(st.sampled_from([op for op, types in CLAMP_TYPES.items() if type_name in types]))
    if operator == "ELEMENT_WISE_CLIP1":  # typed bounds: values of MinMaxDataType, used exactly
        lo, hi = draw(values_of(type_name)), draw(values_of(type_name))
        low, high = typed_bound(lo, type_name), typed_bound(hi, type_name)
    else:
        lo = draw(float_bounds(type_name))
        low = float_field_bound(lo, type_name)
        hi, high = None, None
        if operator == "ELEMENT_WISE_CLIP":
            hi = draw(float_bounds(type_name))
            high = float_field_bound(hi, type_name)
    palette = near_bound(lo, low, type_name) + near_bound(hi, high, type_name)
    scale_bias = draw(scale_biases(type_name))
    if scale_bias is not None and draw(st.booleans()):
        # Bias cancels x0 * Scale rounded to float32: the rounding error of the product (what a fused
        # multiply-add would keep) must vanish.
        x0 = draw(values_of(type_name))
        scale_bias = (scale_bias[0], -(x0 * float_field(scale_bias[0])))
        palette.append(x0)
    sizes = draw(shapes())
    values = values_of(type_name, palette)
    source = draw(tensors(type_name, sizes, values, writable=in_place))
    target = source if in_place else draw(tensors(type_name, sizes, writable=True))
    return ClampCase(operator, type_name, lo, hi, scale_bias, source, target, low, high)


@pytest.mark.parametrize("type_name", CLIP_TYPES)
@per_test_device
@given(data=st.data())
def test_clamp_operators_match_the_model(device: dml.Device, type_name: str, data: st.DataObject) -> None:
    check_clamp_case(device, data.draw(clamp_cases([type_name]), "case"))


def check_clamp_case(device: dml.Device, case: ClampCase) -> None:
    raw = case.input.initial_bytes()
    expected = case.expected(input_values(case.input, raw))
    desc = case.desc(case.input.desc(), case.output.desc())
    before, after = execute(device, desc, [(case.input, raw)], case.output)
    check_output(case.output, expected, before, after)


@st.composite
def float16_tie_bounds(draw: st.DrawFn) -> tuple[float, list[float]]:
    """A double just off a FLOAT16 tie that float32 rounds onto the tie, and the two FLOAT16 values around it.

    The FLOAT bound is a float32 first (so the tie goes to even), never the double rounded straight to
    FLOAT16 (which would go to the nearer side).
    """
    below = draw(st.floats(min_value=0, allow_infinity=False, width=16))
    above = float(np.nextafter(np.float16(below), np.float16(math.inf)))
    tie = 65520.0 if math.isinf(above) else (below + above) / 2
    sign = draw(st.sampled_from([1.0, -1.0]))
    nudge = draw(st.sampled_from([1.0, -1.0])) * tie * 2.0**-30  # far below half a float32 step
    return sign * (tie + nudge), [sign * below, sign * above]


@per_test_device
@given(data=st.data())
def test_float16_bounds_are_float32_fields_first(device: dml.Device, data: st.DataObject) -> None:
    raw, neighbours = data.draw(float16_tie_bounds(), "bound near a tie")
    operator = data.draw(st.sampled_from(["ELEMENT_WISE_CLIP", "ELEMENT_WISE_THRESHOLD"]), "operator")
    as_max = operator == "ELEMENT_WISE_CLIP" and data.draw(st.booleans(), "as Max")
    lo, hi = (-math.inf, raw) if as_max else (raw, None if operator == "ELEMENT_WISE_THRESHOLD" else math.inf)
    sizes = data.draw(shapes(), "sizes")
    values = values_of("FLOAT16", neighbours)
    source = data.draw(tensors("FLOAT16", sizes, values), "input")
    target = data.draw(tensors("FLOAT16", sizes, writable=True), "output")
    low = float_field_bound(lo, "FLOAT16")
    high = None if hi is None else float_field_bound(hi, "FLOAT16")
    check_clamp_case(device, ClampCase(operator, "FLOAT16", lo, hi, None, source, target, low, high))


@per_test_device
@given(case=clamp_cases(CLIP_TYPES, in_place=True))
def test_clamp_operators_in_place(device: dml.Device, case: ClampCase) -> None:
    """The output binding is the input binding itself: every element is read before it is overwritten."""
    data = case.input.initial_bytes()
    expected = case.expected(input_values(case.input, data))
    desc = case.input.desc()
    compiled = device.compile_operator(device.create_operator(case.desc(desc, desc)))
    buffer = device.buffer_from(np.frombuffer(data, np.uint8))
    binding = case.input.binding(buffer)
    compiled.execute([binding], [binding])
    check_output(case.output, expected, bytes(data), buffer.to_numpy().tobytes())


# --- ELEMENT_WISE_DEQUANTIZE_LINEAR ----------------------------------------------------------------------

@dataclass
class DequantizeCase:
    input: Tensor
    scale: Tensor
    zero_point: Tensor | None
    output: Tensor


@st.composite
def dequantize_cases(draw: st.DrawFn, input_type: str) -> DequantizeCase:
    scale_type = draw(st.sampled_from(DEQUANTIZE_SCALE_TYPES))
    sizes = draw(shapes())
    x = draw(tensors(input_type, sizes, values_of(input_type)))
    scale = draw(tensors(scale_type, sizes, values_of(scale_type), strides=broadcast_strides(sizes)))
    zero_point = draw(st.one_of(st.none(), tensors(input_type, sizes, values_of(input_type),
                                                     strides=broadcast_strides(sizes))))
    output = draw(tensors(scale_type, sizes, writable=True))
    return DequantizeCase(x, scale, zero_point, output)


@pytest.mark.parametrize("input_type", DEQUANTIZE_INPUT_TYPES)
@per_test_device
@given(data=st.data())
def test_dequantize_linear_matches_the_model(device: dml.Device, input_type: str, data: st.DataObject) -> None:
    check_dequantize_case(device, data.draw(dequantize_cases(input_type), "case"))


def check_dequantize_case(device: dml.Device, case: DequantizeCase) -> None:
    operands = [case.input, case.scale, case.zero_point]
    raw = [None if t is None else t.initial_bytes() for t in operands]
    x, scale, zero_point = (None if t is None else input_values(t, d) for t, d in zip(operands, raw))
    out_type = case.output.type_name
    expected = {i: dequantize_element(x[i], scale[i], None if zero_point is None else zero_point[i], out_type)
                for i in x}
    descs = [None if t is None else t.desc() for t in operands]
    desc = dml.ElementWiseDequantizeLinearDesc(*descs, case.output.desc())
    bound = [None if t is None else (t, d) for t, d in zip(operands, raw)]
    before, after = execute(device, desc, bound, case.output)
    check_output(case.output, expected, before, after)


@st.composite
def float16_tie_dequantize(draw: st.DrawFn, input_type: str) -> DequantizeCase:
    """Differences that float32 rounds onto a FLOAT16 tie once scaled (so the tie goes to even).

    ``tie`` has 12 significant bits ending in 1 and float32 steps of 8 or more, so ``tie + r`` for
    small ``r`` becomes ``tie`` in float32; rounding the exact ``(tie + r) * scale`` straight to
    FLOAT16 would go to the nearer side instead.
    """
    low, high = TYPES[input_type].integer_range  # type: ignore[misc]
    mantissa = 2 * draw(st.integers(1024, 2047)) + 1
    tie = mantissa << draw(st.integers(15, (high.bit_length() - 12)))
    sign = draw(st.sampled_from([1, -1])) if low < 0 else 1
    difference = sign * (tie + draw(st.sampled_from([-3, -2, -1, 1, 2, 3])))
    exponent = tie.bit_length() - 1 - draw(st.integers(tie.bit_length() - 25, 15))  # the result in [2, 2**15]
    zero_point = draw(st.integers(max(low, low - difference), min(high, high - difference)))
    sizes = draw(shapes())
    per_tensor = st.just((0,) * len(sizes))
    xs = [v + zero_point for v in (difference, sign * tie) if low <= v + zero_point <= high]
    x = draw(tensors(input_type, sizes, st.sampled_from(xs)))
    scale = draw(tensors("FLOAT16", sizes, st.just(2.0**-exponent), strides=per_tensor))
    zp = draw(tensors(input_type, sizes, st.just(zero_point), strides=per_tensor))
    output = draw(tensors("FLOAT16", sizes, writable=True))
    return DequantizeCase(x, scale, zp, output)


@pytest.mark.parametrize("input_type", ["INT32", "UINT32"])
@per_test_device
@given(data=st.data())
def test_dequantize_float16_output_rounds_through_float32(device: dml.Device, input_type: str,
                                                          data: st.DataObject) -> None:
    check_dequantize_case(device, data.draw(float16_tie_dequantize(input_type), "case"))


# --- ELEMENT_WISE_QUANTIZE_LINEAR ------------------------------------------------------------------------

# Scales whose quotients of the palette below are exact halves (ties), and a zero, a negative and an inexact one.
QUANTIZE_SCALES = [1.0, -1.0, 0.5, 2.0, 0.25, -3.0, 0.1, 0.0, -0.0]


def quantize_inputs(type_name: str) -> st.SearchStrategy[Value]:
    """Input values favouring halves and their neighbours around the 8-bit ranges (ties to even, the
    limits), besides the type's edge values and any value."""
    if TYPES[type_name].is_float:
        halves = [k / 2 for k in range(-540, 541)]
        scalar = np.dtype(TYPES[type_name].numpy).type
        near = [float(np.nextafter(scalar(v), scalar(d)))
                for v in (0.5, 2.5, -2.5, 127.5, -128.5, 255.5) for d in (math.inf, -math.inf)]
        return values_of(type_name, halves + near)
    return values_of(type_name, list(range(-600, 601)))


@dataclass
class QuantizeCase:
    input: Tensor
    scale: Tensor
    zero_point: Tensor | None
    output: Tensor


@st.composite
def quantize_cases(draw: st.DrawFn, input_type: str) -> QuantizeCase:
    scale_type = quantize_scale_type(input_type)
    output_type = draw(st.sampled_from(QUANTIZE_OUTPUT_TYPES))
    sizes = draw(shapes())
    x = draw(tensors(input_type, sizes, quantize_inputs(input_type)))
    scales = values_of(scale_type, [round_to(v, scale_type) for v in QUANTIZE_SCALES])
    scale = draw(tensors(scale_type, sizes, scales, strides=broadcast_strides(sizes)))
    zero_point = draw(st.one_of(st.none(), tensors(output_type, sizes, values_of(output_type),
                                                     strides=broadcast_strides(sizes))))
    output = draw(tensors(output_type, sizes, writable=True))
    return QuantizeCase(x, scale, zero_point, output)


def quantize_expected(case: QuantizeCase, raw: Sequence[bytes | bytearray | None]) -> dict[Index, Value]:
    """The model's output of a case, from the bytes its operands are bound with."""
    operands = [case.input, case.scale, case.zero_point]
    x, scale, zero_point = (None if t is None else input_values(t, d) for t, d in zip(operands, raw))
    assert x is not None and scale is not None
    return {i: quantize_element(x[i], scale[i], None if zero_point is None else zero_point[i],  # type: ignore[arg-type]
                                case.output.type_name) for i in x}


def check_quantize_case(device: dml.Device, case: QuantizeCase) -> None:
    operands = [case.input, case.scale, case.zero_point]
    raw = [None if t is None else t.initial_bytes() for t in operands]
    descs = [None if t is None else t.desc() for t in operands]
    desc = dml.ElementWiseQuantizeLinearDesc(*descs, case.output.desc())
    bound = [None if t is None else (t, d) for t, d in zip(operands, raw)]
    before, after = execute(device, desc, bound, case.output)
    check_output(case.output, quantize_expected(case, raw), before, after)


@pytest.mark.parametrize("input_type", QUANTIZE_INPUT_TYPES)
@per_test_device
@given(data=st.data())
def test_quantize_linear_matches_the_model(device: dml.Device, input_type: str, data: st.DataObject) -> None:
    check_quantize_case(device, data.draw(quantize_cases(input_type), "case"))


@pytest.mark.parametrize("input_type", QUANTIZE_INPUT_TYPES)
@per_test_device
@given(data=st.data())
def test_quantize_linear_with_the_numpy_kernels_matches_the_model(monkeypatch: pytest.MonkeyPatch, input_type: str,
                                                                  data: st.DataObject) -> None:
    """The CPU path without Numba: the expression's NumPy lowering, block by block."""
    monkeypatch.setattr(cpu_kernels, "_chosen", cpu_kernels.load("numpy"))
    check_quantize_case(dml.Device("cpu"), data.draw(quantize_cases(input_type), "case"))


# --- ARGMIN ----------------------------------------------------------------------------------------------

@dataclass
class ArgMinCase:
    axes: list[int]
    direction: str
    input: Tensor
    output: Tensor


@st.composite
def argmin_cases(draw: st.DrawFn, input_type: str) -> ArgMinCase:
    output_type = draw(st.sampled_from(ARGMIN_OUTPUT_TYPES))
    sizes = draw(shapes())
    axes = draw(st.lists(st.integers(0, len(sizes) - 1), min_size=1, max_size=len(sizes), unique=True))
    direction = draw(st.sampled_from(["INCREASING", "DECREASING"]))
    # Repeated values make ties; drawing only from the palette makes rows of ties and rows of NaN.
    special = [math.nan, math.nan, -0.0, 0.0, -math.inf] if TYPES[input_type].is_float else [0]
    palette = draw(st.lists(st.one_of(st.sampled_from(special), values_of(input_type)), min_size=1, max_size=3))
    values = st.sampled_from(palette) if draw(st.booleans()) else values_of(input_type, palette)
    x = draw(tensors(input_type, sizes, values))
    out_sizes = [1 if k in axes else n for k, n in enumerate(sizes)]
    output = draw(tensors(output_type, out_sizes, writable=True))
    return ArgMinCase(axes, direction, x, output)


# Descriptions, strides and axes against the model: on the NumPy kernels by default (each example's output type and
# direction would compile engines of its own; the engines' every type and direction are in test_cpu_fast).
@pytest.mark.parametrize("input_type", ARGMIN_INPUT_TYPES)
@pytest.mark.usefixtures("numpy_kernels_unless_slow")
@per_test_device
@given(data=st.data())
def test_argmin_matches_the_model(device: dml.Device, input_type: str, data: st.DataObject) -> None:
    case = data.draw(argmin_cases(input_type), "case")
    data = case.input.initial_bytes()
    expected = argmin_tensor(input_values(case.input, data), case.input.sizes, case.axes, case.direction)
    desc = dml.ArgMinDesc(case.input.desc(), case.output.desc(), case.axes, case.direction)
    before, after = execute(device, desc, [(case.input, data)], case.output)
    check_output(case.output, expected, before, after)


# --- the functional API over NumPy views -----------------------------------------------------------------

@st.composite
def numpy_views(draw: st.DrawFn, type_name: str, palette: Sequence[Value] = ()) -> np.ndarray:
    """A view of a fresh array: sliced with steps (negative ones too) and transposed."""
    rank = draw(st.integers(1, 4))
    base_shape = tuple(draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank)))
    count = math.prod(base_shape)
    values = draw(st.lists(values_of(type_name, palette), min_size=count, max_size=count))
    base = np.array(values, dtype=TYPES[type_name].numpy).reshape(base_shape)
    slices = []
    for n in base_shape:
        step = draw(st.sampled_from([1, 2, -1, -2]))
        start = draw(st.integers(0, n - 1))
        slices.append(slice(start, None, step))
    view = base[tuple(slices)]
    return view.transpose(draw(st.permutations(range(rank))))


def fresh_device(backend: str) -> dml.Device:
    """A new device for each example, so that every example stands alone (the functional API keeps a
    per-device cache of compiled operators)."""
    return dml.Device(backend)


def _model_values(array: np.ndarray, type_name: str) -> dict[Index, Value]:
    convert: Callable[[object], Value] = float if TYPES[type_name].is_float else int
    return {i: convert(array[i]) for i in indices(array.shape)}


def _check_array(got: np.ndarray, expected: dict[Index, Value], shape: tuple[int, ...], type_name: str) -> None:
    assert got.shape == shape and got.dtype == np.dtype(TYPES[type_name].numpy)
    convert: Callable[[object], Value] = float if TYPES[type_name].is_float else int
    mismatches = [f"{i}: got {convert(got[i])!r}, expected {v!r}"
                  for i, v in expected.items() if not same_value(convert(got[i]), v)]
    assert not mismatches, "elements differ from SPEC: " + "; ".join(mismatches[:8])


def exact_integer_bound(value: int | float | None, type_name: str) -> Bound:
    """The functional ``clip`` on integers: the bound as given, truncated toward zero and saturated exactly."""
    if value is None:
        return None
    low, high = TYPES[type_name].integer_range  # type: ignore[misc]
    if isinstance(value, float) and math.isinf(value):
        return high if value > 0 else low
    return min(max(math.trunc(value), low), high)


@per_test_device
@given(data=st.data())
def test_functional_clip_on_views(backend: str, data: st.DataObject) -> None:
    device = fresh_device(backend)
    type_name = data.draw(st.sampled_from(CLIP_TYPES), "type")
    t = TYPES[type_name]
    bound = st.one_of(st.none(), float_bounds(type_name))
    lo, hi = data.draw(bound, "min"), data.draw(bound, "max")
    if t.is_float:
        low = None if lo is None else float_field_bound(lo, type_name)
        high = None if hi is None else float_field_bound(hi, type_name)
    else:  # ELEMENT_WISE_CLIP1 with exact typed bounds at FL 6_4
        low, high = exact_integer_bound(lo, type_name), exact_integer_bound(hi, type_name)
    scale_bias = data.draw(scale_biases(type_name), "scale_bias")
    x = data.draw(numpy_views(type_name, in_type(low, type_name) + in_type(high, type_name)), "x")
    expected = {i: clamp_element(v, type_name, scale_bias, low, high) for i, v in _model_values(x, type_name).items()}
    if data.draw(st.booleans(), "into a strided out="):
        # out= a strided view of a larger array: the elements between its own must keep their values.
        outer = np.full((*x.shape, 2), 7, dtype=x.dtype)
        out = outer[..., 1]
        result = dml.clip(x, lo, hi, scale_bias=scale_bias, out=out, device=device)
        assert result is out
        assert (outer[..., 0] == 7).all()
    else:
        result = dml.clip(x, lo, hi, scale_bias=scale_bias, device=device)
    _check_array(result, expected, x.shape, type_name)


@per_test_device
@given(data=st.data())
def test_functional_threshold_on_views(backend: str, data: st.DataObject) -> None:
    device = fresh_device(backend)
    type_name = data.draw(st.sampled_from(THRESHOLD_TYPES), "type")
    lo = data.draw(float_bounds(type_name), "min")
    low = float_field_bound(lo, type_name)
    scale_bias = data.draw(scale_biases(type_name), "scale_bias")
    x = data.draw(numpy_views(type_name, in_type(low, type_name)), "x")
    expected = {i: clamp_element(v, type_name, scale_bias, low, None) for i, v in _model_values(x, type_name).items()}
    got = dml.threshold(x, lo, scale_bias=scale_bias, device=device)
    _check_array(got, expected, x.shape, type_name)


@per_test_device
@given(data=st.data())
def test_functional_dequantize_linear_broadcasts(backend: str, data: st.DataObject) -> None:
    device = fresh_device(backend)
    input_type = data.draw(st.sampled_from(DEQUANTIZE_INPUT_TYPES), "input type")
    scale_type = data.draw(st.sampled_from(DEQUANTIZE_SCALE_TYPES), "scale type")
    x = data.draw(numpy_views(input_type), "x")

    def broadcastable(type_name: str, label: str) -> np.ndarray:
        """An operand with some of x's axes (leading ones dropped, others of size 1)."""
        keep = data.draw(st.lists(st.booleans(), min_size=x.ndim, max_size=x.ndim), f"{label} axes kept")
        drop = data.draw(st.integers(0, x.ndim), f"{label} leading axes dropped")
        shape = tuple(n if k else 1 for n, k in zip(x.shape, keep))[drop:]
        count = math.prod(shape)
        values = data.draw(st.lists(values_of(type_name), min_size=count, max_size=count), label)
        return np.array(values, dtype=TYPES[type_name].numpy).reshape(shape)

    scale = broadcastable(scale_type, "scale")
    zero_point = data.draw(st.sampled_from(["none", "scalar", "array"]), "zero point")
    if zero_point == "scalar":
        zp: np.ndarray | int | None = data.draw(values_of(input_type), "zero point value")
    else:
        zp = broadcastable(input_type, "zero point") if zero_point == "array" else None
    zp_full = None if zp is None else np.broadcast_to(np.asarray(zp, dtype=x.dtype), x.shape)
    scale_full = np.broadcast_to(scale, x.shape)
    expected = {i: dequantize_element(int(x[i]), float(scale_full[i]), None if zp_full is None else int(zp_full[i]),
                                      scale_type) for i in indices(x.shape)}
    got = dml.dequantize_linear(x, scale, zp, device=device)
    _check_array(got, expected, x.shape, scale_type)


@per_test_device
@given(data=st.data())
def test_functional_argmin_on_views(backend: str, data: st.DataObject) -> None:
    device = fresh_device(backend)
    input_type = data.draw(st.sampled_from(ARGMIN_INPUT_TYPES), "type")
    palette = data.draw(st.lists(values_of(input_type), min_size=1, max_size=3), "palette")
    x = data.draw(numpy_views(input_type, palette), "x")
    axes = data.draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1),
                               st.lists(st.integers(0, x.ndim - 1), min_size=1, unique=True)), "axes")
    direction = data.draw(st.sampled_from(["INCREASING", "DECREASING"]), "direction")
    output_type = data.draw(st.sampled_from(ARGMIN_OUTPUT_TYPES), "output type")
    reduced = range(x.ndim) if axes is None else [axes % x.ndim] if isinstance(axes, int) else axes
    expected = argmin_tensor(_model_values(x, input_type), x.shape, list(reduced), direction)
    shape = tuple(1 if k in reduced else n for k, n in enumerate(x.shape))
    got = dml.argmin(x, axes, axis_direction=direction, output_type=output_type, device=device)
    _check_array(got, expected, shape, output_type)


# --- the model itself ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("type_name", "value", "expected"), [
    ("FLOAT16", 65520.0, math.inf),  # halfway to the next binade rounds up, to infinity
    ("FLOAT16", 2.0**-25, 0.0),  # half the smallest subnormal: a tie, to even (zero)
    ("FLOAT32", 1.0 + 2.0**-24, 1.0),  # a tie rounds to even
    ("FLOAT32", 1.0 + 3 * 2.0**-24, 1.0 + 2.0**-22),
])
def test_model_rounds_to_nearest_even(type_name: str, value: float, expected: float) -> None:
    assert round_to(value, type_name) == expected
