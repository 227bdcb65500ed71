"""CUDA C shared by every generated kernel: the prelude of exact helpers, C types, and index arithmetic.

Everything a kernel needs to know about sizes and strides is baked in as constants, so index arithmetic
compiles to multiplies and shifts; kernels are memoized per source (see compiler.py). Scalars are kernel
arguments, never literals, so operators that differ only in field values share one kernel (where a clamp's
bound stays a nonzero number, or stays not one: expr_c.CLAMPS). Float math is a
rounded multiply then a rounded add (never fused), and FLOAT16 converts through PTX ``cvt`` (nearest even,
denormals kept). Float arithmetic, conversions and comparisons are written as PTX instructions without
``.ftz``, so no compiler setting (fast math, flush-to-zero, select-to-max rewrites) can change a result bit.
The element-wise templates are in elementwise_c.py, ARGMIN's in the argmin_c package, and the lowering of
element expressions into their device functions in expr_c.py.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...dtypes import DataType

# IEEE float32 as the CPU reference computes it: no contraction of multiply-adds that were not written as
# intrinsics, and denormals kept (flush-to-zero would also change comparisons against them). Exactly these reach
# NVRTC (compiler.py). C++17: the double constants are written as hexadecimal floating literals, exact by
# construction (tests/cuda_emulation.py compiles the same sources for the host as C++17).
OPTIONS = ("--std=c++17", "--fmad=false", "--ftz=false", "--prec-div=true", "--prec-sqrt=true")

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
__device__ __forceinline__ float ull2f_rn(ull a) {
    float r; asm("cvt.rn.f32.u64 %0, %1;" : "=f"(r) : "l"(a)); return r;
}
__device__ __forceinline__ float i2f_rn(int a) {
    float r; asm("cvt.rn.f32.s32 %0, %1;" : "=f"(r) : "r"(a)); return r;
}
__device__ __forceinline__ float u2f_rn(unsigned int a) {
    float r; asm("cvt.rn.f32.u32 %0, %1;" : "=f"(r) : "r"(a)); return r;
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
    DataType.FLOAT64: "double", DataType.FLOAT32: "float", DataType.FLOAT16: "unsigned short",
    DataType.UINT8: "unsigned char", DataType.INT8: "signed char",
    DataType.UINT16: "unsigned short", DataType.INT16: "short",
    DataType.UINT32: "unsigned int", DataType.INT32: "int",
    DataType.UINT64: "ull", DataType.INT64: "ll",
}



def storage_type(data_type: DataType) -> str:
    """The C type an element is read and written as raw bits (FLOAT32 as its bits; the others as C_TYPE)."""
    return "unsigned int" if data_type is DataType.FLOAT32 else C_TYPE[data_type]


# Types that values are compared and computed in: exact widenings that warp shuffles accept.
COMPUTE_TYPE = {
    DataType.FLOAT64: "double", DataType.FLOAT32: "float", DataType.FLOAT16: "float",
    DataType.UINT8: "unsigned int", DataType.UINT16: "unsigned int", DataType.UINT32: "unsigned int",
    DataType.INT8: "int", DataType.INT16: "int", DataType.INT32: "int",
    DataType.UINT64: "ull", DataType.INT64: "ll",
}

COMPUTE_NUMPY = {"double": np.float64, "float": np.float32, "unsigned int": np.uint32, "int": np.int32,
                 "ull": np.uint64, "ll": np.int64}


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
