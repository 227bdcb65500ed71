"""Functional calls (clip, threshold, dequantize_linear, quantize_linear, argmin, argmax) and what each must do.

``calls()`` draws a call: the function, its array (every dtype, rank 0-4, every layout), its other
arguments (valid, borderline and junk), ``out=`` (none, a view in a guard-filled owner, the input
itself, an exact alias, a partial overlap, or junk) and ``device=``. ``expect()`` says, from the SPEC
and docs/semantics.md alone, whether the call must succeed (and with which bits), must raise an
OpenDMLError, or may do either (a partial overlap, a differently typed zero point that fits): in every
case nothing but the elements of ``out`` may change.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st

import opendml as dml
from tests.elementwise_oracle import TYPES, argmin_tensor, clamp_element, dequantize_element, quantize_element

from .arrays import INPUT_LAYOUTS, OUTPUT_LAYOUTS, View, element_values, fill, make_view, shapes, type_of
from .descriptions import SPECIAL_BOUNDS
from .rules import (
    FLOAT_NAMES,
    LEVELS,
    exact,
    float_field,
    float_field_bound,
    functional_integer_bound,
    is_integer_value,
    is_number,
    level_index,
    parse_data_type,
    parse_direction,
    parse_nan_policy,
    row_at,
)

FUNCTIONS = ("clip", "threshold", "dequantize_linear", "quantize_linear", "argmin", "argmax")
NEWEST = LEVELS[-1]
Index = tuple[int, ...]

DTYPES = ("float32", "float16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
JUNK_DTYPES = ("float64", "bool", "complex64")
INDEX_TYPES = ("INT64", "INT32", "UINT64", "UINT32")


class Junk:
    """A junk argument, with a readable repr."""

    def __init__(self, value: object, label: str) -> None:
        self.value, self.label = value, label

    def __repr__(self) -> str:
        return f"<junk {self.label} {self.value!r:.60}>"


@dataclass
class Call:
    function: str
    x: View | Junk
    args: dict[str, Any]  # keyword arguments besides x, out and device; Views stand for arrays
    out: View | Junk | None = None
    alias: str = "separate"  # out is: "separate", "x" (the same object), "twin" (same memory), "overlap"
    device: object = None  # None, "cpu", a level label as ("level", L), or Junk
    views: list[View] = field(default_factory=list)  # every View, for the memory checks

    def __repr__(self) -> str:
        return (f"Call({self.function}, x={self.x!r}, args={self.args!r}, out={self.out!r}, alias={self.alias}, "
                f"device={self.device!r})")


@dataclass
class Expected:
    """``verdict``: "accept", "reject" or "either"; for accepted calls the result's shape, dtype and values."""

    verdict: str
    reason: str = ""
    shape: tuple[int, ...] = ()
    dtype: np.dtype | None = None
    values: dict[Index, int | float] = field(default_factory=dict)


# --- drawing a call ----------------------------------------------------------------------------------------

OPERATOR_OF = {"clip": "ELEMENT_WISE_CLIP", "threshold": "ELEMENT_WISE_THRESHOLD",
               "dequantize_linear": "ELEMENT_WISE_DEQUANTIZE_LINEAR",
               "quantize_linear": "ELEMENT_WISE_QUANTIZE_LINEAR", "argmin": "ARGMIN", "argmax": "ARGMAX"}
ARG_REDUCTIONS = ("argmin", "argmax")
CLIP1_LEVEL = "5_0"  # ELEMENT_WISE_CLIP1's; the functional threshold runs INT64 and UINT64 through it


def draw_level(draw: st.DrawFn) -> object:
    """device=: mostly the default device, else "cpu" or a device at some feature level."""
    kind = draw(st.sampled_from(["default"] * 6 + ["cpu", "level", "level"]))
    if kind == "cpu":
        return "cpu"
    return ("level", draw(st.sampled_from(LEVELS))) if kind == "level" else None


def dtypes_for(function: str, level: str) -> tuple[str, ...]:
    """The NumPy dtypes of the arrays the function's operator takes at ``level`` (all, if none)."""
    operator = OPERATOR_OF[function]
    if function == "clip" and level_index(level) >= level_index(CLIP1_LEVEL):
        operator = "ELEMENT_WISE_CLIP1"
    row = row_at(operator, level)
    types = set(row.types["InputTensor"]) if row is not None else set()
    if function == "threshold" and level_index(level) >= level_index(CLIP1_LEVEL):
        types |= {"INT64", "UINT64"}  # threshold on them runs as CLIP1
    names = tuple(name for name in DTYPES if type_of(np.dtype(name)) in types)
    return names or DTYPES


