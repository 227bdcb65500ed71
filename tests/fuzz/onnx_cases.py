"""Small ONNX models of Clip, Relu, ArgMin, ArgMax, DequantizeLinear and QuantizeLinear, and what opendml.onnx
must make of them.

A case is one node (sometimes two, the second reading the first's output) at a random opset, with
random types, shapes, attributes and operand sources (initializers, Constant nodes, graph inputs).
Valid cases follow ONNX's operator schemas and what opendml documents it maps (README's ONNX section,
docs/semantics.md). Some get one defect, each something opendml documents as refused: a type it does
not map, a NaN or two-element Clip bound, a bound computed by another node, an axis out of range, an
unknown operator, a scale of the wrong shape, a feed of the wrong type or shape, a QuantizeLinear output,
scale or precision DirectML has no kernel for. The expected values are computed here with ONNX's formulas
written out element by element: min(max(x, min), max) (min > max gives max), max(x, 0), the index of the
smallest or largest element (a NaN wins, as in ONNX's reference; ties by select_last_index), and
(x - zero_point) * scale and clamp(round(x / scale) + zero_point) in opendml's documented arithmetic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st
from onnx import ModelProto, TensorProto, helper, numpy_helper, shape_inference

from tests.elementwise_oracle import arg_of, dequantize_element, quantize_element, round_to

from .values import values_of

FLOAT, FLOAT16, DOUBLE, BFLOAT16 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BFLOAT16
INT8, INT16, INT32, INT64 = TensorProto.INT8, TensorProto.INT16, TensorProto.INT32, TensorProto.INT64
UINT8, UINT16, UINT32, UINT64 = TensorProto.UINT8, TensorProto.UINT16, TensorProto.UINT32, TensorProto.UINT64
INTEGERS = (INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64)
NAMES = {FLOAT: "FLOAT32", FLOAT16: "FLOAT16", INT8: "INT8", INT16: "INT16", INT32: "INT32", INT64: "INT64",
         UINT8: "UINT8", UINT16: "UINT16", UINT32: "UINT32", UINT64: "UINT64"}
FLT_MAX = float(np.finfo(np.float32).max)
NEWEST_OPSET = 25
VERSIONS = {"Clip": (1, 6, 11, 12, 13), "Relu": (1, 6, 13, 14), "ArgMin": (1, 11, 12, 13), "ArgMax": (1, 11, 12, 13),
            "DequantizeLinear": (10, 13, 19, 21, 23, 24, 25), "QuantizeLinear": (10, 13, 19, 21, 23, 24, 25)}


def np_type(onnx_type: int) -> np.dtype:
    return np.dtype(helper.tensor_dtype_to_np_dtype(onnx_type))


@dataclass
class Case:
    """An ONNX model under construction, its feeds, and what running it must give."""

    opset: int
    nodes: list[Any] = field(default_factory=list)
    inputs: list[Any] = field(default_factory=list)  # ValueInfoProto of graph inputs
    initializers: list[Any] = field(default_factory=list)
    outputs: list[Any] = field(default_factory=list)
    feeds: dict[str, np.ndarray] = field(default_factory=dict)
    expected: dict[str, np.ndarray] = field(default_factory=dict)
    defects: list[str] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    blocked: bool = False  # a node splits an axis into blocks (a second blocked node would have to nest them)

    def model(self) -> ModelProto:
        """The model, its output typed by ONNX's shape inference (left untyped where inference fails)."""
        graph = helper.make_graph(self.nodes, "fuzz", self.inputs, self.outputs, self.initializers)
        made = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)])
        try:
            made = shape_inference.infer_shapes(made, strict_mode=True)
        except Exception:  # a defect ONNX itself sees: opendml must refuse the model either way
            return made
        for k, output in enumerate(made.graph.output):
            if not output.type.HasField("tensor_type") and output.name in self.expected:
                expected = self.expected[output.name]  # older schemas infer nothing: typed by hand
                typed = helper.make_tensor_value_info(output.name, helper.np_dtype_to_tensor_dtype(expected.dtype),
                                                      expected.shape)
                made.graph.output[k].CopyFrom(typed)
        return made

    def __repr__(self) -> str:
        shapes = {k: (v.dtype.name, v.shape) for k, v in self.feeds.items()}
        return f"Case(opset {self.opset}, {'; '.join(self.summary)}, feeds {shapes}, defects {self.defects})"


