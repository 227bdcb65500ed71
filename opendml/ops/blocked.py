"""What QUANTIZE and DEQUANTIZE (feature level 6_3) share: their description's fields, their tensors and support
table, their QuantizationType, the blocks a quantization tensor's sizes make, the default zero point and the
kernel operand that adds or subtracts it, and the layout their kernels run over.

A quantization tensor (the scale, the zero point) has the input's DimensionCount; along each axis its size ``q``
divides the input's ``n``, and each of its values covers ``n / q`` consecutive elements there: a block. ``q == 1``
is one value for the whole axis (per-tensor along it), ``q == n`` one per element (per-axis), anything between
blocks (ONNX's ``block_size`` is ``n / q``). docs/semantics.md ("QUANTIZE and DEQUANTIZE") states the rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FOUR_BIT_TYPES
from ..dtypes import DataType as T
from ..enums import QuantizationType
from ..errors import invalid, kernel_unsupported
from ..feature_levels import FeatureLevel as L
from ..schema import OperatorSchema, SupportRow, TensorField
from ..tensor import MAX_DIMENSIONS, TensorDesc

SCALE = "QuantizationTensors[0]"
ZERO_POINT = "QuantizationTensors[1]"

TENSORS = (
    TensorField("InputTensor", "input"),
    TensorField(SCALE, "input", optional=True, index=0),
    TensorField(ZERO_POINT, "input", optional=True, index=1),
    TensorField("OutputTensor", "output"),
)

FLOATS = frozenset({T.FLOAT32, T.FLOAT16})
QUANTIZED = frozenset({T.INT8, T.INT4, T.UINT8, T.UINT4})
# The pages' QuantizationTensors row: FLOAT32, FLOAT16, INT8, INT4, UINT8, UINT4 (the scale is a float, the
# zero point of the quantized type: ``check_quantization_tensors``).
QUANTIZATION_TYPES = FLOATS | QUANTIZED


def row(inputs: frozenset[T], outputs: frozenset[T]) -> SupportRow:
    """The one support table (DML_FEATURE_LEVEL_6_3 and above, 1 to 8 dimensions); either quantization tensor
    may be absent (the QuantizationType says how many there are)."""
    types = {"InputTensor": inputs, SCALE: QUANTIZATION_TYPES, ZERO_POINT: QUANTIZATION_TYPES,
             "OutputTensor": outputs}
    return SupportRow(L.FL_6_3, (1, 8), types, frozenset({SCALE, ZERO_POINT}))


def schema(name: str, inputs: frozenset[T], outputs: frozenset[T]) -> OperatorSchema:
    """The operator's schema: introduced at 6_3, the shared tensors, one support row."""
    return OperatorSchema(name=name, introduced=L.FL_6_3, tensors=TENSORS, rows=(row(inputs, outputs),))


@dataclass(frozen=True)
class BlockedQuantizationDesc:
    """The fields of DML_QUANTIZE_OPERATOR_DESC and DML_DEQUANTIZE_OPERATOR_DESC, in DirectML's order:
    InputTensor, QuantizationType, QuantizationTensors (none; the scale; the scale and the zero point),
    OutputTensor. QuantizationTensorCount is the sequence's length."""

    input_tensor: TensorDesc
    quantization_type: QuantizationType | str | int
    quantization_tensors: Sequence[TensorDesc]
    output_tensor: TensorDesc

    @property
    def quantization_tensor_count(self) -> int:
        return len(self.quantization_tensors)


def midpoint(data_type: T) -> int:
    """The zero point of a QuantizationType SCALE (no zero point tensor): the quantized type's midpoint, 0 for
    INT8 and INT4, 128 for UINT8, 8 for UINT4 (SPEC 8.6: DEQUANTIZE's absent zero point is the midpoint)."""
    low, high = data_type.integer_range
    return 0 if low < 0 else (high + 1) // 2


def unpacked(data_type: T) -> T:
    """The whole-byte type a kernel reads or writes a 4-bit operand as (INT4: INT8, UINT4: UINT8)."""
    return {T.INT4: T.INT8, T.UINT4: T.UINT8}.get(data_type, data_type)