def draw_array(draw: st.DrawFn, dtype_names: tuple[str, ...], seed: int, palette: Sequence[int | float] = (),
               shape: tuple[int, ...] | None = None, output: bool = False) -> View:
    """A filled view of one of the dtypes (sometimes big-endian, sometimes read-only)."""
    dtype = np.dtype(draw(st.sampled_from(dtype_names)))
    if dtype.itemsize > 1 and draw(st.integers(0, 9)) == 0:
        dtype = dtype.newbyteorder(">")
    shape = draw(shapes()) if shape is None else shape
    layout = draw(st.sampled_from(OUTPUT_LAYOUTS if output else INPUT_LAYOUTS))
    view = make_view(draw, dtype, shape, layout, seed)
    type_name = type_of(dtype)
    if type_name is not None and not output:
        fill(draw, view, type_name, palette)
    if not output and draw(st.integers(0, 5)) == 0:
        view.readonly = True
    return view


def draw_bound(draw: st.DrawFn, type_name: str, allow_none: bool) -> object:
    """A valid bound for an array of ``type_name``: any number (NaN on floats only), or None for clip."""
    choices = [st.floats(allow_nan=type_name in FLOAT_NAMES), st.floats(width=32, allow_nan=type_name in FLOAT_NAMES),
               st.sampled_from([v for v in SPECIAL_BOUNDS if type_name in FLOAT_NAMES or not _is_nan(v)]),
               st.integers(-(2**70), 2**70)]
    if allow_none:
        choices.append(st.none())
    return draw(st.one_of(choices))


def _is_nan(value: object) -> bool:
    return isinstance(value, (float, np.floating)) and math.isnan(value)


def draw_scale_bias(draw: st.DrawFn, type_name: str) -> object:
    if type_name not in FLOAT_NAMES or draw(st.booleans()):
        return None
    numbers = st.one_of(st.sampled_from([1.0, -1.0, 0.5, 3.0, 0.1, 0.0, -0.0, math.inf, math.nan]), st.floats(width=32))
    s, b = draw(numbers), draw(numbers)
    return draw(st.sampled_from([(s, b), dml.ScaleBias(s, b), [s, b]]))


@st.composite
def calls(draw: st.DrawFn) -> Call:
    """A valid call (valid for some level, at least), then perhaps one junk argument."""
    function = draw(st.sampled_from(FUNCTIONS))
    device = draw_level(draw)
    level = device_level(device) or NEWEST
    seeds = iter(range(draw(st.integers(0, 255)), 10**6, 37))
    args: dict[str, Any] = {}
    names = dtypes_for(function, level)
    type_name = type_of(np.dtype(draw(st.sampled_from(names))))
    assert type_name is not None
    if function in ("clip", "threshold"):
        args["min"] = draw_bound(draw, type_name, allow_none=function == "clip")
        if function == "clip":
            args["max"] = draw_bound(draw, type_name, allow_none=True)
        args["scale_bias"] = draw_scale_bias(draw, type_name)
    palette = _palette(args.get("min")) + _palette(args.get("max"))
    if function == "quantize_linear":
        palette = _quantize_scale_first(draw, args, type_name)
    x: View | Junk = draw_array(draw, (np.dtype(TYPES[type_name].numpy).name,), next(seeds), palette)
    call = Call(function, x, args, device=device, views=[x])  # type: ignore[list-item]
    if function == "dequantize_linear":
        _dequantize_args(draw, call, level, seeds)
    elif function == "quantize_linear":
        _quantize_args(draw, call, type_name, seeds)
    elif function in ARG_REDUCTIONS:
        _argmin_args(draw, call)
    if draw(st.integers(0, 3)) == 0:
        _add_junk(draw, call, next(seeds))
    _draw_out(draw, call, next(seeds))
    return call


def _palette(bound: object) -> list[int | float]:
    """Elements that tie with a bound as given and as truncated (where they fit the array's type)."""
    if not is_number(bound):
        return []
    value = exact(bound)
    if isinstance(value, int):
        return [value] if abs(value) < 2**64 else []
    return [value, float(math.trunc(value)), math.trunc(value)] if math.isfinite(value) else [value]