def version_at(op: str, opset: int) -> int | None:
    found = [v for v in VERSIONS[op] if v <= opset]
    return found[-1] if found else None


# --- values ------------------------------------------------------------------------------------------------

@st.composite
def arrays(draw: st.DrawFn, onnx_type: int, shape: tuple[int, ...], palette: list[float | int] = ()) -> np.ndarray:  # type: ignore[assignment]
    dtype = np_type(onnx_type)
    count = math.prod(shape)
    if onnx_type in NAMES:
        values = draw(st.lists(values_of(NAMES[onnx_type], palette), min_size=count, max_size=count))
    else:  # DOUBLE, BFLOAT16: refused anyway
        values = draw(st.lists(st.floats(-4, 4), min_size=count, max_size=count))
    return np.array(values, dtype=np.float64 if onnx_type == BFLOAT16 else dtype).astype(dtype).reshape(shape)


@st.composite
def shapes(draw: st.DrawFn, min_rank: int = 0) -> tuple[int, ...]:
    rank = draw(st.integers(min_rank, 4))
    low = 0 if draw(st.integers(0, 11)) == 0 else 1
    return tuple(draw(st.integers(low, 4)) for _ in range(rank))


# --- the formulas (ONNX's, with opendml's documented arithmetic) --------------------------------------------

def clip_values(x: np.ndarray, low: float | int | None, high: float | int | None, onnx_type: int) -> np.ndarray:
    """min(max(x, low), high) element by element, in exact arithmetic, rounded once to x's type."""
    out = np.empty(x.shape, x.dtype)
    for index in np.ndindex(*x.shape):
        v = x[index].item()
        if low is not None and v < low:
            v = low
        if high is not None and v > high:
            v = high
        out[index] = round_to(float(v), NAMES[onnx_type]) if onnx_type in (FLOAT, FLOAT16) else v
    return out


def relu_values(x: np.ndarray) -> np.ndarray:
    out = x.copy()
    for index in np.ndindex(*x.shape):
        if x[index] < 0:
            out[index] = 0
    return out


def arg_values(x: np.ndarray, axis: int, keepdims: bool, last: bool, largest: bool) -> np.ndarray:
    """ONNX's ArgMin (ArgMax with ``largest``): a NaN wins, as in ONNX's reference."""
    moved = np.moveaxis(x, axis, -1)
    result = np.empty(moved.shape[:-1], np.int64)
    for index in np.ndindex(*moved.shape[:-1]):
        row = [v.item() for v in moved[index]]
        result[index] = arg_of(row, "DECREASING" if last else "INCREASING", largest=largest, propagate=True)
    return np.expand_dims(result, axis) if keepdims else result


def dequantize_values(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray | None, out_type: int) -> np.ndarray:
    """(x - zero_point) * scale with scale and zero point already expanded to x's shape."""
    out = np.empty(x.shape, np_type(out_type))
    for index in np.ndindex(*x.shape):
        zp = None if zero_point is None else int(zero_point[index])
        out[index] = dequantize_element(int(x[index]), float(scale[index]), zp, NAMES[out_type])
    return out


def quantize_values(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray | None, out_type: int) -> np.ndarray:
    """clamp(round(x / scale) + zero_point) with scale and zero point already expanded to x's shape."""
    out = np.empty(x.shape, np_type(out_type))
    for index in np.ndindex(*x.shape):
        zp = None if zero_point is None else int(zero_point[index])
        out[index] = quantize_element(x[index].item(), float(scale[index]), zp, NAMES[out_type])
    return out


def expand(operand: np.ndarray, shape: tuple[int, ...], axis: int, block: int) -> np.ndarray:
    """A per-tensor, per-axis or blocked operand over x's shape, as ONNX reads it."""
    if operand.size == 1:
        return np.broadcast_to(operand.reshape(()), shape)
    if block == 0:
        along = [1] * len(shape)
        along[axis] = shape[axis]
        return np.broadcast_to(operand.reshape(along), shape)
    return np.repeat(operand, block, axis=axis).take(np.arange(shape[axis]), axis=axis)


