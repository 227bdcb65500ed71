"""Candidates merged: over the threads that shared an item (warp shuffles, then shared memory), over the
warps of a split row by the scan's last warp (``one_pass``), and over the pieces of a split reduction by
the combine pass."""

from __future__ import annotations

from ....enums import AxisDirection
from ....kernels.spec import KernelSpec
from ...layout import Layout
from ..codegen import C_TYPE, PRELUDE, decompose
from ..plan import ArgMinPlan
from .ballot import uses_ballot
from .comparison import _compute, empty_index, order
from .scan import _take_function


def _group_reduce(group: int, compute: str) -> str:
    """Combine the (bv, bi) of the ``group`` threads that shared an item: warp shuffles, then shared memory."""
    if group == 1:
        return ""
    code = f"""
        #pragma unroll
        for (int off = 16; off > 0; off >>= 1) {{
            {compute} ov = __shfl_xor_sync(0xffffffffu, bv[0], off);
            ull oi = __shfl_xor_sync(0xffffffffu, bi[0], off);
            take(bv[0], bi[0], ov, oi);
        }}"""
    if group > 32:
        warps = group // 32
        code += f"""
        __shared__ {compute} sv[{warps}];
        __shared__ ull si[{warps}];
        if ((threadIdx.x & 31) == 0) {{ sv[threadIdx.x >> 5] = bv[0]; si[threadIdx.x >> 5] = bi[0]; }}
        __syncthreads();
        if (threadIdx.x < 32) {{
            bv[0] = threadIdx.x < {warps} ? sv[threadIdx.x] : ({compute})0;
            bi[0] = threadIdx.x < {warps} ? si[threadIdx.x] : INVALID_INDEX;
            #pragma unroll
            for (int off = 16; off > 0; off >>= 1) {{
                {compute} ov = __shfl_xor_sync(0xffffffffu, bv[0], off);
                ull oi = __shfl_xor_sync(0xffffffffu, bi[0], off);
                take(bv[0], bi[0], ov, oi);
            }}
        }}
        __syncthreads();"""
    return code


def _item_loop(plan: ArgMinPlan) -> str:
    """The loop over (output group, piece) items and who shares each: a thread, a warp or a block."""
    groups = plan.outputs // plan.columns
    items = groups * plan.splits
    if plan.family == "columns":
        # Consecutive threads take consecutive output groups, so their loads are coalesced.
        return (f"for (ull w = (ull)blockIdx.x * blockDim.x + threadIdx.x; w < {items}ull; "
                f"w += (ull)gridDim.x * blockDim.x) {{\n        const ull t = 0; "
                f"ull o = (w % {groups}ull) * {plan.columns}ull; unsigned int s = (unsigned int)(w / {groups}ull);")
    split = f"        ull o = w / {plan.splits}ull; unsigned int s = (unsigned int)(w % {plan.splits}ull);"
    if plan.group == 32:
        return (f"const ull t = threadIdx.x & 31;\n    for (ull w = ((ull)blockIdx.x * blockDim.x + "
                f"threadIdx.x) >> 5; w < {items}ull; w += ((ull)gridDim.x * blockDim.x) >> 5) {{\n" + split)
    return f"const ull t = threadIdx.x;\n    for (ull w = blockIdx.x; w < {items}ull; w += gridDim.x) {{\n" + split


# --- split rows merged by the scan: the last warp of an output to finish merges them all ----------------------
#
# Each warp of a piece of a split row stores its (value, index) as a partial result (no block-wide merge, no
# barrier), then counts itself done on its output's counter (an atomic add, after a fence that makes the
# partial result visible to every block); the warp that counts last reads every warp's partial result from
# L2 (``__ldcg``: never a stale L1 line), merges them by (value, index) as the combine pass did, writes the
# output and sets the counter back to 0 for the next launch. One kernel instead of a scan and a combine pass
# (H100: greedy decoding's ARGMAX FLOAT16 of [8, 128256] took 5.0 us of device time as two kernels). The
# counters (one per output) are zeroed once, when their buffer is allocated: a launch leaves them as it
# found them.


