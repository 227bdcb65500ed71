"""The fuzz oracle's rules: which descriptions and bindings opendml must accept, written from SPEC.md.

Plain Python over plain data. Nothing here calls opendml's validator: the support tables, the
description rules (SPEC 2-7, 8.2-8.3, 8.7 and docs/semantics.md), the binding rules and the bounds are
restated from the specification, so that opendml and this oracle can only agree by both following it.

A description is judged by the feature levels that accept it. Accepted at the device's level: it must
be created. Accepted only at higher levels: UnsupportedFeatureLevelError naming the lowest of them.
Accepted at none: InvalidArgumentError.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import opendml as dml  # only to recognise its enums' members (DirectML's names), never to validate
from tests.elementwise_oracle import TYPES, packed_strides, round_f32, round_to

# --- data types and feature levels (SPEC 1 and 3) --------------------------------------------------------

SIZES = {"FLOAT32": 4, "FLOAT16": 2, "UINT32": 4, "UINT16": 2, "UINT8": 1, "INT32": 4, "INT16": 2, "INT8": 1,
         "FLOAT64": 8, "UINT64": 8, "INT64": 8}
TYPE_NAMES = tuple(SIZES)
FLOAT_NAMES = ("FLOAT32", "FLOAT16", "FLOAT64")
LEVELS = ("1_0", "2_0", "2_1", "3_0", "3_1", "4_0", "4_1", "5_0", "5_1", "5_2", "6_0", "6_1", "6_2", "6_3", "6_4")
UINT32_MAX = 2**32 - 1
UINT64_MAX = 2**64 - 1
EXACT_OVERLAP_LIMIT = 4_194_304  # docs/semantics.md: collisions are proven absent exactly up to this many

F = frozenset({"FLOAT32", "FLOAT16"})
I32 = frozenset({"INT32", "INT16", "INT8", "UINT32", "UINT16", "UINT8"})
I64 = frozenset({"INT64", "UINT64"})
INDEX_TYPES = frozenset({"INT64", "INT32", "UINT64", "UINT32"})


def level_index(level: str) -> int:
    return LEVELS.index(level)


# --- support tables (SPEC 4-7), one row per "from level" -------------------------------------------------

@dataclass(frozen=True)
class Row:
    level: str
    dimensions: tuple[int, int]
    types: dict[str, frozenset[str]]
    may_be_absent: frozenset[str] = frozenset()


def _unary(level: str, dims: tuple[int, int], types: frozenset[str]) -> Row:
    return Row(level, dims, {"InputTensor": types, "OutputTensor": types})


def _dequantize(level: str, dims: tuple[int, int], inputs: frozenset[str], floats: frozenset[str],
                optional: bool = False) -> Row:
    types = {"InputTensor": inputs, "ScaleTensor": floats, "ZeroPointTensor": inputs, "OutputTensor": floats}
    return Row(level, dims, types, frozenset({"ZeroPointTensor"}) if optional else frozenset())


def _quantize(level: str, dims: tuple[int, int], inputs: frozenset[str], scales: frozenset[str],
              outputs: frozenset[str], optional: bool = False) -> Row:
    types = {"InputTensor": inputs, "ScaleTensor": scales, "ZeroPointTensor": outputs, "OutputTensor": outputs}
    return Row(level, dims, types, frozenset({"ZeroPointTensor"}) if optional else frozenset())


Q8 = frozenset({"INT8", "UINT8"})

TABLES: dict[str, tuple[Row, ...]] = {
    "ELEMENT_WISE_CLIP": (_unary("1_0", (4, 4), F), _unary("2_1", (4, 4), F | I32), _unary("3_0", (1, 8), F | I32),
                          _unary("5_0", (1, 8), F | I32 | I64)),
    "ELEMENT_WISE_CLIP1": (_unary("5_0", (1, 8), F | I32 | I64),),
    "ELEMENT_WISE_THRESHOLD": (_unary("1_0", (4, 4), F), _unary("2_1", (4, 4), F | I32),
                               _unary("3_0", (1, 8), F | I32)),
    "ELEMENT_WISE_DEQUANTIZE_LINEAR": (
        _dequantize("1_0", (4, 4), frozenset({"UINT8"}), frozenset({"FLOAT32"})),
        _dequantize("2_1", (4, 4), I32, frozenset({"FLOAT32"})),
        _dequantize("3_0", (1, 8), I32, frozenset({"FLOAT32"})),
        _dequantize("6_0", (1, 8), I32, F),
        _dequantize("6_2", (1, 8), I32, F, optional=True),
    ),
    "ARGMIN": (Row("3_0", (1, 8), {"InputTensor": F | I32, "OutputTensor": INDEX_TYPES}),
               Row("4_1", (1, 8), {"InputTensor": F | I32 | I64, "OutputTensor": INDEX_TYPES})),
    # SPEC 9: ARGMAX has ARGMIN's table; QUANTIZE_LINEAR's ZeroPointTensor shares OutputTensor's types.
    "ARGMAX": (Row("3_0", (1, 8), {"InputTensor": F | I32, "OutputTensor": INDEX_TYPES}),
               Row("4_1", (1, 8), {"InputTensor": F | I32 | I64, "OutputTensor": INDEX_TYPES})),
    "ELEMENT_WISE_QUANTIZE_LINEAR": (
        _quantize("1_0", (4, 4), frozenset({"FLOAT32"}), frozenset({"FLOAT32"}), frozenset({"UINT8"})),
        _quantize("2_1", (4, 4), frozenset({"FLOAT32", "INT32"}), frozenset({"FLOAT32"}), Q8),
        _quantize("3_0", (1, 8), frozenset({"FLOAT32", "INT32"}), frozenset({"FLOAT32"}), Q8),
        _quantize("6_0", (1, 8), F | {"INT32"}, F, Q8),
        _quantize("6_2", (1, 8), F | {"INT32"}, F, Q8, optional=True),
    ),
}

TENSOR_FIELDS: dict[str, tuple[str, ...]] = {
    "ELEMENT_WISE_CLIP": ("InputTensor", "OutputTensor"),
    "ELEMENT_WISE_CLIP1": ("InputTensor", "OutputTensor"),
    "ELEMENT_WISE_THRESHOLD": ("InputTensor", "OutputTensor"),
    "ELEMENT_WISE_DEQUANTIZE_LINEAR": ("InputTensor", "ScaleTensor", "ZeroPointTensor", "OutputTensor"),
    "ARGMIN": ("InputTensor", "OutputTensor"),
}
OPTIONAL_FIELDS = frozenset({"ZeroPointTensor"})
OUTPUT_FIELDS = frozenset({"OutputTensor"})
IN_PLACE = frozenset({"ELEMENT_WISE_CLIP", "ELEMENT_WISE_CLIP1", "ELEMENT_WISE_THRESHOLD"})


def row_at(operator: str, level: str) -> Row | None:
    """The table in force at ``level``: the newest row at or below it (None: not available yet)."""
    rows = [row for row in TABLES[operator] if level_index(row.level) <= level_index(level)]
    return rows[-1] if rows else None


# --- scalars ---------------------------------------------------------------------------------------------

def is_integer_value(value: object) -> bool:
    """A Python or NumPy integer, not a boolean."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def is_number(value: object) -> bool:
    """What a numeric field takes: a Python or NumPy integer or float (never a boolean)."""
    return is_integer_value(value) or (isinstance(value, (float, np.floating)) and not isinstance(value, bool))


