"""REDUCE's value functions on CUDA: the CUDA C of the scan, and why its words give the same bits whatever
the launch.

Every output owns ``words`` 64-bit words of scratch in global memory, zero between launches. The scan adds each
piece of the reduction into them by atomic operations that commute (integer additions, maxima), so the words
after the scan are the same whatever the grid, the block split, the order of the pieces or of the threads;
the finish pass, one thread an output, turns an output's words into its value, writes it and puts the words back
to zero for the next launch. So a result is the same bits whatever the launch shape, and the CPU's bits where
the words mean what the CPU's accumulator means.

The exact sums (SUM, AVERAGE, L1 of FLOAT32 and FLOAT16) keep the CPU's accumulator
(``cpu_kernels/sum_accumulator.py``): ``DIGITS`` signed digits of base 2**32 in units of 2**-149, then the NaN,
+inf, -inf and "an element other than -0.0" words (counts here: only whether they are zero is read). A thread sums
up to ``THREAD_CHUNK`` of its elements in float64 (loaded ``THREAD_LOADS`` at a time, all in flight, then added),
which is exact where their exponent fields span at most ``SPAN`` binades (``sum_accumulator``'s docstring with
blocks of ``THREAD_CHUNK``: 24 + SPAN + 8 <= 53); the chunk's float64 sum then enters the digits once, as three
atomic additions of at most 2**34 each. A chunk that spans more, or holds a NaN or an infinity, is read again and
summed by exponent bins of 16 binades (each bin's float64 sum of 256 elements below 2**40 of its unit is exact),
each bin entering the digits. FLOAT16 chunks are always exact (any 8192 FLOAT16 values sum exactly in float64); one
holding a NaN or an infinity is read again, its finite elements summed apart. No digit is carried before the finish
pass: a chunk adds at most 16 * 2**34 to a digit, so 2**25 chunks of an output fit in an int64; an output's chunks
are its elements / THREAD_CHUNK and one more a thread's piece, which the plans keep far below that for any tensor of
at most 2**32 elements (``check_plan`` refuses the rest). The finish pass is ``sum_rounding.finish`` in C: carry,
sign and magnitude, AVERAGE's exact quotient, one rounding to nearest even in the output format.

The sums of squares (SUM_SQUARE, L2 of FLOAT32 and FLOAT16, a FLOAT16 through its exact FLOAT32 value) keep the
CPU's accumulator of squares (``cpu_kernels/squares.py``): ``SQUARE_DIGITS`` digits in units of 2**-298 (a FLOAT32's
square is exact in float64, a multiple of 2**-298), then the NaN and infinity words. A float64 sum of squares is
rarely exact, so a thread reads a chunk of ``SQUARE_CHUNK`` = 2**b elements into registers, takes their largest
exponent field ``emax`` and splits each square ``v`` against ``sigma = 2**(2 emax - 252 + b - 1)``: ``q = (sigma + v)
- sigma``, ``r = v - q`` (squares.py proves both float64 sums exact in any order where the chunk spans at most
``59 / 2 - b`` binades: ``SQUARE_SPAN`` = 24 for b = 5). Chunks of one scale share a boundary: a thread's chunk
joins its group (at most ``SQUARE_GROUP`` = 1024 elements, split against the boundary of the group's largest field,
b = 10: a span of ``SQUARE_GROUP_SPAN`` = 19 binades below it, the CPU's blocks) where that boundary bounds it and the
span allows, and the group's two sums enter the digits once, when a chunk does not join or the thread ends; a chunk
that fits no group is split against its own boundary and its sums enter at once. A chunk that spans more, or holds a
NaN or an infinity, is read again and split by exponent bins of 8 fields (squares.py's ``_slow_block``, the same
boundaries). The operations are the IEEE ones written (``__dmul_rn``, ``__dadd_rn``, ``__dsub_rn``: never
contracted into a fused multiply-add). No digit is carried before the finish pass: an addition adds below 2**33 to
a digit, and an output's additions are at most two an element (a chunk's two sums, or its bins), so outputs of
fewer than ``MOST_SQUARES`` = 2**29 elements fit (``check_plan`` refuses the rest). The finish pass rounds SUM_SQUARE
as the sums are rounded (its base 149 binades lower), and takes L2's correctly rounded root as
``squares.finish_root`` does (the integer square root of the sum's top 62 bits and a sticky bit, rounded once).

MULTIPLY keeps the CPU's fixed order: the pairwise tree over each output's elements in their row-major order
(``reduce_plan.tree_sizes``: node ``i`` of a level the product of nodes ``i`` and ``i + width`` of the level below,
the middle node of an odd level carried up), in float64 for floats, modulo 2**64 for INT32 and UINT32. The plan cuts
the tree at a level (``plan.levels`` above the elements, ``plan.splits`` nodes an output); the scan gives each node
of that level a thread, which walks its subtree depth first (a stack a level) and stores the node's product in
its word of scratch; the finish pass folds each output's nodes level by level, as the tree does above the cut, in
one block, rounds the product once to the output type and zeroes the words. Each product is one IEEE
multiplication of the same two operands as on the CPU, so the result is the CPU's bits whatever the cut; NaN is
the canonical quiet NaN (the CPU's NaN has the payload the host's multiplications give it).

Integer SUM (INT32, UINT32) is one word, the wrapped sum: additions modulo 2**64 keep every low bit. MAX and
MIN (floats and integers) map each element to an unsigned key monotone in the order (floats: -0.0 below +0.0),
kept as one word by ``atomicMax`` (MIN by the key's complement, so that zero is the identity of both), and a NaN
word: NaN is the canonical quiet NaN wherever an element is NaN.

The plan (the mode, the pieces, the grids) is made by ``reduce_plan``; the finish pass's C by ``reduce_finish_c``.
"""

