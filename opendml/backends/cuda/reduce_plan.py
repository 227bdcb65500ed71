"""REDUCE's value functions on CUDA: the plan. Which accumulation a spec takes (``mode``: exact float sums,
exact sums of squares, wrapped integer sums, maxima and minima, or MULTIPLY's products) and its words of scratch an
output, how the scan cuts each output's reduction into pieces (``plan_reduce``: the rows or the columns family;
``plan_tree``: MULTIPLY's pairwise tree at a level), the grids of the scan and the finish pass,
and the refusal of a plan whose digits could overflow before the finish pass (``check_plan``, ``MOST_CHUNKS``: why
that bound holds is in ``reduce_c``'s docstring).

The CUDA C of the scan is rendered by ``reduce_c``, that of the finish pass by ``reduce_finish_c``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ...dtypes import DataType
from ...errors import KernelUnsupportedError, kernel_unsupported
from ...kernels.spec import KernelSpec
from ...tensor import TensorDesc
from ..layout import Layout, split_axes
from .plan import BLOCK

DIGITS = 11  # the CPU accumulator's digits (cpu_kernels/sum_accumulator.py)
NAN, PINF, NINF, NONNEG = DIGITS, DIGITS + 1, DIGITS + 2, DIGITS + 3
THREAD_CHUNK = 256  # elements a thread sums in float64 before they enter the digits
THREAD_LOADS = 8  # elements a thread loads at once (all in flight) before it adds them
SPAN = 29 - 8  # binades a chunk of THREAD_CHUNK FLOAT32 elements may span and still sum exactly
# Elements a lane of the rows family adds before its warp tests whether the warp's elements sum exactly together
# (``reduce_c._warp_exact_scan``: a span of at most 29 - log2(32 WARP_CHUNK) binades, 18 here, where random normal
# samples of 2048 almost always fit; 8192 of them (THREAD_CHUNK) fit 16 binades in about half the warps).
WARP_CHUNK = 64
# Blocks per multiprocessor a row scan aims for, the fewest elements a row's piece holds, and the threads per
# multiprocessor a column scan aims for (rows split into pieces where the outputs are fewer).
ROW_BLOCKS_PER_SM = 8
ROW_PIECE = BLOCK * 64
COLUMN_THREADS_PER_SM = 1024
COLUMN_PIECE = 64

EXACT_FUNCTIONS = frozenset({"SUM", "AVERAGE", "L1", "LOG_SUM"})
SQUARE_FUNCTIONS = frozenset({"SUM_SQUARE", "L2"})
ORDER_FUNCTIONS = frozenset({"MAX", "MIN"})
FLOATS = frozenset({DataType.FLOAT32, DataType.FLOAT16})
WRAP_TYPES = frozenset({DataType.INT32, DataType.UINT32})
ORDER_TYPES = FLOATS | {DataType.INT32, DataType.INT16, DataType.INT8, DataType.UINT32, DataType.UINT16,
                        DataType.UINT8}
SIGNED = frozenset({DataType.INT32, DataType.INT16, DataType.INT8})
# Output format of the exact sums: precision, base (in units of 2**-149), infinity's, NaN's and the sign's bits.
FORMATS = {DataType.FLOAT32: (24, 0, 0x7F800000, 0x7FC00000, 0x80000000),
           DataType.FLOAT16: (11, 125, 0x7C00, 0x7E00, 0x8000)}
# Sums of squares: the CPU's accumulator of squares (cpu_kernels/squares.py): SQUARE_DIGITS digits of base 2**32 in
# units of 2**-298, then the NaN and infinity words. A thread's chunk of SQUARE_CHUNK elements is split against one
# boundary: its elements may span SQUARE_SPAN binades (2 D + 2 b - 6 <= 53 with 2**b = SQUARE_CHUNK: reduce_c).
SQUARE_DIGITS, SQUARE_UNIT = 20, 298
SQUARE_NAN, SQUARE_INF = SQUARE_DIGITS, SQUARE_DIGITS + 1
SQUARE_CHUNK, SQUARE_SPAN = 32, 24
# Chunks in a row that fit one boundary join a group of at most SQUARE_GROUP elements, split against the boundary of
# its largest field (b = 10, the CPU's blocks: its elements may span SQUARE_GROUP_SPAN binades), whose two sums enter
# the digits once: two additions a group, not a chunk.
SQUARE_GROUP, SQUARE_GROUP_SPAN = 1024, 19
MOST_SQUARES = 1 << 29  # elements an output's digits take without a carry (reduce_c's docstring)
# LOG_SUM_EXP ("logsumexp") keeps the exact sum's words of its terms, and MAX's two words (its ``m``) apart.
WORDS = {"exact": DIGITS + 4, "squares": SQUARE_DIGITS + 2, "wrap": 1, "order": 2, "logsumexp": DIGITS + 4}
# MULTIPLY: the CPU's pairwise tree cut at a level of at most TREE_MOST_WIDTH nodes an output, the first whose nodes
# (over every output) number at most TREE_NODES_PER_SM a multiprocessor: a thread a node, a word of scratch each.
TREE_NODES_PER_SM = 2048
TREE_MOST_WIDTH = 1 << 16
PRODUCT_TYPES = FLOATS | WRAP_TYPES


def mode(spec: KernelSpec) -> str:
    """How ``spec``'s accumulation runs: "exact" (float sums), "squares" (SUM_SQUARE, L2), "wrap" (integer SUM),
    "order" (MAX, MIN) or "product" (MULTIPLY); a function or type not lowered is refused by name."""
    accumulation = spec.accumulation
    assert accumulation is not None
    function, x = accumulation.function, spec.inputs[0]
    if len(spec.inputs) != 1 or x is None or spec.extra or repr(spec.element) != f"Load(0, {x.name})":
        raise kernel_unsupported(spec.operator, "Accumulation element", "must be the input's own elements on "
                                 "backend 'cuda' (a computed prologue is not lowered for REDUCE's value functions)",
                                 repr(spec.element))
    if function in EXACT_FUNCTIONS and x in FLOATS:
        return "exact"
    if function in SQUARE_FUNCTIONS and x in FLOATS:
        return "squares"
    if function == "LOG_SUM_EXP" and x in FLOATS:
        return "logsumexp"
    if function == "SUM" and x in WRAP_TYPES:
        return "wrap"
    if function in ORDER_FUNCTIONS and x in ORDER_TYPES:
        return "order"
    if function == "MULTIPLY" and x in PRODUCT_TYPES:
        return "product"
    raise unsupported_function(spec.operator, function, x)


def unsupported_function(operator: str, function: str, x: DataType) -> KernelUnsupportedError:
    return kernel_unsupported(operator, "Function", "must be SUM, AVERAGE, L1, SUM_SQUARE, L2, LOG_SUM or "
                              "LOG_SUM_EXP of FLOAT32 or FLOAT16, SUM or MULTIPLY of FLOAT32, FLOAT16, INT32 or "
                              "UINT32, MAX or MIN, or ARGMIN or ARGMAX on backend 'cuda'",
                              f"{function} of {x.name}")


def layouts(spec: KernelSpec, x: TensorDesc, output: TensorDesc) -> tuple[Layout, Layout]:
    """The kept layout (strides of the InputTensor, then the OutputTensor) and the reduced one (the
    InputTensor's)."""
    assert spec.accumulation is not None
    return split_axes(x.sizes, x.effective_strides, output.effective_strides, spec.accumulation.axes)


@dataclass(frozen=True)
class ReducePlan:
    """How a REDUCE scan runs: ``rows`` (a block per piece of an output, its threads striding along the
    reduction: the input's fastest-moving dimension is reduced) or ``columns`` (a thread per piece, adjacent
    threads on adjacent outputs: it is kept); each output's reduction cut into ``splits`` pieces of ``chunk``
    elements. MULTIPLY's pieces are instead the ``splits`` nodes of its pairwise tree ``levels`` above the
    elements (``tree_sizes``), ``chunk`` unused."""

    family: str
    splits: int
    chunk: int
    outputs: int
    length: int
    levels: int = 0
    tree: bool = False

    @property
    def items(self) -> int:
        return self.outputs * self.splits


def plan_reduce(x: TensorDesc, axes: Sequence[int], kept: Layout, reduced: Layout, sm_count: int) -> ReducePlan:
    """The plan by shape: rows or columns as the input's fastest-moving dimension is reduced or kept, pieces
    where the outputs are too few to fill the GPU."""
    outputs, length = math.prod(kept.sizes), math.prod(reduced.sizes)
    moving = [(s, k) for k, (n, s) in enumerate(zip(x.sizes, x.effective_strides)) if n > 1 and s > 0]
    rows = not moving or min(moving)[1] in axes
    if rows:
        blocks = sm_count * ROW_BLOCKS_PER_SM
        splits = max(1, min(int(blocks / outputs + 0.5), math.ceil(length / ROW_PIECE)))
    else:
        threads = sm_count * COLUMN_THREADS_PER_SM
        splits = 1 if outputs * 2 >= threads else max(1, min(math.ceil(threads / outputs),
                                                              math.ceil(length / COLUMN_PIECE)))
    chunk = max(1, math.ceil(length / splits))
    return ReducePlan("rows" if rows else "columns", math.ceil(length / chunk) if length else 1, chunk, outputs,
                      length)


def tree_sizes(length: int) -> list[int]:
    """The widths of MULTIPLY's pairwise tree, from the row's elements to its one node: each level halves the one
    below, rounding up (node ``i`` of a level is the product of nodes ``i`` and ``i + width`` below, where the level
    below has that node; the middle one of an odd level is carried up alone)."""
    sizes = [max(1, length)]
    while sizes[-1] > 1:
        sizes.append((sizes[-1] + 1) // 2)
    return sizes


def plan_tree(x: TensorDesc, axes: Sequence[int], kept: Layout, reduced: Layout, sm_count: int) -> ReducePlan:
    """MULTIPLY's plan: the family by layout, the tree cut at the first level narrow enough (TREE_NODES_PER_SM)."""
    base = plan_reduce(x, axes, kept, reduced, sm_count)
    sizes = tree_sizes(base.length)
    level = next(k for k, n in enumerate(sizes)
                 if n == 1 or (n <= TREE_MOST_WIDTH and n * base.outputs <= sm_count * TREE_NODES_PER_SM))
    return ReducePlan(base.family, sizes[level], 0, base.outputs, base.length, level, True)


def plan_for(spec: KernelSpec, x: TensorDesc, kept: Layout, reduced: Layout, sm_count: int) -> ReducePlan:
    """The plan of ``spec``'s mode: MULTIPLY's tree, or the pieces of the others."""
    assert spec.accumulation is not None
    planner = plan_tree if mode(spec) == "product" else plan_reduce
    return planner(x, spec.accumulation.axes, kept, reduced, sm_count)


def scratch_words(plan: ReducePlan, how: str) -> int:
    """The words of scratch of a launch: each output's (MULTIPLY: a word a node of its tree's cut)."""
    return plan.outputs * (plan.splits if how == "product" else WORDS[how])


MOST_CHUNKS = 1 << 25  # chunks an output's digits take without a carry (the module's docstring)


def warp_chunk(plan: ReducePlan) -> int:
    """Elements a lane of the rows family adds before its warp's span test: WARP_CHUNK, or THREAD_CHUNK where an
    output's chunks of WARP_CHUNK would pass MOST_CHUNKS (a lane adding alone adds once a chunk)."""
    if plan.length // WARP_CHUNK + plan.splits * BLOCK <= MOST_CHUNKS:
        return WARP_CHUNK
    return THREAD_CHUNK


def check_plan(operator: str, plan: ReducePlan, how: str = "exact") -> None:
    """Refuse, by name, a reduction whose digits could overflow before the finish pass (an output's chunks: its
    elements / THREAD_CHUNK (the rows family: ``warp_chunk``), and one more a thread's piece; sums of squares: at most
    two additions an element)
    or whose indices would wrap (32-bit counters)."""
    if how == "squares" and plan.length + BLOCK > MOST_SQUARES:
        raise kernel_unsupported(operator, "InputTensor.Sizes", f"must give at most {MOST_SQUARES - BLOCK} reduced "
                                 "elements an output for SUM_SQUARE and L2 on backend 'cuda'",
                                 f"{plan.length} elements")
    if plan.tree:
        chunks = 0  # no digits: the tree's nodes are products
    else:
        chunk = warp_chunk(plan) if plan.family == "rows" else THREAD_CHUNK
        chunks = plan.length // chunk + plan.splits * (BLOCK if plan.family == "rows" else 1)
    if chunks > MOST_CHUNKS or plan.length + BLOCK >= 1 << 32:
        raise kernel_unsupported(operator, "InputTensor.Sizes", f"must give at most {MOST_CHUNKS} chunks of "
                                 f"{THREAD_CHUNK} elements an output and fewer than 2**32 - {BLOCK} reduced elements "
                                 "on backend 'cuda'", f"{plan.length} elements in {plan.splits} pieces")


def grid(plan: ReducePlan, sm_count: int) -> int:
    """The scan's blocks (grid-stride loops: any count gives the same words)."""
    if plan.tree:  # a thread a node
        return max(1, min(math.ceil(plan.items / BLOCK), sm_count * 32))
    if plan.family == "rows":
        return max(1, min(plan.items, sm_count * 32))
    return max(1, min(math.ceil(plan.items / BLOCK), sm_count * 32))


def finish_grid(plan: ReducePlan, sm_count: int) -> int:
    if plan.tree:  # a block folds each output's nodes
        return max(1, min(plan.outputs, sm_count * 32))
    return max(1, min(math.ceil(plan.outputs / BLOCK), sm_count * 32))
