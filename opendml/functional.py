"""Functions on arrays: each builds a description of the arrays as they lie in memory and runs it.

Views are described by their strides, never copied, except where no description can say where their
elements lie (negative strides, strides that are not a multiple of the element size, misaligned data),
tensors whose last bytes would fall short of DirectML's 4-byte rounding of a tensor's size, and an ``out``
that shares memory with an input other than as an exact in-place alias. Such an input is read through a
packed copy; such an output is computed into a packed array and copied into exactly its own elements.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import backends
from .buffer import BufferBinding
from .device import Device
from .dtypes import DataType, from_numpy
from .enums import AxisDirection
from .errors import OpenDMLError, invalid
from .feature_levels import FeatureLevel
from .operator import CompiledOperator
from .ops.argmin import ARGMIN_SCHEMA, ArgMinDesc
from .ops.clip import CLIP1_SCHEMA, CLIP_SCHEMA, ElementWiseClip1Desc, ElementWiseClipDesc
from .ops.dequantize_linear import DEQUANTIZE_LINEAR_SCHEMA, ElementWiseDequantizeLinearDesc
from .ops.elementwise import ScaleBias, typed_bound
from .ops.threshold import THRESHOLD_SCHEMA, ElementWiseThresholdDesc
from .schema import OperatorSchema
from .tensor import TensorDesc, calc_buffer_tensor_size, element_offsets

_default_devices: dict[str, Device] = {}


def default_device(x: Any = None) -> Device:
    """The device used when none is given: CUDA for arrays in GPU memory, else the CPU; newest level."""
    return _backend_device("cuda" if _on_gpu(x) else "cpu")


def _backend_device(name: str) -> Device:
    """The one default device (newest level) of a backend."""
    if name not in _default_devices:
        _default_devices[name] = Device(name)
    return _default_devices[name]


def _resolve_device(device: object, x: Any, owner: str) -> Device:
    """``device=`` as a Device: a Device as is, a backend name's default device, None the array's."""
    if device is None:
        return default_device(x)
    if isinstance(device, Device):
        return device
    if isinstance(device, str) and device.strip().lower() in backends.BACKENDS:
        return _backend_device(device.strip().lower())
    raise invalid(owner, "device", f"must be a Device, a backend name ({', '.join(map(repr, backends.BACKENDS))}) "
                  "or None", repr(device))


def _on_gpu(x: Any) -> bool:
    """Whether ``x`` lives in CUDA memory (CuPy, PyTorch and others, through their array protocols)."""
    if hasattr(x, "__cuda_array_interface__"):
        return True
    try:
        return x.__dlpack_device__()[0] in (2, 3, 13)  # kDLCUDA, kDLCUDAHost, kDLCUDAManaged
    except Exception:
        return False


def _tracing(*values: Any) -> bool:
    """Whether a call is being traced by ``opendml.compile``: some argument is a traced array."""
    for value in values:  # noqa: SIM110 (a loop, not any() over a generator: this runs on every call)
        if getattr(type(value), "_opendml_traced", False):
            return True
    return False


def _traced() -> Any:
    """The traced versions of the functions (imported late: that module builds on this one)."""
    from . import tracing

    return tracing


@dataclass
class _Placed:
    """An array described as a tensor in a buffer.

    ``source`` is the caller's array when it is bound where it lies (None when a copy is bound);
    ``staged`` is the packed array an output is computed into, then copied from, if any.
    """

    desc: TensorDesc
    binding: BufferBinding
    source: Any = None
    staged: Any = None


def _as_array(device: Device, x: Any, owner: str, name: str) -> Any:
    """``x`` as an array of the device's kind (same memory where the protocols allow), type checked."""
    try:
        array = device.backend.as_array(x)
    except OpenDMLError:
        raise
    except Exception:  # NumPy's or CuPy's own refusal (a ragged list, an object it cannot take)
        raise invalid(owner, name, "must be an array or a number", type(x).__name__) from None
    try:
        from_numpy(array.dtype)
    except KeyError:
        raise invalid(owner, f"{name}.DataType", "must be one of FLOAT32, FLOAT16, FLOAT64 or a sized integer",
                      array.dtype) from None
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("<"))
    return array


