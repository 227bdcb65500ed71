"""``dequantize`` and ``quantize``: DEQUANTIZE and QUANTIZE (feature level 6_3) on NumPy arrays, their scale and
zero point of the input's rank with sizes dividing its own (blocks), 4-bit data included.

The array convention for 4-bit data (docs/semantics.md, section 11): ml_dtypes' ``int4`` and ``uint4`` arrays,
one element a byte, so that the type travels with the values; an int8 or uint8 array of 4-bit values with
``data_type="INT4"`` or ``"UINT4"`` is taken too. Arrays are copied into packed buffers of the device and the
result read back: these functions take and give NumPy arrays, Dask arrays (``opendml.dask.blocked``: one call
per block, the chunks cut at block boundaries) and traced arrays (``opendml.compile``: whole-byte data only).
CuPy and PyTorch arrays in GPU memory run on the CUDA device and come back as their own kind (4-bit results one
value a byte, int8 or uint8: those libraries have no 4-bit dtype); their values are copied through the host
(``_host``, ``_handed_back``), not read in place. PyTorch tensors in host memory go through NumPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import front_ends
from ..buffer import BufferBinding
from ..dtypes import FOUR_BIT_TYPES, DataType, from_numpy
from ..enums import QuantizationType
from ..errors import invalid, invalid_type
from ..ops.blocked import QUANTIZED
from ..ops.dequantize import DequantizeDesc
from ..ops.quantize import QuantizeDesc
from ..packing import pack4, unpack4
from ..tensor import TensorDesc
from ..typing import DataTypeLike, DeviceLike
from .devices import _on_gpu, _resolve_device, _to_host


def dequantize(x: Any, scale: Any = None, zero_point: Any = None, *, data_type: DataTypeLike | None = None,
               device: DeviceLike = None) -> np.ndarray:
    """DEQUANTIZE: ``(x - zero_point) * scale``, each scale and zero point covering a block of ``x``.

    ``scale`` and ``zero_point`` have ``x``'s rank (a number: one for the whole tensor) and along each axis a
    size dividing ``x``'s: a value per block of ``x.shape[k] // scale.shape[k]`` elements. Either may be a
    number (or of every size 1) beside an array of the other: its one value then serves every block. The
    QuantizationType follows from what is given: no scale NONE (a conversion to FLOAT32), no zero point SCALE
    (the zero point is then the type's midpoint: 8 for UINT4, 128 for UINT8, 0 for INT4 and INT8),
    both SCALE_ZERO_POINT. The result has the scale's type (FLOAT32 for a Python number).

    >>> import ml_dtypes
    >>> dequantize(np.array([[0, 8, 15, 1]], ml_dtypes.uint4), np.float32([[1, 0.5]]))
    array([[-8. ,  0. ,  3.5, -3.5]], dtype=float32)
    """
    owner = "DEQUANTIZE"
    front_end = _front_end(owner, x, scale, zero_point)
    if front_end is not None:
        return front_ends.load(front_end).dequantize(x, scale, zero_point, data_type, device)  # type: ignore[no-any-return]
    device = _resolve_device(device, x, owner)
    like = x
    x, scale, zero_point = (_host(device, a) for a in (x, scale, zero_point))
    values, quantized = _quantized(x, data_type, owner, "x")
    scales = None if scale is None else _scale(scale, values.ndim, owner)
    float_type = DataType.FLOAT32 if scales is None else from_numpy(scales.dtype)
    zero = None if zero_point is None else _zero_point(zero_point, quantized, values.ndim, owner)
    if zero is not None and scales is None:
        raise invalid(owner, "zero_point", "must come with a scale (QuantizationType SCALE_ZERO_POINT)", "no scale")
    kind, tensors, arrays = _quantization(scales, zero, quantized, float_type)
    desc = DequantizeDesc(TensorDesc(quantized, values.shape or (1,)), kind, tensors,
                          TensorDesc(float_type, values.shape or (1,)))
    result = _execute(device, desc, [(quantized, values), *arrays])
    return _handed_back(device, result.view(float_type.numpy).reshape(values.shape), like)


def quantize(x: Any, scale: Any = None, zero_point: Any = None, *, output_type: DataTypeLike | None = None,
             device: DeviceLike = None) -> np.ndarray:
    """QUANTIZE: ``clamp(round(x / scale) + zero_point, Min, Max)``, each scale and zero point covering a block.

    ``x`` is FLOAT32 or FLOAT16, the scale of its type; the output type is the zero point's, else
    ``output_type`` (INT8, INT4, UINT8 or UINT4), else UINT8. A 4-bit result is an ml_dtypes ``int4`` or
    ``uint4`` array. Without a zero point the type's midpoint is added (QuantizationType SCALE); without a
    scale the values are rounded and saturated (NONE).

    >>> quantize(np.float32([[-1.0, 0.2, 2.5, 9.0]]), np.float32([[0.5, 1.0]]), output_type="INT4").tolist()
    [[-2, 0, 2, 7]]
    """
    owner = "QUANTIZE"
    front_end = _front_end(owner, x, scale, zero_point)
    if front_end is not None:
        return front_ends.load(front_end).quantize(x, scale, zero_point, output_type, device)  # type: ignore[no-any-return]
    device = _resolve_device(device, x, owner)
    like = x
    x, scale, zero_point = (_host(device, a) for a in (x, scale, zero_point))
    values = np.asarray(x)
    if values.dtype not in (np.float32, np.float16):
        raise invalid_type(owner, "x", "must be a FLOAT32 or FLOAT16 array", str(values.dtype))
    float_type = from_numpy(values.dtype)
    scales = None if scale is None else _scale(scale, values.ndim, owner, float_type)
    quantized = _output_type(zero_point, output_type, owner)
    zero = None if zero_point is None else _zero_point(zero_point, quantized, values.ndim, owner)
    if zero is not None and scales is None:
        raise invalid(owner, "zero_point", "must come with a scale (QuantizationType SCALE_ZERO_POINT)", "no scale")
    kind, tensors, arrays = _quantization(scales, zero, quantized, float_type)
    shape = values.shape or (1,)
    desc = QuantizeDesc(TensorDesc(float_type, shape), kind, tensors, TensorDesc(quantized, shape))
    raw = _execute(device, desc, [(float_type, values), *arrays])
    count = int(np.prod(shape))
    result = unpack4(raw, quantized, count) if quantized in FOUR_BIT_TYPES else raw[:count].view(quantized.numpy)
    if _on_gpu(like):  # CuPy and PyTorch have no 4-bit dtype: one value a byte, int8 or uint8
        return _handed_back(device, result.reshape(values.shape), like)
    return _as_four_bit(result, quantized).reshape(values.shape)


def _host(device: Any, value: Any) -> Any:
    """An array argument as a NumPy array: a GPU array (CuPy, PyTorch) copied to the host, on a device that
    takes GPU arrays (the CPU device refuses them, as every functional call does); other arrays (a PyTorch
    tensor in host memory) through NumPy's protocols; numbers, NumPy arrays and None as they are."""
    if value is None or isinstance(value, (int, float, np.ndarray, np.generic)):
        return value
    if _on_gpu(value):
        device.backend.as_array(value)
        return _to_host(value)
    if any(hasattr(value, a) for a in ("__array__", "__array_interface__", "__dlpack__")):
        return np.asarray(value)
    return value


def _handed_back(device: Any, result: np.ndarray, like: Any) -> Any:
    """The result in the caller's kind: NumPy for host arrays, the GPU array's own kind (CuPy, PyTorch) for a GPU
    array's caller, copied to the device."""
    if not _on_gpu(like):
        return result
    return device.backend.to_caller(device.backend.xp.asarray(result), like)


def _front_end(owner: str, *arrays: Any) -> str | None:
    """The front end the call goes to: Dask, traced (``opendml.compile``), or None (run here)."""
    return front_ends.kind_of(arrays)


def quantization_shape(scale: tuple[int, ...], zero_point: tuple[int, ...]) -> tuple[int, ...]:
    """The sizes a scale and a zero point of these shapes are both described with: where one holds a single value
    (a number, or every size 1), the other's, that value read through zero strides for every block (DEQUANTIZE
    and QUANTIZE take a scale and a zero point of one shape); else the scale's (a zero point of other sizes is
    then refused by the operator's rule, naming it)."""
    if all(n == 1 for n in scale):
        return zero_point
    return scale


def _described(data_type: DataType, shape: tuple[int, ...], sizes: tuple[int, ...]) -> TensorDesc:
    """A quantization tensor of ``shape``: a single value described with ``sizes`` through zero strides (nothing
    copied); any other as it is (sizes unlike the other tensor's are the operator's to refuse)."""
    if shape != sizes and all(n == 1 for n in shape):
        return TensorDesc(data_type, sizes, [0] * len(sizes))
    return TensorDesc(data_type, shape)


def _quantization(scales: np.ndarray | None, zero: np.ndarray | None, quantized: DataType, float_type: DataType
                  ) -> tuple[QuantizationType, list[TensorDesc], list[tuple[DataType, np.ndarray]]]:
    if scales is None:
        return QuantizationType.NONE, [], []
    if zero is None:
        return QuantizationType.SCALE, [TensorDesc(float_type, scales.shape)], [(float_type, scales)]
    sizes = quantization_shape(scales.shape, zero.shape)
    tensors = [_described(float_type, scales.shape, sizes), _described(quantized, zero.shape, sizes)]
    return QuantizationType.SCALE_ZERO_POINT, tensors, [(float_type, scales), (quantized, zero)]


def _execute(device: Any, desc: object, operands: list[tuple[DataType, np.ndarray]]) -> np.ndarray:
    """Create, compile and run the operator over packed copies of ``operands``; the output's bytes."""
    compiled = device.compile_operator(device.create_operator(desc))
    bindings: list[BufferBinding | None] = [BufferBinding(device.buffer_from(_packed(t, a))) for t, a in operands]
    bindings += [None] * (3 - len(bindings))
    output = compiled.operator.tensors["OutputTensor"]
    out = device.create_buffer(output.total_tensor_size_in_bytes)
    compiled.execute(bindings, [BufferBinding(out)])
    return out.to_numpy()  # type: ignore[no-any-return]


def _packed(data_type: DataType, values: np.ndarray) -> np.ndarray:
    if data_type in FOUR_BIT_TYPES:
        data = pack4(values, data_type)
    else:
        data = np.ascontiguousarray(values, data_type.numpy).reshape(-1).view(np.uint8)
    padded = np.zeros(-(-max(data.size, 1) // 4) * 4, np.uint8)
    padded[:data.size] = data
    return padded


def _quantized(x: Any, data_type: DataTypeLike | None, owner: str, name: str) -> tuple[np.ndarray, DataType]:
    """The integer values of ``x`` and their type: INT8, UINT8, or INT4 and UINT4 (ml_dtypes' arrays, or int8
    and uint8 arrays of 4-bit values with ``data_type``)."""
    array = np.asarray(x)
    try:
        own = from_numpy(array.dtype)
    except KeyError:
        raise invalid_type(owner, name, "must be an INT8, INT4, UINT8 or UINT4 array", str(array.dtype)) from None
    wanted = own if data_type is None else DataType.parse(data_type, owner=owner, field="data_type")
    if wanted not in QUANTIZED:
        if data_type is not None:
            raise invalid(owner, "data_type", "must be INT8, INT4, UINT8 or UINT4", wanted.name)
        raise invalid_type(owner, name, "must be an INT8, INT4, UINT8 or UINT4 array", str(array.dtype))
    if own in FOUR_BIT_TYPES:
        array = array.astype(wanted.numpy)  # ml_dtypes' values, one a byte, converted (never reinterpreted)
    elif own is not wanted and not (wanted in FOUR_BIT_TYPES and wanted.numpy == own.numpy):
        raise invalid_type(owner, name, f"must be an array of {wanted.name} values", str(array.dtype))
    low, high = wanted.integer_range
    if array.size and (int(array.min()) < low or int(array.max()) > high):
        raise invalid(owner, name, f"must hold {wanted.name} values, in [{low}, {high}]",
                      f"values in [{int(array.min())}, {int(array.max())}]")
    return array, wanted


def _scale(scale: Any, rank: int, owner: str, float_type: DataType | None = None) -> np.ndarray:
    array = np.asarray(scale, dtype=None if isinstance(scale, np.ndarray | np.generic) else np.float32)
    if array.dtype not in (np.float32, np.float16):
        raise invalid_type(owner, "scale", "must be FLOAT32 or FLOAT16", str(array.dtype))
    if float_type is not None and from_numpy(array.dtype) is not float_type:
        if not isinstance(scale, np.ndarray | np.generic):
            array = array.astype(float_type.numpy)
        else:
            raise invalid_type(owner, "scale", f"must be of x's type ({float_type.name})", str(array.dtype))
    return _of_rank(array, rank, owner, "scale")


def _zero_point(zero_point: Any, quantized: DataType, rank: int, owner: str) -> np.ndarray:
    """The zero point as ``quantized`` values: an array of that type (ml_dtypes' for a 4-bit type, or int8 and
    uint8 arrays of its values), or a Python number in its range."""
    if isinstance(zero_point, np.ndarray | np.generic):
        array, _ = _quantized(zero_point, quantized, owner, "zero_point")
    else:
        low, high = quantized.integer_range
        if isinstance(zero_point, bool) or not isinstance(zero_point, int) or not low <= zero_point <= high:
            raise invalid(owner, "zero_point", f"must be an integer in [{low}, {high}] ({quantized.name})",
                          repr(zero_point))
        array = np.asarray(zero_point, quantized.numpy)
    return _of_rank(array, rank, owner, "zero_point")


def _of_rank(array: np.ndarray, rank: int, owner: str, name: str) -> np.ndarray:
    if array.ndim == 0:
        return array.reshape((1,) * max(rank, 1))
    if array.ndim != max(rank, 1):
        raise invalid(owner, f"{name}.ndim", f"must equal x.ndim ({rank}), or be a number", array.ndim)
    return array


def _output_type(zero_point: Any, output_type: DataTypeLike | None, owner: str) -> DataType:
    """The zero point's type (an array's), else ``output_type``, else UINT8; an int8 or uint8 zero point with
    ``output_type`` INT4 or UINT4 holds that type's values."""
    wanted = None if output_type is None else DataType.parse(output_type, owner=owner, field="output_type")
    if isinstance(zero_point, np.ndarray | np.generic):
        own = from_numpy(np.asarray(zero_point).dtype)
        if wanted is None:
            wanted = own
        elif own is not wanted and not (wanted in FOUR_BIT_TYPES and wanted.numpy == own.numpy):
            raise invalid(owner, "output_type", f"must be the zero point's type ({own.name})", wanted.name)
    wanted = wanted or DataType.UINT8
    if wanted not in QUANTIZED:
        raise invalid(owner, "output_type", "must be INT8, INT4, UINT8 or UINT4", wanted.name)
    return wanted


def _as_four_bit(values: np.ndarray, data_type: DataType) -> np.ndarray:
    """A 4-bit result as ml_dtypes' ``int4`` or ``uint4`` (the array convention); other types as they are."""
    if data_type not in FOUR_BIT_TYPES:
        return values
    try:
        import ml_dtypes
    except ImportError:  # pragma: no cover - ml_dtypes comes with onnx; without it, values one a byte
        return values
    return values.astype(ml_dtypes.int4 if data_type is DataType.INT4 else ml_dtypes.uint4)


__all__ = ["dequantize", "quantize"]
