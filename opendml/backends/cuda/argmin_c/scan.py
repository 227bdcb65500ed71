"""The scan of one take per element: each thread takes each valid value of its share of a reduction into its
candidates (one per output it keeps, or one per element of a 16-byte load: ``lanes``), ``VECTOR_UNROLL``
loads in flight a step, the last positions one guarded step; ``_finish`` writes each candidate's index or
partial result."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ....dtypes import DataType
from ....enums import AxisDirection
from ....kernels.monotone import RawOrder
from ....kernels.spec import KernelSpec
from ...layout import Layout
from .. import expr_c
from ..codegen import C_TYPE, decompose
from ..elementwise_c import WORD
from ..plan import ArgMinPlan
from .comparison import Order, _best_of, _compute, empty_index, index_wins, later_wins, order, union
from .operands import Extra, Operand, _fetch, _held, _stores
from .steps import _by_steps, _by_stored_integers

VECTOR_UNROLL = 8  # 16-byte loads in flight per thread in ARGMIN scans (measured best on an H100)
# Bytes each thread holds per unrolled step: more operands unroll less. A plain ARGMIN's 16-byte loads
# reach VECTOR_UNROLL well below it; a prologue's per-column words (L1 hits shared by every row) fit twice.
LOADED_BYTES = VECTOR_UNROLL * 32


# --- the scan of one take per element --------------------------------------------------------------------

def _take_function(compute: str, direction: AxisDirection, rule: Order) -> str:
    """``take`` merges any two candidates; ``scan_take`` is for one thread visiting indices in increasing
    order, where a tie goes to the earlier index (INCREASING) or to the later one (DECREASING)."""
    later = index_wins(direction, "i", "bi")
    scan_better = f"!{rule.beats('bv', 'v')}" if later_wins(direction) else rule.beats("v", "bv")
    return rule.helpers() + f"""
