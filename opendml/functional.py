"""Functions on arrays: each builds a description of the arrays as they lie in memory and runs it.

Views are described by their strides, never copied (except views with negative strides, and tensors
whose last bytes would fall short of DirectML's 4-byte rounding of a tensor's size).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .buffer import BufferBinding
from .device import Device
from .dtypes import DataType, from_numpy
from .enums import AxisDirection
from .errors import invalid
from .feature_levels import FeatureLevel
from .operator import CompiledOperator
from .ops.argmin import ARGMIN_SCHEMA, ArgMinDesc
from .ops.clip import CLIP1_SCHEMA, CLIP_SCHEMA, ElementWiseClip1Desc, ElementWiseClipDesc
from .ops.dequantize_linear import DEQUANTIZE_LINEAR_SCHEMA, ElementWiseDequantizeLinearDesc
from .ops.elementwise import ScaleBias, typed_bound
from .ops.threshold import THRESHOLD_SCHEMA, ElementWiseThresholdDesc
from .schema import OperatorSchema
from .tensor import TensorDesc, calc_buffer_tensor_size

_default_devices: dict[str, Device] = {}


def default_device(x: Any = None) -> Device:
    """The device used when none is given: CUDA for arrays in GPU memory, else the CPU; newest level."""
    backend = "cuda" if _on_gpu(x) else "cpu"
    if backend not in _default_devices:
        _default_devices[backend] = Device(backend)
    return _default_devices[backend]


def _on_gpu(x: Any) -> bool:
    """Whether ``x`` lives in CUDA memory (CuPy, PyTorch and others, through their array protocols)."""
    if hasattr(x, "__cuda_array_interface__"):
        return True
    try:
        return x.__dlpack_device__()[0] in (2, 3, 13)  # kDLCUDA, kDLCUDAHost, kDLCUDAManaged
    except Exception:
        return False


@dataclass
class _Placed:
    """An array described as a tensor in a buffer; ``staged`` is the padded copy bound instead, if any."""

    desc: TensorDesc
    binding: BufferBinding
    staged: Any = None


def _as_array(device: Device, x: Any, owner: str, name: str) -> Any:
    """``x`` as an array of the device's kind (same memory where the protocols allow), type checked."""
    array = device.backend.as_array(x)
    try:
        from_numpy(array.dtype)
    except KeyError:
        raise invalid(owner, f"{name}.DataType", "must be one of FLOAT32, FLOAT16, FLOAT64 or a sized integer",
                      array.dtype) from None
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("<"))
    return array


