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
__device__ __forceinline__ float i2f_rn(int a) {
    float r; asm("cvt.rn.f32.s32 %0, %1;" : "=f"(r) : "r"(a)); return r;
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


def float_literal(value: float | np.integer | np.floating) -> str:
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

        def bound(value: float | np.integer | np.floating) -> str:
            return int_literal(int(value), dt)
    if params.high is not None:
        lines.append(f"v = lt({bound(params.high)}, v) ? {bound(params.high)} : v;")
    if params.low is not None:
        lines.append(f"v = lt(v, {bound(params.low)}) ? {bound(params.low)} : v;")
    lines.append(f"return {store(dt, 'v')};" if dt.is_float else "return v;")
    return "\n    ".join(lines)


def dequantize_snippet(input_type: DataType, scale_type: DataType, has_zero_point: bool) -> str:
    """The difference is exact: in 32-bit integers for 8- and 16-bit inputs, 64-bit ones for 32-bit inputs."""
    wide, convert = ("int", "i2f_rn") if input_type.size <= 2 else ("ll", "ll2f_rn")
    difference = f"({wide})a0 - ({wide})a2" if has_zero_point else f"({wide})a0"
    return (f"{wide} d = {difference};\n"
            f"    float v = mul_rn({convert}(d), {load(scale_type, 'a1')});\n"
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


WORD = {16: "uint4", 8: "uint2", 4: "unsigned int", 2: "unsigned short", 1: "unsigned char"}


def vector_width(inputs: Sequence[Operand | None], output: DataType, layout: Layout) -> int | None:
    """Elements per chunk if the inner-vector path applies to this layout, else None.

    A chunk is 16 bytes of the widest operand (so each thread stores 16 bytes, and narrower operands load
    4 or 8). The path applies when, in the innermost dimension, every operand walks with stride 1 (loaded
    a chunk at a time) or 0 (one value per chunk), chunks stay inside a row, and every chunk of a stride-1
    operand starts aligned to its size (given a 16-byte aligned base).
    """
    present = [op for op in inputs if op is not None]
    types = [op.data_type for op in present] + [output]
    inner = [st[-1] for st in layout.strides]
    if any(s not in (0, 1) for s in inner) or inner[-1] != 1:
        return None
    width = 16 // max(t.size for t, s in zip(types, inner) if s == 1)
    if layout.rank > 1 and layout.sizes[-1] % width:
        return None
    for st in layout.strides:
        if st[-1] == 1 and any(s % width for s in st[:-1]):
            return None
    return width


UNROLL = 4  # chunks each thread loads before it computes and stores any: bytes in flight hide latency
VECTOR_UNROLL = 8  # 16-byte loads in flight per thread in ARGMIN scans (measured best on an H100)


def chunk_unroll(inputs: Sequence[Operand | None], output: DataType) -> int:
    """Chunks per thread per tile: one where the output is wider than the InputTensor (writes dominate, and
    spreading them evenly measured faster on an H100 for UINT8 -> FLOAT32), else ``UNROLL``."""
    first = inputs[0]
    return 1 if first is not None and output.size > first.data_type.size else UNROLL


def elementwise_vector(inputs: Sequence[Operand | None], output: DataType, snippet: str, layout: Layout,
                       width: int) -> str:
    """16-byte loads and stores of ``width`` consecutive elements per chunk; a scalar tail in 1-D.

    A block takes tiles of ``unroll`` x 256 consecutive chunks; each thread loads its ``unroll`` chunks of a
    tile (256 apart) before it computes and stores any. Blocks are launched 256 threads wide.
    """
    present = [op for op in inputs if op is not None]
    count = int(np.prod(layout.sizes))
    chunks = count // width
    out_type = C_TYPE[output]
    unroll = chunk_unroll(inputs, output)
    loads, stores = [], []
    for u in range(unroll):
        names = [f"o{op.slot}_{u}" for op in present] + [f"oo_{u}"]
        loads.append(f"const ull c{u} = c + {u * 256}ull; const bool ok{u} = c{u} < {chunks}ull;")
        loads.append(" ".join(f"ull {n} = 0;" for n in names))
        values: dict[int, str] = {}
        body = []
        for op, st in zip(present, layout.strides):
            c_type = C_TYPE[op.data_type]
            if not any(st):  # one value for the whole tensor: loaded once per thread, before the loop
                values[op.slot] = f"s{op.slot}"
                continue
            if st[-1] == 0:
                loads.append(f"{c_type} s{op.slot}_{u} = 0;")
                body.append(f"s{op.slot}_{u} = ((const {c_type}*)p{op.slot})[o{op.slot}_{u}];")
                values[op.slot] = f"s{op.slot}_{u}"
                continue
            word = WORD[width * op.data_type.size]
            loads.append(f"union {{ {word} w; {c_type} e[{width}]; }} u{op.slot}_{u};")
            body.append(f"u{op.slot}_{u}.w = *(const {word}*)(p{op.slot} + o{op.slot}_{u} * {op.data_type.size}ull);")
            values[op.slot] = f"u{op.slot}_{u}.e[e]"
        offsets = decompose(f"(unsigned int)(c{u} * {width}ull)", layout.sizes, layout.strides, names)
        loads.append(f"if (ok{u}) {{\n        {offsets}\n        " + "\n        ".join(body) + "\n        }")
        stores.append(f"""if (ok{u}) {{
            union {{ {WORD[width * output.size]} w; {out_type} e[{width}]; }} uo;
            #pragma unroll
            for (int e = 0; e < {width}; ++e) uo.e[e] = apply({_args(inputs, values)});
            *({WORD[width * output.size]}*)(pout + oo_{u} * {output.size}ull) = uo.w;
        }}""")
    tail_loads = {op.slot: f"((const {C_TYPE[op.data_type]}*)p{op.slot})[i * {st[-1]}ull]"
                  for op, st in zip(present, layout.strides)}
    uniform = " ".join(f"const {C_TYPE[op.data_type]} s{op.slot} = *(const {C_TYPE[op.data_type]}*)p{op.slot};"
                       for op, st in zip(present, layout.strides) if not any(st))
    tail = "" if layout.rank > 1 or count % width == 0 else f"""
    for (ull i = {chunks * width}ull + (ull)blockIdx.x * blockDim.x + threadIdx.x; i < {count}ull; i += T) {{
        (({out_type}*)pout)[i] = apply({_args(inputs, tail_loads)});
    }}"""
    nl = "\n        "
    return PRELUDE + _apply_function(inputs, output, snippet) + f"""
extern "C" __global__ void opendml_kernel({_params(inputs)}) {{
    const ull T = (ull)gridDim.x * blockDim.x;
    {uniform}
    for (ull c = (ull)blockIdx.x * {256 * unroll}ull + threadIdx.x; c < {chunks}ull; c += {unroll}ull * T) {{
        {nl.join(loads)}
        {nl.join(stores)}
    }}{tail}
}}
"""


# --- ARGMIN ----------------------------------------------------------------------------------------------

def _take_function(compute: str, direction: AxisDirection) -> str:
    """``take`` merges any two candidates; ``scan_take`` is for one thread visiting indices in increasing
    order, where a tie goes to the earlier index (INCREASING) or to the later one (DECREASING)."""
    decreasing = direction is AxisDirection.DECREASING
    later = "i > bi" if decreasing else "i < bi"
    scan_better = "!lt(bv, v)" if decreasing else "lt(v, bv)"
    return f"""
__device__ __forceinline__ void take({compute}& bv, ull& bi, {compute} v, ull i) {{
    if (i == INVALID_INDEX) return;
    if (bi == INVALID_INDEX || lt(v, bv) || (!lt(bv, v) && {later})) {{ bv = v; bi = i; }}
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
            lines.append(f"(({compute}*)pv)[(ull)s * {plan.outputs}ull + o + {j}] = bv[{j}]; "
                         f"((ull*)pi)[(ull)s * {plan.outputs}ull + o + {j}] = bi[{j}];")
        else:
            lines.append(f"(({C_TYPE[out_type]}*)pout)[oo + {j * out_step}ull] = ({C_TYPE[out_type]})"
                         f"(bi[{j}] == INVALID_INDEX ? {empty}ull : bi[{j}]);")
    return "\n            ".join(lines)


def _valid(in_type: DataType, value: str) -> str:
    return f"is_number({value})" if in_type.is_float else "true"  # NaN elements are ignored


def _scan(plan: ArgMinPlan, in_type: DataType, reduced: Layout) -> str:
    """Code scanning this thread's share of [begin, end), taking each valid element into (bv, bi)."""
    compute, storage, size = COMPUTE_TYPE[in_type], C_TYPE[in_type], in_type.size
    vector = plan.vector
    unroll = 8 if plan.vector == 1 and size <= 2 else VECTOR_UNROLL
    red = decompose("(unsigned int)rr", reduced.sizes, reduced.strides, ["ro"])
    if plan.family == "rows" and vector > 1:
        # Positions count 16-byte vectors along the contiguous innermost reduced dimension: element e of
        # vector q has reduction index q * V + e.
        position, step, first, last = "q", f"{plan.group}ull", f"begin / {vector}ull + t", f"end / {vector}ull"
    else:
        position, step, first, last = "r", "1ull" if plan.family == "columns" else f"{plan.group}ull", \
            "begin + t", "end"
    fetch, takes = [], []
    for u in range(unroll):
        here = f"{position} + {u}ull * {step}"
        if vector == 1:
            fetch.append(f"ull ro{u} = 0; {{ ull rr = {here}; {red.replace('ro', f'ro{u}')} }}")
            fetch.append(f"{compute} v{u} = {load(in_type, f'(({storage}*)px)[ko + ro{u}]')};")
            takes.append(f"if ({_valid(in_type, f'v{u}')}) scan_take(bv[0], bi[0], v{u}, {here});")
            continue
        # Rows: the vector holds V consecutive reduced elements of one output. Columns: one reduced element
        # of V neighbouring outputs.
        rows = plan.family == "rows"
        first_element = f"({here}) * {vector}ull" if rows else here
        fetch.append(f"union {{ uint4 w; {storage} e[{vector}]; }} u{u};")
        fetch.append(f"ull ro{u} = 0; {{ ull rr = {first_element}; {red.replace('ro', f'ro{u}')} }}")
        fetch.append(f"u{u}.w = *(const uint4*)(px + (ko + ro{u}) * {size}ull);")
        for e in range(vector):
            slot, index = ("0", f"{first_element} + {e}ull") if rows else (str(e), here)
            takes.append(f"{{ {compute} v = {load(in_type, f'u{u}.e[{e}]')}; if ({_valid(in_type, 'v')}) "
                         f"scan_take(bv[{slot}], bi[{slot}], v, {index}); }}")
    single_fetch = [line.replace(f"{position} + 0ull * {step}", position) for line in fetch[: len(fetch) // unroll]]
    single_takes = [line.replace(f"{position} + 0ull * {step}", position) for line in takes[: len(takes) // unroll]]
    nl = "\n            "
    return f"""
        ull {position} = {first};
        const ull stop = {last};
        for (; {position} + {unroll - 1}ull * {step} < stop; {position} += {unroll}ull * {step}) {{
            {nl.join(fetch)}
            {nl.join(takes)}
        }}
        for (; {position} < stop; {position} += {step}) {{
            {nl.join(single_fetch)}
            {nl.join(single_takes)}
        }}"""


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


def argmin_kernel(plan: ArgMinPlan, in_type: DataType, out_type: DataType, direction: AxisDirection,
                  kept: Layout, reduced: Layout) -> str:
    """The reduction kernel: each (output group, piece) item is reduced by ``plan.group`` threads."""
    compute = COMPUTE_TYPE[in_type]
    kept_offsets = decompose("(unsigned int)o", kept.sizes, kept.strides, ["ko", "oo"])
    guard = {"columns": "", "rows": "if (threadIdx.x == 0)" if plan.group > 32 else "if ((threadIdx.x & 31) == 0)"}
    columns = plan.columns
    return PRELUDE + _take_function(compute, direction) + f"""
extern "C" __global__ void opendml_kernel(ull px, ull pout, ull pv, ull pi) {{
    {_item_loop(plan)}
        ull ko = 0, oo = 0;
        {kept_offsets}
        const ull begin = (ull)s * {plan.chunk}ull;
        const ull end = begin + {plan.chunk}ull < {plan.length}ull ? begin + {plan.chunk}ull : {plan.length}ull;
        {compute} bv[{columns}]; ull bi[{columns}];
        #pragma unroll
        for (int j = 0; j < {columns}; ++j) {{ bv[j] = ({compute})0; bi[j] = INVALID_INDEX; }}
        {_scan(plan, in_type, reduced)}
        {_group_reduce(plan.group, compute)}
        {guard[plan.family]} {{
            {_finish(plan, direction, out_type, compute, kept.strides[1][-1])}
        }}
    }}
}}
"""


def argmin_combine_kernel(plan: ArgMinPlan, in_type: DataType, out_type: DataType, direction: AxisDirection,
                          kept: Layout) -> str:
    """The second pass: each output's ``plan.splits`` partial results, merged by a warp or a block."""
    compute = COMPUTE_TYPE[in_type]
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
    return PRELUDE + _take_function(compute, direction) + f"""
extern "C" __global__ void opendml_kernel(ull pv, ull pi, ull pout) {{
    {loop}
        {compute} bv[1] = {{({compute})0}}; ull bi[1] = {{INVALID_INDEX}};
        for (ull s = t; s < {plan.splits}ull; s += {group}ull) {{
            ull k = s * {plan.outputs}ull + o;
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