# Past this many warps' partial results an output, the pieces merge over their block first and a block counts
# itself done: every warp counting on one counter serialises its atomic adds (ARGMIN over all of 2**28 FLOAT32
# elements, 2112 blocks of 8 warps: 16,896 adds and partial results, 0.50 x copy bandwidth on an H100), and
# the last block's threads merge the blocks' results together, not one warp alone.
WARP_PARTIALS_MOST = 256


def one_pass(spec: KernelSpec, plan: ArgMinPlan) -> bool:
    """Whether ``plan``'s scan merges the pieces of its split rows itself (the scan of one take per element;
    the min-and-ballot scan and split columns keep the combine pass)."""
    return plan.family == "rows" and plan.partial and not uses_ballot(spec, plan)


def by_block(spec: KernelSpec, plan: ArgMinPlan) -> bool:
    """Whether a ``one_pass`` scan merges each piece over its block and counts blocks (``WARP_PARTIALS_MOST``),
    not warps."""
    return one_pass(spec, plan) and plan.group > 32 and plan.splits * (plan.group // 32) > WARP_PARTIALS_MOST


def merged_group(spec: KernelSpec, plan: ArgMinPlan) -> int:
    """The threads whose candidates are merged before a piece's result is written or counted: a warp where the
    scan's last warp merges the pieces, else those that shared the item."""
    return 32 if one_pass(spec, plan) and not by_block(spec, plan) else plan.group


def partials_per_output(spec: KernelSpec, plan: ArgMinPlan) -> int:
    """Partial results a split reduction writes per output: one per warp of each piece where its scan's last
    warp merges them (``one_pass``, not ``by_block``), else one per piece."""
    return plan.splits * (plan.group // merged_group(spec, plan))


def _merge_in_scan(spec: KernelSpec, plan: ArgMinPlan, direction: AxisDirection, compute: str) -> str:
    """The end of a piece's share of a split row, its candidate merged over the threads that count (a warp, or the
    block where ``by_block``): stored and counted by their first thread, and by the threads that count last, every
    piece's merged and the index written (``oo``: the output's offset). Counted by blocks, the count is read from
    shared memory behind the block's barrier, and a last barrier keeps it until the next item."""
    out = C_TYPE[spec.output]
    empty = empty_index(direction, plan.length)
    count = partials_per_output(spec, plan)
    group = merged_group(spec, plan)
    if group == 32:
        slot = f"o * {count}ull + s" + (f" * {plan.group // 32}ull + (threadIdx.x >> 5)" if plan.group > 32 else "")
        first, thread, declared = "(threadIdx.x & 31) == 0", "threadIdx.x & 31", "unsigned int last = 0u;"
        shared, done = "last = __shfl_sync(0xffffffffu, last, 0);", ""
    else:
        slot, first, thread, declared = f"o * {count}ull + s", "threadIdx.x == 0", "threadIdx.x", \
            "__shared__ unsigned int last;"
        shared, done = "__syncthreads();", "\n        __syncthreads();"
    return f"""{declared}
        if ({first}) {{
            (({compute}*)pv)[{slot}] = bv[0]; ((ull*)pi)[{slot}] = bi[0];
            __threadfence();
            last = atomicAdd((unsigned int*)pc + o, 1u) == {count - 1}u;
        }}
        {shared}
        if (last) {{
            __threadfence();
            bv[0] = ({compute})0; bi[0] = INVALID_INDEX;
            for (ull k = {thread}; k < {count}ull; k += {group}ull) {{
                take(bv[0], bi[0], __ldcg((const {compute}*)pv + o * {count}ull + k),
                     __ldcg((const ull*)pi + o * {count}ull + k));
            }}
            {_group_reduce(group, compute)}
            if ({first}) {{
                (({out}*)pout)[oo] = ({out})(bi[0] == INVALID_INDEX ? {empty}ull : bi[0]);
                ((unsigned int*)pc)[o] = 0u;
            }}
        }}{done}"""


# --- a row's pieces merged through a thread-block cluster -------------------------------------------------
#
# The blocks of a row (plan.cluster) are one cluster, block s its piece s: each block's candidate, merged over
# the block, is left in its shared memory; after a cluster barrier (release, then acquire: the candidates are
# visible to every block of the cluster) the first warp of block 0 reads each block's candidate through
# distributed shared memory (``mapa`` gives a peer block's address of the same variable), merges them and
# writes the index. A second barrier keeps every block, and its shared memory, alive until they are read.

CLUSTER_HELPERS = r"""
#define CLUSTER_SHARED(type, name) __shared__ type name
__device__ __forceinline__ void cluster_barrier() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
template <typename T> __device__ __forceinline__ const volatile T* cluster_peer(const T* p, unsigned int block) {
    ull r; asm volatile("mapa.u64 %0, %1, %2;" : "=l"(r) : "l"(p), "r"(block)); return (const volatile T*)r;
}
"""


def cluster_dims(plan: ArgMinPlan) -> str:
    """The kernel's attributes fixing its cluster shape, for a plan whose rows are clusters."""
    return f"__cluster_dims__({plan.splits}, 1, 1) __launch_bounds__({plan.block}) " if plan.cluster else ""


def _merge_in_cluster(spec: KernelSpec, plan: ArgMinPlan, direction: AxisDirection, compute: str) -> str:
    """The end of a block's piece of a cluster's row, its candidate merged over the block (in thread 0's
    ``bv[0], bi[0]``): merged over the cluster by block 0, which writes the index (``oo``)."""
    out = C_TYPE[spec.output]
    empty = empty_index(direction, plan.length)
    return f"""CLUSTER_SHARED({compute}, cv); CLUSTER_SHARED(ull, ci);
        if (threadIdx.x == 0) {{ cv = bv[0]; ci = bi[0]; }}
        cluster_barrier();
        if (s == 0 && threadIdx.x < 32) {{
            bv[0] = ({compute})0; bi[0] = INVALID_INDEX;
            if (threadIdx.x < {plan.splits}u) {{
                bv[0] = *cluster_peer(&cv, threadIdx.x);
                bi[0] = *cluster_peer(&ci, threadIdx.x);
            }}
            {_group_reduce(32, compute)}
            if (threadIdx.x == 0) (({out}*)pout)[oo] = ({out})(bi[0] == INVALID_INDEX ? {empty}ull : bi[0]);
        }}
        cluster_barrier();"""


def argmin_combine_kernel(spec: KernelSpec, plan: ArgMinPlan, direction: AxisDirection, kept: Layout) -> str:
    """The second pass: each output's ``plan.splits`` partial results, merged by a warp or a block."""
    _, compute = _compute(spec)
    out_type = spec.output
    group = plan.combine_group
    empty = empty_index(direction, plan.length)
    kept_offsets = decompose("(unsigned int)o", kept.sizes, kept.strides, ["ko", "oo"])
    if group == 32:
        loop = (f"const ull t = threadIdx.x & 31;\n    for (ull o = ((ull)blockIdx.x * blockDim.x + threadIdx.x) >> 5; "
                f"o < {plan.outputs}ull; o += ((ull)gridDim.x * blockDim.x) >> 5) {{")
        guard = "if ((threadIdx.x & 31) == 0)"
    else:
        loop = f"const ull t = threadIdx.x;\n    for (ull o = blockIdx.x; o < {plan.outputs}ull; o += gridDim.x) {{"
        guard = "if (threadIdx.x == 0)"
    return PRELUDE + _take_function(compute, direction, order(spec)) + f"""
extern "C" __global__ void opendml_kernel(ull pv, ull pi, ull pout) {{
    {loop}
        {compute} bv[1] = {{({compute})0}}; ull bi[1] = {{INVALID_INDEX}};
        #pragma unroll 8
        for (ull s = t; s < {plan.splits}ull; s += {group}ull) {{
            ull k = o * {plan.splits}ull + s;
            take(bv[0], bi[0], ((const {compute}*)pv)[k], ((const ull*)pi)[k]);
        }}
        {_group_reduce(group, compute)}
        {guard} {{
            ull ko = 0, oo = 0;
            {kept_offsets}
            (({C_TYPE[out_type]}*)pout)[oo] = ({C_TYPE[out_type]})(bi[0] == INVALID_INDEX ? {empty}ull : bi[0]);
        }}
    }}
}}
"""