def _operand_shape(draw: st.DrawFn, x: View) -> tuple[int, ...]:
    """A shape that broadcasts against x's: some axes kept, others 1, leading ones dropped."""
    keep = [draw(st.booleans()) for _ in x.shape]
    shape = tuple(n if k else 1 for n, k in zip(x.shape, keep))
    return shape[draw(st.integers(0, len(shape))):]


def _dequantize_args(draw: st.DrawFn, call: Call, level: str, seeds: Any) -> None:
    x = call.x
    assert isinstance(x, View)
    floats = ("float32", "float16") if level_index(level) >= level_index("6_0") else ("float32",)
    kind = draw(st.sampled_from(["array", "array", "python", "numpy scalar"]))
    if kind == "python":
        call.args["scale"] = draw(st.one_of(st.floats(width=32), st.integers(-3, 3)))
    elif kind == "numpy scalar":
        call.args["scale"] = np.dtype(draw(st.sampled_from(floats))).type(draw(st.floats(width=16)))
    else:
        call.args["scale"] = draw_array(draw, floats, next(seeds), shape=_operand_shape(draw, x))
        call.views.append(call.args["scale"])
    x_name = np.dtype(TYPES[type_of(x.dtype)].numpy).name  # type: ignore[index]
    low, high = int(np.iinfo(x_name).min), int(np.iinfo(x_name).max)
    kind = draw(st.sampled_from(["none", "python", "numpy", "array", "array"]))
    if kind == "python":
        call.args["zero_point"] = draw(st.integers(low, high))
    elif kind == "numpy":
        call.args["zero_point"] = np.dtype(x_name).type(draw(st.integers(low, high)))
    elif kind == "array":
        call.args["zero_point"] = draw_array(draw, (x_name,), next(seeds), shape=_operand_shape(draw, x))
        call.views.append(call.args["zero_point"])
    else:
        call.args["zero_point"] = None


def _argmin_args(draw: st.DrawFn, call: Call) -> None:
    rank = max(len(call.x.shape), 1)  # type: ignore[union-attr]
    axis = st.integers(-rank, rank - 1)
    call.args["axes"] = draw(st.one_of(st.none(), axis, st.lists(axis, min_size=1, max_size=rank),
                                       st.lists(axis, min_size=1, max_size=rank).map(tuple)))
    call.args["axis_direction"] = draw(st.sampled_from(["INCREASING", "DECREASING", 0, 1, dml.AxisDirection.DECREASING,
                                                        "DML_AXIS_DIRECTION_DECREASING"]))
    call.args["output_type"] = draw(st.sampled_from([*INDEX_TYPES, dml.DataType.UINT32, np.dtype("int32")]))
    policy = draw(st.sampled_from([ABSENT, ABSENT, "IGNORE", "PROPAGATE", "PROPAGATE", 0, 1, dml.NanPolicy.PROPAGATE,
                                   "nan_policy_propagate"]))
    if policy is not ABSENT:
        call.args["nan_policy"] = policy


ABSENT = object()  # a keyword argument left out
HALVES = (0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 127.5, 128.5, -128.5, 255.5, 3.0, -7.0)


def _quantize_scale_first(draw: st.DrawFn, args: dict[str, Any], type_name: str) -> list[int | float]:
    """A number as the scale (sometimes; else an array, drawn later), and elements that divide by it to
    exact halves and to the ends of INT8 and UINT8 (the rounding and saturation cases)."""
    if draw(st.integers(0, 2)) == 0:
        return []
    scale = draw(st.one_of(st.sampled_from([1.0, 0.5, 0.25, 2.0, -1.0, 0.0, -0.0, 3.0, 1e-3, math.inf, math.nan]),
                           st.floats(width=32), st.integers(-3, 3)))
    args["scale"] = scale
    if not is_number(scale) or not math.isfinite(float(scale)) or float(scale) == 0:
        return []
    return [h * float(scale) for h in HALVES] + ([int(h * scale) for h in HALVES] if type_name == "INT32" else [])