def exact(value: object) -> int | float:
    """A number as an exact Python int, or a Python float."""
    return int(value) if is_integer_value(value) else float(value)  # type: ignore[arg-type]


def as_double(value: object) -> float:
    """A number rounded to a double; an integer beyond the double range is an infinity."""
    v = exact(value)
    try:
        return float(v)
    except OverflowError:
        return math.inf if v > 0 else -math.inf


def float_field(value: object) -> float:
    """A DirectML FLOAT field (CLIP's Min and Max, THRESHOLD's Min, ScaleBias): a float32."""
    return round_f32(as_double(value))


def integer_range(type_name: str) -> tuple[int, int]:
    rng = TYPES[type_name].integer_range
    assert rng is not None
    return rng


Bound = int | float | None  # None: this side bounds nothing


def float_field_bound(value: object, type_name: str) -> Bound:
    """CLIP's or THRESHOLD's FLOAT bound on a tensor of ``type_name`` (SPEC 4 and 8.3).

    Floats: the float32 rounded to the tensor's type, NaN bounds nothing. Integers: truncated toward
    zero then saturated, ±inf the type's limits. A NaN bound on an integer tensor is rejected (raises).
    """
    v = float_field(value)
    if type_name in FLOAT_NAMES:
        return None if math.isnan(v) else round_to(v, type_name)
    if math.isnan(v):
        raise ValueError("a NaN bound on an integer tensor is rejected at creation")
    low, high = integer_range(type_name)
    if math.isinf(v):
        return high if v > 0 else low
    return min(max(math.trunc(v), low), high)