from __future__ import annotations

from dataclasses import replace

from ... import expr as ex
from ...dtypes import DataType
from ...kernels.spec import KernelSpec
from ..layout import Layout
from . import rounded_c
from .codegen import C_TYPE, PRELUDE, decompose, storage_type
from .plan import BLOCK
from .reduce_plan import (
    NAN,
    NINF,
    NONNEG,
    PINF,
    SIGNED,
    SPAN,
    SQUARE_CHUNK,
    SQUARE_GROUP,
    SQUARE_GROUP_SPAN,
    SQUARE_INF,
    SQUARE_NAN,
    SQUARE_SPAN,
    SQUARE_UNIT,
    THREAD_CHUNK,
    WORDS,
    ReducePlan,
    mode,
    tree_sizes,
    warp_chunk,
)
from .reduce_plan import (
    THREAD_LOADS as LOADS,
)

# LOG_SUM_EXP's terms: EXP correctly rounded to FLOAT32 (``rounded_c``'s device function of this node).
_EXP_NODE = ex.Function(ex.Load(0, DataType.FLOAT32), "EXP", DataType.FLOAT32)
_EXP = rounded_c.function_name(_EXP_NODE)


def _add_double(unit: int) -> str:
    """``add_double``: a float64 multiple of 2**-unit added to the digits (``sum_accumulator.add_double``),
    atomically."""
    return r"""
__device__ __forceinline__ void add_double(ull* acc, double s) {
    const ll b = __double_as_longlong(s);
    const int e = (int)((b >> 52) & 0x7FF);
    ull m = ((ull)b & 0xFFFFFFFFFFFFFull) | (1ull << 52);
    int sh = e - 1075 + """ + str(unit) + r""";
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


def _element(x: DataType, absolute: bool, terms: bool) -> str:
    """``element(x, i, m)``: the bits the exact scan adds for the ``i``-th element: its own (L1: its magnitude's),
    or for LOG_SUM_EXP (``terms``) the FLOAT32 bits of ``EXP(x_i - m)``, the difference one FLOAT32 subtraction and
    EXP correctly rounded (``rounded_c``), whatever the input type."""
    storage = storage_type(x)
    if terms:
        value = "__uint_as_float(v)" if x is DataType.FLOAT32 else "h2f(v)"
        return f"""
__device__ __forceinline__ unsigned int element(const {storage}* x, const unsigned int i, const float m) {{
    const {storage} v = x[at(i)];
    return __float_as_uint({_EXP}(add_rn({value}, -m)));
}}
"""
    mask = (" & 0x7FFFFFFFu" if x is DataType.FLOAT32 else " & 0x7FFFu") if absolute else ""
    return f"""
__device__ __forceinline__ unsigned int element(const {storage}* x, const unsigned int i, const float) {{
    return (unsigned int)x[at(i)]{mask};
}}
"""


def _exact_scan(bits: DataType, x: DataType, warp: int = 0) -> str:
    """``scan``: ``element``'s bits (of type ``bits``) of ``j, j + step, ...`` below ``end`` added to the words
    ``acc``; ``x`` the InputTensor's type; ``warp``: the rows family's scan, a warp's chunks of ``warp`` elements a
    lane together (``_warp_exact_scan``), else (0) each lane's chunks alone (``_lane_exact_scan``). Both read a chunk
    that does not sum exactly again with ``slow``."""
    return _slow_scan(bits, x) + (_warp_exact_scan(bits, x, warp) if warp else _lane_exact_scan(bits, x))


def _slow_scan(bits: DataType, x: DataType) -> str:
    """``slow``: a chunk read again, FLOAT32 by exponent bins of 16 binades, FLOAT16 its finite elements apart, the
    specials counted."""
    storage = storage_type(x)
    if bits is DataType.FLOAT32:
        return f"""
__device__ __noinline__ void slow(const {storage}* x, unsigned int j, const unsigned int end,
                                  const unsigned int step, ull* acc, const float m) {{
    double bins[16];
    for (int k = 0; k < 16; ++k) bins[k] = 0.0;
    for (; j < end; j += step) {{
        const unsigned int b = element(x, j, m);
        const unsigned int e = (b >> 23) & 255u;
        if (e == 255u) {{
            atomicAdd(acc + ((b & 0x7FFFFFu) ? {NAN} : ((b >> 31) ? {NINF} : {PINF})), 1ull);
            continue;
        }}
        bins[e >> 4] += (double)__uint_as_float(b);
    }}
    for (int k = 0; k < 16; ++k) if (bins[k] != 0.0) add_double(acc, bins[k]);
}}
"""
    return f"""
__device__ __noinline__ void slow(const {storage}* x, unsigned int j, const unsigned int end,
                                  const unsigned int step, ull* acc, const float m) {{
    double s = 0.0;
    for (; j < end; j += step) {{
        const unsigned int b = element(x, j, m);
        if ((b & 0x7FFFu) >= 0x7C00u) {{
            atomicAdd(acc + ((b & 0x7FFFu) > 0x7C00u ? {NAN} : ((b >> 15) ? {NINF} : {PINF})), 1ull);
            continue;
        }}
        s += (double)h2f((unsigned short)b);
    }}
    if (s != 0.0) add_double(acc, s);
}}
"""


def _lane_exact_scan(bits: DataType, x: DataType) -> str:
    storage = storage_type(x)
    if bits is DataType.FLOAT32:
        return f"""
__device__ __forceinline__ void scan(const {storage}* x, unsigned int j, const unsigned int end,
                                     const unsigned int step, ull* acc, const float m) {{
    unsigned int other = 0u;
    while (j < end) {{
        const unsigned int first = j;
        double s0 = 0.0, s1 = 0.0;
        unsigned int hi = 0u, lo = 0xFFFFFFFFu;
        for (unsigned int n = 0; n < {THREAD_CHUNK}u && j < end; n += {LOADS}u) {{
            unsigned int b[{LOADS}];
            #pragma unroll
            for (unsigned int k = 0; k < {LOADS}u; ++k) {{  // the loads first, all in flight; -0.0 past the end
                const unsigned int i = j + k * step;
                b[k] = i < end ? element(x, i, m) : 0x80000000u;
            }}
            #pragma unroll
            for (unsigned int k = 0; k < {LOADS}u; ++k) {{
                if (k & 1u) s1 += (double)__uint_as_float(b[k]);
                else s0 += (double)__uint_as_float(b[k]);
                hi = max(hi, b[k] << 1);
                lo = min(lo, (b[k] << 1) - 1u);
                other |= b[k] ^ 0x80000000u;
            }}
            j = end - j > {LOADS}u * step ? j + {LOADS}u * step : end;
        }}
        if (hi == 0u) continue;  // zeros only
        const unsigned int emax = hi >> 24, emin = max((lo + 1u) >> 24, 1u);
        if (emax != 255u && emax - emin <= {SPAN}u) {{
            const double s = s0 + s1;
            if (s != 0.0) add_double(acc, s);
        }} else {{
            slow(x, first, j, step, acc, m);
        }}
    }}
    if (other) atomicAdd(acc + {NONNEG}, 1ull);
}}
"""
    return f"""
__device__ __forceinline__ void scan(const {storage}* x, unsigned int j, const unsigned int end,
                                     const unsigned int step, ull* acc, const float m) {{
    unsigned int other = 0u;
    while (j < end) {{
        const unsigned int first = j;
        double s0 = 0.0, s1 = 0.0;
        unsigned int hi = 0u;
        for (unsigned int n = 0; n < {THREAD_CHUNK}u && j < end; n += {LOADS}u) {{
            unsigned int b[{LOADS}];
            #pragma unroll
            for (unsigned int k = 0; k < {LOADS}u; ++k) {{  // the loads first, all in flight; -0.0 past the end
                const unsigned int i = j + k * step;
                b[k] = i < end ? element(x, i, m) : 0x8000u;
            }}
            #pragma unroll
            for (unsigned int k = 0; k < {LOADS}u; ++k) {{
                if (k & 1u) s1 += (double)h2f((unsigned short)b[k]);
                else s0 += (double)h2f((unsigned short)b[k]);
                hi = max(hi, b[k] & 0x7FFFu);
                other |= b[k] ^ 0x8000u;
            }}
            j = end - j > {LOADS}u * step ? j + {LOADS}u * step : end;
        }}
        if (hi >= 0x7C00u) {{
            slow(x, first, j, step, acc, m);
        }} else {{
            const double s = s0 + s1;
            if (s != 0.0) add_double(acc, s);
        }}
    }}
    if (other) atomicAdd(acc + {NONNEG}, 1ull);
}}
"""


def _warp_exact_scan(bits: DataType, x: DataType, chunk: int) -> str:
    """``scan`` of the rows family (a block's lanes on adjacent elements, ``step`` the block's width): as
    ``_exact_scan``'s, but a warp's 32 chunks enter the digits as one float64 sum where the warp's elements together
    sum exactly (their exponent fields span at most ``29 - ceil(log2(32 n))`` binades for ``n`` loads a lane:
    ``sum_accumulator``'s argument over the warp's elements, ``n`` at most ``chunk``: ``reduce_plan.warp_chunk``;
    FLOAT16: always, any 8192 of them summing exactly), the lanes' sums added in any order by shuffles: three atomic
    additions a warp instead of a lane. Elsewhere each lane's
    chunk enters alone, as ``_exact_scan``'s. The loops' counts are the warp's (its first lane's elements), so every
    lane takes part in the shuffles; a lane past the end reads -0.0."""
    storage = storage_type(x)
    single = "0x80000000u" if bits is DataType.FLOAT32 else "0x8000u"
    if bits is DataType.FLOAT32:
        value = "(double)__uint_as_float(b[k])"
        bounds = "hi = max(hi, b[k] << 1);\n                lo = min(lo, (b[k] << 1) - 1u);"
        together = """const unsigned int emax = whi >> 24, emin = max((wlo + 1u) >> 24, 1u);
        const unsigned int count = 32u - __clz(32u * n - 1u);  // ceil(log2(32 n)): the warp's elements at most
        if (emax != 255u && emax - emin + count <= 29u) {"""
        alone = """const unsigned int e1 = hi >> 24, e0 = max((lo + 1u) >> 24, 1u);
            if (e1 != 255u && e1 - e0 <= """ + str(SPAN) + """u) {"""
    else:
        value = "(double)h2f((unsigned short)b[k])"
        bounds = "hi = max(hi, b[k] & 0x7FFFu);"
        together = "if (whi < 0x7C00u) {"
        alone = "if (hi < 0x7C00u) {"
    return f"""
__device__ __forceinline__ unsigned int warp_max(unsigned int v) {{
    for (int off = 16; off; off >>= 1) v = max(v, __shfl_xor_sync(0xFFFFFFFFu, v, off));
    return v;
}}
__device__ __forceinline__ unsigned int warp_min(unsigned int v) {{
    for (int off = 16; off; off >>= 1) v = min(v, __shfl_xor_sync(0xFFFFFFFFu, v, off));
    return v;
}}
__device__ __forceinline__ void scan(const {storage}* x, const unsigned int j, const unsigned int end,
                                     const unsigned int step, ull* acc, const float m) {{
    const unsigned int lane = threadIdx.x & 31u;
    unsigned int w = j - lane;  // the warp's first lane's element
    unsigned int other = 0u;
    while (w < end) {{
        const unsigned int first = w + lane;
        double s0 = 0.0, s1 = 0.0;
        unsigned int hi = 0u, lo = 0xFFFFFFFFu, n = 0u;
        for (; n < {chunk}u && w < end; n += {LOADS}u) {{
            unsigned int b[{LOADS}];
            #pragma unroll
            for (unsigned int k = 0; k < {LOADS}u; ++k) {{  // the loads first, all in flight
                const unsigned int i = w + lane + k * step;
                b[k] = i < end ? element(x, i, m) : {single};
            }}
            #pragma unroll
            for (unsigned int k = 0; k < {LOADS}u; ++k) {{
                if (k & 1u) s1 += {value};
                else s0 += {value};
                {bounds}
                other |= b[k] ^ {single};
            }}
            w = end - w > {LOADS}u * step ? w + {LOADS}u * step : end;
        }}
        const unsigned int whi = warp_max(hi), wlo = warp_min(lo);
        if (whi == 0u) continue;  // zeros only
        {together}
            double s = s0 + s1;
            for (int off = 16; off; off >>= 1) s += __shfl_xor_sync(0xFFFFFFFFu, s, off);
            if (lane == 0u && s != 0.0) add_double(acc, s);
        }} else if (hi != 0u) {{
            {alone}
                const double s = s0 + s1;
                if (s != 0.0) add_double(acc, s);
            }} else {{
                slow(x, first, min(w + lane, end), step, acc, m);
            }}
        }}
    }}
    if (__ballot_sync(0xFFFFFFFFu, other != 0u) && lane == 0u) atomicAdd(acc + {NONNEG}, 1ull);
}}
"""


def _squares_scan(x: DataType) -> str:
    """``scan`` of the sums of squares: chunks of SQUARE_CHUNK elements in registers, each split against its
    boundary (the module's docstring); ``slow``: a chunk read again, split by bins of 8 exponent fields."""
    bits = "x[at(i)]" if x is DataType.FLOAT32 else "__float_as_uint(h2f(x[at(i)]))"
    b = SQUARE_CHUNK.bit_length() - 1
    group_bits = SQUARE_GROUP.bit_length() - 1
    return f"""
__device__ __forceinline__ unsigned int bits_of(const {storage_type(x)}* x, const unsigned int i) {{
    return ({bits}) & 0x7FFFFFFFu;
}}
__device__ __forceinline__ double power_of_two(const int p) {{ return __longlong_as_double((ll)(p + 1023) << 52); }}
__device__ __forceinline__ void split_add(const double sigma, const double v, double& q, double& r) {{
    const double t = __dsub_rn(__dadd_rn(sigma, v), sigma);
    q = __dadd_rn(q, t);
    r = __dadd_rn(r, __dsub_rn(v, t));
}}
__device__ __noinline__ void slow(const {storage_type(x)}* x, unsigned int j, const unsigned int end,
                                  const unsigned int step, ull* acc) {{
    double bins[64];
    for (int k = 0; k < 64; ++k) bins[k] = 0.0;
    for (; j < end; j += step) {{
        const unsigned int b = bits_of(x, j);
        const unsigned int e = b >> 23;
        if (e == 255u) {{
            atomicAdd(acc + ((b & 0x7FFFFFu) ? {SQUARE_NAN} : {SQUARE_INF}), 1ull);
            continue;
        }}
        const double f = (double)__uint_as_float(b);
        const int k = (int)(e >> 3);
        split_add(power_of_two(2 * min(255, 8 * k + 7) - 243), __dmul_rn(f, f), bins[k], bins[32 + k]);
    }}
    for (int k = 0; k < 64; ++k) if (bins[k] != 0.0) add_double(acc, bins[k]);
}}
__device__ __forceinline__ void flush(double& q, double& r, ull* acc) {{
    if (q != 0.0) add_double(acc, q);
    if (r != 0.0) add_double(acc, r);
    q = 0.0;
    r = 0.0;
}}
__device__ __forceinline__ void scan(const {storage_type(x)}* x, unsigned int j, const unsigned int end,
                                     const unsigned int step, ull* acc) {{
    double q = 0.0, r = 0.0;  // the group's two sums
    unsigned int top = 0u, bottom = 0u, chunks = 0u;  // its largest and smallest fields, its chunks (top 0: none)
    while (j < end) {{
        const unsigned int first = j;
        unsigned int v[{SQUARE_CHUNK}];
        unsigned int hi = 0u, lo = 0xFFFFFFFFu;
        #pragma unroll
        for (unsigned int n = 0; n < {SQUARE_CHUNK}u; ++n) {{
            const unsigned int i = j + n * step;
            v[n] = i < end ? bits_of(x, i) : 0u;
            hi = max(hi, v[n] << 1);
            lo = min(lo, (v[n] << 1) - 1u);
        }}
        j = end - j > {SQUARE_CHUNK}u * step ? j + {SQUARE_CHUNK}u * step : end;
        if (hi == 0u) continue;  // zeros only
        const unsigned int emax = hi >> 24, emin = max((lo + 1u) >> 24, 1u);
        if (emax == 255u) {{
            slow(x, first, j, step, acc);
            continue;
        }}
        int b = {group_bits};
        if (top != 0u && emax <= top && top - min(bottom, emin) <= {SQUARE_GROUP_SPAN}u
            && chunks < {SQUARE_GROUP // SQUARE_CHUNK}u) {{
            bottom = min(bottom, emin);  // the chunk joins the group: its boundary bounds it
            ++chunks;
        }} else {{
            flush(q, r, acc);
            top = 0u;
            if (emax - emin <= {SQUARE_GROUP_SPAN}u) {{  // a new group
                top = emax;
                bottom = emin;
                chunks = 1u;
            }} else if (emax - emin <= {SQUARE_SPAN}u) {{  // the chunk alone, against its own boundary
                b = {b};
            }} else {{
                slow(x, first, j, step, acc);
                continue;
            }}
        }}
        const double sigma = power_of_two(2 * (int)(top ? top : emax) - 252 + b - 1);
        #pragma unroll
        for (unsigned int n = 0; n < {SQUARE_CHUNK}u; ++n) {{
            const double f = (double)__uint_as_float(v[n]);
            split_add(sigma, __dmul_rn(f, f), q, r);
        }}
        if (!top) flush(q, r, acc);
    }}
    flush(q, r, acc);
}}
"""


def _leaf(x: DataType) -> str:
    """C of an element ``v`` as a node of MULTIPLY's tree: float64, or its two's complement bits in 64."""
    if x is DataType.FLOAT32:
        return "(double)__uint_as_float(v)"
    if x is DataType.FLOAT16:
        return "(double)h2f(v)"
    return "(ull)(ll)v"


def _tree_scan(x: DataType, plan: ReducePlan) -> str:
    """``subtree``: the product of the nodes of MULTIPLY's tree below node ``p`` of the plan's level, depth first:
    ``held[k]``, ``right[k]`` and ``node[k]`` are the frame of the node ``k + 1`` levels above the elements on the path
    (its left child's product, whether its right child is being walked, its position)."""
    sizes = tree_sizes(plan.length)
    element = storage_type(x)
    levels = plan.levels
    value = "double" if x in (DataType.FLOAT32, DataType.FLOAT16) else "ull"
    leaf = f"{value} leaf(const {element}* x, const unsigned int j) {{\n    const {element} v = x[at(j)];\n" \
           f"    return {_leaf(x)};\n}}\n"
    if levels == 0:
        return f"""
__device__ __forceinline__ {leaf}__device__ __forceinline__ {value} subtree(const {element}* x, const unsigned int p) {{
    return leaf(x, p);
}}
"""
    multiply = "__dmul_rn(held[k], v)" if value == "double" else "held[k] * v"
    halves = ", ".join(f"{n // 2}u" for n in sizes[:levels])
    widths = ", ".join(f"{n}u" for n in sizes[1:levels + 1])
    return f"""
__device__ __forceinline__ {leaf}__device__ {value} subtree(const {element}* x, const unsigned int p) {{
    const unsigned int halves[{levels}] = {{{halves}}};  // node i of level k + 1 has a right child where i < halves[k]
    const unsigned int widths[{levels}] = {{{widths}}};  // ... node i + widths[k] of level k (widths[k]: level k + 1's)
    {value} held[{levels}];
    unsigned int node[{levels}];
    bool right[{levels}];
    {value} v;
    int k = {levels};
    unsigned int q = p;
    for (;;) {{
        for (; k > 0; --k) {{ node[k - 1] = q; right[k - 1] = false; }}  // down the left children
        v = leaf(x, q);
        bool down = false;
        for (; k < {levels}; ++k) {{  // up: v is the product of a child of frame k
            if (right[k]) {{
                v = {multiply};
            }} else if (node[k] < halves[k]) {{
                held[k] = v;
                right[k] = true;
                q = node[k] + widths[k];
                down = true;
                break;
            }}
        }}
        if (!down) return v;
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
__device__ __forceinline__ void scan(const {storage_type(x)}* x, unsigned int j, const unsigned int end,
                                     const unsigned int step, ull* acc) {{
    ull best = 0;
    unsigned int nan = 0;
    for (; j < end; j += step) {{
        const {storage_type(x)} v = x[at(j)];
        {_key(x)}
        best = max(best, {word});
    }}
    if (best) atomicMax(acc, best);
    if (nan) atomicMax(acc + 1, 1ull);
}}
"""


def decoded_key(x: DataType) -> str:
    """C of the float whose MAX key (``_key``) is ``key``."""
    if x is DataType.FLOAT32:
        return "__uint_as_float((key >> 31) ? (key & 0x7FFFFFFFu) : ~key)"
    return "h2f((unsigned short)((key >> 15) ? (key & 0x7FFFu) : (~key & 0xFFFFu)))"


def _largest(x: DataType) -> str:
    """``largest(order, o)``: output ``o``'s largest element from MAX's words (``_order_scan``), NaN where an
    element is NaN (LOG_SUM_EXP's ``m``; its finish reads the same words)."""
    return f"""
__device__ __forceinline__ float largest(const ull* order, const unsigned int o) {{
    const ull* w = order + (ull)o * 2u;
    if (w[1] || !w[0]) return __uint_as_float(0x7FC00000u);
    const unsigned int key = (unsigned int)(w[0] - 1ull);
    return {decoded_key(x)};
}}
"""


def _rows_chunk(plan: ReducePlan) -> int:
    """The warp's chunk of the rows family's exact scan (``_warp_exact_scan``); 0: the columns family's lanes alone."""
    return warp_chunk(plan) if plan.family == "rows" else 0


def _scan_functions(spec: KernelSpec, how: str, x: DataType, plan: ReducePlan) -> str:
    assert spec.accumulation is not None
    function = spec.accumulation.function
    if how == "exact":
        return _add_double(149) + _element(x, function == "L1", False) + _exact_scan(x, x, _rows_chunk(plan))
    if how == "logsumexp":
        return (rounded_c.helpers([_EXP_NODE]) + _add_double(149) + _largest(x) + _element(x, False, True)
                + _exact_scan(DataType.FLOAT32, x, _rows_chunk(plan)))
    if how == "squares":
        return _add_double(SQUARE_UNIT) + _squares_scan(x)
    if how == "product":
        return _tree_scan(x, plan)
    if how == "wrap":
        return _wrap_scan(x)
    return _order_scan(x, function == "MAX")


def _scan_call(how: str, acc: str) -> tuple[str, str]:
    """The scan's call over a piece (``acc`` its words) and what comes before it: LOG_SUM_EXP reads its output's
    ``m`` and scans only where it is finite (else the finish pass answers: NaN, or ``m``)."""
    if how == "logsumexp":
        return ("const float m = largest((const ull*)porder, o);\n        ",
                f"if (fabsf(m) <= 3.4028234663852886e38f) scan(x + base, j0 JUMP, j1, STEP, {acc}, m);")
    extra = ", 0.0f" if how == "exact" else ""
    return "", f"scan(x + base, j0 JUMP, j1, STEP, {acc}{extra});"


def scan_kernel(spec: KernelSpec, plan: ReducePlan, kept: Layout, reduced: Layout, order: bool = False) -> str:
    """The scan: each (output, piece) item's elements added into the output's words (``order``: LOG_SUM_EXP's first
    scan, MAX's words of each output)."""
    how = mode(spec)
    if order:
        assert spec.accumulation is not None
        spec = replace(spec, accumulation=replace(spec.accumulation, function="MAX"))
        how = "order"
    x = spec.inputs[0]
    assert x is not None
    words = WORDS.get(how, 0)  # an output's words (MULTIPLY's: the plan's nodes)
    element = storage_type(x)
    base = decompose("o", kept.sizes, [kept.strides[0]], ["base"])
    if plan.tree:  # a thread a node of the tree's cut: adjacent threads on adjacent nodes (rows) or outputs
        o, node = (("item / {0}u", "item % {0}u") if plan.family == "rows" else ("item % {1}u", "item / {1}u"))
        value = "double" if x in (DataType.FLOAT32, DataType.FLOAT16) else "ull"
        body = f"""
    for (unsigned int item = blockIdx.x * blockDim.x + threadIdx.x; item < {plan.items}u;
         item += gridDim.x * blockDim.x) {{
        const unsigned int o = {o.format(plan.splits, plan.outputs)}, node = {node.format(plan.splits, plan.outputs)};
        ull base = 0;
        {base}
        (({value}*)acc)[(ull)o * {plan.splits}u + node] = subtree(x + base, node);
    }}"""
    elif plan.family == "rows":
        before, call = _scan_call(how, "shared_acc")
        call = call.replace(" JUMP", " + threadIdx.x").replace("STEP", f"{BLOCK}u")
        body = f"""
    __shared__ ull shared_acc[{words}];
    for (unsigned int item = blockIdx.x; item < {plan.items}u; item += gridDim.x) {{
        const unsigned int o = item / {plan.splits}u, piece = item % {plan.splits}u;
        if (threadIdx.x < {words}u) shared_acc[threadIdx.x] = 0;
        __syncthreads();
        ull base = 0;
        {base}
        const unsigned int j0 = piece * {plan.chunk}u, j1 = min(j0 + {plan.chunk}u, {plan.length}u);
        {before}{call}
        __syncthreads();
        if (threadIdx.x < {words}u && shared_acc[threadIdx.x]) {_merge(how)}(acc + (ull)o * {words}u + threadIdx.x,
                                                                      shared_acc[threadIdx.x]);
        __syncthreads();
    }}"""
    else:
        before, call = _scan_call(how, f"acc + (ull)o * {words}u")
        call = call.replace(" JUMP", "").replace("STEP", "1u")
        body = f"""
    for (unsigned int item = blockIdx.x * blockDim.x + threadIdx.x; item < {plan.items}u;
         item += gridDim.x * blockDim.x) {{
        const unsigned int o = item % {plan.outputs}u, piece = item / {plan.outputs}u;
        ull base = 0;
        {base}
        const unsigned int j0 = piece * {plan.chunk}u, j1 = min(j0 + {plan.chunk}u, {plan.length}u);
        {before}{call}
    }}"""
    order_param = ", const ull porder" if how == "logsumexp" else ""
    return (PRELUDE + _at(reduced) + _scan_functions(spec, how, x, plan)
            + f'\nextern "C" __global__ void __launch_bounds__({BLOCK}) opendml_kernel(const ull px, '
            f"const ull pacc{order_param}) {{\n"
            f"    const {element}* x = (const {element}*)px;\n    ull* acc = (ull*)pacc;{body}\n}}\n")


def _merge(how: str) -> str:
    """The atomic operation that merges a word of two partial results."""
    return "atomicMax" if how == "order" else "atomicAdd"