# --- operand sources ---------------------------------------------------------------------------------------

def add_operand(draw: st.DrawFn, case: Case, name: str, value: np.ndarray, allow_input: bool = True) -> str:
    """Make ``value`` available as ``name``: an initializer, a Constant node, or a graph input (fed)."""
    kinds = ["initializer", "initializer", "constant"] + (["input"] if allow_input else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "initializer":
        case.initializers.append(numpy_helper.from_array(value, name))
    elif kind == "constant":
        case.nodes.append(helper.make_node("Constant", [], [name], value=numpy_helper.from_array(value, name + "_c")))
    else:
        case.inputs.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(value.dtype), value.shape))
        case.feeds[name] = value
    return name


def add_x(case: Case, name: str, x: np.ndarray, onnx_type: int) -> None:
    case.inputs.append(helper.make_tensor_value_info(name, onnx_type, x.shape))
    case.feeds[name] = x


# --- one node of each operator -------------------------------------------------------------------------------

def clip_node(draw: st.DrawFn, case: Case, version: int, x_name: str, x: np.ndarray, onnx_type: int, out: str,
              defect: bool) -> np.ndarray | None:
    """A Clip node; returns the expected output (None when the case is refused)."""
    is_float = onnx_type in (FLOAT, FLOAT16, DOUBLE, BFLOAT16)
    palette = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 65504.0, 1e-8, FLT_MAX, -FLT_MAX, math.inf, -math.inf]
    bounds: list[float | int | None] = []
    if version < 11:
        attributes = {}
        for name in ("min", "max"):
            if draw(st.booleans()):
                value = float(np.float32(draw(st.one_of(st.sampled_from(palette), st.floats(width=32, allow_nan=False)))))
                attributes[name] = value
                bounds.append(value)
            else:
                bounds.append(None if version == 1 else (-FLT_MAX if name == "min" else FLT_MAX))
        if defect and draw(st.booleans()):
            attributes["min"] = math.nan
            case.defects.append("a NaN Clip bound")
        case.nodes.append(helper.make_node("Clip", [x_name], [out], **attributes))
        case.summary.append(f"Clip-{version} {attributes}")
    else:
        names = []
        for name in ("min", "max"):
            if draw(st.booleans()):
                names.append("")
                bounds.append(None)
                continue
            value = draw(arrays(onnx_type, draw(st.sampled_from([(), (1,)])))).astype(np_type(onnx_type))
            if is_float and np.isnan(value).any() and not defect:
                value = np.zeros_like(value)
            if is_float and np.isnan(value).any():
                case.defects.append("a NaN Clip bound")
            bounds.append(value.reshape(-1)[0].item())
            names.append(add_operand(draw, case, f"{out}_{name}", value))
        if defect and draw(st.booleans()):
            kind = draw(st.sampled_from(["two elements", "computed"]))
            bound = draw(arrays(onnx_type, (2,) if kind == "two elements" else ()))
            source = add_operand(draw, case, f"{out}_bad", bound)
            if kind == "computed":  # the bound is the output of another node
                case.nodes.append(helper.make_node("Relu" if is_float else "Identity", [source], [f"{out}_computed"]))
                source = f"{out}_computed"
            names[0] = source
            case.defects.append(f"a Clip bound: {kind}")
        while names and names[-1] == "":
            names.pop()
        case.nodes.append(helper.make_node("Clip", [x_name, *names], [out]))
        case.summary.append(f"Clip-{version} bounds {bounds}")
    if onnx_type not in (FLOAT, FLOAT16) + (INTEGERS if version >= 12 else ()):
        case.defects.append(f"Clip-{version} of {TensorProto.DataType.Name(onnx_type)}")
    if case.defects:
        return None
    low, high = bounds
    if low is not None and high is not None and low > high:
        low = high  # ONNX: min > max gives max everywhere
    return clip_values(x, low, high, onnx_type)


