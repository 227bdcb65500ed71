"""The layout a fused kernel runs over when it holds QUANTIZE or DEQUANTIZE (their own: ``ops/blocked.py``), or
ELEMENT_WISE_QUANTIZED_LINEAR_ADD (a one-element scale or zero point read through zero strides).

Those operators' kernels see an axis cut into blocks as two axes, (blocks, block size), the quantization
tensors' stride 0 along the second, and 4-bit data staged one element a byte (``opendml.kernels.staged``). A
fused kernel holding one runs over that layout as a whole: every tensor of its nodes has the kernel's sizes
(an element-wise chain's, or a reduction's input's) or is a quantization tensor of them, so each is described
over the cut axes too: an axis of ``n`` elements, stride ``s``, cut into blocks of ``b`` becomes
``(n / b, b)`` of strides ``(b * s, s)``; a quantization tensor's ``n / b`` values ``(n / b, b)`` of strides
``(s, 0)``; one value for the axis, or a reduced output's axis, zero strides. The same elements are read and
written in the same order, so the values are those of the nodes run one by one; a reduction's axes are
mapped onto the cut ones (a cut axis reduced is its two parts, adjacent, so the flattened index over them is
the axis's own index).

Where the nodes cut one axis into blocks of different sizes, or the cut leaves more than 8 axes, there is no
layout: the planner leaves those nodes out of the fused kernel (each runs as a step of its own).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..dtypes import FOUR_BIT_TYPES
from ..ops.blocked import Operand, Quantization, unpacked
from ..tensor import MAX_DIMENSIONS, TensorDesc
from .validate import CheckedGraph


@dataclass(frozen=True)
class FusedLayout:
    """A fused kernel's views: one ``Operand`` per kernel operand, per output (the root's, then the extras),
    and the reduced axes over the cut layout (a reduction root's; empty otherwise)."""

    operands: tuple[Operand, ...]
    outputs: tuple[Operand, ...]
    axes: tuple[int, ...] = ()


def holds_layout(graph: CheckedGraph, nodes: Iterable[int]) -> bool:
    """Whether any of ``nodes`` runs over a layout of its own (QUANTIZE, DEQUANTIZE, QUANTIZED_LINEAR_ADD)."""
    return any(graph.operators[n].definition.layout is not None for n in nodes)


def cuts(graph: CheckedGraph, nodes: Iterable[int]) -> dict[int, int] | None:
    """The block size each cut axis takes (the axes where ``1 < block < n``), or None where two nodes cut one
    axis into blocks of different sizes."""
    found: dict[int, int] = {}
    for node in nodes:
        operator = graph.operators[node]
        if not isinstance(operator.params, Quantization):  # cuts no axis (QUANTIZED_LINEAR_ADD's layout neither)
            continue
        x = operator.tensors["InputTensor"]
        assert x is not None
        for axis, (n, block) in enumerate(zip(x.sizes, operator.params.blocks)):
            if 1 < block < n and found.setdefault(axis, block) != block:
                return None
    return found


def view(desc: TensorDesc, sizes: Sequence[int], cut: Mapping[int, int], reduced: Iterable[int] = ()
         ) -> TensorDesc | None:
    """``desc`` (of the kernel's ``sizes``, a quantization tensor of them, or a reduction's output: size 1 on
    the ``reduced`` axes) over the cut axes; None where that takes more than 8 axes."""
    reduced = frozenset(reduced)
    parts: list[tuple[int, int]] = []
    for axis, (n, q, s) in enumerate(zip(sizes, desc.sizes, desc.effective_strides)):
        block = cut.get(axis)
        if axis in reduced:
            parts += [(1, 0)] * (1 if block is None else 2)
        elif block is None:
            parts.append((n, s if q == n else 0))
        elif q == n:
            parts += [(n // block, block * s), (block, s)]
        else:  # a quantization tensor: one value a block (n / block of them), or one for the axis
            parts += [(n // block, s if q > 1 else 0), (block, 0)]
    if len(parts) > MAX_DIMENSIONS:
        return None
    return TensorDesc(desc.data_type, [n for n, _ in parts], [s for _, s in parts],
                      total_tensor_size_in_bytes=desc.total_tensor_size_in_bytes)


def operand(desc: TensorDesc, sizes: Sequence[int], cut: Mapping[int, int], reduced: Iterable[int] = ()
            ) -> Operand | None:
    """A tensor as the fused kernel reads or writes it: a 4-bit one staged (its own sizes, one element a byte)
    and that staging viewed over the cut axes; any other viewed over them as it is."""
    staged = None
    if desc.data_type in FOUR_BIT_TYPES:
        staged = TensorDesc(unpacked(desc.data_type), desc.sizes)
    seen = view(staged or desc, sizes, cut, reduced)
    return None if seen is None else Operand(seen, staged)


def cut_axes(axes: Iterable[int], cut: Mapping[int, int], rank: int) -> tuple[int, ...]:
    """Reduced ``axes`` of a ``rank``-dimensional input over the cut layout (a cut axis is its two parts)."""
    position, mapped = 0, {}
    for axis in range(rank):
        width = 2 if axis in cut else 1
        mapped[axis] = tuple(range(position, position + width))
        position += width
    return tuple(k for axis in sorted(axes) for k in mapped[axis])


def fused_layout(graph: CheckedGraph, nodes: Sequence[int], operands: Sequence[TensorDesc],
                 outputs: Sequence[TensorDesc], axes: Sequence[int] | None) -> FusedLayout | None:
    """The layout of a fused kernel of ``nodes`` (the root last) reading ``operands`` and writing ``outputs``
    (the root's output first; ``axes``: a reduction root's reduced axes, None for an element-wise root), or
    None where there is none (see the module's docstring)."""
    cut = cuts(graph, nodes)
    if cut is None:
        return None
    root = nodes[-1]
    sizes = graph.input_desc(root, 0).sizes if axes is not None else graph.output_desc(root, 0).sizes
    reduced = tuple(axes or ())
    seen_operands = [operand(desc, sizes, cut) for desc in operands]
    # A reduction writes its output over the reduced sizes; its extras, as an element-wise kernel's, over the
    # input's.
    seen_outputs = [operand(desc, sizes, cut, reduced if k == 0 else ()) for k, desc in enumerate(outputs)]
    if any(o is None for o in (*seen_operands, *seen_outputs)):
        return None
    return FusedLayout(tuple(seen_operands), tuple(seen_outputs),  # type: ignore[arg-type]
                       cut_axes(reduced, cut, len(sizes)))
