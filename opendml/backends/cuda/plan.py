"""Launch plans chosen by shape; pure Python, so they are tested without a GPU."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..layout import Layout

BLOCK = 256  # threads per block
# Blocks per multiprocessor a split row reduction aims for (measured on an H100). The pieces an output's row is
# cut into are the nearest whole number to the blocks wanted per output, not the next: ARGMIN FLOAT32 over axes
# {0,2} of [512, 1024, 512] (1024 outputs) ran 2832-2861 GB/s in 3 pieces and 3000 in 2; [2048, 131072] 2941-2993 in
# 2 and 3044 in 1 (copy 2945-2971), where a single output (all axes of 2^28) wants all 2112 pieces: 2924 against
# 2680 in 1584.
ROW_BLOCKS_PER_SM = 16
# 16-byte loads (elements, where a load holds one) a thread of a plain ARGMIN's split row takes at least: a
# piece is one unrolled step of argmin_c.VECTOR_UNROLL loads a thread, all in flight before the first is used,
# not two dependent steps of one or two (greedy decoding, ARGMAX FLOAT16 over the last axis of [64, 128256]:
# pieces of 4008 elements, 2048 blocks and a combine pass took 13.2 us on an H100, the floor 5.5 us).
ROW_PIECE_LOADS = 8
# A plain ARGMIN's rows of 16-byte loads keep a candidate per element of a load where their blocks are at
# most this many a multiprocessor (greedy decoding's small batches): the time is the latency of each thread's
# takes, which the lanes cut (H100, ARGMAX FLOAT16 [8, 32000]: 7.3 -> 5.7 us). Where there are more, their
# registers cost more than they gain: sm_90, FLOAT16 rows take 80 registers against 56 (FLOAT32: 68 against
# 63), three blocks a multiprocessor instead of four ([64, 128256] FLOAT16: 12.3 us with one candidate, 16.1
# with lanes, in two runs on two H100s).
LANE_BLOCKS_PER_SM = 2
# A prologue's reductions (see plan_argmin): warps per multiprocessor a split row aims for, the bytes of
# InputTensor a warp's piece holds at least, and the rows a column piece walks at least.
PROLOGUE_WARPS_PER_SM = 32
PROLOGUE_PIECE_BYTES = 2048
PROLOGUE_COLUMN_CHUNK = 256
# Rows of at most this many bytes are a warp's with a prologue; longer ones keep the block plans, which
# measured faster for them (H100, DEQUANTIZE_LINEAR INT8 -> ARGMIN: [4096, 32000] 0.094 against 0.112 ms
# by warps, [64, 256000] 0.035 against 0.050 ms), while [65536, 4096] UINT8 rows took 0.296 ms by warps
# against 0.351 ms by blocks.
PROLOGUE_WARP_ROW_BYTES = 8192
# Rows a warp scans together when some operand varies along the row but not from row to row (a per-column
# scale or zero point of a last-axis reduction): each lane loads that operand's words once for all of them,
# where one row a warp re-read them from L2 for every row (5 bytes an element beside the input's 1). H100,
# DEQUANTIZE_LINEAR UINT8 [65536, 4096] -> CLIP -> ARGMIN: 1 row 0.162 ms, 2 rows 0.137, 4 rows with two
# positions in flight 0.128, 8 rows with one 0.127 (the floor: 0.091). The kernel issues every load of a
# position before its values, so 8 rows of one position (80 registers) is the measured kernel's shape, where
# 4 rows of two positions takes 96 registers (two blocks a multiprocessor, not three). Fewer rows where the
# warps would not fill the GPU: the row groups must still give PROLOGUE_WARPS_PER_SM / 2 warps per
# multiprocessor.
PROLOGUE_ROWS_PER_WARP = 8
PROLOGUE_ROW_POSITIONS = 8  # 16-byte row loads in flight per lane at most (rows x unrolled positions)
# Threads per multiprocessor a column reduction aims for: fewer outputs than half of them split the reduction.
# H100, ARGMAX FLOAT32 over the first axis, GB/s by this value (128 / 256 / 512 / 2048): [16384, 16384]
# 1712 / 2447 / 2941 / 2869, [4096, 65536] 1767 / 2760 / 2899 / 2606 (copy 2930-2960): fewer, longer pieces
# keep enough loads in flight and write fewer partial results.
COLUMN_THREADS_PER_SM = 512
# A column scan with a prologue: the InputTensor's elements a thread loads per row (its outputs), and the
# threads per multiprocessor it aims for. Its per-element work is a few instructions (argmin_c.groups_rows),
# so what bounds it is loads in flight, by warps: H200, row 2 of benchmarks/graphs.py (UINT8 [65536, 4096],
# first axis, 4096 outputs), by elements and threads: 16 and 512 (128 registers, two blocks a
# multiprocessor, 256 pieces) 0.168 ms; 8 and 512 0.139; 8 and 768 0.137; 4 and 1024 (55 registers, four
# blocks: argmin_c.COLUMN_BLOCKS_PER_SM) 0.130.
PROLOGUE_COLUMN_ELEMENTS = 4
PROLOGUE_COLUMN_THREADS_PER_SM = 1024
# Greedy decoding's few long rows (a plain ARGMIN over a contiguous last axis, fewer outputs than half the
# multiprocessors): each row is cut into a thread-block cluster's blocks (sm_90 and later), which merge their
# candidates through distributed shared memory behind a cluster barrier, in the one kernel: no partial results
# in global memory, no atomic counter, no last block's reread. Blocks of CLUSTER_BLOCK threads; a row's
# cluster doubles up to the device's largest (8 blocks, the portable size) while rows x blocks stay within the
# multiprocessors. Only rows of at most CLUSTER_ROW_BYTES: a cluster's 8 multiprocessors read a 256,000-entry
# FLOAT16 row faster than the split rows' merge (6.1 against 6.6 us on an H100), but a longer row wants every
# multiprocessor (ARGMIN over all of 2**28 FLOAT32 elements: 0.19 x copy bandwidth in one cluster, 0.97 split).
CLUSTER_BLOCK = 512
CLUSTER_ROW_BYTES = 512 << 10


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
    vector: int = 1  # elements per 16-byte load: along the row (rows) or across outputs (columns)
    rows: int = 1  # outputs a warp scans together, sharing the loads of operands constant across them
    lanes: bool = False  # rows of 16-byte loads: a candidate per element of a load (argmin_c.lanes)
    cluster: bool = False  # a row's ``splits`` blocks are a thread-block cluster, merged in the kernel

    @property
    def partial(self) -> bool:
        """Whether the scan writes partial results (split pieces not merged through a cluster)."""
        return self.splits > 1 and not self.cluster

    @property
    def items(self) -> int:
        """Work items of the scan: (output group, piece) pairs, an output group being ``columns`` outputs
        (columns) or ``rows`` of them (rows)."""
        return -(-self.outputs // (self.columns * self.rows)) * self.splits

    @property
    def columns(self) -> int:
        """Outputs one thread keeps: the vector width for vectorized columns, else 1."""
        return self.vector if self.family == "columns" else 1

    @property
    def combine_group(self) -> int:
        """Threads merging one output's partial results: a block when there are few outputs, else a warp."""
        return BLOCK if self.outputs <= 512 else 32

    def scalar(self) -> ArgMinPlan:
        """The same plan with one element per load (for inputs not 16-byte aligned), a row per warp."""
        return ArgMinPlan(self.family, self.group, self.block, self.splits, self.chunk, self.outputs, self.length,
                          cluster=self.cluster)


