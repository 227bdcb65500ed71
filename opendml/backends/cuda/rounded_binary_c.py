"""The CUDA C of the correctly rounded binary functions (``opendml.rounded.binary``: POW, ATAN_YX): CUDA's double
function, the rounding test of ``rounded_c.METHOD``, and for the flagged pairs the double-double evaluation and
its rounding spelled once more in C, step for step as the plain Python of ``opendml.rounded.binary`` (every sum,
product, quotient and square root its own correctly rounded operation: ``__dadd_rn``... never contracted), so
a flagged pair gets the bits it gets on the CPU (tests/test_rounded_binary.py compiles this C for the host and
holds it to the Python)."""

from __future__ import annotations

from collections.abc import Iterable

from ... import expr as ex
from ...rounded import NEAR, PRECISIONS
from ...rounded import binary as b
from ...rounded.binary import BINARY_FUNCTIONS
from .rounded_c import METHOD


def _h(value: float) -> str:
    return value.hex()


def _table(values: Iterable[float]) -> str:
    return ", ".join(float(v).hex() for v in values)


# The double-double steps and the two evaluations (opendml.rounded.binary's functions, in its order).
DOUBLE_DOUBLE = rf"""#ifndef ROUNDED_DOUBLE_DOUBLE
#define ROUNDED_DOUBLE_DOUBLE
struct opendml_dd {{ double h, l; }};
__device__ __forceinline__ opendml_dd dd_two_sum(double a, double b) {{
    const double s = __dadd_rn(a, b);
    const double v = __dsub_rn(s, a);
    return {{s, __dadd_rn(__dsub_rn(a, __dsub_rn(s, v)), __dsub_rn(b, v))}};
}}
__device__ __forceinline__ opendml_dd dd_fast_two_sum(double a, double b) {{
    const double s = __dadd_rn(a, b);
    return {{s, __dsub_rn(b, __dsub_rn(s, a))}};
}}
__device__ __forceinline__ opendml_dd dd_split(double a) {{
    const double c = __dmul_rn({_h(b._SPLIT)}, a);
    const double high = __dsub_rn(c, __dsub_rn(c, a));
    return {{high, __dsub_rn(a, high)}};
}}
__device__ __forceinline__ opendml_dd dd_two_product(double a, double b) {{
    const double p = __dmul_rn(a, b);
    const opendml_dd x = dd_split(a), y = dd_split(b);
    const double e = __dadd_rn(__dadd_rn(__dadd_rn(__dsub_rn(__dmul_rn(x.h, y.h), p), __dmul_rn(x.h, y.l)),
                                         __dmul_rn(x.l, y.h)), __dmul_rn(x.l, y.l));
    return {{p, e}};
}}
__device__ __forceinline__ opendml_dd dd_add(opendml_dd a, opendml_dd b) {{
    opendml_dd s = dd_two_sum(a.h, b.h);
    const opendml_dd t = dd_two_sum(a.l, b.l);
    s = dd_fast_two_sum(s.h, __dadd_rn(s.l, t.h));
    return dd_fast_two_sum(s.h, __dadd_rn(s.l, t.l));
}}
__device__ __forceinline__ opendml_dd dd_neg(opendml_dd a) {{ return {{-a.h, -a.l}}; }}
__device__ __forceinline__ opendml_dd dd_multiply(opendml_dd a, opendml_dd b) {{
    const opendml_dd p = dd_two_product(a.h, b.h);
    return dd_fast_two_sum(p.h, __dadd_rn(p.l, __dadd_rn(__dmul_rn(a.h, b.l), __dmul_rn(a.l, b.h))));
}}
__device__ opendml_dd dd_divide(opendml_dd a, opendml_dd b) {{
    const double q1 = __ddiv_rn(a.h, b.h);
    opendml_dd r = dd_add(a, dd_neg(dd_multiply(b, {{q1, 0.0}})));
    const double q2 = __ddiv_rn(r.h, b.h);
    r = dd_add(r, dd_neg(dd_multiply(b, {{q2, 0.0}})));
    const double q3 = __ddiv_rn(r.h, b.h);
    return dd_add(dd_fast_two_sum(q1, q2), {{q3, 0.0}});
}}
__device__ __forceinline__ opendml_dd dd_sqrt(opendml_dd a) {{
    const double s = __dsqrt_rn(a.h);
    const opendml_dd p = dd_two_product(s, s);
    return dd_fast_two_sum(s, __ddiv_rn(__dadd_rn(__dsub_rn(__dsub_rn(a.h, p.h), p.l), a.l), __dadd_rn(s, s)));
}}
__device__ const double opendml_log_hi[{b._LOG_TERMS + 1}] = {{{_table(b._LOG_HI)}}};
__device__ const double opendml_log_lo[{b._LOG_TERMS + 1}] = {{{_table(b._LOG_LO)}}};
__device__ opendml_dd dd_log_scaled(double q, opendml_dd t) {{
    const opendml_dd s = dd_divide(t, dd_add({{2.0, 0.0}}, t));
    const opendml_dd s2 = dd_multiply(s, s);
    opendml_dd a = {{opendml_log_hi[{b._LOG_TERMS}], opendml_log_lo[{b._LOG_TERMS}]}};
    for (int n = {b._LOG_TERMS} - 1; n >= 0; --n) {{
        a = dd_add(dd_multiply(a, s2), {{opendml_log_hi[n], opendml_log_lo[n]}});
    }}
    const opendml_dd l = dd_multiply(s, a);
    const opendml_dd k = dd_two_product(q, {_h(b._LN2_HI)});
    return dd_add({{k.h, __dadd_rn(k.l, __dmul_rn(q, {_h(b._LN2_LO)}))}},
                  {{__dadd_rn(l.h, l.h), __dadd_rn(l.l, l.l)}});
}}
__device__ opendml_dd dd_log(double x) {{
    int q;
    double m = frexp(x, &q);
    if (m < {_h(b._SQRT_HALF)}) {{ m = __dadd_rn(m, m); q -= 1; }}
    return dd_log_scaled((double)q, {{__dsub_rn(m, 1.0), 0.0}});
}}
__device__ opendml_dd dd_exp(opendml_dd t) {{
    const double k = floor(__dadd_rn(__dmul_rn(t.h, {_h(b._INV_LN2)}), 0.5));
    const opendml_dd p = dd_two_product(k, {_h(b._LN2_2)});
    opendml_dd r = dd_add({{__dsub_rn(t.h, __dmul_rn(k, {_h(b._LN2_1)})), 0.0}}, dd_neg(p));
    r = dd_add(r, {{t.l, -__dmul_rn(k, {_h(b._LN2_3)})}});
    opendml_dd a = {{1.0, 0.0}};
    for (int n = {b._EXP_TERMS}; n > 0; --n) {{
        a = dd_add({{1.0, 0.0}}, dd_divide(dd_multiply(a, r), {{(double)n, 0.0}}));
    }}
    return {{ldexp(a.h, (int)k), ldexp(a.l, (int)k)}};
}}
__device__ opendml_dd dd_atan(opendml_dd z) {{
    for (int i = 0; i < 3; ++i) {{
        opendml_dd w = dd_add({{1.0, 0.0}}, dd_multiply(z, z));
        w = dd_add({{1.0, 0.0}}, dd_sqrt(w));
        z = dd_divide(z, w);
    }}
    const opendml_dd z2 = dd_neg(dd_multiply(z, z));
    opendml_dd a = dd_divide({{1.0, 0.0}}, {{(double)(2 * {b._ATAN_TERMS} + 1), 0.0}});
    for (int n = {b._ATAN_TERMS} - 1; n >= 0; --n) {{
        a = dd_add(dd_multiply(a, z2), dd_divide({{1.0, 0.0}}, {{(double)(2 * n + 1), 0.0}}));
    }}
    a = dd_multiply(a, z);
    return {{__dmul_rn(8.0, a.h), __dmul_rn(8.0, a.l)}};
}}
__device__ double dd_round(opendml_dd v, int base, int lowest, double top) {{
    const double magnitude = fabs(v.h);
    const double tail = v.h > 0.0 ? v.l : -v.l;
    int exponent;
    frexp(magnitude, &exponent);
    const int step = exponent - 53 + base + (lowest - 1022 - exponent > 0 ? lowest - 1022 - exponent : 0);
    const double cell = floor(ldexp(magnitude, -step));
    const double midpoint = ldexp(__dadd_rn(__dmul_rn(2.0, cell), 1.0), step - 1);
    const double excess = __dadd_rn(__dsub_rn(magnitude, midpoint), tail);
    double kept;
    if (fabs(excess) <= __dmul_rn({_h(b.TIE)}, midpoint))
        kept = __dadd_rn(cell, __dsub_rn(cell, __dmul_rn(2.0, floor(__dmul_rn(0.5, cell)))));
    else if (excess > 0.0)
        kept = __dadd_rn(cell, 1.0);
    else
        kept = cell;
    double result = ldexp(kept, step);
    if (result >= top) result = __longlong_as_double(0x7FF0000000000000LL);
    return v.h < 0.0 ? -result : result;
}}
__device__ double opendml_pow_decided(double x, double e, int base, int lowest, double top) {{
    const opendml_dd t = dd_multiply(dd_log(fabs(x)), {{e, 0.0}});
    opendml_dd r = dd_exp(t);
    if (x < 0.0 && __dmul_rn(0.5, e) != floor(__dmul_rn(0.5, e))) r = dd_neg(r);
    return dd_round(r, base, lowest, top);
}}
__device__ double opendml_atan2_decided(double a, double b, int base, int lowest, double top) {{
    const double ya = fabs(a), xb = fabs(b);
    const bool steep = ya > xb;
    opendml_dd r = dd_atan(dd_divide({{steep ? xb : ya, 0.0}}, {{steep ? ya : xb, 0.0}}));
    if (steep) r = dd_add({{__dmul_rn(0.5, {_h(b._PI_HI)}), __dmul_rn(0.5, {_h(b._PI_LO)})}}, dd_neg(r));
    if (b < 0.0) r = dd_add({{{_h(b._PI_HI)}, {_h(b._PI_LO)}}}, dd_neg(r));
    return dd_round(a < 0.0 ? dd_neg(r) : r, base, lowest, top);
}}
#endif
"""


