"""The comparison of the engine, as data (``Order``: a lowering of ``ops.arg_order``), and the values it
compares: their C type, the PTX min, max and equality helpers, and the best of several values (a min or
max tree, through a value's monotone tail where it has one)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ....dtypes import DataType
from ....enums import AxisDirection, NanPolicy
from ....kernels.monotone import MonotoneTail, monotone_tail
from ....kernels.spec import KernelSpec
from ....ops.arg_order import LARGER_WINS, LATER_WINS, NAN_WINS, ArgOrder, tie_winner
from .. import expr_c
from ..codegen import C_TYPE

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

    @classmethod
    def of(cls, order: ArgOrder, floats: bool) -> Order:
        """The comparison of ``order``'s values (``ops.arg_order``), of float values or of integers. Under
        IGNORE a NaN loses to every number: it is skipped (``valid``), and a reduction of NaN only, left with
        no candidate, answers ``empty_index``; under PROPAGATE it wins over every number (``beats``)."""
        return cls(order.larger_wins, order.nan_policy if floats else None)

    @property
    def propagates(self) -> bool:
        return self.nan is not None and NAN_WINS[self.nan]

    def beats(self, a: str, b: str) -> str:
        """C that holds when value ``a`` wins over ``b`` strictly; neither wins a tie (equal numbers, -0.0
        and +0.0, and under PROPAGATE two NaN), which the index then breaks."""
        if self.propagates:
            return f"beats({a}, {b})"
        return f"lt({b}, {a})" if self.largest else f"lt({a}, {b})"

    def valid(self, value: str) -> str:
        """C that holds when ``value`` takes part: all but NaN under IGNORE, every value otherwise."""
        return f"is_number({value})" if self.nan is not None and not NAN_WINS[self.nan] else "true"

    def helpers(self) -> str:
        """The device functions ``beats`` needs (none but the prelude's ``lt`` where NaN is ignored)."""
        return BEATS_HELPERS[self.largest] if self.propagates else ""


INDEX_REDUCTIONS = LARGER_WINS  # the reductions this engine runs, and whether the largest value wins


def order(spec: KernelSpec) -> Order:
    """The comparison of ``spec``'s reduction over the values its element expression gives."""
    reduction = spec.reduction
    assert reduction is not None and reduction.kind in INDEX_REDUCTIONS  # CudaBackend.compile_spec checks it
    value_type, _ = _compute(spec)
    return Order.of(ArgOrder(reduction.kind, reduction.nan_rule, reduction.direction), value_type.is_float)


# The tie rule on indices (``ops.arg_order.LATER_WINS``), as the templates write it.

def later_wins(direction: AxisDirection) -> bool:
    """Whether a tie goes to the later index (DECREASING), not to the earlier."""
    return LATER_WINS[direction]


def index_wins(direction: AxisDirection, a: str, b: str) -> str:
    """C that holds when index ``a`` wins a tie over index ``b``."""
    return f"{a} > {b}" if later_wins(direction) else f"{a} < {b}"


def empty_index(direction: AxisDirection, length: int) -> int:
    """The index a reduction of ``length`` elements answers where it found no candidate (every value NaN,
    ignored): the winner among its NaN, which tie."""
    return tie_winner(direction, length)


def _compute(spec: KernelSpec) -> tuple[DataType, str]:
    """The type of the values compared, and the C type they are held in."""
    value_type = expr_c.value_type(spec.operator, spec.element)
    return value_type, expr_c.held_type(value_type)


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


NO_POSITION = "0xFFFFFFFFu"


def _best_name(rule: Order) -> str:
    """The ballot scan's reduction of two values: their min (ARGMIN) or max (ARGMAX)."""
    return "vmax" if rule.largest else "vmin"


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
