"""Generators of operator descriptions: a valid one for some feature level, then a few mutations.

A description is drawn as plain data (``RawOperator`` holding ``RawTensor`` arguments and field
values), valid for a feature level the generator picks; then zero to three mutations change a type, a
size, a stride, a total size, an alignment, a flag, a bound, ScaleBias, MinMaxDataType, the axes or the
direction, to values valid and invalid, well-typed and junk. ``rules`` then judges the result.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import replace
from typing import Any

import numpy as np
from hypothesis import strategies as st

import opendml as dml
from tests.helpers import disjoint_strides

from .rules import (
    FLOAT_NAMES,
    INDEX_TYPES,
    LEVELS,
    SIZES,
    TENSOR_FIELDS,
    RawOperator,
    RawTensor,
    Tensor,
    elements_collide,
    judge_tensor,
    packed_strides,
    row_at,
)

OPERATORS = tuple(TENSOR_FIELDS)
Draw = st.DrawFn

# Junk that no field of a description takes.
JUNK: tuple[object, ...] = (None, "junk", 1.5j, object(), b"\x00", [], {}, True, math.nan)


# --- valid pieces ----------------------------------------------------------------------------------------

def spell_type(draw: Draw, name: str) -> object:
    """A data type as a caller may spell it: the name, with DirectML's prefix, the enum, a NumPy dtype."""
    kind = draw(st.sampled_from(["name", "prefixed", "enum", "dtype", "scalar type"]))
    if kind == "prefixed":
        return f"DML_TENSOR_DATA_TYPE_{name}"
    if kind == "enum":
        return dml.DataType[name]
    if kind == "dtype":
        return np.dtype(name.lower())
    if kind == "scalar type":
        return np.dtype(name.lower()).type
    return name


def spell_flags(draw: Draw) -> object:
    return draw(st.sampled_from([0, "NONE", dml.TensorFlags.NONE, "DML_TENSOR_FLAG_NONE"]))