def typed_bound_problem(value: object, type_name: str) -> str | None:
    """Why a CLIP1 bound (a DML_SCALAR_UNION of MinMaxDataType) is rejected, or None (SPEC 4, semantics 3)."""
    if not is_number(value):
        return "not a number"
    v = exact(value)
    if type_name not in FLOAT_NAMES:
        if isinstance(v, float) and not v.is_integer():
            return "not an integer"
        low, high = integer_range(type_name) if type_name in TYPES else (0, 0)
        return None if low <= int(v) <= high else "out of range"
    if isinstance(v, float) and not math.isfinite(v):
        return None  # NaN and ±inf are kept
    # A finite value (an integer of any size included) must stay finite once rounded to the type.
    rounded = as_double(v) if type_name == "FLOAT64" else round_to(as_double(v), type_name)
    return None if math.isfinite(rounded) else "beyond the type's largest value"


def typed_bound(value: object, type_name: str) -> Bound:
    """CLIP1's bound as the operator uses it: exact integers; floats rounded to the type, NaN bounds nothing."""
    v = exact(value)
    if type_name not in FLOAT_NAMES:
        return int(v)
    v = float(v)
    return None if math.isnan(v) else round_to(v, type_name)


def functional_integer_bound(value: object, type_name: str) -> Bound:
    """opendml.clip's bound on an integer array with CLIP1 (semantics 3): truncated and saturated exactly."""
    if value is None:
        return None
    v = exact(value)
    low, high = integer_range(type_name)
    if isinstance(v, float):
        if math.isnan(v):
            raise ValueError("a NaN bound on an integer tensor is rejected")
        if math.isinf(v):
            return high if v > 0 else low
        v = math.trunc(v)
    return min(max(v, low), high)


# --- parsing what a caller may give (the spellings opendml documents) ------------------------------------

# DML_TENSOR_DATA_TYPE's values (SPEC 1); 0 is UNKNOWN, never a tensor's type.
DATA_TYPE_VALUES = {1: "FLOAT32", 2: "FLOAT16", 3: "UINT32", 4: "UINT16", 5: "UINT8", 6: "INT32", 7: "INT16",
                    8: "INT8", 9: "FLOAT64", 10: "UINT64", 11: "INT64"}


def parse_data_type(value: object) -> str | None:
    """The DataType a value names, or None: a DataType (never UNKNOWN), DirectML's value of one, its name
    (any letter case) with or without DML_TENSOR_DATA_TYPE_, or a NumPy dtype (or scalar type) of one of
    the eleven types."""
    if isinstance(value, dml.DataType):
        return value.name if value.name in SIZES else None
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return DATA_TYPE_VALUES.get(int(value))
    if isinstance(value, str):
        name = value.upper().removeprefix("DML_TENSOR_DATA_TYPE_")
        return name if name in SIZES else None
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        dtype = np.dtype(value)
        for name in SIZES:
            if dtype == np.dtype(name.lower()):
                return name
    return None


