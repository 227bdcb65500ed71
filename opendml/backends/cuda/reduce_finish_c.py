"""REDUCE's value functions on CUDA: the CUDA C of the finish pass, one thread an output, which turns the output's
words into its value (the exact sums: ``sum_rounding.finish`` of the CPU in C, one rounding to nearest even), stores
it and puts the words back to zero for the next launch.

The words and the scan that fills them are rendered by ``reduce_c``; the plan is made by ``reduce_plan``.
"""

from __future__ import annotations

from ...dtypes import DataType
from ...kernels.spec import KernelSpec
from ...rounded import PRECISIONS
from ...rounded.log_sum import SQRT2_LEAD
from ..layout import Layout
from .codegen import C_TYPE, PRELUDE, decompose, storage_type
from .plan import BLOCK
from .reduce_c import decoded_key
from .reduce_plan import (
    DIGITS,
    FORMATS,
    NAN,
    NINF,
    NONNEG,
    PINF,
    SIGNED,
    SQUARE_DIGITS,
    SQUARE_INF,
    SQUARE_NAN,
    SQUARE_UNIT,
    WORDS,
    ReducePlan,
    mode,
)
from .rounded_binary_c import DOUBLE_DOUBLE

# ``sum_rounding.finish`` in C: the digits (base 2**32; d[digits..] zero) of one output as the format's bits, rounded
# once to nearest even. ``d`` holds FIN_DIGITS int64: the accumulator's digits and 3 more.
FINISH_HELPERS = r"""
__device__ __forceinline__ void carry(ll* d) {
    for (int k = 0; k < FIN_DIGITS - 1; ++k) {
        const ll c = d[k] >> 32;  // arithmetic: floor division by 2**32
        d[k] &= 0xFFFFFFFFll;
        d[k + 1] += c;
    }
}
__device__ __forceinline__ ll bits_at(const ll* d, int lo, int width) {
    const int k = lo >> 5, r = lo & 31;
    ll out = k < FIN_DIGITS ? d[k] >> r : 0;
    if (r && k + 1 < FIN_DIGITS) out |= (d[k + 1] & ((1ll << r) - 1)) << (32 - r);
    return out & ((1ll << width) - 1);
}
__device__ __forceinline__ bool any_below(const ll* d, int p) {
    const int k = p >> 5;
    for (int j = 0; j < k && j < FIN_DIGITS; ++j) if (d[j] != 0) return true;
    return k < FIN_DIGITS && (d[k] & ((1ll << (p & 31)) - 1)) != 0;
}
__device__ __forceinline__ ll round_bits(const ll* d, bool sticky, int precision, int base, bool* nonzero) {
    int top = -1;
    for (int k = FIN_DIGITS - 1; k >= 0; --k) {
        if (d[k] != 0) { top = 32 * k + 63 - __clzll(d[k]); break; }
    }
    *nonzero = top >= 0;
    if (top < 0) return 0;
    const int s = max(top - (precision - 1), base);
    ll q = bits_at(d, s, min(precision, 32));
    const ll half = s >= 1 ? bits_at(d, s - 1, 1) : 0;
    const bool rest = sticky || (s >= 1 && any_below(d, s - 1));
    if (half && (rest || (q & 1))) q += 1;
    return ((ll)(s - base) << (precision - 1)) + q;
}
"""
# ``squares.finish_root`` in C: the correctly rounded square root of the carried digits (units 2**-298) as the
# format's bits (``base``: its smallest ulp in units of 2**-149).
ROOT_HELPERS = r"""
__device__ __forceinline__ ll root_bits(ll* d, int precision, int base, bool* nonzero) {
    int top = -1;
    for (int k = FIN_DIGITS - 1; k >= 0; --k) {
        if (d[k] != 0) { top = 32 * k + 63 - __clzll(d[k]); break; }
    }
    *nonzero = top >= 0;
    if (top < 0) return 0;
    const int j = (top + 1 - 61) >> 1;  // W = floor(V / 4**j) has 61 or 62 bits (an arithmetic shift: floor)
    ll w;
    bool sticky = false;
    if (j >= 0) {
        w = bits_at(d, 2 * j, 32) | (bits_at(d, 2 * j + 32, 30) << 32);
        sticky = any_below(d, 2 * j);
    } else {
        w = (bits_at(d, 0, 32) | (bits_at(d, 32, 30) << 32)) << (-2 * j);
    }
    ll s = (ll)__dsqrt_rn((double)w);
    while (s * s > w) --s;
    while ((s + 1) * (s + 1) <= w) ++s;
    sticky = sticky || s * s != w;
    ll root[FIN_DIGITS];
    for (int k = 0; k < FIN_DIGITS; ++k) root[k] = 0;
    root[0] = s & 0xFFFFFFFFll;
    root[1] = s >> 32;
    return round_bits(root, sticky, precision, base - j, nonzero);  // S in units of 2**(j - 149)
}
"""


