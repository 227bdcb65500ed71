"""Layout algebra shared by compiled backends: merging dimensions that several tensors walk alike.

Pure Python and backend-free, so it is tested on any machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Layout:
    """Sizes shared by several operands, and each operand's strides (in elements) over them."""

    sizes: tuple[int, ...]
    strides: tuple[tuple[int, ...], ...]  # one tuple per operand

    @property
    def rank(self) -> int:
        return len(self.sizes)


def collapse(sizes: Sequence[int], strides: Sequence[Sequence[int]]) -> Layout:
    """Drop size-1 dimensions and merge each dimension into the next where every operand allows it.

    Dimension k merges into k + 1 when, for every operand, ``stride[k] == stride[k+1] * size[k+1]``
    (a zero stride on both merges too). The result walks the same elements in the same order; it has at
    least one dimension.
    """
    kept = [k for k, n in enumerate(sizes) if n != 1]
    new_sizes: list[int] = []
    new_strides: list[list[int]] = [[] for _ in strides]
    for k in kept:
        if new_sizes and all(s_prev[-1] == st[k] * sizes[k] for s_prev, st in zip(new_strides, strides)):
            new_sizes[-1] *= sizes[k]
            for s_prev, st in zip(new_strides, strides):
                s_prev[-1] = st[k]
            continue
        new_sizes.append(sizes[k])
        for s_prev, st in zip(new_strides, strides):
            s_prev.append(st[k])
    if not new_sizes:
        return Layout((1,), tuple((0,) for _ in strides))
    return Layout(tuple(new_sizes), tuple(tuple(s) for s in new_strides))


def split_axes(sizes: Sequence[int], in_strides: Sequence[int], out_strides: Sequence[int],
               axes: Sequence[int], others: Sequence[Sequence[int]] = ()) -> tuple[Layout, Layout]:
    """A reduction as (kept dimensions over input and output, reduced dimensions over the input).

    Each part is collapsed on its own. The reduced layout walks reduced elements in row-major order over
    the reduced axes (increasing axis order), which is the order ARGMIN's flattened index counts in.
    ``others``: the strides of further operands of the input's sizes (a fused prologue's), which follow:
    kept strides are (input, output, *others), reduced ones (input, *others).
    """
    kept = [k for k in range(len(sizes)) if k not in axes]
    reduced = sorted(axes)
    inputs = [in_strides, *others]
    return (collapse([sizes[k] for k in kept], [[st[k] for k in kept] for st in [in_strides, out_strides, *others]]),
            collapse([sizes[k] for k in reduced], [[st[k] for k in reduced] for st in inputs]))