def plan_argmin(sizes: Sequence[int], strides: Sequence[int], axes: Sequence[int], kept: Layout,
                reduced: Layout, sm_count: int, itemsize: int = 4, prologue: bool = False,
                shared: bool = False, stored: int = 0, clusters: int = 1) -> ArgMinPlan:
    """Choose the reduction strategy by shape.

    Rows (the input's fastest-moving dimension is reduced): a warp per output for short rows, a block per
    output for long ones, and long rows cut into pieces when there are too few outputs to fill the GPU;
    16-byte loads along rows that are contiguous and aligned. Columns (the fastest-moving dimension is
    kept): a thread per output, or per 16 bytes of adjacent outputs, so that neighbouring threads read
    neighbouring memory; the reduction cut into pieces when there are too few outputs.

    With a ``prologue`` (values computed from several operands) every row of at most
    PROLOGUE_WARP_ROW_BYTES, or piece of one, is a warp's:
    the values cost more per byte than a load, so a block's merge and barriers, paid per row, and a piece
    of a few loads per thread leave too few bytes in flight; pieces hold at least PROLOGUE_PIECE_BYTES.
    Column pieces walk at least PROLOGUE_COLUMN_CHUNK rows, so that the partial results (12 bytes per
    output and piece, written then read by the combine pass) stay a small part of the traffic and fit in
    L2. A plain ARGMIN keeps the plans its kernels were measured with. Where some operand is ``shared`` by
    the rows (it varies along the reduction, never from output to output), a warp of 16-byte loads scans
    PROLOGUE_ROWS_PER_WARP rows at once, or 2, or 1, the most that keep the GPU full without splitting.

    A load holds 16 bytes of the widest of the InputTensor (``itemsize``) and the extra outputs a fused
    kernel ``stored`` (their widest element size, 0 for none): each thread then stores 16 bytes of an extra
    output per load, next to its neighbours' (a warp's store instruction is 512 contiguous bytes), where 16
    bytes of UINT8 loaded gave each thread 64 bytes of FLOAT32 to store by four 16-byte words 64 bytes
    apart from the next thread's.

    ``clusters``: the most blocks a thread-block cluster may have on this device (1: none). A plain ARGMIN's
    long rows, fewer than half the multiprocessors, are each a cluster's (``cluster_plan``).
    """
    outputs, length = math.prod(kept.sizes), math.prod(reduced.sizes)
    width = 16 // max(itemsize, stored)
    moving = [(s, k) for k, (n, s) in enumerate(zip(sizes, strides)) if n > 1 and s > 0]
    if moving and min(moving)[1] not in axes:
        if prologue:
            width = min(width, PROLOGUE_COLUMN_ELEMENTS)
        aligned = (kept.strides[0][-1] == 1 and kept.sizes[-1] % width == 0
                   and all(s % width == 0 for s in kept.strides[0][:-1] + reduced.strides[0]))
        vector = width if aligned else 1
        threads = sm_count * (PROLOGUE_COLUMN_THREADS_PER_SM if prologue else COLUMN_THREADS_PER_SM)
        groups = outputs // vector
        splits = 1 if groups >= threads // 2 else min(math.ceil(threads / groups), length)
        chunk = math.ceil(length / splits)
        if prologue:
            chunk = min(length, max(chunk, PROLOGUE_COLUMN_CHUNK))
        return ArgMinPlan("columns", 1, BLOCK, math.ceil(length / chunk), chunk, outputs, length, vector)
    aligned = (reduced.strides[0][-1] == 1 and reduced.sizes[-1] % width == 0
               and all(s % width == 0 for s in kept.strides[0] + reduced.strides[0][:-1]))
    vector = width if aligned else 1
    if prologue and length * itemsize <= PROLOGUE_WARP_ROW_BYTES:
        warps = sm_count * PROLOGUE_WARPS_PER_SM
        most = max(1, length * itemsize // PROLOGUE_PIECE_BYTES)
        splits = 1 if outputs * 2 >= warps else min(math.ceil(warps / outputs), most)
        chunk = math.ceil(math.ceil(length / splits) / vector) * vector
        rows = _rows_per_warp(outputs, warps) if shared and vector > 1 and splits == 1 else 1
        return ArgMinPlan("rows", 32, BLOCK, math.ceil(length / chunk), chunk, outputs, length, vector, rows)
    if length <= 1024:
        return ArgMinPlan("rows", 32, BLOCK, 1, length, outputs, length, vector)
    if not prologue and clusters > 1 and outputs * 2 <= sm_count and length * itemsize <= CLUSTER_ROW_BYTES:
        return cluster_plan(outputs, length, vector, sm_count, clusters)
    blocks = sm_count * ROW_BLOCKS_PER_SM
    piece = BLOCK * 16 if prologue else BLOCK * vector * ROW_PIECE_LOADS  # the fewest elements of a piece
    splits = max(1, min(int(blocks / outputs + 0.5), math.ceil(length / piece)))
    chunk = math.ceil(math.ceil(length / splits) / vector) * vector
    splits = math.ceil(length / chunk)
    lanes = not prologue and vector > 1 and outputs * splits <= LANE_BLOCKS_PER_SM * sm_count
    return ArgMinPlan("rows", BLOCK, BLOCK, splits, chunk, outputs, length, vector, lanes=lanes)


def _rows_per_warp(outputs: int, warps: int) -> int:
    """The most rows (PROLOGUE_ROWS_PER_WARP, halved down to 1) a warp takes with ``warps`` to fill."""
    rows = PROLOGUE_ROWS_PER_WARP
    while rows > 1 and math.ceil(outputs / rows) * 2 < warps:
        rows //= 2
    return rows


def cluster_plan(outputs: int, length: int, vector: int, sm_count: int, clusters: int) -> ArgMinPlan:
    """Each of ``outputs`` rows cut into the blocks of one thread-block cluster: as many (a power of two, at
    most ``clusters``) as keep rows x blocks within ``sm_count``, each block's threads taking a load or more."""
    blocks = 1
    while blocks < clusters and outputs * blocks * 2 <= sm_count and length >= blocks * 2 * CLUSTER_BLOCK * vector:
        blocks *= 2
    chunk = math.ceil(math.ceil(length / blocks) / vector) * vector
    return ArgMinPlan("rows", CLUSTER_BLOCK, CLUSTER_BLOCK, blocks, chunk, outputs, length, vector,
                      lanes=vector > 1, cluster=blocks > 1)
