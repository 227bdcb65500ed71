"""Operators described anew so that every read of a computed value is an edge of one compiled graph.

An intermediate edge joins tensors of one DataType and one set of Sizes (docs/graphs.md). A reader often
reads a computed value through other sizes: leading 1s its support row needs, a blocked scale's split
axis, ArgMin's and ArgMax's dropped axis (keepdims = 0), a computed scale broadcast by zero strides. A
read is a *view*: sizes S and element strides v over the producer's packed output of sizes Q. Two rules make
every such read an edge, without relaxing the graph's rule:

- **Recompute in the reader's sizes.** A view is *affine* when each reader axis m (of size > 1) steps
  the producer's multi-index by a fixed digit vector d_m (v_m unravelled over Q) with no carry over
  the whole range (sum over m of (S_m - 1) * d_mk < Q_k for every axis k). Then the producer is
  described again with output sizes S, packed, each input's strides composed with the view (input j's
  stride on axis m becomes sum over k of d_mk * s_jk): for element-wise operators (every tensor has
  the output's sizes) element c of the new node is element i(c) of the old one, computed by the same
  arithmetic, so the bytes are the same. Its own computed inputs are read through the composed views,
  recursively, down to bound values, whose descriptions just take the composed strides. ARGMIN (and
  ARGMAX, alike throughout) is computed again with each reduced axis moved onto a size-1 axis of S (in
  order, so the flattened index runs as before).
- **Refine the reader.** Where no such node exists, the reader itself is described in a finer index
  space, which changes no element order: a reader axis that crosses the producer's split axes (a carry)
  is split like them, and where ARGMIN needs a size-1 axis that S lacks, leading 1s are inserted. The
  reader's output is then packed in the finer sizes: the same bytes, so a graph output binds it as it
  is, and later readers read it through views like any other. An ARGMIN reader whose reduced axis is
  split reduces over all its parts (the flattened index is the same).

A view that carries even after splitting (two different splits of one axis that do not divide each
other) has no edge: the program builder reports the model as unsupported, before anything runs. Only
two blocked nodes reach it, a QuantizeLinear and a DequantizeLinear (either order, or two of one) whose
block sizes along one axis of the value between them do not nest (blocks of 2 and of 3 over 6).

Cost: a recomputed value is computed once per view that reads it (cached by view), so a [C] scale read
by a DequantizeLinear over [N, C, H] is computed N * C * H times, and a value read both through its own
sizes and through another view is computed twice. Where a step's own node is read by no one, it is
left out.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from ..errors import message
from ..ops import BY_DESC_TYPE
from ..ops.argmax import ArgMaxDesc
from ..ops.argmin import ArgMinDesc
from ..ops.definition import OperatorDefinition
from ..ops.reduce import ReduceDesc
from ..ops.softmax import ActivationSoftmax1Desc, ActivationSoftmaxDesc
from ..tensor import TensorDesc
from .errors import UnsupportedModelError

Parts = tuple[tuple[int, ...], ...]  # per axis, the sizes it is split into, outermost first
Steps = list[tuple[int, ...]]  # per reader axis, its step of the producer's multi-index
# Described alike: one input reduced over axes, one output of its rank (size 1 on the axes); REDUCE's value
# functions too, whose each output element is its own axes' reduction wherever the rows are moved.
ArgReduction = ArgMinDesc | ArgMaxDesc | ReduceDesc


class NeedsOnes(Exception):
    """ARGMIN needs ``count`` more size-1 axes in the sizes it is asked to be computed in (caught by the
    program builder, which inserts leading 1s in the reader; never seen outside opendml.onnx)."""

    def __init__(self, count: int) -> None:
        super().__init__(count)
        self.count = count


def definition(desc: object) -> OperatorDefinition:
    return BY_DESC_TYPE[type(desc)]


def tensors(desc: object) -> dict[str, TensorDesc | None]:
    return definition(desc).tensors(desc)


def output_of(desc: object, output: int = 0) -> TensorDesc:
    """The description of the operator's output tensor ``output`` (in the schema's order)."""
    out = tensors(desc)[definition(desc).schema.outputs[output].name]
    assert out is not None
    return out


def recomputable(desc: object) -> bool:
    """Whether ``recompute`` can describe the operator in a reader's sizes: ARGMIN and ARGMAX, and element-wise
    operators (one output, every tensor of its sizes). Others (TOP_K, REDUCE, even where an axis of size 1 or
    K = the axis's size gives the input the output's sizes) are not: a reader of their output through other sizes
    reads it in a later graph (``program.py``)."""
    if isinstance(desc, ReduceDesc):  # recomputed per element of a broadcast, it would be redone that many times
        return False
    if isinstance(desc, ArgReduction):
        return True
    sizes = output_of(desc).sizes
    return len(definition(desc).schema.outputs) == 1 and all(t is None or t.sizes == sizes
                                                             for t in tensors(desc).values())


def with_tensors(desc: object, new: dict[str, TensorDesc | None]) -> object:
    """The description with some tensors replaced, by DirectML field name."""
    fields = {t.name: t.attribute for t in definition(desc).schema.tensors}
    return dataclasses.replace(desc, **{fields[name]: t for name, t in new.items()})  # type: ignore[type-var]


def _unravel(offset: int, sizes: Sequence[int]) -> tuple[int, ...] | None:
    """The multi-index of an element offset in a packed tensor of ``sizes``; None past its end."""
    digits = [0] * len(sizes)
    for k in range(len(sizes) - 1, -1, -1):
        offset, digits[k] = divmod(offset, sizes[k])
    return None if offset else tuple(digits)


def affine_steps(sizes: Sequence[int], strides: Sequence[int], producer: Sequence[int]) -> Steps | None:
    """Each reader axis's step over the producer's packed sizes, or None where the view carries."""
    steps: Steps = []
    for n, s in zip(sizes, strides):
        step = _unravel(s, producer) if n > 1 else (0,) * len(producer)
        if step is None:
            return None
        steps.append(step)
    for k, q in enumerate(producer):
        if sum((n - 1) * step[k] for n, step in zip(sizes, steps)) >= q:
            return None
    return steps


def _axis_parts(size: int, stride: int, producer: Sequence[int]) -> tuple[int, ...] | None:
    """A reader axis split where it carries over the producer's axes (innermost part first found)."""
    inner: list[int] = []
    while size > 1 and stride > 0:
        step = _unravel(stride, producer)
        if step is None:
            return None
        run = min(-(-q // d) for q, d in zip(producer, step) if d)  # steps before the first carry
        if run >= size:
            break
        if size % run:
            return None
        inner.insert(0, run)
        size, stride = size // run, stride * run
    return (size, *inner)


def split_parts(sizes: Sequence[int], strides: Sequence[int], producer: Sequence[int]) -> Parts | None:
    """How to split the reader's axes so that its view becomes affine, or None where no split does."""
    parts: list[tuple[int, ...]] = []
    for n, s in zip(sizes, strides):
        axis = _axis_parts(n, s, producer)
        if axis is None:
            return None
        parts.append(axis)
    refined = _refine_tensor(TensorDesc("UINT8", sizes, strides), tuple(parts))
    return tuple(parts) if affine_steps(refined.sizes, refined.effective_strides, producer) is not None else None


def _refine_tensor(tensor: TensorDesc, parts: Parts) -> TensorDesc:
    sizes: list[int] = []
    strides: list[int] = []
    for factors, stride in zip(parts, tensor.effective_strides):
        for k, n in enumerate(factors):
            sizes.append(n)
            strides.append(stride * math.prod(factors[k + 1:]))
    packed = tensor.strides is None
    return TensorDesc(tensor.data_type, sizes, None if packed else strides, flags=tensor.flags)


def refine(desc: object, parts: Parts) -> object:
    """The operator in a finer index space: ``parts`` splits each axis of its (input) sizes."""
    if isinstance(desc, ArgReduction):
        reduced = set(desc.axes)
        out_parts = tuple((1,) * len(p) if a in reduced else p for a, p in enumerate(parts))
        starts = [sum(len(p) for p in parts[:a]) for a in range(len(parts))]
        axes = tuple(starts[a] + i for a in sorted(reduced) for i in range(len(parts[a])))
        return dataclasses.replace(desc, input_tensor=_refine_tensor(desc.input_tensor, parts),
                                   output_tensor=_refine_tensor(desc.output_tensor, out_parts), axes=axes)
    _check_element_wise(desc)
    return with_tensors(desc, {name: None if t is None else _refine_tensor(t, parts)
                               for name, t in tensors(desc).items()})


def with_leading_ones(desc: object, count: int) -> object:
    """The operator with ``count`` size-1 axes in front of every tensor (none of them reduced)."""
    def grow(t: TensorDesc) -> TensorDesc:
        strides = None if t.strides is None else [0] * count + list(t.strides)
        return TensorDesc(t.data_type, [1] * count + list(t.sizes), strides, flags=t.flags)

    if isinstance(desc, ArgReduction):
        return dataclasses.replace(desc, input_tensor=grow(desc.input_tensor), output_tensor=grow(desc.output_tensor),
                                   axes=tuple(a + count for a in desc.axes))
    _check_element_wise(desc)
    return with_tensors(desc, {name: None if t is None else grow(t) for name, t in tensors(desc).items()})


def without_ones(desc: object, count: int) -> object:
    """An element-wise operator with its first ``count`` size-1 axes dropped (for 4-D-only rows)."""
    _check_element_wise(desc)
    out = output_of(desc)
    drop = [m for m, n in enumerate(out.sizes) if n == 1][:count]

    def shrink(t: TensorDesc) -> TensorDesc:
        keep = [m for m in range(len(t.sizes)) if m not in drop]
        strides = None if t.strides is None else [t.strides[m] for m in keep]
        return TensorDesc(t.data_type, [t.sizes[m] for m in keep], strides, flags=t.flags)

    return with_tensors(desc, {name: None if t is None else shrink(t) for name, t in tensors(desc).items()})


def _composed(tensor: TensorDesc, sizes: Sequence[int], steps: Steps) -> TensorDesc:
    strides = [sum(d * s for d, s in zip(step, tensor.effective_strides)) for step in steps]
    return TensorDesc(tensor.data_type, sizes, strides, flags=tensor.flags)


def recompute(desc: object, sizes: Sequence[int], steps: Steps) -> object:
    """The operator computed directly in a reader's view: output packed in ``sizes``, element c being
    the old output's element that the view reads at c. Raises NeedsOnes for an ARGMIN short of 1s."""
    out = output_of(desc)
    packed = TensorDesc(out.data_type, sizes, flags=out.flags)
    if isinstance(desc, ArgReduction):
        return _recompute_argmin(desc, sizes, steps, packed)
    _check_element_wise(desc)
    inputs = {f.name: tensors(desc)[f.name] for f in definition(desc).schema.inputs}
    new: dict[str, TensorDesc | None] = {name: None if t is None else _composed(t, sizes, steps)
                                         for name, t in inputs.items()}
    new[definition(desc).schema.outputs[0].name] = packed
    return with_tensors(desc, new)


def _recompute_argmin(desc: ArgReduction, sizes: Sequence[int], steps: Steps, packed: TensorDesc) -> ArgReduction:
    reduced = sorted(desc.axes)
    ones = [m for m, n in enumerate(sizes) if n == 1]
    if len(ones) < len(reduced):
        raise NeedsOnes(len(reduced) - len(ones))
    places = ones[:len(reduced)]  # in order: the flattened index over the reduced axes runs as before
    x = desc.input_tensor
    new_sizes = list(sizes)
    strides = list(_composed(x, sizes, steps).effective_strides)  # a size-1 axis steps 0: no reduced axis
    for m, axis in zip(places, reduced):
        new_sizes[m], strides[m] = x.sizes[axis], x.effective_strides[axis]
    return dataclasses.replace(desc, input_tensor=TensorDesc(x.data_type, new_sizes, strides, flags=x.flags),
                               output_tensor=packed, axes=tuple(places))


def _check_element_wise(desc: object) -> None:
    """Every tensor has the output's sizes: what recomputing and refining element by element needs. SOFTMAX and
    its kin have such tensors but compute each element from its whole row: described anew in other sizes, their
    rows would change, so a model needing it is refused before anything runs."""
    if isinstance(desc, ActivationSoftmaxDesc | ActivationSoftmax1Desc):
        name = definition(desc).schema.name
        raise UnsupportedModelError([message(name, "OutputTensor", "must be read in its own sizes (SOFTMAX, "
                                             "LOG_SOFTMAX and HARDMAX are not described anew for another view yet)",
                                             f"Sizes {list(output_of(desc).sizes)}")])
    sizes = output_of(desc).sizes
    assert all(t is None or t.sizes == sizes for t in tensors(desc).values()), type(desc).__name__