__device__ __forceinline__ void take({compute}& bv, ull& bi, {compute} v, ull i) {{
    if (i == INVALID_INDEX) return;
    if (bi == INVALID_INDEX || {rule.beats('v', 'bv')} || (!{rule.beats('bv', 'v')} && {later})) {{ bv = v; bi = i; }}
}}
__device__ __forceinline__ void scan_take({compute}& bv, ull& bi, {compute} v, ull i) {{
    if (bi == INVALID_INDEX || {scan_better}) {{ bv = v; bi = i; }}
}}
"""


def _finish(plan: ArgMinPlan, direction: AxisDirection, out_type: DataType, compute: str, out_step: int) -> str:
    """Code that writes each (bv[j], bi[j]) of outputs ``o + j`` as the final index or as a partial result."""
    empty = empty_index(direction, plan.length)
    lines = []
    for j in range(plan.columns):
        if plan.splits > 1:
            lines.append(f"(({compute}*)pv)[(o + {j}) * {plan.splits}ull + s] = bv[{j}]; "
                         f"((ull*)pi)[(o + {j}) * {plan.splits}ull + s] = bi[{j}];")
        else:
            lines.append(f"(({C_TYPE[out_type]}*)pout)[oo + {j * out_step}ull] = ({C_TYPE[out_type]})"
                         f"(bi[{j}] == INVALID_INDEX ? {empty}ull : bi[{j}]);")
    return "\n            ".join(lines)


def _unroll(spec: KernelSpec, plan: ArgMinPlan, others: Sequence[Operand]) -> int:
    """Positions a thread's scan loads at once (VECTOR_UNROLL, fewer where the operands' loads are wide)."""
    in_type = spec.inputs[0]
    assert in_type is not None  # InputTensor is required
    size = in_type.size
    held = size * plan.vector + sum(o.loaded_bytes(plan.vector) for o in others)
    return max(1, min(8 if plan.vector == 1 and size <= 2 else VECTOR_UNROLL, LOADED_BYTES // held))


def _scan(spec: KernelSpec, plan: ArgMinPlan, reduced: Layout, others: Sequence[Operand],
          hoisted: dict[int, Callable[[int], str]], written: Sequence[Extra] = (),
          integers: RawOrder | None = None) -> str:
    """Code scanning this thread's share of [begin, end), taking each valid value into (bv, bi) and storing
    each element's extra outputs (NaN or not); a scan by steps takes them by stored ``integers`` where given
    (``stored_order``) and the thread's factors allow."""
    in_type = spec.inputs[0]
    assert in_type is not None  # InputTensor is required
    _, compute = _compute(spec)
    rule = order(spec)
    storage, size = C_TYPE[in_type], in_type.size

    def value(element: str, e: int, fetched: dict[int, Callable[[int], str]], results: Sequence[str] = ()) -> str:
        return expr_c.call("value", [element, *(fetched[o.slot](e) for o in others)], spec.element, spec.extra,
                           results)

    vector, unroll = plan.vector, _unroll(spec, plan, others)
    walked = [o for o in others if not o.constant]
    reduced_strides = [reduced.strides[0], *(o.reduced for o in walked), *(x.reduced for x in written)]
    if plan.family == "rows" and vector > 1:
        # Positions count 16-byte vectors along the contiguous innermost reduced dimension: element e of
        # vector q has reduction index q * V + e.
        position, step, first, last = "q", f"{plan.group}ull", f"begin / {vector}ull + t", f"end / {vector}ull"
    else:
        position, step, first, last = "r", "1ull" if plan.family == "columns" else f"{plan.group}ull", \
            "begin + t", "end"
    fetch: list[str] = []
    takes: list[str] = []
    marks: list[tuple[int, int]] = []  # where each unrolled position's lines start in ``fetch`` and ``takes``
    grouped = _by_steps(spec, plan, unroll)
    steps: list[tuple[str, list[list[str]]]] = []  # grouped: each row's union and other operands by column
    for u in range(unroll):
        here = f"{position} + {u}ull * {step}"
        marks.append((len(fetch), len(takes)))
        names = [f"ro{u}", *(f"rk{o.slot}_{u}" for o in walked), *(f"re{x.number}_{u}" for x in written)]
        fetched = dict(hoisted)
        loads: list[str] = []
        for o in walked:
            lines, fetched[o.slot] = _fetch(o, f"a{o.slot}_{u}", f"kk{o.slot} + rk{o.slot}_{u}", vector)
            loads += lines
        declared = " = 0, ".join(names)
        if vector == 1:
            red = decompose("(unsigned int)rr", reduced.sizes, reduced_strides, names)
            fetch.append(f"ull {declared} = 0; {{ ull rr = {here}; {red} }}")
            fetch += loads
            results = [f"(({C_TYPE[x.type]}*)pout{x.number})[ke{x.number} + re{x.number}_{u}]" for x in written]
            fetch.append(f"{compute} v{u} = {value(f'(({storage}*)px)[ko + ro{u}]', 0, fetched, results)};")
            takes.append(f"if ({rule.valid(f'v{u}')}) scan_take(bv[0], bi[0], v{u}, {here});")
            continue
        # Rows: the vector holds V consecutive reduced elements of one output. Columns: one reduced element
        # of V neighbouring outputs.
        rows = plan.family == "rows"
        first_element = f"({here}) * {vector}ull" if rows else here
        red = decompose("(unsigned int)rr", reduced.sizes, reduced_strides, names)
        word = WORD[size * vector]  # 16 bytes, or fewer where an extra output is wider than the InputTensor
        fetch.append(f"{union(spec, word, vector)} u{u};")
        fetch.append(f"ull {declared} = 0; {{ ull rr = {first_element}; {red} }}")
        fetch.append(f"u{u}.w = *(const {word}*)(px + (ko + ro{u}) * {size}ull);")
        fetch += loads
        fetch += [_held(x, f"x{x.number}_{u}", vector) for x in written]
        if grouped:
            steps.append((f"u{u}", [[fetched[o.slot](e) for o in others] for e in range(vector)]))
            if u > 0:
                continue  # the first row's takes one by one serve the loop over the last rows
        for e in range(vector):
            lane = str(e) if _by_lanes(plan) else "0"  # see lanes()
            slot, index = (lane, f"{first_element} + {e}ull") if rows else (str(e), here)
            results = [f"x{x.number}_{u}.e[{e}]" for x in written]
            takes.append(f"{{ {compute} v = {value(f'u{u}.e[{e}]', e, fetched, results)}; "
                         f"if ({rule.valid('v')}) scan_take(bv[{slot}], bi[{slot}], v, {index}); }}")
        for x in written:
            takes += _stores(x, f"x{x.number}_{u}", f"ke{x.number} + re{x.number}_{u}", vector)
    single_fetch = [line.replace(f"{position} + 0ull * {step}", position) for line in fetch[: len(fetch) // unroll]]
    single_takes = [line.replace(f"{position} + 0ull * {step}", position)
                    for line in (takes if grouped else takes[: len(takes) // unroll])]
    ordered = ""
    if grouped:  # the unrolled loop takes one candidate per column: the best of its step's rows
        candidates = [_best_of(spec, rule, [(x, e, others[e]) for x, others in steps], vector) for e in range(vector)]
        takes = [f"{{ const {compute} m = {candidate}; "
                 f"if ({rule.valid('m')}) scan_take(bv[{e}], bi[{e}], m, {position}); }}"
                 for e, candidate in enumerate(candidates)]
        if integers is not None:
            ordered, takes = _by_stored_integers(spec, rule, integers, steps, hoisted, position, vector, takes)
    nl = "\n            "
    if unroll == 1:
        tail = ""
    elif grouped or written:
        tail = f"""
        for (; {position} < stop; {position} += {step}) {{
            {nl.join(single_fetch)}
            {nl.join(single_takes)}
        }}"""
    else:
        tail = _guarded_step(fetch, takes, marks, position, step)
    return f"""{ordered}
        ull {position} = {first};
        const ull stop = {last};
        for (; {position} + {unroll - 1}ull * {step} < stop; {position} += {unroll}ull * {step}) {{
            {nl.join(fetch)}
            {nl.join(takes)}
        }}{tail}"""


def _guarded_step(fetch: Sequence[str], takes: Sequence[str], marks: Sequence[tuple[int, int]], position: str,
                  step: str) -> str:
    """The scan's last positions (fewer than an unrolled step) as one more unrolled step: each position past
    the end loads the last position instead (a load the step makes anyway, from cache) and takes nothing, so
    every load of the step is in flight before the first is used, where a loop of one position a step waited
    for each load in turn (a piece of two loads a thread paid two memory latencies)."""
    ends = [*marks[1:], (len(fetch), len(takes))]
    lines = []
    for u, ((fetch_from, _), (fetch_to, _)) in enumerate(zip(marks, ends)):
        here = f"{position} + {u}ull * {step}"
        lines.append(f"const ull c{u} = {here} < stop ? {here} : stop - 1ull;")
        lines += [line.replace(here, f"c{u}") for line in fetch[fetch_from:fetch_to]]
    for u, ((_, take_from), (_, take_to)) in enumerate(zip(marks, ends)):
        here = f"{position} + {u}ull * {step}"
        body = "\n                ".join(line.replace(here, f"c{u}") for line in takes[take_from:take_to])
        lines.append(f"if ({here} < stop) {{\n                {body}\n            }}")
    nl = "\n            "
    return f"""
        if ({position} < stop) {{
            {nl.join(lines)}
        }}"""


# --- rows of 16-byte loads: a candidate per element of a load -----------------------------------------------
#
# A thread scanning a row by 16-byte loads may keep one (value, index) per element of a load (its lane), each
# lane taking the elements at its place in every load, in increasing order; the lanes merge by (value, index)
# after the scan. One candidate for all elements makes each take wait for the one before: FLOAT16, 8 loads a
# thread are 64 dependent takes, 8 a lane (H100, ARGMAX of [8, 32000]: 7.3 us against 5.7 by lanes). The plan
# chooses lanes where its blocks are few (plan.LANE_BLOCKS_PER_SM): the lanes' registers cost occupancy.


def lanes(plan: ArgMinPlan) -> int:
    """Candidates a thread keeps: one per element of a load where the plan says so (``plan.lanes``: rows of
    16-byte loads of a plain ARGMIN over few blocks), else one per output it keeps (``plan.columns``)."""
    return plan.vector if _by_lanes(plan) else plan.columns


def _by_lanes(plan: ArgMinPlan) -> bool:
    return plan.lanes and plan.family == "rows" and plan.vector > 1


def _lanes_merged(plan: ArgMinPlan) -> str:
    """The lanes' candidates merged into lane 0's, pairwise: log2 of the lanes dependent takes."""
    if not _by_lanes(plan):
        return ""
    lines, step = [], 1
    while step < plan.vector:
        lines += [f"take(bv[{e}], bi[{e}], bv[{e + step}], bi[{e + step}]);" for e in range(0, plan.vector, 2 * step)]
        step *= 2
    return "".join(f"\n        {line}" for line in lines)
