"""ARGMIN and ARGMAX kernel templates: hand-tuned scans, warp and block merges, and a combine pass for split
rows. One engine serves both operators under either NanPolicy: the comparison is data (``Order``), the rest
of every template the same.

The value each element contributes is the ``value`` device function lowered from the KernelSpec's element
expression (expr_c.py): the element itself for ARGMIN alone, so it inlines to the plain load it replaces;
a fused prologue's expression over several operands otherwise. The InputTensor (operand 0) leads: the plan
follows its layout and its 16-byte loads. Every other operand's element comes from the same position
through its own strides (kept and reduced layouts carry them all): an operand constant along the whole
reduction of an output (a per-row scale of a last-axis reduction, a per-tensor one) is loaded once per
output before the scan; one constant along a 16-byte load's elements once per load; one varying along them
with stride 1 by aligned words of the same elements, else element by element.

Extra outputs (``KernelSpec.extra``, a fused kernel's intermediates that are graph outputs) are computed by
``value`` beside the value compared and stored where it is computed, by the thread that scans the element,
in every plan: each element of each extra is written once (pieces of split reductions cover disjoint
ranges; the combine pass writes none), whether its value is NaN or not. Each extra has the InputTensor's
sizes and its own strides, which join the layouts like an operand's; along one load's elements it is stored
by aligned words where it has stride 1, else element by element. A load then holds 16 bytes of the widest
extra output, not 16 bytes of the InputTensor (plan.py): each thread stores one 16-byte word per load beside
its neighbours', so a warp's store instruction writes 512 contiguous bytes. H100, row 5 of
benchmarks/graphs.py (UINT8 [65536, 4096] -> DEQUANTIZE_LINEAR -> CLIP, the FLOAT32 clipped tensor an output,
ARGMIN of it): 0.845 ms with 16-byte loads of UINT8, whose 64 bytes of FLOAT32 a thread stored by four words
64 bytes apart from the next thread's, against 0.495 ms with 4-byte loads (the floor: 0.46 ms).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ... import expr as ex
from ...dtypes import DataType
from ...enums import AxisDirection, NanPolicy
from ...kernels.monotone import MonotoneTail, RawOrder, monotone_tail, raw_order
from ...kernels.spec import KernelSpec, ReductionKind
from ...tensor import TensorDesc
from ..layout import Layout, split_axes
from . import expr_c
from .codegen import C_TYPE, PRELUDE, decompose
from .elementwise_c import FLOAT_WORD, WORD
from .plan import PROLOGUE_ROW_POSITIONS, ArgMinPlan, plan_argmin

VECTOR_UNROLL = 8  # 16-byte loads in flight per thread in ARGMIN scans (measured best on an H100)
# Bytes each thread holds per unrolled step: more operands unroll less. A plain ARGMIN's 16-byte loads
# reach VECTOR_UNROLL well below it; a prologue's per-column words (L1 hits shared by every row) fit twice.
LOADED_BYTES = VECTOR_UNROLL * 32


def layouts(spec: KernelSpec, inputs: Sequence[TensorDesc | None], output: TensorDesc,
            extra_outputs: Sequence[TensorDesc] = ()) -> tuple[Layout, Layout]:
    """The kept layout (strides of the InputTensor, the output, then each other present operand, then each
    extra output) and the reduced one (the InputTensor's, the others', the extra outputs'), merged only
    where every operand and extra output allows it."""
    assert spec.reduction is not None
    x = inputs[0]
    assert x is not None  # InputTensor is required
    others = [desc.effective_strides for desc in inputs[1:] if desc is not None]
    others += [desc.effective_strides for desc in extra_outputs]
    return split_axes(x.sizes, x.effective_strides, output.effective_strides, spec.reduction.axes, others)


def is_prologue(spec: KernelSpec) -> bool:
    """Whether the values compared are computed (a fused prologue), not the InputTensor's elements."""
    return not (isinstance(spec.element, ex.Load) and spec.element.operand == 0)


def plan(spec: KernelSpec, x: TensorDesc, kept: Layout, reduced: Layout, sm_count: int) -> ArgMinPlan:
    """The plan of ``spec``'s reduction over the InputTensor ``x`` on a GPU of ``sm_count`` multiprocessors."""
    assert spec.reduction is not None
    stored = max((value.type.size for value in spec.extra), default=0)
    return plan_argmin(x.sizes, x.effective_strides, spec.reduction.axes, kept, reduced, sm_count,
                       x.data_type.size, is_prologue(spec), shared_by_rows(kept, reduced), stored)


def shared_by_rows(kept: Layout, reduced: Layout) -> bool:
    """Whether the operands besides the InputTensor are the same for every output and some of them varies
    along the reduction: a warp scanning several rows then loads them once for all (plan.py)."""
    others_kept, others_reduced = kept.strides[2:], reduced.strides[1:]
    return not any(any(s) for s in others_kept) and any(any(s) for s in others_reduced)


@dataclass(frozen=True)
class Operand:
    """An operand of the element besides the InputTensor, and how the scan reads it."""

    slot: int
    type: DataType
    kept: tuple[int, ...]  # strides over the kept layout
    reduced: tuple[int, ...]  # strides over the reduced layout
    form: str  # along one load's elements: "one" value, aligned "words", or "elements" one by one
    stride: int  # between one load's elements

    @property
    def constant(self) -> bool:
        """The same for the whole reduction of an output: loaded once, before the scan."""
        return not any(self.reduced)

    def loaded_bytes(self, vector: int) -> int:
        """Bytes held per scan position, when loaded there."""
        if self.constant:
            return 0
        return self.type.size * (1 if self.form == "one" else vector)


def operands(spec: KernelSpec, plan: ArgMinPlan, kept: Layout, reduced: Layout) -> list[Operand]:
    """The present operands after the InputTensor (kept strides from index 2, reduced from 1), each with the
    form its load takes under ``plan``."""
    found = []
    present = [(k, t) for k, t in enumerate(spec.inputs) if t is not None and k > 0]
    for n, (slot, data_type) in enumerate(present):
        kept_strides, reduced_strides = kept.strides[2 + n], reduced.strides[1 + n]
        if plan.vector == 1:
            found.append(Operand(slot, data_type, kept_strides, reduced_strides, "one", 0))
            continue
        # Along a load: the innermost reduced dimension (rows) or the innermost kept one (columns).
        rows = plan.family == "rows"
        stride = reduced_strides[-1] if rows else kept_strides[-1]
        others = (kept_strides + reduced_strides[:-1]) if rows else (kept_strides[:-1] + reduced_strides)
        chunk = plan.vector * data_type.size
        if stride == 0:
            form = "one"
        elif stride == 1 and all(s * data_type.size % min(16, chunk) == 0 for s in others):
            form = "words"
        else:
            form = "elements"
        found.append(Operand(slot, data_type, kept_strides, reduced_strides, form, stride))
    return found


@dataclass(frozen=True)
class Extra:
    """An extra output: where the scan stores each element's value of ``spec.extra[number - 1]``."""

    number: int  # 1, 2...: the output's place after the main one
    type: DataType
    kept: tuple[int, ...]  # strides over the kept layout
    reduced: tuple[int, ...]  # strides over the reduced layout
    form: str  # along one load's elements: aligned "words", or "elements" one by one
    stride: int  # between one load's elements

    def words(self, vector: int) -> tuple[str, int]:
        """The word one load's elements are stored by, and how many. FLOAT32 by float4 (or float2): the
        compiler splits a uint4 store of float values into 4-byte stores."""
        chunk = vector * self.type.size
        words = FLOAT_WORD if self.type is DataType.FLOAT32 else WORD
        return words[min(16, chunk)], max(1, chunk // 16)


def extras(spec: KernelSpec, plan: ArgMinPlan, kept: Layout, reduced: Layout) -> list[Extra]:
    """The extra outputs (their strides follow the present operands' in both layouts), each with the form
    its stores take under ``plan``."""
    first_kept, first_reduced = len(kept.strides) - len(spec.extra), len(reduced.strides) - len(spec.extra)
    found = []
    for j, stored in enumerate(spec.extra):
        kept_strides, reduced_strides = kept.strides[first_kept + j], reduced.strides[first_reduced + j]
        size, form, stride = stored.type.size, "elements", 0
        if plan.vector > 1:
            # Along a load: the innermost reduced dimension (rows) or the innermost kept one (columns).
            rows = plan.family == "rows"
            stride = reduced_strides[-1] if rows else kept_strides[-1]
            others = (kept_strides + reduced_strides[:-1]) if rows else (kept_strides[:-1] + reduced_strides)
            if stride == 1 and all(s * size % min(16, plan.vector * size) == 0 for s in others):
                form = "words"
        found.append(Extra(j + 1, stored.type, kept_strides, reduced_strides, form, stride))
    return found


def alignments(spec: KernelSpec, plan: ArgMinPlan, kept: Layout, reduced: Layout) -> list[tuple[int, int]]:
    """(position, bytes) of each address ``plan``'s loads and stores need aligned: the InputTensor's 16-byte
    loads, any other operand's words and any extra output's words. Positions count the present operands,
    then the extra outputs."""
    if plan.vector == 1:
        return []
    in_type = spec.inputs[0]
    assert in_type is not None  # InputTensor is required
    needed = [(0, plan.vector * in_type.size)]
    found = operands(spec, plan, kept, reduced)
    for position, operand in enumerate(found, start=1):
        if operand.form == "words":
            needed.append((position, min(16, plan.vector * operand.type.size)))
    for position, extra in enumerate(extras(spec, plan, kept, reduced), start=1 + len(found)):
        if extra.form == "words":
            needed.append((position, min(16, plan.vector * extra.type.size)))
    return needed


def _fetch(operand: Operand, name: str, offset: str, vector: int) -> tuple[list[str], Callable[[int], str]]:
    """Statements loading ``operand``'s elements of one position into ``name``, and element ``e``'s value."""
    c_type = C_TYPE[operand.type]
    pointer = f"((const {c_type}*)p{operand.slot})"
    if operand.form == "one":
        return [f"const {c_type} {name} = {pointer}[{offset}];"], lambda e: name
    if operand.form == "elements":
        lines = [f"const {c_type} {name}_{e} = {pointer}[{offset} + {e * operand.stride}ull];" for e in range(vector)]
        return lines, lambda e: f"{name}_{e}"
    chunk = vector * operand.type.size
    word, count = WORD[min(16, chunk)], max(1, chunk // 16)
    lines = [f"union {{ {word} w[{count}]; {c_type} e[{vector}]; }} {name};"]
    lines += [f"{name}.w[{j}] = ((const {word}*)(p{operand.slot} + ({offset}) * {operand.type.size}ull))[{j}];"
              for j in range(count)]
    return lines, lambda e: f"{name}.e[{e}]"


def _hoisted(others: Sequence[Operand], vector: int) -> tuple[str, dict[int, Callable[[int], str]]]:
    """Loads of the operands constant along the reduction, once per output group, and their values."""
    lines: list[str] = []
    values: dict[int, Callable[[int], str]] = {}
    for operand in others:
        if operand.constant:
            fetched, values[operand.slot] = _fetch(operand, f"h{operand.slot}", f"kk{operand.slot}", vector)
            lines += fetched
    return "".join(f"\n        {line}" for line in lines), values


# --- the comparison: ARGMIN's or ARGMAX's order under a NaN policy ------------------------------------------

# PROPAGATE's comparison of floats: ``beats(a, b)`` holds when a is less (ARGMIN) or greater (ARGMAX) than b,
# or a is NaN and b is not. One PTX "or unordered" comparison (ltu: a < b, or either is NaN), and'ed with b
# being a number: b NaN gives false (nothing beats a NaN, a NaN ties it), a NaN and b a number gives true.
BEATS_HELPERS = {largest: f"""__device__ __forceinline__ bool beats(float a, float b) {{
    unsigned int r;
    asm("{{ .reg .pred p; setp.num.f32 p, %2, %2; setp.{'gtu' if largest else 'ltu'}.and.f32 p, %1, %2, p; "
        "selp.u32 %0, 1, 0, p; }}" : "=r"(r) : "f"(a), "f"(b));
    return r != 0;
}}
""" for largest in (False, True)}


@dataclass(frozen=True)
class Order:
    """How the engine compares two values, as data: one engine serves ARGMIN and ARGMAX under either
    NanPolicy. ARGMAX writes ARGMIN's comparison with its operands swapped (``lt(b, a)`` for ``lt(a, b)``,
    a max for a min), so it costs the same instructions and registers, and the extra outputs store the
    true values. ``nan`` is None for integer values, which hold no NaN."""

    largest: bool  # ARGMAX: the largest value wins
    nan: NanPolicy | None  # IGNORE: NaN values are skipped; PROPAGATE: a NaN beats every number

    @property
    def propagates(self) -> bool:
        return self.nan is NanPolicy.PROPAGATE

    def beats(self, a: str, b: str) -> str:
        """C that holds when value ``a`` wins over ``b`` strictly; neither wins a tie (equal numbers, -0.0
        and +0.0, and under PROPAGATE two NaN), which the index then breaks."""
        if self.propagates:
            return f"beats({a}, {b})"
        return f"lt({b}, {a})" if self.largest else f"lt({a}, {b})"

    def valid(self, value: str) -> str:
        """C that holds when ``value`` takes part: all but NaN under IGNORE, every value otherwise."""
        return f"is_number({value})" if self.nan is NanPolicy.IGNORE else "true"

    def helpers(self) -> str:
        """The device functions ``beats`` needs (none but the prelude's ``lt`` where NaN is ignored)."""
        return BEATS_HELPERS[self.largest] if self.propagates else ""


INDEX_REDUCTIONS = {ReductionKind.ARGMIN: False, ReductionKind.ARGMAX: True}  # kind: whether the largest wins


def order(spec: KernelSpec) -> Order:
    """The comparison of ``spec``'s reduction over the values its element expression gives."""
    reduction = spec.reduction
    assert reduction is not None and reduction.kind in INDEX_REDUCTIONS  # CudaBackend.compile_spec checks it
    value_type, _ = _compute(spec)
    return Order(INDEX_REDUCTIONS[reduction.kind], reduction.nan_rule if value_type.is_float else None)


# --- the scan of one take per element --------------------------------------------------------------------

def _take_function(compute: str, direction: AxisDirection, rule: Order) -> str:
    """``take`` merges any two candidates; ``scan_take`` is for one thread visiting indices in increasing
    order, where a tie goes to the earlier index (INCREASING) or to the later one (DECREASING)."""
    decreasing = direction is AxisDirection.DECREASING
    later = "i > bi" if decreasing else "i < bi"
    scan_better = f"!{rule.beats('bv', 'v')}" if decreasing else rule.beats("v", "bv")
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
    empty = plan.length - 1 if direction is AxisDirection.DECREASING else 0
    lines = []
    for j in range(plan.columns):
        if plan.splits > 1:
            lines.append(f"(({compute}*)pv)[(o + {j}) * {plan.splits}ull + s] = bv[{j}]; "
                         f"((ull*)pi)[(o + {j}) * {plan.splits}ull + s] = bi[{j}];")
        else:
            lines.append(f"(({C_TYPE[out_type]}*)pout)[oo + {j * out_step}ull] = ({C_TYPE[out_type]})"
                         f"(bi[{j}] == INVALID_INDEX ? {empty}ull : bi[{j}]);")
    return "\n            ".join(lines)


def _compute(spec: KernelSpec) -> tuple[DataType, str]:
    """The type of the values compared, and the C type they are held in."""
    value_type = expr_c.value_type(spec.operator, spec.element)
    return value_type, expr_c.held_type(value_type)


def _held(extra: Extra, name: str, vector: int) -> str:
    """The declaration of the registers one load's elements of ``extra`` are computed into."""
    c_type = C_TYPE[extra.type]
    if extra.form == "words":
        word, count = extra.words(vector)
        return f"union {{ {word} w[{count}]; {c_type} e[{vector}]; }} {name};"
    return f"struct {{ {c_type} e[{vector}]; }} {name};"


def _stores(extra: Extra, name: str, offset: str, vector: int) -> list[str]:
    """Statements storing one load's elements of ``extra``, held in ``name``, from element ``offset``."""
    pointer = f"pout{extra.number}"
    if extra.form == "words":
        word, count = extra.words(vector)
        return [f"(({word}*)({pointer} + ({offset}) * {extra.type.size}ull))[{w}] = {name}.w[{w}];"
                for w in range(count)]
    c_type = C_TYPE[extra.type]
    return [f"(({c_type}*){pointer})[{offset} + {e * extra.stride}ull] = {name}.e[{e}];" for e in range(vector)]


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


# --- columns with a float value: one take per group of rows, the row found by a rescan -------------------------
#
# A column scan's thread holds V neighbouring columns and walks their rows, ``unroll`` rows a step. Where the
# values are floats, each column's step reduces its ``unroll`` values by a min (max), the value's monotone
# tail applied once to it (``opendml.kernels.monotone``), and takes that candidate with the step's first
# row; after the scan, each column's best step is walked again for the row whose value equals the best
# (the first, or for DECREASING the last). Exact as the ballot scan is: the min of numbers is one of them,
# a step of only NaN gives NaN (skipped), == and < hold -0.0 and +0.0 equal; under PROPAGATE the min
# propagates NaN and ``eq`` matches NaN to NaN. A row the tail loop took alone is its own step: the rescan
# starts there and, for DECREASING, no later row of the thread's range equals it (it would have been taken).

# Blocks per multiprocessor a column scan by steps of rows leaves registers for (at most 64 a thread): see
# plan.PROLOGUE_COLUMN_ELEMENTS.
COLUMN_BLOCKS_PER_SM = 4


def _by_steps(spec: KernelSpec, plan: ArgMinPlan, unroll: int) -> bool:
    """Whether the scan takes one candidate per step of ``unroll`` rows (a step of one row is a row)."""
    return groups_rows(spec, plan) and unroll > 1


def groups_rows(spec: KernelSpec, plan: ArgMinPlan) -> bool:
    """Whether ``plan``'s scan takes one candidate per column per step of rows: columns of 16-byte loads of
    computed float values (a prologue: a plain ARGMIN's loads outweigh its compares), stored nowhere else
    (extra outputs are stored where each element is computed)."""
    return (plan.family == "columns" and plan.vector > 1 and is_prologue(spec) and _compute(spec)[1] == "float"
            and not spec.extra)


# Where the value is non-decreasing in the InputTensor's stored 8-bit integers (``monotone.raw_order``: a
# DEQUANTIZE_LINEAR whose scale is positive and finite, then clamps), a step's candidate is the value of its
# rows' least (greatest, for ARGMAX) integer: the 4 column bytes of a word are spread over two words of
# 16-bit lanes by ``prmt`` (even and odd bytes) and each reduced by a 16x2 min a row (``__vminu2``,
# ``__vmins2``: sm_90 VIMNMX, which ptxas takes three inputs at a time), and the value computed once per
# column. Whether the factors are positive and finite is checked once per thread for its columns; a thread
# with any other factor takes the float step above. The rescan is unchanged.
_LANES = {False: ("0x4240u", "0x4341u"), True: ("0xA280u", "0xB391u")}  # even and odd bytes, widened by signed
_LANE_BYTES = ("({lo} & 0xFFu)", "({hi} & 0xFFu)", "({lo} >> 16)", "({hi} >> 16)")  # a word's 4 bytes


def stored_order(spec: KernelSpec, plan: ArgMinPlan, others: Sequence[Operand]) -> RawOrder | None:
    """The order of a column step's values in the InputTensor's stored integers, where a step may take its
    candidate by them: 8-bit integers packed by words, every other operand constant along the reduction."""
    in_type = spec.inputs[0]
    if in_type is None or in_type.size != 1 or plan.vector % 4 or not packed(spec):
        return None
    if not all(o.constant for o in others):
        return None
    return raw_order(spec.element, frozenset(o.slot for o in others))


def _by_stored_integers(spec: KernelSpec, rule: Order, order: RawOrder, steps: Sequence[tuple[str, list[list[str]]]],
                        hoisted: dict[int, Callable[[int], str]], position: str, vector: int,
                        floats: list[str]) -> tuple[str, list[str]]:
    """The thread's check of its factors (before the scan) and the step's takes: by stored integers where
    the check holds, else ``floats``."""
    in_type = spec.inputs[0]
    assert in_type is not None  # InputTensor is required
    _, compute = _compute(spec)
    signed = in_type is DataType.INT8
    best = f"__v{'max' if rule.largest else 'min'}{'s' if signed else 'u'}2"
    even, odd = _LANES[signed]
    checks = []
    for n, factor in enumerate(order.factors):
        read = sorted(ex.loads(factor))
        checks += [f"positive_finite({expr_c.call(f'factor{n}', [hoisted[k](e) for k in read], factor)})"
                   for e in range(vector)]
    lines = []
    for w in range(vector // 4):
        lanes = [f"prmt({x}.u[{w}], 0u, {sel})" for x, _ in steps for sel in (even, odd)]
        lo, hi = f"rl{w}", f"rh{w}"
        lines.append(f"unsigned int {lo} = {lanes[0]}, {hi} = {lanes[1]};")
        lines += [f"{lo} = {best}({lo}, {lanes[k]}); {hi} = {best}({hi}, {lanes[k + 1]});"
                  for k in range(2, len(lanes), 2)]
    for e in range(vector):
        element = f"({C_TYPE[in_type]}){_LANE_BYTES[e & 3].format(lo=f'rl{e >> 2}', hi=f'rh{e >> 2}')}"
        value = expr_c.call("value", [element, *steps[0][1][e]], spec.element)
        lines.append(f"{{ const {compute} m = {value}; "
                     f"if ({rule.valid('m')}) scan_take(bv[{e}], bi[{e}], m, {position}); }}")
    nl = "\n                "
    takes = [f"if (by_integers) {{{nl}{nl.join(lines)}\n            }} else {{{nl}{nl.join(floats)}\n            }}"]
    return f"\n        const bool by_integers = {' && '.join(checks) or 'true'};", takes


def factor_functions(order: RawOrder) -> str:
    """The device functions computing ``order``'s factors from the constant operands, and the check."""
    functions = [POSITIVE_FINITE]
    for n, factor in enumerate(order.factors):
        read = ex.loads(factor)
        functions.append(expr_c.device_function(f"factor{n}", "float", sorted(read.items()), factor, stored=False,
                                                helpers=False))
    return "".join(functions)


# Positive and finite, by the bits: +0.0, -0.0, negatives, infinities and NaN all fail.
POSITIVE_FINITE = r"""__device__ __forceinline__ bool positive_finite(float f) {
    const int b = __float_as_int(f); return b > 0 && b < 0x7F800000;
}
"""


def _rescan(spec: KernelSpec, plan: ArgMinPlan, reduced: Layout, others: Sequence[Operand],
            hoisted: dict[int, Callable[[int], str]], unroll: int) -> str:
    """Each column's walk of its best step's rows for the row of the best value (see above)."""
    in_type = spec.inputs[0]
    assert in_type is not None and spec.reduction is not None  # InputTensor is required
    walked = [o for o in others if not o.constant]
    names = ["ro", *(f"rk{o.slot}" for o in walked)]
    red = decompose("(unsigned int)rr", reduced.sizes, [reduced.strides[0], *(o.reduced for o in walked)], names)
    stop = "" if spec.reduction.direction is AxisDirection.DECREASING else " break;"
    code = []
    for j in range(plan.vector):
        elements = {o.slot: f"((const {C_TYPE[o.type]}*)p{o.slot})[kk{o.slot} + rk{o.slot} + {j * o.stride}ull]"
                    for o in walked}
        elements.update({slot: value(j) for slot, value in hoisted.items()})
        value = expr_c.call("value", [f"((const {C_TYPE[in_type]}*)px)[ko + ro + {j}ull]",
                                      *(elements[o.slot] for o in others)], spec.element)
        code.append(f"""
        if (bi[{j}] != INVALID_INDEX) {{
            const ull last = bi[{j}] + {unroll}ull < end ? bi[{j}] + {unroll}ull : end;
            for (ull k = bi[{j}]; k < last; ++k) {{
                ull {' = 0, '.join(names)} = 0; {{ ull rr = k; {red} }}
                if (eq({value}, bv[{j}])) {{ bi[{j}] = k;{stop} }}
            }}
        }}""")
    return "".join(code)


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
    bounds = f"__launch_bounds__({plan.block}, {COLUMN_BLOCKS_PER_SM}) " if rescan else ""
    return PRELUDE + value + _take_function(compute, direction, order(spec)) + f"""
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
        {_group_reduce(32 if one_pass(spec, plan) else plan.group, compute)}
        {_merge_in_scan(spec, plan, direction, compute) if one_pass(spec, plan) else f'''{guard[plan.family]} {{
            {_finish(plan, direction, spec.output, compute, kept.strides[1][-1])}
        }}'''}
    }}
}}
"""


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


def one_pass(spec: KernelSpec, plan: ArgMinPlan) -> bool:
    """Whether ``plan``'s scan merges the pieces of its split rows itself (the scan of one take per element;
    the min-and-ballot scan and split columns keep the combine pass)."""
    return plan.family == "rows" and plan.splits > 1 and not uses_ballot(spec, plan)


def partials_per_output(spec: KernelSpec, plan: ArgMinPlan) -> int:
    """Partial results a split reduction writes per output: one per warp of each piece where its scan merges
    them (``one_pass``), else one per piece."""
    return plan.splits * (plan.group // 32) if one_pass(spec, plan) else plan.splits


def _merge_in_scan(spec: KernelSpec, plan: ArgMinPlan, direction: AxisDirection, compute: str) -> str:
    """The end of a warp's share of a piece of a split row, its candidate merged over the warp: stored and
    counted, and by the warp that counts last, every warp's merged and the index written (``oo``: the
    output's offset)."""
    out = C_TYPE[spec.output]
    empty = plan.length - 1 if direction is AxisDirection.DECREASING else 0
    count = partials_per_output(spec, plan)
    slot = f"o * {count}ull + s" + (f" * {plan.group // 32}ull + (threadIdx.x >> 5)" if plan.group > 32 else "")
    return f"""unsigned int last = 0u;
        if ((threadIdx.x & 31) == 0) {{
            (({compute}*)pv)[{slot}] = bv[0]; ((ull*)pi)[{slot}] = bi[0];
            __threadfence();
            last = atomicAdd((unsigned int*)pc + o, 1u) == {count - 1}u;
        }}
        last = __shfl_sync(0xffffffffu, last, 0);
        if (last) {{
            __threadfence();
            bv[0] = ({compute})0; bi[0] = INVALID_INDEX;
            for (ull k = threadIdx.x & 31; k < {count}ull; k += 32ull) {{
                take(bv[0], bi[0], __ldcg((const {compute}*)pv + o * {count}ull + k),
                     __ldcg((const ull*)pi + o * {count}ull + k));
            }}
            {_group_reduce(32, compute)}
            if ((threadIdx.x & 31) == 0) {{
                (({out}*)pout)[oo] = ({out})(bi[0] == INVALID_INDEX ? {empty}ull : bi[0]);
                ((unsigned int*)pc)[o] = 0u;
            }}
        }}"""


def argmin_combine_kernel(spec: KernelSpec, plan: ArgMinPlan, direction: AxisDirection, kept: Layout) -> str:
    """The second pass: each output's ``plan.splits`` partial results, merged by a warp or a block."""
    _, compute = _compute(spec)
    out_type = spec.output
    group = plan.combine_group
    empty = plan.length - 1 if direction is AxisDirection.DECREASING else 0
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

# Float min (max, for ARGMAX) and equality as PTX instructions (no flush-to-zero), so no compiler setting
# changes a result; by (largest, NaN propagated). Where NaN is ignored, min.f32 and max.f32 ignore it too (a
# load of only NaN gives NaN, skipped). Under PROPAGATE a load holding a NaN must give NaN: min.NaN.f32
# (sm_80 and later; before, the min or NaN by a select) and an ``eq`` under which a NaN matches a NaN, so
# the ballot finds the load's NaN elements when the best is NaN (a best that is a number comes from a piece
# holding no NaN at all, where ``==`` is all it needs).
def _float_best(name: str, instruction: str, propagate: bool) -> str:
    signature = f"__device__ __forceinline__ float {name}(float a, float b) {{"
    if not propagate:
        return f"""{signature}
    float r; asm("{instruction}.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); return r;
}}
"""
    return f"""{signature}
    float r;
#if __CUDA_ARCH__ >= 800
    asm("{instruction}.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
#else
    asm("{{ .reg .pred p; .reg .f32 m, s; {instruction}.f32 m, %1, %2; add.f32 s, %1, %2; "
        "setp.nan.f32 p, %1, %2; selp.f32 %0, s, m, p; }}" : "=f"(r) : "f"(a), "f"(b));
#endif
    return r;
}}
"""


BEST_HELPERS = {(largest, propagate): _float_best("vmax" if largest else "vmin", "max" if largest else "min", propagate)
                for largest in (False, True) for propagate in (False, True)}
EQ_HELPERS = {False: r"""__device__ __forceinline__ bool eq(float a, float b) {
    unsigned int r; asm("{ .reg .pred p; setp.eq.f32 p, %1, %2; selp.u32 %0, 1, 0, p; }" : "=r"(r) : "f"(a), "f"(b));
    return r != 0;
}
""", True: r"""__device__ __forceinline__ bool eq(float a, float b) {
    unsigned int r;
    asm("{ .reg .pred p, q; setp.nan.f32 q, %1, %1; setp.nan.and.f32 q, %2, %2, q; "
        "setp.eq.or.f32 p, %1, %2, q; selp.u32 %0, 1, 0, p; }" : "=r"(r) : "f"(a), "f"(b));
    return r != 0;
}
"""}
FLOAT_HELPERS = BEST_HELPERS[False, False] + EQ_HELPERS[False]  # ARGMIN's, NaN ignored
NO_POSITION = "0xFFFFFFFFu"


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


def _best_name(rule: Order) -> str:
    """The ballot scan's reduction of two values: their min (ARGMIN) or max (ARGMAX)."""
    return "vmax" if rule.largest else "vmin"


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
    later = "q > bq" if direction is AxisDirection.DECREASING else "q < bq"
    signature = f"void take_vector({compute}& bv, unsigned int& bq, {compute} v, unsigned int q)"
    return helpers + f"""__device__ __forceinline__ {signature} {{
    if (q == {NO_POSITION}) return;
    if (bq == {NO_POSITION} || {rule.beats('v', 'bv')} || (!{rule.beats('bv', 'v')} && {later})) {{ bv = v; bq = q; }}
}}
"""


def _min_tree(values: list[str], name: str = "vmin") -> str:
    """``name`` (vmin, vmax) of ``values`` as a balanced tree (the min is one value whatever the order:
    shorter chains)."""
    while len(values) > 1:
        values = [f"{name}({a}, {b})" for a, b in zip(values[::2], values[1::2])] + values[len(values) & ~1:]
    return values[0]


def tail(spec: KernelSpec) -> MonotoneTail | None:
    """The monotone tail a scan reducing several elements to one candidate applies once per candidate
    (``opendml.kernels.monotone``): a float value's, else none."""
    return monotone_tail(spec.element) if _compute(spec)[1] == "float" else None


def packed(spec: KernelSpec) -> frozenset[int]:
    """The operands ``inner`` takes as 32-bit words (expr_c.BYTES): an 8-bit InputTensor, whose elements
    the scans hold in 16-byte unions, where the value has a monotone tail."""
    in_type = spec.inputs[0]
    return frozenset({0}) if in_type is not None and in_type.size == 1 and tail(spec) is not None else frozenset()


def union(spec: KernelSpec, word: str, vector: int) -> str:
    """The union holding one load of the InputTensor's elements (and its 32-bit words, where packed)."""
    in_type = spec.inputs[0]
    assert in_type is not None  # InputTensor is required
    words = f" unsigned int u[{vector // 4}];" if packed(spec) and vector % 4 == 0 else ""
    return f"union {{ {word} w;{words} {C_TYPE[in_type]} e[{vector}]; }}"


def _best_of(spec: KernelSpec, rule: Order, elements: Sequence[tuple[str, int, Sequence[str]]], vector: int) -> str:
    """The value of the best of several elements, each (the union of ``vector`` InputTensor elements holding
    it, its place there, the other operands' C expressions): the min (max) of their values, or the tail of
    the min of their inner values where the value has a monotone tail."""
    split = tail(spec)
    if split is None:
        values = [expr_c.call("value", [f"{x}.e[{e}]", *others], spec.element) for x, e, others in elements]
        return _min_tree(values, _best_name(rule))
    inner = [expr_c.call("inner", [*_input_arguments(spec, x, e, vector), *others], split.inner)
             for x, e, others in elements]
    return expr_c.call("outer", [_min_tree(inner, _best_name(rule))], split.outer)


def _input_arguments(spec: KernelSpec, x: str, e: int, vector: int) -> list[str]:
    """``inner``'s arguments of the InputTensor's element ``e`` of union ``x``: where packed, its word and
    place (a union of whole words), or the element as the word's byte 0; else the element."""
    if not packed(spec):
        return [f"{x}.e[{e}]"]
    if vector % 4 == 0:
        return [f"{x}.u[{e >> 2}]", f"{e & 3}u"]
    return [f"(unsigned int){x}.e[{e}]", "0u"]


def _value_functions(spec: KernelSpec) -> str:
    """``value``, and ``inner`` and ``outer`` where the value has a monotone tail."""
    bounds = expr_c.clamp_bounds(spec.scalars)
    value = expr_c.value_function(spec.operator, spec.inputs, spec.element, bounds=bounds)
    split = tail(spec)
    if split is None:
        return value
    return value + expr_c.tail_functions(spec.operator, spec.inputs, split, packed(spec), bounds)


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
    decreasing = spec.reduction.direction is AxisDirection.DECREASING
    better = f"!{rule.beats('bv{i}', 'm')}" if decreasing else rule.beats("m", "bv{i}")
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
    pick = "31 - __clz(mask)" if direction is AxisDirection.DECREASING else "__ffs(mask) - 1"
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
