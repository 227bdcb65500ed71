"""REDUCE's value functions on CUDA: the CUDA C of the scan, and why its words give the same bits whatever
the launch.

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

The plan (the mode, the pieces, the grids) is made by ``reduce_plan``; the finish pass's C by ``reduce_finish_c``.
"""

from __future__ import annotations

from ...dtypes import DataType
from ...kernels.spec import KernelSpec
from ..layout import Layout
from .codegen import C_TYPE, PRELUDE, decompose
from .plan import BLOCK
from .reduce_plan import NAN, NINF, NONNEG, PINF, SIGNED, SPAN, THREAD_CHUNK, WORDS, ReducePlan, mode

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