# ``log_sums.log_of_digits`` in C: ``addend + ln(V * 2**-unit)`` of carried digits ``V > 0`` rounded once to a
# format (``opendml.rounded.log_sum``'s steps: the same integers, the same double-double operations).
LOG_HELPERS = r"""
__device__ __forceinline__ int top_bit(const ll* d) {
    for (int k = FIN_DIGITS - 1; k >= 0; --k) if (d[k] != 0) return 32 * k + 63 - __clzll(d[k]);
    return -1;
}
__device__ __forceinline__ ll wide_at(const ll* d, int lo, int width) {  // bits [lo, lo + width), zeros below 0
    const int below = lo < 0 ? -lo : 0;
    lo += below;
    width -= below;
    if (width <= 0) return 0;
    const ll v = width <= 32 ? bits_at(d, lo, width) : (bits_at(d, lo, 32) | (bits_at(d, lo + 32, width - 32) << 32));
    return v << below;
}
__device__ double log_of_digits(const ll* d, int unit, double addend, int base, int lowest, double top) {
    const int t = top_bit(d);
    const int q = wide_at(d, t - 52, 53) <= """ + str(SQRT2_LEAD) + r"""ll ? t : t + 1;
    const bool negative = q != t;
    ll s[FIN_DIGITS];
    for (int k = 0; k < FIN_DIGITS; ++k) s[k] = negative ? -d[k] : d[k];
    s[q >> 5] += negative ? (1ll << (q & 31)) : -(1ll << (q & 31));
    carry(s);
    const int u = top_bit(s);
    double th = 0.0, tl = 0.0;
    if (u >= 0) {
        const int shift = u + 1 - 53, low_shift = shift - 53 > 0 ? shift - 53 : 0;
        const ll high = wide_at(s, shift, 53), rest = shift > 0 ? wide_at(s, low_shift, shift - low_shift) : 0;
        th = ldexp((double)high, shift - q);
        tl = ldexp((double)rest, low_shift - q);
        if (negative) { th = -th; tl = -tl; }
    }
    const opendml_dd l = dd_log_scaled((double)(q - unit), {th, tl});
    return dd_round(dd_add({addend, 0.0}, l), base, lowest, top);
}
"""


# A float64 rounded once to FLOAT16 bits, to nearest even (NaN: the canonical quiet NaN), as ``round_bits`` rounds:
# the ulp's position ``s`` (binades, units of 1) the larger of the value's and the subnormals' 2**-24.
HALF_OF_DOUBLE = r"""
__device__ __forceinline__ unsigned short half_of(const double v) {
    const ull b = (ull)__double_as_longlong(v), a = b & 0x7FFFFFFFFFFFFFFFull;
    const unsigned short sign = (unsigned short)((b >> 48) & 0x8000u);
    if (a > 0x7FF0000000000000ull) return 0x7E00u;
    const int e = (int)(a >> 52) - 1023;
    if (e < -25) return sign;  // below 2**-25: rounds to a zero
    const ull m = (a & 0xFFFFFFFFFFFFFull) | (1ull << 52);
    const int s = max(e - 10, -24), shift = s - e + 52;  // 42 .. 53
    ull q = m >> shift;
    const ull rest = m & ((1ull << shift) - 1ull), half = 1ull << (shift - 1);
    if (rest > half || (rest == half && (q & 1ull))) q += 1ull;
    const ull bits = ((ull)(s + 24) << 10) + q;
    return (unsigned short)(sign | (bits >= 0x7C00ull ? 0x7C00u : (unsigned int)bits));
}
"""