def _quantize_args(draw: st.DrawFn, call: Call, type_name: str, seeds: Any) -> None:
    """A scale of the input's scale type (a number, a NumPy scalar or an array that broadcasts), a zero point
    (none, a number, a typed INT8/UINT8 scalar or array), and output_type (none, agreeing or not)."""
    x = call.x
    assert isinstance(x, View)
    scale_name = "float16" if type_name == "FLOAT16" else "float32"
    if "scale" not in call.args:
        if draw(st.booleans()):
            call.args["scale"] = np.dtype(scale_name).type(draw(st.floats(width=16)))
        else:
            call.args["scale"] = draw_array(draw, (scale_name,), next(seeds), shape=_operand_shape(draw, x))
            call.views.append(call.args["scale"])
    out_name = draw(st.sampled_from(["uint8", "int8"]))
    kind = draw(st.sampled_from(["none", "python", "numpy", "array", "array"]))
    if kind == "python":
        call.args["zero_point"] = draw(st.integers(-128, 255))
    elif kind == "numpy":
        call.args["zero_point"] = np.dtype(out_name).type(draw(st.integers(*_range(out_name))))
    elif kind == "array":
        call.args["zero_point"] = draw_array(draw, (out_name,), next(seeds), shape=_operand_shape(draw, x))
        call.views.append(call.args["zero_point"])
    else:
        call.args["zero_point"] = None
    output_type = draw(st.sampled_from([ABSENT, ABSENT, None, "UINT8", "INT8", dml.DataType.INT8, np.dtype(out_name)]))
    if output_type is not ABSENT:
        call.args["output_type"] = output_type


def _range(dtype_name: str) -> tuple[int, int]:
    info = np.iinfo(dtype_name)
    return int(info.min), int(info.max)


JUNK_ARGUMENTS: dict[str, tuple[object, ...]] = {
    "min": ("1", [1.0], 1j, True, None, math.nan, object()),
    "max": ("1", [1.0], 1j, True, math.nan),
    "scale_bias": ((1.0,), "ab", (1.0, 2.0, 3.0), (1.0, "b"), dml.ScaleBias("a", 1.0), (2.0, 0.5)),
    "scale": (True, "0.5", None, 1j, object()),
    "zero_point": (True, np.True_, "3", 1j, object(), 1.5, 2.0, -1, 300, 70000, 2**32, -(2**63) - 1,
                   np.int16(300), np.int16(-1), np.int16(5), np.int64(2**40)),
    "axes": (1.5, "0", [1.5], [True], True, [], [0, 0], [-9], [9], {0: 0}, {0}, np.array(0), np.array([0])),
    "axis_direction": (2, -1, "SIDEWAYS", None, 1.0, True),
    "output_type": ("INT16", "FLOAT32", "UNKNOWN", None, 3, "INT8"),
    "nan_policy": ("SOMETIMES", 2, -1, None, 1.5, True, "DML_NAN_POLICY_PROPAGATE"),
}


def _add_junk(draw: st.DrawFn, call: Call, seed: int) -> None:
    """One bad argument: junk for a field, device=, or x itself (a junk dtype, or not an array)."""
    fields = [f for f in JUNK_ARGUMENTS if f in call.args or (f == "nan_policy" and call.function in ARG_REDUCTIONS)]
    target = draw(st.sampled_from([*fields, *fields, "device", "x dtype", "x"]))
    if target == "device":
        call.device = Junk(draw(st.sampled_from([0, "tpu", 1.5, "", object(), b"cpu"])), "device")
    elif target == "x dtype":
        x = draw_array(draw, JUNK_DTYPES, seed)
        call.x, call.views[0] = x, x
    elif target == "x":
        call.x = Junk(draw(st.sampled_from([None, "abc", [[1, 2], [3]], {"a": 1}])), "x")
        call.views.pop(0)
    elif target == "scale" and draw(st.booleans()) and isinstance(call.x, View):
        scale = draw_array(draw, ("float64", "int32", "float16"), seed, shape=_operand_shape(draw, call.x))
        call.args["scale"] = scale
        call.views.append(scale)
    elif target == "zero_point" and draw(st.booleans()):
        zero_point = draw_array(draw, ("int8", "int16", "uint8", "int32", "uint16"), seed, shape=draw(shapes(max_rank=3)))
        call.args["zero_point"] = zero_point  # another type, or a shape that may not broadcast
        call.views.append(zero_point)
    else:
        call.args[target] = copy.deepcopy(draw(st.sampled_from(JUNK_ARGUMENTS[target])))  # never the shared one