def _plain(array: Any) -> bool:
    """Whether a description can say where every element lies: strides (of dimensions larger than 1) that
    are non-negative multiples of the element size, and data aligned to the element size."""
    itemsize = array.itemsize
    if any(n > 1 and (s < 0 or s % itemsize) for n, s in zip(array.shape, array.strides)):
        return False
    if isinstance(array, np.ndarray):
        return bool(array.flags.aligned)
    return array.data.ptr % itemsize == 0  # CuPy


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


def _place_input(device: Device, array: Any) -> _Placed:
    """Describe an input where it lies, or bind a packed copy where that cannot be described or bound."""
    backend = device.backend
    copied = not _plain(array)
    if copied:
        array = backend.xp.ascontiguousarray(array)
    desc = _describe(array)
    if desc.span_in_bytes >= desc.total_tensor_size_in_bytes:
        raw = backend.byte_range(array, desc.total_tensor_size_in_bytes)
        return _Placed(desc, BufferBinding(backend.wrap(device, raw)), None if copied else array)
    # Too short for the 4-byte rounding: copy only the bytes it spans (a broadcast scalar: one).
    raw = backend.xp.zeros(desc.total_tensor_size_in_bytes, dtype=backend.xp.uint8)
    raw[:desc.span_in_bytes] = backend.byte_range(array, desc.span_in_bytes)
    return _Placed(desc, BufferBinding(backend.wrap(device, raw)))


def _place_output(device: Device, out: Any, stage: bool) -> _Placed:
    """Describe ``out`` where it lies, or (``stage``, or where that cannot be) a packed array to copy from."""
    backend = device.backend
    if not stage and _plain(out):
        desc = _describe(out)
        if desc.span_in_bytes >= desc.total_tensor_size_in_bytes:
            raw = backend.byte_range(out, desc.total_tensor_size_in_bytes)
            return _Placed(desc, BufferBinding(backend.wrap(device, raw)), out)
    staged, raw = _padded_empty(device, out.shape, out.dtype)
    return _Placed(_describe(staged), BufferBinding(backend.wrap(device, raw)), None, staged)


def _exact_alias(a: Any, b: Any) -> bool:
    """Whether two arrays are one view: same first element, type and layout (the in-place rule)."""
    return (a.dtype == b.dtype and a.shape == b.shape and _plain(a) and _plain(b)
            and _describe(a) == _describe(b) and _address(a) == _address(b))


def _address(array: Any) -> int:
    if isinstance(array, np.ndarray):
        return int(array.__array_interface__["data"][0])
    return int(array.data.ptr)  # CuPy


# Above this many elements an exact check of a staged ``out``'s own elements is too costly (as TensorDesc's).
_EXACT_COLLISION_LIMIT = 1 << 22


def _check_writes_once(owner: str, out: Any) -> None:
    """A staged ``out`` is never described to the operator, so its own elements are checked here: no two
    may share a byte (a write must have one meaning). Mirroring a dimension does not change which bytes it
    covers, so absolute byte strides tell; they need not be multiples of the element size."""
    itemsize = out.itemsize
    dims = sorted((abs(s), n) for n, s in zip(out.shape, out.strides) if n > 1)
    reach = itemsize  # bytes from the first element's start to the end of the last, over the dimensions seen
    for stride, size in dims:
        if stride < reach:
            break
        reach += (size - 1) * stride
    else:
        return  # each stride jumps past everything smaller: provably disjoint
    starts = None
    if out.size <= _EXACT_COLLISION_LIMIT:
        starts = np.sort(element_offsets(out.shape, [abs(s) for s in out.strides]))
    if starts is None or bool((np.diff(starts) < itemsize).any()):
        raise invalid(owner, "out", "must address each element once (no two elements sharing a byte)",
                      f"strides {tuple(out.strides)} (bytes) for {out.dtype} elements")


