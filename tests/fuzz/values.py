"""Element values, guard-filled memory, and the expected bits of an accepted execution.

Expected values come from ``tests/elementwise_oracle.py`` (an element-by-element model of SPEC 4-8
that shares no code with opendml), fed with the bounds as ``rules`` reads them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from hypothesis import strategies as st

from tests.elementwise_oracle import (
    TYPES,
    argmin_tensor,
    clamp_element,
    dequantize_element,
    encode,
    indices,
    read,
    same_value,
)

from .rules import (
    RawOperator,
    Tensor,
    argmin_axes,
    float_field_bound,
    parse_direction,
    scale_bias_values,
    typed_bound,
)

Index = tuple[int, ...]
Value = int | float


# --- values --------------------------------------------------------------------------------------------

def float_edges(type_name: str) -> list[float]:
    if type_name == "FLOAT16":
        largest, normal, tiny = 65504.0, 2.0**-14, 2.0**-24
    else:
        largest, normal, tiny = float(np.finfo(np.float32).max), 2.0**-126, 2.0**-149
    edges = [0.0, 1.0, 0.5, 1.5, 2.5, largest, normal, tiny, normal - tiny, math.inf, 3.0 * tiny]
    return [*edges, *(-v for v in edges), math.nan]


def integer_edges(type_name: str) -> list[int]:
    low, high = TYPES[type_name].integer_range  # type: ignore[misc]
    candidates = [low, low + 1, high, high - 1, 0, 1, -1, 2, -2, high // 2, low // 2, 2**24 + 1, -(2**24) - 1]
    return [v for v in candidates if low <= v <= high]


def values_of(type_name: str, palette: Sequence[Value] = ()) -> st.SearchStrategy[Value]:
    """Values the type holds exactly, its edge values and ``palette`` (ties with a bound) favoured."""
    t = TYPES[type_name]
    if t.is_float:
        general: st.SearchStrategy[Value] = st.floats(width=16 if type_name == "FLOAT16" else 32)
        edges: list[Value] = list(float_edges(type_name))
    else:
        low, high = t.integer_range  # type: ignore[misc]
        general = st.integers(low, high)
        edges = list(integer_edges(type_name))
    kept = [v for v in palette if _holds(type_name, v)]
    return st.one_of(st.sampled_from([*kept, *edges]), general, *([st.sampled_from(kept)] if kept else []))


def _holds(type_name: str, value: Value) -> bool:
    """Whether the type holds ``value`` exactly (so that it can be written as an element)."""
    t = TYPES[type_name]
    if t.is_float:
        if not isinstance(value, float):
            value = float(value)
        if math.isnan(value):
            return True
        with np.errstate(over="ignore"):
            return float(np.array(value, dtype=t.numpy)) == value
    low, high = t.integer_range  # type: ignore[misc]
    return isinstance(value, int) and low <= value <= high


def near(bound: Value | None, type_name: str) -> list[Value]:
    """Elements equal to a bound or next to it, where the type holds them (ties and near ties)."""
    if bound is None:
        return []
    if TYPES[type_name].is_float:
        b = float(bound)
        if not math.isfinite(b):
            return [b]
        dtype = TYPES[type_name].numpy
        with np.errstate(over="ignore"):
            up = float(np.nextafter(np.array(b, dtype), np.array(math.inf, dtype)))
            down = float(np.nextafter(np.array(b, dtype), np.array(-math.inf, dtype)))
        return [b, -b, up, down]
    return [int(bound) - 1, int(bound), int(bound) + 1]


# --- memory --------------------------------------------------------------------------------------------

def guard_bytes(size: int, seed: int) -> bytearray:
    """A byte pattern that no operator would write by chance."""
    return bytearray((seed + 89 * k) % 256 for k in range(size))


def positions(tensor: Tensor, offset: int) -> dict[Index, int]:
    """The first byte of every element, by index vector, in row-major index order."""
    strides, size = tensor.effective_strides, tensor.element_size
    return {i: offset + sum(a * s for a, s in zip(i, strides)) * size for i in indices(tensor.sizes)}


def write_values(data: bytearray, tensor: Tensor, offset: int, values: Sequence[Value]) -> None:
    """Write elements in row-major order (the last write wins where strides reach one element twice)."""
    for value, position in zip(values, positions(tensor, offset).values()):
        raw = encode(value, tensor.type_name)
        if position + len(raw) <= len(data):
            data[position:position + len(raw)] = raw


def read_values(data: bytes | bytearray, tensor: Tensor, offset: int) -> dict[Index, Value]:
    """What an operator reads at each index vector."""
    return {i: read(data, p, tensor.type_name) for i, p in positions(tensor, offset).items()}


# --- expected values -----------------------------------------------------------------------------------

def expected_output(op: RawOperator, inputs: dict[str, dict[Index, Value] | None]) -> dict[Index, Value]:
    """The output of an accepted operator (``op.tensors`` judged) over the values its inputs read."""
    out: Tensor = op.tensors["OutputTensor"]  # type: ignore[assignment]
    t = out.type_name
    x = inputs["InputTensor"]
    assert x is not None
    if op.operator == "ELEMENT_WISE_DEQUANTIZE_LINEAR":
        scale, zero_point = inputs["ScaleTensor"], inputs["ZeroPointTensor"]
        assert scale is not None
        return {i: dequantize_element(int(v), float(scale[i]), None if zero_point is None else int(zero_point[i]), t)
                for i, v in x.items()}
    if op.operator == "ARGMIN":
        source: Tensor = op.tensors["InputTensor"]  # type: ignore[assignment]
        axes = argmin_axes(op.fields["axes"], len(source.sizes))
        direction = parse_direction(op.fields["axis_direction"])
        assert axes is not None and direction is not None
        return argmin_tensor(x, source.sizes, list(axes), direction)
    scale_bias = scale_bias_values(op.fields.get("scale_bias"))
    if op.operator == "ELEMENT_WISE_CLIP1":
        low, high = typed_bound(op.fields["min"], t), typed_bound(op.fields["max"], t)
    else:
        low = float_field_bound(op.fields["min"], t)
        high = float_field_bound(op.fields["max"], t) if op.operator == "ELEMENT_WISE_CLIP" else None
    return {i: clamp_element(v, t, scale_bias, low, high) for i, v in x.items()}


def output_mismatches(tensor: Tensor, offset: int, expected: dict[Index, Value], before: bytes | bytearray,
                      after: bytes | bytearray, limit: int = 6) -> list[str]:
    """Elements that differ from the model, then bytes outside the elements that changed."""
    problems = []
    size = tensor.element_size
    untouched = np.ones(len(before), dtype=bool)
    for index, position in positions(tensor, offset).items():
        got = read(after, position, tensor.type_name)
        if not same_value(got, expected[index]):
            problems.append(f"element {index}: got {got!r}, expected {expected[index]!r}")
        untouched[position:position + size] = False
    changed = np.flatnonzero(untouched & (np.frombuffer(bytes(after), np.uint8) != np.frombuffer(bytes(before), np.uint8)))
    if changed.size:
        problems.append(f"bytes outside the output's elements were written at {changed.tolist()[:16]}")
    return problems[:limit]