def parse_flags(value: object) -> int | None:
    """DML_TENSOR_FLAGS: NONE (0) or OWNED_BY_DML (1), as a member, a value or a name; None when invalid."""
    if isinstance(value, dml.TensorFlags):
        return int(value) if int(value) in (0, 1) else None
    if is_integer_value(value) and not isinstance(value, np.integer):
        return int(value) if int(value) in (0, 1) else None  # type: ignore[arg-type]
    if isinstance(value, str):
        name = value.removeprefix("DML_TENSOR_FLAG_")
        return {"NONE": 0, "OWNED_BY_DML": 1}.get(name)
    return None


def parse_direction(value: object) -> str | None:
    """DML_AXIS_DIRECTION: a member, 0 or 1, or its name with or without DML_AXIS_DIRECTION_."""
    names = ("INCREASING", "DECREASING")
    if isinstance(value, dml.AxisDirection):
        return value.name
    if isinstance(value, int) and not isinstance(value, bool):
        return names[value] if value in (0, 1) else None
    if isinstance(value, str):
        name = value.removeprefix("DML_AXIS_DIRECTION_")
        return name if name in names else None
    return None


def parse_nan_policy(value: object) -> str | None:
    """opendml's NanPolicy (SPEC 9): a member, 0 or 1, or its name (any letter case, surrounding blanks
    allowed) with or without NAN_POLICY_."""
    names = ("IGNORE", "PROPAGATE")
    if isinstance(value, dml.NanPolicy):
        return value.name
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return names[int(value)] if int(value) in (0, 1) else None
    if isinstance(value, str):
        name = value.strip().upper().removeprefix("NAN_POLICY_")
        return name if name in names else None
    return None


def uint_list(value: object, lower: int, upper: int) -> tuple[int, ...] | None:
    """A list, tuple or 1-D integer ndarray of integers in [lower, upper]; None when not."""
    if isinstance(value, np.ndarray):
        if value.ndim != 1:
            return None
        items: Sequence[Any] = list(value)
    elif isinstance(value, (list, tuple)):
        items = value
    else:
        return None
    if not all(is_integer_value(v) and lower <= int(v) <= upper for v in items):
        return None
    return tuple(int(v) for v in items)


# --- buffer tensor descriptions (SPEC 2) -----------------------------------------------------------------

@dataclass(frozen=True)
class RawTensor:
    """The arguments of one TensorDesc, as given (any Python objects)."""

    data_type: object
    sizes: object
    strides: object = None
    flags: object = 0
    total: object = None
    alignment: object = 0

    def build(self) -> Any:
            return dml.TensorDesc(self.data_type, self.sizes, self.strides, flags=self.flags,  # type: ignore[arg-type]
                              total_tensor_size_in_bytes=self.total,  # type: ignore[arg-type]
                              guaranteed_base_offset_alignment=self.alignment)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Tensor:
    """A valid description, as the oracle reads it."""

    type_name: str
    sizes: tuple[int, ...]
    strides: tuple[int, ...] | None
    total: int
    alignment: int
    owned_by_dml: bool

    @property
    def element_size(self) -> int:
        return SIZES[self.type_name]

    @property
    def effective_strides(self) -> tuple[int, ...]:
        return self.strides if self.strides is not None else packed_strides(self.sizes)

    @property
    def element_count(self) -> int:
        return math.prod(self.sizes)

    def same_layout(self, other: Tensor) -> bool:
        """The in-place rule: same type, sizes, strides (as used) and total size."""
        return (self.type_name, self.sizes, self.effective_strides, self.total) == (
            other.type_name, other.sizes, other.effective_strides, other.total)


