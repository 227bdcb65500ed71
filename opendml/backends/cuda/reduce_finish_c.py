"""REDUCE's value functions on CUDA: the CUDA C of the finish pass, one thread an output, which turns the output's
words into its value (the exact sums: ``sum_rounding.finish`` of the CPU in C, one rounding to nearest even), stores
it and puts the words back to zero for the next launch.

The words and the scan that fills them are rendered by ``reduce_c``; the plan is made by ``reduce_plan``.
"""

from __future__ import annotations

from ...dtypes import DataType
from ...kernels.spec import KernelSpec
from ..layout import Layout
from .codegen import C_TYPE, PRELUDE, decompose
from .plan import BLOCK
from .reduce_plan import DIGITS, FORMATS, NAN, NINF, NONNEG, PINF, SIGNED, WORDS, ReducePlan, mode

# ``sum_rounding.finish`` in C: the digits (base 2**32, units 2**-149; d[DIGITS..] zero) of one output as the format's
# bits, rounded once to nearest even. ``d`` holds DIGITS + 3 int64.
FINISH_HELPERS = r"""
#define FIN_DIGITS 14
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


def finish_kernel(spec: KernelSpec, plan: ReducePlan, kept: Layout, output: DataType) -> str:
    """The finish pass: one thread an output, its words turned into its value, stored, and zeroed."""
    how = mode(spec)
    assert spec.accumulation is not None
    words = WORDS[how]
    place = decompose("o", kept.sizes, [kept.strides[1]], ["off"])
    head = (f'\nextern "C" __global__ void __launch_bounds__({BLOCK}) opendml_kernel(const ull pacc, '
            f"const ull pout) {{\n"
            f"    ull* acc = (ull*)pacc;\n"
            f"    for (unsigned int o = blockIdx.x * blockDim.x + threadIdx.x; o < {plan.outputs}u;"
            f" o += gridDim.x * blockDim.x) {{\n"
            f"        ull* a = acc + (ull)o * {words}u;\n        ull off = 0;\n        {place}\n")
    if how == "exact":
        body = _finish_exact(spec.accumulation.function == "AVERAGE", plan.length, output)
        helpers = FINISH_HELPERS
    elif how == "wrap":
        body = f"        (({C_TYPE[output]}*)pout)[off] = ({C_TYPE[output]})a[0];\n        a[0] = 0;\n"
        helpers = ""
    else:
        body = _finish_order(spec.accumulation.function == "MAX", output)
        helpers = ""
    return PRELUDE + helpers + head + body + "    }\n}\n"


def _finish_exact(average: bool, count: int, output: DataType) -> str:
    precision, base, inf_bits, nan_bits, sign_bit = FORMATS[output]
    storage = "unsigned int" if output is DataType.FLOAT32 else "unsigned short"
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