def _run(device: Device, schema: OperatorSchema, make_desc: Callable[..., object], inputs: Sequence[Any],
         out: Any) -> CompiledOperator | None:
    """Describe, validate and run one operator over arrays, writing ``out`` (which may alias an input).

    Returns the compiled operator when it ran on the arrays themselves (nothing copied), else None.
    """
    if out.size == 0:
        stand_ins = [None if a is None else np.zeros((1,) * a.ndim, a.dtype) for a in inputs]
        device.create_operator(make_desc(*[None if a is None else _describe(a) for a in stand_ins],
                                         _describe(np.zeros((1,) * out.ndim, out.dtype))))
        return None
    placed_inputs = [None if a is None else _place_input(device, a) for a in inputs]
    xp = device.backend.xp
    # An output sharing memory with an input is computed apart (then copied), except the exact alias that
    # in-place operators take: the operator's bindings would refuse any other overlap.
    shared = any(p is not None and p.source is not None and xp.may_share_memory(out, p.source)
                 and not (schema.in_place and _exact_alias(out, p.source)) for p in placed_inputs)
    placed_out = _place_output(device, out, shared)
    if placed_out.staged is not None:
        _check_writes_once(schema.name, out)
    descs = [None if p is None else p.desc for p in placed_inputs]
    compiled = device.compiled(make_desc(*descs, placed_out.desc))
    compiled.execute([None if p is None else p.binding for p in placed_inputs], [placed_out.binding])
    if placed_out.staged is not None:
        out[...] = placed_out.staged
        return None
    return None if any(p is not None and p.source is None for p in placed_inputs) else compiled


def _view_as(array: Any, shape: tuple[int, ...]) -> Any:
    """``array`` with leading dimensions of size 1 added to reach ``shape``: always a view, never a copy
    (an output written through it must reach the caller's memory)."""
    count = len(shape) - array.ndim
    return array[(None,) * count] if count else array


def _leading_ones(schema: OperatorSchema, device: Device, rank: int) -> int:
    """How many leading 1s the device's support row needs (4-D-only levels), as ONNX Runtime pads."""
    row = schema.row_at(device.feature_level)
    return max(0, row.dimensions[0] - rank) if row is not None else 0


# Calls on host arrays shaped like one already run: (device, arguments, layouts) -> the CPU kernel. The
# first call validated the description (every rule of the SPEC); a call with the same key has the same
# description, so it runs the kernel on its arrays directly, skipping descriptions, buffers and bindings.
# Only layouts a description states exactly are remembered (``_plain``), and a call is taken here only
# when nothing would have been copied: aligned arrays, a writeable ``out`` that is ``x`` or shares no
# memory with it.
_direct_runs: dict[Any, Any] = {}
_DIRECT_LIMIT = 1024


def _exact(value: Any) -> Any:
    """A cache key part that tells apart what == does not: -0.0 from 0.0, 1 from 1.0 and True."""
    return (type(value), repr(value))


def _direct_key(device: Device | None, key: Any, x: Any, out: Any) -> Any:
    layout = None if out is None else (out is x, out.dtype, out.shape, out.strides)
    return (device, key, x.dtype, x.shape, x.strides, layout)


def _direct(device: object, key: Any, x: Any, out: Any) -> Any:
    """The result of a call on NumPy arrays run straight through its cached kernel, or None if it cannot be."""
    if type(x) is not np.ndarray or not (out is None or type(out) is np.ndarray):
        return None
    if device is None or type(device) is str:
        resolved = _default_devices.get("cpu" if device is None else device)
    elif type(device) is Device:
        resolved = device
    else:
        return None
    try:
        kernel = _direct_runs.get(_direct_key(resolved, key, x, out))
    except TypeError:  # an unhashable argument (a list as ScaleBias): the ordinary path handles it
        return None
    if kernel is None or not x.flags.aligned:
        return None
    if out is None:
        result = np.empty(x.shape, x.dtype)
    else:
        flags = out.flags
        if not (flags.writeable and flags.aligned) or (out is not x and np.may_share_memory(out, x)):
            return None  # the ordinary path raises, stages, or accepts an exact alias of two array objects
        result = out
    kernel.run_arrays([x], result)
    return result