def minimum_bytes(type_name: str, sizes: Sequence[int], strides: Sequence[int] | None) -> int:
    """DMLCalcBufferTensorSize (SPEC 2), rounded up to 4 bytes."""
    elements = math.prod(sizes) if strides is None else sum((n - 1) * s for n, s in zip(sizes, strides)) + 1
    return -(-elements * SIZES[type_name] // 4) * 4


def judge_tensor(raw: RawTensor) -> Tensor | str:
    """The description a TensorDesc's arguments make, or why TensorDesc must refuse them."""
    type_name = parse_data_type(raw.data_type)
    if type_name is None:
        return "DataType"
    sizes = uint_list(raw.sizes, 1, UINT32_MAX)
    if sizes is None:
        return "Sizes"
    if not 1 <= len(sizes) <= 8:
        return "DimensionCount"
    if math.prod(sizes) > UINT32_MAX:
        return "Sizes (element count)"
    strides = None
    if raw.strides is not None:
        strides = uint_list(raw.strides, 0, UINT32_MAX)
        if strides is None or len(strides) != len(sizes):
            return "Strides"
    minimum = minimum_bytes(type_name, sizes, strides)
    if minimum > UINT64_MAX:
        return "TotalTensorSizeInBytes (the minimum exceeds UINT64)"
    total = minimum
    if raw.total is not None:
        if not is_integer_value(raw.total) or not minimum <= int(raw.total) <= UINT64_MAX:  # type: ignore[arg-type]
            return "TotalTensorSizeInBytes"
        total = int(raw.total)  # type: ignore[arg-type]
    a = raw.alignment
    if not is_integer_value(a) or not 0 <= int(a) <= UINT32_MAX:  # type: ignore[arg-type]
        return "GuaranteedBaseOffsetAlignment"
    alignment = int(a)  # type: ignore[arg-type]
    if alignment and (alignment & (alignment - 1) or alignment < SIZES[type_name]):
        return "GuaranteedBaseOffsetAlignment"
    flags = parse_flags(raw.flags)
    if flags is None:
        return "Flags"
    return Tensor(type_name, sizes, strides, total, alignment, flags == 1)


def elements_collide(tensor: Tensor) -> bool:
    """Whether two index vectors of an output reach one element (semantics: such outputs are rejected).

    Dimensions of size 1 never move. Strides that nest (each beyond the reach of the smaller ones) are
    disjoint; others are checked exactly up to EXACT_OVERLAP_LIMIT elements and refused above it.
    """
    dims = sorted((s, n) for n, s in zip(tensor.sizes, tensor.effective_strides) if n > 1)
    if any(s == 0 for s, _ in dims):
        return True
    reach, nested = 0, True
    for stride, size in dims:
        if stride <= reach:
            nested = False
            break
        reach += (size - 1) * stride
    if nested:
        return False
    if tensor.element_count > EXACT_OVERLAP_LIMIT:
        return True
    offsets = np.zeros(1, dtype=np.int64)
    for stride, size in dims:
        offsets = (offsets[:, None] + np.arange(size, dtype=np.int64)[None, :] * stride).reshape(-1)
    return np.unique(offsets).size != offsets.size


# --- operator descriptions (SPEC 4-8) --------------------------------------------------------------------

@dataclass
class RawOperator:
    """An operator description as given: tensors (RawTensor, None or anything) and fields (anything)."""

    operator: str
    tensors: dict[str, object]
    fields: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Verdict:
    """The levels that accept a description (empty: invalid at every level), and why not, if not."""

    levels: tuple[str, ...]
    problem: str = ""

    def accepts(self, level: str) -> bool:
        return level in self.levels

    def required_level(self, level: str) -> str | None:
        """The lowest level above ``level`` that accepts the description, if any."""
        higher = [v for v in self.levels if level_index(v) > level_index(level)]
        return higher[0] if higher else None


def _scale_bias_problem(value: object, type_name: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, dml.ScaleBias):
        pair: tuple[object, object] = (value.scale, value.bias)
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        pair = (value[0], value[1])
    else:
        return "ScaleBias is not a ScaleBias or a pair"
    if type_name not in FLOAT_NAMES:
        return "ScaleBias on an integer tensor"
    if not all(is_number(v) for v in pair):
        return "ScaleBias fields are not numbers"
    return None


def scale_bias_values(value: object) -> tuple[float, float] | None:
    """A valid ScaleBias as its two float32 fields."""
    if value is None:
        return None
    pair = (value.scale, value.bias) if isinstance(value, dml.ScaleBias) else value
    return float_field(pair[0]), float_field(pair[1])  # type: ignore[index]


def _same_sizes(a: Tensor, b: Tensor) -> bool:
    return a.sizes == b.sizes


def _unary_problem(op: RawOperator, x: Tensor, y: Tensor) -> str | None:
    if x.type_name != y.type_name:
        return "OutputTensor.DataType differs from InputTensor's"
    if not _same_sizes(x, y):
        return "OutputTensor.Sizes differ from InputTensor's"
    problem = _scale_bias_problem(op.fields.get("scale_bias"), y.type_name)
    if problem:
        return problem
    if op.operator == "ELEMENT_WISE_CLIP1":
        if parse_data_type(op.fields["min_max_data_type"]) != y.type_name:
            return "MinMaxDataType is not the output's type"
        for name in ("min", "max"):
            problem = typed_bound_problem(op.fields[name], y.type_name)
            if problem:
                return f"{name}: {problem}"
        return None
    for name in ("min", "max") if op.operator == "ELEMENT_WISE_CLIP" else ("min",):
        value = op.fields[name]
        if not is_number(value):
            return f"{name} is not a number"
        if y.type_name not in FLOAT_NAMES and math.isnan(float_field(value)):
            return f"{name} is NaN on an integer tensor"
    return None


def _dequantize_problem(x: Tensor, scale: Tensor, zero_point: Tensor | None, y: Tensor) -> str | None:
    if scale.type_name != y.type_name:
        return "OutputTensor.DataType differs from ScaleTensor's"
    others = [scale, y] + ([zero_point] if zero_point is not None else [])
    if not all(_same_sizes(x, t) for t in others):
        return "sizes differ"
    if zero_point is not None and zero_point.type_name != x.type_name:
        return "ZeroPointTensor.DataType differs from InputTensor's"
    return None


def argmin_axes(value: object, rank: int) -> tuple[int, ...] | None:
    """ARGMIN's Axes: a non-empty list, tuple or 1-D ndarray of distinct integers in [0, rank - 1]."""
    axes = uint_list(value, 0, rank - 1)
    if not axes or len(set(axes)) != len(axes):
        return None
    return axes


def _argmin_problem(op: RawOperator, x: Tensor, y: Tensor) -> str | None:
    axes = argmin_axes(op.fields["axes"], len(x.sizes))
    if axes is None:
        return "Axes"
    if parse_direction(op.fields["axis_direction"]) is None:
        return "AxisDirection"
    if len(y.sizes) != len(x.sizes):
        return "OutputTensor.DimensionCount"
    if any(m != (1 if k in axes else n) for k, (n, m) in enumerate(zip(x.sizes, y.sizes))):
        return "OutputTensor.Sizes"
    reduced = math.prod(x.sizes[a] for a in axes)
    is_integer = y.type_name in TYPES and TYPES[y.type_name].integer_range is not None
    if is_integer and reduced - 1 > integer_range(y.type_name)[1]:
        return "OutputTensor.DataType cannot hold every index"
    return None


def relation_problem(op: RawOperator) -> str | None:
    """The first rule broken at every feature level (the tensors' relations, the fields), or None."""
    tensors: dict[str, Tensor | None] = {}
    for name in TENSOR_FIELDS[op.operator]:
        value = op.tensors.get(name)
        if value is None and name in OPTIONAL_FIELDS:
            tensors[name] = None
            continue
        if not isinstance(value, Tensor):
            return f"{name} is not a tensor description"
        tensors[name] = value
    if op.operator == "ELEMENT_WISE_DEQUANTIZE_LINEAR":
        x, scale, zp, y = (tensors[n] for n in TENSOR_FIELDS[op.operator])
        problem = _dequantize_problem(x, scale, zp, y)  # type: ignore[arg-type]
    elif op.operator == "ARGMIN":
        problem = _argmin_problem(op, tensors["InputTensor"], tensors["OutputTensor"])  # type: ignore[arg-type]
    else:
        problem = _unary_problem(op, tensors["InputTensor"], tensors["OutputTensor"])  # type: ignore[arg-type]
    if problem:
        return problem
    if any(t is not None and t.owned_by_dml for t in tensors.values()):
        return "OWNED_BY_DML on an operator without weights"
    if elements_collide(tensors["OutputTensor"]):  # type: ignore[arg-type]
        return "OutputTensor reaches one element twice"
    return None


def table_problem(op: RawOperator, level: str) -> str | None:
    """The first rule of the support table in force at ``level`` that the tensors break, or None."""
    row = row_at(op.operator, level)
    if row is None:
        return f"not available at {level}"
    for name in TENSOR_FIELDS[op.operator]:
        tensor = op.tensors.get(name)
        if tensor is None:
            if name in row.may_be_absent:
                continue
            return f"{name} is required at {level}"
        assert isinstance(tensor, Tensor)
        low, high = row.dimensions
        if not low <= len(tensor.sizes) <= high:
            return f"{name}.DimensionCount at {level}"
        if tensor.type_name not in row.types[name]:
            return f"{name}.DataType at {level}"
    return None


def judge_operator(op: RawOperator) -> Verdict:
    """The levels accepting ``op`` (whose tensors are judged Tensor objects, None, or junk)."""
    problem = relation_problem(op)
    if problem:
        return Verdict((), problem)
    levels = tuple(level for level in LEVELS if table_problem(op, level) is None)
    return Verdict(levels, "" if levels else str(table_problem(op, LEVELS[-1])))


# --- bindings (SPEC 2 and 3, docs/semantics.md) ----------------------------------------------------------

@dataclass(frozen=True)
class RawBinding:
    """One entry of execute's lists: ``kind`` "binding" (BufferBinding), "buffer" (the Buffer itself),
    "none" (None) or "junk" (``junk`` itself)."""

    kind: str
    buffer: int = 0  # index into the case's buffers
    offset: object = 0
    size: object = None
    junk: object = None


def binding_problem(operator: str, tensors: dict[str, Tensor | None], buffer_sizes: Sequence[int],
                    inputs: object, outputs: object) -> str | None:
    """Why execute must refuse these bindings (a BindingError), or None.

    ``inputs`` and ``outputs`` are lists of RawBinding (or junk instead of a list).
    """
    fields = TENSOR_FIELDS[operator]
    groups = ((inputs, [f for f in fields if f not in OUTPUT_FIELDS]), (outputs, [f for f in fields if f in OUTPUT_FIELDS]))
    placed: dict[str, tuple[int, int]] = {}  # field -> (buffer, offset) of bound tensors
    for bindings, names in groups:
        if not isinstance(bindings, list) or len(bindings) != len(names):
            return "binding count"
        for name, binding in zip(names, bindings):
            tensor = tensors[name]
            if tensor is None:
                if binding.kind != "none":
                    return f"{name} is absent and must be bound as None"
                continue
            if binding.kind == "none" or binding.kind == "junk":
                return f"{name} is not bound to a buffer"
            size_of_buffer = buffer_sizes[binding.buffer]
            offset, size = (0, None) if binding.kind == "buffer" else (binding.offset, binding.size)
            alignment = max(16, tensor.alignment)
            if not (isinstance(offset, int) and not isinstance(offset, bool)) or offset < 0 or offset % alignment:
                return f"{name}.Offset"
            if size is None:
                size = size_of_buffer - offset
            if not (isinstance(size, int) and not isinstance(size, bool)) or size < tensor.total:
                return f"{name}.SizeInBytes"
            if offset + size > size_of_buffer:
                return f"{name} outside its buffer"
            placed[name] = (binding.buffer, offset)
    return _overlap_problem(operator, tensors, placed)


def _overlap_problem(operator: str, tensors: dict[str, Tensor | None], placed: dict[str, tuple[int, int]]) -> str | None:
    """An output may overlap nothing, except its InputTensor exactly for in-place operators."""
    output = "OutputTensor"
    buffer, start = placed[output]
    end = start + tensors[output].total  # type: ignore[union-attr]
    for name, (other_buffer, other_start) in placed.items():
        if name == output or other_buffer != buffer:
            continue
        other_end = other_start + tensors[name].total  # type: ignore[union-attr]
        if not (start < other_end and other_start < end):
            continue
        exact_alias = (operator in IN_PLACE and name == "InputTensor" and start == other_start
                       and tensors[output].same_layout(tensors[name]))  # type: ignore[union-attr, arg-type]
        if not exact_alias:
            return f"OutputTensor overlaps {name}"
    return None
