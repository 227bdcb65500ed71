"""REDUCE's value functions on CUDA: the plan and the CUDA C of a scan and a finish pass.

Every output owns ``words`` 64-bit words of scratch in global memory, zero between launches. The scan adds each
piece of the reduction into them by atomic operations that commute (integer additions, maxima), so the words
after the scan are the same whatever the grid, the block split, the order of the pieces or of the threads;
the finish pass, one thread an output, turns an output's words into its value, writes it and puts the words back
to zero for the next launch. So a result is the same bits whatever the launch shape, and the CPU's bits where
the words mean what the CPU's accumulator means.

The exact sums (SUM, AVERAGE, L1 of FLOAT32 and FLOAT16) keep the CPU's accumulator
(``cpu_kernels/sum_accumulator.py``): ``DIGITS`` signed digits of base 2**32 in units of 2**-149, then the NaN, +inf,
-inf and "an element other than -0.0" words (counts here: only whether they are zero is read). A thread sums up to
``THREAD_CHUNK`` of its elements in float64, which is exact where their exponent fields span at most ``SPAN`` binades
(``sum_accumulator``'s docstring with blocks of ``THREAD_CHUNK``: 24 + SPAN + 8 <= 53); the chunk's float64 sum then
enters the digits once, as three atomic additions of at most 2**34 each. A chunk that spans more, or holds a NaN or an
infinity, is read again and summed by exponent bins of 16 binades (each bin's float64 sum of 256 elements below 2**40 of
its unit is exact), each bin entering the digits. FLOAT16 chunks are always exact (any 8192 FLOAT16 values sum exactly
in float64); one holding a NaN or an infinity is read again, its finite elements summed apart. No digit is carried
before the finish pass: a chunk adds at most 16 * 2**34 to a digit, so 2**25 chunks of an output fit in an int64; an
output's chunks are its elements / THREAD_CHUNK and one more a thread's piece, which the plans keep far below that for
any tensor of at most 2**32 elements (``check_plan`` refuses the rest). The finish pass is ``sum_rounding.finish`` in C:
carry, sign and magnitude, AVERAGE's exact quotient, one rounding to nearest even in the output format.

Integer SUM (INT32, UINT32) is one word, the wrapped sum: additions modulo 2**64 keep every low bit. MAX and
MIN (floats and integers) map each element to an unsigned key monotone in the order (floats: -0.0 below +0.0),
kept as one word by ``atomicMax`` (MIN by the key's complement, so that zero is the identity of both), and a NaN
word: NaN is the canonical quiet NaN wherever an element is NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ...dtypes import DataType
from ...errors import KernelUnsupportedError, kernel_unsupported
from ...kernels.spec import KernelSpec
from ...tensor import TensorDesc
from ..layout import Layout, split_axes
from .codegen import C_TYPE, PRELUDE, decompose
from .plan import BLOCK

DIGITS = 11  # the CPU accumulator's digits (cpu_kernels/sum_accumulator.py)
NAN, PINF, NINF, NONNEG = DIGITS, DIGITS + 1, DIGITS + 2, DIGITS + 3
THREAD_CHUNK = 256  # elements a thread sums in float64 before they enter the digits
SPAN = 29 - 8  # binades a chunk of THREAD_CHUNK FLOAT32 elements may span and still sum exactly
# Blocks per multiprocessor a row scan aims for, the fewest elements a row's piece holds, and the threads per
# multiprocessor a column scan aims for (rows split into pieces where the outputs are fewer).
ROW_BLOCKS_PER_SM = 8
ROW_PIECE = BLOCK * 64
COLUMN_THREADS_PER_SM = 1024
COLUMN_PIECE = 64

EXACT_FUNCTIONS = frozenset({"SUM", "AVERAGE", "L1"})
ORDER_FUNCTIONS = frozenset({"MAX", "MIN"})
FLOATS = frozenset({DataType.FLOAT32, DataType.FLOAT16})
WRAP_TYPES = frozenset({DataType.INT32, DataType.UINT32})
ORDER_TYPES = FLOATS | {DataType.INT32, DataType.INT16, DataType.INT8, DataType.UINT32, DataType.UINT16,
                        DataType.UINT8}
SIGNED = frozenset({DataType.INT32, DataType.INT16, DataType.INT8})
# Output format of the exact sums: precision, base (in units of 2**-149), infinity's, NaN's and the sign's bits.
FORMATS = {DataType.FLOAT32: (24, 0, 0x7F800000, 0x7FC00000, 0x80000000),
           DataType.FLOAT16: (11, 125, 0x7C00, 0x7E00, 0x8000)}
WORDS = {"exact": DIGITS + 4, "wrap": 1, "order": 2}


def mode(spec: KernelSpec) -> str:
    """How ``spec``'s accumulation runs: "exact" (float sums), "wrap" (integer SUM) or "order" (MAX, MIN); a
    function or type not lowered is refused by name."""
    accumulation = spec.accumulation
    assert accumulation is not None
    function, x = accumulation.function, spec.inputs[0]
    if len(spec.inputs) != 1 or x is None or spec.extra or repr(spec.element) != f"Load(0, {x.name})":
        raise kernel_unsupported(spec.operator, "Accumulation element", "must be the input's own elements on "
                                 "backend 'cuda' (a computed prologue is not lowered for REDUCE's value functions)",
                                 repr(spec.element))
    if function in EXACT_FUNCTIONS and x in FLOATS:
        return "exact"
    if function == "SUM" and x in WRAP_TYPES:
        return "wrap"
    if function in ORDER_FUNCTIONS and x in ORDER_TYPES:
        return "order"
    raise unsupported_function(spec.operator, function, x)


def unsupported_function(operator: str, function: str, x: DataType) -> KernelUnsupportedError:
    return kernel_unsupported(operator, "Function", "must be SUM, AVERAGE or L1 of FLOAT32 or FLOAT16, SUM of "
                              "INT32 or UINT32, MAX or MIN, or ARGMIN or ARGMAX on backend 'cuda'",
                              f"{function} of {x.name}")


def layouts(spec: KernelSpec, x: TensorDesc, output: TensorDesc) -> tuple[Layout, Layout]:
    """The kept layout (strides of the InputTensor, then the OutputTensor) and the reduced one (the
    InputTensor's)."""
    assert spec.accumulation is not None
    return split_axes(x.sizes, x.effective_strides, output.effective_strides, spec.accumulation.axes)


@dataclass(frozen=True)
class ReducePlan:
    """How a REDUCE scan runs: ``rows`` (a block per piece of an output, its threads striding along the
    reduction: the input's fastest-moving dimension is reduced) or ``columns`` (a thread per piece, adjacent
    threads on adjacent outputs: it is kept); each output's reduction cut into ``splits`` pieces of ``chunk``
    elements."""

    family: str
    splits: int
    chunk: int
    outputs: int
    length: int

    @property
    def items(self) -> int:
        return self.outputs * self.splits


def plan_reduce(x: TensorDesc, axes: Sequence[int], kept: Layout, reduced: Layout, sm_count: int) -> ReducePlan:
    """The plan by shape: rows or columns as the input's fastest-moving dimension is reduced or kept, pieces
    where the outputs are too few to fill the GPU."""
    outputs, length = math.prod(kept.sizes), math.prod(reduced.sizes)
    moving = [(s, k) for k, (n, s) in enumerate(zip(x.sizes, x.effective_strides)) if n > 1 and s > 0]
    rows = not moving or min(moving)[1] in axes
    if rows:
        blocks = sm_count * ROW_BLOCKS_PER_SM
        splits = max(1, min(int(blocks / outputs + 0.5), math.ceil(length / ROW_PIECE)))
    else:
        threads = sm_count * COLUMN_THREADS_PER_SM
        splits = 1 if outputs * 2 >= threads else max(1, min(math.ceil(threads / outputs),
                                                              math.ceil(length / COLUMN_PIECE)))
    chunk = max(1, math.ceil(length / splits))
    return ReducePlan("rows" if rows else "columns", math.ceil(length / chunk) if length else 1, chunk, outputs,
                      length)


MOST_CHUNKS = 1 << 25  # chunks an output's digits take without a carry (the module's docstring)


def check_plan(operator: str, plan: ReducePlan) -> None:
    """Refuse, by name, a reduction whose digits could overflow before the finish pass (an output's chunks: its
    elements / THREAD_CHUNK, and one more a thread's piece) or whose indices would wrap (32-bit counters)."""
    chunks = plan.length // THREAD_CHUNK + plan.splits * (BLOCK if plan.family == "rows" else 1)
    if chunks > MOST_CHUNKS or plan.length + BLOCK >= 1 << 32:
        raise kernel_unsupported(operator, "InputTensor.Sizes", f"must give at most {MOST_CHUNKS} chunks of "
                                 f"{THREAD_CHUNK} elements an output and fewer than 2**32 - {BLOCK} reduced elements "
                                 "on backend 'cuda'", f"{plan.length} elements in {plan.splits} pieces")


def grid(plan: ReducePlan, sm_count: int) -> int:
    """The scan's blocks (grid-stride loops: any count gives the same words)."""
    if plan.family == "rows":
        return max(1, min(plan.items, sm_count * 32))
    return max(1, min(math.ceil(plan.items / BLOCK), sm_count * 32))


def finish_grid(plan: ReducePlan, sm_count: int) -> int:
    return max(1, min(math.ceil(plan.outputs / BLOCK), sm_count * 32))


# Exact helpers: a float64 multiple of 2**-149 added to the digits (``sum_accumulator.add_double``), atomically.
ADD_DOUBLE = r"""
__device__ __forceinline__ void add_double(ull* acc, double s) {
    const ll b = __double_as_longlong(s);
    const int e = (int)((b >> 52) & 0x7FF);
    ull m = ((ull)b & 0xFFFFFFFFFFFFFull) | (1ull << 52);
    int sh = e - 1075 + 149;
    if (sh < 0) { m >>= -sh; sh = 0; }
    const int k = sh >> 5, r = sh & 31;
    const ull t0 = (m & 0xFFFFFFFFull) << r, t1 = (m >> 32) << r;
    ull d0 = t0 & 0xFFFFFFFFull, d1 = (t0 >> 32) + (t1 & 0xFFFFFFFFull), d2 = t1 >> 32;
    if (b < 0) { d0 = 0ull - d0; d1 = 0ull - d1; d2 = 0ull - d2; }
    if (d0) atomicAdd(acc + k, d0);
    if (d1) atomicAdd(acc + k + 1, d1);
    if (d2) atomicAdd(acc + k + 2, d2);
}
"""


def _at(reduced: Layout) -> str:
    """``at(j)``: the InputTensor's offset of the reduction's ``j``-th element (row-major over the axes)."""
    return ("__device__ __forceinline__ ull at(const unsigned int j) {\n    ull off = 0;\n    "
            + decompose("j", reduced.sizes, [reduced.strides[0]], ["off"]) + "\n    return off;\n}\n")


def _exact_scan(x: DataType, absolute: bool) -> str:
    """``scan``: the elements ``j, j + step, ...`` below ``end`` added to the words ``acc``."""
    if x is DataType.FLOAT32:
        mask = " & 0x7FFFFFFFu" if absolute else ""
        return f"""
__device__ __noinline__ void slow(const unsigned int* x, unsigned int j, const unsigned int end,
                                  const unsigned int step, ull* acc) {{
    double bins[16];
    for (int k = 0; k < 16; ++k) bins[k] = 0.0;
    for (; j < end; j += step) {{
        const unsigned int b = x[at(j)]{mask};
        const unsigned int e = (b >> 23) & 255u;
        if (e == 255u) {{
            atomicAdd(acc + ((b & 0x7FFFFFu) ? {NAN} : ((b >> 31) ? {NINF} : {PINF})), 1ull);
            continue;
        }}
        bins[e >> 4] += (double)__uint_as_float(b);
    }}
    for (int k = 0; k < 16; ++k) if (bins[k] != 0.0) add_double(acc, bins[k]);
}}
__device__ __forceinline__ void scan(const unsigned int* x, unsigned int j, const unsigned int end,
                                     const unsigned int step, ull* acc) {{
    while (j < end) {{
        const unsigned int first = j;
        double s = 0.0;
        unsigned int hi = 0u, lo = 0xFFFFFFFFu, other = 0u;
        for (unsigned int n = 0; n < {THREAD_CHUNK}u && j < end; ++n, j += step) {{
            const unsigned int b = x[at(j)]{mask};
            s += (double)__uint_as_float(b);
            const unsigned int k = b << 1;
            hi = max(hi, k);
            lo = min(lo, k - 1u);
            other |= b ^ 0x80000000u;
        }}
        if (other) atomicAdd(acc + {NONNEG}, 1ull);
        if (hi == 0u) continue;  // zeros only
        const unsigned int emax = hi >> 24, emin = max((lo + 1u) >> 24, 1u);
        if (emax != 255u && emax - emin <= {SPAN}u) {{
            if (s != 0.0) add_double(acc, s);
        }} else {{
            slow(x, first, j, step, acc);
        }}
    }}
}}
"""
    mask = " & 0x7FFFu" if absolute else ""
    return f"""
__device__ __noinline__ void slow(const unsigned short* x, unsigned int j, const unsigned int end,
                                  const unsigned int step, ull* acc) {{
    double s = 0.0;
    for (; j < end; j += step) {{
        const unsigned int b = x[at(j)]{mask};
        if ((b & 0x7FFFu) >= 0x7C00u) {{
            atomicAdd(acc + ((b & 0x7FFFu) > 0x7C00u ? {NAN} : ((b >> 15) ? {NINF} : {PINF})), 1ull);
            continue;
        }}
        s += (double)h2f((unsigned short)b);
    }}
    if (s != 0.0) add_double(acc, s);
}}
__device__ __forceinline__ void scan(const unsigned short* x, unsigned int j, const unsigned int end,
                                     const unsigned int step, ull* acc) {{
    while (j < end) {{
        const unsigned int first = j;
        double s = 0.0;
        unsigned int hi = 0u, other = 0u;
        for (unsigned int n = 0; n < {THREAD_CHUNK}u && j < end; ++n, j += step) {{
            const unsigned int b = x[at(j)]{mask};
            s += (double)h2f((unsigned short)b);
            hi = max(hi, b & 0x7FFFu);
            other |= b ^ 0x8000u;
        }}
        if (other) atomicAdd(acc + {NONNEG}, 1ull);
        if (hi >= 0x7C00u) slow(x, first, j, step, acc);
        else if (s != 0.0) add_double(acc, s);
    }}
}}
"""


def _wrap_scan(x: DataType) -> str:
    return f"""
__device__ __forceinline__ void scan(const {C_TYPE[x]}* x, unsigned int j, const unsigned int end,
                                     const unsigned int step, ull* acc) {{
    ull t = 0;
    for (; j < end; j += step) t += (ull)(ll)x[at(j)];
    if (t) atomicAdd(acc, t);
}}
"""


def _key(x: DataType) -> str:
    """C of the unsigned key of the element ``v`` (raw storage), monotone in REDUCE's order; ``nan`` set for NaN."""
    if x is DataType.FLOAT32:
        return ("const unsigned int b = v;\n"
                "        if ((b & 0x7FFFFFFFu) > 0x7F800000u) { nan = 1; continue; }\n"
                "        const ull key = (b >> 31) ? (ull)(~b) : (ull)(b | 0x80000000u);")
    if x is DataType.FLOAT16:
        return ("const unsigned int b = v;\n"
                "        if ((b & 0x7FFFu) > 0x7C00u) { nan = 1; continue; }\n"
                "        const ull key = (b >> 15) ? (ull)(~b & 0xFFFFu) : (ull)(b | 0x8000u);")
    if x in SIGNED:
        return "const ull key = (ull)((unsigned int)(int)v ^ 0x80000000u);"
    return "const ull key = (ull)v;"


def _order_scan(x: DataType, largest: bool) -> str:
    word = "key + 1ull" if largest else "(1ull << 32) - key"  # zero: no element yet
    return f"""
__device__ __forceinline__ void scan(const {_element_type(x)}* x, unsigned int j, const unsigned int end,
                                     const unsigned int step, ull* acc) {{
    ull best = 0;
    unsigned int nan = 0;
    for (; j < end; j += step) {{
        const {_element_type(x)} v = x[at(j)];
        {_key(x)}
        best = max(best, {word});
    }}
    if (best) atomicMax(acc, best);
    if (nan) atomicMax(acc + 1, 1ull);
}}
"""


def _scan_functions(spec: KernelSpec, how: str, x: DataType) -> str:
    assert spec.accumulation is not None
    function = spec.accumulation.function
    if how == "exact":
        return ADD_DOUBLE + _exact_scan(x, function == "L1")
    if how == "wrap":
        return _wrap_scan(x)
    return _order_scan(x, function == "MAX")


def _element_type(x: DataType) -> str:
    """The C type the scan reads an element as (FLOAT32 by its bits)."""
    return "unsigned int" if x is DataType.FLOAT32 else C_TYPE[x]


def scan_kernel(spec: KernelSpec, plan: ReducePlan, kept: Layout, reduced: Layout) -> str:
    """The scan: each (output, piece) item's elements added into the output's words."""
    how = mode(spec)
    x = spec.inputs[0]
    assert x is not None
    words = WORDS[how]
    element = _element_type(x)
    base = decompose("o", kept.sizes, [kept.strides[0]], ["base"])
    if plan.family == "rows":
        body = f"""
    __shared__ ull shared_acc[{words}];
    for (unsigned int item = blockIdx.x; item < {plan.items}u; item += gridDim.x) {{
        const unsigned int o = item / {plan.splits}u, piece = item % {plan.splits}u;
        if (threadIdx.x < {words}u) shared_acc[threadIdx.x] = 0;
        __syncthreads();
        ull base = 0;
        {base}
        const unsigned int j0 = piece * {plan.chunk}u, j1 = min(j0 + {plan.chunk}u, {plan.length}u);
        scan(x + base, j0 + threadIdx.x, j1, {BLOCK}u, shared_acc);
        __syncthreads();
        if (threadIdx.x < {words}u && shared_acc[threadIdx.x]) {_merge(how)}(acc + (ull)o * {words}u + threadIdx.x,
                                                                      shared_acc[threadIdx.x]);
        __syncthreads();
    }}"""
    else:
        body = f"""
    for (unsigned int item = blockIdx.x * blockDim.x + threadIdx.x; item < {plan.items}u;
         item += gridDim.x * blockDim.x) {{
        const unsigned int o = item % {plan.outputs}u, piece = item / {plan.outputs}u;
        ull base = 0;
        {base}
        const unsigned int j0 = piece * {plan.chunk}u, j1 = min(j0 + {plan.chunk}u, {plan.length}u);
        scan(x + base, j0, j1, 1u, acc + (ull)o * {words}u);
    }}"""
    return (PRELUDE + _at(reduced) + _scan_functions(spec, how, x)
            + f'\nextern "C" __global__ void __launch_bounds__({BLOCK}) opendml_kernel(const ull px, '
            f"const ull pacc) {{\n"
            f"    const {element}* x = (const {element}*)px;\n    ull* acc = (ull*)pacc;{body}\n}}\n")


def _merge(how: str) -> str:
    """The atomic operation that merges a word of two partial results."""
    return "atomicMax" if how == "order" else "atomicAdd"


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
