"""Launch plans chosen by shape; pure Python, so they are tested without a GPU."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..layout import Layout

BLOCK = 256  # threads per block


@dataclass(frozen=True)
class ArgMinPlan:
    """How one ARGMIN runs: rows (the innermost dimension is reduced) or columns (it is kept)."""

    family: str  # "rows" or "columns"
    group: int  # threads cooperating on one (output, split): 32 (a warp) or the block size, 1 for columns
    block: int
    splits: int  # pieces each reduction is cut into; >1 writes partial results for a combine pass
    chunk: int  # reduced elements per piece
    outputs: int
    length: int  # reduced elements per output


def plan_argmin(sizes: Sequence[int], strides: Sequence[int], axes: Sequence[int], kept: Layout,
                reduced: Layout, sm_count: int) -> ArgMinPlan:
    """Choose the reduction strategy by shape.

    Rows (the input's fastest-moving dimension is reduced): a warp per output for short rows, a block per
    output for long ones, and long rows cut into pieces when there are too few outputs to fill the GPU.
    Columns (the fastest-moving dimension is kept): a thread per output so that neighbouring threads read
    neighbouring elements, the reduction cut into pieces when there are too few outputs.
    """
    outputs, length = math.prod(kept.sizes), math.prod(reduced.sizes)
    moving = [(s, k) for k, (n, s) in enumerate(zip(sizes, strides)) if n > 1 and s > 0]
    rows = not moving or min(moving)[1] in axes
    if not rows:
        threads = sm_count * 2048
        splits = 1 if outputs >= threads // 2 else min(math.ceil(threads / outputs), length)
        chunk = math.ceil(length / splits)
        return ArgMinPlan("columns", 1, BLOCK, math.ceil(length / chunk), chunk, outputs, length)
    if length <= 1024:
        return ArgMinPlan("rows", 32, BLOCK, 1, length, outputs, length)
    blocks = sm_count * 8
    splits = 1 if outputs >= blocks else max(1, min(math.ceil(blocks / outputs), math.ceil(length / (BLOCK * 16))))
    chunk = math.ceil(length / splits)
    return ArgMinPlan("rows", BLOCK, BLOCK, math.ceil(length / chunk), chunk, outputs, length)