def _remember(device: Device, key: Any, x: Any, out: Any, compiled: CompiledOperator | None) -> None:
    kernel = getattr(compiled, "kernel", None)
    if not hasattr(kernel, "run_arrays") or type(x) is not np.ndarray or not (out is None or type(out) is np.ndarray):
        return
    if not _plain(x) or (out is not None and not _plain(out)):
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
        if self.array is not self.out and isinstance(self.out, np.ndarray):
            self.out[...] = backend.to_caller(self.array, self.out)  # a host out= of a GPU computation
        return self.out


_OUT_KINDS = {"cpu": "a writeable NumPy array",
              "cuda": "a writeable NumPy array or a CUDA array (CuPy, PyTorch)"}


def _output(device: Device, out: Any, shape: tuple[int, ...], dtype: np.dtype, owner: str, like: Any) -> _Output:
    """The array results are written into: a new one, the caller's ``out`` itself, or (a host ``out`` of a
    GPU computation) a device array copied into it at the end. Anything whose memory cannot be written in
    place is refused before anything runs: a copy of it would be written and thrown away."""
    if out is None:
        return _Output(device, _padded_empty(device, shape, dtype)[0], None, like)
    backend = device.backend
    kind = _OUT_KINDS.get(backend.name, "a writeable array")
    if isinstance(out, np.ndarray):
        if not out.flags.writeable:
            raise invalid(owner, "out", "must be writeable", "a read-only array")
        array = out
    elif backend.xp is not np and _on_gpu(out):
        try:
            array = backend.as_array(out)  # the same memory (CuPy, DLPack)
        except Exception:
            raise invalid(owner, "out", f"must be {kind}", type(out).__name__) from None
    else:
        raise invalid(owner, "out", f"must be {kind}", type(out).__name__)
    if tuple(array.shape) != shape or array.dtype != dtype:
        raise invalid(owner, "out", f"must have shape {shape} and dtype {dtype}", f"{array.shape} {array.dtype}")
    if array is out and isinstance(out, np.ndarray) and backend.xp is not np:
        array = backend.xp.empty(shape, dtype)  # computed on the device, copied into ``out`` by ``deliver``
    return _Output(device, array, out, like)


def _unary(schema: OperatorSchema, x: Any, out: Any, device: Device,
           make_desc: Callable[[TensorDesc, TensorDesc], object], key: Any = None) -> Any:
    array = _as_array(device, x, schema.name, "InputTensor")
    result = _output(device, out, array.shape, array.dtype, schema.name, x)
    pad = _leading_ones(schema, device, max(array.ndim, 1))
    shape = (1,) * pad + (array.shape or (1,))
    compiled = _run(device, schema, make_desc, [_view_as(array, shape)], _view_as(result.array, shape))
    if key is not None and array is x:
        _remember(device, key, x, out, compiled)
    return result.deliver()


def clip(x: Any, min: float | None, max: float | None, *, scale_bias: ScaleBias | tuple[float, float] | None = None,
         out: Any = None, device: Device | str | None = None) -> Any:
    """``max(min, min(x * scale + bias, max))`` element by element; None leaves a side unbounded.

    Integer tensors use ELEMENT_WISE_CLIP1 with exact typed bounds where the device's level has it.

    >>> clip(np.array([-3, 0, 5], np.int32), -1, 2.7)
    array([-1,  0,  2], dtype=int32)
    """
    key = ("clip", _exact(min), _exact(max), _exact(scale_bias))
    done = _direct(device, key, x, out)  # first: the per-call cost of small arrays (a traced x never runs here)
    if done is not None:
        return done
    if _tracing(x):
        return _traced().clip(x, min, max, scale_bias, out, device)
    device = _resolve_device(device, x, CLIP_SCHEMA.name)
    dtype = _as_array(device, x, CLIP_SCHEMA.name, "InputTensor").dtype
    schema, make_desc = _clip_desc(device, dtype, min, max, scale_bias)
    return _unary(schema, x, out, device, make_desc, key)


