"""CUDA C generation: a few kernel templates, and per-operator snippets for the per-element math.

Everything a kernel needs to know about sizes and strides is baked in as constants, so index arithmetic
compiles to multiplies and shifts; kernels are memoized per source (see compiler.py). Floating-point math
is a rounded multiply then a rounded add (never fused), and FLOAT16 converts through PTX ``cvt`` (nearest
even, denormals kept).
Float arithmetic and comparisons are written as PTX instructions without ``.ftz``, so no compiler setting
(fast math, flush-to-zero, select-to-max rewrites) can change a result bit.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...dtypes import DataType
from ...enums import AxisDirection
from ...ops.elementwise import ClampParams
from ..layout import Layout
from .plan import ArgMinPlan

PRELUDE = r"""
typedef unsigned long long ull;
typedef long long ll;
#define INVALID_INDEX 0xFFFFFFFFFFFFFFFFull
__device__ __forceinline__ float h2f(unsigned short h) {
    float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f;
}
__device__ __forceinline__ unsigned short f2h(float f) {
    unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h;
}
__device__ __forceinline__ float mul_rn(float a, float b) {
    float r; asm("mul.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); return r;
}
__device__ __forceinline__ float add_rn(float a, float b) {
    float r; asm("add.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); return r;
}
__device__ __forceinline__ float ll2f_rn(ll a) {
    float r; asm("cvt.rn.f32.s64 %0, %1;" : "=f"(r) : "l"(a)); return r;
}
__device__ __forceinline__ bool lt(float a, float b) {
    unsigned int r; asm("{ .reg .pred p; setp.lt.f32 p, %1, %2; selp.u32 %0, 1, 0, p; }" : "=r"(r) : "f"(a), "f"(b));
    return r != 0;
}
__device__ __forceinline__ bool is_number(float a) {
    unsigned int r; asm("{ .reg .pred p; setp.num.f32 p, %1, %1; selp.u32 %0, 1, 0, p; }" : "=r"(r) : "f"(a));
    return r != 0;
}
__device__ __forceinline__ bool lt(unsigned int a, unsigned int b) { return a < b; }
__device__ __forceinline__ bool lt(int a, int b) { return a < b; }
__device__ __forceinline__ bool lt(ull a, ull b) { return a < b; }
__device__ __forceinline__ bool lt(ll a, ll b) { return a < b; }
"""

# Storage types; FLOAT16 is stored as its 16 bits.
C_TYPE = {
    DataType.FLOAT32: "float", DataType.FLOAT16: "unsigned short",
    DataType.UINT8: "unsigned char", DataType.INT8: "signed char",
    DataType.UINT16: "unsigned short", DataType.INT16: "short",
    DataType.UINT32: "unsigned int", DataType.INT32: "int",
    DataType.UINT64: "ull", DataType.INT64: "ll",
}

# Types that values are compared and computed in: exact widenings that warp shuffles accept.
COMPUTE_TYPE = {
    DataType.FLOAT32: "float", DataType.FLOAT16: "float",
    DataType.UINT8: "unsigned int", DataType.UINT16: "unsigned int", DataType.UINT32: "unsigned int",
    DataType.INT8: "int", DataType.INT16: "int", DataType.INT32: "int",
    DataType.UINT64: "ull", DataType.INT64: "ll",
}

COMPUTE_NUMPY = {"float": np.float32, "unsigned int": np.uint32, "int": np.int32, "ull": np.uint64, "ll": np.int64}


def load(data_type: DataType, expr: str) -> str:
    """An element in its compute type."""
    if data_type is DataType.FLOAT16:
        return f"h2f({expr})"
    return f"(({COMPUTE_TYPE[data_type]})({expr}))"


def store(data_type: DataType, expr: str) -> str:
    """A compute-type value as the storage type (rounded once, to nearest even, for FLOAT16)."""
    if data_type is DataType.FLOAT16:
        return f"f2h({expr})"
    return f"(({C_TYPE[data_type]})({expr}))"


def float_literal(value: float) -> str:
    """A float32 constant by its bits: exact, and infinities included."""
    bits = struct.unpack("<I", struct.pack("<f", float(np.float32(value))))[0]
    return f"__int_as_float(0x{bits:08x})"


def int_literal(value: int, data_type: DataType) -> str:
    c_type = C_TYPE[data_type]
    if data_type.is_signed:
        low = -(2 ** (8 * data_type.size - 1))
        text = f"({value + 1}LL - 1)" if value == low else f"{value}LL"
    else:
        text = f"{value}ULL"
    return f"(({c_type}){text})"


# --- per-element snippets: the body of `OUT apply(IN0 a0, IN1 a1, ...)` ---------------------------------

def clamp_snippet(params: ClampParams) -> str:
    """CLIP, CLIP1 and THRESHOLD: the same rule as the NumPy reference, element by element."""
    dt = params.data_type
    if dt.is_float:
        lines = [f"float v = {load(dt, 'a0')};"]
        if params.scale_bias is not None:
            scale, bias = params.scale_bias
            lines.append(f"v = add_rn(mul_rn(v, {float_literal(scale)}), {float_literal(bias)});")
        bound = float_literal
    else:
        lines = [f"{C_TYPE[dt]} v = a0;"]

        def bound(value: object) -> str:
            return int_literal(int(value), dt)  # type: ignore[arg-type]
    if params.high is not None:
        lines.append(f"v = lt({bound(params.high)}, v) ? {bound(params.high)} : v;")
    if params.low is not None:
        lines.append(f"v = lt(v, {bound(params.low)}) ? {bound(params.low)} : v;")
    lines.append(f"return {store(dt, 'v')};" if dt.is_float else "return v;")
    return "\n    ".join(lines)


def dequantize_snippet(input_type: DataType, scale_type: DataType, has_zero_point: bool) -> str:
    difference = "(ll)a0 - (ll)a2" if has_zero_point else "(ll)a0"
    return (f"ll d = {difference};\n"
            f"    float v = mul_rn(ll2f_rn(d), {load(scale_type, 'a1')});\n"
            f"    return {store(scale_type, 'v')};")


# --- element-wise kernels ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Operand:
    """One tensor of an element-wise kernel: its parameter slot and storage type (None when absent)."""

    slot: int
    data_type: DataType


def decompose(index: str, sizes: Sequence[int], strides: Sequence[Sequence[int]], names: Sequence[str]) -> str:
    """Code adding each operand's offset of the row-major ``index`` (an unsigned int) to ``names``."""
    lines = [f"{{ unsigned int r = {index};"]
    for k in range(len(sizes) - 1, -1, -1):
        if k == 0:
            lines.append("{ unsigned int c = r;")
        else:
            lines.append(f"{{ unsigned int c = r % {sizes[k]}u; r = r / {sizes[k]}u;")
        for name, st in zip(names, strides):
            if st[k]:
                lines.append(f"  {name} += (ull)c * {st[k]}ull;")
        lines.append("}")
    lines.append("}")
    return "\n        ".join(lines)


def _apply_function(inputs: Sequence[Operand | None], output: DataType, snippet: str) -> str:
    params = ", ".join(f"{C_TYPE[op.data_type]} a{op.slot}" for op in inputs if op is not None)
    return f"__device__ __forceinline__ {C_TYPE[output]} apply({params}) {{\n    {snippet}\n}}\n"


def _params(inputs: Sequence[Operand | None]) -> str:
    return ", ".join([f"ull p{op.slot}" for op in inputs if op is not None] + ["ull pout"])


def _args(inputs: Sequence[Operand | None], value: dict[int, str]) -> str:
    return ", ".join(value[op.slot] for op in inputs if op is not None)


def elementwise_general(inputs: Sequence[Operand | None], output: DataType, snippet: str, layout: Layout) -> str:
    """Any strides: one element per iteration of a grid-stride loop."""
    present = [op for op in inputs if op is not None]
    names = [f"o{op.slot}" for op in present] + ["oo"]
    count = int(np.prod(layout.sizes))
    loads = {op.slot: f"((const {C_TYPE[op.data_type]}*)p{op.slot})[o{op.slot}]" for op in present}
    return PRELUDE + _apply_function(inputs, output, snippet) + f"""
extern "C" __global__ void opendml_kernel({_params(inputs)}) {{
    for (ull i = (ull)blockIdx.x * blockDim.x + threadIdx.x; i < {count}ull; i += (ull)gridDim.x * blockDim.x) {{
        {" ".join(f"ull {n} = 0;" for n in names)}
        {decompose("(unsigned int)i", layout.sizes, layout.strides, names)}
        (({C_TYPE[output]}*)pout)[oo] = apply({_args(inputs, loads)});
    }}
}}
"""


def vector_width(inputs: Sequence[Operand | None], output: DataType, layout: Layout) -> int | None:
    """Elements per 16-byte chunk if the inner-vector path applies to this layout, else None.

    It applies when, in the innermost dimension, every operand walks with stride 1 (loaded 16 bytes at a
    time) or 0 (one value per chunk), chunks stay inside a row, and every chunk of a stride-1 operand starts
    16-byte aligned (given a 16-byte aligned base).
    """
    present = [op for op in inputs if op is not None]
    types = [op.data_type for op in present] + [output]
    inner = [st[-1] for st in layout.strides]
    if any(s not in (0, 1) for s in inner) or inner[-1] != 1:
        return None
    width = 16 // min(t.size for t, s in zip(types, inner) if s == 1)
    if layout.rank > 1 and layout.sizes[-1] % width:
        return None
    for t, st in zip(types, layout.strides):
        if st[-1] == 1 and any(s * t.size % 16 for s in st[:-1]):
            return None
    return width


def elementwise_vector(inputs: Sequence[Operand | None], output: DataType, snippet: str, layout: Layout,
                       width: int) -> str:
    """16-byte loads and stores of ``width`` consecutive elements per chunk; a scalar tail in 1-D."""
    present = [op for op in inputs if op is not None]
    names = [f"o{op.slot}" for op in present] + ["oo"]
    count = int(np.prod(layout.sizes))
    chunks = count // width
    body = []
    values: dict[int, str] = {}
    for op, st in zip(present, layout.strides):
        c_type = C_TYPE[op.data_type]
        if st[-1] == 0:
            body.append(f"const {c_type} s{op.slot} = ((const {c_type}*)p{op.slot})[o{op.slot}];")
            values[op.slot] = f"s{op.slot}"
            continue
        words = width * op.data_type.size // 16
        body.append(f"union {{ uint4 w[{words}]; {c_type} e[{width}]; }} u{op.slot};")
        body.append(f"#pragma unroll\n        for (int w = 0; w < {words}; ++w) u{op.slot}.w[w] = "
                    f"((const uint4*)(p{op.slot} + o{op.slot} * {op.data_type.size}ull))[w];")
        values[op.slot] = f"u{op.slot}.e[e]"
    out_type = C_TYPE[output]
    out_words = width * output.size // 16
    tail_loads = {op.slot: f"((const {C_TYPE[op.data_type]}*)p{op.slot})[i * {st[-1]}ull]"
                  for op, st in zip(present, layout.strides)}
    tail = "" if layout.rank > 1 or count % width == 0 else f"""
    for (ull i = {chunks * width}ull + (ull)blockIdx.x * blockDim.x + threadIdx.x; i < {count}ull;
         i += (ull)gridDim.x * blockDim.x) {{
        (({out_type}*)pout)[i] = apply({_args(inputs, tail_loads)});
    }}"""
    nl = "\n        "
    return PRELUDE + _apply_function(inputs, output, snippet) + f"""
extern "C" __global__ void opendml_kernel({_params(inputs)}) {{
    for (ull c = (ull)blockIdx.x * blockDim.x + threadIdx.x; c < {chunks}ull; c += (ull)gridDim.x * blockDim.x) {{
        {" ".join(f"ull {n} = 0;" for n in names)}
        {decompose(f"(unsigned int)(c * {width}ull)", layout.sizes, layout.strides, names)}
        {nl.join(body)}
        union {{ uint4 w[{out_words}]; {out_type} e[{width}]; }} uo;
        #pragma unroll
        for (int e = 0; e < {width}; ++e) uo.e[e] = apply({_args(inputs, values)});
        #pragma unroll
        for (int w = 0; w < {out_words}; ++w) ((uint4*)(pout + oo * {output.size}ull))[w] = uo.w[w];
    }}{tail}
}}
"""


# --- ARGMIN ----------------------------------------------------------------------------------------------

def _take_function(compute: str, direction: AxisDirection) -> str:
    later = "i > bi" if direction is AxisDirection.DECREASING else "i < bi"
    return f"""
__device__ __forceinline__ void take({compute}& bv, ull& bi, {compute} v, ull i) {{
    if (i == INVALID_INDEX) return;
    if (bi == INVALID_INDEX || lt(v, bv) || (!lt(bv, v) && {later})) {{ bv = v; bi = i; }}
}}
"""


def _finish(plan: ArgMinPlan, direction: AxisDirection, out_type: DataType, compute: str) -> str:
    """Code that writes (bv, bi) of output ``o`` as the final index or as a partial result."""
    empty = plan.length - 1 if direction is AxisDirection.DECREASING else 0
    if plan.splits > 1:
        return (f"(({compute}*)pv)[(ull)s * {plan.outputs}ull + o] = bv; "
                f"((ull*)pi)[(ull)s * {plan.outputs}ull + o] = bi;")
    return (f"(({C_TYPE[out_type]}*)pout)[oo] = ({C_TYPE[out_type]})"
            f"(bi == INVALID_INDEX ? {empty}ull : bi);")


def _scan(compute: str, in_type: DataType, reduced: Layout, step: str, unroll: int) -> str:
    """Code scanning r in [begin + t, end) by ``step``, taking each valid element into (bv, bi)."""
    valid = "is_number(v)" if in_type.is_float else "true"  # NaN elements are ignored
    red = decompose("(unsigned int)rr", reduced.sizes, reduced.strides, ["ro"])
    element = f"""{{ ull rr = (X); ull ro = 0;
            {red}
            v[u] = {load(in_type, f"((const {C_TYPE[in_type]}*)px)[ko + ro]")}; }}"""
    fetch = "\n        ".join(element.replace("(X)", f"r + {u}ull * {step}").replace("[u]", f"[{u}]")
                               for u in range(unroll))
    takes = " ".join(f"if ({valid.replace('v', f'v[{u}]')}) take(bv, bi, v[{u}], r + {u}ull * {step});"
                     for u in range(unroll))
    single = element.replace("(X)", "r").replace("[u]", "[0]")
    return f"""
        ull r = begin + t;
        for (; r + {unroll - 1}ull * {step} < end; r += {unroll}ull * {step}) {{
            {compute} v[{unroll}];
            {fetch}
            {takes}
        }}
        for (; r < end; r += {step}) {{
            {compute} v[1];
            {single}
            if ({valid.replace('v', 'v[0]')}) take(bv, bi, v[0], r);
        }}"""


def argmin_kernel(plan: ArgMinPlan, in_type: DataType, out_type: DataType, direction: AxisDirection,
                  kept: Layout, reduced: Layout) -> str:
    """The reduction kernel: each (output, split) item is reduced by ``plan.group`` threads."""
    compute = COMPUTE_TYPE[in_type]
    unroll = 8 if in_type.size <= 2 else 4
    kept_offsets = decompose("(unsigned int)o", kept.sizes, kept.strides, ["ko", "oo"])
    items = plan.outputs * plan.splits
    if plan.family == "columns":
        # Consecutive threads take consecutive outputs, so their loads are coalesced.
        item_loop = (f"for (ull w = (ull)blockIdx.x * blockDim.x + threadIdx.x; w < {items}ull; "
                     f"w += (ull)gridDim.x * blockDim.x) {{\n        ull o = w % {plan.outputs}ull; "
                     f"unsigned int s = (unsigned int)(w / {plan.outputs}ull); const ull t = 0;")
        step, reduce = "1ull", ""
        finish_guard = ""
    else:
        group = plan.group
        item_split = f"        ull o = w / {plan.splits}ull; unsigned int s = (unsigned int)(w % {plan.splits}ull);"
        if group == 32:
            item_loop = (f"const ull t = threadIdx.x & 31;\n    for (ull w = ((ull)blockIdx.x * blockDim.x + "
                         f"threadIdx.x) >> 5; w < {items}ull; w += ((ull)gridDim.x * blockDim.x) >> 5) {{\n"
                         + item_split)
        else:
            item_loop = (f"const ull t = threadIdx.x;\n    "
                         f"for (ull w = blockIdx.x; w < {items}ull; w += gridDim.x) {{\n" + item_split)
        step = f"{group}ull"
        reduce = f"""
        #pragma unroll
        for (int off = 16; off > 0; off >>= 1) {{
            {compute} ov = __shfl_xor_sync(0xffffffffu, bv, off);
            ull oi = __shfl_xor_sync(0xffffffffu, bi, off);
            take(bv, bi, ov, oi);
        }}"""
        if group > 32:
            warps = group // 32
            reduce += f"""
        __shared__ {compute} sv[{warps}];
        __shared__ ull si[{warps}];
        if ((threadIdx.x & 31) == 0) {{ sv[threadIdx.x >> 5] = bv; si[threadIdx.x >> 5] = bi; }}
        __syncthreads();
        if (threadIdx.x < 32) {{
            bv = threadIdx.x < {warps} ? sv[threadIdx.x] : ({compute})0;
            bi = threadIdx.x < {warps} ? si[threadIdx.x] : INVALID_INDEX;
            #pragma unroll
            for (int off = 16; off > 0; off >>= 1) {{
                {compute} ov = __shfl_xor_sync(0xffffffffu, bv, off);
                ull oi = __shfl_xor_sync(0xffffffffu, bi, off);
                take(bv, bi, ov, oi);
            }}
        }}
        __syncthreads();"""
        finish_guard = "if (threadIdx.x == 0)" if group > 32 else "if ((threadIdx.x & 31) == 0)"
    return PRELUDE + _take_function(compute, direction) + f"""
extern "C" __global__ void opendml_kernel(ull px, ull pout, ull pv, ull pi) {{
    {item_loop}
        ull ko = 0, oo = 0;
        {kept_offsets}
        const ull begin = (ull)s * {plan.chunk}ull;
        const ull end = begin + {plan.chunk}ull < {plan.length}ull ? begin + {plan.chunk}ull : {plan.length}ull;
        {compute} bv = ({compute})0; ull bi = INVALID_INDEX;
        {_scan(compute, in_type, reduced, step, unroll)}
        {reduce}
        {finish_guard} {{ {_finish(plan, direction, out_type, compute)} }}
    }}
}}
"""


def argmin_combine_kernel(plan: ArgMinPlan, in_type: DataType, out_type: DataType, direction: AxisDirection,
                          kept: Layout) -> str:
    """The second pass: each output takes the best of its ``plan.splits`` partial results."""
    compute = COMPUTE_TYPE[in_type]
    empty = plan.length - 1 if direction is AxisDirection.DECREASING else 0
    kept_offsets = decompose("(unsigned int)o", kept.sizes, kept.strides, ["ko", "oo"])
    return PRELUDE + _take_function(compute, direction) + f"""
extern "C" __global__ void opendml_kernel(ull pv, ull pi, ull pout) {{
    for (ull o = (ull)blockIdx.x * blockDim.x + threadIdx.x; o < {plan.outputs}ull; o += (ull)gridDim.x * blockDim.x) {{
        {compute} bv = ({compute})0; ull bi = INVALID_INDEX;
        for (unsigned int s = 0; s < {plan.splits}u; ++s) {{
            ull k = (ull)s * {plan.outputs}ull + o;
            take(bv, bi, ((const {compute}*)pv)[k], ((const ull*)pi)[k]);
        }}
        ull ko = 0, oo = 0;
        {kept_offsets}
        (({C_TYPE[out_type]}*)pout)[oo] = ({C_TYPE[out_type]})(bi == INVALID_INDEX ? {empty}ull : bi);
    }}
}}
"""