def function_name(node: ex.BinaryFunction) -> str:
    return f"rounded_{node.name.lower()}_{node.precision.name.lower()}"


def function(node: ex.BinaryFunction) -> str:
    """The device function of one BinaryFunction node's function and precision."""
    name, grid, f = function_name(node), PRECISIONS[node.precision.name], BINARY_FUNCTIONS[node.name]
    narrow = "__double2float_rn(rounded_round(bits, base, lowest, top))"
    rounding = "__double2float_rn(y)" if grid.name == "FLOAT32" else narrow
    guard = name.upper()
    return f"""#ifndef {guard}
#define {guard}
__device__ __forceinline__ float {name}(float a, float b) {{
    const double y = {f.c}((double)a, (double)b);
    const long long bits = __double_as_longlong(y);
    if ((bits & 0x7FF0000000000000LL) == 0x7FF0000000000000LL) return __double2float_rn(y);  // NaN, +-inf
    const int base = {grid.base}, lowest = {grid.lowest};
    const double top = {grid.top!r};
    if (rounded_distance(bits, base, lowest, top) <= {NEAR})
        return __double2float_rn({f.c_decided}((double)a, (double)b, base, lowest, top));
    return {rounding};
}}
#endif
"""


def helpers(roots: Iterable[ex.Expr]) -> str:
    """The device functions the BinaryFunction nodes of ``roots`` call (none: empty)."""
    found = {(n.name, n.precision): n for root in roots for n in ex.nodes(root) if isinstance(n, ex.BinaryFunction)}
    if not found:
        return ""
    return METHOD + DOUBLE_DOUBLE + "".join(function(n) for n in found.values())