def _clip_desc(device: Device, dtype: np.dtype, min: float | None, max: float | None,
               scale_bias: ScaleBias | tuple[float, float] | None
               ) -> tuple[OperatorSchema, Callable[[TensorDesc, TensorDesc], object]]:
    """The operator clip runs for an input of ``dtype``, and how its description is made from the input's
    and the output's: one rule for arrays and for traced functions."""
    data_type = DataType.parse(dtype, owner=CLIP_SCHEMA.name, field="InputTensor.DataType")
    sb = ScaleBias.parse(scale_bias, CLIP_SCHEMA.name)
    if data_type.is_integer and device.feature_level >= CLIP1_SCHEMA.introduced:
        owner = CLIP1_SCHEMA.name
        low, high = data_type.integer_range
        lo = low if min is None else typed_bound(_number(min, owner, "Min"), data_type, owner, "Min")
        hi = high if max is None else typed_bound(_number(max, owner, "Max"), data_type, owner, "Max")
        assert lo is not None and hi is not None  # an integer bound is never None: typed_bound refuses NaN

        def clip1(i: TensorDesc, o: TensorDesc) -> object:
            return ElementWiseClip1Desc(i, o, data_type, int(lo), int(hi), sb)

        return CLIP1_SCHEMA, clip1
    lo_f = -math.inf if min is None else min
    hi_f = math.inf if max is None else max
    return CLIP_SCHEMA, lambda i, o: ElementWiseClipDesc(i, o, lo_f, hi_f, sb)