def _shifted(draw: st.DrawFn, x: View) -> View:
    """x's layout a few bytes away in the same memory (a partial overlap), where the owner has room."""
    extents = [(n - 1) * s for n, s in zip(x.shape, x.strides) if n]
    low, high = sum(e for e in extents if e < 0), sum(e for e in extents if e > 0)
    size = x.dtype.itemsize
    offsets = [x.offset + shift for shift in (1, size, -size, 2 * size, -1)
               if x.offset + shift + low >= 0 and x.offset + shift + high + size <= x.owner.size and shift]
    offset = draw(st.sampled_from(offsets)) if offsets else x.offset
    return View(x.owner, x.dtype, x.shape, offset, x.strides, x.layout)


def _draw_out(draw: st.DrawFn, call: Call, seed: int) -> None:
    """out=: none, a view of the expected shape and type (or a wrong one), the input itself, or junk."""
    expected = expect(call, values=False)
    kind = draw(st.sampled_from(["none"] * 5 + ["view"] * 7 + ["x", "twin", "overlap", "wrong", "readonly", "junk"]))
    x = call.x
    if kind in ("x", "twin", "overlap") and isinstance(x, View):
        call.alias = kind
        if kind == "x":
            call.out = x
        elif kind == "twin":
            call.out = View(x.owner, x.dtype, x.shape, x.offset, x.strides, x.layout)
        else:
            call.out = _shifted(draw, x)
            call.alias = "overlap" if call.out.offset != x.offset else "twin"
        return
    if kind == "junk":  # not an array: nested lists of the right shape and kind among them
        shaped = np.zeros(expected.shape, expected.dtype).tolist() if expected.dtype is not None else [0.0] * 3
        call.out = Junk(draw(st.sampled_from([shaped, shaped, (0, 0), "out", 5])), "out")
        return
    if kind == "none" or expected.dtype is None:
        return
    dtype, shape = expected.dtype, expected.shape
    if kind == "wrong":
        if draw(st.booleans()):
            dtype = np.dtype(draw(st.sampled_from(["float64", "int8", "float16", "uint64"])))
        else:
            shape = (*shape, 2) if draw(st.booleans()) or not shape else shape[:-1]
    if dtype.itemsize > 1 and draw(st.integers(0, 12)) == 0:
        dtype = dtype.newbyteorder(">")
    view = make_view(draw, dtype, shape, draw(st.sampled_from(OUTPUT_LAYOUTS)), seed)
    view.readonly = kind == "readonly"
    call.out = view
    call.views.append(view)


# --- what a call must do ------------------------------------------------------------------------------------

def device_level(device: object) -> str | None:
    """The feature level a call runs at, or None when ``device=`` is junk."""
    if device is None or device == "cpu":
        return NEWEST
    if isinstance(device, tuple):
        return device[1]
    return None


def supported(operator: str, level: str, types: dict[str, str]) -> bool:
    """Whether the support table in force at ``level`` takes these types (ranks are padded to 4 by the
    functional API where a row needs 4, and are at most 4 here)."""
    row = row_at(operator, level)
    return row is not None and all(t in row.types[name] for name, t in types.items())


def expect(call: Call, values: bool = True) -> Expected:
    level = device_level(call.device)
    if level is None:
        return Expected("reject", "device= is junk")
    if not isinstance(call.x, View):
        return Expected("reject", "x is not an array")
    type_name = type_of(call.x.dtype)
    if type_name is None:
        return Expected("reject", f"x has dtype {call.x.dtype}")
    judge = {"clip": _clip, "threshold": _threshold, "dequantize_linear": _dequantize, "quantize_linear": _quantize,
             "argmin": _arg_reduction, "argmax": _arg_reduction}[call.function]
    expected = judge(call, level, type_name, values)
    if expected.verdict == "reject" or expected.dtype is None:
        return expected
    return _judge_out(call, expected)


def _judge_out(call: Call, expected: Expected) -> Expected:
    out = call.out
    if out is None:
        return expected
    if isinstance(out, Junk):
        return Expected("reject", "out= is not an array")
    assert expected.dtype is not None
    if out.shape != expected.shape or out.dtype.newbyteorder("=") != expected.dtype.newbyteorder("="):
        return Expected("reject", "out= has the wrong shape or dtype")
    if out.readonly or (call.alias == "x" and call.x.readonly):  # type: ignore[union-attr]
        return Expected("reject", "out= is read-only")
    self_overlapping = call.alias != "separate" and call.x.layout in ("broadcast", "repeated")  # type: ignore[union-attr]
    if call.alias == "overlap" or out.dtype.byteorder == ">" or self_overlapping:
        expected.verdict = "either" if expected.verdict == "accept" else expected.verdict
        expected.reason = "out= overlaps x partially or itself, or is big-endian: correct or refused"
    elif call.alias in ("x", "twin") and call.function not in ("clip", "threshold"):  # not in-place operators
        expected.verdict = "either"
    return expected


