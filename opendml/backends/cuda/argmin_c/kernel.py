"""The reduction kernel of an ARGMIN or ARGMAX: the min-and-ballot scan (``ballot``) where it serves, else
the scan of one take per element (``scan``; columns by steps of rows: ``steps``) and its merges
(``merge``)."""

from __future__ import annotations

from ....enums import AxisDirection
from ....kernels.spec import KernelSpec
from ...layout import Layout
from .. import expr_c
from ..codegen import PRELUDE, decompose
from ..plan import ArgMinPlan
from .ballot import ballot_kernel, uses_ballot
from .comparison import BEST_HELPERS, EQ_HELPERS, _compute, _value_functions, order
from .merge import (
    CLUSTER_HELPERS,
    _group_reduce,
    _item_loop,
    _merge_in_cluster,
    _merge_in_scan,
    cluster_dims,
    merged_group,
    one_pass,
)
from .operands import _hoisted, extras, operands
from .scan import _finish, _lanes_merged, _scan, _take_function, _unroll, lanes
from .steps import COLUMN_BLOCKS_PER_SM, _by_steps, _rescan, factor_functions, stored_order


def argmin_kernel(spec: KernelSpec, plan: ArgMinPlan, direction: AxisDirection, kept: Layout,
                  reduced: Layout) -> str:
    """The reduction kernel: each (output group, piece) item is reduced by ``plan.group`` threads; the extra
    outputs' pointers follow the output's."""
    if uses_ballot(spec, plan):
        return ballot_kernel(spec, plan, direction, kept, reduced)
    _, compute = _compute(spec)
    others = operands(spec, plan, kept, reduced)
    written = extras(spec, plan, kept, reduced)
    kept_names = ["ko", "oo", *(f"kk{o.slot}" for o in others), *(f"ke{x.number}" for x in written)]
    kept_offsets = decompose("(unsigned int)o", kept.sizes, kept.strides, kept_names)
    hoisted_loads, hoisted = _hoisted(others, plan.columns)
    guard = {"columns": "", "rows": "if (threadIdx.x == 0)" if plan.group > 32 else "if ((threadIdx.x & 31) == 0)"}
    pointers = ["ull px", *(f"ull p{o.slot}" for o in others), "ull pout", *(f"ull pout{x.number}" for x in written)]
    partials = ["ull pv", "ull pi", *(["ull pc"] if one_pass(spec, plan) else [])]
    parameters = ", ".join([*pointers, *partials, *expr_c.scalar_parameters(spec.element, spec.extra)])
    unroll = _unroll(spec, plan, others)
    by_steps = _by_steps(spec, plan, unroll)
    integers = stored_order(spec, plan, others) if by_steps else None
    if by_steps:
        rule = order(spec)
        value = _value_functions(spec) + BEST_HELPERS[rule.largest, rule.propagates] + EQ_HELPERS[rule.propagates]
        value += "" if integers is None else factor_functions(integers)
        rescan = _rescan(spec, plan, reduced, others, hoisted, unroll)
    else:
        value, rescan = expr_c.value_function(spec.operator, spec.inputs, spec.element, spec.extra,
                                              bounds=expr_c.clamp_bounds(spec.scalars)), ""
    bounds = f"__launch_bounds__({plan.block}, {COLUMN_BLOCKS_PER_SM}) " if rescan else cluster_dims(plan)
    helpers = CLUSTER_HELPERS if plan.cluster else ""
    return PRELUDE + helpers + value + _take_function(compute, direction, order(spec)) + f"""
extern "C" __global__ void {bounds}opendml_kernel({parameters}) {{
    {_item_loop(plan)}
        ull {" = 0, ".join(kept_names)} = 0;
        {kept_offsets}{hoisted_loads}
        const ull begin = (ull)s * {plan.chunk}ull;
        const ull end = begin + {plan.chunk}ull < {plan.length}ull ? begin + {plan.chunk}ull : {plan.length}ull;
        {compute} bv[{lanes(plan)}]; ull bi[{lanes(plan)}];
        #pragma unroll
        for (int j = 0; j < {lanes(plan)}; ++j) {{ bv[j] = ({compute})0; bi[j] = INVALID_INDEX; }}
        {_scan(spec, plan, reduced, others, hoisted, written, integers)}{rescan}{_lanes_merged(plan)}
        {_group_reduce(merged_group(spec, plan), compute)}
        {_merge(spec, plan, direction, compute, guard[plan.family], kept)}
    }}
}}
"""


def _merge(spec: KernelSpec, plan: ArgMinPlan, direction: AxisDirection, compute: str, guard: str,
           kept: Layout) -> str:
    """The end of an item, its candidates merged over the threads that shared it: merged with the other pieces
    of its row through the cluster or by the scan's last warp, or written (an index, or a partial result)."""
    if plan.cluster:
        return _merge_in_cluster(spec, plan, direction, compute)
    if one_pass(spec, plan):
        return _merge_in_scan(spec, plan, direction, compute)
    return f"""{guard} {{
            {_finish(plan, direction, spec.output, compute, kept.strides[1][-1])}
        }}"""