def finish_kernel(spec: KernelSpec, plan: ReducePlan, kept: Layout, output: DataType) -> str:
    """The finish pass: one thread an output, its words turned into its value, stored, and zeroed (MULTIPLY: a
    block an output, its tree's nodes folded)."""
    how = mode(spec)
    assert spec.accumulation is not None
    if how == "product":
        return _tree_finish(plan, kept, output)
    words = WORDS[how]
    place = decompose("o", kept.sizes, [kept.strides[1]], ["off"])
    order = ", const ull porder" if how == "logsumexp" else ""
    head = (f'\nextern "C" __global__ void __launch_bounds__({BLOCK}) opendml_kernel(const ull pacc{order}, '
            f"const ull pout) {{\n"
            f"    ull* acc = (ull*)pacc;\n"
            f"    for (unsigned int o = blockIdx.x * blockDim.x + threadIdx.x; o < {plan.outputs}u;"
            f" o += gridDim.x * blockDim.x) {{\n"
            f"        ull* a = acc + (ull)o * {words}u;\n        ull off = 0;\n        {place}\n")
    function = spec.accumulation.function
    if how in ("exact", "logsumexp") and function in ("LOG_SUM", "LOG_SUM_EXP"):
        x = spec.inputs[0]
        assert x is not None
        body = _finish_log(x if function == "LOG_SUM_EXP" else None, output)
        helpers = (f"#define FIN_DIGITS {DIGITS + 3}\n" + FINISH_HELPERS + DOUBLE_DOUBLE + LOG_HELPERS
                   + (HALF_OF_DOUBLE if output is DataType.FLOAT16 else ""))
    elif how == "exact":
        body = _finish_exact(function == "AVERAGE", plan.length, output)
        helpers = f"#define FIN_DIGITS {DIGITS + 3}\n" + FINISH_HELPERS
    elif how == "squares":
        body = _finish_squares(spec.accumulation.function == "L2", output)
        helpers = f"#define FIN_DIGITS {SQUARE_DIGITS + 3}\n" + FINISH_HELPERS + ROOT_HELPERS
    elif how == "wrap":
        body = f"        (({C_TYPE[output]}*)pout)[off] = ({C_TYPE[output]})a[0];\n        a[0] = 0;\n"
        helpers = ""
    else:
        body = _finish_order(spec.accumulation.function == "MAX", output)
        helpers = ""
    return PRELUDE + helpers + head + body + "    }\n}\n"