@st.composite
def small_sizes(draw: Draw, rank: int, max_elements: int = 48) -> tuple[int, ...]:
    sizes, budget = [], max_elements
    for _ in range(rank):
        n = draw(st.integers(1, max(1, min(4, budget))))
        sizes.append(n)
        budget = max(1, budget // n)
    return tuple(draw(st.permutations(sizes)))


def draw_strides(draw: Draw, sizes: tuple[int, ...], output: bool) -> object:
    kinds = ["none", "packed", "padded"] + ([] if output else ["broadcast", "arbitrary"])
    kind = draw(st.sampled_from(kinds))
    if kind == "none":
        return None
    if kind == "packed":
        strides: tuple[int, ...] = packed_strides(sizes)
    elif kind == "arbitrary":
        strides = tuple(draw(st.lists(st.integers(0, 6), min_size=len(sizes), max_size=len(sizes))))
    else:
        zero = frozenset(draw(st.sets(st.sampled_from(range(len(sizes)))))) if kind == "broadcast" else frozenset()
        strides = disjoint_strides(draw, sizes, zero)
    return _spell_list(draw, strides)


def _spell_list(draw: Draw, values: tuple[int, ...]) -> object:
    """A list of integers as a list, a tuple or a 1-D NumPy array (all accepted)."""
    kind = draw(st.sampled_from(["list", "list", "tuple", "array"]))
    if kind == "tuple":
        return tuple(values)
    if kind == "array":
        return np.array(values, dtype=draw(st.sampled_from([np.int64, np.uint32, np.int32])))
    return list(values)


def per_axis_strides(draw: Draw, sizes: tuple[int, ...]) -> object:
    """A scale or zero point: per tensor (every stride 0), per axis, or any input layout."""
    kind = draw(st.sampled_from(["per-tensor", "per-axis", "any"]))
    if kind == "per-tensor":
        return [0] * len(sizes)
    if kind == "per-axis":
        kept = draw(st.integers(0, len(sizes) - 1))
        return list(disjoint_strides(draw, sizes, [k for k in range(len(sizes)) if k != kept]))
    return draw_strides(draw, sizes, output=False)


def raw_tensor(draw: Draw, type_name: str, sizes: tuple[int, ...], strides: object) -> RawTensor:
    """A valid TensorDesc's arguments: the given layout, a total size and alignment, spelled variously."""
    size = SIZES[type_name]
    given = None if strides is None else tuple(int(s) for s in strides)  # type: ignore[attr-defined]
    elements = math.prod(sizes) if given is None else sum((n - 1) * s for n, s in zip(sizes, given)) + 1
    minimum = -(-elements * size // 4) * 4
    total = draw(st.one_of(st.none(), st.integers(minimum, minimum + 40)))
    alignment = draw(st.sampled_from([0, 0, 0, size, 16, 64, 256, 2**31])) if size else 0
    if alignment and alignment < size:
        alignment = 0
    return RawTensor(spell_type(draw, type_name), _spell_list(draw, sizes), strides, spell_flags(draw), total,
                     alignment)


# --- bounds and fields ------------------------------------------------------------------------------------

SPECIAL_BOUNDS: tuple[object, ...] = (
    -2.5, -0.5, 0.5, 2.7, -2.7, 0.0, -0.0, 1e-40, 16777217, 2147483645, -(2**31) - 1, 2**63, 2**64 - 1,
    1 + 2**-11 + 2**-40, 65520 - 2**-30, 65519.0, 70000.0, 1e300, -1e300, math.inf, -math.inf, math.nan,
    10**400, -(10**400), np.float32(1.5), np.float16(-3.0), np.int64(-7), np.uint8(200), np.float64(2.5e9),
)


def float_bound(draw: Draw) -> object:
    """A value for a FLOAT field: any number (rounded to float32 by the field)."""
    return draw(st.one_of(st.floats(), st.floats(width=32), st.sampled_from(SPECIAL_BOUNDS),
                          st.integers(-(2**64), 2**64)))


def typed_value(draw: Draw, type_name: str) -> object:
    """A value of MinMaxDataType (CLIP1's bounds): in range for integers, representable for floats."""
    if type_name in FLOAT_NAMES:
        width = 16 if type_name == "FLOAT16" else 32
        return draw(st.one_of(st.floats(width=width), st.sampled_from([0.0, -0.0, 1.0, math.inf, -math.inf, math.nan])))
    low, high = np.iinfo(np.dtype(type_name.lower())).min, np.iinfo(np.dtype(type_name.lower())).max
    value = draw(st.one_of(st.integers(int(low), int(high)), st.sampled_from([int(low), int(high), 0, -1 if low else 1])))
    kind = draw(st.sampled_from(["int", "int", "numpy", "float"]))
    if kind == "numpy":
        return np.dtype(type_name.lower()).type(value)
    if kind == "float" and abs(value) <= 2**53:
        return float(value)
    return value


def scale_bias(draw: Draw) -> object:
    numbers = st.one_of(st.sampled_from([1.0, -1.0, 0.5, 3.0, 0.1, 0.0, -0.0, 1e-3, math.inf, math.nan]),
                        st.floats(width=32), st.floats())
    scale, bias = draw(numbers), draw(numbers)
    return draw(st.sampled_from([None, dml.ScaleBias(scale, bias), (scale, bias), [scale, bias]]))


# --- a valid description ----------------------------------------------------------------------------------

@st.composite
def valid_operators(draw: Draw) -> tuple[str, RawOperator]:
    """(the lowest level the generator aimed at, a description valid there)."""
    operator = draw(st.sampled_from(OPERATORS))
    target = draw(st.sampled_from([lv for lv in LEVELS if row_at(operator, lv) is not None]))
    row = row_at(operator, target)
    assert row is not None
    low, high = row.dimensions
    rank = draw(st.integers(low, min(high, 5) if draw(st.booleans()) else high))
    sizes = draw(small_sizes(rank))
    if operator == "ARGMIN":
        return target, _argmin(draw, row.types, sizes)
    if operator == "ELEMENT_WISE_DEQUANTIZE_LINEAR":
        return target, _dequantize(draw, row.types, row.may_be_absent, sizes)
    type_name = draw(st.sampled_from(sorted(row.types["InputTensor"])))
    x = raw_tensor(draw, type_name, sizes, draw_strides(draw, sizes, output=False))
    in_place = draw(st.integers(0, 4)) == 0 and _writable(x)  # the same arguments for both: an in-place layout
    y = x if in_place else raw_tensor(draw, type_name, sizes, draw_strides(draw, sizes, output=True))
    fields: dict[str, object] = {}
    if type_name in FLOAT_NAMES and draw(st.booleans()):
        fields["scale_bias"] = scale_bias(draw)
    if operator == "ELEMENT_WISE_CLIP1":
        fields["min_max_data_type"] = spell_type(draw, type_name)
        fields["min"], fields["max"] = typed_value(draw, type_name), typed_value(draw, type_name)
    else:
        names = ("min", "max") if operator == "ELEMENT_WISE_CLIP" else ("min",)
        for name in names:  # a NaN bound is valid on float tensors only
            value = float_bound(draw)
            fields[name] = value if type_name in FLOAT_NAMES or not _is_nan(value) else 0.0
    return target, RawOperator(operator, {"InputTensor": x, "OutputTensor": y}, fields)


def _is_nan(value: object) -> bool:
    return isinstance(value, (float, np.floating)) and math.isnan(value)


def _writable(raw: RawTensor) -> bool:
    judged = judge_tensor(raw)
    return isinstance(judged, Tensor) and not elements_collide(judged)


def _argmin(draw: Draw, types: dict[str, frozenset[str]], sizes: tuple[int, ...]) -> RawOperator:
    type_name = draw(st.sampled_from(sorted(types["InputTensor"])))
    out_type = draw(st.sampled_from(sorted(INDEX_TYPES)))
    axes = draw(st.lists(st.integers(0, len(sizes) - 1), min_size=1, max_size=len(sizes), unique=True))
    out_sizes = tuple(1 if k in axes else n for k, n in enumerate(sizes))
    x = raw_tensor(draw, type_name, sizes, draw_strides(draw, sizes, output=False))
    y = raw_tensor(draw, out_type, out_sizes, draw_strides(draw, out_sizes, output=True))
    direction = draw(st.sampled_from([dml.AxisDirection.INCREASING, dml.AxisDirection.DECREASING, 0, 1, "INCREASING",
                                      "DECREASING", "DML_AXIS_DIRECTION_DECREASING"]))
    return RawOperator("ARGMIN", {"InputTensor": x, "OutputTensor": y},
                       {"axes": _spell_list(draw, tuple(axes)), "axis_direction": direction})


def _dequantize(draw: Draw, types: dict[str, frozenset[str]], absent: frozenset[str],
                sizes: tuple[int, ...]) -> RawOperator:
    in_type = draw(st.sampled_from(sorted(types["InputTensor"])))
    float_type = draw(st.sampled_from(sorted(types["ScaleTensor"])))
    x = raw_tensor(draw, in_type, sizes, draw_strides(draw, sizes, output=False))
    scale = raw_tensor(draw, float_type, sizes, per_axis_strides(draw, sizes))
    zero_point = None
    if "ZeroPointTensor" not in absent or draw(st.booleans()):
        zero_point = raw_tensor(draw, in_type, sizes, per_axis_strides(draw, sizes))
    y = raw_tensor(draw, float_type, sizes, draw_strides(draw, sizes, output=True))
    tensors = {"InputTensor": x, "ScaleTensor": scale, "ZeroPointTensor": zero_point, "OutputTensor": y}
    return RawOperator("ELEMENT_WISE_DEQUANTIZE_LINEAR", tensors)


# --- mutations ---------------------------------------------------------------------------------------------

def _some_tensor(draw: Draw, op: RawOperator) -> str:
    return draw(st.sampled_from(TENSOR_FIELDS[op.operator]))


def _with_tensor(op: RawOperator, name: str, value: object) -> RawOperator:
    return RawOperator(op.operator, {**op.tensors, name: value}, dict(op.fields))


def _with_field(op: RawOperator, name: str, value: object) -> RawOperator:
    return RawOperator(op.operator, dict(op.tensors), {**op.fields, name: value})


def _mutate_tensor(draw: Draw, op: RawOperator, change: Callable[[Draw, RawTensor], object]) -> RawOperator:
    name = _some_tensor(draw, op)
    raw = op.tensors.get(name)
    if not isinstance(raw, RawTensor):
        raw = _fresh_tensor(draw)
    return _with_tensor(op, name, change(draw, raw))


def _fresh_tensor(draw: Draw) -> RawTensor:
    type_name = draw(st.sampled_from(sorted(SIZES)))
    sizes = draw(small_sizes(draw(st.integers(1, 4))))
    return raw_tensor(draw, type_name, sizes, None)


def _as_list(value: object, fallback: list[Any]) -> list[Any]:
    """A list of what a (possibly junk) sequence holds, or ``fallback`` when it holds nothing iterable."""
    try:
        return list(value)  # type: ignore[call-overload]
    except TypeError:
        return fallback


def _sizes_list(raw: RawTensor) -> list[Any]:
    return _as_list(raw.sizes, [2])


def m_data_type(draw: Draw, raw: RawTensor) -> RawTensor:
    value = draw(st.one_of(
        st.sampled_from(sorted(SIZES)).map(lambda n: n),
        st.sampled_from(["UNKNOWN", dml.DataType.UNKNOWN, "DML_TENSOR_DATA_TYPE_UNKNOWN", "FLOAT8", "BFLOAT16",
                         np.dtype("complex64"), np.dtype("bool"), np.dtype(">f4").type, 1, *JUNK])))
    return replace(raw, data_type=value)


def m_sizes(draw: Draw, raw: RawTensor) -> RawTensor:
    sizes = _sizes_list(raw)
    kind = draw(st.sampled_from(["element", "element", "append", "drop", "container", "rank", "overflow", "big"]))
    if kind == "element" and sizes:
        k = draw(st.integers(0, len(sizes) - 1))
        sizes[k] = draw(st.sampled_from([0, -1, 2**32, 2**32 - 1, 1.5, True, "2", None, np.int64(3), np.uint32(2),
                                         np.float64(2.0), 65536, 1, 5]))
        return replace(raw, sizes=sizes)
    if kind == "append":
        return replace(raw, sizes=[*sizes, draw(st.integers(1, 4))])
    if kind == "drop":
        return replace(raw, sizes=sizes[1:])
    if kind == "rank":
        return replace(raw, sizes=draw(st.sampled_from([[], [1] * 9, [2] * 8, [1] * 8])))
    if kind == "overflow":
        return replace(raw, sizes=draw(st.sampled_from([[65536, 65536], [65536, 65535], [2**32 - 1], [2, 2**31]])),
                       strides=None)
    if kind == "big":
        return replace(raw, sizes=[draw(st.sampled_from([2**22 + 1, 2**21, 70000])), 1])
    container = draw(st.sampled_from(["tuple", "array", "0-d", "str", "set", "dict", "int", "none", "2-d"]))
    numbers = [int(v) for v in sizes if isinstance(v, (int, np.integer))] or [1]  # what an array can hold
    keys = [v for v in sizes if isinstance(v, Hashable)]
    return replace(raw, sizes={
        "tuple": tuple(sizes), "array": np.array(numbers), "0-d": np.array(numbers[0]),
        "str": "23", "set": set(keys), "dict": dict.fromkeys(keys, 1), "int": 4, "none": None,
        "2-d": np.array([numbers]),
    }[container])


def m_strides(draw: Draw, raw: RawTensor) -> RawTensor:
    rank = len(_sizes_list(raw))
    kind = draw(st.sampled_from(["none", "length", "negative", "huge", "float", "zero", "small", "0-d", "hugevalid",
                                 "beyond UINT64"]))
    packed = list(packed_strides([int(v) if isinstance(v, (int, np.integer)) else 1 for v in _sizes_list(raw)]))
    base = _as_list(raw.strides, packed) if raw.strides is not None else packed
    if not base:
        base = [1]
    k = draw(st.integers(0, max(0, len(base) - 1)))
    if kind == "none":
        return replace(raw, strides=None)
    if kind == "length":
        return replace(raw, strides=base + [1] if draw(st.booleans()) else base[:-1])
    if kind == "small":
        return replace(raw, strides=draw(st.lists(st.integers(0, 5), min_size=max(rank, 1), max_size=max(rank, 1))))
    if kind == "0-d":
        return replace(raw, strides=np.array(1))
    if kind == "beyond UINT64":  # a valid layout whose minimum size no UINT64 holds (for 2-byte types and up)
        return replace(raw, sizes=[2**32 - 1], strides=[2**32 - 1], total=None)
    base[k] = {"negative": -1, "huge": 2**32, "float": 1.0, "zero": 0, "hugevalid": 2**32 - 1}[kind]
    return replace(raw, strides=base)


def m_total(draw: Draw, raw: RawTensor) -> RawTensor:
    judged = judge_tensor(replace(raw, total=None))
    minimum = judged.total if isinstance(judged, Tensor) else 16
    value = draw(st.sampled_from([minimum - 1, minimum - 4, minimum + 1, minimum + 3, 0, 2**64, 2**64 - 1, -1, 1.5,
                                  True, float(minimum), np.uint64(minimum), "16", None]))
    return replace(raw, total=value)


def m_alignment(draw: Draw, raw: RawTensor) -> RawTensor:
    return replace(raw, alignment=draw(st.sampled_from([1, 2, 3, 4, 8, 16, 24, 32, 2**31, 2**32, -1, True, 0.5,
                                                        None, np.int64(16)])))


def m_flags(draw: Draw, raw: RawTensor) -> RawTensor:
    return replace(raw, flags=draw(st.sampled_from([1, "OWNED_BY_DML", "DML_TENSOR_FLAG_OWNED_BY_DML",
                                                    dml.TensorFlags.OWNED_BY_DML, 2, 3, -1, "SHARED", None, 1.0])))


def m_replace_tensor(draw: Draw, op: RawOperator) -> RawOperator:
    name = _some_tensor(draw, op)
    others = [v for v in op.tensors.values() if isinstance(v, RawTensor)]
    value = draw(st.sampled_from([None, "InputTensor", 3, dml.ScaleBias(1, 2), *others]))
    return _with_tensor(op, name, value)


def m_bound(draw: Draw, op: RawOperator) -> RawOperator:
    name = draw(st.sampled_from(["min", "max"] if op.operator != "ELEMENT_WISE_THRESHOLD" else ["min"]))
    value = draw(st.one_of(st.sampled_from(SPECIAL_BOUNDS), st.sampled_from(["1", None, True, 1j, [1.0], 300, -129,
                                                                              128, 2**32, 0.5, np.nan])))
    return _with_field(op, name, value)


def m_scale_bias(draw: Draw, op: RawOperator) -> RawOperator:
    value = draw(st.sampled_from([(1.0,), (1.0, 2.0, 3.0), "ab", dml.ScaleBias("a", 1.0), dml.ScaleBias(math.nan, math.inf),
                                  (1.5, -2), [2, 3], None, (True, 0.0), dml.ScaleBias(10**400, 1), (np.float16(2), 1)]))
    return _with_field(op, "scale_bias", value)


def m_min_max_type(draw: Draw, op: RawOperator) -> RawOperator:
    return _with_field(op, "min_max_data_type", draw(st.sampled_from([*sorted(SIZES), "UNKNOWN", None, 3, "FLOAT8"])))


def m_axes(draw: Draw, op: RawOperator) -> RawOperator:
    value = draw(st.sampled_from([[], [8], [-1], [0, 0], [1.0], [True], np.array(0), {0}, "0", None, np.array([0]),
                                  (0,), [np.int64(0)], 0, [0, 1, 2, 3, 4, 5, 6, 7], [2**32], {0: 0}]))
    return _with_field(op, "axes", value)


def m_direction(draw: Draw, op: RawOperator) -> RawOperator:
    value = draw(st.sampled_from([2, -1, "SIDEWAYS", None, 1.0, True, "DML_AXIS_DIRECTION_INCREASING",
                                  dml.AxisDirection.DECREASING, 1, 0, "DML_AXIS_DIRECTION_"]))
    return _with_field(op, "axis_direction", value)


TENSOR_MUTATIONS = (m_data_type, m_sizes, m_sizes, m_strides, m_total, m_alignment, m_flags)
OPERATOR_MUTATIONS = {
    "ELEMENT_WISE_CLIP": (m_bound, m_scale_bias),
    "ELEMENT_WISE_CLIP1": (m_bound, m_scale_bias, m_min_max_type),
    "ELEMENT_WISE_THRESHOLD": (m_bound, m_scale_bias),
    "ELEMENT_WISE_DEQUANTIZE_LINEAR": (),
    "ARGMIN": (m_axes, m_direction),
}


def mutate(draw: Draw, op: RawOperator) -> RawOperator:
    choices: list[Callable[[Draw, RawOperator], RawOperator]] = [
        *(lambda d, o, m=m: _mutate_tensor(d, o, m) for m in TENSOR_MUTATIONS),  # type: ignore[misc]
        m_replace_tensor, *OPERATOR_MUTATIONS[op.operator]]
    return draw(st.sampled_from(choices))(draw, op)


@st.composite
def description_cases(draw: Draw) -> tuple[str, RawOperator]:
    """(the device's feature level, a description): valid somewhere, then mutated zero to three times."""
    target, op = draw(valid_operators())
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 1, 1, 2, 3]))):
        op = mutate(draw, op)
    higher = [lv for lv in LEVELS if LEVELS.index(lv) >= LEVELS.index(target)]
    level = draw(st.one_of(st.sampled_from(higher), st.sampled_from(LEVELS)))
    return level, op


def make_desc(operator: str, tensors: dict[str, object], fields: dict[str, object]) -> object:
    """The opendml description of these tensors and fields (the dataclasses take anything)."""
    t = [tensors.get(name) for name in TENSOR_FIELDS[operator]]
    if operator == "ELEMENT_WISE_CLIP":
        return dml.ElementWiseClipDesc(*t, fields["min"], fields["max"], fields.get("scale_bias"))  # type: ignore[arg-type]
    if operator == "ELEMENT_WISE_CLIP1":
        return dml.ElementWiseClip1Desc(*t, fields["min_max_data_type"], fields["min"], fields["max"],  # type: ignore[arg-type]
                                        fields.get("scale_bias"))  # type: ignore[arg-type]
    if operator == "ELEMENT_WISE_THRESHOLD":
        return dml.ElementWiseThresholdDesc(*t, fields["min"], fields.get("scale_bias"))  # type: ignore[arg-type]
    if operator == "ARGMIN":
        return dml.ArgMinDesc(*t, fields["axes"], fields["axis_direction"])  # type: ignore[arg-type]
    return dml.ElementWiseDequantizeLinearDesc(*t)  # type: ignore[arg-type]