def _scale_bias(value: object, type_name: str) -> tuple[str | None, tuple[float, float] | None]:
    if value is None:
        return None, None
    if isinstance(value, dml.ScaleBias):
        pair: tuple[object, object] = (value.scale, value.bias)
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        pair = (value[0], value[1])
    else:
        return "scale_bias is not a pair", None
    if type_name not in FLOAT_NAMES:
        return "scale_bias on an integer array", None
    if not all(is_number(v) for v in pair):
        return "scale_bias fields are not numbers", None
    return None, (float_field(pair[0]), float_field(pair[1]))


def _result(call: Call, shape: tuple[int, ...], type_name: str, values: dict[Index, int | float]) -> Expected:
    return Expected("accept", "", shape, np.dtype(TYPES[type_name].numpy), values)


def _x_values(call: Call, type_name: str, values: bool) -> dict[Index, int | float]:
    return element_values(call.x.array(), type_name) if values else {}  # type: ignore[union-attr]


def _clip(call: Call, level: str, t: str, values: bool) -> Expected:
    exact_bounds = t not in FLOAT_NAMES and level_index(level) >= level_index("5_0")
    if not supported("ELEMENT_WISE_CLIP1" if exact_bounds else "ELEMENT_WISE_CLIP", level,
                     {"InputTensor": t, "OutputTensor": t}):
        return Expected("reject", f"{t} is not supported at {level}")
    problem, scale_bias = _scale_bias(call.args["scale_bias"], t)
    if problem:
        return Expected("reject", problem)
    bounds = []
    for name, absent in (("min", -math.inf), ("max", math.inf)):
        value = call.args[name]
        if value is not None and not is_number(value):
            return Expected("reject", f"{name} is not a number")
        try:
            if exact_bounds:
                bounds.append(functional_integer_bound(value, t))
            else:
                bounds.append(float_field_bound(absent if value is None else value, t))
        except ValueError:
            return Expected("reject", f"{name} is NaN on an integer array")
    x = _x_values(call, t, values)
    return _result(call, call.x.shape, t, {i: clamp_element(v, t, scale_bias, *bounds) for i, v in x.items()})  # type: ignore[union-attr]


def _threshold(call: Call, level: str, t: str, values: bool) -> Expected:
    # INT64 and UINT64 run as CLIP1 (docs/semantics.md), with THRESHOLD's rules and bits, where the level has it.
    operator = "ELEMENT_WISE_CLIP1" if t in ("INT64", "UINT64") else "ELEMENT_WISE_THRESHOLD"
    if not supported(operator, level, {"InputTensor": t, "OutputTensor": t}):
        return Expected("reject", f"{t} is not supported at {level}")
    problem, scale_bias = _scale_bias(call.args["scale_bias"], t)
    if problem:
        return Expected("reject", problem)
    value = call.args["min"]
    if not is_number(value):
        return Expected("reject", "min is not a number")
    try:
        low = float_field_bound(value, t)
    except ValueError:
        return Expected("reject", "min is NaN on an integer array")
    x = _x_values(call, t, values)
    return _result(call, call.x.shape, t, {i: clamp_element(v, t, scale_bias, low, None) for i, v in x.items()})  # type: ignore[union-attr]


def _zero_point(value: object, t: str) -> tuple[str, Any]:
    """("ok" | "either" | "reject", the zero point as an array of x's type, or a reason)."""
    low, high = TYPES[t].integer_range  # type: ignore[misc]
    if value is None:
        return "ok", None
    if isinstance(value, View):
        zt = type_of(value.dtype)
        array = value.array()
        if zt is None or TYPES[zt].is_float:
            return "reject", "a zero point array that is not an integer array"
        fits = all(low <= int(v) <= high for v in array.reshape(-1)) if array.size else True
        if zt == t:
            return "ok", array
        return ("either" if fits else "reject"), (array.astype(TYPES[t].numpy) if fits else "does not fit")
    if isinstance(value, (bool, np.bool_)) or not is_number(value):
        return "reject", "a zero point that is not a number"
    v = exact(value)
    if isinstance(v, float):
        if not v.is_integer():
            return "reject", "a zero point that is not an integer"
        v = int(v)
        verdict = "either"
    elif isinstance(value, np.integer) and type_of(value.dtype) != t:
        verdict = "either"
    else:
        verdict = "ok"
    if not low <= v <= high:
        return "reject", f"a zero point {v} outside {t}"
    return verdict, np.array(v, TYPES[t].numpy)