def _finish_exact(average: bool, count: int, output: DataType) -> str:
    precision, base, inf_bits, nan_bits, sign_bit = FORMATS[output]
    storage = storage_type(output)
    divide = ""
    if average:  # |V| * 2**64 // count, the remainder sticky: units of 2**-(149 + 64)
        divide = f"""
        for (int k = FIN_DIGITS - 1; k > 1; --k) d[k] = d[k - 2];
        d[0] = 0; d[1] = 0;
        ull r = 0;
        for (int k = FIN_DIGITS - 1; k >= 0; --k) {{
            const ull cur = (r << 32) | (ull)d[k];
            d[k] = (ll)(cur / {count}ull);
            r = cur - (ull)d[k] * {count}ull;
        }}
        sticky = r != 0;
        b += 64;"""
    return f"""        ll d[FIN_DIGITS];
        for (int k = 0; k < FIN_DIGITS; ++k) d[k] = k < {DIGITS} ? (ll)a[k] : 0;
        const bool nan = a[{NAN}] != 0, pinf = a[{PINF}] != 0, ninf = a[{NINF}] != 0;
        const bool nonneg = a[{NONNEG}] != 0 || {int(count == 0)};
        for (int k = 0; k < {DIGITS + 4}; ++k) a[k] = 0;
        ll bits;
        if (nan || (pinf && ninf)) {{
            bits = {nan_bits};
        }} else if (pinf || ninf) {{
            bits = ninf ? {inf_bits | sign_bit} : {inf_bits};
        }} else {{
            carry(d);
            bool negative = false;
            if (d[FIN_DIGITS - 1] < 0) {{
                negative = true;
                for (int k = 0; k < FIN_DIGITS; ++k) d[k] = -d[k];
                carry(d);
            }}
            bool sticky = false;
            int b = {base};{divide}
            bool nonzero;
            bits = round_bits(d, sticky, {precision}, b, &nonzero);
            if (bits >= {inf_bits}) bits = {inf_bits};
            if (negative || (!nonzero && !nonneg)) bits |= {sign_bit};
        }}
        (({storage}*)pout)[off] = ({storage})bits;
"""


def _finish_log(terms: DataType | None, output: DataType) -> str:
    """LOG_SUM (``ln S``) and LOG_SUM_EXP (``m + ln S``; ``terms``: the InputTensor's type, whose MAX words give
    ``m`` and NaN, zeroed here too): ``log_of_digits`` of the carried digits, rounded once; the specials as
    ``log_sums.log_of_sum`` and the reference give them."""
    grid = PRECISIONS[output.name]
    nan_bits = FORMATS[output][3]
    flags = ""
    if terms is not None:
        specials = """        ull* w = (ull*)porder + (ull)o * 2u;
        const bool unordered = w[1] != 0;
        const unsigned int key = (unsigned int)(w[0] - 1ull);
        w[0] = 0;
        w[1] = 0;
        const double m = (double)""" + decoded_key(terms) + """;
        double v;
        if (unordered) {
            v = __longlong_as_double(0x7FF8000000000000ll);
        } else if (fabs(m) == __longlong_as_double(0x7FF0000000000000ll)) {
            v = m;
        } else {
            carry(d);
            v = log_of_digits(d, 149, m, """
    else:
        flags = f"        const bool nan = a[{NAN}] != 0 || a[{NINF}] != 0, pinf = a[{PINF}] != 0;\n"
        specials = """        double v;
        carry(d);
        if (nan || (!pinf && d[FIN_DIGITS - 1] < 0)) {
            v = __longlong_as_double(0x7FF8000000000000ll);  // a NaN, -inf, or a negative sum without +inf
        } else if (pinf || top_bit(d) < 0) {  // +inf whatever the finite elements' sum, else an exact zero
            v = pinf ? __longlong_as_double(0x7FF0000000000000ll) : -__longlong_as_double(0x7FF0000000000000ll);
        } else {
            v = log_of_digits(d, 149, 0.0, """
    store = ("__float_as_uint(__double2float_rn(v))" if output is DataType.FLOAT32 else "half_of(v)")
    return f"""        ll d[FIN_DIGITS];
        for (int k = 0; k < FIN_DIGITS; ++k) d[k] = k < {DIGITS} ? (ll)a[k] : 0;
{flags}        for (int k = 0; k < {DIGITS + 4}; ++k) a[k] = 0;
{specials}{grid.base}, {grid.lowest}, {grid.top!r});
        }}
        (({storage_type(output)}*)pout)[off] = v != v ? {nan_bits} : {store};
"""