@dataclass(frozen=True)
class Quantization:
    """A QUANTIZE's or DEQUANTIZE's checked fields: its type, its quantized type (DEQUANTIZE's input,
    QUANTIZE's output), its float type, and the block size along each axis (1: one value per element)."""

    quantization_type: QuantizationType
    quantized: T
    float_type: T
    blocks: tuple[int, ...]
    broadcast: tuple[bool, ...]  # per axis: one quantization value for the whole axis (its size 1)


def check_quantization(owner: str, desc: object, quantized_field: str, float_field: str) -> Quantization:
    """The rules both operators share: the QuantizationType and QuantizationTensorCount, the output's sizes,
    each quantization tensor's DimensionCount and Sizes (dividing the input's), the scale's and zero point's
    types (the scale of the float tensor's type, the zero point of the quantized tensor's), and the two
    quantization tensors' sizes alike."""
    x: TensorDesc = desc.input_tensor  # type: ignore[attr-defined]
    out: TensorDesc = desc.output_tensor  # type: ignore[attr-defined]
    kind = QuantizationType.parse(desc.quantization_type, owner=owner)  # type: ignore[attr-defined]
    tensors = desc.quantization_tensors  # type: ignore[attr-defined]
    if not isinstance(tensors, (list, tuple)) or not all(isinstance(t, TensorDesc) for t in tensors):
        raise invalid(owner, "QuantizationTensors", "must be a sequence of TensorDesc", repr(tensors))
    if len(tensors) != kind.tensor_count:
        raise invalid(owner, "QuantizationTensorCount", f"must be {kind.tensor_count} for QuantizationType "
                      f"{kind.name}", len(tensors))
    if out.sizes != x.sizes:
        raise invalid(owner, "OutputTensor.Sizes", f"must equal InputTensor.Sizes ({list(x.sizes)})", list(out.sizes))
    fields = {"InputTensor": x, "OutputTensor": out}
    quantized, float_type = fields[quantized_field].data_type, fields[float_field].data_type
    for k, tensor in enumerate(tensors):
        _check_blocks(owner, f"QuantizationTensors[{k}]", tensor, x)
    if tensors:
        scale = tensors[0]
        if scale.data_type is not float_type:
            raise invalid(owner, "QuantizationTensors[0].DataType", f"must equal {float_field}.DataType "
                          f"({float_type.name}): it is the scale", scale.data_type.name)
    if len(tensors) == 2:
        zero_point = tensors[1]
        if zero_point.data_type is not quantized:
            raise invalid(owner, "QuantizationTensors[1].DataType", f"must equal {quantized_field}.DataType "
                          f"({quantized.name}): it is the zero point", zero_point.data_type.name)
        if zero_point.sizes != tensors[0].sizes:
            raise invalid(owner, "QuantizationTensors[1].Sizes", "must equal QuantizationTensors[0].Sizes "
                          f"({list(tensors[0].sizes)}): a scale and a zero point per block",
                          list(zero_point.sizes))
    sizes = tensors[0].sizes if tensors else (1,) * x.dimension_count
    blocks = tuple(n // q for n, q in zip(x.sizes, sizes))
    return Quantization(kind, quantized, float_type, blocks, tuple(q == 1 for q in sizes))


def _check_blocks(owner: str, name: str, tensor: TensorDesc, x: TensorDesc) -> None:
    if tensor.dimension_count != x.dimension_count:
        raise invalid(owner, f"{name}.DimensionCount", f"must equal InputTensor.DimensionCount "
                      f"({x.dimension_count})", tensor.dimension_count)
    for k, (n, q) in enumerate(zip(x.sizes, tensor.sizes)):
        if n % q:
            raise invalid(owner, f"{name}.Sizes[{k}]", f"must divide InputTensor.Sizes[{k}] ({n}): one value for "
                          "each block of equal size along the axis", q)


def expand(values: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """A quantization tensor's values repeated over its blocks to the input's ``sizes`` (the reference's view)."""
    for axis, n in enumerate(sizes):
        values = np.repeat(values, n // values.shape[axis], axis=axis)
    return values


# --- the layout a kernel runs over ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Operand:
    """How a kernel reads or writes one of the operator's tensors: ``desc`` (the kernel's view, of the kernel's
    sizes) over the bound bytes, or, for 4-bit data, over a staging buffer of ``staged`` (the tensor's own
    sizes, packed, one element a byte) that the kernel's execution unpacks into or packs from."""

    desc: TensorDesc
    staged: TensorDesc | None = None


def kernel_layout(owner: str, params: Quantization, tensors: Mapping[str, TensorDesc | None]
                  ) -> dict[str, Operand | None]:
    """Each tensor as the element-wise kernel sees it: an axis cut into blocks becomes two, (blocks, block
    size), the quantization tensors' stride 0 along the second, so that every operand has the kernel's sizes
    and a quantization value is read once per element of its block through strides alone. Axes of size 1 are
    left out; more than 8 axes left is refused (only where an 8-dimensional input is cut into blocks)."""
    x = tensors["InputTensor"]
    assert x is not None
    axes = [(n, b) for n, b in zip(x.sizes, params.blocks)]
    layout: dict[str, Operand | None] = {}
    for name, tensor in tensors.items():
        if tensor is None:
            layout[name] = None
            continue
        staged = None
        source = tensor
        if tensor.data_type in FOUR_BIT_TYPES:
            staged = TensorDesc(unpacked(tensor.data_type), tensor.sizes)
            source = staged
        layout[name] = Operand(_split(owner, source, axes, name), staged)
    return layout


def _split(owner: str, tensor: TensorDesc, axes: list[tuple[int, int]], name: str) -> TensorDesc:
    sizes: list[int] = []
    strides: list[int] = []
    for (n, block), size, stride in zip(axes, tensor.sizes, tensor.effective_strides):
        full = size == n
        if 1 < block < n:  # blocks: (n / block blocks, block elements), a quantization value per block
            parts = [(n // block, block * stride if full else stride), (block, stride if full else 0)]
        else:
            parts = [(n, stride if size > 1 else 0)]
        for part in parts:
            if part[0] > 1:
                sizes.append(part[0])
                strides.append(part[1])
    if not sizes:
        sizes, strides = [1], [0]
    if len(sizes) > MAX_DIMENSIONS:
        raise kernel_unsupported(owner, name, f"must have at most {MAX_DIMENSIONS} dimensions once its "
                                 "blocked axes are cut in two (blocks, block size)", len(sizes))
    return TensorDesc(tensor.data_type, sizes, strides, total_tensor_size_in_bytes=tensor.total_tensor_size_in_bytes)


def zero_point_reference(params: Quantization, zero_point: np.ndarray | None, sizes: Sequence[int]
                         ) -> np.ndarray | int:
    """The zero point each element uses, as int64 (the tensor repeated over its blocks), the midpoint for
    QuantizationType SCALE, else 0."""
    if zero_point is not None:
        return expand(zero_point, sizes).astype(np.int64)
    return midpoint(params.quantized) if params.quantization_type is QuantizationType.SCALE else 0


def zero_point_operand(params: Quantization, present: bool, scalars: list[np.generic]) -> ex.Expr | None:
    """The kernel's zero point in the quantized type as held (operand 2 where the tensor is bound, else the
    midpoint of QuantizationType SCALE as a kernel argument appended to ``scalars``); None where it is 0."""
    held = unpacked(params.quantized)
    if present:
        return ex.Load(2, held)
    if params.quantization_type is QuantizationType.SCALE and midpoint(params.quantized):
        scalars.append(held.numpy.type(midpoint(params.quantized)))
        return ex.Param(len(scalars) - 1, held)
    return None


def load_float32(operand: int, data_type: T) -> ex.Expr:
    """A float operand read as float32 (FLOAT16 converted exactly)."""
    value: ex.Expr = ex.Load(operand, data_type)
    return value if data_type is T.FLOAT32 else ex.ToFloat32(value)


def four_bit_clamp(value: ex.Expr, data_type: T, scalars: list[np.generic]) -> ex.Expr:
    """An INT8 or UINT8 value clamped to a 4-bit type's range (nothing for a whole-byte type): the bounds are
    kernel arguments appended to ``scalars``."""
    if data_type not in FOUR_BIT_TYPES:
        return value
    low, high = data_type.integer_range
    held = unpacked(data_type)
    if low < 0:
        bound = ex.Param(len(scalars), held)
        scalars.append(held.numpy.type(low))
        value = ex.Select(ex.Less(value, bound), bound, value)
    top = ex.Param(len(scalars), held)
    scalars.append(held.numpy.type(high))
    return ex.Select(ex.Less(top, value), top, value)