def relu_node(case: Case, version: int, x_name: str, x: np.ndarray, onnx_type: int, out: str) -> np.ndarray | None:
    case.nodes.append(helper.make_node("Relu", [x_name], [out]))
    case.summary.append(f"Relu-{version}")
    if onnx_type not in (FLOAT, FLOAT16) + ((INT8, INT16, INT32, INT64) if version >= 14 else ()):
        case.defects.append(f"Relu-{version} of {TensorProto.DataType.Name(onnx_type)}")
        return None
    return relu_values(x)


def arg_node(draw: st.DrawFn, case: Case, op: str, version: int, x_name: str, x: np.ndarray, onnx_type: int,
             out: str, defect: bool) -> np.ndarray | None:
    rank = x.ndim
    attributes: dict[str, int] = {}
    lowest = -rank if version >= 11 else 0
    if rank and draw(st.booleans()):
        attributes["axis"] = draw(st.integers(lowest, rank - 1))
    if defect and draw(st.booleans()):
        attributes["axis"] = draw(st.sampled_from([rank, rank + 1, -rank - 1]))
        case.defects.append(f"an {op} axis out of range")
    if draw(st.booleans()):
        attributes["keepdims"] = draw(st.integers(0, 1))
    if version >= 12 and draw(st.booleans()):
        attributes["select_last_index"] = draw(st.integers(0, 1))
    case.nodes.append(helper.make_node(op, [x_name], [out], **attributes))
    case.summary.append(f"{op}-{version} {attributes}")
    if onnx_type not in (FLOAT, FLOAT16, *INTEGERS):
        case.defects.append(f"{op} of {TensorProto.DataType.Name(onnx_type)}")
    if rank == 0:
        case.defects.append(f"{op} of a scalar")
    if case.defects:
        return None
    axis = attributes.get("axis", 0) % rank
    if x.shape[axis] == 0:
        case.defects.append(f"{op} along an empty axis")
        return None
    return arg_values(x, axis, bool(attributes.get("keepdims", 1)), bool(attributes.get("select_last_index", 0)),
                      largest=op == "ArgMax")


@dataclass
class Layout:
    """How a (de)quantizing node's scale and zero point spread over x: per tensor, per axis or blocked."""

    kind: str
    attributes: dict[str, int]
    axis: int
    block: int
    operand_shape: tuple[int, ...]