def _describe(array: Any) -> TensorDesc:
    """The array's layout as a description (a size-1 dimension's stride, whatever its sign, is moot: 0)."""
    itemsize = array.itemsize
    strides = tuple(0 if n == 1 else s // itemsize for n, s in zip(array.shape, array.strides))
    return TensorDesc(from_numpy(array.dtype), array.shape, strides)


def _padded_empty(device: Device, shape: tuple[int, ...], dtype: np.dtype) -> tuple[Any, Any]:
    """A new packed array and the raw bytes under it, rounded up to DirectML's 4-byte sizes."""
    xp = device.backend.xp
    nbytes = math.prod(shape) * dtype.itemsize
    raw = xp.zeros(calc_buffer_tensor_size(from_numpy(dtype), shape, None), dtype=xp.uint8)
    return raw[:nbytes].view(dtype).reshape(shape), raw


def _place(device: Device, array: Any, output: bool = False) -> _Placed:
    """Describe ``array`` where it lies; stage a packed copy when that cannot be bound directly."""
    backend = device.backend
    if any(n > 1 and (s < 0 or s % array.itemsize) for n, s in zip(array.shape, array.strides)):
        array = backend.xp.ascontiguousarray(array)
    desc = _describe(array)
    if desc.span_in_bytes >= desc.total_tensor_size_in_bytes:
        raw = backend.byte_range(array, desc.total_tensor_size_in_bytes)
        return _Placed(desc, BufferBinding(backend.wrap(device, raw)))
    if not output:  # too short for the 4-byte rounding: copy only the bytes it spans (a broadcast scalar: one)
        raw = backend.xp.zeros(desc.total_tensor_size_in_bytes, dtype=backend.xp.uint8)
        raw[:desc.span_in_bytes] = backend.byte_range(array, desc.span_in_bytes)
        return _Placed(desc, BufferBinding(backend.wrap(device, raw)))
    staged, raw = _padded_empty(device, array.shape, array.dtype)
    staged[...] = array
    return _Placed(_describe(staged), BufferBinding(backend.wrap(device, raw)), staged)


def _leading_ones(schema: OperatorSchema, device: Device, rank: int) -> int:
    """How many leading 1s the device's support row needs (4-D-only levels), as ONNX Runtime pads."""
    row = schema.row_at(device.feature_level)
    return max(0, row.dimensions[0] - rank) if row is not None else 0


def _unsqueeze(array: Any, count: int) -> Any:
    return array.reshape((1,) * count + array.shape)


def _run(device: Device, make_desc: Callable[..., object], inputs: Sequence[Any], out: Any) -> CompiledOperator | None:
    """Describe, validate and run one operator over arrays, writing ``out`` (which may alias an input).

    Returns the compiled operator when it ran on the arrays themselves (nothing staged), else None.
    """
    if out.size == 0:
        stand_ins = [None if a is None else np.zeros((1,) * a.ndim, a.dtype) for a in inputs]
        device.create_operator(make_desc(*[None if a is None else _describe(a) for a in stand_ins],
                                         _describe(np.zeros((1,) * out.ndim, out.dtype))))
        return None
    placed_inputs = [None if a is None else _place(device, a) for a in inputs]
    placed_out = _place(device, out, output=True)
    descs = [None if p is None else p.desc for p in placed_inputs]
    compiled = device.compiled(make_desc(*descs, placed_out.desc))
    compiled.execute([None if p is None else p.binding for p in placed_inputs], [placed_out.binding])
    if placed_out.staged is not None:
        out[...] = placed_out.staged
        return None
    return None if any(p is not None and p.staged is not None for p in placed_inputs) else compiled


# Calls on host arrays shaped like one already run: (device, arguments, layouts) -> the CPU kernel. The
# first call validated the description (every rule of the SPEC); a call with the same key has the same
# description, so it runs the kernel on its arrays directly, skipping descriptions, buffers and bindings.
_direct_runs: dict[Any, Any] = {}
_DIRECT_LIMIT = 1024


def _exact(value: Any) -> Any:
    """A cache key part that tells apart what == does not: -0.0 from 0.0, 1 from 1.0 and True."""
    return (type(value), repr(value))


def _direct_key(device: Device, key: Any, x: Any, out: Any) -> Any:
    return (device, key, x.dtype, x.shape, x.strides, None if out is None else (out.dtype, out.shape, out.strides))


def _direct(device: Device | None, key: Any, x: Any, out: Any) -> Any:
    """The result of a call on NumPy arrays run straight through its cached kernel, or None if it cannot be."""
    if type(x) is not np.ndarray or not (out is None or type(out) is np.ndarray):
        return None
    device = device or _default_devices.get("cpu")
    try:
        kernel = _direct_runs.get(_direct_key(device, key, x, out)) if device is not None else None
    except TypeError:  # an unhashable argument (a list as ScaleBias): the ordinary path handles it
        return None
    if kernel is None:
        return None
    if out is None:
        result = np.empty(x.shape, x.dtype)
    elif not out.flags.writeable or (out is not x and np.may_share_memory(out, x)):
        return None  # the ordinary path raises, or accepts an exact alias made of two array objects
    else:
        result = out
    kernel.run_arrays([x], result)
    return result


def _remember(device: Device, key: Any, x: Any, out: Any, compiled: CompiledOperator | None) -> None:
    kernel = getattr(compiled, "kernel", None)
    if not hasattr(kernel, "run_arrays") or type(x) is not np.ndarray or not (out is None or type(out) is np.ndarray):
        return
    try:
        direct_key = _direct_key(device, key, x, out)
        hash(direct_key)
    except TypeError:
        return
    if len(_direct_runs) >= _DIRECT_LIMIT:
        _direct_runs.clear()
    _direct_runs[direct_key] = kernel


@dataclass
class _Output:
    """Where results go: ``array`` is of the device's kind; ``deliver`` hands the caller its kind back."""

    device: Device
    array: Any
    out: Any  # the caller's out=, or None
    like: Any  # the caller's primary input, whose kind a new result takes

    def deliver(self) -> Any:
        backend = self.device.backend
        if self.out is None:
            return backend.to_caller(self.array, self.like)
        if self.array is not self.out and isinstance(self.out, np.ndarray) and backend.xp is not np:
            self.out[...] = backend.to_caller(self.array, self.out)  # a host out= of a GPU computation
        return self.out


def _output(device: Device, out: Any, shape: tuple[int, ...], dtype: np.dtype, owner: str, like: Any) -> _Output:
    if out is None:
        return _Output(device, _padded_empty(device, shape, dtype)[0], None, like)
    if isinstance(out, np.ndarray) and not out.flags.writeable:
        raise invalid(owner, "out", "must be writeable", "a read-only array")
    try:
        array = device.backend.as_array(out)
    except Exception:
        raise invalid(owner, "out", "must be an array", type(out).__name__) from None
    if tuple(array.shape) != shape or array.dtype != dtype:
        raise invalid(owner, "out", f"must have shape {shape} and dtype {dtype}", f"{array.shape} {array.dtype}")
    return _Output(device, array, out, like)


def _unary(schema: OperatorSchema, x: Any, out: Any, device: Device,
           make_desc: Callable[[TensorDesc, TensorDesc], object], key: Any = None) -> Any:
    array = _as_array(device, x, schema.name, "InputTensor")
    result = _output(device, out, array.shape, array.dtype, schema.name, x)
    pad = _leading_ones(schema, device, max(array.ndim, 1))
    shape = (1,) * pad + (array.shape or (1,))
    compiled = _run(device, make_desc, [array.reshape(shape)], result.array.reshape(shape))
    if key is not None and array is x:
        _remember(device, key, x, out, compiled)
    return result.deliver()


def clip(x: Any, min: float | None, max: float | None, *, scale_bias: ScaleBias | tuple[float, float] | None = None,
         out: Any = None, device: Device | None = None) -> Any:
    """``max(min, min(x * scale + bias, max))`` element by element; None leaves a side unbounded.

    Integer tensors use ELEMENT_WISE_CLIP1 with exact typed bounds where the device's level has it.

    >>> clip(np.array([-3, 0, 5], np.int32), -1, 2.7)
    array([-1,  0,  2], dtype=int32)
    """
    key = ("clip", _exact(min), _exact(max), _exact(scale_bias))
    done = _direct(device, key, x, out)
    if done is not None:
        return done
    device = device or default_device(x)
    dtype = _as_array(device, x, CLIP_SCHEMA.name, "InputTensor").dtype
    data_type = DataType.parse(dtype, owner=CLIP_SCHEMA.name, field="InputTensor.DataType")
    sb = ScaleBias.parse(scale_bias, CLIP_SCHEMA.name)
    if data_type.is_integer and device.feature_level >= CLIP1_SCHEMA.introduced:
        owner = CLIP1_SCHEMA.name
        low, high = data_type.integer_range
        lo = low if min is None else typed_bound(_number(min, owner, "Min"), data_type, owner, "Min")
        hi = high if max is None else typed_bound(_number(max, owner, "Max"), data_type, owner, "Max")

        def clip1(i: TensorDesc, o: TensorDesc) -> object:
            return ElementWiseClip1Desc(i, o, data_type, int(lo), int(hi), sb)

        return _unary(CLIP1_SCHEMA, x, out, device, clip1, key)
    lo_f = -math.inf if min is None else min
    hi_f = math.inf if max is None else max
    return _unary(CLIP_SCHEMA, x, out, device, lambda i, o: ElementWiseClipDesc(i, o, lo_f, hi_f, sb), key)


def _number(value: object, owner: str, field: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise invalid(owner, field, "must be a number", repr(value))
    return int(value) if isinstance(value, (int, np.integer)) else float(value)


def threshold(x: Any, min: float, *, scale_bias: ScaleBias | tuple[float, float] | None = None,
              out: Any = None, device: Device | None = None) -> Any:
    """``max(x * scale + bias, min)`` element by element (ELEMENT_WISE_THRESHOLD).

    >>> threshold(np.array([-2.0, 0.5], np.float32), 0.0)
    array([0. , 0.5], dtype=float32)
    """
    key = ("threshold", _exact(min), _exact(scale_bias))
    done = _direct(device, key, x, out)
    if done is not None:
        return done
    device = device or default_device(x)
    sb = ScaleBias.parse(scale_bias, THRESHOLD_SCHEMA.name)
    return _unary(THRESHOLD_SCHEMA, x, out, device, lambda i, o: ElementWiseThresholdDesc(i, o, min, sb), key)


def dequantize_linear(x: Any, scale: Any, zero_point: Any = None, *, out: Any = None,
                      device: Device | None = None) -> Any:
    """``(x - zero_point) * scale``, broadcasting NumPy-style; the result has the scale's type.

    Broadcast operands reach the operator as zero-stride descriptions (nothing is materialised).

    >>> dequantize_linear(np.array([0, 10, 255], np.uint8), np.float32(0.5), 10)
    array([ -5. ,   0. , 122.5], dtype=float32)
    """
    device = device or default_device(x)
    owner = DEQUANTIZE_LINEAR_SCHEMA.name
    array = _as_array(device, x, owner, "InputTensor")
    if isinstance(scale, (int, float)):
        scale = np.float32(scale)
    scale = _as_array(device, scale, owner, "ScaleTensor")
    if zero_point is None and device.feature_level < FeatureLevel.FL_6_2:
        zero_point = 0  # the optional ZeroPointTensor needs 6_2: pass an explicit zero below it
    if zero_point is not None:
        zero_point = _as_array(device, _typed_like(zero_point, array.dtype, owner), owner, "ZeroPointTensor")
    shape = np.broadcast_shapes(*(a.shape for a in (array, scale, zero_point) if a is not None))
    result = _output(device, out, shape, scale.dtype, owner, x)
    pad = _leading_ones(DEQUANTIZE_LINEAR_SCHEMA, device, max(len(shape), 1))
    full = (1,) * pad + (shape or (1,))
    xp = device.backend.xp
    operands = [None if a is None else xp.broadcast_to(a, full) for a in (array, scale, zero_point)]
    _run(device, ElementWiseDequantizeLinearDesc, operands, result.array.reshape(full))
    return result.deliver()


def _typed_like(value: Any, dtype: np.dtype, owner: str) -> Any:
    if hasattr(value, "dtype") and getattr(value, "shape", ()) != ():
        return value
    try:
        return np.asarray(value, dtype=dtype)
    except (OverflowError, ValueError, TypeError):
        raise invalid(owner, "ZeroPointTensor", f"must hold values of the input's type {dtype}",
                      repr(value)) from None


def argmin(x: Any, axes: int | Sequence[int] | None = None, *,
           axis_direction: AxisDirection | str = "INCREASING", output_type: DataType | str = "INT64",
           out: Any = None, device: Device | None = None) -> Any:
    """Indices of the smallest elements over ``axes`` (None: all); the rank is kept, as in DirectML.
    ``out``, if given, receives them: an array of the result's shape and of ``output_type``.

    >>> argmin(np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], np.float32), 1)
    array([[0],
           [1],
           [0]])
    """
    device = device or default_device(x)
    owner = ARGMIN_SCHEMA.name
    array = _as_array(device, x, owner, "InputTensor")
    rank = max(array.ndim, 1)
    reduced = _normalize_axes(axes, rank, owner)
    direction = AxisDirection.parse(axis_direction, owner=owner)
    out_type = DataType.parse(output_type, owner=owner, field="OutputTensor.DataType")
    out_shape = tuple(1 if k in reduced else n for k, n in enumerate(array.shape or (1,)))
    result = _output(device, out, array.shape and out_shape, out_type.numpy, owner, x)
    pad = _leading_ones(ARGMIN_SCHEMA, device, rank)
    shifted = tuple(a + pad for a in reduced)

    def make(i: TensorDesc, o: TensorDesc) -> object:
        return ArgMinDesc(i, o, shifted, direction)

    _run(device, make, [_unsqueeze(array.reshape(array.shape or (1,)), pad)],
         _unsqueeze(result.array.reshape(out_shape), pad))
    return result.deliver()


def _normalize_axes(axes: int | Sequence[int] | None, rank: int, owner: str) -> tuple[int, ...]:
    if axes is None:
        return tuple(range(rank))
    listed = [axes] if isinstance(axes, (int, np.integer)) else list(axes)
    normalized = []
    for k, axis in enumerate(listed):
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -rank <= axis < rank:
            raise invalid(owner, f"Axes[{k}]", f"must be an integer in [{-rank}, {rank - 1}]", repr(axis))
        normalized.append(int(axis) % rank)
    if len(set(normalized)) != len(normalized):
        raise invalid(owner, "Axes", "must not repeat an axis", listed)
    return tuple(sorted(normalized))