def _broadcast(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray | None
               ) -> tuple[tuple[int, ...], np.ndarray, np.ndarray, np.ndarray | None] | None:
    """The NumPy broadcast of a quantization's operands (shape, x, scale, zero point), None where they do not."""
    operands = [x, scale] + ([zero_point] if zero_point is not None else [])
    try:
        shape = tuple(np.broadcast_shapes(*(np.shape(a) for a in operands)))
    except ValueError:
        return None
    zs = None if zero_point is None else np.broadcast_to(zero_point, shape)
    return shape, np.broadcast_to(x, shape), np.broadcast_to(scale, shape), zs

def _dequantize(call: Call, level: str, t: str, values: bool) -> Expected:
    scale = call.args["scale"]
    loose = isinstance(scale, bool)  # True as a scale: read as 1.0 (a Python int) or refused
    if isinstance(scale, View):
        st_name = type_of(scale.dtype)
        scale_array: Any = scale.array()
    elif isinstance(scale, (int, float)):  # a Python number (a boolean too, loosely) becomes a float32
        st_name, scale_array = "FLOAT32", np.array(float(scale), np.float32)
    else:
        st_name, scale_array = type_of(np.asarray(scale).dtype), np.asarray(scale)
    if st_name is None:
        return Expected("reject", "scale is not FLOAT32 or FLOAT16")
    if not supported("ELEMENT_WISE_DEQUANTIZE_LINEAR", level,
                     {"InputTensor": t, "ScaleTensor": st_name, "OutputTensor": st_name}):
        return Expected("reject", f"{t} with a {st_name} scale is not supported at {level}")
    verdict, zero_point = _zero_point(call.args["zero_point"], t)
    if verdict == "reject":
        return Expected("reject", zero_point)
    broadcast = _broadcast(call.x.array(), scale_array, zero_point)  # type: ignore[union-attr]
    if broadcast is None:
        return Expected("reject", "the operands do not broadcast")
    shape, xs, ss, zs = broadcast
    expected = _result(call, shape, st_name, {})
    if values:
        expected.values = {i: dequantize_element(int(xs[i]), float(ss[i]), None if zs is None else int(zs[i]), st_name)
                           for i in np.ndindex(*shape)}
    if verdict == "either" or loose:
        expected.verdict, expected.reason = "either", "a zero point of another type that fits, or a boolean scale"
    return expected


def _axes(value: object, rank: int) -> tuple[str, tuple[int, ...]]:
    if value is None:
        return "ok", tuple(range(rank))
    verdict = "ok"
    if isinstance(value, np.ndarray) and value.ndim == 1:
        value = list(value)  # a 1-D array of axes is a sequence of them
    elif isinstance(value, (set, dict, np.ndarray)):  # sets, keys, a 0-d array: one reading or a refusal
        verdict, value = "either", value.tolist() if isinstance(value, np.ndarray) else list(value)
    listed = [value] if is_integer_value(value) else value
    if not isinstance(listed, (list, tuple)):
        return "reject", ()
    axes = []
    for axis in listed:
        if not is_integer_value(axis) or not -rank <= int(axis) < rank:
            return "reject", ()
        axes.append(int(axis) % rank)
    if not axes or len(set(axes)) != len(axes):
        return "reject", ()
    return verdict, tuple(sorted(axes))