def draw_layout(draw: st.DrawFn, case: Case, op: str, version: int, x: np.ndarray, defect: bool) -> Layout:
    """A layout the node's version has; blocked only where no node of the case is blocked already (two
    blocked nodes in a row must nest their blocks, which opendml reports as unsupported otherwise)."""
    rank = x.ndim
    kind = draw(st.sampled_from(["tensor", "tensor"] + (["axis"] if version >= 13 and rank else [])
                                + (["block"] if version >= 21 and rank and not case.blocked else [])))
    attributes: dict[str, int] = {}
    axis, block = 1, 0
    if kind == "tensor":
        operand_shape: tuple[int, ...] = () if version < 13 or draw(st.booleans()) else (1,)
    else:
        axis = draw(st.integers(-rank, rank - 1))
        if axis != 1 or draw(st.booleans()):
            attributes["axis"] = axis
        axis %= rank
        if kind == "axis":
            operand_shape = (x.shape[axis],)
        else:
            block = draw(st.integers(1, 3))
            attributes["block_size"] = block
            operand_shape = tuple(-(-n // block) if k == axis else n for k, n in enumerate(x.shape))
            case.blocked = True
    if defect and kind != "tensor" and draw(st.booleans()):
        # Two more, not one: a one-element scale is a per-tensor scale in ONNX (its reference takes value[0]),
        # which a per-axis shape with a 0 on the last axis would become.
        operand_shape = (*operand_shape[:-1], operand_shape[-1] + 2) if operand_shape else (2,)
        case.defects.append(f"a {op} scale of the wrong shape")
    return Layout(kind, attributes, axis, block, operand_shape)


def dequantize_node(draw: st.DrawFn, case: Case, version: int, x_name: str, x: np.ndarray, onnx_type: int,
                    out: str, defect: bool) -> tuple[np.ndarray | None, int]:
    """A DequantizeLinear node; returns (expected output, its ONNX type)."""
    scale_type = draw(st.sampled_from([FLOAT, FLOAT16] if version >= 19 else [FLOAT]))
    layout = draw_layout(draw, case, "DequantizeLinear", version, x, defect)
    attributes = layout.attributes
    scale = draw(arrays(scale_type, layout.operand_shape))
    names = [x_name, add_operand(draw, case, f"{out}_scale", scale)]
    zero_point = None
    if onnx_type != INT32 and draw(st.booleans()):
        zero_point = draw(arrays(onnx_type, layout.operand_shape))
        names.append(add_operand(draw, case, f"{out}_zero_point", zero_point))
    if version >= 23 and draw(st.integers(0, 3)) == 0:
        attributes["output_dtype"] = scale_type
        if defect and draw(st.booleans()):
            attributes["output_dtype"] = FLOAT16 if scale_type == FLOAT else FLOAT
            case.defects.append("output_dtype is not the scale's type")
    case.nodes.append(helper.make_node("DequantizeLinear", names, [out], **attributes))
    case.summary.append(f"DequantizeLinear-{version} {layout.kind} {attributes} scale {scale.dtype}")
    allowed = (INT8, UINT8, INT32) + ((INT16, UINT16) if version >= 21 else ())
    if onnx_type not in allowed:
        case.defects.append(f"DequantizeLinear of {TensorProto.DataType.Name(onnx_type)}")
    if case.defects:
        return None, scale_type
    scale_full = expand(scale, x.shape, layout.axis, layout.block)
    zero_full = None if zero_point is None else expand(zero_point, x.shape, layout.axis, layout.block)
    return dequantize_values(x, scale_full, zero_full, scale_type), scale_type


def _quantize_scale_type(draw: st.DrawFn, case: Case, version: int, onnx_type: int, defect: bool) -> int:
    """ONNX types the scale FLOAT (10, 13), as x (19, 21: an INT32 x then has an INT32 scale, which DirectML
    refuses), or freely (23 on); DirectML wants FLOAT for an INT32 x and x's own type otherwise."""
    if version < 19:
        return FLOAT
    if version < 23:
        if onnx_type == INT32:
            case.defects.append(f"QuantizeLinear-{version} of INT32 (its scale is INT32)")
        return onnx_type
    wanted = FLOAT if onnx_type in (INT32, DOUBLE, BFLOAT16) else onnx_type
    if defect and onnx_type in (FLOAT, FLOAT16, INT32) and draw(st.booleans()):
        case.defects.append("a QuantizeLinear scale of a type DirectML does not take")
        return FLOAT16 if wanted == FLOAT else FLOAT
    return wanted


def _quantize_output(draw: st.DrawFn, case: Case, version: int, attributes: dict[str, int], names: list[str],
                     out: str, shape: tuple[int, ...], defect: bool) -> tuple[np.ndarray | None, int]:
    """The zero point (or none) and output_dtype; returns the zero point and the output type."""
    out_type = draw(st.sampled_from([INT8, UINT8]))
    zero_point = None
    if draw(st.booleans()):
        zero_type = out_type
        if defect and version >= 21 and draw(st.booleans()):
            zero_type = draw(st.sampled_from([INT16, UINT16]))
            case.defects.append(f"a {TensorProto.DataType.Name(zero_type)} zero point")
        zero_point = draw(arrays(zero_type, shape))
        names.append(add_operand(draw, case, f"{out}_zero_point", zero_point))
    elif version < 21:
        out_type = UINT8  # without a zero point, UINT8 before output_dtype
    if version >= 21 and ((zero_point is None and out_type == INT8) or draw(st.integers(0, 3)) == 0):
        attributes["output_dtype"] = out_type
        if defect and draw(st.booleans()):
            # The other 8-bit type is refused only against a zero point of this type: alone it is a valid output.
            other = [INT8 if out_type == UINT8 else UINT8] if zero_point is not None else []
            attributes["output_dtype"] = draw(st.sampled_from([INT16, UINT16, *other]))
            case.defects.append("a QuantizeLinear output_dtype opendml refuses")
    return zero_point, out_type


def quantize_node(draw: st.DrawFn, case: Case, version: int, x_name: str, x: np.ndarray, onnx_type: int,
                  out: str, defect: bool) -> tuple[np.ndarray | None, int]:
    """A QuantizeLinear node; returns (expected output, its ONNX type)."""
    scale_type = _quantize_scale_type(draw, case, version, onnx_type, defect)
    layout = draw_layout(draw, case, "QuantizeLinear", version, x, defect)
    attributes = layout.attributes
    scale = draw(arrays(scale_type, layout.operand_shape, [1.0, 0.5, 2.0, 0.25, 3.0, -1.0, 0.1]))
    names = [x_name, add_operand(draw, case, f"{out}_scale", scale)]
    zero_point, out_type = _quantize_output(draw, case, version, attributes, names, out, layout.operand_shape, defect)
    if version >= 19 and draw(st.integers(0, 3)) == 0:
        attributes["saturate"] = draw(st.integers(0, 1))  # float8 outputs only: no effect here
    if version >= 23:
        precision = FLOAT if scale_type == FLOAT16 or draw(st.booleans()) else 0
        if defect and draw(st.booleans()):
            precision = draw(st.sampled_from([FLOAT16, 0] if scale_type == FLOAT16 else [FLOAT16]))
            case.defects.append("a QuantizeLinear precision other than FLOAT")
        if precision:
            attributes["precision"] = precision
    case.nodes.append(helper.make_node("QuantizeLinear", names, [out], **attributes))
    case.summary.append(f"QuantizeLinear-{version} {layout.kind} {attributes} scale {scale.dtype}")
    allowed = (FLOAT, INT32) + ((FLOAT16,) if version >= 19 else ())
    if onnx_type not in allowed:
        case.defects.append(f"QuantizeLinear-{version} of {TensorProto.DataType.Name(onnx_type)}")
    if case.defects:
        return None, out_type
    scale_full = expand(scale, x.shape, layout.axis, layout.block)
    zero_full = None if zero_point is None else expand(zero_point, x.shape, layout.axis, layout.block)
    return quantize_values(x, scale_full, zero_full, out_type), out_type


# --- a whole case --------------------------------------------------------------------------------------------

X_TYPES = {
    "Clip": (FLOAT, FLOAT16, *INTEGERS),
    "Relu": (FLOAT, FLOAT16, INT8, INT16, INT32, INT64),
    "ArgMin": (FLOAT, FLOAT16, *INTEGERS),
    "ArgMax": (FLOAT, FLOAT16, *INTEGERS),
    "DequantizeLinear": (INT8, UINT8, INT32, INT16, UINT16),
    "QuantizeLinear": (FLOAT, FLOAT16, INT32),
}
UNMAPPED = {"Clip": (DOUBLE,), "Relu": (DOUBLE,), "ArgMin": (DOUBLE,), "ArgMax": (DOUBLE,),
            "DequantizeLinear": (UINT32, INT64), "QuantizeLinear": (DOUBLE, BFLOAT16)}
# What a second node may read: a float, or the 8-bit integers a QuantizeLinear writes.
SECOND = {FLOAT: ("Clip", "Relu", "ArgMin", "ArgMax", "QuantizeLinear"),
          FLOAT16: ("Clip", "Relu", "ArgMin", "ArgMax", "QuantizeLinear"),
          INT8: ("Clip", "ArgMin", "ArgMax", "DequantizeLinear"), UINT8: ("Clip", "ArgMin", "ArgMax", "DequantizeLinear")}


def node(draw: st.DrawFn, case: Case, op: str, x_name: str, x: np.ndarray, onnx_type: int, out: str,
         defect: bool) -> tuple[np.ndarray | None, int]:
    version = version_at(op, case.opset)
    assert version is not None
    if op == "Clip":
        return clip_node(draw, case, version, x_name, x, onnx_type, out, defect), onnx_type
    if op == "Relu":
        return relu_node(case, version, x_name, x, onnx_type, out), onnx_type
    if op in ("ArgMin", "ArgMax"):
        return arg_node(draw, case, op, version, x_name, x, onnx_type, out, defect), INT64
    if op == "QuantizeLinear":
        return quantize_node(draw, case, version, x_name, x, onnx_type, out, defect)
    return dequantize_node(draw, case, version, x_name, x, onnx_type, out, defect)


def _x_type(draw: st.DrawFn, op: str, version: int, defect: bool) -> int:
    """A type the node's schema takes at its version (an unmapped one as a defect)."""
    if defect and draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(UNMAPPED[op]))
    allowed = {"Clip": (FLOAT, FLOAT16) + (INTEGERS if version >= 12 else ()),
               "Relu": (FLOAT, FLOAT16) + ((INT8, INT16, INT32, INT64) if version >= 14 else ()),
               "ArgMin": (FLOAT, FLOAT16) * 3 + INTEGERS,  # floats favoured: rows with NaN
               "ArgMax": (FLOAT, FLOAT16) * 3 + INTEGERS,
               "DequantizeLinear": (INT8, UINT8, INT32) + ((INT16, UINT16) if version >= 21 else ()),
               # INT32 at 19 and 21 only with an INT32 scale, which DirectML refuses (a defect)
               "QuantizeLinear": (FLOAT,) + ((FLOAT16,) if version >= 19 else ())
               + ((INT32,) if version < 19 or version >= 23 else ())}[op]
    return draw(st.sampled_from(allowed))


@st.composite
def cases(draw: st.DrawFn) -> Case:
    op = draw(st.sampled_from(sorted(VERSIONS)))
    opset = draw(st.integers(VERSIONS[op][0], NEWEST_OPSET))
    case = Case(opset)
    defect = draw(st.integers(0, 3)) == 0
    version = version_at(op, opset)
    assert version is not None
    onnx_type = _x_type(draw, op, version, defect)
    shape = draw(shapes(min_rank=1 if op in ("ArgMin", "ArgMax") and not defect else 0))
    x = draw(arrays(onnx_type, shape, [0.0, -0.0, 1.0, -1.0, 2.5]))
    if op in ("ArgMin", "ArgMax") and onnx_type in (FLOAT, FLOAT16):  # rows with NaN among numbers, often
        nan_at = np.array(draw(st.lists(st.integers(0, 3), min_size=x.size, max_size=x.size)), bool).reshape(shape)
        x[~nan_at] = np.nan
    add_x(case, "x", x, onnx_type)
    expected, out_type = node(draw, case, op, "x", x, onnx_type, "y", defect)
    result_name = "y"
    second = draw(st.sampled_from([None, None, None, *SECOND.get(out_type, ())]))
    if second is not None and expected is not None and opset >= 12:
        later, out_type = node(draw, case, second, "y", expected, out_type, "z", defect=False)
        expected, result_name = later, "z"
    case.outputs.append(helper.make_empty_tensor_value_info(result_name))
    if defect and not case.defects:
        _feed_or_graph_defect(draw, case)
    if expected is not None and not case.defects:
        case.expected[result_name] = expected
    return case


def _unmapped() -> str:
    """A standard unary ONNX operator of one input that opendml maps to nothing (read from its table, so that
    a mapping added later does not turn the defect into a valid model: Abs was one, until ELEMENT_WISE_ABS)."""
    from opendml.onnx.ops import BY_OP_TYPE

    return next(op for op in ("Det", "Hardmax", "LpNormalization", "Erf", "Softsign") if op not in BY_OP_TYPE)


UNKNOWN_OPERATOR = _unmapped()


def _feed_or_graph_defect(draw: st.DrawFn, case: Case) -> None:
    kind = draw(st.sampled_from(["feed type", "feed shape", "missing feed", "extra feed", "unknown operator",
                                 "custom domain"]))
    x = case.feeds["x"]
    if kind == "feed type":
        case.feeds["x"] = x.astype(np.float64 if x.dtype != np.float64 else np.float32)
    elif kind == "feed shape":
        case.feeds["x"] = np.zeros((*x.shape, 2), x.dtype)
    elif kind == "missing feed":
        del case.feeds["x"]
    elif kind == "extra feed":
        case.feeds["unknown"] = x
    elif kind == "unknown operator":
        case.nodes[-1] = helper.make_node(UNKNOWN_OPERATOR, [case.nodes[-1].input[0]], list(case.nodes[-1].output))
    else:
        first = case.nodes[-1]
        case.nodes[-1] = helper.make_node(first.op_type, list(first.input), list(first.output), domain="com.example")
    case.defects.append(kind)