def _number(value: object, owner: str, field: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise invalid(owner, field, "must be a number", repr(value))
    return int(value) if isinstance(value, (int, np.integer)) else float(value)


def threshold(x: Any, min: float, *, scale_bias: ScaleBias | tuple[float, float] | None = None,
              out: Any = None, device: Device | str | None = None) -> Any:
    """``max(x * scale + bias, min)`` element by element (ELEMENT_WISE_THRESHOLD).

    >>> threshold(np.array([-2.0, 0.5], np.float32), 0.0)
    array([0. , 0.5], dtype=float32)
    """
    key = ("threshold", _exact(min), _exact(scale_bias))
    done = _direct(device, key, x, out)  # first: the per-call cost of small arrays (a traced x never runs here)
    if done is not None:
        return done
    if _tracing(x):
        return _traced().threshold(x, min, scale_bias, out, device)
    device = _resolve_device(device, x, THRESHOLD_SCHEMA.name)
    sb = ScaleBias.parse(scale_bias, THRESHOLD_SCHEMA.name)
    return _unary(THRESHOLD_SCHEMA, x, out, device, lambda i, o: ElementWiseThresholdDesc(i, o, min, sb), key)


def dequantize_linear(x: Any, scale: Any, zero_point: Any = None, *, out: Any = None,
                      device: Device | str | None = None) -> Any:
    """``(x - zero_point) * scale``, broadcasting NumPy-style; the result has the scale's type.

    Broadcast operands reach the operator as zero-stride descriptions (nothing is materialised). The scale
    and the zero point may be numbers, or arrays of any kind; one of a single element may also live on
    another device than ``x``. A Python number as the scale becomes FLOAT32. The zero point takes the
    input's type: a value of another type (a number, or every element of an array) is converted when it
    is exactly representable in it, and refused otherwise (never wrapped or truncated).

    >>> dequantize_linear(np.array([0, 10, 255], np.uint8), np.float32(0.5), 10)
    array([ -5. ,   0. , 122.5], dtype=float32)
    """
    if _tracing(x, scale, zero_point):
        return _traced().dequantize_linear(x, scale, zero_point, out, device)
    owner = DEQUANTIZE_LINEAR_SCHEMA.name
    device = _resolve_device(device, x, owner)
    array = _as_array(device, x, owner, "InputTensor")
    scale = _scale(device, scale, owner)
    if zero_point is None and device.feature_level < FeatureLevel.FL_6_2:
        zero_point = 0  # the optional ZeroPointTensor needs 6_2: pass an explicit zero below it
    if zero_point is not None:
        zero_point = _zero_point(device, zero_point, array.dtype, owner)
    shape = _broadcast(owner, array.shape, "InputTensor", scale.shape, "ScaleTensor")
    if zero_point is not None:
        shape = _broadcast(owner, shape, "InputTensor and ScaleTensor", zero_point.shape, "ZeroPointTensor")
    result = _output(device, out, shape, scale.dtype, owner, x)
    pad = _leading_ones(DEQUANTIZE_LINEAR_SCHEMA, device, max(len(shape), 1))
    full = (1,) * pad + (shape or (1,))
    xp = device.backend.xp
    operands = [None if a is None else _broadcast_to(xp, a, full) for a in (array, scale, zero_point)]
    _run(device, DEQUANTIZE_LINEAR_SCHEMA, ElementWiseDequantizeLinearDesc, operands, _view_as(result.array, full))
    return result.deliver()


def _broadcast_to(xp: Any, array: Any, shape: tuple[int, ...]) -> Any:
    """``array`` read as ``shape`` through zero strides, nothing copied. A NumPy view stays as writeable as
    ``array`` (NumPy's own is read-only): Numba compiles a CPU kernel apart for read-only operands, so a
    read-only view would compile the operator's kernel a second time at its first execution."""
    view = xp.broadcast_to(array, shape)
    if xp is not np or not array.flags.writeable:
        return view
    return np.lib.stride_tricks.as_strided(array, shape, view.strides)


def _broadcast(owner: str, shape: tuple[int, ...], of: str, other: tuple[int, ...], field: str) -> tuple[int, ...]:
    """NumPy's broadcast of two shapes, or an error naming ``field`` and both shapes."""
    try:
        return np.broadcast_shapes(shape, other)
    except ValueError:
        raise invalid(owner, f"{field} shape", f"must broadcast with the shape {shape} of {of}",
                      tuple(other)) from None


def _operand(device: Device, value: Any, owner: str, field: str) -> Any:
    """A scale or zero point as an array of the device's kind. One of a single element in GPU memory is
    copied to the host for a CPU device (CuPy, PyTorch); larger ones must be on the device already."""
    if device.backend.xp is np and _on_gpu(value) and math.prod(getattr(value, "shape", ())) == 1:
        value = _to_host(value)
    return _as_array(device, value, owner, field)


def _to_host(value: Any) -> np.ndarray:
    """A NumPy copy of an array in GPU memory (DLPack, else through CuPy's CUDA array interface)."""
    try:
        return np.from_dlpack(value, device="cpu", copy=True)
    except Exception:
        pass
    import cupy  # only GPU arrays reach this, and they come with CuPy or a DLPack export to the host

    return cupy.asnumpy(cupy.asarray(value))


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_)) or getattr(getattr(value, "dtype", None), "kind", None) == "b"


def _scale(device: Device, scale: Any, owner: str) -> Any:
    if _is_bool(scale):
        raise invalid(owner, "ScaleTensor", "must hold FLOAT32 or FLOAT16 values", repr(scale))
    if isinstance(scale, (int, float)):
        scale = np.float32(scale)
    return _operand(device, scale, owner, "ScaleTensor")


