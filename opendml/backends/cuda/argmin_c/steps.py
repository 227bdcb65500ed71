"""Columns of a computed float value: a candidate per column per step of rows, the row found by a rescan;
by the InputTensor's stored 8-bit integers where the value is monotone in them."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .... import expr as ex
from ....dtypes import DataType
from ....kernels.monotone import RawOrder, raw_order
from ....kernels.spec import KernelSpec
from ...layout import Layout
from .. import expr_c
from ..codegen import C_TYPE, decompose
from ..plan import ArgMinPlan
from .comparison import Order, _compute, later_wins, packed
from .operands import Operand, is_prologue

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
    stop = "" if later_wins(spec.reduction.direction) else " break;"  # the last equal row, or the first
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
