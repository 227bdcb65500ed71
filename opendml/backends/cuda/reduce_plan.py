"""REDUCE's value functions on CUDA: the plan. Which accumulation a spec takes (``mode``: exact float sums,
wrapped integer sums, or maxima and minima) and its words of scratch an output, how the scan cuts each output's
reduction into pieces (``plan_reduce``: the rows or the columns family), the grids of the scan and the finish pass,
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
SPAN = 29 - 8  # binades a chunk of THREAD_CHUNK FLOAT32 elements may span and still sum exactly
# Blocks per multiprocessor a row scan aims for, the fewest elements a row's piece holds, and the threads per
# multiprocessor a column scan aims for (rows split into pieces where the outputs are fewer).
ROW_BLOCKS_PER_SM = 8
ROW_PIECE = BLOCK * 64
COLUMN_THREADS_PER_SM = 1024
COLUMN_PIECE = 64

EXACT_FUNCTIONS = frozenset({"SUM", "AVERAGE", "L1"})
ORDER_FUNCTIONS = frozenset({"MAX", "MIN"})
FLOATS = frozenset({DataType.FLOAT32, DataType.FLOAT16})
WRAP_TYPES = frozenset({DataType.INT32, DataType.UINT32})
ORDER_TYPES = FLOATS | {DataType.INT32, DataType.INT16, DataType.INT8, DataType.UINT32, DataType.UINT16,
                        DataType.UINT8}
SIGNED = frozenset({DataType.INT32, DataType.INT16, DataType.INT8})
# Output format of the exact sums: precision, base (in units of 2**-149), infinity's, NaN's and the sign's bits.
FORMATS = {DataType.FLOAT32: (24, 0, 0x7F800000, 0x7FC00000, 0x80000000),
           DataType.FLOAT16: (11, 125, 0x7C00, 0x7E00, 0x8000)}
WORDS = {"exact": DIGITS + 4, "wrap": 1, "order": 2}


def mode(spec: KernelSpec) -> str:
    """How ``spec``'s accumulation runs: "exact" (float sums), "wrap" (integer SUM) or "order" (MAX, MIN); a
    function or type not lowered is refused by name."""
    accumulation = spec.accumulation
    assert accumulation is not None
    function, x = accumulation.function, spec.inputs[0]
    if len(spec.inputs) != 1 or x is None or spec.extra or repr(spec.element) != f"Load(0, {x.name})":
        raise kernel_unsupported(spec.operator, "Accumulation element", "must be the input's own elements on "
                                 "backend 'cuda' (a computed prologue is not lowered for REDUCE's value functions)",
                                 repr(spec.element))
    if function in EXACT_FUNCTIONS and x in FLOATS:
        return "exact"
    if function == "SUM" and x in WRAP_TYPES:
        return "wrap"
    if function in ORDER_FUNCTIONS and x in ORDER_TYPES:
        return "order"
    raise unsupported_function(spec.operator, function, x)


def unsupported_function(operator: str, function: str, x: DataType) -> KernelUnsupportedError:
    return kernel_unsupported(operator, "Function", "must be SUM, AVERAGE or L1 of FLOAT32 or FLOAT16, SUM of "
                              "INT32 or UINT32, MAX or MIN, or ARGMIN or ARGMAX on backend 'cuda'",
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
    elements."""

    family: str
    splits: int
    chunk: int
    outputs: int
    length: int

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


MOST_CHUNKS = 1 << 25  # chunks an output's digits take without a carry (the module's docstring)


def check_plan(operator: str, plan: ReducePlan) -> None:
    """Refuse, by name, a reduction whose digits could overflow before the finish pass (an output's chunks: its
    elements / THREAD_CHUNK, and one more a thread's piece) or whose indices would wrap (32-bit counters)."""
    chunks = plan.length // THREAD_CHUNK + plan.splits * (BLOCK if plan.family == "rows" else 1)
    if chunks > MOST_CHUNKS or plan.length + BLOCK >= 1 << 32:
        raise kernel_unsupported(operator, "InputTensor.Sizes", f"must give at most {MOST_CHUNKS} chunks of "
                                 f"{THREAD_CHUNK} elements an output and fewer than 2**32 - {BLOCK} reduced elements "
                                 "on backend 'cuda'", f"{plan.length} elements in {plan.splits} pieces")


def grid(plan: ReducePlan, sm_count: int) -> int:
    """The scan's blocks (grid-stride loops: any count gives the same words)."""
    if plan.family == "rows":
        return max(1, min(plan.items, sm_count * 32))
    return max(1, min(math.ceil(plan.items / BLOCK), sm_count * 32))


def finish_grid(plan: ReducePlan, sm_count: int) -> int:
    return max(1, min(math.ceil(plan.outputs / BLOCK), sm_count * 32))