def _zero_point(device: Device, value: Any, dtype: np.dtype, owner: str) -> Any:
    """The zero point as an array of the input's type, every value checked exactly (SPEC 6: ZeroPointTensor
    shares the InputTensor's DataType)."""
    if dtype.kind not in "iu":  # no support row takes it: a number stands in, so the input's type is refused
        stand_in = np.zeros((), dtype) if isinstance(value, (int, float, np.number)) else value
        return _operand(device, stand_in, owner, "ZeroPointTensor")
    requirement = f"must hold values of the input's type {dtype}"
    if _is_bool(value):
        raise invalid(owner, "ZeroPointTensor", requirement, repr(value))
    if isinstance(value, (int, float, np.integer, np.floating)):
        exact = _integral(value)
        info = np.iinfo(dtype)
        if exact is None or not info.min <= exact <= info.max:
            raise invalid(owner, "ZeroPointTensor", requirement, repr(value))
        return _as_array(device, np.asarray(exact, dtype=dtype), owner, "ZeroPointTensor")
    array = _operand(device, value, owner, "ZeroPointTensor")
    if array.dtype == dtype:
        return array
    if not _fits(array, dtype):
        raise invalid(owner, "ZeroPointTensor", f"{requirement} (every element exactly)",
                      f"an array of {array.dtype} that does not fit")
    return array.astype(dtype)


def _integral(value: int | float | np.integer | np.floating) -> int | None:
    """The number as an exact integer, or None if it is not one (1.5, NaN, an infinity)."""
    if isinstance(value, (int, np.integer)):
        return int(value)
    as_float = float(value)
    return int(as_float) if math.isfinite(as_float) and as_float.is_integer() else None


def _fits(array: Any, dtype: np.dtype) -> bool:
    """Whether every element of an integer or float array is an integer in ``dtype``'s range (reductions on
    the array's own device; only their results come to the host)."""
    if array.size == 0:
        return True
    info = np.iinfo(dtype)
    if array.dtype.kind == "f" and not bool((array == array.round()).all()):  # 1.5 fails, and NaN
        return False
    low, high = _integral(array.min().item()), _integral(array.max().item())
    return low is not None and high is not None and info.min <= low and high <= info.max


def argmin(x: Any, axes: int | Sequence[int] | None = None, *,
           axis_direction: AxisDirection | str = "INCREASING", output_type: DataType | str = "INT64",
           out: Any = None, device: Device | str | None = None) -> Any:
    """Indices of the smallest elements over ``axes`` (None: all); the rank is kept, as in DirectML.
    ``out``, if given, receives them: an array of the result's shape and of ``output_type``.

    >>> argmin(np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], np.float32), 1)
    array([[0],
           [1],
           [0]])
    """
    if _tracing(x):
        return _traced().argmin(x, axes, axis_direction, output_type, out, device)
    owner = ARGMIN_SCHEMA.name
    device = _resolve_device(device, x, owner)
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

    full = (1,) * pad + out_shape
    _run(device, ARGMIN_SCHEMA, make, [_view_as(array, (1,) * pad + (array.shape or (1,)))],
         _view_as(result.array, full))
    return result.deliver()


def _normalize_axes(axes: object, rank: int, owner: str) -> tuple[int, ...]:
    if axes is None:
        return tuple(range(rank))
    if isinstance(axes, np.ndarray) and axes.ndim <= 1:
        listed: list[object] = axes.reshape(-1).tolist() if axes.ndim else [axes.item()]
    elif isinstance(axes, (int, np.integer)):
        listed = [axes]
    elif isinstance(axes, Sequence) and not isinstance(axes, (str, bytes)):
        listed = list(axes)
    else:
        raise invalid(owner, "Axes", "must be an integer, a sequence of integers or None", repr(axes))
    normalized = []
    for k, axis in enumerate(listed):
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -rank <= axis < rank:
            raise invalid(owner, f"Axes[{k}]", f"must be an integer in [{-rank}, {rank - 1}]", repr(axis))
        normalized.append(int(axis) % rank)
    if len(set(normalized)) != len(normalized):
        raise invalid(owner, "Axes", "must not repeat an axis", listed)
    return tuple(sorted(normalized))
