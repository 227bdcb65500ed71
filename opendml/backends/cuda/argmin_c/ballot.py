"""The min-and-ballot scan of rows of a computed value (``ballot_kernel``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ....enums import AxisDirection
from ....kernels.spec import KernelSpec
from ...layout import Layout
from .. import expr_c
from ..codegen import C_TYPE, PRELUDE, decompose
from ..plan import PROLOGUE_ROW_POSITIONS, ArgMinPlan
from .comparison import (
    BEST_HELPERS,
    EQ_HELPERS,
    NO_POSITION,
    Order,
    _best_name,
    _best_of,
    _compute,
    _value_functions,
    index_wins,
    later_wins,
    order,
    union,
)
from .operands import Operand, _fetch, _hoisted, is_prologue, operands
from .scan import LOADED_BYTES, VECTOR_UNROLL, _finish

# --- rows with a prologue: a min (ARGMAX: a max) per 16-byte load, the element found by a ballot -----------
#
# A computed value costs more per byte than a load, so the scan keeps the per-element work to the value and
# one min: each lane reduces the V values of a load with a NaN-ignoring min and keeps (best min, its load's
# position q); the lanes merge (value, q) pairs with the tie rule on q; then V lanes recompute the winning
# load's values and a ballot of ``value == best`` gives the element, the first set bit (INCREASING) or the
# last (DECREASING). Exact: the min of numbers is one of them, a load of only NaN gives NaN (skipped), and
# == and < both hold -0.0 and +0.0 equal, as the element-by-element scan does. Under PROPAGATE the min
# propagates NaN and a NaN best matches the load's NaN elements (see below). A warp may scan ``plan.rows``
# rows at once, loading the operands they share once for all.


# The min-and-ballot scan pays a merge and a recomputed load per piece: a split reduction takes it where
# each thread scans at least this many 16-byte loads of its piece. H100, DEQUANTIZE_LINEAR INT8 -> ARGMIN by
# blocks: [4096, 32000] (7.8 loads a thread) 0.059 ms against 0.076 by the scan of one take per element;
# [64, 256000] in pieces of 7760 (1.9 loads a thread) 0.049 against 0.033.
BALLOT_MIN_LOADS = 4
# Blocks per multiprocessor the ballot kernel's registers leave room for (at most 80 registers a thread):
# its scan is bound by loads in flight, not by its few instructions an element. H200, row 1 of
# benchmarks/graphs.py (8 rows a warp, 89 registers unbounded: two blocks): 0.110 -> 0.089 ms, no spills.
BALLOT_BLOCKS_PER_SM = 3


def uses_ballot(spec: KernelSpec, plan: ArgMinPlan) -> bool:
    """Whether ``plan``'s kernel is the min-and-ballot scan: rows of 16-byte loads of a computed value,
    stored nowhere else (a kernel writing extra outputs stores each element's values where its scan
    computes them, which the scan of one min per load does not), and for split pieces BALLOT_MIN_LOADS or
    more loads a thread."""
    return (plan.family == "rows" and plan.vector > 1 and is_prologue(spec) and not spec.extra
            and (plan.splits == 1 or plan.chunk // plan.vector >= BALLOT_MIN_LOADS * plan.group))


def _ballot_helpers(compute: str, direction: AxisDirection, rule: Order) -> str:
    """vmin (vmax) and eq of the compared type, ``beats`` where it is a function, and ``take_vector``,
    which merges two (value, position) pairs."""
    if compute == "float":
        helpers = BEST_HELPERS[rule.largest, rule.propagates] + EQ_HELPERS[rule.propagates] + rule.helpers()
    else:
        pick = "a < b ? b : a" if rule.largest else "a < b ? a : b"
        helpers = (f"__device__ __forceinline__ {compute} {_best_name(rule)}({compute} a, {compute} b) "
                   f"{{ return {pick}; }}\n"
                   f"__device__ __forceinline__ bool eq({compute} a, {compute} b) {{ return a == b; }}\n")
    later = index_wins(direction, "q", "bq")
    signature = f"void take_vector({compute}& bv, unsigned int& bq, {compute} v, unsigned int q)"
    return helpers + f"""__device__ __forceinline__ {signature} {{
    if (q == {NO_POSITION}) return;
    if (bq == {NO_POSITION} || {rule.beats('v', 'bv')} || (!{rule.beats('bv', 'v')} && {later})) {{ bv = v; bq = q; }}
}}
"""


def _ballot_scan(spec: KernelSpec, plan: ArgMinPlan, reduced: Layout, others: Sequence[Operand],
                 hoisted: dict[int, Callable[[int], str]]) -> str:
    """The lanes' scans of positions q (16-byte loads) of [begin, end) for each of the rows."""
    in_type = spec.inputs[0]
    assert in_type is not None  # InputTensor is required
    _, compute = _compute(spec)
    rule = order(spec)
    size, vector, group = in_type.size, plan.vector, plan.group
    walked = [o for o in others if not o.constant]
    held = size * vector + sum(o.loaded_bytes(vector) for o in others)
    unroll = max(1, min(VECTOR_UNROLL, LOADED_BYTES // held, PROLOGUE_ROW_POSITIONS // plan.rows))
    assert spec.reduction is not None
    better = f"!{rule.beats('bv{i}', 'm')}" if later_wins(spec.reduction.direction) else rule.beats("m", "bv{i}")
    reduced_strides = [reduced.strides[0], *(o.reduced for o in walked)]

    def step(count: int) -> tuple[list[str], list[str]]:
        loads, takes = [], []
        for u in range(count):
            here = "q" if u == 0 else f"q + {u * group}u"
            names = [f"ro{u}", *(f"rk{o.slot}_{u}" for o in walked)]
            red = decompose("(unsigned int)rr", reduced.sizes, reduced_strides, names)
            loads.append(f"ull {' = 0, '.join(names)} = 0; {{ ull rr = (ull)({here}) * {vector}ull; {red} }}")
            fetched = dict(hoisted)
            for o in walked:
                lines, fetched[o.slot] = _fetch(o, f"a{o.slot}_{u}", f"kk{o.slot} + rk{o.slot}_{u}", vector)
                loads += lines
            for i in range(plan.rows):
                loads.append(f"{union(spec, 'uint4', vector)} x{i}_{u}; "
                             f"x{i}_{u}.w = *(const uint4*)(px + (ko{i} + ro{u}) * {size}ull);")
                candidate = _best_of(spec, rule, [(f"x{i}_{u}", e, [fetched[o.slot](e) for o in others])
                                                  for e in range(vector)], vector)
                takes.append(f"{{ const {compute} m = {candidate}; if ({rule.valid('m')} && "
                             f"(bq{i} == {NO_POSITION} || {better.format(i=i)})) {{ bv{i} = m; bq{i} = {here}; }} }}")
        return loads, takes

    nl = "\n            "
    loads, takes = step(unroll)
    code = f"""
        unsigned int q = (unsigned int)(begin / {vector}ull) + t;
        const unsigned int stop = (unsigned int)(end / {vector}ull);
        for (; q + {(unroll - 1) * group}u < stop; q += {unroll * group}u) {{
            {nl.join(loads)}
            {nl.join(takes)}
        }}"""
    if unroll > 1:
        loads, takes = step(1)
        code += f"""
        for (; q < stop; q += {group}u) {{
            {nl.join(loads)}
            {nl.join(takes)}
        }}"""
    return code


def _warp_merge(compute: str, i: int) -> str:
    return f"""
        #pragma unroll
        for (int off = 16; off > 0; off >>= 1) {{
            const {compute} ov = __shfl_xor_sync(0xffffffffu, bv{i}, off);
            const unsigned int oq = __shfl_xor_sync(0xffffffffu, bq{i}, off);
            take_vector(bv{i}, bq{i}, ov, oq);
        }}"""


def _ballot_row(spec: KernelSpec, plan: ArgMinPlan, direction: AxisDirection, reduced: Layout,
                others: Sequence[Operand], hoisted: dict[int, Callable[[int], str]], i: int, out_step: int) -> str:
    """Row ``i``'s finish, in a warp holding its merged (bv, bq): V lanes recompute load bq's values, a ballot
    of the ones equal to bv gives the element, and the first lane writes the index or the partial result."""
    in_type = spec.inputs[0]
    assert in_type is not None  # InputTensor is required
    _, compute = _compute(spec)
    walked = [o for o in others if not o.constant]
    names = ["ro", *(f"rk{o.slot}" for o in walked)]
    red = decompose("(unsigned int)rr", reduced.sizes, [reduced.strides[0], *(o.reduced for o in walked)], names)
    elements = {o.slot: f"((const {C_TYPE[o.type]}*)p{o.slot})[kk{o.slot} + rk{o.slot}]" for o in walked}
    elements.update({slot: value(0) for slot, value in hoisted.items()})
    value = expr_c.call("value", [f"((const {C_TYPE[in_type]}*)px)[ko{i} + ro]", *(elements[o.slot] for o in others)],
                        spec.element)
    pick = "31 - __clz(mask)" if later_wins(direction) else "__ffs(mask) - 1"  # the last set bit, or the first
    writer = "(threadIdx.x & 31) == 0" if plan.rows == 1 or plan.outputs % plan.rows == 0 else \
        f"(threadIdx.x & 31) == 0 && o + {i}ull < {plan.outputs}ull"
    finish = _finish(plan, direction, spec.output, compute, out_step).replace("bv[0]", f"bv{i}") \
        .replace("bi[0]", "bi").replace("oo + ", f"oo{i} + ")
    return f"""
        {{
            ull bi = INVALID_INDEX;
            if (bq{i} != {NO_POSITION}) {{
                bool hit = false;
                if ((threadIdx.x & 31) < {plan.vector}u) {{
                    ull {' = 0, '.join(names)} = 0;
                    {{ ull rr = (ull)bq{i} * {plan.vector}ull + (threadIdx.x & 31); {red} }}
                    hit = eq({value}, bv{i});
                }}
                const unsigned int mask = __ballot_sync(0xffffffffu, hit);
                bi = (ull)bq{i} * {plan.vector}ull + (ull)({pick});
            }}
            if ({writer}) {{
                {finish}
            }}
        }}"""


def _ballot_finish(spec: KernelSpec, plan: ArgMinPlan, direction: AxisDirection, reduced: Layout,
                   others: Sequence[Operand], hoisted: dict[int, Callable[[int], str]], out_step: int) -> str:
    """Each row's merge (a warp's shuffles, then shared memory across a block's warps) and finish."""
    _, compute = _compute(spec)
    rows = [_ballot_row(spec, plan, direction, reduced, others, hoisted, i, out_step) for i in range(plan.rows)]
    merges = "".join(_warp_merge(compute, i) for i in range(plan.rows))
    if plan.group == 32:
        return merges + "".join(rows)
    warps = plan.group // 32
    return merges + f"""
        __shared__ {compute} sv[{warps}];
        __shared__ unsigned int sq[{warps}];
        if ((threadIdx.x & 31) == 0) {{ sv[threadIdx.x >> 5] = bv0; sq[threadIdx.x >> 5] = bq0; }}
        __syncthreads();
        if (threadIdx.x < 32) {{
            bv0 = threadIdx.x < {warps} ? sv[threadIdx.x] : ({compute})0;
            bq0 = threadIdx.x < {warps} ? sq[threadIdx.x] : {NO_POSITION};{_warp_merge(compute, 0)}{rows[0]}
        }}
        __syncthreads();"""


def _row_offsets(plan: ArgMinPlan, kept: Layout, others: Sequence[Operand]) -> str:
    """Kept offsets of each row of the item: the InputTensor's and the output's (ko{i}, oo{i}), and the
    other operands' (the same for every row: plan.rows > 1 only where they do not vary by output)."""
    names = ["ko0", "oo0", *(f"kk{o.slot}" for o in others)]
    lines = [f"ull {' = 0, '.join(names)} = 0;", decompose("(unsigned int)o", kept.sizes, kept.strides, names)]
    last = plan.outputs - 1
    if kept.sizes[-1] % plan.rows == 0:  # the rows are neighbours along the innermost kept dimension
        x_step, out_step = kept.strides[0][-1], kept.strides[1][-1]
        lines += [f"const ull ko{i} = ko0 + {i * x_step}ull, oo{i} = oo0 + {i * out_step}ull;"
                  for i in range(1, plan.rows)]
        return "\n        ".join(lines)
    for i in range(1, plan.rows):
        row = f"o + {i}ull"
        if plan.outputs % plan.rows:  # the last group's missing rows rescan the last row, unwritten
            row = f"({row} < {plan.outputs}ull ? {row} : {last}ull)"
        lines += [f"ull ko{i} = 0, oo{i} = 0;", decompose(f"(unsigned int)({row})", kept.sizes, kept.strides[:2],
                                                          [f"ko{i}", f"oo{i}"])]
    return "\n        ".join(lines)


def ballot_kernel(spec: KernelSpec, plan: ArgMinPlan, direction: AxisDirection, kept: Layout,
                  reduced: Layout) -> str:
    """The min-and-ballot reduction of rows of a computed value: each (group of ``plan.rows`` outputs,
    piece) item is reduced by a warp or a block (``plan.group`` threads)."""
    _, compute = _compute(spec)
    others = operands(spec, plan, kept, reduced)
    hoisted_loads, hoisted = _hoisted(others, 1)
    pointers = ", ".join(["ull px", *(f"ull p{o.slot}" for o in others), "ull pout, ull pv, ull pi"])
    parameters = ", ".join([pointers, *expr_c.scalar_parameters(spec.element)])
    value = _value_functions(spec)
    if plan.group == 32:
        loop = (f"const unsigned int t = threadIdx.x & 31;\n    for (ull w = ((ull)blockIdx.x * blockDim.x + "
                f"threadIdx.x) >> 5; w < {plan.items}ull; w += ((ull)gridDim.x * blockDim.x) >> 5) {{")
    else:
        loop = (f"const unsigned int t = threadIdx.x;\n    for (ull w = blockIdx.x; w < {plan.items}ull; "
                "w += gridDim.x) {")
    best = "".join(f"\n        {compute} bv{i} = ({compute})0; unsigned int bq{i} = {NO_POSITION};"
                   for i in range(plan.rows))
    return PRELUDE + value + _ballot_helpers(compute, direction, order(spec)) + f"""
extern "C" __global__ void __launch_bounds__({plan.block}, {BALLOT_BLOCKS_PER_SM}) opendml_kernel({parameters}) {{
    {loop}
        const ull o = w / {plan.splits}ull * {plan.rows}ull;
        const unsigned int s = (unsigned int)(w % {plan.splits}ull);
        {_row_offsets(plan, kept, others)}{hoisted_loads}
        const ull begin = (ull)s * {plan.chunk}ull;
        const ull end = begin + {plan.chunk}ull < {plan.length}ull ? begin + {plan.chunk}ull : {plan.length}ull;{best}
        {_ballot_scan(spec, plan, reduced, others, hoisted)}
        {_ballot_finish(spec, plan, direction, reduced, others, hoisted, kept.strides[1][-1])}
    }}
}}
"""