def _tree_finish(plan: ReducePlan, kept: Layout, output: DataType) -> str:
    """MULTIPLY's finish: a block folds each output's nodes as the tree does above the plan's cut (node ``i`` times
    node ``i + r`` of a level of ``n``, ``r`` the upper half's start), rounds the product once and zeroes the nodes."""
    floats = output in (DataType.FLOAT32, DataType.FLOAT16)
    value = "double" if floats else "ull"
    multiply = "__dmul_rn(a[i], a[i + r])" if floats else "a[i] * a[i + r]"
    place = decompose("o", kept.sizes, [kept.strides[1]], ["off"])
    if output is DataType.FLOAT32:
        store = "((unsigned int*)pout)[off] = v != v ? 0x7FC00000u : __float_as_uint(__double2float_rn(v));"
    elif output is DataType.FLOAT16:
        store = "((unsigned short*)pout)[off] = half_of(v);"
    else:
        store = f"(({C_TYPE[output]}*)pout)[off] = ({C_TYPE[output]})v;"
    return PRELUDE + (HALF_OF_DOUBLE if output is DataType.FLOAT16 else "") + f"""
extern "C" __global__ void __launch_bounds__({BLOCK}) opendml_kernel(const ull pacc, const ull pout) {{
    for (unsigned int o = blockIdx.x; o < {plan.outputs}u; o += gridDim.x) {{
        {value}* a = ({value}*)pacc + (ull)o * {plan.splits}u;
        for (unsigned int n = {plan.splits}u; n > 1u;) {{
            const unsigned int h = n / 2u, r = n - h;
            for (unsigned int i = threadIdx.x; i < h; i += blockDim.x) a[i] = {multiply};
            __syncthreads();
            n = r;
        }}
        if (threadIdx.x == 0) {{
            ull off = 0;
            {place}
            const {value} v = a[0];
            {store}
        }}
        __syncthreads();
        for (unsigned int i = threadIdx.x; i < {plan.splits}u; i += blockDim.x) a[i] = 0;
    }}
}}
"""


def _finish_squares(root: bool, output: DataType) -> str:
    """SUM_SQUARE: the digits rounded once (a sum of squares is never negative, its zero +0.0); L2: their
    correctly rounded square root."""
    precision, base, inf_bits, nan_bits, _ = FORMATS[output]
    storage = storage_type(output)
    rounded = (f"root_bits(d, {precision}, {base}, &nonzero)" if root
               else f"round_bits(d, false, {precision}, {base + SQUARE_UNIT - 149}, &nonzero)")
    return f"""        ll d[FIN_DIGITS];
        for (int k = 0; k < FIN_DIGITS; ++k) d[k] = k < {SQUARE_DIGITS} ? (ll)a[k] : 0;
        const bool nan = a[{SQUARE_NAN}] != 0, inf = a[{SQUARE_INF}] != 0;
        for (int k = 0; k < {SQUARE_DIGITS + 2}; ++k) a[k] = 0;
        ll bits;
        if (nan) {{
            bits = {nan_bits};
        }} else if (inf) {{
            bits = {inf_bits};
        }} else {{
            carry(d);
            bool nonzero;
            bits = {rounded};
            if (bits >= {inf_bits}) bits = {inf_bits};
        }}
        (({storage}*)pout)[off] = ({storage})bits;
"""


def _finish_order(largest: bool, output: DataType) -> str:
    key = "a[0] - 1ull" if largest else "(1ull << 32) - a[0]"
    if output is DataType.FLOAT32:
        value = ("(key >> 31) ? (key & 0x7FFFFFFFu) : ~key", "unsigned int", "0x7FC00000u")
    elif output is DataType.FLOAT16:
        value = ("(key >> 15) ? (key & 0x7FFFu) : (~key & 0xFFFFu)", "unsigned short", "0x7E00u")
    elif output in SIGNED:
        value = ("(int)(key ^ 0x80000000u)", C_TYPE[output], "")
    else:
        value = ("key", C_TYPE[output], "")
    expression, storage, nan = value
    nan_case = f"a[1] ? {nan} : " if nan else ""
    return f"""        const unsigned int key = (unsigned int)({key});
        (({storage}*)pout)[off] = ({storage})({nan_case}({expression}));
        a[0] = 0;
        a[1] = 0;
"""