def _arg_reduction(call: Call, level: str, t: str, values: bool) -> Expected:
    x: View = call.x  # type: ignore[assignment]
    operator = OPERATOR_OF[call.function]
    output_type = call.args["output_type"]
    out_name = parse_data_type(output_type)
    if out_name is None or not supported(operator, level, {"InputTensor": t, "OutputTensor": out_name}):
        return Expected("reject", f"{operator} of {t} into {output_type} is not supported at {level}")
    direction = parse_direction(call.args["axis_direction"])
    if direction is None:
        return Expected("reject", "axis_direction")
    policy = parse_nan_policy(call.args.get("nan_policy", "IGNORE"))
    if policy is None:
        return Expected("reject", "nan_policy")
    shape = x.shape or (1,)
    verdict, axes = _axes(call.args["axes"], len(shape))
    if verdict == "reject":
        return Expected("reject", "axes")
    out_shape = tuple(1 if k in axes else n for k, n in enumerate(shape))
    if math.prod(out_shape) and not math.prod(shape[a] for a in axes):
        return Expected("reject", "a reduction over no elements")
    expected = _result(call, out_shape if x.shape else (), out_name, {})
    if values and math.prod(out_shape):
        source = element_values(x.array().reshape(shape), t)
        found = argmin_tensor(source, shape, list(axes), direction, largest=call.function == "argmax",
                              propagate=policy == "PROPAGATE")
        expected.values = {i if x.shape else (): v for i, v in found.items()}
    if verdict == "either":
        expected.verdict = "either"
    return expected


def _typed_scale(scale: object, t: str) -> tuple[str | None, Any]:
    """(the scale's type, its value(s)) as quantize_linear reads it, or (None, why it is refused). A Python
    number takes the input's scale type (FLOAT16 for FLOAT16, else FLOAT32), refused if it overflows it."""
    if isinstance(scale, View):
        return type_of(scale.dtype), scale.array()
    if isinstance(scale, (bool, np.bool_)):
        return None, "a boolean scale"
    if isinstance(scale, (int, float)):
        name = "FLOAT16" if t == "FLOAT16" else "FLOAT32"
        try:
            value = float(scale)
        except OverflowError:
            return None, "a scale beyond every float type"
        with np.errstate(over="ignore"):
            typed = np.array(value, TYPES[name].numpy)
        if math.isfinite(value) and not np.isfinite(typed):
            return None, f"a scale that overflows {name}"
        return name, typed
    array = np.asarray(scale)
    return type_of(array.dtype), array


def _quantize(call: Call, level: str, t: str, values: bool) -> Expected:
    """SPEC 9 and docs/semantics.md: the output type is the zero point's own, else output_type, else UINT8."""
    st_name, scale_array = _typed_scale(call.args["scale"], t)
    if st_name is None:
        return Expected("reject", str(scale_array))
    requested = call.args.get("output_type")
    wanted = None if requested is None else parse_data_type(requested)
    if requested is not None and wanted is None:
        return Expected("reject", "output_type names no data type")
    zero_point = call.args["zero_point"]
    if zero_point is None or (isinstance(zero_point, (int, float)) and not isinstance(zero_point, bool)):
        out_name = wanted or "UINT8"
        if zero_point is not None:
            low, high = TYPES[out_name].integer_range or (0, -1)
            v = exact(zero_point)
            if isinstance(v, float) and not v.is_integer():
                return Expected("reject", "a zero point that is not an integer")
            if not low <= int(v) <= high:
                return Expected("reject", f"a zero point outside {out_name}")
            zero_point = np.array(int(v), TYPES[out_name].numpy)
    else:
        if isinstance(zero_point, (bool, np.bool_)):
            return Expected("reject", "a boolean zero point")
        zero_point = zero_point.array() if isinstance(zero_point, View) else np.asarray(zero_point)
        zt = type_of(zero_point.dtype)
        if zt is None:
            return Expected("reject", "a zero point of no DirectML type")
        if wanted is not None and wanted != zt:
            return Expected("reject", "output_type differs from the zero point's type")
        out_name = zt
    types = {"InputTensor": t, "ScaleTensor": st_name, "OutputTensor": out_name}
    if zero_point is not None or level_index(level) < level_index("6_2"):
        types["ZeroPointTensor"] = out_name  # below 6_2 an explicit zero is passed
    if not supported("ELEMENT_WISE_QUANTIZE_LINEAR", level, types):
        return Expected("reject", f"{types} is not supported at {level}")
    if st_name != ("FLOAT32" if t == "INT32" else t):
        return Expected("reject", f"a {st_name} scale for a {t} input")
    broadcast = _broadcast(call.x.array(), scale_array, zero_point)  # type: ignore[union-attr]
    if broadcast is None:
        return Expected("reject", "the operands do not broadcast")
    shape, xs, ss, zs = broadcast
    expected = _result(call, shape, out_name, {})
    if values:
        convert = float if TYPES[t].is_float else int
        expected.values = {i: quantize_element(convert(xs[i]), float(ss[i]), None if zs is None else int(zs[i]),
                                               out_name) for i in np.ndindex(*shape)}
    return expected
